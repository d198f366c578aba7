/* dft --compute sleep: the same MPI calls as the computing run, in the same order and of the
 * same sizes, with each stretch of computation between them replaced by a sleep of the time its
 * floating-point operations take at --compute-rate.  A rank that sleeps leaves its core to the
 * others, so more ranks than cores run as they would on a core each; what the run then measures
 * is where its messages go.  The transposes carry a pattern (each element its global grid index)
 * that is checked exactly on arrival, so the run still verifies what it computes: the data
 * every rank received. */
#define _POSIX_C_SOURCE 200809L
#include "sleeping.h"
#include "swproxy.h"

#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef struct {
    fft3d *p;
    int m;
    long npts, ng;
    double log2n, flop_s, slept;
} sleeper;

static void compute(sleeper *s, double flops)
{
    double t = flops / s->flop_s;
    struct timespec ts = {(time_t)t, (long)((t - floor(t)) * 1e9)};
    nanosleep(&ts, NULL);
    s->slept += t;
}

/* Band `tag`'s pattern on my z-slab: element (x, y, z) holds its global index, the tag as imaginary part. */
static void fill(const sleeper *s, double complex *a, int tag)
{
    long first = (long)s->p->z0 * s->p->n * s->p->n;
    for (long l = 0; l < s->npts; l++)
        a[l] = (double)(first + l) + I * (double)tag;
}

/* Elements of my y-slab ([y][z][x]) that are not the pattern's: what the forward transpose got wrong. */
static long wrong_recip(const sleeper *s, const double complex *a, int tag)
{
    long n = s->p->n, bad = 0;
    for (long y = 0; y < s->p->ny; y++)
        for (long z = 0; z < n; z++)
            for (long x = 0; x < n; x++) {
                double want = (double)((z * n + s->p->y0 + y) * n + x);
                double complex got = a[(y * n + z) * n + x];
                bad += creal(got) != want || cimag(got) != (double)tag;
            }
    return bad;
}

static long wrong_real(const sleeper *s, const double complex *a, const double complex *want)
{
    long bad = 0;
    for (long l = 0; l < s->npts; l++)
        bad += a[l] != want[l];
    return bad;
}

/* A forward transform: its x/y lines, the transpose, its z lines (5 N log2 n flops per axis). */
static long forward(sleeper *s, const double complex *in, double complex *out, int tag)
{
    compute(s, 10.0 * s->npts * s->log2n);
    fft3d_transpose(s->p, in, out, 0);
    compute(s, 5.0 * s->ng * s->log2n);
    return wrong_recip(s, out, tag);
}

static long inverse(sleeper *s, const double complex *in, double complex *out, const double complex *want)
{
    compute(s, 5.0 * s->ng * s->log2n);
    fft3d_transpose(s->p, in, out, 1);
    compute(s, 10.0 * s->npts * s->log2n + 2.0 * s->npts);
    return wrong_real(s, out, want);
}

/* The overlap's M x M sums (8 flops per complex multiply-add) and their Allreduce: each rank adds
 * its point count on the diagonal, so every diagonal entry must come out as n^3. */
static long overlap(sleeper *s, double complex *ov)
{
    int m = s->m;
    compute(s, 8.0 * m * m * s->npts);
    for (int i = 0; i < m * m; i++)
        ov[i] = i % (m + 1) == 0 ? (double)s->npts : 0.0;
    MPI_Allreduce(MPI_IN_PLACE, ov, m * m, MPI_C_DOUBLE_COMPLEX, MPI_SUM, MPI_COMM_WORLD);
    double n3 = (double)s->p->n * s->p->n * s->p->n;
    long bad = 0;
    for (int i = 0; i < m * m; i++)
        bad += ov[i] != (i % (m + 1) == 0 ? n3 : 0.0);
    return bad;
}

static long orthonormalise(sleeper *s, double complex *ov)
{
    long bad = overlap(s, ov);
    compute(s, 4.0 * s->m * s->m * s->npts + 6.0 * s->m * s->npts); /* psi <- psi L^-H */
    return bad;
}

int dft_sleeping_run(fft3d *p, int bands, int iters, double gflops)
{
    int m = bands, n = p->n;
    sleeper s = {.p = p, .m = m, .npts = fft3d_real_size(p), .ng = fft3d_recip_size(p),
                 .log2n = log2((double)n), .flop_s = gflops * 1e9};
    double complex *psi = malloc(sizeof(double complex) * (s.npts * m + 1));
    double complex *a = malloc(sizeof(double complex) * (s.npts + 1));
    double complex *g = malloc(sizeof(double complex) * (s.ng + 1));
    double complex *ov = malloc(sizeof(double complex) * m * m);
    double *eloc = malloc(sizeof(double) * m), *eband = malloc(sizeof(double) * m);
    long bad = 0; /* this rank's wrong elements, counted where it received them */
    double wrong_on_root = 0.0;

    double t0 = sw_sync_time();
    /* The FFT checks: a forward transform, then a forward and inverse round trip. */
    double err[2] = {0.0, 0.0}, local[2];
    fill(&s, a, 0);
    local[0] = (double)forward(&s, a, g, 0);
    fill(&s, a, 1);
    local[1] = (double)forward(&s, a, g, 1);
    compute(&s, 2.0 * s.ng);
    double complex *back = malloc(sizeof(double complex) * (s.npts + 1));
    local[1] += (double)inverse(&s, g, back, a);
    MPI_Reduce(local, err, 2, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    wrong_on_root += err[0] + err[1];
    for (int b = 0; b < m; b++)
        fill(&s, psi + (long)b * s.npts, b + 1);
    bad += orthonormalise(&s, ov);
    double tau = 1.0;
    for (int it = 0; it < iters; it++) {
        for (int b = 0; b < m; b++) {
            double complex *pb = psi + (long)b * s.npts;
            long wrong = forward(&s, pb, g, b + 1);
            compute(&s, 2.0 * s.ng); /* the kinetic factor */
            wrong += inverse(&s, g, a, pb);
            compute(&s, 20.0 * s.npts); /* potential, band energy, descent step */
            eloc[b] = (double)wrong;
        }
        MPI_Reduce(eloc, eband, m, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
        if (p->rank == 0)
            for (int b = 0; b < m; b++)
                wrong_on_root += eband[b];
        MPI_Bcast(&tau, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
        bad += tau != 1.0;
        bad += orthonormalise(&s, ov);
    }
    bad += overlap(&s, ov);
    double wall = sw_sync_time() - t0;

    /* Every transpose moves all n^3 elements (each rank's own block included). */
    long moved = (3L + 2L * m * iters) * n * n * n;
    char note[200], check[40];
    snprintf(note, sizeof note, "compute=sleep rate_gflops=%g slept_s=%.9g grid=%d^3 bands=%d iters=%d "
             "wrong_elements=%.0f", gflops, s.slept, n, m, iters, wrong_on_root + (double)bad);
    sw_note(note);
    snprintf(check, sizeof check, "%ld", moved);
    /* The transposes' wrong elements are summed on rank 0; each rank's overlap and step checks fail it. */
    int pass = wrong_on_root == 0.0 && bad == 0;
    int status = sw_result("dft", wall, "s", 0, wall, check, pass);
    free(psi); free(a); free(g); free(back); free(ov); free(eloc); free(eband);
    return status;
}
