"""The side-by-side table of docs/migrating.md: every option of lichess-bot's and BotLi's ``config.yml.default``
and where it lives here, rendered from :data:`ROWS` and the config model (each "ours" path is looked up in
:class:`~lichessbot.config.BotConfig`, its description shown), so the table cannot drift from the config:
tests/bot/test_migrating_table.py checks that docs/migrating.md is :func:`render`'s output, that every "ours" is
a key of the config, and that every key of both files (tests/data/lichess_bot, tests/data/botli) has a row.

Run ``python -m lichessbot.bot.setup.table > docs/migrating.md`` after changing a row or a key's description.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from lichessbot.config import BotConfig

__all__ = ["ROWS", "Row", "field_of", "render"]

_ENGINE = "the engine is built in: engine.network and engine.backend choose the network and where it runs"


@dataclass(frozen=True)
class Row:
    """One option of ``source`` (``lichess-bot`` or ``BotLi``): its dotted ``key`` (``<name>`` for a name of
    the user's), our dotted key(s) ``ours`` (None: nowhere), and ``why`` when it is not the same name and
    meaning (None: the same)."""

    source: str
    key: str
    ours: str | None
    why: str | None = None


def _lb(key: str, ours: str | None = None, why: str | None = None) -> Row:
    return Row("lichess-bot", key, ours if ours is not None or why is not None else key, why)


def _bl(key: str, ours: str | None, why: str | None = None) -> Row:
    return Row("BotLi", key, ours, why)


_TOP = "at the top level here"
_OM = "engine.online_moves."

ROWS: tuple[Row, ...] = (
    # -- lichess-bot ----------------------------------------------------------------------------------
    _lb("token"), _lb("url"),
    _lb("engine.dir", "engine.network", _ENGINE), _lb("engine.name", "engine.network", _ENGINE),
    _lb("engine.working_dir", None, "an external engine's directory: the built-in engine reads this config's "
        "paths from the working directory"),
    _lb("engine.protocol", None, "uci/xboard/homemade: the engine is built in (lichessbot uci speaks UCI to GUIs)"),
    _lb("engine.interpreter", None, _ENGINE), _lb("engine.interpreter_options", None, _ENGINE),
    _lb("engine.engine_options", "engine.search", "command-line options of an external engine; ours are keys"),
    _lb("engine.homemade_options", None, "options of a homemade Python engine: " + _ENGINE),
    _lb("engine.silence_stderr", None, "no engine process: the built-in engine logs through the bot's log"),
    _lb("engine.debug", None, "no talk with an engine process to log"),
    _lb("engine.ponder"), _lb("engine.uci_ponder", "engine.ponder", "one key for both"),
    _lb("engine.polyglot.enabled", "book.enabled", "section book, at the top level"),
    _lb("engine.polyglot.book", "book.paths", "per variant, the same lists (standard, chess960: what the engine "
        "plays)"),
    _lb("engine.polyglot.min_weight", "book.min_weight", "section book, at the top level"),
    _lb("engine.polyglot.selection", "book.selection", "section book, at the top level"),
    _lb("engine.polyglot.max_depth", "book.max_depth", "section book, at the top level; full moves in both"),
    _lb("engine.polyglot.normalization", "book.normalization", "section book, at the top level"),
    *[_lb(f"engine.draw_or_resign.{k}", f"draw_or_resign.{k}", _TOP) for k in (
        "resign_enabled", "resign_score", "resign_for_egtb_minus_two", "resign_moves", "offer_draw_enabled",
        "offer_draw_score", "offer_draw_for_egtb_zero", "offer_draw_moves", "offer_draw_pieces")],
    *[_lb(f"{_OM}{k}", f"online_moves.{k}", _TOP) for k in (
        "max_out_of_book_moves", "max_retries", "max_depth",
        *[f"chessdb_book.{k}" for k in ("enabled", "min_time", "max_time", "move_quality", "min_depth")],
        *[f"lichess_cloud_analysis.{k}" for k in ("enabled", "min_time", "max_time", "move_quality",
                                                  "max_score_difference", "min_depth", "min_knodes")],
        *[f"lichess_opening_explorer.{k}" for k in ("enabled", "min_time", "max_time", "source", "player_name",
                                                    "sort", "min_games")],
        *[f"online_egtb.{k}" for k in ("enabled", "min_time", "max_time", "source", "move_quality")])],
    _lb(f"{_OM}online_egtb.max_pieces", "online_moves.online_egtb.max_pieces",
        "at the top level here; at most 7 (the tables stop there: migrate-config writes 7 for lichess-bot's 8)"),
    _lb("engine.lichess_bot_tbs.syzygy.enabled", "tablebases.syzygy", "tables on: their directories listed"),
    _lb("engine.lichess_bot_tbs.syzygy.paths", "tablebases.syzygy", "section tablebases"),
    _lb("engine.lichess_bot_tbs.syzygy.max_pieces", "tablebases.max_pieces", "section tablebases"),
    _lb("engine.lichess_bot_tbs.syzygy.move_quality", "tablebases.move_quality", "section tablebases"),
    *[_lb(f"engine.lichess_bot_tbs.gaviota.{k}", f"tablebases.gaviota.{k}", "section tablebases") for k in (
        "enabled", "paths", "max_pieces", "min_dtm_to_consider_as_wdl_1", "move_quality")],
    _lb("engine.uci_options", "engine.threads, engine.nn_cache_size, tablebases.syzygy, engine.network, "
        "engine.backend, engine.search.minibatch_size, timeman.move_overhead, engine.search",
        "an external engine's UCI options; migrate-config maps lc0's and Stockfish's (Threads, Hash, "
        "SyzygyPath, WeightsFile, Backend, MinibatchSize, Move Overhead, CPuct...) onto these"),
    _lb("engine.uci_options.go_commands", "timeman", "fixed limits (nodes, depth, movetime) for an external "
        "engine; the time manager decides here"),
    _lb("engine.xboard_options", None, "the built-in engine speaks no XBoard"),
    _lb("abort_time"), _lb("fake_think_time"), _lb("rate_limiting_delay"),
    _lb("move_overhead", "timeman.move_overhead", "with timeman.overhead_per_move false it is taken once from "
        "the clock as lichess-bot does; by default each move to come pays it, and bot games measure it"),
    _lb("max_takebacks_accepted"), _lb("quit_after_all_games_finish"),
    *[_lb(f"correspondence.{k}") for k in ("move_time", "checkin_period", "disconnect_time", "ponder")],
    *[_lb(f"challenge.{k}") for k in (
        "concurrency", "games_reserved_for_humans", "sort_by", "preference", "accept_bot", "only_bot",
        "max_increment", "min_increment", "max_base", "min_base", "min_days", "variants", "time_controls",
        "modes", "block_list", "online_block_list", "allow_list", "recent_bot_challenge_age",
        "max_recent_bot_challenges", "min_rating", "max_rating", "rating_difference", "bullet_requires_increment",
        "max_simultaneous_games_per_user")],
    _lb("challenge.max_days", "challenge.max_days", "'unlimited' where lichess-bot writes .inf"),
    _lb("max_concurrent_games", "challenge.concurrency", "lichess-bot's older name"),
    *[_lb(f"greeting.{k}") for k in ("hello", "goodbye", "hello_spectators", "goodbye_spectators")],
    _lb("pgn_directory"), _lb("pgn_file_grouping"),
    *[_lb(f"matchmaking.{k}") for k in (
        "allow_matchmaking", "allow_during_games", "challenge_variant", "challenge_timeout",
        "challenge_initial_time", "challenge_increment", "challenge_days", "opponent_min_rating",
        "opponent_max_rating", "opponent_rating_difference", "rating_preference", "challenge_mode",
        "challenge_filter", "block_list", "online_block_list", "include_challenge_block_list", "overrides")],
    _lb("matchmaking.challenge_decliner_file_name", "matchmaking.decline_file",
        "with matchmaking.decline_hours (a decade for lichess-bot's block for good)"),
    _lb("extra_game_handlers.is_supported_extra", "extra_game_handlers.challenge_filter",
        "named in the config (module:function) instead of a file lichess-bot imports"),
    _lb("extra_game_handlers.game_specific_options", "game_overrides",
        "engine options per game: config entries by speed, colour, opponent, mode (no code needed)"),
    # -- BotLi ---------------------------------------------------------------------------------------
    _bl("token", "token"),
    _bl("engines.<name>.dir", "engine.network", _ENGINE), _bl("engines.<name>.name", "engine.network", _ENGINE),
    _bl("engines.<name>.ponder", "engine.ponder", "per speed and colour: game_overrides.<entry>.engine.ponder"),
    _bl("engines.<name>.silence_stderr", None, "no engine process: the built-in engine logs through the bot's log"),
    _bl("engines.<name>.move_overhead_multiplier", "timeman.learn_overhead",
        "bot games measure the real overhead on lichess's clock instead of a multiplier"),
    _bl("engines.<name>.uci_options", "engine.threads, engine.nn_cache_size, engine.search",
        "an external engine's options: as lichess-bot's uci_options"),
    _bl("engines.<name>.limits", "game_overrides", "time, depth, nodes per move: the time manager decides; "
        "per speed and colour game_overrides.<entry>.timeman and engine.strength"),
    _bl("engines.<speed_colour>", "game_overrides",
        "an engine per speed, colour, opponent, mode: entries of game_overrides (one network per process)"),
    _bl("syzygy.<variant>.enabled", "tablebases.syzygy", "standard chess only: the engine plays no other variant"),
    _bl("syzygy.<variant>.paths", "tablebases.syzygy", "lichess-bot's and our key"),
    _bl("syzygy.<variant>.max_pieces", "tablebases.max_pieces", "the same"),
    _bl("syzygy.<variant>.instant_play", "tablebases.root_probe", "our name"),
    _bl("gaviota.enabled", "tablebases.gaviota.enabled", "section tablebases"),
    _bl("gaviota.paths", "tablebases.gaviota.paths", "section tablebases"),
    _bl("gaviota.max_pieces", "tablebases.gaviota.max_pieces", "section tablebases"),
    _bl("opening_books.enabled", "book.enabled", "lichess-bot's section book"),
    _bl("opening_books.priority", "book.priority", "lichess-bot's section book"),
    _bl("opening_books.books.<name>.selection", "book.selection", "per speed and colour: game_overrides"),
    _bl("opening_books.books.<name>.names", "book.paths", "files named in place, per variant; per speed and "
        "colour: game_overrides.<entry>.book.paths"),
    _bl("opening_books.books.<name>.max_depth", "book.max_depth", "full moves here, half moves in BotLi"),
    _bl("opening_books.books.<name>.max_moves", "book.max_moves", None),
    _bl("opening_books.books.<name>.allow_repetitions", "book.allow_repetitions", "the same"),
    _bl("books.<name>", "book.paths", "the files are named in book.paths"),
    _bl("online_moves.<source>.priority", "online_moves.chessdb_book.priority", "each of lichess-bot's online "
        "books: chessdb_book, lichess_cloud_analysis, lichess_opening_explorer"),
    _bl("online_moves.<source>.only_without_book", "online_moves.chessdb_book.only_without_book",
        "each of lichess-bot's online books"),
    _bl("online_moves.<source>.trust_eval", "online_moves.lichess_cloud_analysis.trust_eval",
        "cloud eval and chessdb_book"),
    _bl("online_moves.<source>.use_for_variants", "challenge.variants",
        "the engine plays standard, chess960 and fromPosition only"),
    _bl("online_moves.<source>.allow_repetitions", "online_moves.lichess_opening_explorer.allow_repetitions",
        "each of lichess-bot's online books"),
    _bl("online_moves.<source>.enabled", "online_moves", "lichess-bot's sources: chessdb_book, "
        "lichess_cloud_analysis, lichess_opening_explorer, online_egtb .enabled"),
    _bl("online_moves.<source>.min_time", "online_moves", "each source's min_time (lichess-bot's)"),
    _bl("online_moves.<source>.timeout", "online_moves.timeout", "one for every source"),
    _bl("online_moves.<source>.max_depth", "online_moves.max_depth", "one for the online books, full moves"),
    _bl("online_moves.<source>.max_moves", "online_moves.max_out_of_book_moves", "lichess-bot's rule"),
    _bl("online_moves.opening_explorer.player", "online_moves.lichess_opening_explorer.player_name",
        "with source player (or masters)"),
    _bl("online_moves.opening_explorer.min_games", "online_moves.lichess_opening_explorer.min_games", "the same"),
    _bl("online_moves.opening_explorer.selection", "online_moves.lichess_opening_explorer.sort",
        "winrate or games_played (lichess-bot's)"),
    _bl("online_moves.opening_explorer.only_with_wins", "online_moves.lichess_opening_explorer.only_with_wins",
        "lichess-bot's section name"),
    _bl("online_moves.opening_explorer.anti", "online_moves.lichess_opening_explorer.anti",
        "lichess-bot's section name; with source player"),
    _bl("online_moves.lichess_cloud.min_eval_depth", "online_moves.lichess_cloud_analysis.min_depth", "the same"),
    _bl("online_moves.chessdb.best_move", "online_moves.chessdb_book.move_quality", "best"),
    _bl("offer_draw.enabled", "draw_or_resign.offer_draw_enabled", "lichess-bot's name"),
    _bl("offer_draw.score", "draw_or_resign.offer_draw_score", "lichess-bot's name"),
    _bl("offer_draw.consecutive_moves", "draw_or_resign.offer_draw_moves", "lichess-bot's name"),
    _bl("offer_draw.min_game_length", "draw_or_resign.offer_draw_min_game_length", "prefixed in draw_or_resign"),
    _bl("offer_draw.against_humans", "draw_or_resign.offer_draw_against_humans", "prefixed in draw_or_resign"),
    _bl("offer_draw.min_rating", "draw_or_resign.offer_draw_min_rating", "prefixed in draw_or_resign"),
    _bl("resign.enabled", "draw_or_resign.resign_enabled", "lichess-bot's name"),
    _bl("resign.score", "draw_or_resign.resign_score", "lichess-bot's name"),
    _bl("resign.consecutive_moves", "draw_or_resign.resign_moves", "lichess-bot's name"),
    _bl("resign.against_humans", "draw_or_resign.resign_against_humans", "prefixed in draw_or_resign"),
    _bl("resign.min_rating", "draw_or_resign.resign_min_rating", "prefixed in draw_or_resign"),
    _bl("challenge.concurrency", "challenge.concurrency", None),
    _bl("challenge.max_takebacks", "max_takebacks_accepted", "lichess-bot's name, for humans and bots"),
    _bl("challenge.<human|bot>", "challenge.human, challenge.bot", "the keys of challenge, for that kind of "
        "challenger"),
    _bl("challenge.<human|bot>.bullet_with_increment_only", "challenge.bullet_requires_increment",
        "lichess-bot's name"),
    _bl("challenge.<human|bot>.min_increment", "challenge.min_increment", "lichess-bot's name"),
    _bl("challenge.<human|bot>.max_increment", "challenge.max_increment", "lichess-bot's name"),
    _bl("challenge.<human|bot>.min_initial", "challenge.min_base", "lichess-bot's name"),
    _bl("challenge.<human|bot>.max_initial", "challenge.max_base", "lichess-bot's name"),
    _bl("challenge.<human|bot>.max_estimated_game_duration", "challenge.time_controls",
        "lichess's speeds are its estimated duration (limit + 40 x increment)"),
    _bl("challenge.<human|bot>.variants", "challenge.variants", "the same"),
    _bl("challenge.<human|bot>.time_controls", "challenge.time_controls", "speeds (no initial+increment form)"),
    _bl("challenge.<human|bot>.modes", "challenge.modes", "the same"),
    _bl("matchmaking.delay", "matchmaking.challenge_timeout", "minutes idle (lichess-bot's)"),
    _bl("matchmaking.timeout", "matchmaking.challenge_expiry", "seconds"),
    _bl("matchmaking.selection", "matchmaking.selection", None),
    _bl("matchmaking.types.<name>", "matchmaking.overrides", "lichess-bot's named alternatives"),
    _bl("matchmaking.types.<name>.tc", "matchmaking.overrides.<name>.challenge_initial_time",
        "with challenge_increment (seconds)"),
    _bl("matchmaking.types.<name>.rated", "matchmaking.overrides.<name>.challenge_mode", "rated or casual"),
    _bl("matchmaking.types.<name>.variant", "matchmaking.overrides.<name>.challenge_variant", "the same"),
    _bl("matchmaking.types.<name>.weight", "matchmaking.overrides.<name>.weight", None),
    _bl("matchmaking.types.<name>.multiplier", "matchmaking.decline_hours", "how long a decline keeps a bot out"),
    _bl("matchmaking.types.<name>.min_rating_diff", "matchmaking.overrides.<name>.opponent_min_rating",
        "absolute ratings, or opponent_rating_difference"),
    _bl("matchmaking.types.<name>.max_rating_diff", "matchmaking.overrides.<name>.opponent_rating_difference",
        "lichess-bot's name"),
    _bl("matchmaking.types.<name>.target_rating_diff", "matchmaking.overrides.<name>.target_rating_diff", None),
    _bl("messages.greeting", "greeting.hello", "lichess-bot's name"),
    _bl("messages.goodbye", "greeting.goodbye", "lichess-bot's name"),
    _bl("messages.greeting_spectators", "greeting.hello_spectators", "lichess-bot's name"),
    _bl("messages.goodbye_spectators", "greeting.goodbye_spectators", "lichess-bot's name"),
    _bl("messages.{engine}, {cpu}, {ram}", "greeting.hello", "the same placeholders in every greeting"),
    _bl("whitelist", "challenge.always_accept_list", "our name"),
    _bl("blacklist", "challenge.block_list", "lichess-bot's name (matchmaking.include_challenge_block_list: not "
        "challenged either)"),
    _bl("online_blacklists", "challenge.online_block_list", "lichess-bot's name"),
    _bl("console: blacklist USER", "challenge.block_list", "operator command block USER [MINUTES] for a while "
        "(docs/bot.md, operator commands); the list for good"),
    _bl("console: whitelist USER", "challenge.always_accept_list", "operator command allow USER [MINUTES] for a "
        "while; the list for good"),
    _bl("console: reset PERF_TYPE", "matchmaking.decline_file", "operator command reset [USER] forgets the "
        "declines kept there"),
    _bl("console: clear", None, "operator command clear: drops the challenges create has not sent, and ends the "
        "blocks and allows given by command"),
    _bl("console: create COUNT USER", None, "operator command create COUNT USER [3+2|1d] [rated|casual]: the "
        "same (a command, not a config key)"),
)


def _models(ann: Any) -> list[type[BaseModel]]:
    """The pydantic models inside an annotation (``X | None``, ``dict[str, X]``)."""
    if isinstance(ann, type) and issubclass(ann, BaseModel):
        return [ann]
    return [m for a in getattr(ann, "__args__", ()) for m in _models(a)]


def field_of(path: str) -> Any:
    """The pydantic field of our dotted ``path``; under a mapping field (``game_overrides``, ``book.paths``,
    ``matchmaking.overrides``) the next segment is a name of the user's. Raises KeyError naming the first
    segment that is not a key of the config."""
    model: Any = BotConfig
    info: Any = None
    names = False  # the next segment is a key of a mapping
    for part in path.split("."):
        if names:
            names = False
            continue
        if model is None or part not in model.model_fields:
            raise KeyError(f"{path}: {part}")
        info = model.model_fields[part]
        ann = info.annotation
        names = getattr(ann, "__origin__", None) is dict
        inner = _models(ann)
        model = inner[0] if inner else None
    return info


def _status(row: Row) -> str:
    if row.ours is None and row.why is None:
        return "**missing**"
    if row.why is None:
        return "same"
    return f"ours, differently ({row.why})"


def _ours(row: Row) -> str:
    return "—" if row.ours is None else ", ".join(f"`{p.strip()}`" for p in row.ours.split(","))


def render() -> str:
    """docs/migrating.md."""
    out = ["# Coming from lichess-bot or BotLi", "",
           "Every option of lichess-bot's and BotLi's `config.yml.default` and where it lives here. "
           "`lichessbot migrate-config` converts a lichess-bot file (it lists each translation and each dropped "
           "key with its reason); a BotLi file is converted by hand with this table.", "",
           "Generated by `python -m lichessbot.bot.setup.table` from lichessbot/bot/setup/table.py and the "
           "config model; tests/bot/test_migrating_table.py fails when it drifts.", ""]
    for source in ("lichess-bot", "BotLi"):
        out += [f"## {source}", "", f"| {source} | ours | status |", "|---|---|---|"]
        for row in ROWS:
            if row.source == source:
                out.append(f"| `{row.key}` | {_ours(row)} | {_status(row)} |")
        out.append("")
    return "\n".join(out)


if __name__ == "__main__":
    sys.stdout.write(render())
