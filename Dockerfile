# askbridge in a container. compose.yaml runs two of these on one PostgreSQL database.
# CI does not build this image (its machines have no container runtime): tests/test_container.py
# builds the wheel from exactly the files the build stage copies, installs it as that stage does
# and runs `askbridge serve` from it.
# Both stages use one base image, pinned by digest (the index digest Docker Hub published for
# python:3.11-slim): a rebuild gets the same Python. Change both FROM lines and the base labels
# together.

FROM python:3.11-slim@sha256:158caf0e080e2cd74ef2879ed3c4e697792ee65251c8208b7afb56683c32ea6c AS build
WORKDIR /src
COPY pyproject.toml setup.py README.md LICENSE ./
COPY askbridge askbridge
COPY core core
COPY adapters adapters
COPY bots bots
# The wheel, then a virtual environment holding it and its dependencies but no pip: the final
# stage copies that environment alone, so nothing there can install anything.
RUN pip wheel --no-cache-dir --no-deps --wheel-dir /wheels . \
    && python -m venv --without-pip /opt/askbridge \
    && pip --python /opt/askbridge/bin/python install --no-cache-dir --disable-pip-version-check \
        /wheels/*.whl

FROM python:3.11-slim@sha256:158caf0e080e2cd74ef2879ed3c4e697792ee65251c8208b7afb56683c32ea6c
LABEL org.opencontainers.image.title="askbridge" \
      org.opencontainers.image.description="AI agents ask people multiple-choice questions and approvals in Slack, Discord or a web page" \
      org.opencontainers.image.version="0.1.0" \
      org.opencontainers.image.licenses="MIT" \
      org.opencontainers.image.authors="The askbridge authors" \
      org.opencontainers.image.base.name="docker.io/library/python:3.11-slim" \
      org.opencontainers.image.base.digest="sha256:158caf0e080e2cd74ef2879ed3c4e697792ee65251c8208b7afb56683c32ea6c"
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PATH=/opt/askbridge/bin:$PATH
COPY --from=build /opt/askbridge /opt/askbridge
# The base image's own installers go too (the environment's python, first on PATH, has none).
RUN /usr/local/bin/python -m pip uninstall --yes --quiet pip setuptools wheel \
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
