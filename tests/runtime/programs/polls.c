/* The poll forms at the edges of the request bookkeeping: one request per
 * array, null entries, all-null arrays, a persistent request, a handle
 * shared by operations on MPI_PROC_NULL.  Ring right (a rank receives from
 * its left); with one rank it talks to itself.  Each receive is posted
 * before its matching MPI_Send, so the send cannot block.  Poll loops count
 * themselves and print "calls <function> <world rank> <n>".
 * tests/runtime/test_poll_counts.py holds what each call must credit.
 *
 * Usage: polls */
#include <mpi.h>
#include <stdio.h>

#define W MPI_COMM_WORLD
/* One size per phase, each in a bin of its own. */
enum { TESTSOME1 = 100, TESTALL_NULLS = 300, TESTALL1 = 700, TESTANY1 = 1500, PERSISTENT = 3000 };

static int r, left, right;
static char sbuf[4096], rbuf[4096];

static void check(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "polls: rank %d: %s\n", r, what);
        MPI_Abort(W, 3);
    }
}

static void report(const char *fn, int calls) { printf("calls %s %d %d\n", fn, r, calls); }

/* Testsome of one request until it completes, then of the null handle left. */
static void testsome_one(void)
{
    MPI_Request rq;
    int out = 0, idx[1], calls = 0;
    MPI_Irecv(rbuf, sizeof rbuf, MPI_BYTE, left, 1, W, &rq);
    MPI_Send(sbuf, TESTSOME1, MPI_BYTE, right, 1, W);
    for (out = 0; out != 1; calls++) {
        MPI_Testsome(1, &rq, &out, idx, MPI_STATUSES_IGNORE);
        check(out == 0 || out == 1, "Testsome of one request: outcount not 0 or 1");
    }
    check(idx[0] == 0 && rq == MPI_REQUEST_NULL, "Testsome of one request: not completed at index 0");
    MPI_Testsome(1, &rq, &out, idx, MPI_STATUSES_IGNORE);
    check(out == MPI_UNDEFINED, "Testsome of a null handle: outcount not MPI_UNDEFINED");
    report("MPI_Testsome", calls + 1);
}

/* Testall over null handles around one receive (real statuses), then
 * Testall of one request (statuses ignored). */
static void testall_nulls(void)
{
    MPI_Request rq[3] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    MPI_Status st[3];
    int flag = 0, calls = 0;
    MPI_Irecv(rbuf, sizeof rbuf, MPI_BYTE, left, 2, W, &rq[1]);
    MPI_Send(sbuf, TESTALL_NULLS, MPI_BYTE, right, 2, W);
    for (flag = 0; !flag; calls++)
        MPI_Testall(3, rq, &flag, st);
    MPI_Irecv(rbuf, sizeof rbuf, MPI_BYTE, left, 3, W, &rq[0]);
    MPI_Send(sbuf, TESTALL1, MPI_BYTE, right, 3, W);
    for (flag = 0; !flag; calls++)
        MPI_Testall(1, rq, &flag, MPI_STATUSES_IGNORE);
    report("MPI_Testall", calls);
}

/* Testany of null handles only, then of one request until it completes. */
static void testany(void)
{
    MPI_Request rq[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    MPI_Status st;
    int flag = 0, idx = 0, calls = 1;
    MPI_Testany(2, rq, &idx, &flag, &st);
    check(flag && idx == MPI_UNDEFINED, "Testany of null handles: not flag and MPI_UNDEFINED");
    MPI_Irecv(rbuf, sizeof rbuf, MPI_BYTE, left, 4, W, &rq[0]);
    MPI_Send(sbuf, TESTANY1, MPI_BYTE, right, 4, W);
    for (flag = 0; !flag; calls++)
        MPI_Testany(1, rq, &idx, &flag, MPI_STATUS_IGNORE);
    check(idx == 0, "Testany of one request: not completed at index 0");
    report("MPI_Testany", calls);
}

/* A persistent receive completed twice by Testsome of one request (its
 * entry must outlive the first completion), then tested while inactive. */
static void persistent(void)
{
    MPI_Request rq;
    int out, idx[1], calls = 0, flag = 0;
    MPI_Recv_init(rbuf, sizeof rbuf, MPI_BYTE, left, 5, W, &rq);
    for (int k = 0; k < 2; k++) {
        MPI_Start(&rq);
        MPI_Send(sbuf, PERSISTENT, MPI_BYTE, right, 5, W);
        for (out = 0; out != 1; calls++)
            MPI_Testsome(1, &rq, &out, idx, MPI_STATUSES_IGNORE);
    }
    MPI_Test(&rq, &flag, MPI_STATUS_IGNORE);
    check(flag, "Test of an inactive persistent request: flag not set");
    MPI_Request_free(&rq);
    report("MPI_Testsome", calls);
}

/* Two receives from MPI_PROC_NULL (one shared handle under both MPIs),
 * each completed by Testall of one request: 0 bytes each. */
static void proc_null(void)
{
    MPI_Request rq[2];
    int flag = 0, calls = 0;
    MPI_Irecv(rbuf, 8, MPI_BYTE, MPI_PROC_NULL, 6, W, &rq[0]);
    MPI_Irecv(rbuf, 8, MPI_BYTE, MPI_PROC_NULL, 6, W, &rq[1]);
    for (int i = 0; i < 2; i++)
        for (flag = 0; !flag; calls++)
            MPI_Testall(1, &rq[i], &flag, MPI_STATUSES_IGNORE);
    report("MPI_Testall", calls);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int size;
    MPI_Comm_rank(W, &r);
    MPI_Comm_size(W, &size);
    right = (r + 1) % size;
    left = (r + size - 1) % size;
    testsome_one();
    testall_nulls();
    testany();
    persistent();
    proc_null();
    MPI_Finalize();
    return 0;
}
