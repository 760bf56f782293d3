"""Setting the bot up: ``lichessbot check-config`` and ``lichessbot migrate-config`` (from lichess-bot)."""
