"""The live status page: snapshots the bot publishes (:mod:`.hub`), rendered as JSON and SVG
(:mod:`.render`) by a small web server (:mod:`.server`, imported only when the page is enabled)."""

from lichessbot.status.hub import GameSnapshot, LiveSearch, PlyEval, SearchLine, StatusHub

__all__ = ["GameSnapshot", "LiveSearch", "PlyEval", "SearchLine", "StatusHub"]
