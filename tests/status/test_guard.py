"""The status page obeys only its operator (issue 48): the real server on 127.0.0.1 (a free port) over real HTTP
(``http.client`` and raw sockets, so every header is ours to set), and a real browser (Debian's chromium) on a page
from another origin that tries to command the bot."""

from __future__ import annotations

import functools
import http.client
import http.server
import json
import socket
import threading
import time

import pytest

from lichessbot.hosts import host_names, split_host
from lichessbot.status import StatusHub
from lichessbot.status.guard import TOKEN_HEADER, same_origin
from lichessbot.status.server import MAX_COMMAND_BODY, StatusServer
from tests.browser import Browser

CHROMIUM = Browser.find()
PROXY = "bot.example.org"


class Recorder:
    """The commands callable of a server under test: records each line it is asked to run."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def __call__(self, line: str, origin: str) -> str:
        self.lines.append(line)
        return f"ran {line}"


@pytest.fixture
def served():
    ran = Recorder()
    hub = StatusHub()
    hub.publish_service({"username": "lichessbot", "engine": "tiny"})
    with StatusServer(hub, "127.0.0.1", 0, commands=ran, allowed_hosts=[PROXY]) as server:
        yield server, ran


def _request(server: StatusServer, method: str, path: str, body: bytes | None = None,
             headers: dict[str, str] | None = None) -> tuple[int, http.client.HTTPResponse, bytes]:
    """(status, response, body) of one request; ``headers`` as given (Host included: http.client adds none
    when one is there)."""
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    try:
        conn.request(method, path, body=body, headers={"Host": f"127.0.0.1:{server.port}", **(headers or {})})
        r = conn.getresponse()
        return r.status, r, r.read()
    finally:
        conn.close()


def _command(server: StatusServer, body: bytes = b'{"command": "status"}', **headers: str) -> tuple[int, dict]:
    """POST /api/command as the server's own page sends it, with ``headers`` changed (a None-like "" drops one)."""
    sent = {"Content-Type": "application/json", TOKEN_HEADER: server.token, "Origin": server.url,
            "Sec-Fetch-Site": "same-origin"}
    sent.update({k.replace("_", "-"): v for k, v in headers.items()})
    status, _, raw = _request(server, "POST", "/api/command", body, {k: v for k, v in sent.items() if v})
    return status, json.loads(raw)


def test_the_operators_own_request_runs_the_command(served):
    server, ran = served
    assert _command(server) == (200, {"answer": "ran status"})
    assert _command(server, Origin="", Sec_Fetch_Site="")[0] == 200  # curl sends neither
    assert ran.lines == ["status", "status"]


def test_only_exactly_application_json_is_taken(served):
    server, ran = served
    for ctype in ("text/plain; application/json", "text/plain", "application/x-www-form-urlencoded",
                  "multipart/form-data; boundary=x", "application/jsonx", "application/json-patch+json", ""):
        status, body = _command(server, Content_Type=ctype)
        assert status == 415 and "JSON" in body["error"], ctype
    for ctype in ("application/json; charset=utf-8", "Application/JSON"):
        assert _command(server, Content_Type=ctype)[0] == 200, ctype
    assert len(ran.lines) == 2


def test_a_missing_or_wrong_token_is_refused(served):
    server, ran = served
    other = StatusServer(StatusHub(), "127.0.0.1", 0)  # another run's token
    for token in ("", "x", server.token[:-1], server.token + "x", other.token, "é" * 10):
        status, body = _command(server, **{TOKEN_HEADER.replace("-", "_"): token})
        assert status == 403 and TOKEN_HEADER in body["error"], token
    assert other.token != server.token and len(server.token) >= 40
    assert ran.lines == []


def test_a_request_from_another_origin_or_site_is_refused(served):
    server, ran = served
    port = server.port
    for origin in ("http://attacker.example", f"http://attacker.example:{port}", f"http://127.0.0.1:{port + 1}",
                   f"http://localhost:{port}", "http://127.0.0.1", "null", f"http://127.0.0.1:{port}/x", "junk"):
        status, body = _command(server, Origin=origin)
        assert (status, body["error"]) == (403, "request from another origin"), origin
    for site in ("cross-site", "same-site"):
        assert _command(server, Sec_Fetch_Site=site) == (403, {"error": "request from another site"})
    assert ran.lines == []
    assert _command(server, Origin=f"http://127.0.0.1:{port}")[0] == 200


def test_a_foreign_host_is_refused_on_every_path_get_included(served):
    server, ran = served
    for method, path in (("GET", "/"), ("GET", "/games/abcd1234"), ("GET", "/api/status"), ("GET", "/api/health"),
                         ("GET", "/api/events"), ("GET", "/api/games/x/board.svg"), ("HEAD", "/api/status"),
                         ("POST", "/api/command")):
        for host in ("attacker.example", f"attacker.example:{server.port}", "192.168.1.5", "[2001:db8::1]:80",
                     f"127.0.0.1.attacker.example:{server.port}", "localhost.attacker.example"):
            headers = {"Host": host, "Content-Type": "application/json", TOKEN_HEADER: server.token}
            body = b'{"command": "quit now"}' if method == "POST" else None
            status, r, body = _request(server, method, path, body, headers)
            assert status == 421, (method, path, host)
            if method != "HEAD":
                assert r.headers["Content-Type"] == "application/json" and "allowed_hosts" in json.loads(body)["error"]
    for host in ("", "a b", "[::1", "::1", f"127.0.0.1:{server.port}:1", "127.0.0.1:http", "127.0.0.1:99999"):
        status, _, body = _request(server, "GET", "/api/status", headers={"Host": host})
        assert status == 400 and json.loads(body) == {"error": "missing or malformed Host header"}, host
    got = _raw(server.port, b"GET /api/status HTTP/1.0\r\n\r\n", [])  # HTTP/1.0 may leave Host out
    assert got.startswith(b"HTTP/1.1 400 ") and b"missing or malformed Host header" in got
    assert ran.lines == []


def test_loopback_names_the_bind_address_and_allowed_hosts_are_admitted(served):
    server, ran = served
    for host in (f"127.0.0.1:{server.port}", "127.0.0.1", f"localhost:{server.port}", "LOCALHOST.", "127.9.9.9",
                 f"[::1]:{server.port}", PROXY, f"{PROXY}:443", "Bot.Example.Org"):
        status, _, body = _request(server, "GET", "/api/status", headers={"Host": host})
        assert status == 200 and json.loads(body)["service"]["username"] == "lichessbot", host
    # a reverse proxy that terminates TLS and passes Host on: the browser's origin is https://bot.example.org
    status, _, body = _request(server, "POST", "/api/command", b'{"command": "help"}', {
        "Host": PROXY, "Origin": f"https://{PROXY}", "Content-Type": "application/json", TOKEN_HEADER: server.token})
    assert (status, json.loads(body)) == (200, {"answer": "ran help"})
    assert host_names("192.168.1.5") == {"192.168.1.5"} and host_names("::1", ["A.example."]) == {"::1", "a.example"}
    assert host_names("0.0.0.0") == host_names("::") == frozenset()


def test_host_and_origin_parsing():
    assert split_host("[::1]:8080") == ("::1", 8080) and split_host("[::1]") == ("::1", None)
    assert split_host("LocalHost.:80") == ("localhost", 80)
    assert split_host("bot.example.org") == ("bot.example.org", None)
    for bad in ("[::1", "[::1]x", "[zz]:1", "::1", "a:b", "a:", "a:123456", "", ":80", "a/b", "a@b", "[::1]:"):
        assert split_host(bad) is None, bad
    assert same_origin("http://127.0.0.1:8080", "127.0.0.1:8080") and same_origin("https://a.org", "a.org")
    assert same_origin("http://a.org:80", "a.org") and same_origin("https://a.org", "a.org:443")
    assert not same_origin("http://a.org:8080", "a.org") and not same_origin("http://b.org", "a.org")
    assert not same_origin("null", "a.org") and not same_origin("ftp://a.org", "a.org")
    assert not same_origin("http://a.org:x", "a.org") and not same_origin("http://[::1]:80", "127.0.0.1")


def _raw(port: int, head: bytes, body_parts: list[bytes]) -> bytes:
    """Send ``head`` then each part (stopping when the server closes) and return what came back."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(head)
        try:
            for part in body_parts:
                s.sendall(part)
        except (BrokenPipeError, ConnectionResetError):
            pass
        s.settimeout(5)
        got = b""
        try:
            while b"\r\n\r\n" not in got or not got.rstrip().endswith(b"}"):
                chunk = s.recv(65536)
                if not chunk:
                    break
                got += chunk
        except (TimeoutError, ConnectionResetError):
            pass
        return got


def _head(server: StatusServer, length_or_chunked: str) -> bytes:
    return (f"POST /api/command HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\nContent-Type: application/json\r\n"
            f"{TOKEN_HEADER}: {server.token}\r\n{length_or_chunked}\r\n\r\n").encode()


def test_a_10_mb_body_is_refused_before_it_is_read_and_the_server_lives_on(served):
    server, ran = served
    ten_mb = 10 * 1024 * 1024
    # the length alone is refused: the answer comes before a byte of the body is sent
    got = _raw(server.port, _head(server, f"Content-Length: {ten_mb}"), [])
    assert got.startswith(b"HTTP/1.1 413 ") and b"at most 4096 bytes" in got
    got = _raw(server.port, _head(server, f"Content-Length: {ten_mb}"), [b"[" * ten_mb])  # the whole 10 MB
    assert got.startswith(b"HTTP/1.1 413 ")
    # chunked: no length to check first; refused once the bytes read pass the cap, before the last chunk
    chunk = b"%x\r\n%s\r\n" % (1024, b" " * 1024)
    got = _raw(server.port, _head(server, "Transfer-Encoding: chunked"), [chunk] * (MAX_COMMAND_BODY // 1024 + 2))
    assert got.startswith(b"HTTP/1.1 413 ")
    status, body = _command(server, b'{"command": "%s"}' % (b"x" * 500))  # the largest command still goes
    assert status == 200 and len(ran.lines) == 1
    assert _request(server, "GET", "/api/status")[0] == 200


def test_deep_malformed_and_non_object_json_get_400_and_the_server_lives_on(served):
    server, ran = served
    deep = b"[" * (MAX_COMMAND_BODY - 1)  # within the cap, deeper than the interpreter's recursion limit
    for body in (deep, b'{"command": ' * 300, b"{", b"", b"null", b"[1,2]", b'"status"', b"\xff\xfe{", b"{'a': 1}",
                 b'{"command": 5}', b'{"command": " "}', b'{"command": "%s"}' % (b"x" * 501), b'{"cmd": "status"}'):
        status, answer = _command(server, body)
        assert status == 400 and isinstance(answer["error"], str), body[:20]
    assert _command(server, b"[" * 100_000)[0] == 413  # the 100 000 brackets: over the cap
    assert ran.lines == [] and _command(server)[0] == 200


def test_every_answer_carries_the_security_headers(served):
    server, _ = served
    answers = [_request(server, "GET", path)[1] for path in ("/", "/api/status", "/api/games/x", "/nope",
                                                             "/api/health")]
    answers.append(_request(server, "GET", "/", headers={"Host": "attacker.example"})[1])
    answers.append(_request(server, "POST", "/api/command", b"{}", {"Content-Type": "application/json"})[1])
    for r in answers:
        assert r.headers["X-Frame-Options"] == "DENY" and r.headers["X-Content-Type-Options"] == "nosniff"
        assert r.headers["Referrer-Policy"] == "no-referrer"
        csp = r.headers["Content-Security-Policy"]
        assert "frame-ancestors 'none'" in csp and "base-uri 'none'" in csp and "default-src 'none'" in csp


def test_the_page_carries_a_fresh_nonce_its_policy_and_the_runs_token(served):
    server, _ = served
    nonces = []
    for _ in range(2):
        _, r, raw = _request(server, "GET", "/")
        html, csp = raw.decode(), r.headers["Content-Security-Policy"]
        nonce = csp.split("'nonce-")[1].split("'")[0]
        assert html.count(f'nonce="{nonce}"') == 2 and html.count("<script") == html.count("<style") == 1
        assert f'<meta name="lichessbot-token" content="{server.token}">' in html
        for directive in ("script-src 'nonce-", "connect-src 'self'", "img-src 'self' data:", "form-action 'self'",
                          "frame-ancestors 'none'", "base-uri 'none'"):
            assert directive in csp
        assert "unsafe-eval" not in csp and "script-src 'unsafe-inline'" not in csp
        assert r.headers["Cache-Control"] == "no-store"
        nonces.append(nonce)
    assert nonces[0] != nonces[1] and len(nonces[0]) >= 20


# ---- a real browser --------------------------------------------------------------------------------------------

ATTACK = """<!doctype html><html><body>
<iframe name="sink"></iframe><iframe name="sink2"></iframe>
<form id="plain" method="POST" target="sink" enctype="text/plain" action="%(url)s/api/command">
 <input name='{"command": "quit now", "x": "' value='"}'></form>
<form id="urlenc" method="POST" target="sink2" action="%(url)s/api/command">
 <input name="command" value="quit now"></form>
<script>
window.log = [];
async function attack(){
 const url = "%(url)s/api/command", body = '{"command": "quit now"}';
 for (const ct of ["text/plain; application/json", "text/plain", "application/x-www-form-urlencoded"]) {
  try { await fetch(url, {method: "POST", mode: "no-cors", headers: {"Content-Type": ct}, body});
        window.log.push("no-cors " + ct + ": sent"); }
  catch (e) { window.log.push("no-cors " + ct + ": " + e); } }
 try { await fetch(url, {method: "POST", headers: {"Content-Type": "application/json", "%(header)s": "guess"}, body});
       window.log.push("cors: answered"); }
 catch (e) { window.log.push("cors: " + e); }
 try { const r = await fetch("%(url)s/api/status"); window.log.push("read status: " + r.status); }
 catch (e) { window.log.push("read status: " + e); }
 document.getElementById("plain").submit(); document.getElementById("urlenc").submit();
 await new Promise(r => setTimeout(r, 500));
 window.done = true;
}
attack();
</script></body></html>"""


@pytest.mark.skipif(CHROMIUM is None, reason="no chromium on this machine (Debian: apt-get install chromium)")
@pytest.mark.slow
def test_a_page_from_another_origin_cannot_command_the_bot(served, tmp_path):
    """The issue's attack: a page on another origin (127.0.0.1, another port) posts ``quit now`` with a
    CORS-safelisted ``text/plain; application/json``, as ``text/plain`` and as forms; nothing runs."""
    server, ran = served
    (tmp_path / "www").mkdir()
    (tmp_path / "www" / "attack.html").write_text(ATTACK % {"url": server.url, "header": TOKEN_HEADER})
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(tmp_path / "www"))
    handler.log_message = lambda *a: None  # type: ignore[attr-defined]
    attacker = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=attacker.serve_forever, daemon=True).start()
    try:
        with Browser(CHROMIUM, str(tmp_path / "profile")) as browser:
            browser.open(f"http://127.0.0.1:{attacker.server_address[1]}/attack.html")
            assert browser.wait_for("window.done === true", 15)
            log = browser.eval("window.log")
    finally:
        attacker.shutdown()
        attacker.server_close()
    assert len(log) == 5 and log[0] == "no-cors text/plain; application/json: sent"  # the request went out
    assert log[3].startswith("cors: TypeError") and log[4].startswith("read status: TypeError")  # no CORS here
    time.sleep(0.3)
    assert ran.lines == []
    assert _command(server)[0] == 200 and ran.lines == ["status"]  # the server lives and obeys its operator


@pytest.mark.skipif(CHROMIUM is None, reason="no chromium on this machine (Debian: apt-get install chromium)")
@pytest.mark.slow
def test_the_operators_own_page_runs_a_command_under_its_policy(served, tmp_path):
    """The page from the server itself: its nonce-marked script runs, the board's inline SVG keeps its styles (no
    CSP violation), and its form sends the token: the command runs end to end."""
    from tests.status.test_status_page import _snapshot

    server, ran = served
    server.hub.publish_game(_snapshot())
    with Browser(CHROMIUM, str(tmp_path / "profile")) as browser:
        browser.open(server.url + "/games/abcd1234")
        assert browser.wait_for("document.querySelector('#board svg') !== null")
        browser.eval("window.violations = []; document.addEventListener('securitypolicyviolation',"
                     " e => window.violations.push(e.violatedDirective + ' ' + e.blockedURI)); true")
        server.hub.publish_game(_snapshot(moves=("e2e4", "e7e5", "g1f3", "b8c6")))  # the SVGs set again
        assert browser.wait_for("document.getElementById('moves').textContent.endsWith('Nf3 Nc6')")
        knight = "getComputedStyle(document.querySelector('#board svg #white-knight path')).fill"
        assert browser.eval(knight) == "rgb(255, 255, 255)"  # the piece's style attribute applied
        assert browser.eval("getComputedStyle(document.body).margin") == "0px"  # the page's own <style> applied
        violations = browser.eval("window.violations")
        browser.open(server.url + "/")
        assert browser.wait_for("document.getElementById('service').innerText.includes('lichessbot')")
        browser.eval("document.getElementById('cmd').value = 'matchmaking off';"
                     "document.getElementById('cmdform').requestSubmit(); true")
        assert browser.wait_for("document.getElementById('cmdout').textContent.includes('ran matchmaking off')")
    assert ran.lines == ["matchmaking off"] and violations == []


def test_allowed_hosts_are_checked_at_load_and_reach_the_bots_page():
    from lichessbot.config import parse_config
    from tests.fake_lichess import BotRun, FakeLichess, StandInEngine

    cfg = parse_config({"status": {"allowed_hosts": ["Bot.Example.org.", "[::1]", "10.0.0.7"]}})
    assert cfg.status.allowed_hosts == ["bot.example.org", "::1", "10.0.0.7"]
    for bad in ("https://bot.example.org", "bot.example.org:443", "*.example.org", "bot/x", "-bot.org", ""):
        with pytest.raises(ValueError, match=r"status\.allowed_hosts: .* is not a host name"):
            parse_config({"status": {"allowed_hosts": [bad]}})
    with FakeLichess() as lichess, BotRun(lichess, StandInEngine(), {"status": {
            "enabled": True, "port": 0, "allowed_hosts": [PROXY]}}) as bot:
        page = bot.service.status_server
        assert _request(page, "GET", "/api/status", headers={"Host": PROXY})[0] == 200
        assert _request(page, "GET", "/api/status", headers={"Host": "attacker.example"})[0] == 421
