/* Every MPI_T variable the library registers, one tab-separated line each:
 *   pvar <name> <class> <type> <binding> <continuous> <description>
 *   cvar <name> <type> <binding> <scope>
 * Run on one rank by scripts/mpit/mpit_vars.py (docs/mpit.md). */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

static const char *class_name(int c)
{
    return c == MPI_T_PVAR_CLASS_STATE ? "state" : c == MPI_T_PVAR_CLASS_LEVEL ? "level"
         : c == MPI_T_PVAR_CLASS_SIZE ? "size" : c == MPI_T_PVAR_CLASS_PERCENTAGE ? "percentage"
         : c == MPI_T_PVAR_CLASS_HIGHWATERMARK ? "highwatermark" : c == MPI_T_PVAR_CLASS_LOWWATERMARK ? "lowwatermark"
         : c == MPI_T_PVAR_CLASS_COUNTER ? "counter" : c == MPI_T_PVAR_CLASS_AGGREGATE ? "aggregate"
         : c == MPI_T_PVAR_CLASS_TIMER ? "timer" : "generic";
}

static const char *type_name(MPI_Datatype t)
{
    return t == MPI_INT ? "int" : t == MPI_UNSIGNED ? "unsigned" : t == MPI_UNSIGNED_LONG ? "unsigned long"
         : t == MPI_UNSIGNED_LONG_LONG ? "unsigned long long" : t == MPI_COUNT ? "count" : t == MPI_DOUBLE ? "double"
         : t == MPI_CHAR ? "char" : t == MPI_LONG ? "long" : t == MPI_LONG_LONG ? "long long" : "other";
}

static const char *bind_name(int b)
{
    return b == MPI_T_BIND_NO_OBJECT ? "none" : b == MPI_T_BIND_MPI_COMM ? "comm" : b == MPI_T_BIND_MPI_WIN ? "win"
         : b == MPI_T_BIND_MPI_FILE ? "file" : b == MPI_T_BIND_MPI_REQUEST ? "request" : "other";
}

static void one_line(char *s)
{
    for (; *s; s++)
        if (*s == '\t' || *s == '\n' || *s == '\r')
            *s = ' ';
}

int main(int argc, char **argv)
{
    int provided, n = 0;
    MPI_Init(&argc, &argv);
    if (MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS) {
        fprintf(stderr, "MPI_T_init_thread failed\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_T_pvar_get_num(&n);
    for (int i = 0; i < n; i++) {
        char name[256], desc[1024];
        int nl = sizeof name, dl = sizeof desc, verbosity, cls, bind, ro, cont, atomic;
        MPI_Datatype t;
        MPI_T_enum e;
        if (MPI_T_pvar_get_info(i, name, &nl, &verbosity, &cls, &t, &e, desc, &dl, &bind, &ro, &cont, &atomic) != MPI_SUCCESS)
            continue;
        one_line(desc);
        printf("pvar\t%s\t%s\t%s\t%s\t%d\t%s\n", name, class_name(cls), type_name(t), bind_name(bind), cont, desc);
    }
    MPI_T_cvar_get_num(&n);
    for (int i = 0; i < n; i++) {
        char name[256], desc[1024];
        int nl = sizeof name, dl = sizeof desc, verbosity, bind, scope;
        MPI_Datatype t;
        MPI_T_enum e;
        if (MPI_T_cvar_get_info(i, name, &nl, &verbosity, &t, &e, desc, &dl, &bind, &scope) == MPI_SUCCESS)
            printf("cvar\t%s\t%s\t%s\t%d\n", name, type_name(t), bind_name(bind), scope);
    }
    MPI_T_finalize();
    MPI_Finalize();
    return 0;
}
