# Fresh-machine entry points: `make demo` and `make test` set everything up themselves.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: setup demo test bench clean

$(STAMP): pyproject.toml package.json
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[test,ray]'
	npm install --no-audit --no-fund --silent
	touch $(STAMP)

setup: $(STAMP)

demo: setup
	$(BIN)/mcbuild demo

test: setup
	$(BIN)/python -m pytest -n 2

bench: setup
	for b in bench/*.py; do $(BIN)/python $$b || exit 1; done

clean:
	rm -rf build/* $(VENV) node_modules
