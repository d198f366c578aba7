# scalewise: `make demo` and `make test` each do all set-up first (packages, venv, C build).
SHELL := /bin/bash
.DEFAULT_GOAL := help

VENV   := .venv
VPY    := $(CURDIR)/$(VENV)/bin/python
BUILD  := $(CURDIR)/build
# One runtime library and one set of proxy apps per MPI installed side by side.
FLAVOURS := $(strip $(if $(wildcard /usr/bin/mpicc.openmpi),openmpi) $(if $(wildcard /usr/bin/mpicc.mpich),mpich))
export OMPI_ALLOW_RUN_AS_ROOT := 1
export OMPI_ALLOW_RUN_AS_ROOT_CONFIRM := 1

.PHONY: help setup system venv runtime proxies demo test bench clean

help:
	@echo "make demo   set up, then profile the bundled proxy apps and write the report"
	@echo "make test   set up, then run every test"
	@echo "make bench  set up, then run the benchmarks in bench/"

system:
	@scripts/setup-system.sh core browser slurm

$(VENV)/.stamp: pyproject.toml
	@test -x $(VPY) || python3 -m venv $(VENV)
	$(VPY) -m pip install -q --upgrade pip
	$(VPY) -m pip install -q -e '.[test]'
	@touch $@

venv: system $(VENV)/.stamp

runtime: system venv
	@$(MAKE) --no-print-directory -C runtime BUILD=$(BUILD) PY=$(VPY) FLAVOURS="$(FLAVOURS)"

proxies: system
	@$(MAKE) --no-print-directory -C proxies BUILD=$(BUILD) FLAVOURS="$(FLAVOURS)"

setup: system venv runtime proxies

demo: setup
	@scripts/demo.sh

test: setup
	@$(MAKE) --no-print-directory -C runtime BUILD=$(BUILD) PY=$(VPY) FLAVOURS="$(FLAVOURS)" check
	$(VPY) -m pytest -q -n 2 tests

bench: setup
	@bench/run-all.sh

clean:
	rm -rf $(BUILD) $(VENV) out test-artifacts
