# Fresh-machine entry points: `make demo` and `make test` set everything up themselves.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: setup demo test test-browser bench clean

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

# Headless Chromium on the report and a sample of viewer pages of STUDY (fails on any JS error or
# empty render); installs Debian's chromium if it is missing. SHOTS=docs also saves screenshots.
STUDY ?= build/studies/quick
test-browser: setup
	test -x /usr/bin/chromium || (apt-get update && apt-get install -y chromium)
	$(BIN)/python tests/browser_check.py --study $(STUDY) $(if $(BUILD),--build $(BUILD)) $(if $(SHOTS),--screenshots $(SHOTS))

bench: setup
	for b in bench/*.py; do $(BIN)/python $$b || exit 1; done

clean:
	rm -rf build/* $(VENV) node_modules
