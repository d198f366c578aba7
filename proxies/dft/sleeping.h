/* dft --compute sleep: the run's MPI calls without its arithmetic (sleeping.c). */
#ifndef DFT_SLEEPING_H
#define DFT_SLEEPING_H

#include "fft3d.h"

/* The timed region of a dft run of `bands` bands and `iters` iterations, every stretch of
 * computation slept at `gflops`; prints the result line and returns the exit status. */
int dft_sleeping_run(fft3d *p, int bands, int iters, double gflops);

#endif
