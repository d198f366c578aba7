# Included by runtime/Makefile and proxies/Makefile.
# Every MPI whose compiler wrapper is installed (read when this make starts,
# which the top-level Makefile runs after installing the packages).
FLAVOURS ?= $(strip $(if $(wildcard /usr/bin/mpicc.openmpi),openmpi) $(if $(wildcard /usr/bin/mpicc.mpich),mpich))
ifeq ($(FLAVOURS),)
ifneq ($(filter-out check clean,$(or $(MAKECMDGOALS),all)),)
$(error no MPI found: neither /usr/bin/mpicc.openmpi nor /usr/bin/mpicc.mpich exists (run scripts/setup-system.sh core))
endif
endif
