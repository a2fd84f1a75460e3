# The two front-door commands: `make demo` (the main job) and `make check` (every test).
# Both set up what they need on a fresh machine: a virtual environment and the cached
# control-plane binaries (see tools/build-binaries.sh).
SHELL := /bin/bash
VENV := .venv
PY := $(VENV)/bin/python

.PHONY: demo check lint test unit integration binaries cluster-down bench

$(VENV)/.installed: pyproject.toml tests/plugins/sample_plugin/pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	# The sample third-party plugin package the tests load through its entry points.
	$(PY) -m pip install --quiet -e tests/plugins/sample_plugin
	touch $@

binaries:
	tools/build-binaries.sh >/dev/null

demo: $(VENV)/.installed binaries
	tools/demo.sh

check: lint test

lint: $(VENV)/.installed
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy
	$(VENV)/bin/lint-imports

test: $(VENV)/.installed binaries
	$(VENV)/bin/pytest

unit: $(VENV)/.installed
	$(VENV)/bin/pytest -m "not integration"

integration: $(VENV)/.installed binaries
	$(VENV)/bin/pytest -m integration

cluster-down:
	tools/cluster.sh down

# The scheduler benchmark (not a test): BENCH_ARGS="--quick" for a one-minute run;
# see docs/benchmarks.md.
bench: $(VENV)/.installed binaries
	$(PY) -m benchmarks $(BENCH_ARGS)

# The container image holding the operator and the runtime; its name and tag come from
# operator/scheduler_operator/version.py.
IMAGE = $(shell $(PY) -c 'from scheduler_operator.version import IMAGE; print(IMAGE)')

.PHONY: image push
image: $(VENV)/.installed
	docker build -t $(IMAGE) .

push: image
	docker push $(IMAGE)
