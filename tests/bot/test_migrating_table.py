"""docs/migrating.md: every lichess-bot and BotLi option beside ours, rendered from the rows and the config model
(lichessbot/bot/setup/table.py), so it cannot drift."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from lichessbot.bot.setup.table import ROWS, field_of, render

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"

#: Keys the two default files carry only in comments (lichess-bot's optional keys, BotLi's optional settings).
COMMENTED = {
    "lichess-bot": ["engine.interpreter", "engine.interpreter_options", "engine.engine_options",
                    "engine.uci_options.go_commands", "engine.xboard_options", "engine.online_moves.max_depth",
                    "challenge.block_list", "challenge.online_block_list", "challenge.allow_list",
                    "challenge.recent_bot_challenge_age", "challenge.max_recent_bot_challenges", "challenge.min_rating",
                    "challenge.max_rating", "challenge.rating_difference", "pgn_directory", "pgn_file_grouping",
                    "matchmaking.challenge_days", "matchmaking.opponent_min_rating", "matchmaking.opponent_max_rating",
                    "matchmaking.block_list", "matchmaking.online_block_list",
                    "matchmaking.challenge_decliner_file_name", "matchmaking.overrides"],
    "BotLi": ["opening_books.books.x.max_depth", "opening_books.books.x.max_moves",
              "opening_books.books.x.allow_repetitions", "online_moves.opening_explorer.player",
              "online_moves.chessdb.max_depth", "online_moves.chessdb.max_moves", "offer_draw.min_rating",
              "resign.min_rating", "challenge.human.min_increment", "challenge.human.max_increment",
              "challenge.bot.min_initial", "challenge.bot.max_initial", "challenge.bot.max_estimated_game_duration",
              "matchmaking.types.x.rated", "matchmaking.types.x.variant", "matchmaking.types.x.weight",
              "matchmaking.types.x.multiplier", "matchmaking.types.x.min_rating_diff",
              "matchmaking.types.x.max_rating_diff", "matchmaking.types.x.target_rating_diff",
              "engines.bullet_white"],
}

#: The rows of features not built here (none: issue 51). A row without our key must say why.
MISSING: set[str] = set()


def _leaves(data: dict, prefix: str = "") -> list[str]:
    out = []
    for k, v in data.items():
        path = f"{prefix}{k}"
        out += _leaves(v, path + ".") if isinstance(v, dict) and v else [path]
    return out


def _covers(row_key: str, leaf: str) -> bool:
    """``row_key`` (``<...>`` for one segment of any name) is ``leaf`` or one of its parents."""
    pattern = "\\.".join("[^.]+" if p.startswith("<") else re.escape(p) for p in row_key.split("."))
    return re.fullmatch(f"{pattern}(\\..+)?", leaf) is not None


def test_docs_migrating_md_is_the_rendered_table():
    assert (ROOT / "docs" / "migrating.md").read_text(encoding="utf-8") == render(), \
        "run: python -m lichessbot.bot.setup.table > docs/migrating.md"


@pytest.mark.parametrize("row", [r for r in ROWS if r.ours], ids=lambda r: f"{r.source}:{r.key}")
def test_every_key_of_ours_in_the_table_is_a_key_of_the_config(row):
    for path in row.ours.split(","):
        field_of(path.strip())


@pytest.mark.parametrize(("source", "file"), [("lichess-bot", "lichess_bot"), ("BotLi", "botli")])
def test_every_option_of_their_default_file_has_a_row(source, file):
    data = yaml.safe_load((DATA / file / "config.yml.default").read_text(encoding="utf-8"))
    keys = [r.key for r in ROWS if r.source == source]
    uncovered = [leaf for leaf in _leaves(data) + COMMENTED[source] if not any(_covers(k, leaf) for k in keys)]
    assert not uncovered


def test_same_means_the_same_name_and_missing_is_only_what_is_left_to_build():
    for row in ROWS:
        if row.why is None and row.ours is not None:
            assert row.ours.rsplit(".", 1)[-1] == row.key.rsplit(".", 1)[-1], row
    assert {r.key for r in ROWS if r.ours is None and r.why is None} == MISSING
