/* A file that appears whole or not at all: written to <path>.tmp.<pid>,
 * flushed to disk, then renamed into place.  Used for the log and the
 * trace; a rank killed while writing leaves at most the temporary file. */
#ifndef SW_ATOMICFILE_H
#define SW_ATOMICFILE_H

#include <stdio.h>

typedef struct {
    const char *path;
    char tmp[4200];
    FILE *f;
    int open_error; /* errno of a failed open */
} sw_atomic_file;

/* The temporary file to write to; NULL (errno set) when it cannot be created. */
FILE *sw_atomic_open(sw_atomic_file *a, const char *path);
/* failed 0: flush, fsync, close and rename into place; otherwise (or when
 * any step fails) close and remove the temporary file.  0 on success, else
 * an errno value (EIO when failed was set and nothing else went wrong). */
int sw_atomic_close(sw_atomic_file *a, int failed);

#endif
