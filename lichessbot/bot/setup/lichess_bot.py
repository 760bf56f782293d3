"""What lichess-bot's settings are here: the keys that live under another name, the external-engine keys that
mean nothing for a bot with its own engine (each with its reason), and the engine's ``uci_options`` mapped onto
ours. Read by ``migrate-config`` (:mod:`lichessbot.bot.setup.migrate`) and ``check-config``'s hints.

Sources: lichess-bot config.yml.default and lib/config.py (the keys and their defaults), lib/engine_wrapper.py
and lib/lichess_bot.py (what they do); lc0 src/search/classic/params.cc and Stockfish src/ucioption.cpp (the UCI
option names).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from typing import Any

from lichessbot.config import SearchParams, Uci

__all__ = ["EXTERNAL_ENGINE", "HASH_ENTRIES_PER_MB", "LICHESS_BOT_KEYS", "UCI_DROPPED", "uci_option"]

_ENGINE = "lichessbot is the engine (a neural network): set engine.network and engine.backend instead"

#: lichess-bot's keys for running an engine of its own (a process it starts and talks to): nothing here has
#: them, because the engine is built in. Dropped by ``migrate-config``, each with its reason.
EXTERNAL_ENGINE: dict[str, str] = {
    "engine.dir": _ENGINE,
    "engine.name": _ENGINE,
    "engine.working_dir": "the directory an external engine runs in; the built-in engine reads the paths of "
                          "this config (relative to the working directory)",
    "engine.protocol": "the protocol spoken to an external engine (uci, xboard, homemade); the engine is built in",
    "engine.interpreter": "the program that runs an external engine (java...); the engine is built in",
    "engine.interpreter_options": "options of that program; the engine is built in",
    "engine.engine_options": "command-line options of an external engine; ours are the config's keys",
    "engine.homemade_options": "options of a homemade (Python) engine; the engine is built in",
    "engine.silence_stderr": "an external engine's error output; the built-in engine logs through the bot's log",
    "engine.debug": "logs of the talk with an external engine at start; there is no such talk here",
    "engine.uci_options.go_commands": "fixed limits for an external engine's go (nodes, depth, movetime); the "
                                      "time manager decides here (timeman), correspondence.move_time without a clock",
    "engine.go_commands": "fixed limits for an external engine's go; the time manager decides here (timeman)",
    "engine.xboard_options": "options of an XBoard engine; the engine is built in and speaks no XBoard",
}

#: lichess-bot keys (dotted paths) that live elsewhere here (or, for the external engine's, nowhere); sections
#: not listed carry over key by key.
LICHESS_BOT_KEYS: dict[str, str] = {
    **EXTERNAL_ENGINE,
    "engine.uci_options": "mapped option by option (engine.threads, engine.nn_cache_size, tablebases.syzygy, "
                          "engine.network, engine.backend, engine.search.*, timeman.move_overhead)",
    "engine.lczero": "lc0 settings: engine.network (a .pb.gz or .onnx) and engine.search (lc0's names)",
    "engine.uci_ponder": "here: engine.ponder",
    "engine.polyglot": "here: book (enabled, paths.standard/chess960, selection, min_weight, max_depth, "
                       "normalization: the same meanings)",
    "engine.draw_or_resign": "here: draw_or_resign, at the top level",
    "engine.online_moves": "here: online_moves, at the top level",
    "engine.lichess_bot_tbs": "here: tablebases (syzygy paths, max_pieces, move_quality; gaviota)",
    "move_overhead": "here: timeman.move_overhead with timeman.overhead_per_move false (taken once from the "
                     "clock, as lichess-bot does)",
    "max_concurrent_games": "here: challenge.concurrency",
    "matchmaking.challenge_decliner_file_name": "here: matchmaking.decline_file, with decline_hours a decade "
                                                "(lichess-bot blocks a decliner for good)",
    "matchmaking.permablock_after_declined_challenge": "declines are kept in matchmaking.decline_file for "
                                                       "matchmaking.decline_hours",
}

#: NN cache entries per megabyte of a UCI ``Hash`` (the same figure as ``lichessbot uci``'s Hash option,
#: lichessbot/uci/options.py HASH_ENTRIES_PER_MB: about 256 bytes an entry with its key and bookkeeping).
HASH_ENTRIES_PER_MB = 4096

#: uci_options with no counterpart, and why (the key is the option's name, lowercase, without spaces).
UCI_DROPPED: dict[str, str] = {
    "uci_showwdl": "the built-in engine always computes W/D/L (the bot's eval lines and PGNs carry it)",
    "uci_limitstrength": "carried with UCI_Elo (engine.strength.elo)",
    "multipv": "the bot plays one line; `lichessbot uci` has MultiPV",
    "clearhash": "a button, not a setting",
}


def _lc0_names() -> dict[str, str]:
    """lc0's option name (lowercase) -> our ``engine.search`` key: the names ``lichessbot uci`` offers them under
    (the field's :class:`~lichessbot.config.Uci` name, else its name in CamelCase: lichessbot/uci/options.py)."""
    out = {}
    for key, info in SearchParams.model_fields.items():
        meta = next((m for m in info.metadata if isinstance(m, Uci)), None)
        if meta is not None and not meta.offered:
            continue
        name = meta.name if meta is not None and meta.name else "".join(w.capitalize() for w in key.split("_"))
        out[name.lower()] = f"engine.search.{key}"
    return out


def _backend(value: Any) -> list[tuple[str, Any]]:
    """lc0's backend names (cuda-auto, cuda-fp16, cudnn, onnx-trt, eigen, blas, onnx-cpu...) -> our
    engine.backend (and engine.precision fp16 for the fp16 ones)."""
    name = str(value).lower()
    backend = ("tensorrt" if "trt" in name or "tensorrt" in name else "cuda" if "cuda" in name or "cudnn" in name
               else "cpu" if any(w in name for w in ("blas", "eigen", "dnnl", "cpu")) else "auto")
    return [("engine.backend", backend)] + ([("engine.precision", "fp16")] if "fp16" in name else [])


def _paths(value: Any) -> list[str]:
    """A UCI path list: separated by the OS's path separator (lc0, Stockfish) or ';'."""
    return [p for p in re.split(f"[{re.escape(os.pathsep)};]", str(value)) if p.strip()]


_SPECIAL: dict[str, Callable[[Any], list[tuple[str, Any]] | str]] = {
    "threads": lambda v: [("engine.threads", int(v))],
    "hash": lambda v: [("engine.nn_cache_size", int(v) * HASH_ENTRIES_PER_MB)],
    "nncachesize": lambda v: [("engine.nn_cache_size", int(v))],
    "syzygypath": lambda v: [("tablebases.syzygy", _paths(v))] if all(os.path.isdir(os.path.expanduser(p))
                                                                      for p in _paths(v)) else
    f"{v}: no such directory here (relative to the working directory); an engine finds no tables there either",
    "syzygyprobelimit": lambda v: [("tablebases.max_pieces", min(7, int(v)))],
    "weightsfile": lambda v: [("engine.network", str(v))],
    "backend": _backend,
    "moveoverhead": lambda v: [("timeman.move_overhead", int(v))],
    "ponder": lambda v: [("engine.ponder", bool(v))],
    "uci_elo": lambda v: [("engine.strength.elo", int(v))],
}

#: How each mapping reads, for the migration's report.
UCI_NOTES: dict[str, str] = {
    "threads": "lc0's search threads; ours are the network's threads (batches side by side on the CPU)",
    "hash": f"megabytes of hash -> entries of the NN cache ({HASH_ENTRIES_PER_MB} a megabyte)",
    "syzygypath": "the tables the engine probes in its search; here the same tables serve the root and the "
                  "search",
    "moveoverhead": "the engine's own per-move overhead (Stockfish's and lc0's semantic: each move to come pays it)",
    "uci_elo": "a strength level calibrated against Stockfish's UCI_Elo (docs/strength.md), with "
               "UCI_LimitStrength",
}


def uci_option(name: str, value: Any, options: dict[str, Any]) -> list[tuple[str, Any]] | str:
    """Where lichess-bot's ``engine.uci_options.NAME: value`` goes here: ``[(our dotted key, value), ...]``, or
    the reason it is dropped. ``options``: every uci option of the file (UCI_Elo counts only with
    UCI_LimitStrength on)."""
    key = name.lower().replace(" ", "")
    if key in UCI_DROPPED:
        return UCI_DROPPED[key]
    if key == "uci_elo":
        limit = any(k.lower().replace(" ", "") == "uci_limitstrength" and v for k, v in options.items())
        if not limit:
            return "UCI_Elo without UCI_LimitStrength: the engine played at full strength"
    try:
        if key in _SPECIAL:
            return _SPECIAL[key](value)
        lc0 = _lc0_names().get(key)
        if lc0 is not None:
            return [(lc0, value)]
    except (TypeError, ValueError):
        return f"{value!r} is not a value of {name}"
    return "an option of another engine with no counterpart here"
