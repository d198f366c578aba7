/* A library whose MPI_T cannot start: preloaded after libscalewise, its
 * PMPI_T_init_thread is the one the profiler finds next (dlsym RTLD_NEXT)
 * and fails as a library without MPI_T support would. */
#include <mpi.h>

int PMPI_T_init_thread(int required, int *provided)
{
    (void)required;
    *provided = MPI_THREAD_SINGLE;
    return MPI_T_ERR_CANNOT_INIT;
}
