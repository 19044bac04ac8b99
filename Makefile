# Two commands do all the set-up on a fresh Debian machine with Python 3.11:
#   make demo   installs everything and crawls the bundled sample site
#   make test   installs everything and runs lint, type checks and the whole test suite
PYTHON ?= python3
UV_VERSION := 0.13.9
TOOLS := .tools
UV := $(TOOLS)/bin/uv
VENV := .venv
export UV_PYTHON := $(shell command -v $(PYTHON))
export UV_PYTHON_DOWNLOADS := never
export UV_LINK_MODE := copy

.PHONY: install demo test lint typecheck unit clean help

help:
	@echo "make demo    - install and crawl the bundled sample site"
	@echo "make test    - install, lint, type-check and run the whole test suite"
	@echo "make lint    - ruff check + format check"
	@echo "make typecheck - mypy --strict on crawler/ and processors/"

$(UV):
	$(PYTHON) -m venv $(TOOLS)
	$(TOOLS)/bin/pip install --quiet --disable-pip-version-check "uv==$(UV_VERSION)"

$(VENV)/.synced: $(UV) pyproject.toml uv.lock
	$(UV) sync --frozen --quiet
	touch $@

install: $(VENV)/.synced

demo: install
	$(VENV)/bin/crawler demo

lint: install
	$(VENV)/bin/ruff check crawler processors tests
	$(VENV)/bin/ruff format --check crawler processors tests

typecheck: install
	$(VENV)/bin/mypy crawler processors

unit: install
	$(VENV)/bin/pytest -q tests/unit

test: install lint typecheck
	$(VENV)/bin/pytest -q

clean:
	rm -rf $(VENV) $(TOOLS) .mypy_cache .ruff_cache .pytest_cache
