"""Contract tests (issue 40): every example payload of lichess-org/api (doc/specs/examples and the schemas' and
endpoints' ``example``, copied into tests/data/api_examples by ``python -m devtools.api_examples``) for the
endpoints the bot uses, replayed through our reader: served over HTTP and read by the client and the streams, and
the online sources' answers read by their parsers. A field we do not know never breaks anything (every object
of every payload gets one more); a field we need and miss is a clear error naming it."""

from __future__ import annotations

import copy
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import chess
import pytest

from lichessbot.config.online import CloudAnalysisConfig, OnlineEgtbConfig, OpeningExplorerConfig
from lichessbot.lichess.client import ClientSettings, LichessClient
from lichessbot.lichess.events import (
    ChallengeCanceled,
    ChallengeDeclined,
    ChallengeEvent,
    ChatLine,
    Connected,
    DeclineReason,
    GameFinish,
    GameFull,
    GameStart,
    GameState,
    MalformedEvent,
    OpponentGone,
    parse_event,
    parse_game_event,
)
from lichessbot.lichess.streams import event_stream, game_stream
from lichessbot.online.cloud import CloudAnalysis
from lichessbot.online.egtb import LichessTablebase
from lichessbot.online.explorer import OpeningExplorer
from lichessbot.online.http import Answer

EXAMPLES = Path(__file__).resolve().parents[1] / "data" / "api_examples"
#: The token the oauth example knows (its answer is keyed by the tokens asked about).
TOKEN = "lip_jose"
STREAM = ["stream-challenge", "stream-challengeCanceled", "stream-challengeDeclined", "stream-gameStart",
          "stream-gameStart-ai", "stream-gameFinish", "stream-gameFinish-ai"]
GAME_STREAM = ["GameFullEvent", "GameStateEvent", "ChatLineEvent", "OpponentGoneEvent"]


def example(name: str) -> Any:
    return json.loads((EXAMPLES / f"{name}.json").read_text(encoding="utf-8"))


def with_unknown_fields(data: Any) -> Any:
    """``data`` with a field lichess may add one day in every object (a number, an object and a list)."""
    if isinstance(data, dict):
        out = {k: with_unknown_fields(v) for k, v in data.items()}
        out.update(zzFutureNumber=7, zzFutureObject={"nested": [1, {"x": None}]}, zzFutureList=["a", 2])
        return out
    if isinstance(data, list):
        return [with_unknown_fields(v) for v in data]
    return data


class ApiServer:
    """lila's answers of the endpoints the bot uses, each an example payload (``mutate`` rewrites them all)."""

    def __init__(self, mutate=lambda d: d) -> None:
        self.mutate = mutate
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                pass

            def _answer(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                if length:
                    self.rfile.read(length)
                path = self.path.split("?")[0]
                ndjson: list[Any] | None = None
                body: Any = None
                if path == "/api/account":
                    body = example("account-getMyProfile")
                elif path == "/api/account/playing":
                    body = example("account-playing")
                elif path == "/api/bot/online":
                    ndjson = [example("bot-getOnlineBots")]
                elif path.startswith("/api/team/"):
                    ndjson = [example("arenas-getTeamArenaTournaments")]
                elif path.startswith("/api/tournament/"):
                    body = example("arenas-getArenaById")
                elif path == "/api/token/test":
                    body = example("oauth-testMultipleOauthTokens")
                elif path.startswith("/game/export/"):
                    body = example("games-exportOneGame")
                elif path.startswith("/api/challenge/") and path.endswith(("/accept", "/decline", "/cancel")):
                    body = example("challenges-" + path.rsplit("/", 1)[1] + "Challenge")
                elif path.startswith("/api/challenge/"):
                    body = example("challenges-createChallenge")
                elif path == "/api/stream/event":
                    ndjson = [example(n) for n in STREAM]
                elif path.startswith("/api/bot/game/stream/"):
                    ndjson = [example(n) for n in GAME_STREAM]
                else:
                    body = {"error": "Not found"}
                if ndjson is not None:
                    data = b"".join(json.dumps(server.mutate(x)).encode() + b"\n" for x in ndjson)
                    ctype = "application/x-ndjson"
                else:
                    data, ctype = json.dumps(server.mutate(body)).encode(), "application/json"
                self.send_response(404 if ndjson is None and body == {"error": "Not found"} else 200)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(data)))
                self.send_header("Connection", "close")
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = _answer  # noqa: N815

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def __enter__(self) -> ApiServer:
        threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def _read_all(mutate=lambda d: d) -> dict[str, Any]:
    """Every client call and stream of the bot, against the examples; what each gave."""
    with ApiServer(mutate) as api:
        client = LichessClient(TOKEN, api.url, ClientSettings(retries=0, stream_read_timeout=2.0))
        try:
            out: dict[str, Any] = {
                "account": client.account(), "playing": client.ongoing_games(), "online": client.online_bots(),
                "team_arenas": client.team_arenas("some-team"), "arena": client.arena("may24lta"),
                "scopes": client.token_scopes(), "over": client.game_over("q7ZvsdUF"),
                "created": client.create_challenge("mary", {"rated": "false", "days": "3"}),
            }
            client.accept_challenge("uGK4MHaQ")
            client.decline_challenge("uGK4MHaQ", DeclineReason.LATER)
            client.cancel_challenge("uGK4MHaQ")
            for name, stream in (("events", event_stream(client, keep_going=lambda: False)),
                                 ("game", game_stream(client, "BEOucQJo", keep_going=lambda: False))):
                out[name] = [e for e in stream if not isinstance(e, Connected)]
        finally:
            client.close()
    return out


def test_every_example_of_the_endpoints_we_use_is_read():
    got = _read_all()
    account = got["account"]
    assert (account.id, account.username) == ("bobby", "Bobby") and account.perfs
    assert [g.game_id for g in got["playing"]] == ["rCRw1AuO"] and got["playing"][0].correspondence
    assert got["playing"][0].is_my_turn is False and got["playing"][0].opponent.username == "Philippe"
    assert got["online"][0].id == "bernstein-2ply" and got["online"][0].is_bot
    team = got["team_arenas"][0]
    assert (team.id, team.status, team.bots_allowed) == ("LojvlQOo", 30, None)  # a listing never says botsAllowed
    assert got["arena"].id == "may24lta" and got["arena"].status == 30
    assert got["scopes"] is not None and "bot:play" in got["scopes"]
    assert got["over"] is True  # status "draw"
    assert (got["created"].id, got["created"].challenger_name) == ("uGK4MHaQ", "Bobby")
    kinds = [type(e) for e in got["events"]]
    assert kinds == [ChallengeEvent, ChallengeCanceled, ChallengeDeclined, GameStart, GameStart, GameFinish,
                     GameFinish]
    assert got["events"][3].game.game_id == "0FgNPGRz" and got["events"][3].game.is_my_turn
    assert got["events"][2].challenge.decline_reason_key is not None
    full, state, chat, gone = got["game"]
    assert isinstance(full, GameFull) and full.id == "BEOucQJo" and full.state.moves == "d2d3"
    assert full.clock is not None and full.clock.initial == 900000 and full.black.name == "Mary"
    assert isinstance(state, GameState) and state.moves and state.status
    assert isinstance(chat, ChatLine) and (chat.room, chat.username) == ("player", "thibault")
    assert isinstance(gone, OpponentGone) and gone.gone and gone.claim_win_in_seconds == 8


@pytest.mark.slow
def test_fields_we_do_not_know_change_nothing():
    assert _read_all(with_unknown_fields) == _read_all()


@pytest.mark.parametrize(("name", "path", "field"), [
    ("GameStateEvent", (), "moves"),
    ("GameStateEvent", (), "wtime"),
    ("GameStateEvent", (), "status"),
    ("GameFullEvent", (), "state"),
    ("GameFullEvent", ("state",), "moves"),
    ("GameFullEvent", (), "white"),
    ("ChatLineEvent", (), "text"),
    ("OpponentGoneEvent", (), "gone"),
])
def test_a_field_we_need_and_miss_is_a_clear_error_naming_it(name, path, field):
    data = copy.deepcopy(example(name))
    target = data
    for key in path:
        target = target[key]
    del target[field]
    with pytest.raises(MalformedEvent, match=rf"without {field}$"):
        parse_game_event(data)


@pytest.mark.parametrize(("name", "field", "words"), [
    ("stream-gameStart", "game", "a game without an id"),
    ("stream-challenge", "challenge", "a challenge without an id"),
])
def test_an_event_without_what_names_it_is_a_clear_error(name, field, words):
    data = copy.deepcopy(example(name))
    data[field].pop("id", None)
    data[field].pop("gameId", None)
    with pytest.raises(MalformedEvent, match=words):
        parse_event(data)


def test_the_online_sources_read_their_examples_unknown_fields_and_all():
    for mutate in (lambda d: d, with_unknown_fields):
        for db in ("masters", "lichess", "player"):
            source = OpeningExplorer(OpeningExplorerConfig(source=db))
            rows = source.parse(chess.Board(), Answer(200, json.dumps(mutate(example(f"openingExplorer-{db}")))))
            assert rows and all(r.games >= 0 and len(r.uci) >= 4 for r in rows)
        cloud = example("CloudEval")
        board = chess.Board(cloud["fen"] + " w KQkq - 3 3")  # the example writes the placement alone
        parsed = CloudAnalysis(CloudAnalysisConfig()).parse(board, Answer(200, json.dumps(mutate(cloud))))
        assert parsed is not None and parsed.depth == cloud["depth"] and parsed.lines
        tables = LichessTablebase(OnlineEgtbConfig()).parse(
            chess.Board(), Answer(200, json.dumps(mutate(example("tablebase-lookupStandard")))))
        assert tables.moves and tables.moves[0].wdl == 2  # its first move leaves the opponent lost
