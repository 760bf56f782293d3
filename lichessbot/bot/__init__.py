"""The bot on lichess, in rooms by journey: ``challenges`` (which games to play: every rule, slot, queue and
record, and the answers posted), ``matchmaking`` (whom to challenge when idle), ``arenas`` (bot arenas),
``games`` (one game from its first event to its PGN: where a move is asked for and posted), ``chat`` (what the
bot says), ``service`` (the process: event stream, threads, ``lichessbot play``) and ``setup`` (config checks
and migration from lichess-bot). Imports point down that list (service at the top, chat and challenges at the
bottom) and to the rooms below the bot (thinker, status, lichess, config)."""
