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

WORKDIR /src
COPY pyproject.toml README.md ./
COPY lichessbot ./lichessbot
RUN pip install . && cd / && rm -rf /src

RUN useradd --create-home --uid 10001 bot \
 && mkdir -p /config /networks /data/game_records \
 && chown bot:bot /data/game_records
USER bot
WORKDIR /data

VOLUME ["/config", "/networks", "/data/game_records"]
ENTRYPOINT ["lichessbot", "play"]
CMD ["--config", "/config/config.yml"]
