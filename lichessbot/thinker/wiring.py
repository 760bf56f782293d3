"""One place wires the engine: network -> evaluator -> searcher, and the time manager beside it.

The bot (:mod:`lichessbot.thinker.engine`) and UCI (:mod:`lichessbot.uci`) build their engines with these
functions only, so a new engine setting is read in one place. The bot puts one
:class:`~lichessbot.neural.service.EvalService` between the evaluator and every game's searcher; UCI runs
one search at a time on the evaluator itself.
"""

from __future__ import annotations

from lichessbot.config import EngineConfig, SearchParams, TimemanConfig
from lichessbot.neural import registry
from lichessbot.neural.network import Network, load_network
from lichessbot.neural.runner import NetworkRunner
from lichessbot.search import Searcher
from lichessbot.tablebase import Tablebases
from lichessbot.timeman import TimeManager

__all__ = ["network_of", "evaluator_of", "searcher_of", "timeman_of"]


def network_of(engine: EngineConfig) -> Network:
    """The network of ``engine.network`` (``default``, ``.onnx`` or lc0 ``.pb.gz``) with ``engine.input_format``.

    Raises:
        lichessbot.neural.network.NetworkError: the file is missing or is not a network (the reason in the
            message, which starts with the path).
    """
    return load_network(engine.network, engine.input_format)


def evaluator_of(engine: EngineConfig, network: Network) -> NetworkRunner:
    """The process's runner for ``network``: the one registered for ``engine.backend``
    (:mod:`lichessbot.neural.registry`: onnxruntime on ``auto``, ``tensorrt``, ``cuda``, ``cpu``, warmed up;
    a Triton client on ``triton``; PyTorch on ``torch``), built from ``engine``'s settings. (The policy
    temperature and history fill are search parameters: the search core applies them.)

    Raises:
        lichessbot.neural.network.NetworkError: the runner cannot run the model (the reason in the message).
        RuntimeError: the Triton server cannot be reached (backend ``triton``).
    """
    return registry.build(engine, network)


def searcher_of(evaluator: NetworkRunner, params: SearchParams, *, game: str = "",
                tablebases: Tablebases | None = None) -> Searcher:
    """A searcher (its own tree) over ``evaluator`` with ``params``; ``game`` names it to an evaluation
    service; ``tablebases``: probe them inside the search when they were opened with ``search_probe``.
    Close it with :meth:`~lichessbot.search.Searcher.close` (its network worker thread ends there)."""
    core = tablebases.core if tablebases is not None else None
    return Searcher(evaluator, params, game=game, tablebases=core)


def timeman_of(config: TimemanConfig, game_id: str | None = None) -> TimeManager:
    """A time manager for one game (it keeps state between moves); ``game_id`` goes on its log lines."""
    return TimeManager(config, context={"game_id": game_id} if game_id else None)
