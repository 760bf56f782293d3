"""config.yml: the example documents every key; bad files are refused with the key's path (exit 2)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from pydantic import BaseModel

from lichessbot.cli import main
from lichessbot.config import TOKEN_ENV, BotConfig, ConfigError, load_config, parse_config
from lichessbot.config.base import default_pgn_directory

EXAMPLE = Path(__file__).resolve().parents[2] / "config.yml.example"


def _paths(model: type[BaseModel], prefix: str = "") -> list[str]:
    out = []
    for name, field in model.model_fields.items():
        ann = field.annotation
        if isinstance(ann, type) and issubclass(ann, BaseModel):
            out += _paths(ann, f"{prefix}{name}.")
        else:
            out.append(prefix + name)
    return out


def _lookup(data: dict, path: str) -> bool:
    node = data
    for part in path.split("."):
        if not isinstance(node, dict) or part not in node:
            return False
        node = node[part]
    return True


#: Keys whose default depends on the platform and the user (platformdirs): the example shows them commented out,
#: with the Linux default, so that the file still lists the defaults everywhere.
PLATFORM_DEFAULTS = ("pgn_directory", "state_directory")


def test_the_example_config_is_valid_and_documents_every_key():
    data = yaml.safe_load(EXAMPLE.read_text())
    assert parse_config(data) == BotConfig()  # it lists the defaults
    missing = [p for p in _paths(BotConfig) if not _lookup(data, p) and p not in PLATFORM_DEFAULTS]
    assert not missing, f"config.yml.example lacks: {missing}"
    text = EXAMPLE.read_text()
    for key in _paths(BotConfig):  # each key has a comment line above it
        leaf = key.rsplit(".", 1)[-1]
        lines = text.splitlines()
        written = f"# {leaf}: " if key in PLATFORM_DEFAULTS else f"{leaf}:"
        idx = next(i for i, line in enumerate(lines) if line.strip().startswith(written))
        assert lines[idx - 1].strip().startswith("#"), key
    for key in PLATFORM_DEFAULTS:
        assert key not in data  # commented out: the default applies


@pytest.mark.parametrize(("data", "expected"), [
    ({"challenge": {"concurency": 2}}, "challenge.concurency: unknown key"),
    ({"challenge": {"concurrency": "many"}}, "challenge.concurrency:"),
    ({"challenge": {"concurrency": 0}}, "challenge.concurrency:"),
    ({"challenge": {"min_base": 600, "max_base": 60}}, "min_base is greater than max_base"),
    ({"chat": {"eval_room": "lobby"}}, "chat.eval_room:"),
    ({"challenge": {"variants": ["standard", "bughouse"]}}, "challenge.variants: bughouse is not a lichess variant"),
    ({"challenge": {"variants": ["atomic"]}}, "challenge.variants: atomic is not played by the engine"),
    ({"challenge": {"time_controls": ["ultraBullet", "bullet"]}}, "challenge.time_controls: ultraBullet: lichess"),
    ({"greeting": {"hello": "Hi {name}!"}}, "greeting.hello: unknown placeholder {name}"),
    ({"greeting": {"goodbye": "gg :-{"}}, "greeting.goodbye: Single '{'"),
    ({"chat": {"eval_room": "player"}}, "chat.eval_room: player: engine evals in the player room"),
    ({"challenge": {"min_days": 5, "max_days": 3}}, "min_days is greater than max_days"),
    ({"draw_or_resign": {"resign_moves": 0}}, "draw_or_resign.resign_moves:"),
    ({"challenge": {"games_reserved_for_humans": 2}}, "challenge: games_reserved_for_humans (2) is greater than "
                                                      "concurrency (1)"),
    ({"challenge": {"max_recent_bot_challenges": 2}}, "challenge: max_recent_bot_challenges needs "
                                                      "recent_bot_challenge_age"),
    ({"challenge": {"recent_bot_challenge_age": 0}}, "challenge.recent_bot_challenge_age:"),
    ({"challenge": {"max_simultaneous_games_per_user": 0}}, "challenge.max_simultaneous_games_per_user:"),
    ({"challenge": {"sort_by": "rating"}}, "challenge.sort_by: Input should be 'best' or 'first'"),
    ({"challenge": {"preference": "humans"}}, "challenge.preference: Input should be 'none', 'human' or 'bot'"),
    ({"challenge": {"queue_wait": -1}}, "challenge.queue_wait:"),
    ({"challenge": {"max_bot_games_per_day": -1}}, "challenge.max_bot_games_per_day:"),
    ({"challenge": {"bullet_requires_increment": "sometimes"}}, "challenge.bullet_requires_increment:"),
])
def test_bad_values_are_refused_with_the_key_path(data, expected):
    with pytest.raises(ConfigError) as err:
        parse_config(data)
    assert expected in str(err.value)


def test_check_config_accepts_the_example_and_refuses_a_bad_file(tmp_path, capsys):
    assert main(["check-config", str(EXAMPLE)]) == 0
    assert f"{EXAMPLE}: OK" in capsys.readouterr().out
    bad = tmp_path / "bad.yml"
    bad.write_text("challenge:\n  concurrency: -1\ngreeting:\n  helo: hi\n")
    assert main(["check-config", str(bad)]) == 2
    # one line per problem (a log line of another test's late thread may also be captured)
    err = capsys.readouterr().err.splitlines()
    assert f"lichessbot: {bad}: 2 errors:" in err
    assert "  challenge.concurrency: Input should be greater than or equal to 1" in err
    assert "  greeting.helo: unknown key" in err


def test_check_config_names_each_bad_challenge_rule_and_matchmaking_override(tmp_path, capsys):
    bad = tmp_path / "bad.yml"
    bad.write_text("challenge:\n  sort_by: rating\n  games_reserved_for_humans: -1\n"
                   "matchmaking:\n  overrides:\n    fast:\n      challenge_initial_time: [100]\n"
                   "    slow:\n      min_wait: 5\n")
    assert main(["check-config", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "4 errors" in err
    for key in ("challenge.sort_by:", "challenge.games_reserved_for_humans:",
                "matchmaking.overrides.fast.challenge_initial_time: 100 s is not a lichess clock",
                "matchmaking.overrides.slow: min_wait cannot be overridden"):
        assert f"  {key}" in err, key


def test_check_config_reports_a_missing_network_file(tmp_path, capsys):
    cfg = tmp_path / "c.yml"
    cfg.write_text("engine:\n  network: /nowhere/net.onnx\n")
    assert main(["check-config", str(cfg)]) == 2
    assert "engine.network" in capsys.readouterr().err


def test_play_refuses_a_bad_config_and_a_missing_token(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv(TOKEN_ENV, raising=False)
    bad = tmp_path / "bad.yml"
    bad.write_text("abort_time: soon\n")
    assert main(["play", "--config", str(bad)]) == 2
    assert "abort_time" in capsys.readouterr().err
    empty = tmp_path / "empty.yml"
    empty.write_text("")
    assert main(["play", "--config", str(empty)]) == 2
    assert "no API token" in capsys.readouterr().err
    assert main(["play", "--config", str(tmp_path / "absent.yml")]) == 2


def test_the_environment_token_wins_over_the_file(tmp_path, monkeypatch):
    cfg = tmp_path / "c.yml"
    cfg.write_text("token: lip_from_file\n")
    monkeypatch.delenv(TOKEN_ENV, raising=False)
    assert load_config(cfg).resolved_token() == "lip_from_file"
    monkeypatch.setenv(TOKEN_ENV, "lip_from_env")
    config = load_config(cfg)
    assert config.resolved_token() == "lip_from_env"
    assert "lip_from_file" not in repr(config) and "lip_from_file" not in str(config)


def test_backend_names_are_the_registrys_everywhere(tmp_path, capsys):
    """The runners' names are declared once, by the registry: onnxruntime's among them, UCI's Backend and every
    builtin runner; the config takes any name and check-config refuses one no runner serves, naming the key and
    the registered names."""
    from lichessbot.neural.providers import BACKENDS, ONNX_BACKENDS
    from lichessbot.neural.registry import BUILTIN, names
    from lichessbot.uci.options import OPTIONS

    assert set(BACKENDS) == set(ONNX_BACKENDS) < set(BUILTIN) == set(names()) >= {"triton", "torch"}
    (uci,) = [o for o in OPTIONS if o.name == "Backend"]
    assert uci.allowed() == names() and uci.default == "auto"
    cfg = tmp_path / "c.yml"
    cfg.write_text("engine:\n  backend: gpu\n")
    assert main(["check-config", str(cfg)]) == 2
    err = capsys.readouterr().err
    assert "engine.backend" in err and "'gpu'" in err and ", ".join(names()) in err
    with pytest.raises(ConfigError, match="engine.backend"):
        parse_config({"engine": {"backend": ""}})


def test_home_in_the_directories_is_expanded_once_for_every_reader(tmp_path, monkeypatch):
    """``~`` in ``pgn_directory``, ``state_directory`` and ``matchmaking.decline_file`` means the home directory
    to every reader: the PGN writer, the eval charts, the writability check at start and the records. Before, the
    writability check and one-file-per-game PGNs took ``~`` as a directory named ``~`` under the working
    directory, and a decline file ``~/x`` was put under ``state_directory``."""
    from lichessbot.bot.service.writable import directories_written

    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    config = parse_config({"pgn_directory": "~/games", "state_directory": "~/state"})
    assert config.pgn_directory == str(tmp_path / "games")
    assert config.records_file() is not None and config.records_file().startswith(str(tmp_path / "state"))
    assert dict(directories_written(config, tensorrt=False)) == {
        "state_directory": tmp_path / "state", "pgn_directory": tmp_path / "games"}
    assert parse_config({"pgn_directory": None}).pgn_directory is None
    config = parse_config({"state_directory": "/srv/state", "matchmaking": {"decline_file": "~/records.json"}})
    assert config.records_file() == str(tmp_path / "records.json")
    assert dict(directories_written(config, tensorrt=False)) == {
        "matchmaking.decline_file": tmp_path, "pgn_directory": Path(default_pgn_directory())}


@pytest.mark.parametrize("url", ["http://lichess.org", "http://lichess.org/", "http://192.168.1.5:9663",
                                 "http://[2001:db8::1]:8080", "http://127.example.com"])
def test_a_plain_http_url_is_refused_naming_the_key_and_the_token_in_clear_text(url):
    with pytest.raises(ConfigError, match=r"^url: .*http would send the token in clear text.*use https"):
        parse_config({"url": url})


@pytest.mark.parametrize("url", ["https://lichess.org", "https://lichess.dev:443", "http://127.0.0.1:8080",
                                 "http://127.1.2.3", "http://localhost:9663", "http://LOCALHOST/",
                                 "http://bot.localhost:8080", "http://[::1]:8080"])
def test_https_or_a_loopback_host_over_http_is_accepted(url):
    assert parse_config({"url": url}).url == url


@pytest.mark.parametrize("url", ["lichess.org", "ftp://lichess.org", "https://", "ws://127.0.0.1"])
def test_a_url_that_is_not_http_is_refused(url):
    with pytest.raises(ConfigError, match=r"^url: .*is not an http\(s\) URL"):
        parse_config({"url": url})


def test_check_config_refuses_a_plain_http_url_with_the_key_and_the_reason(tmp_path, capsys):
    from lichessbot.cli import main

    cfg = tmp_path / "config.yml"
    cfg.write_text("url: http://lichess.org\n", encoding="utf-8")
    assert main(["check-config", str(cfg)]) == 2
    err = capsys.readouterr().err
    assert "url: http://lichess.org: http would send the token in clear text" in err
