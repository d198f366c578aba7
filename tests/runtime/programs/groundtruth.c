/* Ground truth for the profiler.
 *
 * Usage: groundtruth IOFILE REPS COUNT SIZE...
 *   REPS   repetitions of the looped phases (Allreduce, persistent requests)
 *   COUNT  element count of the collectives, one-sided and I/O calls
 *   SIZE   message sizes in bytes for the point-to-point phases
 *
 * tests/support/expect.py derives every call, byte and histogram entry of
 * this program from the same command line.  Loops whose number of calls
 * depends on timing (Test*, Waitsome) count themselves and print
 * "calls <function> <world rank> <n>" so the expectation stays exact.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define W MPI_COMM_WORLD

static int P, r, left, right, reps, n, nsizes, *sizes, maxs;
static char *sbuf, *rbuf;

/* Blocking pairs (0,1), (2,3)...: Send/Recv with a receive posted larger than
 * the message, Ssend back, then Probe + Recv of exactly the probed size.  A
 * rank without a partner (odd P) skips the phase. */
static void pairs(void)
{
    int partner = r ^ 1, even = r % 2 == 0;
    if (partner >= P)
        return;
    for (int i = 0; i < nsizes; i++) {
        int s = sizes[i];
        MPI_Status st;
        if (even) {
            MPI_Send(sbuf, s, MPI_BYTE, partner, 1, W);
            MPI_Recv(rbuf, s + 16, MPI_BYTE, partner, 2, W, &st);
        } else {
            MPI_Recv(rbuf, s + 16, MPI_BYTE, partner, 1, W, MPI_STATUS_IGNORE);
            MPI_Ssend(sbuf, s, MPI_BYTE, partner, 2, W);
        }
    }
    for (int i = 0; i < nsizes; i++) {
        if (even) {
            MPI_Send(sbuf, sizes[i], MPI_BYTE, partner, 3, W);
        } else {
            MPI_Status st;
            int count;
            MPI_Probe(partner, 3, W, &st);
            MPI_Get_count(&st, MPI_BYTE, &count);
            MPI_Recv(rbuf, count, MPI_BYTE, partner, 3, W, MPI_STATUS_IGNORE);
        }
    }
}

/* Ring right: Sendrecv per size, then one Sendrecv_replace of COUNT ints. */
static void ring_sendrecv(void)
{
    for (int i = 0; i < nsizes; i++)
        MPI_Sendrecv(sbuf, sizes[i], MPI_BYTE, right, 4, rbuf, maxs + 16, MPI_BYTE, left, 4, W, MPI_STATUS_IGNORE);
    int *ibuf = calloc((size_t)n + 1, sizeof(int));
    MPI_Status st;
    MPI_Sendrecv_replace(ibuf, n, MPI_INT, right, 5, left, 5, W, &st);
    free(ibuf);
}

/* Ring right with Irecv (posted larger) + Isend; size i is completed by
 * Waitall, Wait x2, Waitany x2 or a Waitsome loop, by i % 4. */
static void ring_nonblocking(void)
{
    int nwaitsome = 0;
    for (int i = 0; i < nsizes; i++) {
        MPI_Request rq[2];
        MPI_Status st;
        int idx, out, idxs[2], done = 0;
        MPI_Irecv(rbuf, maxs + 16, MPI_BYTE, left, 6, W, &rq[0]);
        MPI_Isend(sbuf, sizes[i], MPI_BYTE, right, 6, W, &rq[1]);
        switch (i % 4) {
        case 0:
            MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
            break;
        case 1:
            MPI_Wait(&rq[0], MPI_STATUS_IGNORE);
            MPI_Wait(&rq[1], &st);
            break;
        case 2:
            MPI_Waitany(2, rq, &idx, MPI_STATUS_IGNORE);
            MPI_Waitany(2, rq, &idx, &st);
            break;
        default:
            while (done < 2) {
                MPI_Waitsome(2, rq, &out, idxs, MPI_STATUSES_IGNORE);
                nwaitsome++;
                done += out;
            }
        }
    }
    printf("calls MPI_Waitsome %d %d\n", r, nwaitsome);
}

/* Ring right, halo style: every size in flight at once (one Irecv and one
 * Isend per size, tag i), completed by a single Waitall. */
static void ring_burst(void)
{
    MPI_Request *rq = calloc(2 * (size_t)nsizes, sizeof(MPI_Request));
    char *in = calloc((size_t)nsizes, (size_t)maxs + 16);
    for (int i = 0; i < nsizes; i++)
        MPI_Irecv(in + (size_t)i * ((size_t)maxs + 16), maxs + 16, MPI_BYTE, left, 100 + i, W, &rq[i]);
    for (int i = 0; i < nsizes; i++)
        MPI_Isend(sbuf, sizes[i], MPI_BYTE, right, 100 + i, W, &rq[nsizes + i]);
    MPI_Waitall(2 * nsizes, rq, MPI_STATUSES_IGNORE);
    free(in);
    free(rq);
}

/* Ring right, one exchange per Test form: variant v sends sizes[v % nsizes]. */
static void ring_test_loops(void)
{
    const char *names[4] = {"MPI_Test", "MPI_Testall", "MPI_Testany", "MPI_Testsome"};
    for (int v = 0; v < 4; v++) {
        MPI_Request rq[2];
        MPI_Status st;
        int flag = 0, idx, out, idxs[2], done = 0, calls = 0;
        MPI_Irecv(rbuf, maxs + 16, MPI_BYTE, left, 7, W, &rq[0]);
        MPI_Isend(sbuf, sizes[v % nsizes], MPI_BYTE, right, 7, W, &rq[1]);
        if (v == 0) {
            for (flag = 0; !flag; calls++)
                MPI_Test(&rq[0], &flag, MPI_STATUS_IGNORE);
            for (flag = 0; !flag; calls++)
                MPI_Test(&rq[1], &flag, &st);
        } else if (v == 1) {
            for (flag = 0; !flag; calls++)
                MPI_Testall(2, rq, &flag, MPI_STATUSES_IGNORE);
        } else if (v == 2) {
            for (; done < 2; calls++) {
                MPI_Testany(2, rq, &idx, &flag, MPI_STATUS_IGNORE);
                done += flag && idx != MPI_UNDEFINED;
            }
        } else {
            for (; done < 2; calls++) {
                MPI_Testsome(2, rq, &out, idxs, MPI_STATUSES_IGNORE);
                done += out == MPI_UNDEFINED ? 0 : out;
            }
        }
        printf("calls %s %d %d\n", names[v], r, calls);
    }
}

/* Persistent ring right of sizes[nsizes / 2]: REPS x (Startall + Waitall),
 * then REPS x (Start, Start, Wait, Wait). */
static void ring_persistent(void)
{
    MPI_Request pq[2];
    MPI_Send_init(sbuf, sizes[nsizes / 2], MPI_BYTE, right, 8, W, &pq[0]);
    MPI_Recv_init(rbuf, maxs + 16, MPI_BYTE, left, 8, W, &pq[1]);
    for (int k = 0; k < reps; k++) {
        MPI_Startall(2, pq);
        MPI_Waitall(2, pq, MPI_STATUSES_IGNORE);
    }
    for (int k = 0; k < reps; k++) {
        MPI_Start(&pq[1]);
        MPI_Start(&pq[0]);
        MPI_Wait(&pq[0], MPI_STATUS_IGNORE);
        MPI_Wait(&pq[1], MPI_STATUS_IGNORE);
    }
    MPI_Request_free(&pq[0]);
    MPI_Request_free(&pq[1]);
}

/* Every collective once (Allreduce REPS times, plain and in place), COUNT
 * elements per block; v-variants give rank i a block of i + 1 elements. */
static void collectives(void)
{
    size_t big = (size_t)n * P + (size_t)P * P + 64;
    double *da = calloc(big, sizeof(double)), *db = calloc(big, sizeof(double));
    int *ia = calloc(big, sizeof(int)), *ib = calloc(big, sizeof(int));
    int *counts = calloc((size_t)P, sizeof(int)), *displs = calloc((size_t)P, sizeof(int));
    int *mine = calloc((size_t)P, sizeof(int)), *mydispls = calloc((size_t)P, sizeof(int));
    for (int i = 0; i < P; i++) {
        counts[i] = i + 1;
        displs[i] = i ? displs[i - 1] + counts[i - 1] : 0;
        mine[i] = r + 1; /* Alltoallv: every rank sends i + 1 to rank i */
        mydispls[i] = i * (r + 1);
    }
    MPI_Request rq;
    MPI_Bcast(da, n, MPI_DOUBLE, 0, W);
    MPI_Reduce(da, db, n, MPI_DOUBLE, MPI_SUM, 0, W);
    for (int k = 0; k < reps; k++) {
        MPI_Allreduce(da, db, n, MPI_DOUBLE, MPI_SUM, W);
        MPI_Allreduce(MPI_IN_PLACE, db, n, MPI_DOUBLE, MPI_SUM, W);
    }
    MPI_Gather(ia, n, MPI_INT, ib, n, MPI_INT, 0, W);
    if (r == 0)
        MPI_Gather(MPI_IN_PLACE, n, MPI_INT, ib, n, MPI_INT, 0, W);
    else
        MPI_Gather(ia, n, MPI_INT, NULL, 0, MPI_INT, 0, W);
    MPI_Gatherv(ia, r + 1, MPI_INT, ib, counts, displs, MPI_INT, 0, W);
    MPI_Scatter(ia, n, MPI_INT, ib, n, MPI_INT, 0, W);
    MPI_Scatterv(ia, counts, displs, MPI_INT, ib, r + 1, MPI_INT, 0, W);
    MPI_Allgather(ia, n, MPI_INT, ib, n, MPI_INT, W);
    MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, ib, n, MPI_INT, W);
    MPI_Allgatherv(ia, r + 1, MPI_INT, ib, counts, displs, MPI_INT, W);
    MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, ib, counts, displs, MPI_INT, W);
    MPI_Alltoall(ia, n, MPI_INT, ib, n, MPI_INT, W);
    MPI_Alltoallv(ia, counts, displs, MPI_INT, ib, mine, mydispls, MPI_INT, W);
    MPI_Reduce_scatter_block(da, db, n, MPI_DOUBLE, MPI_SUM, W);
    MPI_Reduce_scatter(da, db, counts, MPI_DOUBLE, MPI_SUM, W);
    MPI_Scan(da, db, n, MPI_DOUBLE, MPI_SUM, W);
    MPI_Barrier(W);
    MPI_Iallreduce(da, db, n, MPI_DOUBLE, MPI_SUM, W, &rq);
    MPI_Wait(&rq, MPI_STATUS_IGNORE);

    /* A periodic 1-D Cartesian ring: 2 neighbours per rank, even when P = 1. */
    MPI_Comm cart;
    int dims[1] = {P}, periods[1] = {1};
    MPI_Cart_create(W, 1, dims, periods, 0, &cart);
    MPI_Neighbor_alltoall(ia, n, MPI_INT, ib, n, MPI_INT, cart);
    MPI_Neighbor_allgather(ia, n, MPI_INT, ib, n, MPI_INT, cart);
    MPI_Comm_free(&cart);
    free(da), free(db), free(ia), free(ib), free(counts), free(displs), free(mine), free(mydispls);
}

/* Put COUNT doubles to the right, Get COUNT doubles from the left. */
static void one_sided(void)
{
    double *base = calloc((size_t)n + 1, sizeof(double)), *buf = calloc((size_t)n + 1, sizeof(double));
    MPI_Win win;
    MPI_Win_create(base, (MPI_Aint)(n * sizeof(double)), sizeof(double), MPI_INFO_NULL, W, &win);
    MPI_Win_fence(0, win);
    MPI_Put(buf, n, MPI_DOUBLE, right, 0, n, MPI_DOUBLE, win);
    MPI_Win_fence(0, win);
    MPI_Get(buf, n, MPI_DOUBLE, left, 0, n, MPI_DOUBLE, win);
    MPI_Win_fence(0, win);
    MPI_Win_free(&win);
    free(base), free(buf);
}

/* Each rank writes COUNT doubles at its own offset; after sync-barrier-sync
 * everyone asks for 2 x COUNT doubles of the last rank's block and, at the
 * end of the file, gets COUNT: File_read_at counts the bytes read. */
static void file_io(const char *path)
{
    double *buf = calloc(2 * (size_t)n + 1, sizeof(double));
    MPI_File fh;
    MPI_Offset block = (MPI_Offset)n * (MPI_Offset)sizeof(double);
    MPI_File_open(W, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    MPI_File_write_at(fh, r * block, buf, n, MPI_DOUBLE, MPI_STATUS_IGNORE);
    MPI_File_sync(fh);
    MPI_Barrier(W);
    MPI_File_sync(fh);
    MPI_File_read_at(fh, (P - 1) * block, buf, 2 * n, MPI_DOUBLE, MPI_STATUS_IGNORE);
    MPI_File_close(&fh);
    free(buf);
}

/* Split by parity, ring right of the largest size inside the
 * sub-communicator, then an in-place Allreduce on it. */
static void split_ring(void)
{
    MPI_Comm sub;
    MPI_Request rq[2];
    int q, Q;
    double x[1] = {1.0};
    MPI_Comm_split(W, r % 2, r, &sub);
    MPI_Comm_rank(sub, &q);
    MPI_Comm_size(sub, &Q);
    MPI_Irecv(rbuf, maxs + 16, MPI_BYTE, (q + Q - 1) % Q, 9, sub, &rq[0]);
    MPI_Isend(sbuf, maxs, MPI_BYTE, (q + 1) % Q, 9, sub, &rq[1]);
    MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
    MPI_Allreduce(MPI_IN_PLACE, x, 1, MPI_DOUBLE, MPI_SUM, sub);
    MPI_Comm_free(&sub);
}

/* MPI_PROC_NULL as peer: every message is 0 bytes and none is in the matrix.
 * Both MPIs hand out one shared request handle for such operations, so
 * several in flight at once must still each get their Waitall entry. */
static void proc_null(void)
{
    MPI_Request rq[4];
    MPI_Send(sbuf, maxs, MPI_BYTE, MPI_PROC_NULL, 10, W);
    MPI_Recv(rbuf, maxs, MPI_BYTE, MPI_PROC_NULL, 10, W, MPI_STATUS_IGNORE);
    MPI_Irecv(rbuf, maxs, MPI_BYTE, MPI_PROC_NULL, 10, W, &rq[0]);
    MPI_Irecv(rbuf, maxs, MPI_BYTE, MPI_PROC_NULL, 10, W, &rq[1]);
    MPI_Isend(sbuf, maxs, MPI_BYTE, MPI_PROC_NULL, 10, W, &rq[2]);
    MPI_Isend(sbuf, maxs, MPI_BYTE, MPI_PROC_NULL, 10, W, &rq[3]);
    MPI_Waitall(4, rq, MPI_STATUSES_IGNORE);
    MPI_Sendrecv(sbuf, maxs, MPI_BYTE, MPI_PROC_NULL, 10, rbuf, maxs, MPI_BYTE, MPI_PROC_NULL, 10, W, MPI_STATUS_IGNORE);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    if (argc < 5) {
        fprintf(stderr, "usage: groundtruth IOFILE REPS COUNT SIZE...\n");
        MPI_Abort(W, 2);
    }
    MPI_Comm_size(W, &P);
    MPI_Comm_rank(W, &r);
    right = (r + 1) % P;
    left = (r + P - 1) % P;
    reps = atoi(argv[2]);
    n = atoi(argv[3]);
    nsizes = argc - 4;
    sizes = calloc((size_t)nsizes, sizeof(int));
    for (int i = 0; i < nsizes; i++) {
        sizes[i] = atoi(argv[4 + i]);
        maxs = sizes[i] > maxs ? sizes[i] : maxs;
    }
    sbuf = calloc((size_t)maxs + 64, 1);
    rbuf = calloc((size_t)maxs + 64, 1);
    pairs();
    ring_sendrecv();
    ring_nonblocking();
    ring_burst();
    ring_test_loops();
    ring_persistent();
    collectives();
    one_sided();
    file_io(argv[1]);
    split_ring();
    proc_null();
    MPI_Finalize();
    return 0;
}
