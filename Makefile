# Two commands do all the set-up on a fresh Debian machine with Python 3.11:
#   make demo   installs everything and crawls the bundled sample site
#   make test   installs everything and runs lint, type checks, the docs' build and link check and
#               the whole test suite
PYTHON ?= python3
UV_VERSION := 0.13.9
TOOLS := .tools
UV := $(TOOLS)/bin/uv
VENV := .venv
REPLAY_VENV := .replay-venv
export UV_PYTHON := $(shell command -v $(PYTHON))
export UV_PYTHON_DOWNLOADS := never
export UV_LINK_MODE := copy

.PHONY: install demo test test-stress lint typecheck unit docs clean help bench-warc bench-frontier \
	bench-extract bench-crawl bench-crawl-setup bench-crawl-profile bench-scale bench-crawl-tls \
	bench-index bench-replay bench-dedup bench-documents bench-browser bench-web \
	bench-frontier-scale bench-recrawl bench-digest-index bench-shared-tallies bench-workers \
	bench-workers-store

help:
	@echo "make demo    - install and crawl the bundled sample site"
	@echo "make test    - install, lint, type-check and run the whole test suite (TEST_WORKERS=3"
	@echo "               pytest-xdist processes; TEST_WORKERS=0 for one)"
	@echo "make test-stress - the whole test suite 5 times in a row while busy processes hold"
	@echo "                   every CPU; every round must pass (4-9 min a round on 2 CPUs)"
	@echo "make lint    - ruff check + format check"
	@echo "make docs    - the documentation site into site/ (mkdocs build --strict) and a check that"
	@echo "               every relative link and #anchor of docs/*.md and README.md resolves"
	@echo "make typecheck - mypy --strict on crawler/ and processors/"
	@echo "make bench-warc - WARC write throughput on a realistic mix"
	@echo "make bench-extract - ExtractorHTML pages/s and links/s on python3-doc's HTML"
	@echo "make bench-documents - ExtractorPDF (in thread vs worker), ExtractorXML, body-rule cost"
	@echo "make bench-frontier - frontier throughput, RSS, Bloom filter, queue policies (~15 min)"
	@echo "make bench-frontier-scale - frontier at 10^7 URIs / 10^6 queues: rates, RSS, disk, kill -9 resume (hours)"
	@echo "make bench-dedup - WARC bytes of a recrawl deduplicated against the first crawl's index"
	@echo "make bench-recrawl - a recrawl with 304s: URLs reached, WARC bytes, pages/s, CPU per page"
	@echo "make bench-digest-index - digest index: bytes per digest (LevelDB, Redis), cost per fetch"
	@echo "make bench-shared-tallies - quotas, trap budgets, logins in Redis: round trips, CPU per URI"
	@echo "make bench-workers - one process vs --workers 1/2 on Redis, back to back: fetches/s, CPU"
	@echo "                    per fetch of each process, Redis commands per fetch (~15 min)"
	@echo "make bench-workers-store - claim+finish cost: Redis (TCP, unix socket) vs SQLite WAL, LMDB"
	@echo "make bench-scale - Redis frontier: 1 vs 2 workers, memory per URL/queue, claims/s (~10 min)"
	@echo "make bench-crawl - crawler vs Scrapy, wget2, wget on nginx-served corpora (~30 min;"
	@echo "                    BENCH_RUNS=1 BENCH_PAGES=2000 for a quick look; see bench/RESULTS.md)"
	@echo "make bench-ratelimit - adaptive pace vs a rate-limited server, R = 10/25/100 (~15 min)"
	@echo "make bench-crawl-profile - py-spy profile of the crawler on the generated corpus"
	@echo "make bench-crawl-tls - the crawler over HTTP vs HTTPS: pages/s, CPU and TLS connections"
	@echo "                    per page, handshake vs per-request TLS cost (see bench/RESULTS.md)"
	@echo "make bench-index - CDXJ indexing CPU as a share of the crawl's CPU"
	@echo "make bench-replay - every archived sample-site page through pywb in Chromium"
	@echo "make bench-media - media site: browser's media requests live vs WARC, replay plays"
	@echo "make image   - the container images localhost/crawler:latest and localhost/crawler-redis:bookworm"
	@echo "make test-image - build the image, crawler demo inside it, two workers on Redis in it"
	@echo "make bench-web - 10,000 hosts over TLS, DNS from dnsmasq, politeness on (~12 min;"
	@echo "                    BENCH_WEB_ARGS='--minutes 3' for less; see bench/RESULTS.md)"

$(UV):
	$(PYTHON) -m venv $(TOOLS)
	$(TOOLS)/bin/pip install --quiet --disable-pip-version-check "uv==$(UV_VERSION)"

# Bytecode compiled ahead: where PYTHONDONTWRITEBYTECODE is set, every start would otherwise
# compile ~600 modules again (about half of a crawl's start-up CPU).
$(VENV)/.synced: $(UV) pyproject.toml uv.lock
	$(UV) sync --frozen --quiet --compile-bytecode
	touch $@

install: $(VENV)/.synced $(REPLAY_VENV)/.synced
	$(VENV)/bin/python -m compileall -q crawler processors

# pywb (`crawler replay`) and wacz (`wacz validate`) in their own virtualenv, pinned in
# conf/replay-requirements.txt: pywb pins redis 2.x (the crawler needs redis>=5) and brings gevent.
# --python names the venv's interpreter: UV_PYTHON (exported above) would otherwise win.
$(REPLAY_VENV)/.synced: $(UV) conf/replay-requirements.txt
	test -x $(REPLAY_VENV)/bin/python || $(UV) venv --quiet $(REPLAY_VENV)
	$(UV) pip sync --quiet --compile-bytecode --python $(REPLAY_VENV)/bin/python \
		conf/replay-requirements.txt
	touch $@

demo: install
	$(VENV)/bin/crawler demo

lint: install
	$(VENV)/bin/ruff check crawler processors tests bench
	$(VENV)/bin/ruff format --check crawler processors tests

typecheck: install
	$(VENV)/bin/mypy crawler processors

unit: install
	$(VENV)/bin/pytest -q tests/unit

# The documentation site (mkdocs.yml, docs/) into site/; its output only when the build fails
# (--strict: a warning fails it). Then every relative link and #anchor of README.md,
# ARCHITECTURE.md and docs/*.md, including links to the repository's files outside docs/.
docs: install
	@out=$$($(VENV)/bin/mkdocs build --strict 2>&1) || { echo "$$out"; exit 1; }
	$(VENV)/bin/python tests/support/doc_links.py

# The suite in TEST_WORKERS pytest-xdist processes (a test file stays in one of them: pyproject's
# --dist loadfile); most tests wait on sockets, servers and subprocesses, not on the CPU.
# TEST_WORKERS=0 runs it in this one process.
TEST_WORKERS ?= 3
test: install lint typecheck docs
	command -v redis-server >/dev/null || (apt-get update && apt-get install -y redis-server)
	command -v chromium >/dev/null || (apt-get update && apt-get install -y chromium)
	command -v prometheus >/dev/null || (apt-get update && \
		DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends prometheus)
	command -v ffmpeg >/dev/null || (apt-get update && apt-get install -y ffmpeg)
	$(VENV)/bin/pytest -q -n $(TEST_WORKERS)

# The suite on a machine with no CPU to spare: catches tests that depend on the machine's speed,
# on how work splits over threads or workers, or on races an idle machine always wins.
# STRESS_ROUNDS=N changes the number of rounds; see tests/stress.sh.
test-stress: install
	command -v redis-server >/dev/null || (apt-get update && apt-get install -y redis-server)
	command -v chromium >/dev/null || (apt-get update && apt-get install -y chromium)
	command -v ffmpeg >/dev/null || (apt-get update && apt-get install -y ffmpeg)
	tests/stress.sh

bench-warc: install
	$(VENV)/bin/python bench/warc_write.py

bench-extract: install
	$(VENV)/bin/python bench/extract_html.py

bench-documents: install
	$(VENV)/bin/python bench/extract_documents.py

bench-frontier: install
	$(VENV)/bin/python bench/frontier.py

# The LevelDB frontier at 10^7+ URIs over 10^6 queues, no fetching; sizes via FSCALE_ARGS.
FSCALE_ARGS ?= --discovered 1e7 --queued 1e6 --queues 1e6 --kill-at 1e6
bench-frontier-scale: install
	$(VENV)/bin/python bench/frontier_scale.py $(FSCALE_ARGS)

bench-dedup: install
	$(VENV)/bin/python bench/recrawl_dedup.py

bench-recrawl: install
	$(VENV)/bin/python bench/recrawl.py
bench-digest-index: install
	command -v redis-server >/dev/null || (apt-get update && apt-get install -y redis-server)
	$(VENV)/bin/python bench/digest_index.py

bench-shared-tallies: install
	command -v redis-server >/dev/null || (apt-get update && apt-get install -y redis-server)
	$(VENV)/bin/python bench/shared_tallies.py

.PHONY: bench-cookies
bench-cookies: install
	$(VENV)/bin/python bench/cookies.py

bench-browser: install
	command -v chromium >/dev/null || (apt-get update && apt-get install -y chromium)
	$(VENV)/bin/python bench/browser.py

bench-scale: install
	command -v redis-server >/dev/null || (apt-get update && apt-get install -y redis-server)
	command -v nginx >/dev/null || (apt-get update && apt-get install -y nginx)
	$(VENV)/bin/python bench/scale.py

# Both cores on one machine: the same crawl as one process and as --workers 1 and 2 on Redis,
# alternating (BENCH_WORKERS_ARGS="--pages 3000 --rounds 1" for a quick look, "--profile 20" adds
# py-spy on a worker). bench-workers-store: the bench-only prototype of an embedded store shared by
# processes (lmdb in the bench virtualenv only).
BENCH_WORKERS_ARGS ?=
bench-workers: install
	command -v redis-server >/dev/null || (apt-get update && apt-get install -y redis-server)
	command -v nginx >/dev/null || (apt-get update && apt-get install -y nginx)
	$(VENV)/bin/python bench/workers_scale.py $(BENCH_WORKERS_ARGS)

bench-workers-store:
	command -v redis-server >/dev/null || (apt-get update && apt-get install -y redis-server)
	test -x .bench-venv/bin/python || $(PYTHON) -m venv .bench-venv
	.bench-venv/bin/pip install --quiet --disable-pip-version-check "lmdb==2.0.0" "redis==8.1.0" \
		"hiredis==3.5.0" "py-spy==0.4.3"
	.bench-venv/bin/python bench/claim_store_proto.py
	.bench-venv/bin/python bench/claim_store_proto.py --crash 5

# Archives (crawler/archive/): indexing CPU against the crawl's (needs nginx), and every
# archived page of the sample site replayed through pywb in Chromium.
bench-index: install
	command -v nginx >/dev/null || (apt-get update && apt-get install -y nginx)
	$(VENV)/bin/python bench/index_cost.py

bench-replay: install
	$(VENV)/bin/python bench/replay_pages.py

# Media capture: what Chromium requests while playing the media test site live vs what the WARC
# holds, and every video played back from the archive through pywb.
.PHONY: bench-media
bench-media: install
	command -v ffmpeg >/dev/null || (apt-get update && apt-get install -y ffmpeg)
	$(VENV)/bin/python bench/media_capture.py

# The adaptive pace against a token-bucket server (R = 10, 25, 100/s, burst 5), one queue and four
# per host, and two workers on Redis (BENCH_RATELIMIT_ARGS="--seconds 20" for a quicker look).
.PHONY: bench-ratelimit
bench-ratelimit: install
	command -v redis-server >/dev/null || (apt-get update && apt-get install -y redis-server)
	$(VENV)/bin/python bench/ratelimit.py --redis $(BENCH_RATELIMIT_ARGS)

clean:
	rm -rf $(VENV) $(REPLAY_VENV) $(TOOLS) .mypy_cache .ruff_cache .pytest_cache

# The crawl benchmark (bench/crawl/): Debian packages only if missing, Scrapy and py-spy in their
# own virtualenv.
BENCH_VENV := .bench-venv
BENCH_APT := nginx wget wget2 python3-doc

bench-crawl-setup: install
	@missing=""; for p in $(BENCH_APT); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y $$missing; fi
	test -x $(BENCH_VENV)/bin/scrapy -a -x $(BENCH_VENV)/bin/py-spy || { $(PYTHON) -m venv $(BENCH_VENV) && \
		$(BENCH_VENV)/bin/pip install --quiet --disable-pip-version-check "scrapy==2.19.0" "py-spy==0.4.3"; }

bench-crawl: bench-crawl-setup
	$(VENV)/bin/python bench/crawl/run_bench.py

bench-crawl-profile: bench-crawl-setup
	$(VENV)/bin/python bench/crawl/profile_crawl.py

# TLS cost per page: the crawler over HTTP and HTTPS on the generated site (nginx, openssl CLI).
bench-crawl-tls: bench-crawl-setup
	$(VENV)/bin/python bench/crawl/tls_bench.py

# The synthetic web (bench/web/): 10,000 *.web.test hosts served by nginx over TLS and resolved by
# dnsmasq on 127.0.0.1:5353; Debian packages only if missing (dnsmasq-base: the binary, no
# system service). BENCH_WEB_ARGS passes options to run_web.py (--minutes, --hosts, --threads).
WEB_APT := nginx dnsmasq-base openssl
BENCH_WEB_ARGS ?=

bench-web: install
	@missing=""; for p in $(WEB_APT); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y $$missing; fi
	$(VENV)/bin/python bench/web/run_web.py $(BENCH_WEB_ARGS)

# The container image (Dockerfile) without a registry: a Debian bookworm base made with
# debootstrap, the crawler's wheel and every dependency's wheel (so the build needs no PyPI), and
# podman with runc, cgroupfs and no default ulimits (deploy/image/containers.conf).
IMAGE ?= localhost/crawler:latest
IMAGE_BASE ?= localhost/crawler-base:bookworm
IMAGE_REDIS ?= localhost/crawler-redis:bookworm
IMAGE_APT := podman buildah debootstrap runc uidmap fuse-overlayfs slirp4netns
# compose.yaml's runner for the smoke test (podman 4.3 has no `podman compose`) and the CNI
# plugin that lets services find each other by name (redis://redis:6379).
COMPOSE_APT := podman-compose golang-github-containernetworking-plugin-dnsname
export CONTAINERS_CONF := $(CURDIR)/deploy/image/containers.conf

image: $(UV)
	@missing=""; for p in $(IMAGE_APT); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $$missing; fi
	BASE=$(IMAGE_BASE) deploy/image/build-base.sh
	rm -rf dist && $(UV) build --wheel --out-dir dist --quiet
	$(PYTHON) -m pip download --quiet --disable-pip-version-check --dest dist/wheels dist/crawler-*.whl "async-timeout>=4.0.3"
	for sdist in dist/wheels/*.tar.gz; do [ -e "$$sdist" ] || continue; \
		$(PYTHON) -m pip wheel --quiet --no-deps -w dist/wheels "$$sdist" && rm "$$sdist"; done
	podman build --network host --build-arg BASE=$(IMAGE_BASE) -t $(IMAGE) .
	podman build --network host --build-arg BASE=$(IMAGE_BASE) -t $(IMAGE_REDIS) \
		-f deploy/image/redis.Containerfile deploy/image
	podman image inspect $(IMAGE) $(IMAGE_REDIS) --format 'image {{.RepoTags}}: {{.Size}} bytes'

test-image: image install
	@missing=""; for p in $(COMPOSE_APT); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $$missing; fi
	CRAWLER_IMAGE=$(IMAGE) REDIS_IMAGE=$(IMAGE_REDIS) $(VENV)/bin/pytest -q -n 0 tests/image
