# Included by runtime/Makefile and proxies/Makefile.
#
# A flavour is one MPI library, built for side by side: its outputs go to
# $(BUILD)/<flavour>/, and it is compiled with $(MPICC_<flavour>) (and Fortran
# with $(MPIFORT_<flavour>), empty when that MPI ships no Fortran wrapper).
#
#   make MPICC=/path/to/mpicc FLAVOURS=<identity>   one MPI named by its wrapper
#   make                                            Debian's two, when installed
#
# scalewise names an MPI by its identity (openmpi-5.0.11, mpich-5.0.2, ...) and
# builds it on first use (src/scalewise/launch/mpis.py); Debian's two keep the
# names `openmpi` and `mpich` and are built here by `make setup`. The default
# list is read when this make starts, which the top-level Makefile runs after
# installing the packages.
ifdef MPICC
ifeq ($(words $(FLAVOURS)),1)
MPICC_$(FLAVOURS) := $(MPICC)
MPIFORT_$(FLAVOURS) := $(MPIFORT)
else
$(error MPICC= needs exactly one name in FLAVOURS= (the directory under $(BUILD) to build into))
endif
endif
MPICC_openmpi ?= mpicc.openmpi
MPICC_mpich ?= mpicc.mpich
MPIFORT_openmpi ?= mpifort.openmpi
MPIFORT_mpich ?= mpifort.mpich
FLAVOURS ?= $(strip $(if $(wildcard /usr/bin/mpicc.openmpi),openmpi) $(if $(wildcard /usr/bin/mpicc.mpich),mpich))
ifeq ($(FLAVOURS),)
ifneq ($(filter-out check clean,$(or $(MAKECMDGOALS),all)),)
$(error no MPI found: neither /usr/bin/mpicc.openmpi nor /usr/bin/mpicc.mpich exists; name one with MPICC=/path/to/mpicc FLAVOURS=<name> (or run scripts/setup-system.sh core))
endif
endif
