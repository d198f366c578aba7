/* The world-size probe: preloaded into runs that are not profiled, it proves
 * how many ranks a launch really started (src/scalewise/launch/probe.py).
 * At MPI_Init every rank writes "rank size host" to its own file in
 * SCALEWISE_PROBE_DIR; a correct launch leaves exactly P files, ranks
 * 0..P-1, all reporting size P.  Both MPI_Init and PMPI_Init are defined
 * (forwarding to the real PMPI_Init) so that Fortran programs whose bindings
 * call the PMPI layer are seen too.  Like the profiler it is not linked
 * against MPI and finds every MPI function with dlsym(RTLD_NEXT), so it loads
 * harmlessly into launchers and shells; it is built per flavour for mpi.h. */
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#ifdef OPEN_MPI
/* MPI_COMM_WORLD is the address of an object in libmpi: referenced weakly,
 * and only after MPI_Init, so processes without MPI can load the probe. */
#pragma weak ompi_mpi_comm_world
#endif

#define SW_EXPORT __attribute__((visibility("default")))

typedef int (*init_fn)(int *, char ***);
typedef int (*init_thread_fn)(int *, char ***, int, int *);
typedef int (*world_query_fn)(MPI_Comm, int *);

/* Rank or size of MPI_COMM_WORLD from the real PMPI function, -1 if absent. */
static int ask_world(const char *pmpi_name)
{
    world_query_fn query = (world_query_fn)dlsym(RTLD_NEXT, pmpi_name);
    int value = -1;
    if (query)
        query(MPI_COMM_WORLD, &value);
    return value;
}

/* The next definition of an init function, or a one-line reason and exit:
 * without it (libmpi loaded in a private scope, a program not linked against
 * MPI) the call would jump to address 0. */
static void *next_init(const char *name)
{
    void *real = dlsym(RTLD_NEXT, name);
    if (!real) {
        fprintf(stderr, "scalewise probe: %s: no MPI library loaded after the probe defines it\n", name);
        _exit(1);
    }
    return real;
}

static void note_world(void)
{
    const char *dir = getenv("SCALEWISE_PROBE_DIR");
    char host[256] = "?", path[4096];
    if (!dir)
        return;
    int rank = ask_world("PMPI_Comm_rank"), size = ask_world("PMPI_Comm_size");
    gethostname(host, sizeof host - 1);
    snprintf(path, sizeof path, "%s/rank.%d.%ld", dir, rank, (long)getpid());
    FILE *f = fopen(path, "w");
    if (f) {
        fprintf(f, "%d %d %s\n", rank, size, host);
        fclose(f);
    }
}

SW_EXPORT int PMPI_Init(int *argc, char ***argv)
{
    init_fn real = (init_fn)next_init("PMPI_Init");
    int rc = real(argc, argv);
    if (rc == MPI_SUCCESS)
        note_world();
    return rc;
}

SW_EXPORT int MPI_Init(int *argc, char ***argv) { return PMPI_Init(argc, argv); }

SW_EXPORT int PMPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    init_thread_fn real = (init_thread_fn)next_init("PMPI_Init_thread");
    int rc = real(argc, argv, required, provided);
    if (rc == MPI_SUCCESS)
        note_world();
    return rc;
}

SW_EXPORT int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    return PMPI_Init_thread(argc, argv, required, provided);
}
