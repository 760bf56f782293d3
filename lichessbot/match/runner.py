"""Run a whole match: the schedule (each opening twice, colours swapped), concurrent games, the PGN."""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import chess.pgn

from lichessbot.match.engine_game import EnginePlayer, play_game
from lichessbot.match.openings import Opening
from lichessbot.match.types import GameRecord, MatchConfig, MatchError, MatchResult

__all__ = ["run_match", "schedule"]


def schedule(config: MatchConfig) -> list[tuple[int, Opening, bool]]:
    """The games in order: (number from 1, opening, first engine has white). Game 2i+1 plays opening i
    (cycled) with ``first`` as white, game 2i+2 the same opening with the colours swapped."""
    openings = config.openings or [Opening()]
    return [(k + 1, openings[(k // 2) % len(openings)], k % 2 == 0) for k in range(config.games)]


def run_match(
    config: MatchConfig,
    on_game: Callable[[GameRecord, MatchResult], None] | None = None,
    stop: threading.Event | None = None,
    on_move: Callable[[int, chess.pgn.Game], None] | None = None,
) -> MatchResult:
    """Play the match and return its result (games in schedule order).

    Each of the ``config.concurrency`` workers owns one process of each engine and plays its games one
    after another; a crashed or hung engine loses its game and is restarted for the next one. Finished
    games are appended to ``config.pgn_path`` (truncated first) and reported to ``on_game(record,
    result_so_far)``, called from worker threads one at a time. Setting ``stop`` ends the match after the
    games in progress. ``on_move(number, game)`` sees each game's PGN after every move and at its end
    (from the worker threads, concurrently for concurrent games; e.g.
    :meth:`lichessbot.match.broadcast.BroadcastPusher.update`).

    Raises:
        MatchError: an engine cannot be started (or restarted), an option is refused, an opening is bad.
    """
    result = MatchResult(config.first.name, config.second.name)
    jobs = schedule(config)
    lock = threading.Lock()
    stop = stop or threading.Event()
    pgn_file = None
    if config.pgn_path:
        try:
            Path(config.pgn_path).parent.mkdir(parents=True, exist_ok=True)
            pgn_file = open(config.pgn_path, "w", encoding="utf-8")  # noqa: SIM115 - closed in finally
        except OSError as err:
            raise MatchError(f"PGN file {config.pgn_path}: cannot be written ({err.strerror})") from None
    tc_first, tc_second = config.tc_of(config.first), config.tc_of(config.second)
    restarts = {config.first.name: 0, config.second.name: 0}
    errors: list[BaseException] = []

    def worker() -> None:
        first = EnginePlayer(config.first, config.startup_timeout)
        second = EnginePlayer(config.second, config.startup_timeout)
        try:
            first.start()
            second.start()
            while not stop.is_set():
                with lock:
                    if not jobs:
                        return
                    number, opening, first_white = jobs.pop(0)
                white, black = (first, second) if first_white else (second, first)
                tcs = (tc_first, tc_second) if first_white else (tc_second, tc_first)
                record = play_game(
                    number, opening, white, black, tcs, first_white=first_white, latency=config.latency,
                    adjudication=config.adjudication, move_timeout_margin=config.move_timeout_margin,
                    event=config.event,
                    on_move=None if on_move is None else functools.partial(on_move, number),
                )
                with lock:
                    result.games.append(record)
                    if pgn_file is not None:
                        print(record.pgn, file=pgn_file, end="\n\n", flush=True)
                    if on_game is not None:
                        on_game(record, result)
        except BaseException as err:  # noqa: BLE001 - handed to the caller's thread below
            errors.append(err)
            stop.set()
        finally:
            with lock:
                restarts[config.first.name] += first.restarts
                restarts[config.second.name] += second.restarts
            first.close()
            second.close()

    try:
        with ThreadPoolExecutor(max_workers=config.concurrency, thread_name_prefix="match") as pool:
            for _ in range(min(config.concurrency, len(jobs))):
                pool.submit(worker)
    except KeyboardInterrupt:
        stop.set()
        raise
    finally:
        if pgn_file is not None:
            pgn_file.close()
    if errors:
        raise errors[0]
    result.games.sort(key=lambda g: g.number)
    result.restarts = restarts
    return result
