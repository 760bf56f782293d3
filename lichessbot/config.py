"""The configuration of lichessbot: pydantic models of ``config.yml``, declared once.

Every key is documented here and in ``config.yml.example``. Where lichess-bot has a key with the same
meaning, the name is the same. Unknown keys, wrong types and impossible values are refused with the
key's dotted path and the reason (:class:`ConfigError`).

The models are frozen: a loaded config never changes while the bot runs.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, field_validator, model_validator

__all__ = [
    "BookConfig",
    "BotConfig",
    "ChallengeConfig",
    "ChatConfig",
    "ConfigError",
    "CorrespondenceConfig",
    "DrawOrResignConfig",
    "EngineConfig",
    "GreetingConfig",
    "MatchmakingConfig",
    "SearchParams",
    "StrengthConfig",
    "TablebaseConfig",
    "TimemanConfig",
    "load_config",
    "parse_config",
]

TOKEN_ENV = "LICHESS_BOT_TOKEN"


class ConfigError(ValueError):
    """A config file that cannot be used. The message names the key's dotted path and the reason."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, validate_default=True)


# --------------------------------------------------------------------------------------------------
# Search (lichessbot/search reads these). Defaults: lc0 src/search/classic/params.cc (v0.33.0-dev),
# see lc0 src/search/classic/params.cc.
# --------------------------------------------------------------------------------------------------
class SearchParams(_Strict):
    """PUCT search parameters. Defaults are lc0's UCI defaults (lc0 src/search/classic/params.cc)."""

    cpuct: float = Field(1.745, gt=0, description="CPuct: exploration constant at N = 0.")
    cpuct_base: float = Field(38739.0, gt=0, description="CPuctBase: visits scale of cpuct growth.")
    cpuct_factor: float = Field(3.894, ge=0, description="CPuctFactor: cpuct growth multiplier.")
    fpu_strategy: Literal["reduction", "absolute"] = Field(
        "reduction", description="FpuStrategy: FPU = parent Q - fpu_value*sqrt(visited policy), or fpu_value."
    )
    fpu_value: float = Field(0.330, description="FpuValue: reduction (or absolute value) for unvisited moves.")
    fpu_strategy_at_root: Literal["same", "reduction", "absolute"] = Field(
        "same", description="FpuStrategyAtRoot: 'same' uses fpu_strategy/fpu_value at the root."
    )
    fpu_value_at_root: float = Field(1.0, description="FpuValueAtRoot: used only when fpu_strategy_at_root != same.")
    policy_temperature: float = Field(1.359, gt=0, description="PolicyTemperature: softmax temperature of priors.")
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
    temp_decay_moves: int = Field(0, ge=0, description="TempDecayMoves: linear decay of temperature to 0 (moves).")
    temp_cutoff_move: int = Field(0, ge=0, description="TempCutoffMove: from this full move on, temperature 0.")
    temp_value_cutoff: float = Field(100.0, ge=0, description="TempValueCutoff: skip moves with Q < best - x/50.")
    temp_visit_offset: float = Field(0.0, description="TempVisitOffset: added to visits before sampling.")
    seed: int | None = Field(None, description="Seed of the move-sampling generator (None: from the OS).")


class AdaptiveStrengthConfig(_Strict):
    """engine.strength.adaptive: each game's level follows the opponent's rating (docs/strength.md)."""

    enabled: bool = Field(False, description="Play each game at the level of the opponent's lichess rating for "
                          "the game's speed, plus offset.")
    offset: int = Field(0, ge=-2000, le=2000, description="Elo added to the opponent's rating (negative: weaker).")
    casual_only: bool = Field(True, description="Adapt in casual games only; rated games use elo (or full strength).")


class StrengthConfig(_Strict):
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
            raise ValueError("preset plays every game at the preset: leave elo unset and adaptive off")
        return self


class EngineConfig(_Strict):
    """The network and how it runs."""

    network: str = Field("default", description="'default' for the embedded network, or a .onnx/.pb.gz path.")
    backend: Literal["auto", "tensorrt", "cuda", "cpu", "triton"] = Field(
        "auto", description="onnxruntime execution provider; auto = best available; triton = a Triton Inference "
        "Server at triton_url (docs/scaling.md).",
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
        "On a GPU: onnxruntime intra-op threads (0: onnxruntime's default).",
    )
    nn_cache_size: int = Field(200_000, ge=0, description="NNCacheSize: entries of the evaluation cache.")
    precision: Literal["fp32", "fp16"] = Field(
        "fp32", description="Network precision on a GPU: fp16 through TensorRT's fp16 flag, or a float16 copy of "
        "the network on CUDA (faster, about 1e-3 off).",
    )
    ponder: bool = Field(False, description="Think on the opponent's time (lichess-bot: engine.ponder).")
    search: SearchParams = Field(default_factory=SearchParams)
    strength: StrengthConfig = Field(default_factory=StrengthConfig)

    @model_validator(mode="after")
    def _check_format(self) -> EngineConfig:
        if self.input_format is not None and self.input_format not in (1, 2, 3, 4, 5, 132, 133):
            raise ValueError(f"input_format {self.input_format} is not an Lc0 input format (1, 2, 3, 4, 5, 132, 133)")
        return self


# --------------------------------------------------------------------------------------------------
# Time manager (lichessbot/timeman reads these).
# --------------------------------------------------------------------------------------------------
class TimemanConfig(_Strict):
    """Time management (lichessbot/timeman, docs/timeman.md). Times in milliseconds unless stated.

    Sources: lc0 src/search/classic/stoppers/legacy.cc and stoppers.cc;
    the early/late stop rules follow NeuralchessGM (issue 4); "ours" marks a value chosen here.
    """

    move_overhead: int = Field(
        300, ge=0, description="Milliseconds kept back per move for network and server latency (lc0: MoveOverheadMs)."
    )
    # -- allocation ------------------------------------------------------------------------------
    overhead_per_move: bool = Field(
        True,
        description="Charge move_overhead to every expected move left, not once (Stockfish src/timeman.cpp "
        "charges moveOverhead*(2+mtg)); false: once, as lc0 legacy.cc. Keeps long sudden-death games off the flag.",
    )
    safety_margin: int = Field(
        50, ge=0, description="Milliseconds kept back on top of move_overhead from the hard maximum (ours)."
    )
    low_clock: int = Field(
        10_000, ge=0, description="Milliseconds: below this clock the safety margin grows linearly and late stop no longer "
        "extends moves (ours)."
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
# Opening book (lichessbot/book reads these). lichess-bot: engine.polyglot.
# --------------------------------------------------------------------------------------------------
class BookConfig(_Strict):
    """Polyglot opening book."""

    enabled: bool = Field(False, description="Play book moves (files are checked at startup).")
    paths: dict[Literal["standard", "chess960"], list[str]] = Field(
        default_factory=dict, description="Per variant, .bin files tried in order (fromPosition uses standard)."
    )
    selection: Literal["weighted_random", "uniform_random", "best_move"] = Field(
        "weighted_random", description="weighted_random: by weight; uniform_random; best_move: highest weight."
    )
    min_weight: int = Field(1, ge=0, description="Entries with a lower weight are ignored.")
    max_depth: int = Field(20, ge=1, description="Use the book only up to this full move number.")


# --------------------------------------------------------------------------------------------------
# Endgame tablebases (lichessbot/tablebase.py reads these). lichess-bot: engine.lichess_bot_tbs.syzygy.
# --------------------------------------------------------------------------------------------------
class TablebaseConfig(_Strict):
    """Syzygy endgame tablebases (docs/tablebases.md). Directories are checked at startup."""

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


# --------------------------------------------------------------------------------------------------
# The bot: challenges, chat, draws and resignation. Names as in lichess-bot.
# --------------------------------------------------------------------------------------------------
#: The variants the engine plays (lichess keys). Others (atomic, crazyhouse, ...) are refused by the config.
PLAYABLE_VARIANTS = ("standard", "chess960", "fromPosition")
#: lichess's other variant keys, named in the error of a config that lists one.
OTHER_VARIANTS = ("antichess", "atomic", "crazyhouse", "horde", "kingOfTheHill", "racingKings", "threeCheck")
TimeControl = Literal["bullet", "blitz", "rapid", "classical", "correspondence"]
#: Placeholders a greeting may use.
GREETING_FIELDS = ("me", "opponent", "level")  # level: docs/strength.md


def check_template(text: str) -> str:
    """``text`` if every ``{...}`` in it is a known placeholder (:data:`GREETING_FIELDS`); ``{{``/``}}`` are
    literal braces. Raises ValueError naming the unknown placeholder or the stray brace."""
    import string

    try:
        fields = [f for _, f, spec, conv in string.Formatter().parse(text) if f is not None]
    except ValueError as err:
        raise ValueError(f"{err} in {text!r} (write {{{{ or }}}} for a literal brace)") from None
    for f in fields:
        if f not in GREETING_FIELDS:
            known = ", ".join("{" + k + "}" for k in GREETING_FIELDS)
            raise ValueError(f"unknown placeholder {{{f}}} (known: {known})")
    return text


class ChallengeConfig(_Strict):
    """Which challenges to accept (lichess-bot's `challenge` section)."""

    concurrency: int = Field(1, ge=1, description="Games played at once.")
    accept_bot: bool = Field(False, description="Accept challenges from bots.")
    only_bot: bool = Field(False, description="Accept challenges from bots only.")
    variants: list[str] = Field(
        default_factory=lambda: ["standard"],
        description="Variants accepted (lichess keys): standard, chess960, fromPosition (what the engine plays).",
    )
    time_controls: list[TimeControl] = Field(
        default_factory=lambda: ["bullet", "blitz", "rapid", "classical"],
        description="Speeds accepted (lichess refuses bots in ultraBullet).",
    )
    modes: list[Literal["casual", "rated"]] = Field(
        default_factory=lambda: ["casual", "rated"], description="Casual and/or rated games."
    )
    min_base: int = Field(0, ge=0, description="Seconds: shortest initial clock accepted.")
    max_base: int = Field(10800, ge=0, description="Seconds: longest initial clock accepted.")
    min_increment: int = Field(0, ge=0, description="Seconds: smallest increment accepted.")
    max_increment: int = Field(180, ge=0, description="Seconds: largest increment accepted.")
    min_days: int = Field(1, ge=1, description="Correspondence: fewest days per move accepted.")
    max_days: int | Literal["unlimited"] = Field(
        14, description="Correspondence: most days per move accepted; 'unlimited' also accepts games without a clock."
    )
    min_rating: int | None = Field(None, description="Decline challengers rated below this (null: no limit).")
    max_rating: int | None = Field(None, description="Decline challengers rated above this (null: no limit).")
    block_list: list[str] = Field(default_factory=list, description="Usernames always declined.")
    allow_list: list[str] = Field(default_factory=list, description="If not empty, only these usernames.")

    @field_validator("variants")
    @classmethod
    def _playable(cls, variants: list[str]) -> list[str]:
        for v in variants:
            if v not in PLAYABLE_VARIANTS:
                what = "is not played by the engine" if v in OTHER_VARIANTS else "is not a lichess variant key"
                raise ValueError(f"{v} {what} (it plays {', '.join(PLAYABLE_VARIANTS)})")
        return variants

    @field_validator("time_controls", mode="before")
    @classmethod
    def _no_ultrabullet(cls, speeds: Any) -> Any:
        if isinstance(speeds, list) and "ultraBullet" in speeds:
            raise ValueError("ultraBullet: lichess does not let bots play UltraBullet")
        return speeds

    @model_validator(mode="after")
    def _ranges(self) -> ChallengeConfig:
        if self.min_base > self.max_base:
            raise ValueError("min_base is greater than max_base")
        if self.min_increment > self.max_increment:
            raise ValueError("min_increment is greater than max_increment")
        if self.max_days != "unlimited" and self.min_days > self.max_days:
            raise ValueError("min_days is greater than max_days")
        if self.min_rating is not None and self.max_rating is not None and self.min_rating > self.max_rating:
            raise ValueError("min_rating is greater than max_rating")
        return self


class GreetingConfig(_Strict):
    """Chat greetings; {me}, {opponent} and {level} (the game's strength level, e.g. "1450 Elo" or "full
    strength") are replaced (other placeholders are refused at load)."""

    hello: str = Field("Hi! I'm {me}, a neural-network bot. Good luck! Type !help for commands.",
                       description="Player chat at the start of a game ('' sends nothing).")
    goodbye: str = Field("Good game, {opponent}!", description="Player chat at the end of a game.")
    hello_spectators: str = Field("Hi! I'm {me}. Type !help for commands.",
                                  description="Spectator chat at the start of a game.")
    goodbye_spectators: str = Field("Thanks for watching!", description="Spectator chat at the end of a game.")

    @field_validator("hello", "goodbye", "hello_spectators", "goodbye_spectators")
    @classmethod
    def _template(cls, text: str) -> str:
        return check_template(text)


class ChatConfig(_Strict):
    """Engine evals in chat."""

    eval_room: str = Field(
        "spectator", description="Where the eval line goes after our moves: spectator or none (never the player "
        "room: evals there help the opponent)."
    )
    eval_every: int = Field(5, ge=1, description="Post an eval after every N of our moves.")

    @field_validator("eval_room")
    @classmethod
    def _room(cls, room: str) -> str:
        if room in ("player", "both"):
            raise ValueError(f"{room}: engine evals in the player room help the opponent during the game; "
                             "use spectator or none")
        if room not in ("spectator", "none"):
            raise ValueError(f"{room} is not a room (spectator or none)")
        return room


class DrawOrResignConfig(_Strict):
    """Draw offers and resignation (lichess-bot's `draw_or_resign`). Scores in centipawns, our view."""

    resign_enabled: bool = Field(False, description="Resign lost games.")
    resign_score: int = Field(
        -1000, description="Centipawns: resign when each of the last resign_moves scores is <= this."
    )
    resign_moves: int = Field(3, ge=1, description="Our consecutive searched moves at or below resign_score.")
    offer_draw_enabled: bool = Field(True, description="Offer (or accept) draws in level positions.")
    offer_draw_score: int = Field(0, ge=0, description="Centipawns: offer when |score| <= this for offer_draw_moves.")
    offer_draw_moves: int = Field(10, ge=1, description="Our consecutive searched moves within offer_draw_score.")
    claim_draw_when_gone: bool = Field(
        False, description="When the opponent leaves and lichess allows a claim, claim a draw instead of the win."
    )


class CorrespondenceConfig(_Strict):
    """Correspondence and unlimited games (lichess-bot's `correspondence` section). Seconds."""

    move_time: int = Field(60, ge=1, description="Seconds of thinking per move in games without a clock.")
    checkin_period: int = Field(
        600, ge=1, description="Seconds between looks at the ongoing games for correspondence games on our move."
    )
    disconnect_time: int = Field(
        150, ge=1, description="Seconds a correspondence game stream stays open without our move; then it is closed "
        "(the game no longer holds a thread) until the next check-in finds our move."
    )


class StatusConfig(_Strict):
    """The live status page (docs/status.md): off by default, on this machine only by default."""

    enabled: bool = Field(False, description="Serve the status page and its JSON while the bot plays.")
    host: str = Field(
        "127.0.0.1", description="Address the page listens on; anything but 127.0.0.1/::1 shows it to the network."
    )
    port: int = Field(8080, ge=0, le=65535, description="TCP port of the page (0: any free port, logged).")
    finished_games: int = Field(20, ge=0, description="Finished games kept on the page (the oldest go first).")


class MatchmakingConfig(_Strict):
    """Challenging other bots when idle (lichess-bot's ``matchmaking`` section: same key names and meanings
    where lichess-bot has the key; "ours" marks the others). Read by :mod:`lichessbot.play.matchmaker`."""

    allow_matchmaking: bool = Field(False, description="Challenge online bots when idle.")
    allow_during_games: bool = Field(
        False, description="Also challenge while games run (never past challenge.concurrency)."
    )
    challenge_timeout: float = Field(
        30, ge=0, description="Minutes without a game (since the bot started or its last game ended) before it "
        "challenges.",
    )
    challenge_variant: str = Field(
        "random", description="Variant of our challenges: standard, chess960, or random (one of challenge.variants "
        "except fromPosition).",
    )
    challenge_initial_time: list[int] = Field(
        default_factory=lambda: [60, 180],
        description="Seconds: initial clocks to choose from (lichess: 0, 15, 30, 45, 60, 90 or a multiple of 60 up "
        "to 10800).",
    )
    challenge_increment: list[int] = Field(
        default_factory=lambda: [1, 2], description="Seconds: increments to choose from (0 to 60)."
    )
    challenge_days: list[int] = Field(
        default_factory=list,
        description="Correspondence days per move to choose from (1, 2, 3, 5, 7, 10, 14); empty: real-time only.",
    )
    challenge_mode: Literal["casual", "rated", "random"] = Field("random", description="Casual, rated or random.")
    opponent_min_rating: int = Field(600, description="Challenge bots rated at least this in the game's speed.")
    opponent_max_rating: int = Field(4000, description="Challenge bots rated at most this in the game's speed.")
    opponent_rating_difference: int | None = Field(
        None, ge=0, description="If set: only bots within this many points of our rating (replaces min/max)."
    )
    rating_preference: Literal["none", "high", "low"] = Field(
        "none", description="Prefer stronger (high) or weaker (low) bots in the range, or none."
    )
    opponent_allow_tos_violation: bool = Field(False, description="Also challenge bots marked for a ToS violation.")
    challenge_filter: Literal["none", "coarse", "fine"] = Field(
        "fine", description="After a decline: none; coarse: not that bot again for decline_hours; fine: not that bot "
        "with the declined aspect (speed, variant or mode; any game for generic/later/noBot) for decline_hours.",
    )
    block_list: list[str] = Field(default_factory=list, description="Bots never challenged.")
    decline_hours: float = Field(
        24, gt=0, description="Hours a decline keeps its filter (ours; lichess-bot: one day).",
    )
    decline_file: str | None = Field(
        "matchmaking_state.json", description="Where declines and the daily-limit pause are kept across restarts "
        "(ours); null: memory only.",
    )
    challenge_expiry: float = Field(
        25, gt=0, description="Seconds an unanswered challenge of ours waits before it is canceled (ours; lichess "
        "lets a real-time challenge expire after 20 s).",
    )
    min_wait: float = Field(
        60, ge=0, description="Seconds between two challenges of ours (ours; lichess-bot waits 60 s).",
    )
    daily_limit_pause: float = Field(
        3600, gt=0, description="Seconds matchmaking pauses after lichess refuses a challenge with 429 and gives no "
        "time (ours); a 429 that names its seconds pauses that long.",
    )

    @field_validator("challenge_variant")
    @classmethod
    def _variant(cls, v: str) -> str:
        if v not in ("standard", "chess960", "random"):
            raise ValueError(f"{v}: challenges are standard, chess960 or random")
        return v

    @field_validator("challenge_initial_time")
    @classmethod
    def _initial(cls, times: list[int]) -> list[int]:
        for t in times:
            if t not in (0, 15, 30, 45, 90) and not (t % 60 == 0 and 0 < t <= 10800):
                raise ValueError(f"{t} s is not a lichess clock (0, 15, 30, 45, 60, 90 or a multiple of 60 "
                                 "up to 10800)")
        return times

    @field_validator("challenge_increment")
    @classmethod
    def _increment(cls, incs: list[int]) -> list[int]:
        for i in incs:
            if not 0 <= i <= 60:
                raise ValueError(f"{i} s is not a lichess increment (0 to 60)")
        return incs

    @field_validator("challenge_days", mode="before")
    @classmethod
    def _no_null_days(cls, days: Any) -> Any:
        """lichess-bot writes ``[null]`` for "no correspondence": the same as ``[]`` here."""
        if days is None:
            return []
        return [d for d in days if d is not None] if isinstance(days, list) else days

    @field_validator("challenge_days")
    @classmethod
    def _days(cls, days: list[int]) -> list[int]:
        for d in days:
            if d not in (1, 2, 3, 5, 7, 10, 14):
                raise ValueError(f"{d} is not a lichess days-per-move value (1, 2, 3, 5, 7, 10, 14)")
        return days

    @model_validator(mode="after")
    def _consistent(self) -> MatchmakingConfig:
        if self.opponent_min_rating > self.opponent_max_rating:
            raise ValueError("opponent_min_rating is greater than opponent_max_rating")
        if self.allow_matchmaking and not self.challenge_days and not (
                self.challenge_initial_time and self.challenge_increment):
            raise ValueError("no time control to challenge with: set challenge_initial_time and challenge_increment, "
                             "or challenge_days")
        return self


class BotConfig(_Strict):
    """The whole config.yml."""

    token: SecretStr | None = Field(None, description=f"Bot API token; the environment's {TOKEN_ENV} wins.")
    url: str = Field("https://lichess.org", description="Server that speaks the lichess Bot API.")
    engine: EngineConfig = Field(default_factory=EngineConfig)
    timeman: TimemanConfig = Field(default_factory=TimemanConfig)
    book: BookConfig = Field(default_factory=BookConfig)
    tablebases: TablebaseConfig = Field(default_factory=TablebaseConfig)
    challenge: ChallengeConfig = Field(default_factory=ChallengeConfig)
    greeting: GreetingConfig = Field(default_factory=GreetingConfig)
    chat: ChatConfig = Field(default_factory=ChatConfig)
    draw_or_resign: DrawOrResignConfig = Field(default_factory=DrawOrResignConfig)
    correspondence: CorrespondenceConfig = Field(default_factory=CorrespondenceConfig)
    matchmaking: MatchmakingConfig = Field(default_factory=MatchmakingConfig)
    abort_time: int = Field(
        30, ge=1, description="Seconds to wait for the opponent's first move before aborting (real-time games only; "
        "never in tournament games)."
    )
    playing_check_period: int = Field(
        60, ge=1, description="Seconds between checks of /api/account/playing that free the slots of games that "
        "ended unseen (a missed gameFinish)."
    )
    pgn_directory: str | None = Field("game_records", description="Where finished games are saved; null: nowhere.")
    status: StatusConfig = Field(default_factory=StatusConfig)

    @model_validator(mode="after")
    def _matchmaking_within_challenge(self) -> BotConfig:
        """Our own challenges must pass our own challenge filter (else we would decline our own game)."""
        mm, ch = self.matchmaking, self.challenge
        if not mm.allow_matchmaking:
            return self
        if not ch.accept_bot:
            raise ValueError("matchmaking.allow_matchmaking: challenges go to bots, so challenge.accept_bot must "
                             "be true")
        for t in mm.challenge_initial_time:
            if not ch.min_base <= t <= ch.max_base:
                raise ValueError(f"matchmaking.challenge_initial_time: {t} s is outside challenge.min_base.."
                                 f"challenge.max_base ({ch.min_base}..{ch.max_base})")
        for i in mm.challenge_increment:
            if not ch.min_increment <= i <= ch.max_increment:
                raise ValueError(f"matchmaking.challenge_increment: {i} s is outside challenge.min_increment.."
                                 f"challenge.max_increment ({ch.min_increment}..{ch.max_increment})")
        if mm.challenge_variant != "random" and mm.challenge_variant not in ch.variants:
            raise ValueError(f"matchmaking.challenge_variant: {mm.challenge_variant} is not in challenge.variants")
        if mm.challenge_mode != "random" and mm.challenge_mode not in ch.modes:
            raise ValueError(f"matchmaking.challenge_mode: {mm.challenge_mode} is not in challenge.modes")
        return self

    def resolved_token(self) -> str | None:
        """The token to use: the environment variable wins over the file. Never log the result."""
        env = os.environ.get(TOKEN_ENV)
        if env:
            return env
        return self.token.get_secret_value() if self.token is not None else None


def _format_errors(err: ValidationError) -> str:
    lines = []
    for e in err.errors():
        path = ".".join(str(p) for p in e["loc"]) or "(top level)"
        msg = e["msg"]
        if e["type"] == "extra_forbidden":
            msg = "unknown key"
        msg = msg.removeprefix("Value error, ")
        if not e["loc"] and msg.split(":", 1)[0].count(".") >= 1:  # a check across sections names its key
            lines.append(msg)
            continue
        lines.append(f"{path}: {msg}")
    return "; ".join(lines)


def parse_config(data: dict[str, Any] | None) -> BotConfig:
    """Validate a mapping (as read from YAML) into a :class:`BotConfig`.

    Raises:
        ConfigError: with each bad key's dotted path and the reason.
    """
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError("the config must be a mapping of keys to values")
    try:
        return BotConfig.model_validate(data)
    except ValidationError as err:
        raise ConfigError(_format_errors(err)) from None


def load_config(path: str | os.PathLike[str]) -> BotConfig:
    """Read and validate a YAML config file.

    Raises:
        ConfigError: the file is missing, is not YAML, or has a bad key (path and reason in the message).
    """
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as err:
        raise ConfigError(f"{p}: cannot read the config file ({err.strerror})") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as err:
        raise ConfigError(f"{p}: not valid YAML ({err})") from None
    try:
        return parse_config(data)
    except ConfigError as err:
        raise ConfigError(f"{p}: {err}") from None
