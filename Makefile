# One command to run askbridge, one to test it. Both create .venv on first use.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: run test lint typecheck unit site docs pictures bench install dev clean FORCE

run: $(VENV)/.installed
	$(BIN)/askbridge serve

test: $(VENV)/.installed-dev lint typecheck site unit

lint: $(VENV)/.installed-dev
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: $(VENV)/.installed-dev
	$(BIN)/mypy

# The tests run on PYTEST_WORKERS processes (pytest-xdist; 0 runs them in this one), then the
# ones marked serial alone: their assertions need a machine not busy with other tests.
# PYTEST_ARGS narrows both runs; one of them left without a test (pytest's exit code 5) passes,
# but both fails: PYTEST_ARGS that match no test must not look like a green run.
PYTEST_WORKERS ?= 2

unit: $(VENV)/.installed-dev
	$(BIN)/pytest -n $(PYTEST_WORKERS) -m "not serial" $(PYTEST_ARGS); parallel=$$?; \
	[ $$parallel -eq 0 ] || [ $$parallel -eq 5 ] || exit $$parallel; \
	$(BIN)/pytest -m serial $(PYTEST_ARGS); serial=$$?; \
	[ $$serial -eq 0 ] || [ $$serial -eq 5 ] || exit $$serial; \
	if [ $$parallel -eq 5 ] && [ $$serial -eq 5 ]; then \
		echo "make unit: no test matches PYTEST_ARGS=$(PYTEST_ARGS)" >&2; exit 5; fi

# The documentation site (docs/, mkdocs.yml): `make docs` serves it on http://127.0.0.1:8000 and
# rebuilds as pages change; `make site` builds it into site/ with --strict, as `make test` does,
# so a broken link, a page left out or a setting without its comment in .env.example fails.
# The reference's generated parts come from the code (tests/docs/); nothing reaches the network.
MKDOCS := NO_MKDOCS_2_WARNING=1 $(BIN)/python -m mkdocs

site: $(VENV)/.installed-dev
	$(MKDOCS) build --strict --quiet

docs: $(VENV)/.installed-dev
	$(MKDOCS) serve

# The web page's screenshots (headless Chromium) and the Slack and Discord messages askbridge
# sends, captured from the emulators, under docs/images/; commit what changes.
pictures: $(VENV)/.installed-dev
	$(BIN)/python -m tests.docs.pictures

# The benchmark of record (3-10 min on two cores): click-to-agent latency and bursts through Slack
# next to a bare slack-bolt app, interleaved click by click (and burst by burst) in ABBA order and,
# to compare, round by round; on SQLite and PostgreSQL; creates, memory, start-up. Options:
# make bench BENCH_ARGS="--json bench.json"; "--stages" adds where each click's time goes
# (python -m tests.bench --help lists them all).
bench: $(VENV)/.installed-dev
	$(BIN)/python -m tests.bench $(BENCH_ARGS)

install: $(VENV)/.installed
dev: $(VENV)/.installed-dev

$(BIN)/python:
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' || \
		{ echo "askbridge needs Python 3.11 or newer; set PYTHON=/path/to/python3.11"; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# A strict editable install: build/__editable__.* links each file of the package to core/,
# adapters/, bots/ or askbridge/, and a .pth file names that folder, which mypy and pyright in
# another project follow (they cannot follow the default mode's import hook). A file added or
# removed needs new links: $(VENV)/.files lists the package's files and changes only with them.
# Each make writes its own list first (.files.<pid>): the tests run `make run` in the checkout
# several at a time, and a shared temporary file would be cut short or removed under another.
# setuptools warns in a box that build/ holds the links: wanted here, and said above.
EDITABLE := --config-settings editable_mode=strict
QUIET_EDITABLE := PYTHONWARNINGS="ignore:Editable installation"

$(VENV)/.files: FORCE $(BIN)/python
	@find askbridge core adapters bots -type f ! -path '*/__pycache__/*' ! -name '.*' ! -name '*~' \
		| sort > $@.$$$$; \
	if cmp -s $@.$$$$ $@; then rm $@.$$$$; else mv $@.$$$$ $@; fi

$(VENV)/.installed: $(BIN)/python pyproject.toml setup.py $(VENV)/.files
	$(QUIET_EDITABLE) $(BIN)/python -m pip install --quiet $(EDITABLE) -e .
	@touch $@

$(VENV)/.installed-dev: $(BIN)/python pyproject.toml setup.py $(VENV)/.files
	$(QUIET_EDITABLE) $(BIN)/python -m pip install --quiet $(EDITABLE) -e '.[dev]'
	@touch $@ $(VENV)/.installed

FORCE:

clean:
	rm -rf $(VENV) build site .mypy_cache .pytest_cache .ruff_cache
