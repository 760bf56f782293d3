"""``lichessbot migrate-config LICHESS_BOT_CONFIG``: turn a lichess-bot ``config.yml`` into ours.

Every lichess-bot setting that means something for a bot with a built-in engine carries over: token, url,
ponder, the polyglot book (``max_depth`` as it is: both count full moves, lichess-bot lib/engine_wrapper.py
plays the book while ``plies <= max_depth * 2 - 1``), Syzygy and Gaviota tablebases (``move_quality`` too),
``online_moves`` (an ``online_egtb.max_pieces`` above 7 is 7: the tables stop there), ``draw_or_resign``,
``challenge``, ``greeting``, ``correspondence``, ``matchmaking``, ``abort_time``, ``fake_think_time``,
``rate_limiting_delay``, ``move_overhead`` (taken once from the clock, as lichess-bot does:
``timeman.overhead_per_move: false``), ``pgn_directory``, ``pgn_file_grouping``, ``quit_after_all_games_finish``
and ``max_takebacks_accepted``; the engine's ``uci_options`` map onto ours option by option
(:func:`lichessbot.bot.setup.lichess_bot.uci_option`, each mapping listed). Only the external engine's keys
(:data:`~lichessbot.bot.setup.lichess_bot.EXTERNAL_ENGINE`) and the placeholder token are dropped, each with its
reason. The token is never printed.

A value our checks refuse costs that key alone, named with the rule: a bad value its own key; a rule across
keys (matchmaking on while ``challenge.accept_bot`` is off) the key the rule names to change first
(:class:`lichessbot.config.base.KeyConflict`); never a whole section, never the token. The exit status says
whether a setting of the user's was lost that way (:func:`run`), and a file that holds the token is written
with mode 0600.

:data:`LICHESS_BOT_KEYS` also tells ``check-config`` where a lichess-bot setting lives here.
"""

from __future__ import annotations

import argparse
import copy
import math
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import yaml
from pydantic import BaseModel
from pydantic.fields import FieldInfo

from lichessbot.bot.setup.lichess_bot import EXTERNAL_ENGINE, LICHESS_BOT_KEYS, UCI_NOTES, uci_option
from lichessbot.bot.setup.refused import drop_refused
from lichessbot.config import BotConfig
from lichessbot.config.base import ConfigData
from lichessbot.errors import LichessbotError
from lichessbot.files import write_atomic

__all__ = ["EXIT_LOST", "EXIT_UNRESOLVED", "LICHESS_BOT_KEYS", "Migration", "add_arguments", "convert", "hint",
           "migrate", "run"]


#: Hours a decline of ours lasts when lichess-bot blocked decliners for good (challenge_decliner_file_name).
DECADE_H = 24 * 3652


class Carry(Protocol):
    """Carries lichess-bot's dotted ``path`` to our dotted key ``ours`` with ``value``, listed with ``note``."""

    def __call__(self, path: str, ours: str, value: Any, note: str = "", *, write: bool = True) -> None: ...


class Drop(Protocol):
    """Records a key of the old config that is not carried over: its path, and why when there is more to say."""

    def __call__(self, path: str, why: str | None = None) -> None: ...


#: Sections copied key by key when our config has them.
_SECTIONS = ("challenge", "greeting", "correspondence", "matchmaking")


def hint(path: str) -> str | None:
    """Where the lichess-bot setting at dotted ``path`` lives here (or why it does not), or None."""
    parts = path.split(".")
    for n in range(len(parts), 0, -1):
        if n == 1 and len(parts) > 1 and parts[0] in BotConfig.model_fields:
            break  # a key inside a section we have: the section's hint does not apply
        found = LICHESS_BOT_KEYS.get(".".join(parts[:n]))
        if found is not None:
            return found
    return None


def _fields(section: str) -> dict[str, FieldInfo] | None:
    """Our fields of top-level ``section`` (None: no such section)."""
    info = BotConfig.model_fields.get(section)
    model = info.annotation if info is not None else None
    return model.model_fields if isinstance(model, type) and issubclass(model, BaseModel) else None


@dataclass(frozen=True)
class Migration:
    """A lichess-bot config converted into ours (:func:`convert`)."""

    #: Our config mapping: every value our checks accept, or, where a rule could not be met by dropping one
    #: key, the keys it spans as they were (``unresolved``).
    config: ConfigData
    #: (lichess-bot dotted key, reason) for every key that did not carry over: no such setting here (the
    #: reason says where it lives here), a placeholder, or a value our checks refuse (with the rule).
    dropped: list[tuple[str, str]] = field(default_factory=list)
    #: The dotted keys of ``dropped`` that held a setting our config has and that our checks refused: a choice
    #: of the user's that is lost (an empty value or the placeholder token loses nothing).
    lost: list[str] = field(default_factory=list)
    #: The rules that dropping one key could not satisfy (``check-config`` refuses the result with them).
    unresolved: list[str] = field(default_factory=list)
    #: (lichess-bot dotted key, where it went here and how) for the settings carried under another name or
    #: with a translation (uci_options, move_overhead, ...).
    mapped: list[tuple[str, str]] = field(default_factory=list)


def migrate(src: ConfigData) -> tuple[ConfigData, list[tuple[str, str]]]:
    """Convert a lichess-bot config mapping into ours: ``(config, dropped)`` of :func:`convert`."""
    m = convert(src)
    return m.config, m.dropped


def convert(src: ConfigData) -> Migration:
    """Convert a lichess-bot config mapping into ours.

    Keys with a counterpart carry over; a value our checks refuse is dropped alone, named with the rule: a bad
    value, its key; a rule across keys, the one key the rule names to change first
    (:class:`lichessbot.config.base.KeyConflict`) or else the first key whose removal meets the rule; never a
    whole section, never the token.
    """
    out: ConfigData = {}
    dropped: list[tuple[str, str]] = []
    mapped: list[tuple[str, str]] = []

    def drop(path: str, why: str | None = None) -> None:
        if why is None and path in mapped_to:
            return
        dropped.append((path, why or hint(path) or "no such setting here"))

    mapped_to: set[str] = set()

    def carry(path: str, ours: str, value: Any, note: str = "", *, write: bool = True) -> None:
        """lichess-bot's ``path`` goes to our dotted ``ours`` (a mapping worth listing); ``write`` False: our
        default already says it (only listed)."""
        if write:
            node = out
            *parents, leaf = ours.split(".")
            for p in parents:
                node = node.setdefault(p, {})
            node[leaf] = value
        mapped_to.add(path)
        mapped.append((path, (f"{ours}: {value!r}" if write else ours) + (f" ({note})" if note else "")))

    # move_overhead first: the engine's own Move Overhead gives way to it (lichess-bot applies both)
    for key, value in sorted(src.items(), key=lambda kv: kv[0] != "move_overhead"):
        if key == "token":
            if value and "xxxx" not in str(value):  # lichess-bot's placeholder is not a token
                out["token"] = str(value)
            else:
                drop("token", "a placeholder, not a token: set LICHESS_BOT_TOKEN")
        elif key == "url":
            out["url"] = str(value).rstrip("/")
        elif key in ("abort_time", "pgn_directory", "pgn_file_grouping", "quit_after_all_games_finish",
                     "max_takebacks_accepted", "fake_think_time", "rate_limiting_delay"):
            if value is not None:  # lichess-bot: an empty value is the default
                out[key] = value
        elif key == "move_overhead":
            carry(key, "timeman.move_overhead", value, "milliseconds")
            carry(key, "timeman.overhead_per_move", False, "lichess-bot takes move_overhead once from the clock, "
                  "not from each move to come; the overhead measured in each game (learn_overhead) replaces it")
        elif key == "max_concurrent_games":
            carry(key, "challenge.concurrency", value)
        elif key == "engine" and isinstance(value, dict):
            _engine(value, out, drop, carry)
        elif key in _SECTIONS and isinstance(value, dict):
            ours = _fields(key)
            if ours is None:
                drop(key)
                continue
            for k, v in value.items():
                if key == "challenge" and k == "max_days" and isinstance(v, float) and math.isinf(v):
                    v = "unlimited"  # lichess-bot's .inf: games without a clock too
                if key == "matchmaking" and k == "challenge_decliner_file_name":
                    if v:
                        carry(f"{key}.{k}", "matchmaking.decline_file", str(v))
                        carry(f"{key}.{k}", "matchmaking.decline_hours", DECADE_H, "lichess-bot blocks for good")
                    continue
                if k in ours:
                    out.setdefault(key, {})[k] = v
                else:
                    drop(f"{key}.{k}", hint(f"{key}.{k}") or f"no {key}.{k} here")
        else:
            drop(key)
    lost: list[str] = []
    unresolved = drop_refused(out, dropped, lost)
    return Migration(out, dropped, lost, unresolved, mapped)


def _engine(eng: ConfigData, out: ConfigData, drop: Drop, carry: Carry) -> None:
    raw = eng.get("uci_options")
    uci: ConfigData = raw if isinstance(raw, dict) else {}
    for key, value in sorted(eng.items(), key=lambda kv: kv[0] == "uci_options"):  # the engine's options last
        if f"engine.{key}" in EXTERNAL_ENGINE:
            drop(f"engine.{key}", EXTERNAL_ENGINE[f"engine.{key}"])
        elif key in ("ponder", "uci_ponder"):
            out.setdefault("engine", {})["ponder"] = bool(value)
        elif key == "polyglot" and isinstance(value, dict):
            _book(value, out, drop)
        elif key == "online_moves" and isinstance(value, dict):
            _online(value, out.setdefault("online_moves", {}), _fields("online_moves") or {}, "engine.online_moves",
                    drop)
            egtb = out["online_moves"].get("online_egtb")
            if isinstance(egtb, dict) and isinstance(egtb.get("max_pieces"), int) and egtb["max_pieces"] > 7:
                carry("engine.online_moves.online_egtb.max_pieces", "online_moves.online_egtb.max_pieces", 7,
                      f"lichess-bot's {egtb['max_pieces']}: the tables stop at 7 pieces")
        elif key == "draw_or_resign" and isinstance(value, dict):
            ours = _fields("draw_or_resign") or {}
            for k, v in value.items():
                if k in ours:
                    out.setdefault("draw_or_resign", {})[k] = v
                else:
                    drop(f"engine.draw_or_resign.{k}", hint(f"engine.draw_or_resign.{k}") or "no such rule here")
        elif key == "lichess_bot_tbs" and isinstance(value, dict):
            _tablebases(value, out, drop, carry)
        elif key == "uci_options" and isinstance(value, dict):
            _uci(value, uci, out, drop, carry)
        else:
            drop(f"engine.{key}")


def _uci(options: ConfigData, every: ConfigData, out: ConfigData, drop: Drop, carry: Carry) -> None:
    """The engine's ``uci_options`` onto ours (:func:`~lichessbot.bot.setup.lichess_bot.uci_option`); a setting
    the file gives elsewhere wins (lichess-bot's own move_overhead, its Syzygy tables at the root); among the
    options, the later one (NNCacheSize after Hash)."""
    before = copy.deepcopy(out)
    for name, value in options.items():
        path = f"engine.uci_options.{name}"
        if path in EXTERNAL_ENGINE:
            drop(path, EXTERNAL_ENGINE[path])
            continue
        found = uci_option(name, value, every)
        if isinstance(found, str):
            drop(path, found)
            continue
        note = UCI_NOTES.get(name.lower().replace(" ", ""), "lc0's name")
        for ours, v in found:
            section, *rest = ours.split(".")
            node = before.get(section, {})
            for p in rest[:-1]:
                node = node.get(p, {}) if isinstance(node, dict) else {}
            if isinstance(node, dict) and rest and rest[-1] in node:
                drop(path, f"{ours} is set by the file's own setting; the engine option is not used")
                continue
            carry(path, ours, v, note)


def _tablebases(tbs: ConfigData, out: ConfigData, drop: Drop, carry: Carry) -> None:
    """lichess-bot's ``engine.lichess_bot_tbs`` into our ``tablebases``: Syzygy ``paths`` and ``max_pieces``
    and ``move_quality`` when ``enabled`` (disabled Syzygy is dropped with that reason); Gaviota as it is into
    ``tablebases.gaviota`` (the same keys)."""
    for kind, sub in tbs.items():
        path = f"engine.lichess_bot_tbs.{kind}"
        if kind == "gaviota" and isinstance(sub, dict):
            keys = ("enabled", "paths", "max_pieces", "move_quality", "min_dtm_to_consider_as_wdl_1")
            gaviota = {k: ([v] if k == "paths" and isinstance(v, str) else v) for k, v in sub.items() if k in keys}
            for k in sub:
                if k not in keys:
                    drop(f"{path}.{k}")
            if gaviota.get("enabled"):
                out.setdefault("tablebases", {})["gaviota"] = gaviota
            else:
                carry(path, "tablebases.gaviota.enabled", False, "disabled in lichess-bot")
            continue
        if kind != "syzygy" or not isinstance(sub, dict):
            drop(path)
            continue
        if not sub.get("enabled"):
            carry(path, "tablebases.syzygy", None, "disabled in lichess-bot: none here either, unless the engine's "
                  "SyzygyPath names tables", write=False)
            continue
        for k, v in sub.items():
            if k == "paths":
                out.setdefault("tablebases", {})["syzygy"] = [v] if isinstance(v, str) else list(v or [])
            elif k in ("max_pieces", "move_quality"):
                out.setdefault("tablebases", {})[k] = v
            elif k != "enabled":
                drop(f"{path}.{k}")


def _online(src: ConfigData, out: ConfigData, ours: dict[str, Any], path: str, drop: Drop) -> None:
    """lichess-bot's ``engine.online_moves`` into our top-level ``online_moves`` (same keys), section by
    section; a key we do not have is dropped with its path."""
    for key, value in src.items():
        info = ours.get(key)
        sub = info.annotation if info is not None else None
        if isinstance(sub, type) and issubclass(sub, BaseModel) and isinstance(value, dict):
            _online(value, out.setdefault(key, {}), sub.model_fields, f"{path}.{key}", drop)
        elif info is not None and value is not None:  # lichess-bot: an empty value is the default
            out[key] = value
        elif info is None:
            drop(f"{path}.{key}", "no such online_moves key here")


def _book(pg: ConfigData, out: ConfigData, drop: Drop) -> None:
    book = out.setdefault("book", {})
    for key, value in pg.items():
        if key == "enabled":
            book["enabled"] = bool(value)
        elif key == "book":
            books = {"standard": value} if isinstance(value, (str, list)) else dict(value or {})
            for variant, paths in books.items():
                if variant in ("standard", "chess960"):
                    book.setdefault("paths", {})[variant] = [paths] if isinstance(paths, str) else list(paths)
                else:
                    drop(f"engine.polyglot.book.{variant}", "books for variants the engine cannot play")
        elif key in ("min_weight", "selection"):
            book[key] = value
        elif key == "random":
            book["selection"] = "weighted_random" if value else "best_move"
        elif key in ("max_depth", "normalization"):  # max_depth: full moves in both (module doc)
            book[key] = value
        else:
            drop(f"engine.polyglot.{key}")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("source", help="the lichess-bot config.yml to read")
    parser.add_argument("-o", "--output", default="config.yml",
                        help="our config file to write (default: config.yml); '-' writes on stdout")
    parser.add_argument("--force", action="store_true", help="overwrite the output file if it exists")


#: Exit status of ``migrate-config`` when a setting of the user's was refused by our checks and dropped (the
#: file is written without it); 2 (as check-config) when a rule could not be met and the file written is refused.
EXIT_LOST = 1
EXIT_UNRESOLVED = 2


def run(args: argparse.Namespace) -> int:
    """Write our config; list on stderr each lichess-bot key that did not carry over and why.

    A file that holds the token is created with mode 0600 (:func:`lichessbot.files.write_atomic`: private from
    its creation, whatever the umask), as lichess-bot's own file should be.

    Returns:
        0: every setting our config has carried over; :data:`EXIT_LOST` (1): a value our checks refuse was
        dropped (listed with the rule); :data:`EXIT_UNRESOLVED` (2): a rule could not be met by dropping one key
        (the file is written as converted; check-config names what to fix).

    Raises:
        LichessbotError: the source cannot be read or is not a YAML mapping, the output exists (without
            ``--force``) or cannot be written.
    """
    src = Path(args.source)
    try:
        data = yaml.safe_load(src.read_text(encoding="utf-8"))
    except OSError as err:
        raise LichessbotError(f"{src}: cannot read the config file ({err.strerror})") from None
    except yaml.YAMLError as err:
        raise LichessbotError(f"{src}: not valid YAML ({err})") from None
    if not isinstance(data, dict):
        raise LichessbotError(f"{src}: the config must be a mapping of keys to values")
    m = convert(data)
    text = ("# Converted from lichess-bot's " + src.name + " by `lichessbot migrate-config`.\n"
            "# Every key: config.yml.example. Check with `lichessbot check-config`.\n"
            + yaml.safe_dump(m.config, sort_keys=False, allow_unicode=True))
    if args.output == "-":
        sys.stdout.write(text)
    else:
        dest = Path(args.output)
        if dest.exists() and not args.force:
            raise LichessbotError(f"{dest} exists: choose another --output or add --force")
        secret = "token" in m.config
        try:
            write_atomic(dest, text, mode=0o600 if secret else 0o666)
        except OSError as err:
            raise LichessbotError(f"{dest}: cannot write the config file ({err.strerror})") from None
        print(f"wrote {dest}" + (" (mode 0600: it holds the token)" if secret else ""), file=sys.stderr)
    if m.mapped:
        print(f"carried under our names ({len(m.mapped)}):", file=sys.stderr)
        for path, where in m.mapped:
            print(f"  {path} -> {where}", file=sys.stderr)
    if m.dropped:
        print(f"not carried over ({len(m.dropped)}):", file=sys.stderr)
        for path, why in m.dropped:
            print(f"  {path}: {why}", file=sys.stderr)
    if m.unresolved:
        print("not resolved (the file keeps these keys as they were; fix them by hand):", file=sys.stderr)
        for why in m.unresolved:
            print(f"  {why}", file=sys.stderr)
        return EXIT_UNRESOLVED
    if m.lost:
        print(f"{len(m.lost)} of your settings were refused by our checks and dropped: {', '.join(m.lost)} "
              "(see above; set them again in a way the rule allows)", file=sys.stderr)
        return EXIT_LOST
    return 0
