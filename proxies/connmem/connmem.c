/* connmem: how much memory MPI takes per connected peer.
 *
 * Each rank reads its resident set size (VmRSS, /proc/self/status) before
 * MPI_Init, after it, and after exchanging one small message with each of the
 * peers chosen by --peers (none | neighbours: the ranks +-1 in a ring | all),
 * in rounds that pair every rank with one partner at a time so no message
 * waits on another.  No collective runs before the readings: a barrier would
 * itself connect a rank to log2(P) peers under on-demand set-up, so a rank
 * holds exactly the connections MPI_Init made plus those to its chosen peers
 * (it both sends to and receives from each, so both ends have set the
 * connection up when its requests complete).  Beside the memory each rank
 * counts its open sockets (the kernel side of a TCP connection, which VmRSS
 * does not show).  Rank 0 prints one line per rank:
 *   SCALEWISE_CONNMEM rank=R size=P host=H peers=K rss_start=B rss_init=B rss_touched=B
 *                     sockets_init=N sockets_touched=N synced=0|1
 * (bytes), one line with its host's TCP totals from /proc/net/sockstat
 * (sockets in use, and pages of socket buffer memory) at the same two points:
 *   SCALEWISE_CONNMEM_TCP inuse_init=N mem_pages_init=N inuse_touched=N mem_pages_touched=N
 * then the usual SCALEWISE_RESULT line.  The readings travel to rank 0 by
 * MPI_Gather, and under on-demand set-up the gather (and MPI_Finalize, an OFI
 * barrier in Intel MPI and MPICH's ch4) opens connections of its own: a rank
 * that read early would connect to one still waiting for its sockets to hold
 * still.  So with SCALEWISE_CONNMEM_SYNC=DIR (a directory every rank sees:
 * one host, or the emulated nodes) each rank, once it has read, leaves
 * DIR/rank-R and waits, outside MPI, for all P files before it communicates
 * again; every reading then counts exactly the connections described above.
 * A rank whose wait ran out (10 s: DIR not shared) says so in its line
 * (synced=0) and goes on.  Nothing else is computed here: the
 * fit lives in scalewise (analysis/memory.py).
 */
#define _GNU_SOURCE /* gethostname */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static long long rss_bytes(void) {
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long long kib = -1;
    if (!f) return -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "VmRSS: %lld kB", &kib) == 1) break;
    fclose(f);
    return kib < 0 ? -1 : kib * 1024;
}

/* Open file descriptors that are sockets (readlink gives "socket:[inode]"). */
static long long socket_count(void) {
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;
    char path[300], target[64];
    long long n = 0;
    if (!d) return -1;
    while ((e = readdir(d))) {
        snprintf(path, sizeof path, "/proc/self/fd/%s", e->d_name);
        ssize_t len = readlink(path, target, sizeof target - 1);
        if (len > 0 && !strncmp(target, "socket:", 7)) n++;
    }
    closedir(d);
    return n;
}

/* This host's TCP sockets in use and their buffer memory in pages, or -1s. */
static void tcp_totals(long long out[2]) {
    FILE *f = fopen("/proc/net/sockstat", "r");
    char line[256];
    out[0] = out[1] = -1;
    if (!f) return;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "TCP: inuse %lld orphan %*d tw %*d alloc %*d mem %lld", &out[0], &out[1]) == 2) break;
    fclose(f);
}

/* Leave DIR/rank-R and wait until all size ranks have left theirs (polling,
 * no MPI): 1 when they all arrived, 0 when the wait ran out or DIR is unset. */
static int wait_for_all_readings(int rank, int size) {
    const char *dir = getenv("SCALEWISE_CONNMEM_SYNC");
    char path[4096];
    if (!dir || !*dir) return 0;
    snprintf(path, sizeof path, "%s/rank-%d", dir, rank);
    int fd = open(path, O_CREAT | O_WRONLY, 0644);
    if (fd < 0) {
        fprintf(stderr, "connmem: cannot leave %s: %s\n", path, strerror(errno));
        return 0;
    }
    close(fd);
    for (int tries = 0; tries < 2000; tries++) { /* 5 ms each: 10 s */
        int here = 0;
        for (int r = 0; r < size; r++) {
            snprintf(path, sizeof path, "%s/rank-%d", dir, r);
            here += access(path, F_OK) == 0;
        }
        if (here == size) return 1;
        usleep(5000);
    }
    fprintf(stderr, "connmem: rank %d: not every rank reached %s within 10 s\n", rank, dir);
    return 0;
}

static int is_peer(const char *mode, int rank, int other, int size) {
    if (other == rank) return 0;
    if (!strcmp(mode, "all")) return 1;
    if (!strcmp(mode, "neighbours")) return other == (rank + 1) % size || other == (rank + size - 1) % size;
    return 0;
}

int main(int argc, char **argv) {
    long long start = rss_bytes();
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *mode = "all";
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--peers") && i + 1 < argc) {
            mode = argv[++i];
        } else {
            if (rank == 0) fprintf(stderr, "connmem: unknown argument '%s' (usage: connmem [--peers none|neighbours|all])\n", argv[i]);
            MPI_Finalize();
            return 2;
        }
    }
    if (strcmp(mode, "none") && strcmp(mode, "neighbours") && strcmp(mode, "all")) {
        if (rank == 0) fprintf(stderr, "connmem: --peers must be none, neighbours or all, got '%s'\n", mode);
        MPI_Finalize();
        return 2;
    }
    long long after_init = rss_bytes(), sockets_init = socket_count();
    long long tcp_init[2], tcp_touched[2];
    tcp_totals(tcp_init);
    /* Round r pairs rank with rank XOR-free partner (rank + r) and (rank - r):
     * a send to one and a receive from the other, both at distance r. */
    int peers = 0;
    char out = 1, in = 0;
    for (int r = 1; r < size; r++) {
        int to = (rank + r) % size, from = (rank - r + size) % size;
        int send = is_peer(mode, rank, to, size), recv = is_peer(mode, rank, from, size);
        MPI_Request req[2];
        MPI_Status st[2];
        int n = 0;
        if (recv) MPI_Irecv(&in, 1, MPI_CHAR, from, r, MPI_COMM_WORLD, &req[n++]);
        if (send) MPI_Isend(&out, 1, MPI_CHAR, to, r, MPI_COMM_WORLD, &req[n++]);
        MPI_Waitall(n, req, st);
    }
    for (int other = 0; other < size; other++) peers += is_peer(mode, rank, other, size);
    /* A connection may still be settling (two ranks that connected to each
     * other at once, an accept not yet handled): drive progress until the
     * socket count holds still for 50 ms, at most 1 s. */
    for (long long i = 0, prev = -1, still = 0; i < 100 && still < 5; i++) {
        int flag;
        MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
        long long now = socket_count();
        still = now == prev ? still + 1 : 0;
        prev = now;
        usleep(10000);
    }
    long long touched = rss_bytes(), sockets_touched = socket_count();
    tcp_totals(tcp_touched);
    char host[64] = "?";
    gethostname(host, sizeof host - 1);
    long long synced = wait_for_all_readings(rank, size);
    enum { FIELDS = 7 };
    long long mine[FIELDS] = {start, after_init, touched, peers, sockets_init, sockets_touched, synced};
    long long *all = rank == 0 ? malloc(sizeof mine * (size_t)size) : NULL;
    char *hosts = rank == 0 ? malloc(sizeof host * (size_t)size) : NULL;
    MPI_Gather(mine, FIELDS, MPI_LONG_LONG, all, FIELDS, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
    MPI_Gather(host, (int)sizeof host, MPI_CHAR, hosts, (int)sizeof host, MPI_CHAR, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        for (int r = 0; r < size; r++) {
            const long long *v = all + FIELDS * r;
            printf("SCALEWISE_CONNMEM rank=%d size=%d host=%s peers=%lld rss_start=%lld rss_init=%lld rss_touched=%lld"
                   " sockets_init=%lld sockets_touched=%lld synced=%lld\n",
                   r, size, hosts + r * (int)sizeof host, v[3], v[0], v[1], v[2], v[4], v[5], v[6]);
        }
        printf("SCALEWISE_CONNMEM_TCP inuse_init=%lld mem_pages_init=%lld inuse_touched=%lld mem_pages_touched=%lld\n",
               tcp_init[0], tcp_init[1], tcp_touched[0], tcp_touched[1]);
        printf("SCALEWISE_RESULT app=connmem ranks=%d peers=%s status=PASS\n", size, mode);
        free(all);
        free(hosts);
    }
    MPI_Finalize();
    return 0;
}
