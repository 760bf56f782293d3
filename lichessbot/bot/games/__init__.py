"""One game from its first event to its PGN: the game (:mod:`~lichessbot.bot.games.game`), its small pure
rules, takebacks, the thinker it asks for a move (:mod:`~lichessbot.bot.games.thinker`, the real one in
:mod:`~lichessbot.bot.games.engine_thinker`), its PGN record and its snapshot for the status page."""
