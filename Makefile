# RecWorld: two commands from a fresh clone.
#   make demo   fetch ML-100K, build the suite, evaluate baselines and a local LLM, write a report
#   make test   lint, type-check and run the test suite
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DEMO_DIR ?= demo-out
DEMO_LIMIT ?= 20

.PHONY: install demo test lint typecheck bench clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	# torch 2.13.0 is the CPU wheel on this disk; install it first so nothing pulls a CUDA build.
	$(BIN)/pip install --quiet torch==2.13.0
	# llama-cpp-python builds from source once (about 10 minutes on 2 cores); pip caches the wheel.
	CMAKE_ARGS="-DLLAVA_BUILD=OFF" $(BIN)/pip install --quiet -e '.[dev,local,embed]'
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(BIN)/python scripts/demo.py --out $(DEMO_DIR) --limit $(DEMO_LIMIT)

lint: $(STAMP)
	$(BIN)/ruff check src tests bench scripts
	$(BIN)/ruff format --check src tests bench scripts

typecheck: $(STAMP)
	$(BIN)/mypy

test: $(STAMP) lint typecheck
	bash scripts/ensure-test-tools.sh
	$(BIN)/pytest -q

bench: $(STAMP)
	for b in bench/bench_*.py; do echo "== $$b"; $(BIN)/python $$b || exit 1; done

clean:
	rm -rf $(VENV) $(DEMO_DIR) .pytest_cache .mypy_cache .ruff_cache
