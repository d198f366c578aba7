#!/bin/sh
# Runs one rank with mpiP's library preloaded before scalewise's, to establish
# the goldens: mpiP's MPI_x wrappers call PMPI_x, which resolves to
# scalewise's (it exports both names), so both count the same calls.  In the
# other order scalewise would call the MPI library's PMPI_x past mpiP.
export LD_PRELOAD="$MPIP_LIBRARY${LD_PRELOAD:+:$LD_PRELOAD}"
exec "$@"
