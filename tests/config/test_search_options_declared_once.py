"""Each search parameter is declared once, by its field of ``SearchParams``: UCI's option is made from the field
(name, type, default, bounds, choices), and the Rust core's ``KEYS`` are the same fields."""

from __future__ import annotations

import io
import re
from pathlib import Path
from typing import Annotated, Literal, get_args

import annotated_types
from pydantic import Field

from lichessbot.config import SearchParams, Uci
from lichessbot.search.searcher import SAMPLING_PARAMS
from lichessbot.uci import UciEngine
from lichessbot.uci.options import OPTIONS, SPIN_MAX, field_options

RUST_PARAMS = Path(__file__).resolve().parents[2] / "rust" / "core" / "src" / "params.rs"


def rust_keys(source: str) -> tuple[list[str], int]:
    """The names in ``pub const KEYS: [&str; N] = [...]`` of the core's params.rs, and its declared N."""
    m = re.search(r"pub const KEYS: \[&str; (\d+)\] = \[(.*?)\];", source, re.S)
    assert m is not None, "no KEYS array in params.rs"
    return re.findall(r'"([a-z_0-9]+)"', m.group(2)), int(m.group(1))


def test_the_rust_cores_keys_are_the_search_parameters_it_reads():
    """The core takes every field but the move-sampling ones (the Python face keeps those), plus the network's
    input format: a field added to SearchParams and not to KEYS (or the other way) fails here, before the core
    refuses it at the first search."""
    assert rust_keys('pub const KEYS: [&str; 2] = [\n    "a",\n    "b_c",\n];') == (["a", "b_c"], 2)
    keys, n = rust_keys(RUST_PARAMS.read_text(encoding="utf-8"))
    assert len(keys) == len(set(keys)) == n
    assert set(keys) == set(SearchParams.model_fields) - SAMPLING_PARAMS | {"input_format"}
    assert SAMPLING_PARAMS <= set(SearchParams.model_fields)


def _limit(field: str, kind: type, attr: str) -> object:
    """The field's ``ge`` or ``le`` (pydantic keeps them as annotated_types values), None without one."""
    return next((getattr(m, attr) for m in SearchParams.model_fields[field].metadata if isinstance(m, kind)), None)


def test_every_search_parameter_is_a_uci_option_made_from_its_field():
    by_target = {o.target: o for o in OPTIONS}
    defaults = SearchParams()
    offered = [f for f, info in SearchParams.model_fields.items()
               if all(m.offered for m in info.metadata if isinstance(m, Uci))]
    assert "seed" not in offered and len(offered) == len(SearchParams.model_fields) - 1  # Seed is UCI's own
    for field in offered:
        opt = by_target[f"search.{field}"]
        assert opt.default == getattr(defaults, field), field
        ann = SearchParams.model_fields[field].annotation
        if ann is int:
            assert (opt.type, opt.min) == ("spin", _limit(field, annotated_types.Ge, "ge")), field
            uci_max = 1000 if field == "temp_decay_moves" else SPIN_MAX  # Uci(max=1000): today's bound
            assert opt.max == (_limit(field, annotated_types.Le, "le") or uci_max), field
        elif ann is float:
            assert opt.type == "string", field
        elif ann is bool:
            assert opt.type == "check", field
        else:
            assert (opt.type, opt.choices) == ("combo", get_args(ann)), field
    names = {o.target: o.name for o in OPTIONS}
    assert names["search.cpuct"] == "CPuct" and names["search.max_out_of_order_evals_factor"] == (
        "MaxOutOfOrderEvalsFactor")  # lc0's spelling, given or by CamelCase


def test_a_new_search_parameter_is_offered_with_no_change_to_the_option_table():
    class Grown(SearchParams):
        new_knob: int = Field(7, ge=2, le=9, description="NewKnob: a parameter that does not exist.")
        new_mode: Literal["x", "y"] = Field("y", description="NewMode.")
        new_ratio: Annotated[float, Uci("NRatio")] = Field(0.5, gt=0, description="NRatio.")

    made = {o.name: o for o in field_options(Grown, "search")}
    assert made["NewKnob"].declaration() == "option name NewKnob type spin default 7 min 2 max 9"
    assert made["NewMode"].declaration() == "option name NewMode type combo default y var x var y"
    assert made["NRatio"].declaration() == "option name NRatio type string default 0.5"
    assert made["NewKnob"].target == "search.new_knob"
    assert {o.name for o in OPTIONS} > set(made) - {"NewKnob", "NewMode", "NRatio"}


def test_a_made_option_sets_its_field_and_the_fields_bounds_refuse_a_bad_value():
    out = io.StringIO()
    eng = UciEngine(out=out)
    eng.handle("setoption name HistoryFill value always")
    eng.handle("setoption name MaxCollisionVisits value 500")
    eng.handle("setoption name CPuct value -1")  # gt=0 in SearchParams: refused, the value stays
    eng.handle("setoption name MaxCollisionVisits value 0")  # ge=1
    search = eng.settings.engine.search
    assert (search.history_fill, search.max_collision_visits, search.cpuct) == ("always", 500, 1.745)
    errors = [line for line in out.getvalue().splitlines() if line.startswith("info string error")]
    assert len(errors) == 2 and "greater than 0" in errors[0] and "1..2147483647" in errors[1]
    eng.handle("quit")
