/* Discrete-event replay of per-rank MPI event streams under a LogGOPS-style
 * model (docs/whatif.md).  The Python side (scalewise.whatif.engine) fills
 * these structures with numpy arrays and calls sw_replay() through ctypes;
 * the layouts here and there must stay in step. */
#ifndef SW_REPLAY_H
#define SW_REPLAY_H

#include <stdint.h>

/* Event operations.  Collectives arrive already decomposed into these. */
enum sw_op {
    SW_OP_NONE = 0,    /* compute only (e.g. an MPI call the model treats as free) */
    SW_OP_ISEND = 1,
    SW_OP_IRECV = 2,
    SW_OP_WAITALL = 3, /* peer = number of requests, aux = offset into reqs */
    SW_OP_SEND = 4,
    SW_OP_RECV = 5,
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
} sw_network;

/* One event, all fields side by side: the engine reads every rank's current
 * event at once, so one event should be one or two cache lines, not one line
 * per field.  48 bytes; numpy's aligned structured dtype has this layout. */
typedef struct {
    int64_t bytes;
    double compute; /* seconds of computation before the event */
    int64_t aux;    /* WAITALL: first index into reqs */
    int32_t peer;   /* world rank of the partner; request count for WAITALL */
    int32_t tag;
    int32_t comm; /* matching context: user tags and collectives never mix */
    int32_t func; /* index into the caller's function-name table */
    uint8_t op;
    /* Seconds of the library's own work inside the call before it posts
     * anything: a collective's measured per-call cost that its point-to-point
     * decomposition does not pay (scalewise calibrate measures it).  Sits in
     * the padding after op, so the record stays 48 bytes. */
    float cost;
} sw_event;

typedef struct {
    int64_t nranks, nevents, nfuncs;
    const int64_t *rank_start; /* nranks + 1 offsets into events */
    const sw_event *events;
    const int64_t *reqs; /* event indices of the ISEND/IRECV each wait completes */
    int64_t nreqs;
} sw_trace;

typedef struct {
    double *finish;    /* nranks: time the rank's last event ended */
    double *compute;   /* nranks: seconds of computation */
    double *func_time; /* nranks * nfuncs: seconds inside each MPI function */
    char *error;       /* a one-line reason when sw_replay returns non-zero */
    int64_t error_size;
} sw_result;

int sw_replay(const sw_trace *trace, const sw_network *net, sw_result *out);

#endif
