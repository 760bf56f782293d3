"""``lichessbot uci``: the UCI protocol over the same move pipeline as the bot (docs/uci.md).

Modules: :mod:`~lichessbot.uci.engine` (the state machine: commands, options, ``go``),
:mod:`~lichessbot.uci.options` (the option table), :mod:`~lichessbot.uci.input` (``position`` and ``go``
read, the move request of a ``go``), :mod:`~lichessbot.uci.output` (the lines a search writes),
:mod:`~lichessbot.uci.cli` (the command) and :mod:`~lichessbot.diagnostics.bench_uci` (``lichessbot bench uci``).
Imports point down: the move pipeline, the search, the time manager, config; nothing here knows lichess.
"""

from lichessbot.uci.cli import add_arguments, run
from lichessbot.uci.engine import UciEngine
from lichessbot.uci.options import OPTIONS, UciOption

__all__ = ["OPTIONS", "UciEngine", "UciOption", "add_arguments", "run"]
