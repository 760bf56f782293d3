"""The embedded lichess (``lichessbot play --local``): lila's Bot and Board APIs on 127.0.0.1 with real clocks,
and the page where a person plays the bot.

The bot reaches it over HTTP as it reaches lichess; this room knows nothing of the bot's internals (it imports
python-chess, structlog, the package's version and :mod:`lichessbot.hosts` only). Test doubles built on it
(server-played opponents, fault injection) live in the developer tools (``devtools/lila``), outside the package.

Modules: :mod:`~lichessbot.local.model` (accounts, challenges, games), :mod:`~lichessbot.local.lila_rules` (lila's
rules of a game: moves, clocks, the end, draws, takebacks), :mod:`~lichessbot.local.views` (lila's JSON),
:mod:`~lichessbot.local.http` (HTTP, NDJSON streams), :mod:`~lichessbot.local.streams`,
:mod:`~lichessbot.local.challenges`, :mod:`~lichessbot.local.actions`, :mod:`~lichessbot.local.page` (the page,
its stream, the PGN export: :mod:`~lichessbot.local.export`) and :mod:`~lichessbot.local.server`.
"""

from lichessbot.local.server import LocalLichess

__all__ = ["LocalLichess"]
