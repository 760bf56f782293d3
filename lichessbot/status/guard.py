"""The status server's door (imports only the standard library and Starlette): every request's ``Host`` is one of
this server's names, every state-changing request proves it comes from the server's own page, and every answer
carries the headers that keep other sites from framing or sniffing it.

Why each check (each attack below was tried in Debian's chromium: tests/status):

* ``Host`` (:func:`split_host`, :class:`Guard`): a DNS-rebinding page (``attacker.example`` first resolving to the
  attacker, then to 127.0.0.1) reaches this server as its own origin, so the browser lets it read every answer;
  its requests still carry ``Host: attacker.example``, refused here with 421 Misdirected Request (RFC 9110
  §15.5.20), or 400 when the header is missing or malformed (RFC 9112 §3.2).
* Requests other than GET and HEAD need the per-run token the page embeds, sent back in :data:`TOKEN_HEADER`
  (a header no other origin can set without a CORS preflight this server never answers), an ``Origin`` naming
  this server when present (RFC 6454 §7; browsers send it on every POST), a ``Sec-Fetch-Site`` of
  ``same-origin`` when present (W3C Fetch Metadata), and exactly ``application/json`` as the media type
  (:func:`is_json`; ``text/plain; application/json`` is ``text/plain``, CORS-safelisted, so it crosses sites).
* Headers on every answer (:data:`SECURITY_HEADERS`): no framing (``X-Frame-Options: DENY``, CSP
  ``frame-ancestors 'none'``), no MIME sniffing, no referrer; a CSP that loads nothing unless the answer (the
  page) sets its own.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable
from urllib.parse import urlsplit

from starlette.datastructures import Headers, MutableHeaders
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from lichessbot.hosts import is_loopback, split_host

__all__ = ["SAFE_METHODS", "SECURITY_HEADERS", "TOKEN_HEADER", "Guard", "is_json", "same_origin"]

#: The header the page sends the per-run token in (a custom header: not CORS-safelisted, so another origin's
#: page cannot send it without a preflight; Fetch standard, "CORS-safelisted request-header").
TOKEN_HEADER = "X-Lichessbot-Token"
#: Methods that change nothing here (RFC 9110 §9.2.1): the only ones taken without the token.
SAFE_METHODS = frozenset({"GET", "HEAD"})
#: Headers added to every answer that does not set them itself (OWASP Secure Headers Project). The CSP loads
#: nothing (an SVG opened alone keeps its pieces' ``style`` attributes); the page sends a CSP of its own.
SECURITY_HEADERS = {
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Content-Security-Policy": "default-src 'none'; style-src-attr 'unsafe-inline'; frame-ancestors 'none'; "
                               "base-uri 'none'; form-action 'none'",
}


def same_origin(origin: str, host: str) -> bool:
    """Whether an ``Origin`` header (``scheme://host[:port]``, RFC 6454) names the server the ``Host`` header names:
    the same name and port (a scheme's default port, 80 or 443, counts as none on either side; the scheme itself is
    not compared, so a TLS-terminating proxy that passes ``Host`` on keeps working). ``null`` is never ours."""
    parts = urlsplit(origin.strip())
    ours = split_host(host)
    if parts.scheme not in ("http", "https") or not parts.hostname or ours is None or parts.path not in ("", "/"):
        return False
    try:
        port = parts.port
    except ValueError:
        return False
    default = {"http": 80, "https": 443}[parts.scheme]
    theirs = (parts.hostname.rstrip("."), None if port in (None, default) else port)
    return theirs == (ours[0], None if ours[1] in (80, 443) else ours[1])


def is_json(content_type: str) -> bool:
    """Whether a ``Content-Type`` is exactly ``application/json`` (parameters such as ``charset`` allowed; RFC 9110
    §8.3.1: the media type is what comes before the first ``;``): ``text/plain; application/json`` is not."""
    return content_type.split(";", 1)[0].strip().lower() == "application/json"


class Guard:
    """ASGI middleware in front of the status app: the checks of this module's docstring, then the app.

    ``hosts``: the names (lowercase, no port) admitted besides the loopback ones; ``token``: the per-run token
    the page embeds. Refusals are JSON ``{"error": "..."}``: 400 or 421 for the ``Host``, 403 for a foreign
    ``Origin``/``Sec-Fetch-Site`` or a missing/wrong token, 415 for another media type.
    """

    def __init__(self, app: ASGIApp, *, hosts: Iterable[str], token: str) -> None:
        self.app, self.hosts, self.token = app, frozenset(h.lower() for h in hosts), token

    def admits(self, name: str) -> bool:
        """Whether the host name (no port) is one of this server's."""
        return is_loopback(name) or name in self.hosts

    def refusal(self, method: str, headers: Headers) -> tuple[int, str] | None:
        """``(status, why)`` when the request is refused, None when it goes on to the app."""
        hosts = headers.getlist("host")
        parsed = split_host(hosts[0]) if len(hosts) == 1 else None
        if parsed is None:
            return 400, "missing or malformed Host header"
        if not self.admits(parsed[0]):
            return 421, (f"host {parsed[0]!r} is not this server's: open it as 127.0.0.1 or localhost, or list the "
                         "name in status.allowed_hosts (a reverse proxy's name)")
        if method in SAFE_METHODS:
            return None
        origin = headers.get("origin")
        if origin is not None and not same_origin(origin, hosts[0]):
            return 403, "request from another origin"
        if headers.get("sec-fetch-site", "same-origin") not in ("same-origin", "none"):
            return 403, "request from another site"
        sent = headers.get(TOKEN_HEADER.lower(), "")
        if not secrets.compare_digest(sent.encode(), self.token.encode()):
            return 403, f"send the page's token in {TOKEN_HEADER} (reload the page after a restart)"
        if not is_json(headers.get("content-type", "")):
            return 415, "send the command as JSON (Content-Type: application/json)"
        return None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for key, value in SECURITY_HEADERS.items():
                    if key not in headers:
                        headers[key] = value
            await send(message)

        refused = self.refusal(scope["method"], Headers(scope=scope))
        if refused is None:
            await self.app(scope, receive, send_with_headers)
        else:
            status, why = refused
            await JSONResponse({"error": why}, status)(scope, receive, send_with_headers)
