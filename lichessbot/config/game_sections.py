"""The sections of a running game: greetings, chat, draws and resignation, correspondence, the status page."""

from __future__ import annotations

import ipaddress
import re

from pydantic import Field, field_validator

from lichessbot.config.base import Strict
from lichessbot.config.challenge import check_template

__all__ = ["ChatConfig", "CorrespondenceConfig", "DrawOrResignConfig", "GreetingConfig", "StatusConfig"]


class GreetingConfig(Strict):
    """Chat greetings; {me}, {opponent}, {level} (the game's strength level, e.g. "1450 Elo" or "full
    strength"), and BotLi's {engine} (lichessbot, its version and network), {cpu} (the processor) and {ram} (the
    memory) are replaced (other placeholders are refused at load)."""

    hello: str = Field("Hi! I'm {me}, a neural-network bot. Good luck! Type !help for commands.",
                       description="Player chat at the start of a game ('' sends nothing).")
    goodbye: str = Field("Good game, {opponent}!", description="Player chat at the end of a game.")
    hello_spectators: str = Field("Hi! I'm {me}. Type !help for commands.",
                                  description="Spectator chat at the start of a game.")
    goodbye_spectators: str = Field("Thanks for watching!", description="Spectator chat at the end of a game.")

    @field_validator("hello", "goodbye", "hello_spectators", "goodbye_spectators")
    @classmethod
    def _template(cls, text: str) -> str:
        return check_template(text)


class ChatConfig(Strict):
    """Engine evals in chat, and how often a user's ``!`` commands are answered."""

    eval_room: str = Field(
        "spectator", description="Where the eval line goes after our moves: spectator or none (never the player "
        "room: evals there help the opponent)."
    )
    eval_every: int = Field(5, ge=1, description="Post an eval after every N of our moves.")
    # 5 s: lila takes at most 5 lines in 10 s from one user and drops a line like one of its last two
    # (lila modules/security/src/main/Flood.scala, floodNumber 4 and 10 s; duplicateMessage); one answer per
    # asker every 5 s leaves room for the greetings and evals.
    command_interval: float = Field(
        5.0, ge=0, le=3600, description="Seconds: one user gets at most one answer to a ! command per room in "
        "this time; the commands between are dropped and logged (0 answers every command).")

    @field_validator("eval_room")
    @classmethod
    def _room(cls, room: str) -> str:
        if room in ("player", "both"):
            raise ValueError(f"{room}: engine evals in the player room help the opponent during the game; "
                             "use spectator or none")
        if room not in ("spectator", "none"):
            raise ValueError(f"{room} is not a room (spectator or none)")
        return room


class DrawOrResignConfig(Strict):
    """Draw offers and resignation (lichess-bot's `draw_or_resign`). Scores in centipawns, our view."""

    resign_enabled: bool = Field(False, description="Resign lost games.")
    resign_score: int = Field(
        -1000, description="Centipawns: resign when each of the last resign_moves scores is <= this."
    )
    resign_moves: int = Field(3, ge=1, description="Our consecutive searched moves at or below resign_score.")
    resign_for_egtb_minus_two: bool = Field(
        True, description="With resign_enabled: resign as soon as the endgame tables (Syzygy, Gaviota, online) "
        "say the position is lost (WDL -2) (lichess-bot's key).")
    offer_draw_enabled: bool = Field(True, description="Offer (or accept) draws in level positions.")
    offer_draw_score: int = Field(0, ge=0, description="Centipawns: offer when |score| <= this for offer_draw_moves.")
    offer_draw_moves: int = Field(10, ge=1, description="Our consecutive searched moves within offer_draw_score.")
    offer_draw_for_egtb_zero: bool = Field(
        True, description="With offer_draw_enabled: offer (or accept) a draw as soon as the endgame tables say the "
        "position is a draw (WDL 0) (lichess-bot's key).")
    claim_draw_when_gone: bool = Field(
        False, description="When the opponent leaves and lichess allows a claim, claim a draw instead of the win."
    )
    offer_draw_pieces: int = Field(
        32, ge=2, le=32, description="lichess-bot's key: offer (or accept) a draw by score only with at most this "
        "many pieces on the board, kings and pawns included (32: any position).")
    offer_draw_min_game_length: int = Field(
        0, ge=0, description="BotLi's offer_draw.min_game_length: no draw offer (or acceptance) by score until the "
        "full move number is greater than this (0: from the first move).")
    offer_draw_against_humans: bool = Field(
        True, description="BotLi's offer_draw.against_humans: false: offer (or accept) draws against bots only.")
    offer_draw_min_rating: int | None = Field(
        None, description="BotLi's offer_draw.min_rating: offer (or accept) draws only against opponents rated at "
                          "least this (null: any; an unrated opponent counts as 0).")
    resign_against_humans: bool = Field(
        True, description="BotLi's resign.against_humans: false: resign against bots only.")
    resign_min_rating: int | None = Field(
        None, description="BotLi's resign.min_rating: resign only against opponents rated at least this (null: any; "
                          "an unrated opponent counts as 0).")


class CorrespondenceConfig(Strict):
    """Correspondence and unlimited games (lichess-bot's `correspondence` section). Seconds."""

    move_time: int = Field(60, ge=1, description="Seconds of thinking per move in games without a clock.")
    checkin_period: int = Field(
        600, ge=1, description="Seconds between looks at the ongoing games for correspondence games on our move."
    )
    disconnect_time: int = Field(
        150, ge=1, description="Seconds a correspondence game stream stays open without our move; then it is closed "
        "(the game no longer holds a thread) until the next check-in finds our move."
    )
    ponder: bool = Field(
        False, description="lichess-bot's key: think on the opponent's time in correspondence games while the "
        "game's stream is open (engine.ponder is for games with a clock).")


class StatusConfig(Strict):
    """The live status page (docs/status.md): off by default, on this machine only by default."""

    enabled: bool = Field(False, description="Serve the status page and its JSON while the bot plays.")
    host: str = Field(
        "127.0.0.1", description="Address the page listens on; anything but 127.0.0.1/::1 shows it to the network."
    )
    port: int = Field(8080, ge=0, le=65535, description="TCP port of the page (0: any free port, logged).")
    finished_games: int = Field(20, ge=0, description="Finished games kept on the page (the oldest go first).")
    remote_commands: bool = Field(
        False, description="Take the operator's commands (POST /api/command) from any address the page listens "
        "on; false: from this machine only (127.0.0.1/::1), whatever host says.")
    allowed_hosts: list[str] = Field(
        default_factory=list, description="More names the page answers to (the Host header; a reverse proxy's "
        "name, e.g. bot.example.org): besides these it answers only to localhost, 127.0.0.1, ::1 and host.")

    @field_validator("allowed_hosts")
    @classmethod
    def _host_names(cls, names: list[str]) -> list[str]:
        return [host_name(n) for n in names]


#: A DNS name (RFC 1123 §2.1 labels: letters, digits, hyphens, not at a label's ends; underscores tolerated).
_LABEL = re.compile(r"(?!-)[a-z0-9_-]{1,63}(?<!-)")


def host_name(name: str) -> str:
    """A host name as a ``Host`` header carries it without the port: a DNS name or an IP address (IPv6 with or
    without brackets), lowercased, without a trailing dot. ValueError naming the problem otherwise (a scheme, a
    port, a path or a wildcard is not a host name)."""
    text = name.strip().lower()
    bare = text[1:-1] if text.startswith("[") and text.endswith("]") else text
    try:
        return str(ipaddress.ip_address(bare))
    except ValueError:
        pass
    bare = bare[:-1] if bare.endswith(".") else bare
    if not bare or len(bare) > 253 or not all(_LABEL.fullmatch(label) for label in bare.split(".")):
        raise ValueError(f"{name!r} is not a host name (a DNS name or an IP address; no scheme, port, path or "
                         "wildcard)")
    return bare
