"""The networks and what runs them (lc0's ``neural/``): loading and converting networks, one
``NetworkRunner`` protocol and the registry of runners by backend name, the evaluation service that merges
every search's batches. The engine that plays is :mod:`lichessbot.thinker.engine`."""
