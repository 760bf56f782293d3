"""One game from its first event to its PGN: the game's pure core (:mod:`~lichessbot.bot.games.core`: lichess's
events and the time in, :mod:`~lichessbot.bot.games.actions` out), its shell (:mod:`~lichessbot.bot.games.shell`:
the stream, the posts, the threads), its small pure rules, takebacks, the thinker it asks for a move
(:mod:`~lichessbot.thinker.protocol`, the real one in :mod:`~lichessbot.thinker.engine`), its PGN
record and its snapshot for the status page."""
