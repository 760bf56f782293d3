"""Matchmaking: when the bot is idle, challenge an online bot (config section ``matchmaking``): the loop
(:mod:`~lichessbot.bot.matchmaking.matchmaker`) and its pure choices (:mod:`~lichessbot.bot.matchmaking.choice`)."""
