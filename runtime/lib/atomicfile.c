/* One atomic writer for every file the runtime leaves (atomicfile.h). */
#include <errno.h>
#include <stdio.h>
#include <unistd.h>

#include "atomicfile.h"

FILE *sw_atomic_open(sw_atomic_file *a, const char *path)
{
    a->path = path;
    snprintf(a->tmp, sizeof a->tmp, "%s.tmp.%d", path, (int)getpid());
    a->f = fopen(a->tmp, "wb");
    a->open_error = a->f ? 0 : errno;
    return a->f;
}

int sw_atomic_close(sw_atomic_file *a, int failed)
{
    if (!a->f)
        return a->open_error ? a->open_error : EIO;
    int err = failed ? EIO : 0;
    if (!err && (fflush(a->f) != 0 || fsync(fileno(a->f)) != 0))
        err = errno ? errno : EIO;
    if (fclose(a->f) != 0 && !err)
        err = errno ? errno : EIO;
    a->f = NULL;
    if (!err && rename(a->tmp, a->path) != 0)
        err = errno ? errno : EIO;
    if (err)
        unlink(a->tmp);
    return err;
}
