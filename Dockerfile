# askbridge in a container. compose.yaml runs two of these on one PostgreSQL database.
# CI does not build this image (its machines have no container runtime); the tests check what
# they can without one: tests/test_container.py.
FROM python:3.11-slim AS build
WORKDIR /src
COPY pyproject.toml README.md LICENSE ./
COPY core core
COPY adapters adapters
COPY bots bots
RUN pip wheel --no-cache-dir --no-deps --wheel-dir /wheels .

FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1
COPY --from=build /wheels /wheels
RUN pip install /wheels/*.whl \
    && rm -rf /wheels \
    && useradd --system --create-home --uid 10001 askbridge \
    && mkdir /data \
    && chown askbridge /data
USER askbridge
WORKDIR /home/askbridge
# Every interface of the container, so askbridge refuses to start without ASKBRIDGE_API_TOKEN.
# The database is whatever ASKBRIDGE_DATABASE_URL says when the container starts: a
# postgresql:// URL for replicas, else this SQLite file on the /data volume.
ENV ASKBRIDGE_HOST=0.0.0.0 \
    ASKBRIDGE_PORT=8765 \
    ASKBRIDGE_DATABASE_URL=sqlite:////data/askbridge.db
VOLUME /data
EXPOSE 8765
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:' + os.environ['ASKBRIDGE_PORT'] + '/healthz', timeout=4)"]
CMD ["askbridge", "serve"]
