"""The ``online_moves`` section: lichess-bot's keys and defaults, bad keys named, and migrate-config carrying
lichess-bot's section (tests/data/lichess_bot_config.yml is lichess-bot's default config)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from lichessbot.bot.setup.migrate import migrate
from lichessbot.cli import main
from lichessbot.config import ConfigError, load_config, parse_config
from lichessbot.config.online import OnlineMovesConfig

LICHESS_BOT = Path(__file__).resolve().parents[1] / "data" / "lichess_bot_config.yml"


def test_the_defaults_are_lichess_bots():
    c = OnlineMovesConfig()
    assert (c.max_out_of_book_moves, c.max_retries, c.max_depth) == (10, 2, None)
    for section in (c.chessdb_book, c.lichess_cloud_analysis, c.lichess_opening_explorer, c.online_egtb):
        assert (section.enabled, section.min_time, section.max_time) == (False, 20, 10800)
    assert (c.chessdb_book.move_quality, c.chessdb_book.min_depth) == ("good", 20)
    cloud = c.lichess_cloud_analysis
    assert (cloud.move_quality, cloud.max_score_difference, cloud.min_depth, cloud.min_knodes) == ("best", 50, 20, 0)
    ex = c.lichess_opening_explorer
    assert (ex.source, ex.player_name, ex.sort, ex.min_games) == ("masters", "", "winrate", 10)
    eg = c.online_egtb
    assert (eg.max_pieces, eg.source, eg.move_quality, eg.server()) == (7, "lichess", "best",
                                                                        "https://tablebase.lichess.org")
    assert OnlineMovesConfig(online_egtb={"source": "chessdb"}).online_egtb.server() == "https://www.chessdb.cn/cdb.php"


@pytest.mark.parametrize(("data", "expected"), [
    ({"chessdb_book": {"move_qualty": "best"}}, "online_moves.chessdb_book.move_qualty: unknown key"),
    ({"chessdb_book": {"move_quality": "great"}}, "online_moves.chessdb_book.move_quality: Input should be"),
    ({"online_egtb": {"max_pieces": 8}}, "online_moves.online_egtb.max_pieces: Input should be less than or equal"),
    ({"online_egtb": {"move_quality": "good"}}, "online_moves.online_egtb.move_quality:"),
    ({"lichess_opening_explorer": {"source": "master"}}, "online_moves.lichess_opening_explorer.source:"),
    ({"lichess_opening_explorer": {"url": "explorer.lichess.org"}},
     "online_moves.lichess_opening_explorer.url: 'explorer.lichess.org' is not an http(s) URL"),
    ({"clock_share": 0}, "online_moves.clock_share:"),
    ({"max_depth": 0}, "online_moves.max_depth:"),
])
def test_a_bad_key_is_named_with_the_reason(data, expected):
    with pytest.raises(ConfigError) as err:
        parse_config({"online_moves": data})
    assert expected in str(err.value)


def test_lichess_bots_online_moves_section_migrates_key_by_key(tmp_path, capsys):
    src = yaml.safe_load(LICHESS_BOT.read_text())
    theirs = src["engine"]["online_moves"]  # lichess-bot's default config has the section
    assert {"chessdb_book", "lichess_cloud_analysis", "lichess_opening_explorer", "online_egtb"} <= theirs.keys()
    dest = tmp_path / "config.yml"
    assert main(["migrate-config", str(LICHESS_BOT), "-o", str(dest)]) == 0
    assert "engine.online_moves" not in capsys.readouterr().err  # nothing of it dropped
    ours = load_config(dest).online_moves.model_dump()
    for key, value in theirs.items():
        if isinstance(value, dict):
            for sub, v in value.items():
                assert ours[key][sub] == v, f"{key}.{sub}"
        else:
            assert ours[key] == value, key


def test_keys_we_lack_and_values_we_refuse_are_dropped_with_the_reason():
    src = {"engine": {"online_moves": {"max_depth": None, "max_retries": 1, "foo": 1,
                                       "online_egtb": {"enabled": True, "max_pieces": 8, "bar": 2},
                                       "lichess_opening_explorer": {"enabled": True, "source": "player"}}}}
    ours, dropped = migrate(src)
    assert ours["online_moves"]["max_retries"] == 1 and "max_depth" not in ours["online_moves"]
    assert ours["online_moves"]["online_egtb"] == {"enabled": True, "max_pieces": 7}  # 8: the tables stop at 7
    assert ours["online_moves"]["lichess_opening_explorer"] == {"enabled": True, "source": "player"}
    why = dict(dropped)
    assert "no such online_moves key" in why["engine.online_moves.foo"]
    assert "no such online_moves key" in why["engine.online_moves.online_egtb.bar"]
    assert "online_moves.online_egtb.max_pieces" not in why  # translated (listed in the migration's mapped)
    assert parse_config(ours).online_moves.online_egtb.max_pieces == 7
