"""The engine's sections: search parameters, network and backend, time manager, book, tablebases."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Literal

from pydantic import Field, model_validator

from lichessbot.config.base import KeyConflict, Strict

__all__ = ["AdaptiveStrengthConfig", "EngineConfig", "SearchParams",
           "StrengthConfig", "TablebaseConfig", "TimemanConfig", "Uci"]


@dataclass(frozen=True)
class Uci:
    """What ``lichessbot uci`` needs of a field beyond its type, default and bounds (lichessbot/uci/options.py
    makes the option from the field; ``Annotated[type, Uci(...)]``). Without it a field is offered under its
    name in CamelCase (``fpu_value`` -> ``FpuValue``).

    ``name``: the option's name where lc0 spells it otherwise (``cpuct`` -> ``CPuct``); ``max``: a spin's
    upper bound where the field has no ``le`` (a UCI spin needs one); ``offered``: False when UCI sets the
    field another way (``seed``: UCI's ``Seed``, 0 for random).
    """

    name: str | None = None
    max: int | None = None
    offered: bool = True


# --------------------------------------------------------------------------------------------------
# Search (lichessbot/search reads these). Defaults: lc0 src/search/classic/params.cc (v0.33.0-dev).
# --------------------------------------------------------------------------------------------------
class SearchParams(Strict):
    """PUCT search parameters: the one declaration of each (name, range, default, source).

    ``lichessbot uci`` offers each as an option made from its field (lichessbot/uci/options.py; the name, a
    spin's missing upper bound, or none: :class:`Uci`), and the Rust core's ``KEYS`` (rust/core/src/params.rs)
    are these fields but the move-sampling ones, checked by tests/config/test_search_options_declared_once.py.

    Defaults are lc0's UCI defaults (lc0 src/search/classic/params.cc; PolicyTemperature and HistoryFill:
    src/neural/shared_params.cc). The Rust core has none of its own: it takes every parameter it reads
    from here (``lichessbot.search.searcher.core_params``) and refuses a missing or unknown one.
    """

    cpuct: Annotated[float, Uci("CPuct")] = Field(
        1.745, gt=0, description="CPuct: exploration constant at N = 0.")
    cpuct_base: Annotated[float, Uci("CPuctBase")] = Field(
        38739.0, gt=0, description="CPuctBase: visits scale of cpuct growth.")
    cpuct_factor: Annotated[float, Uci("CPuctFactor")] = Field(
        3.894, ge=0, description="CPuctFactor: cpuct growth multiplier.")
    fpu_strategy: Literal["reduction", "absolute"] = Field(
        "reduction", description="FpuStrategy: FPU = parent Q - fpu_value*sqrt(visited policy), or fpu_value."
    )
    fpu_value: float = Field(0.330, description="FpuValue: reduction (or absolute value) for unvisited moves.")
    fpu_strategy_at_root: Literal["same", "reduction", "absolute"] = Field(
        "same", description="FpuStrategyAtRoot: 'same' uses fpu_strategy/fpu_value at the root."
    )
    fpu_value_at_root: float = Field(1.0, description="FpuValueAtRoot: used only when fpu_strategy_at_root != same.")
    policy_temperature: float = Field(1.359, gt=0, description="PolicyTemperature: softmax temperature of priors.")
    history_fill: Literal["fen_only", "no", "always"] = Field(
        "fen_only", description="HistoryFill: fill the network's history planes before the game's first position "
        "with copies of it: fen_only (unless the game began at the start position), no, always.",
    )
    minibatch_size: int = Field(
        0, ge=0, le=1024,
        description="MinibatchSize: positions per network batch; 0 = from the provider that runs: 256 on "
        "CUDA/TensorRT, on the CPU the batch the network evaluates in about 30 ms (lc0: the backend's choice).",
    )
    max_out_of_order_evals_factor: float = Field(
        2.4, ge=0, description="MaxOutOfOrderEvalsFactor: cache hits/terminals per batch, as a multiple of minibatch."
    )
    max_collision_visits: int = Field(80000, ge=1, description="MaxCollisionVisits (lc0 search.cc).")
    max_collision_visits_scaling_start: int = Field(28, ge=1, description="MaxCollisionVisitsScalingStart.")
    max_collision_visits_scaling_end: int = Field(145000, ge=1, description="MaxCollisionVisitsScalingEnd.")
    max_collision_visits_scaling_power: float = Field(1.25, gt=0, description="MaxCollisionVisitsScalingPower.")
    two_fold_draws: bool = Field(True, description="TwoFoldDraws: a repetition inside the tree is a draw.")
    sticky_endgames: bool = Field(True, description="StickyEndgames: propagate proven wins/losses/draws up.")
    draw_score: float = Field(0.0, ge=-1, le=1, description="DrawScore, from white's view.")
    temperature: float = Field(
        0.0, ge=0, description="Temperature: sample the move by visits^(1/T); 0 plays the best move (lc0 default)."
    )
    temp_decay_moves: Annotated[int, Uci(max=1000)] = Field(
        0, ge=0, description="TempDecayMoves: linear decay of temperature to 0 (moves).")
    temp_cutoff_move: int = Field(0, ge=0, description="TempCutoffMove: from this full move on, temperature 0.")
    temp_value_cutoff: float = Field(100.0, ge=0, description="TempValueCutoff: skip moves with Q < best - x/50.")
    temp_visit_offset: float = Field(0.0, description="TempVisitOffset: added to visits before sampling.")
    seed: Annotated[int | None, Uci(offered=False)] = Field(
        None, description="Seed of the move-sampling generator (None: from the OS).")


class AdaptiveStrengthConfig(Strict):
    """engine.strength.adaptive: each game's level follows the opponent's rating (docs/strength.md)."""

    enabled: bool = Field(False, description="Play each game at the level of the opponent's lichess rating for "
                          "the game's speed, plus offset.")
    offset: int = Field(0, ge=-2000, le=2000, description="Elo added to the opponent's rating (negative: weaker).")
    casual_only: bool = Field(True, description="Adapt in casual games only; rated games use elo (or full strength).")


class StrengthConfig(Strict):
    """engine.strength: a weakened engine for playing people (docs/strength.md)."""

    elo: int | None = Field(None, ge=100, le=4000, description="Play at this UCI_Elo in every game (levels from "
                            "table); null: full strength (unless adaptive applies).")
    preset: Literal["maia"] | None = Field(None, description="maia: a Maia network played from its policy at 1 "
                                           "node with temperature (the network is engine.network).")
    table: str = Field("default", description="The calibration table (lichessbot calibrate); 'default': the one "
                       "shipped for the default network.")
    think_share: float = Field(0.5, ge=0, le=1, description="At a strength level, spend at least this share of "
                               "the time manager's target on each move (0: move when the search stops).")
    adaptive: AdaptiveStrengthConfig = Field(default_factory=AdaptiveStrengthConfig)

    @model_validator(mode="after")
    def _one_kind(self) -> StrengthConfig:
        if self.preset is not None and (self.elo is not None or self.adaptive.enabled):
            raise KeyConflict("preset plays every game at the preset: leave elo unset and adaptive off", "preset",
                              "elo", "adaptive.enabled")
        return self


class EngineConfig(Strict):
    """The network and how it runs."""

    network: str = Field("default", description="'default' for the embedded network, or a .onnx/.pb.gz path.")
    backend: str = Field(
        "auto", min_length=1, description="The runner of the network, by the name it is registered under "
        "(lichessbot.neural.registry; a name no runner serves is refused at start, naming the registered "
        "ones). onnxruntime: auto = CUDA when it starts, else the CPU "
        "(TensorRT only when asked for: docs/gpu.md); tensorrt = TensorRT, else CUDA, else the CPU; triton = a "
        "Triton Inference Server at triton_url (docs/scaling.md); torch = PyTorch, on CUDA when it sees a GPU "
        "(pip install torch; docs/gpu.md).",
    )
    device: int = Field(
        0, ge=0, description="Which GPU runs the network: its CUDA device number, as lichessbot doctor lists "
        "them (lc0: the gpu= backend option).",
    )
    triton_url: str = Field("localhost:8001", description="gRPC host:port of the Triton server (backend triton).")
    triton_model: str = Field("lichessbot", description="The model's name on the Triton server (backend triton).")
    input_format: int | None = Field(
        None, description="Lc0 input format for .onnx files that do not record it (1 = classical). None: 1."
    )
    threads: int = Field(
        0, ge=0,
        description="Network threads. On the CPU: that many batches evaluated side by side, one thread each "
        "(faster than one batch over several threads); 0 = one per core (at most 8). "
        "On a GPU: onnxruntime intra-op threads of each session (0: one; docs/gpu.md).",
    )
    nn_cache_size: int = Field(
        2_000_000, ge=0, description="NNCacheSize: entries of the evaluation cache (lc0 v0.33's default, "
        "src/neural/shared_params.cc; about 175 bytes an entry with 35 legal moves, docs/engine.md).",
    )
    precision: Literal["auto", "fp32", "tf32", "fp16", "bf16", "int8"] = Field(
        "auto", description="Network precision: auto (fp16 on a GPU with tensor cores, compute "
        "capability 7.0 or more, as lc0's cuda-auto; fp32 on other GPUs; int8 on the CPU, which played stronger than "
        "fp32 at equal time: docs/engine.md, \"int8\"), fp32 (TF32 off on CUDA), "
        "tf32 (TF32 tensor cores for fp32 convolutions), fp16 (a float16 copy of the network on CUDA, "
        "TensorRT's fp16 engines), bf16 (backend torch only), int8 (the CPU only: an int8 copy of the network "
        "made at the first start and cached beside it; backend auto runs fp32 when a GPU starts, backends cuda "
        "and tensorrt refuse it; docs/engine.md, \"int8\"). UCI: the Precision option. Measure speed and "
        "agreement with the CPU on your GPU: lichessbot bench gpu --precisions fp32,tf32,fp16.",
    )
    compact_input: bool = Field(
        False, description="Hand the network lc0's compact input (112 bit-masks and values a position, 1,344 "
        "bytes instead of 28,672), expanded inside the model (docs/scaling.md, \"Compact input\").",
    )
    ponder: bool = Field(False, description="Think on the opponent's time (lichess-bot: engine.ponder).")
    search: SearchParams = Field(default_factory=SearchParams)
    strength: StrengthConfig = Field(default_factory=StrengthConfig)

    @model_validator(mode="after")
    def _check_format(self) -> EngineConfig:
        if self.input_format is not None and self.input_format not in (1, 2, 3, 4, 5, 132, 133):
            raise KeyConflict(f"input_format {self.input_format} is not an Lc0 input format (1, 2, 3, 4, 5, 132, 133)",
                              "input_format")
        return self


# --------------------------------------------------------------------------------------------------
# Time manager (lichessbot/timeman reads these).
# --------------------------------------------------------------------------------------------------
class TimemanConfig(Strict):
    """Time management (lichessbot/timeman, docs/timeman.md). Times in milliseconds unless stated.

    Sources: lc0 src/search/classic/stoppers/legacy.cc and stoppers.cc;
    the early/late stop rules follow NeuralchessGM; "ours" marks a value chosen here.
    """

    move_overhead: int = Field(
        100, ge=0, description="Milliseconds each move costs beyond its search (network and server latency; "
        "lc0: MoveOverheadMs, Stockfish: Move Overhead). Bot games start from it and learn the real value from "
        "lichess's clocks (learn_overhead); `lichessbot uci` defaults to 10 (MoveOverhead). 100: ours, a start "
        "the first measured move replaces.",
    )
    learn_overhead: bool = Field(
        True, description="Bot games: measure what each move really costs on lichess's clock beyond our thinking "
        "(lichess gives bots no lag compensation: lila MovePlayer botLag); one move keeps back the 90th "
        "percentile of the game's moves, each move to come is reserved their median, both bounded to 10..5000 ms, "
        "instead of move_overhead (docs/timeman.md).",
    )
    # -- allocation ------------------------------------------------------------------------------
    overhead_per_move: bool = Field(
        True,
        description="Charge the move overhead to every expected move left, not once (Stockfish src/timeman.cpp "
        "charges moveOverhead*(2+mtg)); false: once, as lc0 legacy.cc. Keeps long sudden-death games off the flag.",
    )
    safety_margin: int = Field(
        50, ge=0, description="Milliseconds kept back on top of move_overhead from the hard maximum (ours)."
    )
    low_clock: int = Field(
        10_000, ge=0, description="Milliseconds: below this clock the safety margin grows linearly and late stop no "
        "longer extends moves (ours)."
    )
    low_clock_margin: int = Field(
        250, ge=0, description="Milliseconds added to safety_margin at an empty clock; half at low_clock/2 (ours)."
    )
    max_move_share: float = Field(
        0.3, gt=0, le=1, description="Share of the remaining clock one move may use at most (ours; lc0 smooth: 0.42)."
    )
    midpoint_move: float = Field(
        51.5, gt=0, description="Expected-moves-left model: midpoint of the game length, moves (lc0 legacy.cc)."
    )
    steepness: float = Field(
        7.0, gt=0, description="Expected-moves-left model: steepness of the log-logistic curve (lc0 legacy.cc)."
    )
    min_moves_left: float = Field(
        15.0, ge=1, description="Floor of the expected moves left, so long games keep time (ours; lc0 has none)."
    )
    first_move_bonus: float = Field(
        1.8, ge=0, description="First search of a game thinks (1 + this + book bonus) times longer (lc0 legacy.cc)."
    )
    book_ply_bonus: float = Field(
        0.25, ge=0, description="Extra first-search factor per ply already played, up to 12 plies (lc0 legacy.cc)."
    )
    bank_use: float = Field(
        1.0, ge=0, le=1, description="Share of the banked (spared) time spent on the next move (lc0 immediate-use)."
    )
    first_moves_think: int = Field(
        1000, ge=0,
        description="Milliseconds per move while lichess's clock does not run yet (each side's first move; ours).",
    )
    # -- stop rules ------------------------------------------------------------------------------
    immediate: bool = Field(True, description="Move at once when there is one legal move (lc0 stoppers.cc).")
    smart_pruning: bool = Field(
        True, description="Stop when the best move cannot be overtaken in the time left (lc0 SmartPruningStopper)."
    )
    smart_pruning_factor: float = Field(
        1.33, gt=0, description="Smart pruning: remaining playouts are divided by this (lc0 SmartPruningFactor)."
    )
    smart_pruning_min_time: int = Field(
        200, ge=0, description="Milliseconds of search before smart pruning may stop (lc0 kSmartPruningToleranceMs)."
    )
    early_stop: bool = Field(True, description="NeuralchessGM early stop: a clear, stable best move stops early.")
    early_stop_after: float = Field(
        0.5, ge=0, le=1, description="Early stop: share of the target time searched first (NeuralchessGM)."
    )
    early_stop_q_drop: float = Field(
        0.05, ge=0, description="Early stop: best Q at most this far below the previous move's Q (NeuralchessGM)."
    )
    early_stop_prior: float = Field(
        0.9, ge=0, le=1, description="Early stop: a prior above this makes the best move clear (NeuralchessGM)."
    )
    early_stop_visit_ratio: float = Field(
        2.0, ge=1, description="Early stop: or its visits at least this many times the second's (ours)."
    )
    late_stop: bool = Field(
        True, description="Search past the target while the best move is unstable (NeuralchessGM; lc0 smooth)."
    )
    late_stop_factor: float = Field(
        2.0, ge=1, description="Late stop: at most this many times the target, never past the hard maximum."
    )
    late_stop_q_drop: float = Field(
        0.05, ge=0, description="Late stop: extend while the best Q is more than this below the previous move's."
    )
    best_q_tolerance: float = Field(
        0.0, ge=0,
        description="Early/late stop: a rival's Q must beat the most visited move's by more than this to count "
        "as a better Q (0: the rule as written, NeuralchessGM; ours).",
    )


# --------------------------------------------------------------------------------------------------
# Endgame tablebases (lichessbot/tablebase.py reads these). lichess-bot: engine.lichess_bot_tbs.syzygy.
# --------------------------------------------------------------------------------------------------
class GaviotaConfig(Strict):
    """Gaviota endgame tablebases at the root (lichess-bot: engine.lichess_bot_tbs.gaviota, the same keys),
    asked after the Syzygy tables (lichessbot/gaviota.py)."""

    enabled: bool = Field(False, description="Play the Gaviota tables' move in positions they hold.")
    paths: list[str] = Field(default_factory=list, description="Directories of Gaviota tables (*.gtb.cp4).")
    max_pieces: int = Field(5, ge=3, le=5, description="Probe positions with at most this many pieces.")
    move_quality: Literal["best", "suggest"] = Field(
        "best", description="best: play the tables' move; suggest: the search keeps to the moves that keep the "
        "tables' result.")
    min_dtm_to_consider_as_wdl_1: int = Field(
        120, ge=100, description="A win in this many plies or more (50-move counter included) may be spoilt by "
        "the 50-move rule: counted as a cursed win (lichess-bot's key; 100 turns it off).")

    @model_validator(mode="after")
    def _paths(self) -> GaviotaConfig:
        if self.enabled and not self.paths:
            raise KeyConflict("enabled without paths: name the directories of the *.gtb.cp4 files", "enabled")
        return self


class TablebaseConfig(Strict):
    """Syzygy endgame tablebases (docs/tablebases.md), and Gaviota tables at the root. Directories are
    checked at startup."""

    syzygy: list[str] = Field(
        default_factory=list,
        description="Directories of Syzygy tables (*.rtbw, *.rtbz); empty: no tablebases "
        "(lichess-bot: engine.lichess_bot_tbs.syzygy.paths).",
    )
    max_pieces: int = Field(
        0, ge=0, le=7, description="Probe positions with at most this many pieces; 0: the tables' maximum "
        "(lichess-bot: lichess_bot_tbs.syzygy.max_pieces).",
    )
    root_probe: bool = Field(
        True, description="In a position of the tables, play the tables' move at once, without searching.",
    )
    search_probe: bool = Field(
        True, description="Inside the search, a node in the tables after a capture or pawn move is a terminal "
        "with the tables' WDL (lc0's rule).",
    )
    move_quality: Literal["best", "suggest"] = Field(
        "best", description="lichess-bot's lichess_bot_tbs.syzygy.move_quality: best: play the tables' move (best "
        "WDL, then DTZ); suggest: the search keeps to the moves that keep the best WDL (one such move is played "
        "at once).")
    gaviota: GaviotaConfig = Field(default_factory=GaviotaConfig)
