"""Play one game against a bot through lichess's Board API with berserk, as a lichess user's script does:

    python scripts/board_game.py [URL] [--token TOKEN] [--clock 180+2] [--color white] [--timeout 300]

URL (default http://127.0.0.1:8080, ``lichessbot play --local``'s default) is a server speaking lichess's
Board API, used as a lichess user's script does: the bot is the first of ``GET /api/bot/online``;
``GET /api/stream/event`` is opened, then ``POST /api/challenge/{bot}`` with the clock and colour; when the
event stream says ``gameStart`` (the bot accepted), the game's state comes from
``GET /api/board/game/stream/{id}`` and our moves (the first legal move in UCI order, at once) go by
``POST /api/board/game/{id}/move/{uci}``. Prints the moves and the result; exit
status 0 when the game ended (any result), 1 otherwise. Needs berserk and python-chess (lichessbot's own
dependencies), not lichessbot itself.
"""

from __future__ import annotations

import argparse
import sys
import threading
import time

import berserk
import chess

END = {"mate", "resign", "stalemate", "timeout", "draw", "outoftime", "aborted", "noStart", "insufficientMaterial",
       "variantEnd", "cheat", "unknownFinish"}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("url", nargs="?", default="http://127.0.0.1:8080")
    p.add_argument("--token", default="lip_any", help="the token (a local server takes any)")
    p.add_argument("--clock", default="180+2", help="base+increment in seconds (default 180+2: blitz, the fastest "
                   "lila lets a Board API game be, lila modules/game Game.isBoardCompatible)")
    p.add_argument("--color", default="white", choices=("white", "black"))
    p.add_argument("--timeout", type=float, default=300.0, help="seconds before giving up (default 300)")
    args = p.parse_args(argv)
    base, _, inc = args.clock.partition("+")
    client = berserk.Client(session=berserk.TokenSession(args.token), base_url=args.url.rstrip("/"))
    bots = list(client.bots.get_online_bots(limit=1))
    if not bots:
        print(f"no bot online at {args.url}", file=sys.stderr)
        return 1
    bot = bots[0]["username"]
    started = threading.Event()
    game_ids: set[str] = set()

    def events() -> None:  # the account's event stream: gameStart once the bot accepts our challenge
        for event in client.board.stream_incoming_events():
            if event.get("type") == "gameStart":
                game_ids.add(str(event.get("game", {}).get("gameId") or event.get("game", {}).get("id")))
                started.set()

    threading.Thread(target=events, daemon=True).start()
    answer = client.challenges.create(bot, rated=False, clock_limit=int(base), clock_increment=int(inc or 0),
                                      color=args.color)
    game_id = (answer.get("challenge") or answer)["id"]
    print(f"challenged {bot} at {args.url}: {game_id}, {args.clock}, we play {args.color}")
    until = time.monotonic() + min(60.0, args.timeout)
    while game_id not in game_ids and time.monotonic() < until:
        started.wait(0.2)
    if game_id not in game_ids:
        print(f"{bot} did not start game {game_id} (started: {sorted(game_ids)})", file=sys.stderr)
        return 1
    done = threading.Event()
    result: dict[str, str] = {}

    def play() -> None:
        try:
            follow()
        except Exception as err:  # noqa: BLE001 - said on stderr, and the game counts as not ended
            result["error"] = f"{type(err).__name__}: {err}"
        done.set()

    def follow() -> None:
        for event in client.board.stream_game_state(game_id):
            state = event.get("state", event) if event.get("type") == "gameFull" else event
            if state.get("type") not in ("gameState", None):
                continue
            board = chess.Board()
            for uci in state.get("moves", "").split():
                board.push_uci(uci)
            if state.get("status") in END or board.is_game_over():
                result.update(status=str(state.get("status")), winner=str(state.get("winner", "none")),
                              moves=str(len(board.move_stack)))
                return
            if (board.turn == chess.WHITE) == (args.color == "white"):
                move = min(board.legal_moves, key=lambda m: m.uci())
                client.board.make_move(game_id, move.uci())

    threading.Thread(target=play, daemon=True).start()
    if not done.wait(args.timeout) or "status" not in result:
        print(f"game {game_id} did not end within {args.timeout:g} s {result.get('error', '')}", file=sys.stderr)
        return 1
    print(f"game {game_id} over: {result['status']}, winner {result['winner']}, {result['moves']} plies")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
