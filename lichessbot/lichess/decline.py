"""lichess's reasons for declining a challenge, as one enum (lila
modules/challenge/src/main/Challenge.scala, ``enum DeclineReason``).

The API takes the reason's key in any case on ``POST /api/challenge/{id}/decline`` (form field ``reason``) and
writes it lowercased in ``declineReasonKey`` (lila ``DeclineReason.key`` is ``toString.toLowerCase``). Members
are ``str`` values in the API's spelling (``tooFast``), so they go on the wire and in logs as they are.
Wire only: imports nothing of the project.
"""

from __future__ import annotations

from enum import StrEnum

__all__ = ["DeclineReason"]


class DeclineReason(StrEnum):
    """A decline reason key (lila ``DeclineReason``); the value is the key the API takes."""

    GENERIC = "generic"
    LATER = "later"
    TOO_FAST = "tooFast"
    TOO_SLOW = "tooSlow"
    TIME_CONTROL = "timeControl"
    RATED = "rated"
    CASUAL = "casual"
    STANDARD = "standard"
    VARIANT = "variant"
    NO_BOT = "noBot"
    ONLY_BOT = "onlyBot"

    @classmethod
    def from_key(cls, key: str) -> DeclineReason:
        """The reason of ``key`` in any case (lichess writes ``toofast``); an unknown key is ``GENERIC``, as
        lila reads one (``object DeclineReason``'s ``apply``: the key lowercased, else ``Generic``)."""
        low = key.lower()
        return next((r for r in cls if r.value.lower() == low), cls.GENERIC)
