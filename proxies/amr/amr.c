/* amr: AMR / HyperClaw style proxy. Upwind advection of a tracer on a
 * coarse grid with refined patches that follow the features. Each step
 * fills tile ghost cells with one small message per tile side whose
 * neighbour lives on another rank (all Irecv posted, then blocking Send,
 * then one Waitall); every K steps the tiles are re-tagged (one Allreduce
 * of a byte per tile), re-balanced and migrated (Irecv/Send/Waitall).
 *
 * Conservation at coarse-fine faces: the flux there is the coarse flux,
 * computed bit-identically by both sides, so what leaves one level enters
 * the other exactly. Mass is summed with exact accumulators. */
#include "amr.h"
#include "swproxy.h"

#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BACKGROUND 0.1
#define TAG_LEVEL 0.05

static double initial_q(double x, double y)
{
    double a = (x - 0.3) * (x - 0.3) + (y - 0.3) * (y - 0.3);
    double b = (x - 0.7) * (x - 0.7) + (y - 0.65) * (y - 0.65);
    return BACKGROUND + exp(-a / 0.002) + 0.6 * exp(-b / 0.001);
}

static double upwind(double u, double left, double right)
{
    return u > 0.0 ? u * left : u * right;
}

/* Edge cells of a (n+2)^2 array on `side`, in along-face order; `ghost`
 * selects the ghost ring instead of the first interior layer. */
static void edge_copy(int n, double *a, int side, int ghost, double *buf, int to_array)
{
    for (int k = 0; k < n; k++) {
        int i, j;
        switch (side) {
        case SIDE_W: i = ghost ? -1 : 0; j = k; break;
        case SIDE_E: i = ghost ? n : n - 1; j = k; break;
        case SIDE_S: i = k; j = ghost ? -1 : 0; break;
        default: i = k; j = ghost ? n : n - 1; break;
        }
        if (to_array)
            a[amr_idx(n, i, j)] = buf[k];
        else
            buf[k] = a[amr_idx(n, i, j)];
    }
}

static int ghost_len(const amr_state *s, int t, int nb)
{
    return s->B + (s->refined[t] && s->refined[nb] ? 2 * s->B : 0);
}

/* One message per (tile side, remote neighbour): coarse edge, plus the
 * fine edge when both tiles are refined. Tag: receiving tile and side. */
static void fill_ghosts(amr_state *s, double *buf, MPI_Request *req, MPI_Status *stat)
{
    int B = s->B, nreq = 0;
    size_t off = 0;
    for (int t = 0; t < s->ntiles; t++) {
        if (s->owner[t] != s->rank)
            continue;
        for (int side = 0; side < 4; side++) {
            int nb = amr_neighbour(s, t, side);
            if (s->owner[nb] == s->rank)
                continue;
            int len = ghost_len(s, t, nb);
            MPI_Irecv(buf + off, len, MPI_DOUBLE, s->owner[nb], 4 * t + side, MPI_COMM_WORLD,
                      &req[nreq++]);
            off += (size_t)len;
        }
    }
    s->recvs += nreq;
    double out[3 * 256]; /* coarse + fine edge; --tile-cells <= 256 */
    for (int t = 0; t < s->ntiles; t++) {
        if (s->owner[t] != s->rank)
            continue;
        amr_tile *tt = &s->tile[t];
        for (int side = 0; side < 4; side++) {
            int nb = amr_neighbour(s, t, side), opp = side ^ 1;
            int fine = s->refined[t] && s->refined[nb];
            if (s->owner[nb] == s->rank) {
                amr_tile *nn = &s->tile[nb];
                edge_copy(B, tt->c, side, 0, out, 0);
                edge_copy(B, nn->c, opp, 1, out, 1);
                if (fine) {
                    edge_copy(2 * B, tt->f, side, 0, out, 0);
                    edge_copy(2 * B, nn->f, opp, 1, out, 1);
                }
                continue;
            }
            edge_copy(B, tt->c, side, 0, out, 0);
            if (fine)
                edge_copy(2 * B, tt->f, side, 0, out + B, 0);
            MPI_Send(out, ghost_len(s, t, nb), MPI_DOUBLE, s->owner[nb], 4 * nb + opp,
                     MPI_COMM_WORLD);
            s->sends++;
        }
    }
    MPI_Waitall(nreq, req, stat);
    off = 0;
    for (int t = 0; t < s->ntiles; t++) {
        if (s->owner[t] != s->rank)
            continue;
        for (int side = 0; side < 4; side++) {
            int nb = amr_neighbour(s, t, side);
            if (s->owner[nb] == s->rank)
                continue;
            edge_copy(B, s->tile[t].c, side, 1, buf + off, 1);
            if (s->refined[t] && s->refined[nb])
                edge_copy(2 * B, s->tile[t].f, side, 1, buf + off + B, 1);
            off += (size_t)ghost_len(s, t, nb);
        }
    }
}

/* Flux-form upwind update of an n x n block `a` into `out`; `coarse` (if
 * not NULL) supplies the flux on sides whose neighbour is not refined. */
static void update_block(const amr_state *s, int n, const double *a, double *out, double dx,
                         const double *coarse, const int *coarse_side)
{
    double k = s->dt / dx;
    for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++) {
            double qc = a[amr_idx(n, i, j)];
            double fw = upwind(s->u, a[amr_idx(n, i - 1, j)], qc);
            double fe = upwind(s->u, qc, a[amr_idx(n, i + 1, j)]);
            double fs = upwind(s->v, a[amr_idx(n, i, j - 1)], qc);
            double fn = upwind(s->v, qc, a[amr_idx(n, i, j + 1)]);
            if (coarse) {
                int B = n / 2;
                if (i == 0 && coarse_side[SIDE_W])
                    fw = upwind(s->u, coarse[amr_idx(B, -1, j / 2)], coarse[amr_idx(B, 0, j / 2)]);
                if (i == n - 1 && coarse_side[SIDE_E])
                    fe = upwind(s->u, coarse[amr_idx(B, B - 1, j / 2)], coarse[amr_idx(B, B, j / 2)]);
                if (j == 0 && coarse_side[SIDE_S])
                    fs = upwind(s->v, coarse[amr_idx(B, i / 2, -1)], coarse[amr_idx(B, i / 2, 0)]);
                if (j == n - 1 && coarse_side[SIDE_N])
                    fn = upwind(s->v, coarse[amr_idx(B, i / 2, B - 1)], coarse[amr_idx(B, i / 2, B)]);
            }
            out[amr_idx(n, i, j)] = qc + k * (fw - fe + fs - fn);
        }
}

static void average_down(int B, double *c, const double *f)
{
    for (int j = 0; j < B; j++)
        for (int i = 0; i < B; i++)
            c[amr_idx(B, i, j)] = 0.25 * (f[amr_idx(2 * B, 2 * i, 2 * j)] +
                                          f[amr_idx(2 * B, 2 * i + 1, 2 * j)] +
                                          f[amr_idx(2 * B, 2 * i, 2 * j + 1)] +
                                          f[amr_idx(2 * B, 2 * i + 1, 2 * j + 1)]);
}

static void advance(amr_state *s)
{
    int B = s->B;
    for (int t = 0; t < s->ntiles; t++) {
        if (s->owner[t] != s->rank)
            continue;
        amr_tile *tt = &s->tile[t];
        if (!s->refined[t]) {
            update_block(s, B, tt->c, s->work, s->dxc, NULL, NULL);
            for (int j = 0; j < B; j++)
                memcpy(&tt->c[amr_idx(B, 0, j)], &s->work[amr_idx(B, 0, j)], sizeof(double) * B);
            continue;
        }
        int coarse_side[4];
        for (int side = 0; side < 4; side++)
            coarse_side[side] = !s->refined[amr_neighbour(s, t, side)];
        update_block(s, 2 * B, tt->f, s->work, s->dxf, tt->c, coarse_side);
        for (int j = 0; j < 2 * B; j++)
            memcpy(&tt->f[amr_idx(2 * B, 0, j)], &s->work[amr_idx(2 * B, 0, j)],
                   sizeof(double) * 2 * B);
        average_down(B, tt->c, tt->f);
    }
}

static double *tile_alloc(int n)
{
    return calloc((size_t)(n + 2) * (n + 2), sizeof(double));
}

/* Refines (fine data injected from coarse, or sampled from the initial
 * condition at start-up) or coarsens (coarse already holds the average). */
static void apply_refinement(amr_state *s, const unsigned char *refine, int initial)
{
    int B = s->B, nt = s->nt;
    for (int t = 0; t < s->ntiles; t++) {
        if (s->owner[t] != s->rank || refine[t] == s->refined[t])
            continue;
        amr_tile *tt = &s->tile[t];
        if (!refine[t]) {
            free(tt->f);
            tt->f = NULL;
            continue;
        }
        tt->f = tile_alloc(2 * B);
        for (int j = 0; j < 2 * B; j++)
            for (int i = 0; i < 2 * B; i++)
                tt->f[amr_idx(2 * B, i, j)] =
                    initial ? initial_q(((t % nt) * 2 * B + i + 0.5) * s->dxf,
                                        ((t / nt) * 2 * B + j + 0.5) * s->dxf)
                            : tt->c[amr_idx(B, i / 2, j / 2)];
        if (initial)
            average_down(B, tt->c, tt->f);
    }
    memcpy(s->refined, refine, (size_t)s->ntiles);
}

/* Moves tiles whose owner changed: interior cells only, one message each. */
static void migrate(amr_state *s, const int *new_owner, double *buf, MPI_Request *req,
                    MPI_Status *stat)
{
    int B = s->B, nreq = 0, tag0 = 4 * s->ntiles;
    size_t cap = (size_t)5 * B * B, off = 0;
    for (int t = 0; t < s->ntiles; t++)
        if (new_owner[t] == s->rank && s->owner[t] != s->rank) {
            int len = B * B * (s->refined[t] ? 5 : 1);
            MPI_Irecv(buf + off, len, MPI_DOUBLE, s->owner[t], tag0 + t, MPI_COMM_WORLD,
                      &req[nreq++]);
            off += cap;
        }
    s->recvs += nreq;
    double *out = malloc(sizeof(double) * cap);
    for (int t = 0; t < s->ntiles; t++) {
        if (s->owner[t] != s->rank || new_owner[t] == s->rank)
            continue;
        amr_tile *tt = &s->tile[t];
        for (int j = 0; j < B; j++)
            memcpy(out + (size_t)j * B, &tt->c[amr_idx(B, 0, j)], sizeof(double) * B);
        for (int j = 0; tt->f && j < 2 * B; j++)
            memcpy(out + (size_t)B * B + (size_t)j * 2 * B, &tt->f[amr_idx(2 * B, 0, j)],
                   sizeof(double) * 2 * B);
        MPI_Send(out, B * B * (s->refined[t] ? 5 : 1), MPI_DOUBLE, new_owner[t], tag0 + t,
                 MPI_COMM_WORLD);
        s->sends++;
        free(tt->c);
        free(tt->f);
        tt->c = tt->f = NULL;
    }
    free(out);
    MPI_Waitall(nreq, req, stat);
    off = 0;
    for (int t = 0; t < s->ntiles; t++)
        if (new_owner[t] == s->rank && s->owner[t] != s->rank) {
            amr_tile *tt = &s->tile[t];
            tt->c = tile_alloc(B);
            tt->f = s->refined[t] ? tile_alloc(2 * B) : NULL;
            for (int j = 0; j < B; j++)
                memcpy(&tt->c[amr_idx(B, 0, j)], buf + off + (size_t)j * B, sizeof(double) * B);
            for (int j = 0; tt->f && j < 2 * B; j++)
                memcpy(&tt->f[amr_idx(2 * B, 0, j)], buf + off + (size_t)B * B + (size_t)j * 2 * B,
                       sizeof(double) * 2 * B);
            off += cap;
        }
    memcpy(s->owner, new_owner, sizeof(int) * s->ntiles);
}

static void regrid(amr_state *s, int initial, double *buf, MPI_Request *req, MPI_Status *stat)
{
    int B = s->B;
    unsigned char *tagged = calloc((size_t)s->ntiles, 1);
    unsigned char *refine = malloc((size_t)s->ntiles);
    int *new_owner = malloc(sizeof(int) * s->ntiles);
    for (int t = 0; t < s->ntiles; t++) {
        if (s->owner[t] != s->rank)
            continue;
        int n = s->refined[t] ? 2 * B : B;
        const double *a = s->refined[t] ? s->tile[t].f : s->tile[t].c;
        for (int j = 0; j < n && !tagged[t]; j++)
            for (int i = 0; i < n; i++)
                if (a[amr_idx(n, i, j)] - BACKGROUND > TAG_LEVEL) {
                    tagged[t] = 1;
                    break;
                }
    }
    MPI_Allreduce(MPI_IN_PLACE, tagged, s->ntiles, MPI_UNSIGNED_CHAR, MPI_MAX, MPI_COMM_WORLD);
    amr_dilate(s, tagged, refine);
    apply_refinement(s, refine, initial);
    amr_balance(s, new_owner);
    migrate(s, new_owner, buf, req, stat);
    free(tagged);
    free(refine);
    free(new_owner);
}

/* Mass and variance over the composite grid (fine where refined), summed
 * exactly: one Allreduce of two accumulators. */
static void diagnostics(const amr_state *s, double *mass, double *variance, long *fine_tiles)
{
    sw_xsum acc[2];
    sw_xsum_clear(&acc[0]);
    sw_xsum_clear(&acc[1]);
    *fine_tiles = 0;
    for (int t = 0; t < s->ntiles; t++) {
        *fine_tiles += s->refined[t];
        if (s->owner[t] != s->rank)
            continue;
        int n = s->refined[t] ? 2 * s->B : s->B;
        double area = s->refined[t] ? s->dxf * s->dxf : s->dxc * s->dxc;
        const double *a = s->refined[t] ? s->tile[t].f : s->tile[t].c;
        for (int j = 0; j < n; j++)
            for (int i = 0; i < n; i++) {
                double q = a[amr_idx(n, i, j)];
                sw_xsum_add(&acc[0], q * area);
                sw_xsum_add(&acc[1], q * q * area);
            }
    }
    sw_xsum_allreduce(acc, 2);
    *mass = sw_xsum_value(&acc[0]);
    *variance = sw_xsum_value(&acc[1]);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    amr_state s = {0};
    MPI_Comm_rank(MPI_COMM_WORLD, &s.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &s.nranks);

    sw_args_begin("amr", argc, argv);
    s.nt = (int)sw_flag_long("--tiles", 2, 80, 8, 16, 64); /* tags < 5*T^2 <= 32000 */
    s.B = (int)sw_flag_long("--tile-cells", 2, 256, 8, 48, 48);
    long steps = sw_flag_long("--steps", 1, 10000000, 40, 600, 3000);
    long every = sw_flag_long("--regrid-every", 1, 10000000, 10, 20, 20);
    sw_args_end();
    s.ntiles = s.nt * s.nt;
    if (s.ntiles < s.nranks)
        sw_args_fail("--tiles too small: fewer tiles than ranks");

    int B = s.B;
    s.dxc = 1.0 / (s.nt * B);
    s.dxf = s.dxc / 2;
    s.u = 1.0;
    s.v = 0.5;
    s.dt = 0.9 * s.dxf / (fabs(s.u) + fabs(s.v));
    s.owner = malloc(sizeof(int) * s.ntiles);
    s.refined = calloc((size_t)s.ntiles, 1);
    s.morton = malloc(sizeof(int) * s.ntiles);
    s.tile = calloc((size_t)s.ntiles, sizeof(amr_tile));
    s.work = malloc(sizeof(double) * (size_t)(2 * B + 2) * (2 * B + 2));
    size_t bufn = (size_t)s.ntiles * 5 * B * B; /* enough for any exchange */
    double *buf = malloc(sizeof(double) * bufn);
    MPI_Request *req = malloc(sizeof(MPI_Request) * 4 * s.ntiles);
    MPI_Status *stat = malloc(sizeof(MPI_Status) * 4 * s.ntiles);

    amr_morton_order(&s);
    amr_balance(&s, s.owner);
    for (int t = 0; t < s.ntiles; t++) {
        if (s.owner[t] != s.rank)
            continue;
        s.tile[t].c = tile_alloc(B);
        for (int j = 0; j < B; j++)
            for (int i = 0; i < B; i++)
                s.tile[t].c[amr_idx(B, i, j)] =
                    initial_q(((t % s.nt) * B + i + 0.5) * s.dxc, ((t / s.nt) * B + j + 0.5) * s.dxc);
    }

    double t0 = sw_sync_time();
    double mass0, var0, mass, var;
    long fine0, fine;
    long regrids = 0;
    double updates = 0.0; /* cell updates: coarse everywhere, fine where refined */
    for (long step = 0; step < steps; step++) {
        if (step % every == 0) {
            regrid(&s, step == 0, buf, req, stat);
            regrids++;
            if (step == 0)
                diagnostics(&s, &mass0, &var0, &fine0);
        }
        fill_ghosts(&s, buf, req, stat);
        advance(&s);
        for (int t = 0; t < s.ntiles; t++)
            updates += (double)B * B * (s.refined[t] ? 5 : 1);
    }
    diagnostics(&s, &mass, &var, &fine);
    double wall = sw_sync_time() - t0;

    double drift = sw_rel_diff(mass, mass0);
    char note[400], check[40];
    snprintf(note, sizeof note,
             "tiles=%d tile_cells=%d steps=%ld regrids=%ld refined_tiles=%ld->%ld mass0=%.17g "
             "mass_rel_drift=%.3e variance=%.17g rank0_sends=%ld rank0_recvs=%ld",
             s.ntiles, B, steps, regrids, fine0, fine, mass0, drift, var, s.sends, s.recvs);
    sw_note(note);
    snprintf(check, sizeof check, "%.17g", var);
    int pass = isfinite(mass) && drift < 1e-12 && fine > 0 && var > 0.0;
    int status = sw_result("amr", updates / wall / 1e6, "Mcell-updates/s", 1, wall, check, pass);

    for (int t = 0; t < s.ntiles; t++) {
        free(s.tile[t].c);
        free(s.tile[t].f);
    }
    free(s.tile); free(s.owner); free(s.refined); free(s.morton); free(s.work);
    free(buf); free(req); free(stat);
    MPI_Finalize();
    return status;
}
