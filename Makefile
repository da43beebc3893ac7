# RecWorld: two commands from a fresh clone.
#   make demo   fetch ML-100K, build the suite, evaluate baselines and a local LLM, write a report
#   make test   lint, type-check and run the whole test suite (slow and model tests included)
#   make test-fast   the inner loop: skips tests marked slow, model or browser
#   (both run in parallel, then the tests marked timing alone: they measure time or memory)
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DEMO_DIR ?= demo-out
DEMO_LIMIT ?= 40

.PHONY: install demo test test-tools test-fast smoke lint typecheck bench clean distclean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	# torch 2.13.0 is the CPU wheel on this disk; install it first so nothing pulls a CUDA build.
	$(BIN)/pip install --quiet torch==2.13.0
	# llama-cpp-python builds from source once, portably (see the script), into .wheels/.
	bash scripts/build-llama.sh $(BIN)/pip
	$(BIN)/pip install --quiet -e '.[dev,local,embed,memory,privacy]'
	$(BIN)/pip install --quiet --no-deps anonymeter==1.1.0  # its metadata pins numpy<1.27 (see pyproject)
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(BIN)/python scripts/demo.py --out $(DEMO_DIR) --limit $(DEMO_LIMIT)

lint: $(STAMP)
	$(BIN)/ruff check src tests bench scripts
	$(BIN)/ruff format --check src tests bench scripts

typecheck: $(STAMP)
	$(BIN)/mypy

# One clear line, before any test runs, if the local model cannot load and decode a token.
smoke: $(STAMP)
	$(BIN)/python scripts/smoke_model.py

# Chromium, and the harness venv (built in the background while lint and mypy run), then every
# test: one pytest-xdist worker per core (a module stays on one worker, so its fixtures are built
# once), and then, alone, the tests that measure time or memory.
test: $(STAMP) test-tools lint typecheck smoke
	$(BIN)/pytest -q -n auto --dist loadscope -m "not timing"
	$(BIN)/pytest -q -m timing

test-tools: $(STAMP)
	bash scripts/ensure-test-tools.sh $(BIN)/python

# The inner loop: one worker per core, without the slow, model and browser tests.
test-fast: $(STAMP)
	$(BIN)/pytest -q -n auto --dist loadscope -m "not slow and not model and not browser and not timing"
	$(BIN)/pytest -q -m "timing and not slow and not model and not browser"

bench: $(STAMP)
	for b in bench/bench_*.py; do echo "== $$b"; $(BIN)/python $$b || exit 1; done

clean:
	rm -rf $(VENV) $(DEMO_DIR) .pytest_cache .mypy_cache .ruff_cache
	# .wheels/ (the portable llama-cpp-python build) and tests/.data/ (fetched ML-100K) are kept: make distclean

distclean: clean
	rm -rf .wheels tests/.data
