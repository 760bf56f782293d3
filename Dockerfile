# lichessbot: `lichessbot play` in a container (docs/docker.md: the images, volumes, stopping, health, the
# compose example, and the build check developers run). Two images from this file:
#
#   docker build --build-arg FLAVOUR=cpu -t lichessbot:cpu .  # the CPU onnxruntime only (lichessbot-nn[cpu])
#   docker build -t lichessbot:gpu .                          # FLAVOUR=gpu, the default: onnxruntime-gpu with
#       CUDA 13 / cuDNN 9 from NVIDIA's wheels (lichessbot-nn[gpu]); the host needs only the NVIDIA driver and the
#       NVIDIA Container Toolkit (docker run --gpus all); without a GPU it runs on the CPU
#   docker run --rm -e LICHESS_BOT_TOKEN=lip_xxx -v "$PWD/config.yml:/config/config.yml:ro" \
#       -v lichessbot-state:/data/state -v "$PWD/game_records:/data/game_records" lichessbot:cpu
#   docker run --rm --gpus all --entrypoint lichessbot lichessbot:gpu doctor   # what runs, and how fast
#
# Layers, first to last: the base and Python; the dependencies, exactly as the flavour's lock file pins them
# (requirements/cpu.lock or gpu.lock: every package and version with its SHA-256, installed with pip's
# --require-hashes); our package (the compiled core, built from rust/ alone, and our Python code) as one last small
# layer, installed with --no-deps. A change to a Python file rebuilds only that layer; the dependencies are
# reinstalled only when their lock file changes. Nothing is deleted in a later layer (the wheel is unpacked in a
# stage of its own, whose /app alone is copied). To regenerate the lock files: docs/docker.md, "The lock files".
#
# The base is pinned by tag and digest. To update it: `scripts/build-image.sh --pin` (or
# `skopeo inspect docker://docker.io/library/debian:bookworm-slim | jq -r .Digest`) and replace the digest below.
# Without a registry (the machines of this project), scripts/make-base-image.sh makes a stand-in with debootstrap
# and scripts/build-image.sh builds with `--build-arg BASE=localhost/debian:bookworm-slim`.
ARG BASE=docker.io/library/debian:bookworm-slim@sha256:2424c1850714a4d94666ec928e24d86de958646737b1d113f5b2207be44d37d8
ARG FLAVOUR=gpu

# The base of every stage: Debian's Python 3.11 in a virtual environment, and tini (PID 1 below).
FROM ${BASE} AS python
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 python3-venv tini \
 && rm -rf /var/lib/apt/lists/* \
 && python3 -m venv /opt/venv
ENV PATH=/opt/venv/bin:$PATH \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYTHONUNBUFFERED=1

# The compiled search core: a wheel built from rust/ and the project's metadata alone (its Python package is
# copied in the last layer of the image), so a change to a Python file never recompiles it.
# rustup-init is pinned by version and SHA-256 and checked before it runs (scripts/install-rustup.sh). The
# checksums are rustup's own, published beside each file (static.rust-lang.org/rustup/archive/1.29.0/<target>/
# rustup-init.sha256), as the Rust project's official images pin them (rust-lang/docker-rust, versions.toml
# rustup = "1.29.0", stable/bookworm/slim/Dockerfile, commit 7668ee2). To move to another rustup: its version and
# the two .sha256 files of that version. maturin comes from requirements/build.lock, with hashes.
FROM python AS core
ARG RUST_VERSION=1.95.0
ARG RUSTUP_VERSION=1.29.0
ARG RUSTUP_SHA256_X86_64=4acc9acc76d5079515b46346a485974457b5a79893cfb01112423c89aeb5aa10
ARG RUSTUP_SHA256_AARCH64=9732d6c5e2a098d3521fca8145d826ae0aaa067ef2385ead08e6feac88fa5792
COPY scripts/install-rustup.sh requirements/build.lock /tmp/build/
RUN apt-get update \
 && apt-get install -y --no-install-recommends curl ca-certificates gcc libc6-dev \
 && rm -rf /var/lib/apt/lists/* \
 && CARGO_HOME=/opt/cargo RUSTUP_HOME=/opt/rustup RUST_VERSION="$RUST_VERSION" RUSTUP_VERSION="$RUSTUP_VERSION" \
        RUSTUP_SHA256_X86_64="$RUSTUP_SHA256_X86_64" RUSTUP_SHA256_AARCH64="$RUSTUP_SHA256_AARCH64" \
        sh /tmp/build/install-rustup.sh \
 && pip install --require-hashes --no-deps -r /tmp/build/build.lock
ENV CARGO_HOME=/opt/cargo RUSTUP_HOME=/opt/rustup PATH=/opt/cargo/bin:$PATH
WORKDIR /src
# the crates first (a layer of their own: a change to our Rust code downloads nothing)
COPY rust/Cargo.toml rust/Cargo.lock rust/
COPY rust/core/Cargo.toml rust/core/
COPY rust/py/Cargo.toml rust/py/
RUN mkdir -p rust/core/src rust/py/src && touch rust/core/src/lib.rs rust/py/src/lib.rs \
 && cargo fetch --locked --manifest-path rust/Cargo.toml
COPY pyproject.toml LICENSE ./
COPY rust rust
# README.md is the package's long description only: a stand-in keeps a change to it from recompiling the core
RUN mkdir lichessbot && touch lichessbot/__init__.py README.md \
 && maturin build --release --locked --out /wheels

# What both images share on top of their dependencies: the core, our code, the user, the entry point.
FROM python AS runtime-base
RUN useradd --uid 10001 --home-dir /data/state --no-create-home --shell /usr/sbin/nologin bot \
 && mkdir -p /config /networks /data/state /data/game_records \
 && chown bot:bot /data/state /data/game_records

# The dependencies: every package pinned with its hashes (pip refuses a file whose hash differs, and any package
# the lock does not name).
FROM runtime-base AS deps-cpu
COPY requirements/cpu.lock /tmp/req/
RUN pip install --require-hashes --no-deps -r /tmp/req/cpu.lock

FROM runtime-base AS deps-gpu
COPY requirements/gpu.lock /tmp/req/
RUN pip install --require-hashes --no-deps -r /tmp/req/gpu.lock
# ask the NVIDIA Container Toolkit for the driver (with --gpus or a compose GPU reservation)
ENV NVIDIA_VISIBLE_DEVICES=all NVIDIA_DRIVER_CAPABILITIES=compute,utility

# Our package as it lies in the image, under /app: the core's wheel installed, our Python code over it, compiled
# (unchecked-hash: the files never change in an image). A stage of its own on the small Python base, so a change
# to a Python file redoes two small steps here and one copy below.
FROM python AS app
ARG SITE=/app/opt/venv/lib/python3.11/site-packages
COPY --from=core /wheels /wheels
RUN pip install --no-deps --target "$SITE" /wheels/*.whl \
 && mkdir -p /app/opt/venv/bin && mv "$SITE/bin/lichessbot" /app/opt/venv/bin/ && rmdir "$SITE/bin"
COPY lichessbot /app/opt/venv/lib/python3.11/site-packages/lichessbot
RUN python3 -m compileall -q --invalidation-mode unchecked-hash -s /app -p / "$SITE/lichessbot"

# The image: its dependencies, how it runs (the stop policy and the health signal: docs/docker.md), and our
# package as its last layer.
FROM deps-${FLAVOUR} AS image
# Docker's default grace period is 10 s; with another (compose: stop_grace_period) set this variable to the
# same number of seconds. The heartbeat lives in the container, not on a volume. The caches (TensorRT's engines)
# are on the state volume: they outlive the container. A config that leaves state_directory and pgn_directory
# out gets the platform's user directories (platformdirs: $XDG_STATE_HOME/lichessbot and
# $XDG_DATA_HOME/lichessbot/games), which these variables put on the state volume too.
ENV LICHESSBOT_STOP_GRACE_PERIOD=10 \
    LICHESSBOT_HEALTH_FILE=/tmp/lichessbot-health.json \
    XDG_CACHE_HOME=/data/state/.cache \
    XDG_STATE_HOME=/data/state \
    XDG_DATA_HOME=/data/state
USER bot
WORKDIR /data/state
VOLUME ["/data/state", "/data/game_records"]
HEALTHCHECK --interval=30s --timeout=10s --start-period=300s --retries=3 CMD ["lichessbot", "health"]
# tini is PID 1: it passes SIGTERM and SIGINT on to the bot from the first instant and reaps what exits
ENTRYPOINT ["/usr/bin/tini", "--", "lichessbot", "play"]
CMD ["--config", "/config/config.yml"]
COPY --from=app /app/ /
