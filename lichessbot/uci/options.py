"""The UCI option table of ``lichessbot uci``: each option's UCI declaration, how its value is parsed, and
where it goes (search parameters, engine config, time manager, or a field of :class:`UciSettings`, the
protocol's own settings); :func:`thinker_settings` reads the fields that choose moves into the thinker's typed
settings. Names follow lc0 where lc0 has the option (lc0 src/search/classic/params.cc, src/engine.cc).

The options of the config's fields are made from the fields (:func:`field_option`): type, default, bounds and
choices are the config model's, declared once there; every field of :class:`~lichessbot.config.SearchParams`
is an option (:func:`field_options`), so a new search parameter is offered with no change here."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, Literal, get_args, get_origin

import annotated_types
from pydantic import BaseModel

from lichessbot.config import (
    BookConfig,
    EngineConfig,
    SearchParams,
    StrengthConfig,
    TablebaseConfig,
    Uci,
)
from lichessbot.neural import registry
from lichessbot.tablebase import split_path
from lichessbot.thinker.settings import ThinkerSettings
from lichessbot.uci.input import MOVETIME_OVERHEAD_MS, UCI_MOVE_OVERHEAD_MS

__all__ = ["HASH_ENTRIES_PER_MB", "OPTIONS", "SPIN_MAX", "UciOption", "UciSettings", "field_option", "field_options",
           "thinker_settings"]


@dataclass(frozen=True)
class UciOption:
    """One ``setoption``: UCI type (check, spin, combo, string), default, bounds or choices, and where
    the value goes: ``target`` is "search.<SearchParams field>", "engine.<EngineConfig field>",
    "timeman.<TimemanConfig field>" or "uci.<UciSettings field>". ``choices_of``: a combo whose choices are
    read when asked (Backend: the runners registered at that moment), instead of ``choices``."""

    name: str
    type: str
    default: Any
    target: str
    min: int | None = None
    max: int | None = None
    choices: tuple[str, ...] = ()
    choices_of: Callable[[], tuple[str, ...]] | None = None

    def allowed(self) -> tuple[str, ...]:
        """A combo's choices, now."""
        return self.choices_of() if self.choices_of is not None else self.choices

    def declaration(self) -> str:
        text = f"option name {self.name} type {self.type} default {_fmt(self.default)}"
        if self.type == "spin":
            text += f" min {self.min} max {self.max}"
        for c in self.allowed():
            text += f" var {c}"
        return text

    def parse(self, raw: str) -> Any:
        """The value of ``raw`` for this option; ValueError with a reason when it does not fit."""
        if self.type == "check":
            if raw.lower() not in ("true", "false"):
                raise ValueError(f"{self.name} takes true or false, got {raw!r}")
            return raw.lower() == "true"
        if self.type == "spin":
            value = int(raw)
            assert self.min is not None and self.max is not None, f"spin option {self.name} without bounds"
            if not self.min <= value <= self.max:
                raise ValueError(f"{self.name} must be within {self.min}..{self.max}, got {value}")
            return value
        if self.type == "combo":
            for c in self.allowed():
                if c.lower() == raw.lower():
                    return c
            raise ValueError(f"{self.name} must be one of {', '.join(self.allowed())}, got {raw!r}")
        if isinstance(self.default, float):
            return float(raw)
        return raw


def _fmt(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return "<empty>" if value == "" else str(value)


#: NN cache entries per megabyte of the UCI ``Hash`` option: an entry holds the priors of the legal
#: moves, W/D/L and moves left, about 256 bytes with its key and bookkeeping (ours, an estimate).
HASH_ENTRIES_PER_MB = 4096

#: A spin's bound where neither the field nor its :class:`~lichessbot.config.Uci` gives one: the largest value
#: of a 32-bit signed integer, what GUIs read a spin's value into (ours).
SPIN_MAX = 2**31 - 1


def _camel(field: str) -> str:
    return "".join(word.capitalize() for word in field.split("_"))


def _bounds(metadata: list[Any]) -> tuple[int | None, int | None]:
    """An int field's bounds from its pydantic constraints (ge/gt, le/lt; None where it has none)."""
    low = high = None
    for m in metadata:
        if isinstance(m, annotated_types.Ge):
            low = int(m.ge)  # type: ignore[call-overload]
        elif isinstance(m, annotated_types.Gt):
            low = int(m.gt) + 1  # type: ignore[call-overload]
        elif isinstance(m, annotated_types.Le):
            high = int(m.le)  # type: ignore[call-overload]
        elif isinstance(m, annotated_types.Lt):
            high = int(m.lt) - 1  # type: ignore[call-overload]
    return low, high


def field_option(model: type[BaseModel], field: str, room: str, *, name: str | None = None,
                 spin_max: int | None = None) -> UciOption:
    """The option of ``model``'s ``field`` (its value goes to ``room.field``): a bool is a check, a Literal a
    combo of its values, an int a spin within the field's ge/gt and le/lt, a float a string (as lc0 offers its
    float options), each with the field's default. ``name``: the option's name (default: the field's
    :class:`~lichessbot.config.Uci` name, else its name in CamelCase); ``spin_max``: a spin's upper bound where
    the field has no le/lt (else its Uci's ``max``, else :data:`SPIN_MAX`). Raises TypeError for a field of
    another type."""
    info = model.model_fields[field]
    uci = next((m for m in info.metadata if isinstance(m, Uci)), Uci())
    name = name or uci.name or _camel(field)
    ann, default, target = info.annotation, info.get_default(call_default_factory=True), f"{room}.{field}"
    if ann is bool:
        return UciOption(name, "check", default, target)
    if get_origin(ann) is Literal:
        return UciOption(name, "combo", default, target, choices=tuple(str(c) for c in get_args(ann)))
    if ann is int:
        low, high = _bounds(info.metadata)
        return UciOption(name, "spin", default, target, -SPIN_MAX - 1 if low is None else low,
                         high if high is not None else spin_max or uci.max or SPIN_MAX)
    if ann is float:
        return UciOption(name, "string", default, target)
    raise TypeError(f"{model.__name__}.{field} ({ann}) has no UCI option type: give it Uci(offered=False)")


def field_options(model: type[BaseModel], room: str) -> list[UciOption]:
    """The option of every field of ``model`` that its :class:`~lichessbot.config.Uci` does not keep back, in
    the model's order (:func:`field_option`)."""
    return [field_option(model, f, room) for f, info in model.model_fields.items()
            if all(m.offered for m in info.metadata if isinstance(m, Uci))]


_E = EngineConfig()
#: The option table (lc0 names where lc0 has the option): the config's fields first, then UCI's own settings.
#: Every search parameter is here by :func:`field_options`; add a row for an option of another kind.
OPTIONS: list[UciOption] = [
    UciOption("WeightsFile", "string", "default", "engine.network"),
    # Backend: every runner registered by name (lichessbot.neural.registry), a plugin's or a test's too
    UciOption("Backend", "combo", _E.backend, "engine.backend", choices_of=registry.names),
    # Precision: engine.precision (lc0 spells it in the backend's name, cuda-fp16 / cuda; docs/uci.md)
    field_option(EngineConfig, "precision", "engine"),
    field_option(EngineConfig, "threads", "engine", spin_max=128),
    field_option(EngineConfig, "nn_cache_size", "engine", name="NNCacheSize", spin_max=100_000_000),
    *field_options(SearchParams, "search"),
    UciOption("Seed", "spin", 0, "uci.seed", 0, 2**31 - 1),
    UciOption("MoveOverhead", "spin", UCI_MOVE_OVERHEAD_MS, "timeman.move_overhead", 0, 100_000),
    UciOption("Ponder", "check", False, "uci.ponder"),
    UciOption("UCI_ShowWDL", "check", False, "uci.show_wdl"),
    UciOption("UCI_Chess960", "check", False, "uci.chess960"),
    UciOption("VerboseMoveStats", "check", False, "uci.verbose"),
    UciOption("OwnBook", "check", False, "uci.own_book"),  # docs/book.md
    UciOption("BookFile", "string", "", "uci.book_file"),
    UciOption("MultiPV", "spin", 1, "uci.multipv", 1, 500),  # docs/uci.md: one info line per root move
    # Hash: MB of NN cache (GUIs send it to every engine); MovetimeOverhead: ms kept back from go movetime.
    UciOption("Hash", "spin", _E.nn_cache_size // HASH_ENTRIES_PER_MB, "uci.hash_mb", 0, 24_000),
    UciOption("MovetimeOverhead", "spin", MOVETIME_OVERHEAD_MS, "uci.movetime_overhead", 0, 100_000),
    UciOption("SyzygyPath", "string", "", "uci.syzygy_path"),  # docs/tablebases.md; lc0's name
    # docs/strength.md: the standard UCI names, the calibration table and the Maia preset
    UciOption("UCI_LimitStrength", "check", False, "uci.limit_strength"),
    UciOption("UCI_Elo", "spin", 1500, "uci.uci_elo", 100, 4000),
    UciOption("StrengthTable", "string", "default", "uci.strength_table"),
    UciOption("StrengthPreset", "combo", "none", "uci.strength_preset", choices=("none", "maia")),
]



@dataclass(frozen=True)
class UciSettings:
    """The values of the options with a ``uci.`` target (their defaults are the table's)."""

    seed: int = 0                    # Seed: the search's and the book's (0: from the OS)
    ponder: bool = False             # Ponder: the GUI may send go ponder
    show_wdl: bool = False           # UCI_ShowWDL
    chess960: bool = False           # UCI_Chess960
    verbose: bool = False            # VerboseMoveStats
    own_book: bool = False           # OwnBook
    book_file: str = ""              # BookFile
    multipv: int = 1                 # MultiPV
    hash_mb: int = _E.nn_cache_size // HASH_ENTRIES_PER_MB  # Hash
    movetime_overhead: int = MOVETIME_OVERHEAD_MS  # MovetimeOverhead, ms
    syzygy_path: str = ""            # SyzygyPath
    limit_strength: bool = False     # UCI_LimitStrength
    uci_elo: int = 1500              # UCI_Elo
    strength_table: str = "default"  # StrengthTable
    strength_preset: Literal["none", "maia"] = "none"  # StrengthPreset


def _book_file(path: str) -> str:
    """A BookFile's path, "" for none (UCI's ``<empty>``)."""
    path = path.strip()
    return "" if path in ("", "<empty>") else path


def thinker_settings(uci: UciSettings, base: ThinkerSettings) -> ThinkerSettings:
    """``base`` with what the ``uci.`` options say of choosing moves: Seed (the search's and the book's),
    OwnBook and BookFile (one weighted-random book for standard and Chess960), SyzygyPath, and the strength
    options (UCI_LimitStrength with UCI_Elo as ``engine.strength.elo``, StrengthTable, StrengthPreset)."""
    seed = uci.seed or None
    book = _book_file(uci.book_file)
    strength = StrengthConfig(elo=uci.uci_elo if uci.limit_strength else None, table=uci.strength_table,
                              preset="maia" if uci.strength_preset == "maia" else None)
    engine = base.engine.model_copy(update={"search": base.engine.search.model_copy(update={"seed": seed}),
                                            "strength": strength})
    return replace(base, engine=engine, book_seed=seed,
                   book=BookConfig(enabled=uci.own_book and bool(book),
                                   paths={"standard": [book], "chess960": [book]} if book else {}),
                   tablebases=TablebaseConfig(syzygy=split_path(uci.syzygy_path)))
