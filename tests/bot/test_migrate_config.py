"""`lichessbot migrate-config` and `check-config`'s hints for lichess-bot keys (issue 18)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import yaml

from lichessbot.bot.setup.migrate import EXIT_LOST, EXIT_UNRESOLVED, convert, migrate
from lichessbot.cli import main
from lichessbot.config import load_config, parse_config

LICHESS_BOT = Path(__file__).resolve().parents[1] / "data" / "lichess_bot_config.yml"

#: lichess-bot keys that carry over (under a name of ours, or the same one).
CARRIED = {"url", "engine.ponder", "engine.polyglot.enabled", "engine.polyglot.book.standard",
           "engine.polyglot.min_weight", "engine.polyglot.selection", "engine.polyglot.max_depth",
           "engine.uci_options.Move Overhead", "abort_time", "move_overhead", "pgn_directory",
           "quit_after_all_games_finish", "max_takebacks_accepted", "pgn_file_grouping", "fake_think_time",
           "rate_limiting_delay", "engine.polyglot.normalization", "engine.lichess_bot_tbs.syzygy.move_quality"}


def _leaves(data: dict, prefix: str = "") -> list[str]:
    out = []
    for k, v in data.items():
        path = f"{prefix}{k}"
        out += _leaves(v, path + ".") if isinstance(v, dict) and v else [path]
    return out


def test_a_lichess_bot_config_converts_into_one_check_config_accepts(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the engine's SyzygyPath ./syzygy/ is not here: dropped with that reason
    dest = tmp_path / "config.yml"
    assert main(["migrate-config", str(LICHESS_BOT), "-o", str(dest)]) == 0
    err = capsys.readouterr().err
    assert main(["check-config", str(dest)]) == 0
    config = load_config(dest)
    assert config.url == "https://lichess.org" and config.engine.ponder is True
    assert config.timeman.move_overhead == 2000 and config.challenge.concurrency == 2
    assert config.book.paths["standard"] == ["engines/main.bin", "engines/backup.bin"]
    assert config.book.max_depth == 8  # full moves in both (lichess-bot lib/engine_wrapper.py: max_depth * 2 - 1 plies)
    assert config.greeting.hello == "Hi, {opponent}! I'm {me}." and config.pgn_directory == "games"
    assert config.draw_or_resign.offer_draw_moves == 10
    assert "engine.polyglot.book.atomic" in err and "engine.online_moves" not in err  # online_moves carries over


def test_every_key_that_does_not_carry_over_is_listed_with_a_reason():
    src = yaml.safe_load(LICHESS_BOT.read_text())
    m = convert(src)
    ours, dropped = m.config, m.dropped
    paths = [p for p, _ in dropped]
    assert all(why for _, why in dropped)
    mapped = {p for p, _ in m.mapped}
    for leaf in _leaves(src):
        if leaf in CARRIED or leaf in mapped or any(leaf.startswith(p + ".") for p in mapped):
            continue
        section = leaf.split(".")[0]
        carried_same_name = (section in ("challenge", "greeting", "correspondence", "matchmaking")
                             or leaf.startswith(("engine.draw_or_resign.", "engine.online_moves.")))
        if carried_same_name and leaf not in paths and not any(leaf.startswith(p + ".") for p in paths):
            key = leaf.split(".", 1)[1] if section != "engine" else leaf.split(".", 2)[2]
            target = ours[leaf.split(".")[1] if section == "engine" else section]
            assert key.split(".")[0] in target, leaf
            continue
        assert leaf in paths or any(leaf.startswith(p + ".") for p in paths), leaf


def test_the_token_is_kept_in_the_file_but_never_printed(tmp_path, capsys):
    src = tmp_path / "lb.yml"
    src.write_text("token: lip_secretsecret\nurl: https://lichess.org/\nfake_think_time: true\n")
    dest = tmp_path / "config.yml"
    assert main(["migrate-config", str(src), "-o", str(dest)]) == 0
    out = capsys.readouterr()
    assert "lip_secretsecret" not in out.err + out.out
    assert load_config(dest).token.get_secret_value() == "lip_secretsecret"
    assert main(["migrate-config", str(src), "-o", str(dest)]) == 2  # no overwrite without --force
    assert "exists" in capsys.readouterr().err


def test_check_config_prints_one_error_per_line_with_where_lichess_bot_keys_live(capsys):
    assert main(["check-config", str(LICHESS_BOT)]) == 2
    err = capsys.readouterr().err.splitlines()
    polyglot = next(line for line in err if line.strip().startswith("engine.polyglot:"))
    assert "book" in polyglot
    overhead = next(line for line in err if line.strip().startswith("move_overhead:"))
    assert "timeman.move_overhead" in overhead
    assert any("migrate-config" in line for line in err)
    unknown = [line.strip() for line in err if "unknown key" in line]
    assert len(unknown) >= 10
    ours = ("challenge.sort_by", "challenge.preference", "challenge.bullet_requires_increment",
            "challenge.max_simultaneous_games_per_user", "challenge.recent_bot_challenge_age",
            "matchmaking.include_challenge_block_list")  # lichess-bot's keys that are ours too (issue 19)
    assert not [line for line in unknown if line.startswith(ours)]


def test_lichess_bots_challenge_rules_and_overrides_carry_over():
    src = yaml.safe_load(LICHESS_BOT.read_text())
    src["challenge"].update({"max_days": float("inf"), "max_recent_bot_challenges": 2, "preference": "human"})
    src["matchmaking"]["overrides"] = {"easy": {"challenge_mode": "casual", "opponent_rating_difference": None},
                                       "horde": {"challenge_variant": "horde"}}
    ours, dropped = migrate(src)
    assert ours["challenge"]["max_days"] == "unlimited" and ours["challenge"]["preference"] == "human"
    assert ours["matchmaking"]["overrides"]["easy"] == {"challenge_mode": "casual", "opponent_rating_difference": None}
    assert [p for p, _ in dropped if p.startswith("matchmaking")] == ["matchmaking.overrides.horde.challenge_variant"]


def test_help_is_plain_text(capsys):
    import pytest

    for argv in (["--help"], ["uci", "--help"], ["migrate-config", "--help"]):
        with pytest.raises(SystemExit):
            main(argv)
        text = capsys.readouterr().out
        assert "``" not in text and ":class:" not in text, argv


def test_syzygy_tables_carry_over_when_enabled_and_are_dropped_with_that_reason_when_not():
    src = {"engine": {"lichess_bot_tbs": {"syzygy": {"enabled": True, "paths": ["tb/syzygy"], "max_pieces": 6,
                                                     "move_quality": "best"},
                                          "gaviota": {"enabled": True, "paths": "tb/gaviota", "max_pieces": 5,
                                                      "min_dtm_to_consider_as_wdl_1": 110}}}}
    ours, dropped = migrate(src)
    assert ours["tablebases"] == {"syzygy": ["tb/syzygy"], "max_pieces": 6, "move_quality": "best", "gaviota": {
        "enabled": True, "paths": ["tb/gaviota"], "max_pieces": 5, "min_dtm_to_consider_as_wdl_1": 110}}
    assert dropped == []  # lichess-bot's Gaviota keys (issue 40) and Syzygy's move_quality (issue 51) carry over
    src["engine"]["lichess_bot_tbs"]["syzygy"]["enabled"] = False
    m = convert(src)
    assert "syzygy" not in m.config["tablebases"] and "disabled" in dict(m.mapped)["engine.lichess_bot_tbs.syzygy"]


def test_a_relative_rating_difference_carries_over_as_it_is_and_quitting_carries_over():
    ours, dropped = migrate({"challenge": {"rating_difference": 200}, "quit_after_all_games_finish": False})
    assert ours["challenge"] == {"rating_difference": 200} and dropped == []
    assert ours["quit_after_all_games_finish"] is False


#: A lichess-bot config with a rule across two sections broken (matchmaking on, bots' challenges refused) and
#: every other section valid.
CONFLICT = """\
token: lip_conflictsecret
url: https://lichess.org/
engine:
  ponder: true
challenge:
  concurrency: 3
  accept_bot: false
  variants: [standard, chess960]
  min_base: 60
matchmaking:
  allow_matchmaking: true
  challenge_timeout: 20
  challenge_initial_time: [180]
  challenge_increment: [2]
greeting:
  hello: "Hi {opponent}"
abort_time: 25
pgn_directory: games
"""


def _migrate_file(tmp_path, text: str, capsys) -> tuple[int, Path, str]:
    src = tmp_path / "lb.yml"
    src.write_text(text, encoding="utf-8")
    src.chmod(0o600)
    dest = tmp_path / "config.yml"
    old = os.umask(0o022)
    try:
        rc = main(["migrate-config", str(src), "-o", str(dest)])
    finally:
        os.umask(old)
    out = capsys.readouterr()
    assert "lip_conflictsecret" not in out.out + out.err
    return rc, dest, out.err


def test_a_rule_across_sections_drops_one_key_keeps_the_token_and_every_section_and_exits_non_zero(tmp_path,
                                                                                                   capsys):
    """Issue 48: this config came out as ``pgn_directory: games`` alone, exit 0, token first dropped."""
    rc, dest, err = _migrate_file(tmp_path, CONFLICT, capsys)
    assert rc == EXIT_LOST
    written = yaml.safe_load(dest.read_text(encoding="utf-8"))
    src = yaml.safe_load(CONFLICT)
    assert written["token"] == "lip_conflictsecret"
    assert written["challenge"] == src["challenge"] and written["greeting"] == src["greeting"]
    assert written["matchmaking"] == {k: v for k, v in src["matchmaking"].items() if k != "allow_matchmaking"}
    assert written["engine"] == {"ponder": True} and written["abort_time"] == 25 and written["pgn_directory"] == "games"
    dropped = [line.strip() for line in err.splitlines() if "refused here" in line]
    assert dropped == ["matchmaking.allow_matchmaking: refused here: matchmaking.allow_matchmaking: challenges go to "
                       "bots, so challenge.accept_bot must be true"]
    assert stat.S_IMODE(dest.stat().st_mode) == 0o600  # it holds the token (the umask would give 0644)
    assert main(["check-config", str(dest)]) == 0  # check-config agrees: the result is usable as written
    assert "OK" in capsys.readouterr().out
    config = load_config(dest)
    assert config.token.get_secret_value() == "lip_conflictsecret" and not config.matchmaking.allow_matchmaking
    assert config.challenge.concurrency == 3 and config.matchmaking.challenge_timeout == 20


def test_a_rule_inside_a_section_drops_the_key_it_names_not_the_section():
    ours, dropped = migrate({"challenge": {"concurrency": 2, "min_base": 600, "max_base": 60, "accept_bot": True},
                             "matchmaking": {"overrides": {"fast": {"challenge_variant": "chess960",
                                                                    "challenge_mode": "casual"}},
                                             "allow_matchmaking": True, "challenge_initial_time": [60]}})
    assert ours["challenge"] == {"concurrency": 2, "max_base": 60, "accept_bot": True}
    assert ours["matchmaking"]["overrides"] == {"fast": {"challenge_mode": "casual"}}  # chess960 is not accepted
    assert ours["matchmaking"]["allow_matchmaking"] is True
    assert dropped == [("challenge.min_base", "refused here: min_base is greater than max_base"),
                       ("matchmaking.overrides.fast.challenge_variant", "refused here: matchmaking.overrides.fast."
                        "challenge_variant: chess960 is not in challenge.variants")]
    parse_config(ours)


def test_a_rule_that_names_no_key_costs_the_first_key_whose_removal_meets_it(monkeypatch):
    """A rule on a section that does not say which keys it spans (a plain ValueError): the first key set under
    the section whose removal alone meets the rule, found by trying; never the section."""
    from lichessbot.bot.setup import refused as m

    data = {"token": "lip_x", "challenge": {"concurrency": 2, "min_base": 600, "max_base": 60}}
    (error,) = m._errors(data)
    error["ctx"] = {"error": ValueError(error["msg"])}  # as a rule without KeyConflict would raise
    assert m._culprit(data, error, [error]) == ("challenge", "min_base")
    # dropping matchmaking's accept_bot would silence the variant rule by breaking an earlier one: not a fix
    data = {"challenge": {"accept_bot": True, "variants": ["standard"]},
            "matchmaking": {"allow_matchmaking": True, "challenge_variant": "chess960"}}
    (error,) = m._errors(data)
    error["ctx"] = {"error": ValueError(error["msg"])}
    assert m._culprit(data, error, [error]) == ("matchmaking", "allow_matchmaking")  # not challenge.accept_bot


def test_empty_values_and_the_placeholder_token_lose_nothing(tmp_path, capsys):
    text = 'token: "xxxxxxxxxxxxxxxx"\nchallenge:\n  variants: null\n  concurrency: 2\nfake_think_time: true\n'
    rc, dest, err = _migrate_file(tmp_path, text, capsys)
    assert rc == 0 and "challenge.variants: refused here" in err and "token: a placeholder" in err
    assert yaml.safe_load(dest.read_text(encoding="utf-8")) == {"challenge": {"concurrency": 2},
                                                               "fake_think_time": True}
    assert stat.S_IMODE(dest.stat().st_mode) == 0o644  # no token: the mode any new file gets


def test_a_plain_http_url_is_dropped_as_a_lost_setting(tmp_path, capsys):
    rc, dest, err = _migrate_file(tmp_path, "url: http://lichess.org\n", capsys)
    assert rc == EXIT_LOST and "url: refused here: http://lichess.org: http would send the token in clear text" in err
    assert load_config(dest).url == "https://lichess.org"


def test_a_rule_no_single_key_meets_keeps_every_key_and_exits_2(tmp_path, capsys, monkeypatch):
    from lichessbot.bot.setup import refused as m

    monkeypatch.setattr(m, "_culprit", lambda data, error, errors: None)
    rc, dest, err = _migrate_file(tmp_path, CONFLICT, capsys)
    assert rc == EXIT_UNRESOLVED and "not resolved" in err and "challenge.accept_bot must be true" in err
    assert yaml.safe_load(dest.read_text(encoding="utf-8"))["matchmaking"]["allow_matchmaking"] is True
    assert main(["check-config", str(dest)]) == 2


def test_the_token_is_never_the_key_dropped_even_for_a_rule_only_its_removal_meets(monkeypatch):
    """A future rule that involves the token (here a stand-in that refuses any file with one) is left unresolved
    rather than met by dropping the token."""
    from lichessbot.bot.setup import refused as m

    rule = {"type": "value_error", "loc": (), "msg": "a rule on the token", "input": {}, "ctx": {}}
    at_token = {**rule, "loc": ("token",)}
    monkeypatch.setattr(m, "_errors", lambda data: [rule] if "token" in data else [])
    data = {"token": "lip_x", "abort_time": 20}
    assert m._culprit(data, rule, [rule]) is None and m._culprit(data, at_token, [at_token]) is None
    rule["ctx"] = {"error": m.KeyConflict("a rule on the token", "token")}
    assert m._culprit(data, rule, [rule]) is None

