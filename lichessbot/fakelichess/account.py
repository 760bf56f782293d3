"""The account endpoints of the test server: ``GET /api/account`` (id, username, title, perfs) and
``POST /api/token/test``, as the lichess OpenAPI spec gives it (lichess-org/api
``doc/specs/tag/OAuth/api-token-test.yaml``): the body is the tokens, comma-separated (plain text); the
answer maps each to ``{"userId", "scopes", "expires"}`` (``scopes`` comma-separated; ``expires`` epoch ms
or null), or to null for a token lichess does not know. No Authorization needed."""

from __future__ import annotations

from typing import Any

__all__ = ["AccountRoutes"]


class AccountRoutes:
    """Mixin of :class:`lichessbot.fakelichess.routes.Routes`."""

    token: str
    username: str
    title: str | None

    def _init_tokens(self) -> None:
        #: the scopes of the server's token (lichess: what the user ticked when creating it)
        self.token_scopes = "bot:play,challenge:read,challenge:write"
        self.token_tests = 0
        self.user_agents: set[str] = set()  # every User-Agent a request came with

    def _serve_account(self, h: Any) -> None:
        acc: dict[str, Any] = {"id": self.username.lower(), "username": self.username,
                               "perfs": {s: {"rating": 2000, "games": 50} for s in ("bullet", "blitz", "rapid",
                                                                                   "classical")}}
        if self.title:
            acc["title"] = self.title
        h.reply(200, acc)

    def _token_test(self, h: Any) -> None:
        self.token_tests += 1
        tokens = [t.strip() for t in h.raw.decode(errors="replace").split(",") if t.strip()]
        h.reply(200, {t: ({"userId": self.username.lower(), "scopes": self.token_scopes, "expires": None}
                          if t == self.token else None) for t in tokens})
