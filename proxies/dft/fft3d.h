/* dft: distributed 3-D complex FFT on an n^3 grid, n a power of two.
 * Real space is split in z-slabs, reciprocal space in y-slabs; each
 * transform is 1-D FFTs along the local axes and one MPI_Alltoallv
 * transpose (the plane-wave codes' slab decomposition). */
#ifndef FFT3D_H
#define FFT3D_H

#include <complex.h>

typedef struct {
    int n, rank, nranks;
    int nz, z0;          /* my real-space planes [z0, z0+nz) */
    int ny, y0;          /* my reciprocal-space rows [y0, y0+ny) */
    int *zcount, *zstart, *ycount, *ystart; /* per rank */
    int *scount, *sdispl, *rcount, *rdispl; /* Alltoallv, forward direction */
    double complex *twiddle;    /* n/2 roots of unity */
    int *bitrev;
    double complex *line, *sendbuf, *recvbuf;
} fft3d;

/* Rank r's share of n items: n/P, the first n%P ranks one more. */
void fft3d_split(int n, int nranks, int r, int *count, int *start);
void fft3d_init(fft3d *p, int n, int rank, int nranks);
void fft3d_free(fft3d *p);
/* Local element counts: real space nz*n*n, reciprocal space ny*n*n. */
long fft3d_real_size(const fft3d *p);
long fft3d_recip_size(const fft3d *p);
/* Real layout [z][y][x], reciprocal layout [y][z][x]. Forward uses
 * exp(-i k.r); inverse uses exp(+i k.r) and scales by 1/n^3. One
 * MPI_Alltoallv each. `in` is left unchanged. */
void fft3d_forward(fft3d *p, const double complex *in, double complex *out);
void fft3d_inverse(fft3d *p, const double complex *in, double complex *out);
/* The transform's transpose alone (no 1-D FFTs, no scaling): real layout to reciprocal
 * layout, or back with `inverse`; the same MPI_Alltoallv as the transform. */
void fft3d_transpose(fft3d *p, const double complex *in, double complex *out, int inverse);

#endif
