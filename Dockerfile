# lichessbot: `lichessbot play` on a GPU host (or the CPU).
#
# onnxruntime-gpu 1.31 is built against CUDA 13 and cuDNN 9. The image takes them from the same place as the
# README's GPU install, NVIDIA's wheels (`pip install "lichessbot[gpu]"`), so CUDA always matches the wheel;
# the base is a plain Python image. The host needs only the NVIDIA driver and the NVIDIA Container Toolkit
# (`--gpus all` mounts the driver; the two NVIDIA_* variables below ask for it). Without a GPU (or without
# --gpus) onnxruntime runs on the CPU, and one warning at start says why and names `--gpus all`.
#   docker run --rm --gpus all --entrypoint lichessbot lichessbot doctor   # what runs, and how fast
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

FROM python:3.11-slim-bookworm

ENV PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    NVIDIA_VISIBLE_DEVICES=all \
    NVIDIA_DRIVER_CAPABILITIES=compute,utility

RUN python3 -m venv /opt/venv
ENV PATH=/opt/venv/bin:$PATH

COPY --from=builder /wheels /wheels
# The wheel with its gpu extra: onnxruntime-gpu and CUDA 13 / cuDNN 9 from NVIDIA's wheels.
RUN pip install "$(ls /wheels/*.whl)[gpu]" && rm -rf /wheels

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
