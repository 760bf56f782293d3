"""Bot arenas (config ``tournaments``): joining, pairing and withdrawing (:mod:`~lichessbot.bot.arenas.player`)."""
