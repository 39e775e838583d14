# The two commands of the README's Quickstart. Both are idempotent and need nothing but Python 3.10+.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
PIP    := $(BIN)/python -m pip install --quiet --disable-pip-version-check -c constraints.txt
PYTEST_ARGS ?=

.PHONY: run test install install-test warmup clean

run: $(VENV)/.run-installed
	$(BIN)/tokembed warmup
	$(BIN)/tokembed run recipes/quickstart.yaml

# the kernels are compiled before the tests (in parallel, once: later runs load them from the cache), so that no test
# pays a cold compile inside its own time
test: $(VENV)/.test-installed
	$(BIN)/tokembed warmup
	$(BIN)/python -m pytest $(PYTEST_ARGS)

install: $(VENV)/.run-installed
install-test: $(VENV)/.test-installed

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(VENV)/.run-installed: $(BIN)/python pyproject.toml setup.py constraints.txt
	$(PIP) -e '.[torch,report]'
	touch $@

# the example plugins, one per kind, each its own distribution: the suite runs the contract over them
EXAMPLES := tokembed-reverse tokembed-bm25 tokembed-ppmi tokembed-toklen

$(VENV)/.test-installed: $(BIN)/python pyproject.toml setup.py constraints.txt $(EXAMPLES:%=examples/%/pyproject.toml)
	$(PIP) -e '.[test,torch,report]' $(EXAMPLES:%=-e examples/%)
	touch $@

clean:
	rm -rf $(VENV) build dist *.egg-info runs .pytest_cache
