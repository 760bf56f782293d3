"""lichessbot: a lichess.org bot with its own Lc0-compatible neural-network chess engine."""

__version__ = "0.1.0"
