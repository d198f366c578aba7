/* sem: HOMME / CAM-SE style proxy. Flux-form upwind advection of a tracer
 * by a reversing swirl on a periodic square of ne x ne elements, each with
 * n x n cells, time-stepped with two-stage SSP Runge-Kutta. Every stage
 * exchanges element edges with the neighbouring ranks (Irecv/Isend/Waitall,
 * one message per peer); every K steps an Allreduce forms the global
 * diagnostics from exact accumulators so they do not depend on the rank
 * count. */
#include "sem.h"
#include "swproxy.h"

#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    int n;            /* cells per element side */
    double h, dt;
    sem_layout L;
    double *q, *q1, *rhs; /* [elem][n*n] */
    double *ghost;        /* [elem][4][n] neighbour edge cells */
    double *u0, *v0;      /* face velocities at unit scale, [elem][(n+1)*n] */
    double **sendbuf, **recvbuf;
    MPI_Request *req;
    MPI_Status *stat; /* MPICH's headers reject MPI_STATUSES_IGNORE under -Werror */
} sem_state;

#define CELL(st, q, e, i, j) ((q)[((size_t)(e) * (st)->n + (j)) * (st)->n + (i)])

/* Stream function of the swirl; the discrete velocities derived from it are
 * divergence-free, and they are computed from wrapped global corner indices
 * so both elements sharing a face get bit-identical values. */
static double stream(double x, double y)
{
    double sx = sin(SW_PI * x), sy = sin(SW_PI * y);
    return sx * sx * sy * sy / SW_PI;
}

static void init_fields(sem_state *st)
{
    int n = st->n, ne = st->L.ne, ncell = ne * n;
    double h = st->h;
    for (int e = 0; e < st->L.nelem; e++) {
        int g = st->L.gid[e], ox = (g % ne) * n, oy = (g / ne) * n;
        for (int j = 0; j < n; j++)
            for (int i = 0; i <= n; i++) {
                /* x-face at corner column I, between corner rows J and J+1 */
                int I = (ox + i) % ncell, J = oy + j;
                st->u0[((size_t)e * (n + 1) + i) * n + j] =
                    (stream(I * h, ((J + 1) % ncell) * h) - stream(I * h, J * h)) / h;
                /* y-face at corner row I', between corner columns */
                int Jy = (oy + i) % ncell, Ix = ox + j;
                st->v0[((size_t)e * (n + 1) + i) * n + j] =
                    -(stream(((Ix + 1) % ncell) * h, Jy * h) - stream(Ix * h, Jy * h)) / h;
            }
        for (int j = 0; j < n; j++)
            for (int i = 0; i < n; i++) {
                double x = (ox + i + 0.5) * h - 0.35, y = (oy + j + 0.5) * h - 0.5;
                double r = sqrt(x * x + y * y) / 0.2;
                CELL(st, st->q, e, i, j) = 1.0 + (r < 1.0 ? 0.5 * (1.0 + cos(SW_PI * r)) : 0.0);
            }
    }
}

/* Copies the edge cells of element e on `side` into buf (along-face order). */
static void get_edge(const sem_state *st, const double *q, int e, int side, double *buf)
{
    int n = st->n;
    for (int k = 0; k < n; k++) {
        switch (side) {
        case SIDE_W: buf[k] = CELL(st, q, e, 0, k); break;
        case SIDE_E: buf[k] = CELL(st, q, e, n - 1, k); break;
        case SIDE_S: buf[k] = CELL(st, q, e, k, 0); break;
        default: buf[k] = CELL(st, q, e, k, n - 1); break;
        }
    }
}

static int opposite(int side)
{
    return side ^ 1; /* W<->E, S<->N */
}

/* Fills every ghost edge: a message per peer rank, local copies otherwise. */
static void halo_exchange(sem_state *st, const double *q)
{
    sem_layout *L = &st->L;
    int n = st->n;
    for (int p = 0; p < L->npeers; p++)
        MPI_Irecv(st->recvbuf[p], L->peers[p].nfaces * n, MPI_DOUBLE, L->peers[p].rank, 0,
                  MPI_COMM_WORLD, &st->req[p]);
    for (int p = 0; p < L->npeers; p++) {
        for (int f = 0; f < L->peers[p].nfaces; f++) {
            const sem_face *fc = &L->peers[p].faces[f];
            get_edge(st, q, fc->elem, fc->side, st->sendbuf[p] + (size_t)f * n);
        }
        MPI_Isend(st->sendbuf[p], L->peers[p].nfaces * n, MPI_DOUBLE, L->peers[p].rank, 0,
                  MPI_COMM_WORLD, &st->req[L->npeers + p]);
    }
    for (int e = 0; e < L->nelem; e++)
        for (int s = 0; s < 4; s++) {
            int nb = L->local[sem_neighbour(L->ne, L->gid[e], s)];
            if (nb >= 0)
                get_edge(st, q, nb, opposite(s), st->ghost + ((size_t)e * 4 + s) * n);
        }
    MPI_Waitall(2 * L->npeers, st->req, st->stat);
    for (int p = 0; p < L->npeers; p++)
        for (int f = 0; f < L->peers[p].nfaces; f++) {
            const sem_face *fc = &L->peers[p].faces[f];
            memcpy(st->ghost + ((size_t)fc->elem * 4 + fc->side) * n,
                   st->recvbuf[p] + (size_t)f * n, sizeof(double) * n);
        }
}

static double upwind(double u, double left, double right)
{
    return u > 0.0 ? u * left : u * right;
}

/* rhs = -div(u q) with upwind face fluxes, velocity scaled by `scale`. */
static void tendency(sem_state *st, const double *q, double scale)
{
    int n = st->n;
    double inv_h = 1.0 / st->h;
    for (int e = 0; e < st->L.nelem; e++) {
        const double *g = st->ghost + (size_t)e * 4 * n;
        const double *u0 = st->u0 + (size_t)e * (n + 1) * n;
        const double *v0 = st->v0 + (size_t)e * (n + 1) * n;
        for (int j = 0; j < n; j++)
            for (int i = 0; i < n; i++) {
                double qc = CELL(st, q, e, i, j);
                double qw = i > 0 ? CELL(st, q, e, i - 1, j) : g[SIDE_W * n + j];
                double qe = i < n - 1 ? CELL(st, q, e, i + 1, j) : g[SIDE_E * n + j];
                double qs = j > 0 ? CELL(st, q, e, i, j - 1) : g[SIDE_S * n + i];
                double qn = j < n - 1 ? CELL(st, q, e, i, j + 1) : g[SIDE_N * n + i];
                double fw = upwind(scale * u0[i * n + j], qw, qc);
                double fe = upwind(scale * u0[(i + 1) * n + j], qc, qe);
                double fs = upwind(scale * v0[j * n + i], qs, qc);
                double fn = upwind(scale * v0[(j + 1) * n + i], qc, qn);
                CELL(st, st->rhs, e, i, j) = (fw - fe + fs - fn) * inv_h;
            }
    }
}

/* Global mass and variance from exact accumulators: one Allreduce. */
static void diagnostics(const sem_state *st, double *mass, double *variance)
{
    sw_xsum acc[2];
    sw_xsum_clear(&acc[0]);
    sw_xsum_clear(&acc[1]);
    double area = st->h * st->h;
    size_t ncells = (size_t)st->L.nelem * st->n * st->n;
    for (size_t c = 0; c < ncells; c++) {
        sw_xsum_add(&acc[0], st->q[c] * area);
        sw_xsum_add(&acc[1], st->q[c] * st->q[c] * area);
    }
    sw_xsum_allreduce(acc, 2);
    *mass = sw_xsum_value(&acc[0]);
    *variance = sw_xsum_value(&acc[1]);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, nranks;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);

    sw_args_begin("sem", argc, argv);
    int ne = (int)sw_flag_long("--ne", 2, 1024, 8, 32, 128);
    int n = (int)sw_flag_long("--np", 2, 64, 8, 16, 16);
    long steps = sw_flag_long("--steps", 1, 10000000, 40, 800, 4000);
    long every = sw_flag_long("--diag-every", 1, 10000000, 10, 100, 100);
    sw_args_end();
    if (ne & (ne - 1))
        sw_args_fail("bad value for --ne: must be a power of two (Hilbert curve)");
    if ((long)ne * ne < nranks)
        sw_args_fail("--ne too small: fewer elements than ranks");

    sem_state st = {.n = n, .h = 1.0 / (ne * n)};
    st.dt = 0.45 * st.h; /* |u| + |v| <= 2 for this swirl: CFL 0.9 */
    sem_layout_build(&st.L, ne, rank, nranks);
    size_t cells = (size_t)st.L.nelem * n * n;
    st.q = malloc(sizeof(double) * cells);
    st.q1 = malloc(sizeof(double) * cells);
    st.rhs = malloc(sizeof(double) * cells);
    st.ghost = malloc(sizeof(double) * (size_t)st.L.nelem * 4 * n);
    st.u0 = malloc(sizeof(double) * (size_t)st.L.nelem * (n + 1) * n);
    st.v0 = malloc(sizeof(double) * (size_t)st.L.nelem * (n + 1) * n);
    st.sendbuf = malloc(sizeof(double *) * (st.L.npeers + 1));
    st.recvbuf = malloc(sizeof(double *) * (st.L.npeers + 1));
    st.req = malloc(sizeof(MPI_Request) * (2 * st.L.npeers + 1));
    st.stat = malloc(sizeof(MPI_Status) * (2 * st.L.npeers + 1));
    for (int p = 0; p < st.L.npeers; p++) {
        st.sendbuf[p] = malloc(sizeof(double) * st.L.peers[p].nfaces * n);
        st.recvbuf[p] = malloc(sizeof(double) * st.L.peers[p].nfaces * n);
    }
    init_fields(&st);

    double t0 = sw_sync_time();
    double mass0, var0, mass = 0.0, var = 0.0, worst = 0.0;
    diagnostics(&st, &mass0, &var0);
    double period = steps * st.dt; /* the swirl reverses once over the run */
    for (long s = 0; s < steps; s++) {
        double t = s * st.dt;
        halo_exchange(&st, st.q);
        tendency(&st, st.q, cos(SW_PI * t / period));
        for (size_t c = 0; c < cells; c++)
            st.q1[c] = st.q[c] + st.dt * st.rhs[c];
        halo_exchange(&st, st.q1);
        tendency(&st, st.q1, cos(SW_PI * (t + st.dt) / period));
        for (size_t c = 0; c < cells; c++)
            st.q[c] = 0.5 * st.q[c] + 0.5 * (st.q1[c] + st.dt * st.rhs[c]);
        if ((s + 1) % every == 0 || s + 1 == steps) {
            diagnostics(&st, &mass, &var);
            worst = fmax(worst, sw_rel_diff(mass, mass0));
        }
    }
    double wall = sw_sync_time() - t0;

    char note[512], check[40];
    snprintf(note, sizeof note,
             "elements=%d cells=%d steps=%ld mass0=%.17g mass_rel_drift=%.3e "
             "mass=%.17g variance0=%.17g variance=%.17g rank0_peers=%d",
             ne * ne, ne * ne * n * n, steps, mass0, worst, mass, var0, var, st.L.npeers);
    sw_note(note);
    snprintf(check, sizeof check, "%.17g", var);
    int pass = isfinite(var) && worst < 1e-12 && var > 0.0 && var <= var0 * (1.0 + 1e-12);
    int status = sw_result("sem", steps / wall, "steps/s", 1, wall, check, pass);

    for (int p = 0; p < st.L.npeers; p++) {
        free(st.sendbuf[p]);
        free(st.recvbuf[p]);
    }
    free(st.sendbuf); free(st.recvbuf); free(st.req); free(st.stat);
    free(st.q); free(st.q1); free(st.rhs); free(st.ghost); free(st.u0); free(st.v0);
    sem_layout_free(&st.L);
    MPI_Finalize();
    return status;
}
