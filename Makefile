# scalewise: `make demo` and `make test` each do all set-up first (packages, venv, C build).
SHELL := /bin/bash
.DEFAULT_GOAL := help

VENV   := .venv
VPY    := $(CURDIR)/$(VENV)/bin/python
BUILD  := $(CURDIR)/build
# The MPI flavours (one runtime library and one set of proxy apps per MPI
# installed side by side) are found by the sub-makes in runtime/ and proxies/,
# which start after `system` has installed the packages: a list computed here,
# when this file is parsed, would miss MPIs installed by this very run.
export OMPI_ALLOW_RUN_AS_ROOT := 1
export OMPI_ALLOW_RUN_AS_ROOT_CONFIRM := 1
# The set-up steps that do not wait on each other run side by side (each
# prints its line when done, scripts/step.sh); the test recipe stays in order.
MAKEFLAGS += --jobs=2

.PHONY: help setup system venv runtime replay proxies pypi-mpis demo test validate bench clean

help:
	@echo "make demo   set up, then profile the bundled proxy apps and write the report"
	@echo "make test   set up, then run every test"
	@echo "make validate  set up, install the validation applications (1.2 GB), check their golden counts"
	@echo "make bench  set up, then run the benchmarks in bench/"

STEP := scripts/step.sh

system:
	@$(STEP) "Debian packages" scripts/setup-system.sh core browser slurm cluster

# After the packages (python3-venv), which make -j would otherwise start beside it.
$(VENV)/.stamp: pyproject.toml | system
	@$(STEP) "Python venv" scripts/setup-venv.sh $(VENV)
	@touch $@

venv: system $(VENV)/.stamp

runtime: system venv
	@$(STEP) "profiler runtime" $(MAKE) --no-print-directory -C runtime BUILD=$(BUILD) PY=$(VPY)

proxies: system
	@$(STEP) "proxy apps" $(MAKE) --no-print-directory -C proxies BUILD=$(BUILD)

replay: system
	@$(STEP) "replay engine" $(MAKE) --no-print-directory -C runtime/replay BUILD=$(BUILD)

# The MPIs from PyPI the tests run under (tests/support/pypi_mpis.py): installed
# into the user's cache, scalewise's runtime and proxy apps built for each into
# build/pypi-mpis, so that no test pays for either.
pypi-mpis: system venv
	@$(STEP) "PyPI MPIs for the tests" $(VPY) tests/support/pypi_mpis.py

setup: system venv runtime replay proxies pypi-mpis

demo: setup
	@scripts/demo.sh

test: setup
	@$(STEP) "runtime unit tests" $(MAKE) --no-print-directory -C runtime BUILD=$(BUILD) PY=$(VPY) check
	$(VPY) -m ruff check src tests bench
	$(VPY) -m pytest -q -n 2 -m "not emulated_nodes and not alone and not sweep" tests
	@# Emulated nodes add and remove host network interfaces, which MPI jobs
	@# starting at that moment see vanish (UCX: "No such device"); timings
	@# compared with a real run need the cores to themselves: run these alone.
	$(VPY) -m pytest -q -m "(emulated_nodes or alone) and not sweep" tests

# Real applications from Debian packages against golden counts (validate/,
# docs/validation.md): their packages take 1.2 GB, so only this target installs them.
validate: setup
	@$(STEP) "Debian packages (validation applications)" scripts/setup-system.sh validate
	$(VPY) -m pytest -q validate
	$(VPY) -m pytest -q -m sweep tests

bench: setup
	@bench/run-all.sh

clean:
	rm -rf $(BUILD) $(VENV) out test-artifacts
