"""What the bot says: the chat sender, eval lines and ``!`` commands (:mod:`~lichessbot.bot.chat.lines`), and
one game's greetings and answers (:mod:`~lichessbot.bot.chat.game_chat`)."""
