# lichessbot: `lichessbot play` in a CUDA image.
#
# onnxruntime-gpu (>= 1.19) is built against CUDA 12 and cuDNN 9: the cudnn-runtime image ships both
# (cuDNN, cuBLAS, cuFFT, cuRAND...). Without a GPU (or without --gpus) onnxruntime falls back to the CPU.
#
#   docker build -t lichessbot .
#   docker run --rm -it --gpus all -e LICHESS_BOT_TOKEN=lip_xxx \
#       -v "$PWD/config.yml:/config/config.yml:ro" -v "$PWD/nets:/networks:ro" \
#       -v "$PWD/game_records:/data/game_records" lichessbot
#
# In config.yml, networks are paths under /networks (engine.network: /networks/my.pb.gz) or `default`,
# and pgn_directory: /data/game_records. Ctrl-C (SIGINT) once finishes the running games; `docker stop`
# (SIGTERM) resigns or aborts them and exits.
#
# The search core is Rust: a builder stage compiles the wheel (maturin; an abi3 wheel for CPython >= 3.11),
# the runtime stage installs it and needs no toolchain.
FROM rust:1-bookworm AS builder
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 python3-venv \
 && rm -rf /var/lib/apt/lists/* \
 && python3 -m venv /opt/build && /opt/build/bin/pip install --no-cache-dir "maturin>=1.5,<2"
WORKDIR /src
COPY pyproject.toml README.md LICENSE ./
COPY rust ./rust
COPY lichessbot ./lichessbot
RUN /opt/build/bin/maturin build --release --out /wheels

FROM nvidia/cuda:12.6.3-cudnn-runtime-ubuntu24.04

ENV DEBIAN_FRONTEND=noninteractive \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 python3-venv ca-certificates \
 && rm -rf /var/lib/apt/lists/*

RUN python3 -m venv /opt/venv
ENV PATH=/opt/venv/bin:$PATH

COPY --from=builder /wheels /wheels
RUN pip install /wheels/*.whl && rm -rf /wheels

RUN useradd --create-home --uid 10001 bot \
 && mkdir -p /config /networks /data/game_records /data/state \
 && chown bot:bot /data/game_records /data/state
USER bot
# The working directory is the state directory (state_directory "."): the bot user writes the matchmaking
# records there, on a volume, so a restart (docker stop, a new container) keeps them.
WORKDIR /data/state

VOLUME ["/config", "/networks", "/data/game_records", "/data/state"]
ENTRYPOINT ["lichessbot", "play"]
CMD ["--config", "/config/config.yml"]
