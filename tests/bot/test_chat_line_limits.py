"""A bot's chat lines as lila takes them (issue 40, point 5): a line with a link is dropped silently by lila
(chat ChatApi.makeLine, ``hasLinks`` for bots), so we never post one; lines are cut to 140 UTF-16 units
(an emoji counts 2), lila's limit (a longer line is a 400)."""

from __future__ import annotations

import threading

import pytest
import structlog

from lichessbot.bot.chat.commands import HELP, HOWTO, WAIT_REFUSAL, WAIT_REPLY
from lichessbot.bot.chat.line_limits import MAX_UNITS, fit, has_link, utf16_units
from lichessbot.bot.chat.lines import ChatSender, greetings_with_links
from lichessbot.config import GreetingConfig


@pytest.mark.parametrize(("text", "link"), [
    ("see https://lichess.org/api", True),
    ("http://example.com", True),
    ("lichess.org", True),                     # a bare domain is a link for lila
    ("read lichess.org/api#tag/Bot", True),
    ("my site: chess.example.edu.", True),
    ("contact@lichess.org", False),            # an e-mail address is not
    ("Good game, Opponent!", False),
    ("eval +0.35 | W 41% D 33% L 26% | pv Nf3 d5 g3", False),
    ("tablebase win, DTZ 15 | Kf1", False),
    ("a.community of players", False),
])
def test_links_are_found_as_lila_finds_them(text, link):
    assert has_link(text) is link


def test_our_own_lines_have_no_link_and_fit():
    for line in (HELP, HOWTO, WAIT_REPLY, WAIT_REFUSAL, *GreetingConfig().model_dump().values()):
        assert not has_link(line) and utf16_units(line) <= MAX_UNITS, line


def test_lines_are_cut_to_140_utf16_units_an_emoji_counting_two():
    assert utf16_units("♞") == 1 and utf16_units("😀") == 2
    cut = fit("😀" * 100)
    assert utf16_units(cut) <= MAX_UNITS and cut.endswith("…") and "\ud83d" not in cut
    assert len(cut) == 70  # 69 emoji (138 units) and the ellipsis
    assert fit("a   b\n c") == "a b c" and fit("x" * 140) == "x" * 140


def test_the_sender_never_posts_a_line_with_a_link():
    posted: list[tuple[str, str, str]] = []
    done = threading.Event()

    def post(game_id: str, room: str, text: str) -> None:
        posted.append((game_id, room, text))
        if text == "last":
            done.set()

    sender = ChatSender(post)
    sender.send("g1", "player", "Read lichess.org/api for how bots work")
    sender.send("g1", "spectator", "😀" * 80)
    sender.send("g1", "player", "last")
    assert done.wait(5)
    sender.close()
    assert [p[2] for p in posted] == [fit("😀" * 80), "last"] and sender.refused == 1


def test_greetings_with_links_are_named():
    greeting = GreetingConfig(hello="Hi! Rules at https://example.com/rules", goodbye="gg, see lichess.org")
    assert greetings_with_links(greeting) == ["hello", "goodbye"]


def test_the_senders_queue_is_bounded_and_drops_with_a_log_line():
    """A chat that posts slowly (lila's 429s, a slow network) never builds a backlog: at most ``max_queued`` lines
    wait, more are dropped and logged (issue 48, point 5)."""
    posting, release = threading.Event(), threading.Event()
    posted: list[str] = []

    def post(game_id: str, room: str, text: str) -> None:
        posting.set()
        release.wait(5)
        posted.append(text)

    sender = ChatSender(post, max_queued=3)
    with structlog.testing.capture_logs() as logs:
        sender.send("g1", "player", "first")
        assert posting.wait(5)  # the thread holds "first"; the queue is empty
        for i in range(10):
            sender.send("g1", "player", f"line {i}")
    release.set()
    sender.close()
    assert posted == ["first", "line 0", "line 1", "line 2"] and sender.dropped == 7
    drops = [e for e in logs if e["event"] == "request dropped"]
    assert len(drops) == 7 and all(e["game_id"] == "g1" and e["log_level"] == "warning" for e in drops)
