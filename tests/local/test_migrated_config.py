"""issue 51's last check: lichess-bot's own config.yml.default, converted by migrate-config, plays on the
embedded lichess (``play --local``'s server)."""

from __future__ import annotations

import yaml

from lichessbot.bot.setup.migrate import convert
from tests.bot.test_migrate_lichess_bot import DEFAULT
from tests.local.conftest import local_bot


def test_lichess_bots_default_config_converted_plays_a_game_here(tmp_path, tiny_net):
    migrated = convert(yaml.safe_load(DEFAULT.read_text(encoding="utf-8"))).config
    with local_bot(tmp_path, tiny_net, migrated) as run:
        assert run.service.config.timeman.move_overhead == 2000 and run.service.config.engine.ponder
        me = run.person()
        gid = me.challenges.create("lichessbot", rated=False, clock_limit=300, clock_increment=3,
                                   color="white")["id"]
        assert run.server.wait_for(lambda: gid in run.server.games, 15), "the bot did not accept"
        me.board.make_move(gid, "e2e4")
        run.turn(gid, True)  # the bot answered
        me.board.resign_game(gid)
        run.wait_over(gid)
    g = run.server.games[gid]
    assert len(g.board.move_stack) >= 2 and g.status == "resign"  # the bot moved, then the person resigned
