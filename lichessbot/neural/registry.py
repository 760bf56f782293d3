"""The network runners by backend name: the one seam between the engine's settings and whatever runs the network.

As lc0 registers its backends by name (``REGISTER_NETWORK`` in src/neural/factory.h), every runner here is a
factory ``(engine config, network) -> NetworkRunner`` registered under the ``engine.backend`` names it
serves. The built-in ones are named in :data:`BUILTIN` as "module:function" and imported on first use, so a
backend's libraries (PyTorch, Triton's client) load only when it is chosen. Adding a runner is one new module
with its factory plus one line in :data:`BUILTIN` (or a :func:`register` call, as a plugin or test does):
the names here are the only list of backends, so ``engine.backend``, UCI's ``Backend`` option and
``lichessbot uci --backend`` take a new name with no other change (docs/engine.md, "Adding a runner").

The config cannot ask this registry (config sits below the engine room: docs/interfaces.md, "Layers"), so it
takes any name and :func:`check` refuses one no runner serves, naming the key and the registered names: at
start (the engine builds its runner through :func:`build`) and in ``lichessbot check-config``.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

from lichessbot.config import EngineConfig
from lichessbot.errors import ConfigError
from lichessbot.neural.network import Network
from lichessbot.neural.runner import NetworkRunner

__all__ = ["BUILTIN", "Factory", "build", "check", "names", "register"]

#: What a runner's module provides: the runner for ``engine``'s settings over ``network``, warmed up. Raises
#: NetworkError (or the runner's own errors) when it cannot run the network.
Factory = Callable[[EngineConfig, Network], NetworkRunner]

#: engine.backend -> "module:function" of its factory (the registration of the built-in runners).
BUILTIN: dict[str, str] = {
    "auto": "lichessbot.neural.evaluator:from_config",
    "tensorrt": "lichessbot.neural.evaluator:from_config",
    "cuda": "lichessbot.neural.evaluator:from_config",
    "cpu": "lichessbot.neural.evaluator:from_config",
    "triton": "lichessbot.neural.triton:from_config",
    "torch": "lichessbot.neural.torch_runner:from_config",
}

_registered: dict[str, Factory] = {}


def register(name: str, factory: Factory) -> None:
    """Serve backend ``name`` with ``factory`` (replacing a built-in or an earlier registration)."""
    _registered[name] = factory


def names() -> tuple[str, ...]:
    """Every backend name a runner is registered for."""
    return tuple(dict.fromkeys([*BUILTIN, *_registered]))


def check(name: str, key: str = "engine.backend") -> str:
    """``name`` when a runner is registered for it. Raises ConfigError (a ValueError) naming ``key`` (the
    config key, or UCI's option) and every registered name when none is."""
    if name not in names():
        raise ConfigError(f"{key}: no network runner is registered for backend {name!r} "
                          f"(registered: {', '.join(names())})")
    return name


def _factory(name: str) -> Factory:
    found = _registered.get(check(name))
    if found is not None:
        return found
    target = BUILTIN[name]
    module, _, attr = target.partition(":")
    factory: Factory = getattr(importlib.import_module(module), attr)
    return factory


def build(engine: EngineConfig, network: Network, backend: str | None = None) -> NetworkRunner:
    """The runner of ``backend`` (default ``engine.backend``) for ``network``. Raises ConfigError for a name
    no runner serves (:func:`check`), and what the runner's factory raises (NetworkError, ...)."""
    return _factory(str(backend if backend is not None else engine.backend))(engine, network)
