# The two front-door commands: `make demo` (the main job) and `make check` (every test).
# Both set up what they need on a fresh machine: a virtual environment and the cached binaries
# (see tools/build-binaries.sh): the demo only what it runs (the control plane, and the images),
# the tests every component. Each slow step prints what it builds and how long it takes.
SHELL := /bin/bash
VENV := .venv
PY := $(VENV)/bin/python

.PHONY: demo check check-matrix lint test unit integration e2e binaries cluster-down bench soak lock \
	upgrade-kit instructions instructions-baseline memory e2e-upstream

# Every dependency comes from the lock file, hashes checked; the project and the sample plugin
# package are then installed without resolving anything.
# The sample third-party plugin package (tests/plugins/sample_plugin) is the one the tests load
# through its entry points.
$(VENV)/.installed: pyproject.toml requirements/dev.lock tests/plugins/sample_plugin/pyproject.toml
	@tools/progress.sh run venv "setting up the Python environment" $(VENV) sh -exc '\
	  python3 -m venv $(VENV); \
	  $(PY) -m pip install --quiet --require-hashes --no-deps -r requirements/dev.lock; \
	  $(PY) -m pip install --quiet --no-deps --no-build-isolation -e .; \
	  $(PY) -m pip install --quiet --no-deps --no-build-isolation -e tests/plugins/sample_plugin'
	touch $@

# Regenerates the lock files from pyproject.toml (after changing a dependency).
lock: $(VENV)/.installed
	$(VENV)/bin/uv pip compile pyproject.toml $(LOCK_FLAGS) -o requirements/runtime.lock
	$(VENV)/bin/uv pip compile requirements/build.in $(LOCK_FLAGS) -o requirements/build.lock
	$(VENV)/bin/uv pip compile pyproject.toml requirements/build.in --extra dev $(LOCK_FLAGS) \
	  -o requirements/dev.lock
LOCK_FLAGS = --quiet --generate-hashes --universal --python-version 3.11

# Every component the tests use; the demo builds only what it runs (tools/demo.sh).
binaries:
	tools/build-binaries.sh >/dev/null

demo: $(VENV)/.installed
	tools/demo.sh

check: lint test

lint: $(VENV)/.installed
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy
	$(VENV)/bin/lint-imports

test: $(VENV)/.installed binaries
	tools/host-packages.sh instructions
	$(VENV)/bin/pytest

unit: $(VENV)/.installed
	$(VENV)/bin/pytest -m "not integration and not e2e and not instructions"

integration: $(VENV)/.installed binaries
	$(VENV)/bin/pytest -m integration

# What is shipped, on a real node (needs root): images built here, manifests applied.
e2e: $(VENV)/.installed binaries
	$(VENV)/bin/pytest -m e2e

cluster-down:
	tools/cluster.sh down

# The side-by-side suites against every other Kubernetes release the runtime emulates (the
# newest patch of each supported minor; `make check` runs the pinned one), each on a control
# plane of that release built once into the cache. MATRIX="v1.35.4" runs just those.
MATRIX ?= $(shell $(PY) -c 'from scheduler_runtime.config.features import RELEASE; print(*RELEASE.values())' 2>/dev/null)
PINNED_KUBERNETES = $(shell sed -n 's/^KUBERNETES_VERSION=//p' tools/versions.env)
PARITY_SUITES = $(sort $(wildcard tests/integration/*parity*.py tests/integration/*upstream*.py) \
  tests/integration/test_control_plane.py tests/integration/test_runtime_emulated_version.py)
# What 1.35 has nothing of to compare: upstream's PodGroups (its workload API is the alpha
# v1alpha1 Workload) and nodes' declared features (its API server drops them).
SUITES_FROM_1_36 = tests/integration/test_gangs_parity.py \
  tests/integration/test_gang_claims_parity.py tests/integration/test_node_declared_features_parity.py
check-matrix: $(VENV)/.installed
	set -e; for version in $(filter-out $(PINNED_KUBERNETES),$(MATRIX)); do \
	  suites="$(PARITY_SUITES)"; \
	  case $$version in v1.35.*) suites="$(filter-out $(SUITES_FROM_1_36),$(PARITY_SUITES))";; esac; \
	  echo "== the parity suites on Kubernetes $$version"; \
	  KUBE_VERSION=$$version tools/build-binaries.sh >/dev/null; \
	  KUBE_VERSION=$$version $(VENV)/bin/pytest -m integration $$suites; \
	done

# The scheduler benchmark (not a test): BENCH_ARGS="--quick" for a one-minute run;
# see docs/benchmarks.md.
bench: $(VENV)/.installed binaries
	$(PY) -m benchmarks $(BENCH_ARGS)

# Instructions the runtime executes per pod, counted by valgrind on fixed workloads (not
# timed, so the machine's load does not move them): the table against
# benchmarks/instructions.json, failing past 5% more; INSTRUCTIONS_ARGS="--profile basic"
# prints where a workload's instructions go. `make instructions-baseline` rewrites the file.
instructions: $(VENV)/.installed
	tools/host-packages.sh instructions
	$(PY) -m benchmarks.instructions $(INSTRUCTIONS_ARGS)

instructions-baseline: $(VENV)/.installed
	tools/host-packages.sh instructions
	$(PY) -m benchmarks.instructions --baseline

# Bytes the scheduler keeps per node and per pod (tracemalloc) at 500 and 5,000 nodes;
# MEMORY_ARGS="--top 15" also prints where they were allocated.
memory: $(VENV)/.installed
	$(PY) -m benchmarks.memory $(MEMORY_ARGS)

# An hour of pod churn against the runtime, then a check that nothing leaked (not a test):
# SOAK_ARGS="--minutes 5" for a short run; see docs/reliability.md.
soak: $(VENV)/.installed binaries
	$(PY) -m benchmarks.soak $(SOAK_ARGS)

# Kubernetes' own sig-scheduling e2e specs of the pinned release (KUBE_VERSION picks another)
# against the runtime and, as the control, the release's kube-scheduler, each on a cluster of
# its own (not a test): the table, failing on a spec only the runtime fails. `make check` runs
# the [Conformance] ones. E2E_UPSTREAM_ARGS="--focus REGEX" runs fewer; see docs/development.md.
e2e-upstream: $(VENV)/.installed binaries
	$(PY) -m benchmarks.e2e_upstream $(E2E_UPSTREAM_ARGS)

# What differs between a new Kubernetes release and the newest one the runtime knows (not a
# test): gates, default plugins, pkg/scheduler, API versions, the parity suites. See
# docs/development.md#a-new-kubernetes-release; UPGRADE_KIT_ARGS="--no-parity" for a short run.
upgrade-kit: $(VENV)/.installed
	$(if $(KUBE_VERSION),,$(error KUBE_VERSION=v1.MM.P names the release, e.g. make upgrade-kit KUBE_VERSION=v1.38.0-beta.0))
	$(PY) -m benchmarks.upgrade_kit $(KUBE_VERSION) $(UPGRADE_KIT_ARGS)

# The container image holding the operator and the runtime (its name and tag come from
# operator/scheduler_operator/version.py), with the upstream engine's and the pause image, built
# here from Debian packages; loaded into the local cluster's real node when one runs.
# BASE=python:3.11.11-slim-bookworm builds on the published base instead.
.PHONY: images push
images:
	tools/images.sh build
	tools/node.sh load

push: images
	podman push $$(tools/images.sh names | head -1)
