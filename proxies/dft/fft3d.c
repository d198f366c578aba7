/* Slab-decomposed 3-D FFT built on an in-house radix-2 transform. */
#include "fft3d.h"
#include "swproxy.h"

#include <mpi.h>
#include <stdlib.h>
#include <string.h>

void fft3d_split(int n, int nranks, int r, int *count, int *start)
{
    int base = n / nranks, extra = n % nranks;
    *count = base + (r < extra);
    *start = r * base + (r < extra ? r : extra);
}

void fft3d_init(fft3d *p, int n, int rank, int nranks)
{
    p->n = n;
    p->rank = rank;
    p->nranks = nranks;
    int *arrays[8];
    for (int a = 0; a < 8; a++)
        arrays[a] = malloc(sizeof(int) * nranks);
    p->zcount = arrays[0]; p->zstart = arrays[1]; p->ycount = arrays[2]; p->ystart = arrays[3];
    p->scount = arrays[4]; p->sdispl = arrays[5]; p->rcount = arrays[6]; p->rdispl = arrays[7];
    for (int r = 0; r < nranks; r++) {
        fft3d_split(n, nranks, r, &p->zcount[r], &p->zstart[r]);
        fft3d_split(n, nranks, r, &p->ycount[r], &p->ystart[r]);
    }
    p->nz = p->zcount[rank];
    p->z0 = p->zstart[rank];
    p->ny = p->ycount[rank];
    p->y0 = p->ystart[rank];
    for (int r = 0, s = 0, q = 0; r < nranks; r++) {
        p->scount[r] = p->nz * p->ycount[r] * n;
        p->rcount[r] = p->zcount[r] * p->ny * n;
        p->sdispl[r] = s;
        p->rdispl[r] = q;
        s += p->scount[r];
        q += p->rcount[r];
    }
    p->twiddle = malloc(sizeof(double complex) * (n / 2 + 1));
    for (int k = 0; k < n / 2; k++)
        p->twiddle[k] = cexp(-2.0 * SW_PI * I * k / n);
    p->bitrev = malloc(sizeof(int) * n);
    int bits = 0;
    while ((1 << bits) < n)
        bits++;
    for (int i = 0; i < n; i++) {
        int r = 0;
        for (int b = 0; b < bits; b++)
            r |= ((i >> b) & 1) << (bits - 1 - b);
        p->bitrev[i] = r;
    }
    long big = fft3d_real_size(p) > fft3d_recip_size(p) ? fft3d_real_size(p) : fft3d_recip_size(p);
    p->line = malloc(sizeof(double complex) * n);
    p->sendbuf = malloc(sizeof(double complex) * (big + 1));
    p->recvbuf = malloc(sizeof(double complex) * (big + 1));
}

void fft3d_free(fft3d *p)
{
    free(p->zcount); free(p->zstart); free(p->ycount); free(p->ystart);
    free(p->scount); free(p->sdispl); free(p->rcount); free(p->rdispl);
    free(p->twiddle); free(p->bitrev); free(p->line); free(p->sendbuf); free(p->recvbuf);
}

long fft3d_real_size(const fft3d *p)
{
    return (long)p->nz * p->n * p->n;
}

long fft3d_recip_size(const fft3d *p)
{
    return (long)p->ny * p->n * p->n;
}

/* In-place iterative radix-2 transform of p->line. */
static void fft_line(const fft3d *p, int inverse)
{
    int n = p->n;
    double complex *a = p->line;
    for (int i = 0; i < n; i++)
        if (i < p->bitrev[i]) {
            double complex t = a[i];
            a[i] = a[p->bitrev[i]];
            a[p->bitrev[i]] = t;
        }
    for (int len = 2; len <= n; len <<= 1) {
        int half = len / 2, step = n / len;
        for (int i = 0; i < n; i += len)
            for (int k = 0; k < half; k++) {
                double complex w = p->twiddle[k * step];
                if (inverse)
                    w = conj(w);
                double complex u = a[i + k], v = a[i + k + half] * w;
                a[i + k] = u + v;
                a[i + k + half] = u - v;
            }
    }
}

/* Transforms `count` lines of length n starting at base + l*line_step,
 * elements `stride` apart. */
static void fft_lines(fft3d *p, double complex *base, long count, long line_step, long stride,
                      int inverse)
{
    for (long l = 0; l < count; l++) {
        double complex *a = base + l * line_step;
        for (int k = 0; k < p->n; k++)
            p->line[k] = a[k * stride];
        fft_line(p, inverse);
        for (int k = 0; k < p->n; k++)
            a[k * stride] = p->line[k];
    }
}

/* x- and y-transforms of every local z-plane in [z][y][x] layout. */
static void fft_planes(fft3d *p, double complex *a, int inverse)
{
    long n = p->n;
    for (int z = 0; z < p->nz; z++) {
        double complex *plane = a + z * n * n;
        fft_lines(p, plane, n, n, 1, inverse);   /* along x */
        fft_lines(p, plane, n, 1, n, inverse);   /* along y */
    }
}

/* z-transforms of every (y, x) column in [y][z][x] layout. */
static void fft_columns(fft3d *p, double complex *a, int inverse)
{
    long n = p->n;
    for (int y = 0; y < p->ny; y++)
        fft_lines(p, a + y * n * n, n, 1, n, inverse);
}

/* The forward transpose: z-slabs [z][y][x] in `work` to y-slabs [y][z][x] in `out`. */
static void transpose_forward(fft3d *p, const double complex *work, double complex *out)
{
    long n = p->n;
    for (int s = 0; s < p->nranks; s++)
        for (int z = 0; z < p->nz; z++)
            memcpy(p->sendbuf + p->sdispl[s] + (long)z * p->ycount[s] * n,
                   work + (z * n + p->ystart[s]) * n, sizeof(double complex) * p->ycount[s] * n);
    MPI_Alltoallv(p->sendbuf, p->scount, p->sdispl, MPI_C_DOUBLE_COMPLEX, p->recvbuf, p->rcount,
                  p->rdispl, MPI_C_DOUBLE_COMPLEX, MPI_COMM_WORLD);
    for (int r = 0; r < p->nranks; r++)
        for (int z = 0; z < p->zcount[r]; z++)
            for (int y = 0; y < p->ny; y++)
                memcpy(out + (y * n + p->zstart[r] + z) * n,
                       p->recvbuf + p->rdispl[r] + ((long)z * p->ny + y) * n,
                       sizeof(double complex) * n);
}

/* The transpose back: what the forward one received is sent. */
static void transpose_inverse(fft3d *p, const double complex *work, double complex *out)
{
    long n = p->n;
    for (int r = 0; r < p->nranks; r++)
        for (int z = 0; z < p->zcount[r]; z++)
            for (int y = 0; y < p->ny; y++)
                memcpy(p->sendbuf + p->rdispl[r] + ((long)z * p->ny + y) * n,
                       work + (y * n + p->zstart[r] + z) * n, sizeof(double complex) * n);
    MPI_Alltoallv(p->sendbuf, p->rcount, p->rdispl, MPI_C_DOUBLE_COMPLEX, p->recvbuf, p->scount,
                  p->sdispl, MPI_C_DOUBLE_COMPLEX, MPI_COMM_WORLD);
    for (int s = 0; s < p->nranks; s++)
        for (int z = 0; z < p->nz; z++)
            memcpy(out + (z * n + p->ystart[s]) * n,
                   p->recvbuf + p->sdispl[s] + (long)z * p->ycount[s] * n,
                   sizeof(double complex) * p->ycount[s] * n);
}

void fft3d_forward(fft3d *p, const double complex *in, double complex *out)
{
    double complex *work = p->recvbuf; /* free until the transpose */
    memcpy(work, in, sizeof(double complex) * fft3d_real_size(p));
    fft_planes(p, work, 0);
    transpose_forward(p, work, out);
    fft_columns(p, out, 0);
}

void fft3d_inverse(fft3d *p, const double complex *in, double complex *out)
{
    long n = p->n;
    double complex *work = p->recvbuf; /* free until the transpose */
    memcpy(work, in, sizeof(double complex) * fft3d_recip_size(p));
    fft_columns(p, work, 1);
    transpose_inverse(p, work, out);
    fft_planes(p, out, 1);
    double scale = 1.0 / ((double)n * n * n);
    for (long i = 0; i < fft3d_real_size(p); i++)
        out[i] *= scale;
}

void fft3d_transpose(fft3d *p, const double complex *in, double complex *out, int inverse)
{
    if (inverse)
        transpose_inverse(p, in, out);
    else
        transpose_forward(p, in, out);
}
