"""The bot process (``lichessbot play``): the account check, the service that reads the event stream and runs
the games, matchmaking and arenas in their threads, and the in-process runner the tests and the soak use."""
