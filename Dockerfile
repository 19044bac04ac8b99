# The crawler on Debian bookworm with Debian's chromium: `crawler crawl URL`, workers and the
# console run from it; jobs live on the /jobs volume. Built by `make image` (podman, from a base
# made with debootstrap: BASE=localhost/crawler-base:bookworm); with a registry at hand the
# default base works too: podman build -t crawler .   (after `uv build --wheel -o dist`)
ARG BASE=docker.io/library/debian:bookworm-slim
FROM ${BASE}

# Chromium for browser capture, tini to reap it, fonts so pages render like a desktop's.
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      python3 python3-venv ca-certificates chromium fonts-liberation tini \
 && rm -rf /var/lib/apt/lists/*

# The crawler from its wheel, in a virtualenv of its own. `make image` puts every dependency's
# wheel in dist/wheels/ first, so the build needs no PyPI; without them pip takes PyPI.
COPY dist/ /tmp/dist/
RUN python3 -m venv /opt/crawler \
 && offline="$(test -d /tmp/dist/wheels && echo --no-index --find-links /tmp/dist/wheels)" \
 && /opt/crawler/bin/pip install --no-cache-dir --disable-pip-version-check $offline \
      /tmp/dist/crawler-*.whl \
 && rm -rf /tmp/dist \
 && /opt/crawler/bin/python -m compileall -q /opt/crawler/lib

ENV PATH=/opt/crawler/bin:$PATH \
    CRAWLER_REPLAY_VENV=/jobs/.replay-venv \
    PYTHONUNBUFFERED=1

RUN useradd --create-home --uid 1000 crawler && mkdir /jobs && chown crawler:crawler /jobs
USER crawler
WORKDIR /jobs
VOLUME ["/jobs"]
# The console's port (crawler console --bind 0.0.0.0:8443) and a metrics port (--metrics-port).
EXPOSE 8443 9310

ENTRYPOINT ["tini", "--", "crawler"]
CMD ["--help"]
