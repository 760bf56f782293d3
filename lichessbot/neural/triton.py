"""Past one machine: the network served by an NVIDIA Triton Inference Server (``engine.backend: triton``).

:class:`TritonEvaluator` has the evaluator interface the search and the evaluation service use
(``run(planes)``, ``search_cache``, ``concurrency``, ...), but sends each batch to Triton over gRPC with
the maintained ``tritonclient`` package; Triton merges the batches of all its clients (dynamic batching)
over its GPUs. :func:`export_model_repository` writes the model repository Triton serves
(``lichessbot export-triton OUT_DIR``): ``NAME/config.pbtxt`` and ``NAME/1/model.onnx``. See
docs/scaling.md.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import numpy as np
import structlog

from lichessbot import _core
from lichessbot.config import EngineConfig
from lichessbot.neural.network import INPUT_NAME, MLH_NAME, POLICY_NAME, VALUE_NAME, WDL_NAME, Network, NetworkError
from lichessbot.neural.runner import NetInfo, NetOutputs

__all__ = ["TritonEvaluator", "export_model_repository", "model_config"]

log = structlog.get_logger("lichessbot.neural")

#: Batches in flight per process (Triton queues and merges them; more hide the network round trip).
TRITON_CONCURRENCY = 4
#: Triton's dynamic batcher waits at most this long to fill a batch, microseconds (ours).
MAX_QUEUE_DELAY_US = 500


def model_config(name: str, network: Network, max_batch: int = 1024) -> str:
    """Triton's ``config.pbtxt`` for ``network`` exported as ONNX (onnxruntime backend, dynamic batching).
    Shapes leave out the batch dimension, as Triton wants when ``max_batch_size`` > 0."""
    value = (WDL_NAME, 3) if network.has_wdl else (VALUE_NAME, 1)
    outputs = [(POLICY_NAME, 1858), value] + ([(MLH_NAME, 1)] if network.has_mlh else [])
    out = "\n".join(f'  {{ name: "{n}" data_type: TYPE_FP32 dims: [ {w} ] }},' for n, w in outputs).rstrip(",")
    return (f'name: "{name}"\nplatform: "onnxruntime_onnx"\nmax_batch_size: {max_batch}\n'
            f'input [\n  {{ name: "{INPUT_NAME}" data_type: TYPE_FP32 dims: [ 112, 8, 8 ] }}\n]\n'
            f"output [\n{out}\n]\n"
            f"dynamic_batching {{ max_queue_delay_microseconds: {MAX_QUEUE_DELAY_US} }}\n"
            f"# lichessbot: lc0 input format {network.input_format}, network {network.name}\n")


def export_model_repository(out_dir: str | Path, network: Network, name: str = "lichessbot",
                            max_batch: int = 1024) -> Path:
    """Write ``out_dir/name/config.pbtxt`` and ``out_dir/name/1/model.onnx``; returns the model folder.
    Raises OSError when the folder cannot be written."""
    folder = Path(out_dir) / name
    (folder / "1").mkdir(parents=True, exist_ok=True)
    (folder / "1" / "model.onnx").write_bytes(network.model)
    (folder / "config.pbtxt").write_text(model_config(name, network, max_batch))
    return folder


class TritonEvaluator:
    """The network on a Triton server at ``url`` (host:port of its gRPC endpoint) under ``model``.

    ``input_format`` is the network's lc0 input format (Triton does not know it); whether the model has a
    WDL or a moves-left head is read from Triton's model metadata. Raises NetworkError naming the URL
    when the server cannot be reached or does not serve the model, and ImportError when tritonclient is
    not installed (``pip install "lichessbot-nn[triton]"``).
    """

    provider = "triton"

    def __init__(self, url: str, model: str = "lichessbot", *, input_format: int = 1, cache_size: int = 2_000_000,
                 timeout: float = 10.0) -> None:
        # Deferred on purpose: tritonclient is the optional [triton] extra; only backend "triton" needs it.
        import tritonclient.grpc as grpcclient  # noqa: PLC0415

        self._grpc = grpcclient
        self.url, self.model, self.timeout = url, model, timeout
        self.input_format = input_format
        self.search_cache = _core.NNCache(cache_size)
        self.concurrency = TRITON_CONCURRENCY
        self._local = threading.local()
        try:
            client = self._client()
            if not client.is_model_ready(model):
                raise NetworkError(f"the Triton server at {url} does not serve a ready model {model!r}")
            meta = client.get_model_metadata(model)
        except NetworkError:
            raise
        except Exception as err:  # noqa: BLE001 - tritonclient raises its own exception types
            raise NetworkError(f"cannot reach the Triton server at {url}: {str(err).splitlines()[0][:200]}") from None
        names = {o.name for o in meta.outputs}
        self.has_wdl = WDL_NAME in names
        self.has_mlh = MLH_NAME in names
        if POLICY_NAME not in names or not (self.has_wdl or VALUE_NAME in names):
            raise NetworkError(f"model {model!r} at {url} has no lc0 outputs ({sorted(names)})")
        self._outputs = [POLICY_NAME, WDL_NAME if self.has_wdl else VALUE_NAME] + ([MLH_NAME] if self.has_mlh else [])
        self.evaluations = 0
        log.info("network ready", provider="triton", url=url, model=model, wdl=self.has_wdl, mlh=self.has_mlh)

    def _client(self) -> Any:  # tritonclient.grpc.InferenceServerClient: the library is untyped
        client = getattr(self._local, "client", None)
        if client is None:  # one gRPC client per thread
            client = self._local.client = self._grpc.InferenceServerClient(url=self.url)
        return client

    @property
    def info(self) -> NetInfo:
        """The model's heads (from Triton's metadata), the input format it was given; minibatch 256 as on a
        local GPU, :data:`TRITON_CONCURRENCY` batches in flight, 1024 positions a call at most."""
        return NetInfo(name=self.model, input_format=self.input_format, has_wdl=self.has_wdl, has_mlh=self.has_mlh,
                       provider="triton", minibatch=256, concurrency=self.concurrency, inflight=self.concurrency,
                       max_batch=1024)

    def clear_cache(self) -> None:
        """Empty the NN cache."""
        self.search_cache.clear()

    def run(self, planes: np.ndarray, *, game: str = "", priority: int = 0,
            out: NetOutputs | None = None) -> NetOutputs:
        """As :meth:`lichessbot.neural.evaluator.Evaluator.run`, through Triton (``out`` is not written: the
        arrays come from the gRPC answer). Raises NetworkError (naming the URL) when the call fails."""
        x = np.ascontiguousarray(planes, dtype=np.float32)
        inp = self._grpc.InferInput(INPUT_NAME, list(x.shape), "FP32")
        inp.set_data_from_numpy(x)
        outs = [self._grpc.InferRequestedOutput(n) for n in self._outputs]
        try:
            res = self._client().infer(self.model, [inp], outputs=outs, client_timeout=self.timeout)
        except Exception as err:  # noqa: BLE001
            raise NetworkError(f"Triton at {self.url} failed: {str(err).splitlines()[0][:200]}") from None
        logits = res.as_numpy(POLICY_NAME).astype(np.float32, copy=False)
        if self.has_wdl:
            wdl = res.as_numpy(WDL_NAME).astype(np.float32, copy=False)
        else:
            v = res.as_numpy(VALUE_NAME).astype(np.float32).reshape(-1)
            wdl = np.stack([(1 + v) / 2, np.zeros_like(v), (1 - v) / 2], axis=1)
        mlh = res.as_numpy(MLH_NAME).astype(np.float32).reshape(-1) if self.has_mlh else None
        self.evaluations += len(x)
        return NetOutputs(np.ascontiguousarray(logits), np.ascontiguousarray(wdl), mlh)


def from_config(engine: EngineConfig, network: Network) -> TritonEvaluator:
    """The Triton client of backend ``triton`` (:mod:`lichessbot.neural.registry`) at ``engine.triton_url``,
    model ``engine.triton_model``. Raises RuntimeError when the server cannot be reached."""
    return TritonEvaluator(engine.triton_url, engine.triton_model, input_format=network.input_format,
                           cache_size=engine.nn_cache_size)
