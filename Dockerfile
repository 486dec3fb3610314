# Strata's HTTP API in a container: `docker build -t strata .` then
# `docker run -p 8420:8420 -e STRATA_AUTH_MODE=token strata` (or `docker compose up`, with
# Postgres). The ONNX model is exported at build time, so the container starts offline.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    STRATA_HOME=/data \
    STRATA_MODEL_CACHE=/opt/strata/models \
    STRATA_HOST=0.0.0.0 \
    STRATA_PORT=8420 \
    STRATA_AUTH_MODE=token

WORKDIR /opt/strata/src
COPY pyproject.toml README.md ./
COPY src ./src
RUN pip install ".[postgres]" \
    && python -m strata_recall.embedders.onnx \
    && useradd --create-home --uid 10001 strata \
    && mkdir -p /data \
    && chown -R strata /data /opt/strata/models

USER strata
WORKDIR /data
VOLUME ["/data"]
EXPOSE 8420
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
    CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8420/healthz', timeout=4)"]
CMD ["strata", "serve"]
