"""``lichessbot uci``: the UCI protocol over the same move pipeline as the bot (docs/uci.md).

Rooms: :mod:`~lichessbot.uci.engine` (the state machine: commands, options, ``go``), :mod:`~lichessbot.uci.options`
(the option table), :mod:`~lichessbot.uci.output` (``go``'s parameters and the ``info`` lines) and
:mod:`~lichessbot.uci.bench` (``lichessbot bench uci``). Imports point down: the move pipeline, the search, the
time manager, config; nothing here knows lichess.
"""

from lichessbot.uci.engine import UciEngine, add_arguments, run
from lichessbot.uci.options import OPTIONS, UciOption

__all__ = ["OPTIONS", "UciEngine", "UciOption", "add_arguments", "run"]
