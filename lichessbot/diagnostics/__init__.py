"""User-facing diagnostics: ``lichessbot doctor`` and the ``lichessbot bench`` modes (nn, search, gpu, timeman,
bot, uci). A room of its own at the top of the house: it may import every room below the command, and nothing
imports it (the zero-cost network :mod:`~lichessbot.diagnostics.fake_net` is imported by the tests too)."""
