/* Discrete-event replay of a recorded trace (.swtrace) under a LogGOPS-style
 * model (docs/whatif.md).  The engine reads the trace file's rank blocks
 * itself (decode.c): it inflates them, decodes the columns into one compact
 * row per event and resolves each wait's requests.  Collectives stay one row;
 * the replay walks the point-to-point schedule the target library would run
 * (a template per distinct call, built by scalewise.whatif.collectives) as it
 * reaches the call.  The Python side (scalewise.whatif.engine) drives it
 * through ctypes; the layouts here and there must stay in step. */
#ifndef SW_REPLAY_H
#define SW_REPLAY_H

#include <stdint.h>

/* Event kinds, as the trace file's kind column (docs/trace-format.md). */
enum sw_kind {
    SW_OTHER = 0, /* an MPI call the model treats as free: compute only */
    SW_ISEND = 1,
    SW_IRECV = 2,
    SW_WAIT = 3,
    SW_SEND = 4,
    SW_RECV = 5,
    SW_COLLECTIVE = 6,
};

/* One size range of the piecewise model: messages of at most upto bytes
 * (the last range covers every larger size). Times in seconds. */
typedef struct {
    int64_t nranges;
    const double *upto;
    const double *latency;  /* L: wire and switch latency */
    const double *overhead; /* o: CPU time per message, at sender and receiver */
    const double *gap;      /* g: minimum time between two injections at one NIC */
    const double *per_byte; /* G: seconds per byte (1 / bandwidth) */
    double eager_limit;     /* messages of at most this many bytes go eagerly */
    /* A shaped link (token bucket, as tc tbf or a cloud instance's rate
     * limit): each rank's outgoing link holds bucket_bytes of credit that
     * refills at bucket_rate bytes per second; a message larger than the
     * credit left waits for the rest.  bucket_rate 0: not shaped. */
    double bucket_bytes;
    double bucket_rate;
    /* 1: a rank's incoming messages take turns with its outgoing ones on its
     * link (a transport that moves one direction at a time, as Open MPI's
     * TCP transport measured on shaped links); 0: both directions at once. */
    int64_t half_duplex;
    /* Both directions at once, each slower than alone (the link also carries the
     * acknowledgements of the other direction's data): the part of an incoming
     * message's wire time that overlaps the rank's own sending costs this much
     * more (the calibration's both ways / one way, less 1); 0: none. */
    double exchange_extra;
    /* A link exchanging with several nodes at once: entry k-1 is exchange_extra for a link whose current
     * stretch of sending goes to k other nodes (an all-to-all of k+1 nodes, as calibrated); beyond the
     * last entry, the last.  npeers 0: exchange_extra whatever the peers. */
    int64_t npeers;
    const double *peers_extra;
} sw_network;

/* Where each rank's block sits in the file image (the Python reader walks
 * the block headers; the payloads are decoded here). */
typedef struct {
    const uint8_t *image;
    int64_t nranks, nfuncs;
    const int64_t *payload;    /* nranks: offset of the compressed payload */
    const int64_t *payload_len;
    const int64_t *nevents;    /* nranks */
    const int64_t *nwait;      /* nranks: wait-request entries */
    const uint8_t *is_vector;  /* nfuncs: 1 for the v-collectives, whose schedule needs every member's size */
    /* Communicators other than an undescribed world: ids and members (world
     * ranks in comm-rank order), comm_start has ncomms + 1 offsets. */
    int64_t ncomms;
    const int64_t *comm_id;
    const int64_t *comm_start;
    const int64_t *members;
} sw_source;

/* A distinct collective call: every row with these values runs one template.
 * vinst is the call's position among the rank's collectives on comm for a
 * v-collective (whose members' sizes differ call by call), else -1. */
typedef struct {
    int64_t func, comm, bytes, root, flags, vinst;
} sw_signature;

/* One v-collective call of one rank: the sizes its schedule is built from. */
typedef struct {
    int64_t rank, comm, vinst, func, bytes;
} sw_vcall;

/* The schedules, one template per signature: template t's ops for comm rank
 * i are ops[start[first[t] + i] .. start[first[t] + i + 1]).  peer is a comm
 * rank, or for SW_WAIT the number of requests the wait completes: the ones
 * the rank posted just before it. */
typedef struct {
    int64_t nsigs;
    const int64_t *sig_first; /* nsigs: where the signature's start offsets begin */
    const int64_t *sig_size;  /* nsigs: its communicator's size */
    const double *sig_cost;   /* nsigs: the library's measured work per call, seconds */
    const int64_t *start;
    const uint8_t *op;        /* SW_ISEND, SW_IRECV, SW_WAIT, SW_SEND, SW_RECV */
    const int32_t *peer;
    const int64_t *bytes;
} sw_templates;

/* Where the ranks run.  Ranks on nodes: a message between two ranks of one
 * node goes through shared memory, costed with `local` (its ranges and eager
 * limit; no shaping, both directions at once) on a channel of its own, apart
 * from the node's network link, which the node's ranks share (and its token
 * bucket) for their messages to and from other nodes.  node_of NULL: every
 * rank on a node of its own.  compute_scale: each rank's computation times this factor (another
 * processor, or another run's compute); NULL: as recorded. */
typedef struct {
    const int32_t *node_of; /* nranks */
    const sw_network *local;
    const double *compute_scale; /* nranks */
    /* The traced run's host costs (scalewise.whatif.hostcost), nranks each;
     * NULL: the network's o alone.  host_o: the least CPU time each of the
     * rank's own messages to or from another node costs at its end, in place
     * of o when more (a collective's messages keep o).  irecv_cost: the CPU
     * time of posting a non-blocking receive from another node.  host_inside
     * 1: both were measured with every rank on one node (a one-node trace),
     * so they cost the messages inside a node instead, and none between. */
    const double *host_o;
    const double *irecv_cost;
    int64_t host_inside;
} sw_placement;

typedef struct {
    double *finish;    /* nranks: time the rank's last event ended */
    double *compute;   /* nranks: seconds of computation */
    double *func_time; /* nranks * nfuncs: seconds inside each MPI function */
    int64_t *ops;      /* 1: point-to-point operations the replay ran (collectives expanded) */
} sw_result;

typedef struct sw_trace sw_trace;

/* Decode every rank block; NULL with a one-line reason in err on bad data. */
sw_trace *sw_open(const sw_source *src, char *err, int64_t err_size);
int64_t sw_nsigs(const sw_trace *t);
const sw_signature *sw_sigs(const sw_trace *t);
int64_t sw_nvcalls(const sw_trace *t);
const sw_vcall *sw_vcalls(const sw_trace *t);
/* Resident bytes of the decoded trace (rows, wait lists, tables). */
int64_t sw_bytes(const sw_trace *t);
/* Replay on one network; non-zero with a one-line reason in err (deadlock, ...). */
int sw_replay(const sw_trace *t, const sw_templates *tpl, const sw_network *net, const sw_placement *place,
              sw_result *out, char *err, int64_t err_size);
void sw_close(sw_trace *t);

#endif
