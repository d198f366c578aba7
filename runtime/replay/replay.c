/* The replay engine: every rank runs through its events in program order and
 * stops only where it needs a time that another rank has not produced yet (a
 * message not yet sent, a receive not yet posted).  Each time is a function of
 * the two ranks' own program-order states, so the result does not depend on
 * which blocked rank is resumed first, and no global event queue is needed.
 * A collective is one row; where no link is shared, the call runs for all its
 * members at once when the last one gets there (collective.c, gather_at),
 * else each rank walks its part of the call's template op by op.  The model
 * and its simplifications are in docs/whatif.md. */
#define _DEFAULT_SOURCE
#include "collective.h"
#include "decoded.h"
#include "model.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define READY 1u /* a request's completion time is known */
#define IS_RECV 2u
#define LOCAL 4u /* a receive from a rank of the same node: through shared memory */
#define WAITED 8u /* in the sweep: a wait its rank is blocked at counts on this request (rank_state.pending) */

/* Collective traffic is matched apart from user messages, as the libraries
 * do with their own communicator contexts; one tag per collective function
 * keeps instances in order (scalewise.whatif.reference does the same). */
#define COLLECTIVE_CONTEXT (1 << 30)

/* A request: when it completes and, for a receive, the size actually sent. */
typedef struct request request;
struct request {
    double done;
    union {
        double size;
        request *next_free; /* a collective's request back in the pool */
    };
    uint32_t flags;
};

/* A send or receive waiting in its match queue for its partner: what the
 * match needs from the side that came first. */
typedef struct {
    double t_post, t_aux; /* send: NIC start and arrival (eager) or RTS time; receive: posting time */
    int64_t bytes;
    request *req;         /* the request the match completes, NULL for an eager send (complete already) */
    int64_t next;         /* the next node of the queue, or of the free list */
    int32_t rank;
    int16_t rndv;
    int16_t local; /* both ranks on one node */
} node;

typedef struct {
    int32_t dst, src, comm, tag;
    int64_t head, tail;
} match_slot;

#define RECV_QUEUE ((int64_t)1 << 62)

/* A rank's block: its state, the seconds it spent in each function, then its
 * request slots, back to back and cache-line aligned.  Every rank's state is
 * touched once per round of the ranks (a collective, a halo exchange), and a
 * round over thousands of ranks does not stay in cache: what one rank needs
 * sits in a few adjacent lines, which one fetch brings in together, rather
 * than in as many arrays. */
typedef struct {
    /* first cache line: what every event reads */
    double clock, call_start;
    int64_t pos, end;  /* the rank's next row, and the end of its rows */
    int64_t top, tend; /* in a collective: the template op reached and the end of the rank's ops */
    const void *resume; /* blocked: the list its wait reads (the trace's wait list or the phase's requests) */
    int8_t started;    /* the current event's (or template op's) posting is done */
    int8_t in_call;    /* inside a collective */
    int8_t blocked;
    int8_t nkeys; /* match keys in the block */
    int32_t pending; /* in the sweep, blocked: the requests of its wait not complete yet */
    int64_t gathered; /* at a collective run for all members at once: that call's number on its communicator */
    /* the links, and the computation so far */
    link_state link; /* the rank's own network link (with ranks on nodes, the node's is used) */
    double shm_tx_free, shm_rx_free; /* the shared-memory channel, apart from the network link */
    double compute;
    request **phase; /* requests the rank posted in the collective's current phase: first the block's own list */
    int64_t nphase, phase_cap;
    double func_time[]; /* nfuncs; the block's match keys, phase requests and request slots follow */
} rank_state;

/* A receiver's match keys ((source, communicator, tag), each with its queue) live in its block, up to
 * KEYS_INLINE_MAX of them (probes stop at an empty entry); the shared table holds any more. */
#define KEYS_INLINE 16
#define KEYS_INLINE_MAX 12

#define POOL_CHUNK 4096 /* collectives' requests come in chunks, which never move */

/* A collective's first PHASE_INLINE requests of a phase, and the list of them, live in the rank's block:
 * a phase's requests are taken and given back last in, first out, so request i of the phase is always the
 * block's i-th.  From a shared pool, each would be one a rank freed a round of the ranks ago, a miss on the
 * pool's free list before the request could even be written. */
#define PHASE_INLINE 8

/* The members of a communicator that have reached its current collective, blocked there until the last
 * one comes and the call runs for all of them (a communicator's members call its collectives in one
 * order, so its members are at most at one call at a time). */
typedef struct {
    int64_t sig, arrived;
    int64_t calls;      /* calls run for all members so far */
    int32_t *ranks;     /* the ranks at the current call, in the order they came */
    sw_member *members; /* by place in the communicator: their states, left there and taken back */
} gathering;

typedef struct {
    const sw_trace *tr;
    const sw_templates *tpl;
    const sw_network *net;
    const sw_network *local; /* shared memory, when ranks share nodes */
    const int32_t *node_of;
    link_state *node_links;      /* with node_of, each node's network link; NULL: each rank's own */
    const double *compute_scale; /* NULL: each rank's compute as recorded */
    const double *host_o;        /* NULL: a user message costs the network's o */
    const double *irecv_cost;    /* NULL: posting a receive is free */
    int host_inside;             /* host_o and irecv_cost were measured inside a node (a one-node trace) */
    sw_result *out;
    char *blocks;           /* the ranks' blocks */
    const int64_t *block_at; /* nranks + 1 offsets into blocks */
    int64_t keys_at;         /* where a block's match keys start */
    int64_t phase_at;        /* where its phase requests start (PHASE_INLINE of them, then their list) */
    int64_t slots_at;        /* where a block's request slots start */
    int32_t *stack;
    int64_t nstack;
    uint64_t *ready; /* without shared links: the ranks ready to run, one bit each (NULL: the stack) */
    int64_t ready_words, cursor;
    int64_t *next_row; /* in the sweep: each rank's next row, as its turn left it (its block need not be read) */
    request **chunks; /* the pool of collectives' requests */
    int64_t nchunks, pool_left;
    request *pool_next, *pool_free;
    node *nodes;
    int64_t nnodes, node_cap, node_free;
    match_slot *slots;
    int64_t nslots, used;
    int64_t rank_span; /* a power of two >= nranks */
    double *scratch;   /* (arrival, bytes) pairs of one wait */
    int64_t scratch_size;
    int64_t ops;
    sw_batch *batch;         /* collectives run for all members at once (collective.h); NULL: op by op */
    gathering *gather;       /* per communicator (sw_batch_comm), the members at its current call */
    int64_t ngather;
    int batching;            /* 0 once stop_batching has been taken */
} engine;

static inline rank_state *rank_at(const engine *e, int32_t r)
{
    return (rank_state *)(e->blocks + e->block_at[r]);
}

/* The network link rank r's messages to and from other nodes pass. */
static inline link_state *link_of(const engine *e, int32_t r)
{
    return e->node_links ? &e->node_links[e->node_of[r]] : &rank_at(e, r)->link;
}

static inline match_slot *keys_of(const engine *e, rank_state *st)
{
    return (match_slot *)((char *)st + e->keys_at);
}

static inline request *phase_requests_of(const engine *e, rank_state *st)
{
    return (request *)((char *)st + e->phase_at);
}

static inline request **phase_list_of(const engine *e, rank_state *st)
{
    return (request **)((char *)st + e->phase_at + PHASE_INLINE * (int64_t)sizeof(request));
}

static inline request *slots_of(const engine *e, rank_state *st)
{
    return (request *)((char *)st + e->slots_at);
}

static inline uint64_t key_hash(int32_t src, int32_t comm, int32_t tag)
{
    uint64_t h = (uint64_t)(uint32_t)src * 0x9E3779B97F4A7C15ull;
    h ^= (uint64_t)(uint32_t)comm * 0xC2B2AE3D27D4EB4Full + (h << 6) + (h >> 2);
    h ^= (uint64_t)(uint32_t)tag * 0x165667B19E3779F9ull + (h << 6) + (h >> 2);
    return h ^ (h >> 29);
}

/* A receiver's first keys are in its own block (keys_of); the shared table
 * takes a receiver's keys beyond those.  There, keys of one receiver start in
 * that receiver's own stretch of the table, so a rank's posts and matches
 * touch a few cache lines, not the whole table. */
static uint64_t slot_of(const engine *e, int64_t nslots, int32_t dst, int32_t src, int32_t comm, int32_t tag)
{
    uint64_t h = key_hash(src, comm, tag);
    uint64_t span = nslots > e->rank_span ? (uint64_t)(nslots / e->rank_span) : 1;
    return ((uint64_t)(uint32_t)dst * span + (h & (span - 1))) & (uint64_t)(nslots - 1);
}

static int grow_slots(engine *e)
{
    int64_t n = e->nslots ? e->nslots * 2 : 8 * e->rank_span;
    match_slot *fresh = malloc((size_t)n * sizeof *fresh);
    if (!fresh)
        return -1;
    sw_huge_pages(fresh, (size_t)n * sizeof *fresh);
    for (int64_t i = 0; i < n; i++)
        fresh[i].head = -2; /* -2: empty slot; -1: key present, queue empty */
    for (int64_t i = 0; i < e->nslots; i++) {
        match_slot *s = &e->slots[i];
        if (s->head == -2)
            continue;
        uint64_t j = slot_of(e, n, s->dst, s->src, s->comm, s->tag);
        while (fresh[j].head != -2)
            j = (j + 1) & (uint64_t)(n - 1);
        fresh[j] = *s;
    }
    free(e->slots);
    e->slots = fresh;
    e->nslots = n;
    return 0;
}

static match_slot *find_slot(engine *e, int32_t dst, int32_t src, int32_t comm, int32_t tag)
{
    rank_state *st = rank_at(e, dst);
    match_slot *own = keys_of(e, st);
    for (uint64_t j = key_hash(src, comm, tag) & (KEYS_INLINE - 1);; j = (j + 1) & (KEYS_INLINE - 1)) {
        match_slot *s = &own[j];
        if (s->head == -2) {
            if (st->nkeys == KEYS_INLINE_MAX) /* the block's keys are taken: the key is in the shared table */
                break;
            *s = (match_slot){dst, src, comm, tag, -1, -1};
            st->nkeys++;
            return s;
        }
        if (s->src == src && s->comm == comm && s->tag == tag)
            return s;
    }
    if (2 * (e->used + 1) > e->nslots && grow_slots(e) != 0)
        return NULL;
    uint64_t mask = (uint64_t)(e->nslots - 1);
    uint64_t j = slot_of(e, e->nslots, dst, src, comm, tag);
    for (;;) {
        match_slot *s = &e->slots[j];
        if (s->head == -2) {
            *s = (match_slot){dst, src, comm, tag, -1, -1};
            e->used++;
            return s;
        }
        if (s->dst == dst && s->src == src && s->comm == comm && s->tag == tag)
            return s;
        j = (j + 1) & mask;
    }
}

static int64_t new_node(engine *e)
{
    if (e->node_free >= 0) {
        int64_t i = e->node_free;
        e->node_free = e->nodes[i].next;
        return i;
    }
    if (e->nnodes == e->node_cap) {
        int64_t cap = e->node_cap ? 2 * e->node_cap : 1024;
        node *g = realloc(e->nodes, (size_t)cap * sizeof *g);
        if (!g)
            return -1;
        sw_huge_pages(g, (size_t)cap * sizeof *g);
        e->nodes = g;
        e->node_cap = cap;
    }
    return e->nnodes++;
}

/* A request from the pool of collectives' requests (the ranks' own are in their blocks). */
static request *new_request(engine *e)
{
    if (e->pool_free) {
        request *q = e->pool_free;
        e->pool_free = q->next_free;
        return q;
    }
    if (!e->pool_left) {
        request **g = realloc(e->chunks, (size_t)(e->nchunks + 1) * sizeof *g);
        if (!g)
            return NULL;
        e->chunks = g;
        if (!(g[e->nchunks] = malloc(POOL_CHUNK * sizeof(request))))
            return NULL;
        e->pool_next = g[e->nchunks++];
        e->pool_left = POOL_CHUNK;
    }
    e->pool_left--;
    return e->pool_next++;
}

static void free_request(engine *e, request *q)
{
    q->next_free = e->pool_free;
    e->pool_free = q;
}

/* A rank's rows are far from the last rank's: fetch its next one as soon as it is known to run again
 * (on the stack, it runs next; in the sweep, later, when the sweep comes round to it). */
static void wake_rank(engine *e, int32_t r)
{
    rank_state *st = rank_at(e, r);
    if (st->blocked) {
        st->blocked = 0;
        if (e->ready) {
            e->ready[r >> 6] |= 1ull << (r & 63);
            return;
        }
        e->stack[e->nstack++] = r;
        __builtin_prefetch(&e->tr->rows[st->pos]);
        __builtin_prefetch((char *)st + 64);
        __builtin_prefetch(slots_of(e, st));
        __builtin_prefetch(slots_of(e, st) + 3);
        if (st->resume)
            __builtin_prefetch(st->resume);
    }
}

/* Request q of rank r is complete.  On the stack (shared links) its rank runs again at once, as the
 * reference does.  In the sweep, only once every request of the wait it is blocked at is complete: a
 * rank run again before would only block again, and its block be read for nothing. */
static inline void wake(engine *e, int32_t r, const request *q)
{
    if (e->ready && (!(q->flags & WAITED) || --rank_at(e, r)->pending > 0))
        return;
    wake_rank(e, r);
}

/* Both sides are known: fix the message's arrival and, for a rendezvous,
 * when the sender's buffer is free again. */
static void match(engine *e, const node *s, const node *r)
{
    const sw_network *net = s->local ? e->local : e->net;
    double bytes = (double)s->bytes;
    int k = range_of(net, bytes);
    double arrival;
    if (s->rndv) {
        s->req->done = rendezvous(net, k, bytes, s->t_post, s->t_aux, r->t_post, &arrival);
        s->req->flags |= READY;
        wake(e, s->rank, s->req);
    } else {
        arrival = s->t_aux;
    }
    r->req->done = arrival;
    r->req->size = bytes; /* the receiver's side needs the size actually sent */
    r->req->flags |= READY | (s->local ? LOCAL : 0);
    wake(e, r->rank, r->req);
}

/* Queue the new side on its key, or pair it with the oldest of the other kind. */
static int post(engine *e, const node *fresh, int32_t dst, int32_t src, int32_t comm, int32_t tag, int is_recv)
{
    match_slot *s = find_slot(e, dst, src, comm, tag);
    if (!s)
        return -1;
    int64_t kind = is_recv ? RECV_QUEUE : 0;
    if (s->head >= 0 && (s->tail & RECV_QUEUE) != kind) {
        int64_t other = s->head;
        s->head = e->nodes[other].next;
        if (is_recv)
            match(e, &e->nodes[other], fresh);
        else
            match(e, fresh, &e->nodes[other]);
        e->nodes[other].next = e->node_free;
        e->node_free = other;
        return 0;
    }
    int64_t i = new_node(e);
    if (i < 0)
        return -1;
    e->nodes[i] = *fresh;
    e->nodes[i].next = -1;
    if (s->head < 0)
        s->head = i;
    else
        e->nodes[s->tail & ~RECV_QUEUE].next = i;
    s->tail = i | kind;
    return 0;
}

static int is_local(const engine *e, int32_t a, int32_t b)
{
    return e->node_of && e->node_of[a] == e->node_of[b];
}

/* The rank's host cost (host) where the traced run measured it, for a message inside a node (local) or
 * between nodes; 0 elsewhere: a one-node trace measured the messages inside a node, one recorded across
 * nodes those between nodes. */
static inline double host_where(const engine *e, int local, double host)
{
    return local == e->host_inside ? host : 0;
}

/* host: the least CPU time the send costs (0 for a collective's messages). */
static int post_send(engine *e, int32_t r, int32_t dst, int64_t nbytes, int32_t comm, int32_t tag, request *q,
                     double host)
{
    int local = is_local(e, r, dst);
    const sw_network *net = local ? e->local : e->net;
    rank_state *st = rank_at(e, r);
    double bytes = (double)nbytes;
    int k = range_of(net, bytes);
    double o = overhead(net, k, host_where(e, local, host));
    double start;
    if (local) { /* a copy through shared memory: one after the other, apart from the NIC */
        start = later(st->clock, st->shm_tx_free);
        st->shm_tx_free = start + net->gap[k] + net->per_byte[k] * bytes;
    } else { /* the NIC sends one message after the other; the CPU only pays o */
        start = link_send(net, link_of(e, r), st->clock, bytes, k, e->node_of ? e->node_of[dst] : dst);
    }
    node n = {.t_post = start, .bytes = nbytes, .req = q, .rank = r, .local = (int16_t)local};
    q->flags = 0;
    if (bytes <= net->eager_limit) {
        n.t_aux = eager_arrival(net, k, start, o, bytes);
        n.req = NULL;
        q->done = st->clock + o;
        q->flags = READY;
    } else {
        n.t_aux = st->clock + o + net->latency[0]; /* RTS arrives */
        n.rndv = 1;
    }
    st->clock += o;
    return post(e, &n, dst, r, comm, tag, 0);
}

static int post_recv(engine *e, int32_t r, int32_t src, int32_t comm, int32_t tag, request *q)
{
    node n = {.t_post = rank_at(e, r)->clock, .req = q, .rank = r, .local = (int16_t)is_local(e, r, src)};
    q->flags = IS_RECV;
    return post(e, &n, r, src, comm, tag, 1);
}

/* The i-th request of a wait's list: a rank's slot (own[slots[i]]), with slots NULL a pool request
 * (list[i]), with both NULL the rank's slot first + i. */
#define REQ_AT(i) (slots ? &own[slots[i]] : list ? list[i] : &own[first + i])

/* In the sweep, a wait that cannot complete yet: its incomplete requests marked, and counted, so that the
 * last of them to complete wakes the rank. */
static void block_on(rank_state *st, const int32_t *slots, int64_t first, request *const *list, int64_t n,
                     request *own)
{
    int32_t pending = 0;
    for (int64_t i = 0; i < n; i++) {
        request *q = REQ_AT(i);
        if (!(q->flags & READY)) {
            q->flags |= WAITED;
            pending++;
        }
    }
    st->pending = pending;
}

/* Complete every request of the list, or return 1 (blocked) and change
 * nothing.  Received messages pass the rank's link one at a time, in the
 * order they arrived, and each costs the receiver o (for the rank's own
 * requests, slots given, at least its host cost per message). */
static int wait_all(engine *e, int32_t r, rank_state *st, const int32_t *slots, int64_t first, request *const *list,
                    int64_t n)
{
    const sw_network *net = e->net;
    request *own = slots_of(e, st);
    double host = !list && e->host_o ? e->host_o[r] : 0;
    int64_t nrecv = 0;
    for (int64_t i = 0; i < n; i++) {
        uint32_t f = REQ_AT(i)->flags;
        if (!(f & READY)) {
            if (e->ready)
                block_on(st, slots, first, list, n, own);
            return 1;
        }
        nrecv += (f & IS_RECV) != 0;
    }
    if (2 * nrecv > e->scratch_size) {
        double *grown = realloc(e->scratch, (size_t)(2 * nrecv) * sizeof *grown);
        if (!grown)
            return -1;
        e->scratch = grown;
        e->scratch_size = 2 * nrecv;
    }
    double t = st->clock;
    int64_t m = 0;
    for (int64_t i = 0; i < n; i++) {
        const request *q = REQ_AT(i);
        if (q->flags & IS_RECV) {
            e->scratch[2 * m] = q->done;
            e->scratch[2 * m + 1] = q->flags & LOCAL ? -1 - q->size : q->size;
            m++;
        } else {
            t = later(t, q->done);
        }
    }
    sort_pairs(e->scratch, m);
    link_state *lk = link_of(e, r); /* the same for every message this wait receives */
    for (int64_t i = 0; i < m; i++) {
        double arrival = e->scratch[2 * i], bytes = e->scratch[2 * i + 1];
        if (bytes < 0) { /* through shared memory: its own channel, its own parameters */
            const sw_network *shm = e->local;
            bytes = -1 - bytes;
            int k = range_of(shm, bytes);
            double wire = shm->per_byte[k] * bytes;
            double end = later(arrival - wire, st->shm_rx_free) + wire;
            st->shm_rx_free = end;
            t = later(t, end) + overhead(shm, k, host_where(e, 1, host));
            continue;
        }
        int k = range_of(net, bytes);
        double end = link_receive(net, lk, arrival, bytes, k);
        t = later(t, end) + overhead(net, k, host_where(e, 0, host));
    }
    st->clock = t;
    return 0;
}

/* The request slots a wait row completes: its entries in the rank's stretch of the wait list. */
static inline const int32_t *waits_of(const sw_trace *tr, int32_t r, const sw_row *x)
{
    return tr->waits + tr->wait_start[r] + x->ref;
}

/* The event's compute, then the call starts. */
static void enter(engine *e, rank_state *st, int32_t r, const sw_row *x)
{
    double compute = sw_compute(e->tr, x);
    if (e->compute_scale)
        compute *= e->compute_scale[r];
    st->clock += compute;
    st->compute += compute;
    st->call_start = st->clock;
}

static void leave(rank_state *st, const sw_row *x)
{
    st->func_time[x->func] += st->clock - st->call_start;
}

/* The match key a message of dst from src will probe, in dst's block. */
static inline void fetch_key(const engine *e, int32_t dst, int32_t src, int32_t comm, int32_t tag)
{
    __builtin_prefetch(&keys_of(e, rank_at(e, dst))[key_hash(src, comm, tag) & (KEYS_INLINE - 1)]);
}

/* The match key of a collective's op (its rank's part, op at `at`), and for a send its receiver's state. */
static inline void fetch_op_key(const engine *e, int32_t r, const sw_row *x, int64_t at)
{
    const sw_templates *tp = e->tpl;
    uint8_t op = tp->op[at];
    if (op == SW_WAIT)
        return;
    int64_t mo = e->tr->sig_members[x->ref];
    int32_t p = tp->peer[at], peer = mo < 0 ? p : e->tr->members[mo + p];
    int32_t comm = x->key | COLLECTIVE_CONTEXT, tag = -1 - (int32_t)x->func;
    if (op == SW_ISEND || op == SW_SEND) {
        __builtin_prefetch(rank_at(e, peer));
        fetch_key(e, peer, r, comm, tag);
    } else {
        fetch_key(e, r, peer, comm, tag);
    }
}

/* One op of the rank's part of a collective: post, or wait for the phase.  0 done, 1 blocked, -1 no memory. */
static int template_op(engine *e, int32_t r, rank_state *st, const sw_row *x)
{
    const sw_templates *tp = e->tpl;
    int64_t sig = x->ref;
    int64_t mo = e->tr->sig_members[sig];
    uint8_t op = tp->op[st->top];
    int32_t p = tp->peer[st->top];
    int32_t comm = x->key | COLLECTIVE_CONTEXT, tag = -1 - (int32_t)x->func;
    if (!st->started) {
        int32_t peer = op == SW_WAIT ? 0 : (mo < 0 ? p : e->tr->members[mo + p]);
        if (op != SW_WAIT) {
            request *q = st->nphase < PHASE_INLINE ? &phase_requests_of(e, st)[st->nphase] : new_request(e);
            if (!q)
                return -1;
            if (st->nphase == st->phase_cap) { /* beyond the block's list: one of the rank's own */
                int64_t cap = 2 * st->phase_cap;
                int inline_list = st->phase == phase_list_of(e, st);
                request **g = realloc(inline_list ? NULL : st->phase, (size_t)cap * sizeof *g);
                if (!g)
                    return -1;
                if (inline_list)
                    memcpy(g, st->phase, (size_t)st->nphase * sizeof *g);
                st->phase = g;
                st->phase_cap = cap;
            }
            st->phase[st->nphase++] = q;
            int rc = op == SW_ISEND || op == SW_SEND ? post_send(e, r, peer, tp->bytes[st->top], comm, tag, q, 0)
                                                     : post_recv(e, r, peer, comm, tag, q);
            if (rc)
                return rc;
        }
        st->started = 1;
        if (st->top + 1 < st->tend) /* the next op's match key, fetched while this one is waited for */
            fetch_op_key(e, r, x, st->top + 1);
    }
    int64_t n = op == SW_WAIT ? p : (op == SW_SEND || op == SW_RECV) ? 1 : 0;
    if (n) {
        int rc = wait_all(e, r, st, NULL, 0, st->phase + st->nphase - n, n);
        if (rc)
            return rc;
        for (int64_t i = st->nphase - n; i < st->nphase; i++)
            if (i >= PHASE_INLINE)
                free_request(e, st->phase[i]);
        st->nphase -= n;
    }
    st->started = 0;
    e->ops++;
    return 0;
}

/* From here on every collective goes op by op: the ranks gathered at a call are woken to walk their parts
 * of it (they are at its first op).  Taken when a rank cannot go on while others wait for a call (a
 * program whose collective is only passed because a library's schedule lets a member through before
 * the others come), when members reach one call with different signatures, or when a call's template
 * cannot complete.  Returns how many ranks were woken. */
static int64_t stop_batching(engine *e)
{
    int64_t woken = 0;
    for (int64_t c = 0; e->batching && c < e->ngather; c++) {
        gathering *g = &e->gather[c];
        for (int64_t i = 0; i < g->arrived; i++, woken++)
            wake_rank(e, g->ranks[i]);
        g->arrived = 0;
    }
    e->batching = 0;
    return woken;
}

/* A rank gathered at collective x runs again: its state after the call, or if the call was not run for
 * all its members (batching stopped first), its part op by op from the first. */
static void pick_up(engine *e, rank_state *st, const sw_row *x)
{
    const gathering *g = &e->gather[sw_batch_comm(e->batch, x->ref)];
    if (st->gathered <= g->calls) {
        st->clock = g->members[x->peer].clock;
        st->link = g->members[x->peer].link;
        st->top = st->tend;
    }
    st->gathered = 0;
    st->blocked = 0;
}

/* Rank r has entered collective x (its compute and the call's cost counted, at its first op): it leaves
 * its state at its place among the members, and blocks until the last member comes, which runs the call
 * for all of them and makes them ready; each takes its state back in its own turn (pick_up), when its
 * block is read anyway.  0: go on (past the call, or op by op); 1: blocked; -1: out of memory. */
static int gather_at(engine *e, int32_t r, rank_state *st, const sw_row *x)
{
    int64_t sig = x->ref, size = e->tpl->sig_size[sig];
    gathering *g = &e->gather[sw_batch_comm(e->batch, sig)];
    /* The members must walk one schedule (a v-collective's members have a signature each, one schedule). */
    if (g->arrived && e->tpl->sig_first[g->sig] != e->tpl->sig_first[sig]) {
        stop_batching(e);
        return 0;
    }
    if (!g->ranks) {
        g->ranks = malloc((size_t)size * sizeof *g->ranks);
        g->members = malloc((size_t)size * sizeof *g->members);
        if (!g->ranks || !g->members)
            return -1;
    }
    g->sig = sig;
    g->ranks[g->arrived++] = r;
    g->members[x->peer].clock = st->clock; /* x->peer: the rank's place in the communicator */
    g->members[x->peer].link = st->link;
    st->gathered = g->calls + 1;
    if (g->arrived < size)
        return 1;
    int64_t ops;
    if (sw_batch_run(e->batch, sig, g->members, &ops)) {
        st->gathered = 0;
        stop_batching(e); /* wakes the others; this rank walks its part itself */
        return 0;
    }
    g->arrived = 0;
    g->calls++;
    e->ops += ops;
    int64_t mo = e->tr->sig_members[sig];
    for (int64_t i = 0; i < size; i++) { /* the others are ready; their blocks are not read here */
        int32_t w = mo < 0 ? (int32_t)i : e->tr->members[mo + i];
        if (w != r)
            e->ready[w >> 6] |= 1ull << (w & 63);
    }
    pick_up(e, st, x);
    return 0;
}

/* 0: event done; 1: blocked; -1: out of memory. */
static int step(engine *e, int32_t r, const sw_row *x)
{
    rank_state *st = rank_at(e, r);
    request *own = slots_of(e, st);
    if (x->kind == SW_COLLECTIVE) {
        if (!st->in_call) {
            const sw_templates *tp = e->tpl;
            enter(e, st, r, x);
            st->clock += tp->sig_cost[x->ref];
            int64_t first = tp->sig_first[x->ref] + x->peer;
            st->top = tp->start[first];
            st->tend = tp->start[first + 1];
            st->in_call = 1;
            if (e->batching) {
                int rc = gather_at(e, r, st, x);
                if (rc)
                    return rc;
            }
        } else if (st->gathered) {
            pick_up(e, st, x);
        }
        while (st->top < st->tend) {
            int rc = template_op(e, r, st, x);
            if (rc)
                return rc;
            st->top++;
        }
        st->in_call = 0;
        leave(st, x);
        return 0;
    }
    if (!st->started) {
        enter(e, st, r, x);
        int rc = 0;
        if (x->kind == SW_ISEND || x->kind == SW_SEND)
            rc = post_send(e, r, x->peer, sw_bytes_of(e->tr, x), e->tr->key_comm[x->key], e->tr->key_tag[x->key],
                           own + x->ref, e->host_o ? e->host_o[r] : 0);
        else if (x->kind == SW_IRECV || x->kind == SW_RECV)
            rc = post_recv(e, r, x->peer, e->tr->key_comm[x->key], e->tr->key_tag[x->key], own + x->ref);
        if (x->kind == SW_IRECV && e->irecv_cost) /* what posting a receive took the traced run */
            st->clock += host_where(e, is_local(e, r, x->peer), e->irecv_cost[r]);
        if (rc)
            return rc;
        st->started = 1;
    }
    int rc = 0;
    if (x->kind == SW_SEND || x->kind == SW_RECV)
        rc = wait_all(e, r, st, NULL, 0, NULL, 1);
    else if (x->kind == SW_WAIT && (x->flags & SW_WAIT_RANGE))
        rc = wait_all(e, r, st, NULL, x->ref, NULL, x->peer);
    else if (x->kind == SW_WAIT)
        rc = wait_all(e, r, st, waits_of(e->tr, r, x), 0, NULL, x->peer);
    if (rc)
        return rc;
    leave(st, x);
    st->started = 0;
    e->ops++;
    return 0;
}

static const char *op_name(uint8_t kind)
{
    static const char *names[] = {"compute", "isend", "irecv", "waitall", "send", "recv", "collective"};
    return kind < sizeof names / sizeof *names ? names[kind] : "unknown";
}

/* The match-table stretch a message of the rank's coming rows will probe, and for a send its receiver's
 * state (a match wakes it): fetched AHEAD rows before they are reached, they are no miss when they come.
 * A collective's first op likewise. */
#define AHEAD 4
static inline void look_ahead(const engine *e, int32_t r, const sw_row *x)
{
    int32_t dst, src;
    if (x->kind == SW_ISEND || x->kind == SW_SEND) {
        dst = x->peer;
        src = r;
        __builtin_prefetch(rank_at(e, dst));
    } else if (x->kind == SW_IRECV || x->kind == SW_RECV) {
        dst = r;
        src = x->peer;
    } else {
        if (x->kind == SW_WAIT && !(x->flags & SW_WAIT_RANGE)) /* its request slots: a list apart from the rows */
            __builtin_prefetch(waits_of(e->tr, r, x));
        if (x->kind == SW_COLLECTIVE && !e->batching) {
            int64_t first = e->tpl->sig_first[x->ref] + x->peer;
            if (e->tpl->start[first] < e->tpl->start[first + 1])
                fetch_op_key(e, r, x, e->tpl->start[first]);
        }
        return;
    }
    fetch_key(e, dst, src, e->tr->key_comm[x->key], e->tr->key_tag[x->key]);
}

/* How far behind the sweep's cursor a rank woken there is run at once rather than at the next round of
 * the sweep.  A rank waits mostly on ranks near it in rank order (a halo's neighbours, a tree's lower
 * levels), which the sweep reaches soon after it: run again then, its block is still in cache; at the
 * next round, a round of every rank's block (16 MiB for 16,384 ranks) later, it is not.  Any order of
 * the ready ranks gives the same times here (no shared links), and each turn follows a wake, of which
 * there are as many as messages: the order changes the speed only. */
#define SWEEP_BACK 256

/* The first ready rank at or after SWEEP_BACK ranks before the sweep's cursor, round the ranks; -1: none
 * is ready. */
static int32_t sweep_next(engine *e)
{
    int64_t from = e->cursor > SWEEP_BACK ? e->cursor - SWEEP_BACK : 0;
    int64_t w = from >> 6;
    uint64_t bits = e->ready[w] & (~0ull << (from & 63));
    for (int64_t seen = 0; !bits; seen++) {
        if (seen == e->ready_words)
            return -1;
        w = w + 1 == e->ready_words ? 0 : w + 1;
        bits = e->ready[w];
    }
    int64_t r = w * 64 + __builtin_ctzll(bits);
    e->ready[w] &= ~(1ull << (r & 63));
    e->cursor = r + 1 == e->ready_words * 64 ? 0 : r + 1;
    return (int32_t)r;
}

/* A ready rank at or after `from` in from's word of the bitmap or the next one, without taking it; -1:
 * none there (what a fetch ahead needs, not a search round all the ranks). */
static inline int64_t ready_near(const engine *e, int64_t from)
{
    int64_t w = from >> 6;
    if (w + 1 >= e->ready_words)
        return -1;
    uint64_t bits = e->ready[w] & (~0ull << (from & 63));
    if (bits)
        return w * 64 + __builtin_ctzll(bits);
    return e->ready[w + 1] ? (w + 1) * 64 + __builtin_ctzll(e->ready[w + 1]) : -1;
}

/* The rank to run next, and fetches for the ranks after it.  With shared links the order of resumes
 * changes the times, so it is the reference's: the last one woken first.  Without, any order gives the
 * same times, and ranks run in rank order round and round: a rank's partners in a halo or a tree are
 * mostly near it in rank order, so their blocks are still in cache when the sweep reaches them. */
static int32_t next_rank(engine *e)
{
    if (!e->ready) {
        if (e->nstack == 0)
            return -1;
        if (e->nstack > 1) /* the rank after this one */
            __builtin_prefetch(rank_at(e, e->stack[e->nstack - 2]));
        return e->stack[--e->nstack];
    }
    /* Three turns of fetches ahead, each one's addresses from what the turn before fetched, none waited
     * for: the first lines of the third rank's block, the second rank's row, and what the next rank's
     * first rows will probe (look_ahead), so that a turn starts with its misses already on their way. */
    int32_t r = sweep_next(e);
    int64_t n1 = r >= 0 ? ready_near(e, e->cursor) : -1, n2 = n1 >= 0 ? ready_near(e, n1 + 1) : -1;
    int64_t n3 = n2 >= 0 ? ready_near(e, n2 + 1) : -1;
    if (n1 >= 0) {
        const sw_row *x = &e->tr->rows[e->next_row[n1]];
        int64_t end = e->tr->rank_start[n1 + 1] - e->next_row[n1];
        for (int64_t k = 0; k < AHEAD && k < end; k++)
            look_ahead(e, (int32_t)n1, x + k);
    }
    if (n2 >= 0)
        __builtin_prefetch(&e->tr->rows[e->next_row[n2]]);
    if (n3 >= 0) {
        const char *b = (const char *)rank_at(e, (int32_t)n3);
        __builtin_prefetch(b);
        __builtin_prefetch(b + 64);
        __builtin_prefetch(b + 128);
    }
    return r;
}

static int run(engine *e, char *err, int64_t err_size)
{
    const sw_trace *tr = e->tr;
    for (int32_t r = (int32_t)tr->nranks - 1; r >= 0; r--) {
        rank_state *st = rank_at(e, r);
        st->pos = tr->rank_start[r];
        st->end = tr->rank_start[r + 1];
        if (e->ready)
            e->ready[r >> 6] |= 1ull << (r & 63);
        else
            e->stack[e->nstack++] = r;
    }
    for (int32_t r;;) {
        if ((r = next_rank(e)) < 0 && !(stop_batching(e) > 0 && (r = next_rank(e)) >= 0))
            break;
        rank_state *st = rank_at(e, r);
        int64_t end = st->end;
        for (int64_t k = st->pos + 1; !e->ready && k < st->pos + AHEAD && k < end; k++) /* resumed: the rows before
                                                                                            * the first */
            look_ahead(e, r, &tr->rows[k]);
        while (st->pos < end) {
            __builtin_prefetch(&tr->rows[st->pos + 2 * AHEAD]); /* a rank's rows are read in order */
            if (st->pos + AHEAD < end)
                look_ahead(e, r, &tr->rows[st->pos + AHEAD]);
            int rc = step(e, r, &tr->rows[st->pos]);
            if (rc < 0) {
                snprintf(err, (size_t)err_size, "out of memory");
                return -1;
            }
            if (rc > 0) {
                const sw_row *x = &tr->rows[st->pos];
                st->blocked = 1;
                st->resume = x->kind == SW_WAIT ? (x->flags & SW_WAIT_RANGE ? (const void *)(slots_of(e, st) + x->ref)
                                                                            : (const void *)waits_of(tr, r, x))
                             : st->in_call && st->nphase ? (const void *)(st->phase + st->nphase - 1)
                                                : NULL;
                if (e->next_row)
                    e->next_row[r] = st->pos;
                break;
            }
            st->pos++;
        }
    }
    for (int32_t r = 0; r < tr->nranks; r++) {
        rank_state *st = rank_at(e, r);
        if (st->pos < tr->rank_start[r + 1]) {
            const sw_row *x = &tr->rows[st->pos];
            uint8_t kind = x->kind;
            int peer = x->peer;
            if (kind == SW_COLLECTIVE) { /* name the message of the schedule the rank is stuck at */
                int64_t mo = tr->sig_members[x->ref];
                int32_t p = e->tpl->peer[st->top];
                kind = e->tpl->op[st->top];
                peer = kind == SW_WAIT ? -1 : (mo < 0 ? p : tr->members[mo + p]);
            }
            snprintf(err, (size_t)err_size, "deadlock: rank %lld waits forever at its event %lld (%s, peer %d)",
                     (long long)r, (long long)(st->pos - tr->rank_start[r]), op_name(kind), peer);
            return -1;
        }
        e->out->finish[r] = st->clock;
    }
    return 0;
}

/* Every signature's template must cover its communicator and hold only known ops. */
static int check_templates(const sw_trace *tr, const sw_templates *tp, char *err, int64_t err_size)
{
    if (tp->nsigs != tr->nsigs) {
        snprintf(err, (size_t)err_size, "%lld templates for %lld collective signatures", (long long)tp->nsigs,
                 (long long)tr->nsigs);
        return -1;
    }
    for (int64_t s = 0; s < tp->nsigs; s++) {
        int64_t size = tp->sig_size[s];
        for (int64_t i = tp->sig_first[s]; i < tp->sig_first[s] + size; i++) {
            for (int64_t j = tp->start[i]; j < tp->start[i + 1]; j++) {
                uint8_t op = tp->op[j];
                int bad = op < SW_ISEND || op > SW_RECV || !(tp->sig_cost[s] >= 0) || isinf(tp->sig_cost[s]);
                bad |= op == SW_WAIT ? tp->peer[j] < 0 : (tp->peer[j] < 0 || tp->peer[j] >= size);
                if (bad) {
                    snprintf(err, (size_t)err_size, "collective template %lld: bad op %lld", (long long)s,
                             (long long)(j - tp->start[i]));
                    return -1;
                }
            }
        }
    }
    return 0;
}

int sw_replay(const sw_trace *tr, const sw_templates *tpl, const sw_network *net, const sw_placement *place,
              sw_result *out, char *err, int64_t err_size)
{
    if (check_templates(tr, tpl, err, err_size))
        return -1;
    engine e = {.tr = tr, .tpl = tpl, .net = net, .out = out, .rank_span = 1, .node_free = -1};
    if (place && place->node_of && place->local) {
        e.node_of = place->node_of;
        e.local = place->local;
        int32_t nnodes = 0;
        for (int64_t r = 0; r < tr->nranks; r++) {
            if (e.node_of[r] < 0) {
                snprintf(err, (size_t)err_size, "placement: rank %lld on node %d, not a node", (long long)r,
                         (int)e.node_of[r]);
                return -1;
            }
            nnodes = e.node_of[r] >= nnodes ? e.node_of[r] + 1 : nnodes;
        }
        e.node_links = calloc((size_t)nnodes + 1, sizeof *e.node_links);
        if (!e.node_links) {
            snprintf(err, (size_t)err_size, "out of memory");
            return -1;
        }
        for (int32_t n = 0; n < nnodes; n++)
            e.node_links[n].credit = net->bucket_bytes; /* every link starts rested */
    }
    if (place) {
        e.compute_scale = place->compute_scale;
        e.host_o = place->host_o;
        e.irecv_cost = place->irecv_cost;
        e.host_inside = place->host_inside != 0;
    }
    while (e.rank_span < tr->nranks)
        e.rank_span *= 2;
    /* Each rank's block: its state and function times, then its request slots, rounded up to cache lines. */
    int64_t *block_at = malloc(((size_t)tr->nranks + 1) * sizeof *block_at);
    e.keys_at = ((int64_t)offsetof(rank_state, func_time) + tr->nfuncs * (int64_t)sizeof(double) + 63) & ~(int64_t)63;
    e.phase_at = e.keys_at + KEYS_INLINE * (int64_t)sizeof(match_slot);
    e.slots_at = e.phase_at + PHASE_INLINE * (int64_t)(sizeof(request) + sizeof(request *));
    for (int64_t r = 0; block_at && r <= tr->nranks; r++)
        block_at[r] = r == 0 ? 0
                             : block_at[r - 1] + ((e.slots_at + (tr->slot_start[r] - tr->slot_start[r - 1]) *
                                                                    (int64_t)sizeof(request) + 63) & ~(int64_t)63);
    e.block_at = block_at;
    size_t blocks = block_at ? (size_t)block_at[tr->nranks] + 64 : 0;
    e.blocks = block_at ? aligned_alloc(64, blocks) : NULL;
    if (e.blocks) {
        sw_huge_pages(e.blocks, blocks);
        memset(e.blocks, 0, blocks);
    }
    e.stack = malloc(((size_t)tr->nranks + 1) * sizeof *e.stack);
    if (!e.node_links) { /* no shared links: the sweep */
        e.ready_words = (tr->nranks + 63) / 64 + 1;
        e.ready = calloc((size_t)e.ready_words, sizeof *e.ready);
        e.next_row = malloc((size_t)tr->nranks * sizeof *e.next_row);
        for (int64_t r = 0; e.next_row && r < tr->nranks; r++)
            e.next_row[r] = tr->rank_start[r];
        if (!e.ready || !e.next_row) {
            free(e.stack);
            e.stack = NULL;
        }
    }
    if (e.ready && e.stack) { /* no shared links: a collective can run for all its members at once */
        int oom;
        e.batch = sw_batch_new(tr, tpl, net, &oom);
        e.ngather = e.batch ? sw_batch_ncomms(e.batch) : 0;
        e.batching = e.batch != NULL;
        e.gather = e.batch ? calloc((size_t)e.ngather + 1, sizeof *e.gather) : NULL;
        if (oom || (e.batch && !e.gather)) {
            free(e.stack);
            e.stack = NULL;
        }
    }
    for (int32_t r = 0; e.blocks && r < tr->nranks; r++) {
        rank_state *st = rank_at(&e, r);
        st->link.credit = net->bucket_bytes; /* every link starts rested */
        st->phase = phase_list_of(&e, st);
        st->phase_cap = PHASE_INLINE;
        for (int k = 0; k < KEYS_INLINE; k++)
            keys_of(&e, st)[k].head = -2;
    }
    int rc = -1;
    if (e.blocks && e.stack && grow_slots(&e) == 0)
        rc = run(&e, err, err_size);
    else
        snprintf(err, (size_t)err_size, "out of memory");
    *out->ops = e.ops;
    for (int32_t r = 0; e.blocks && r < tr->nranks; r++) {
        rank_state *st = rank_at(&e, r);
        out->compute[r] = st->compute;
        memcpy(out->func_time + (int64_t)r * tr->nfuncs, st->func_time, (size_t)tr->nfuncs * sizeof(double));
        if (st->phase != phase_list_of(&e, st))
            free(st->phase);
    }
    free(e.blocks);
    free(block_at);
    free(e.stack);
    free(e.ready);
    free(e.next_row);
    for (int64_t c = 0; c < e.nchunks; c++)
        free(e.chunks[c]);
    free(e.chunks);
    free(e.nodes);
    free(e.node_links);
    free(e.slots);
    free(e.scratch);
    sw_batch_free(e.batch);
    for (int64_t c = 0; e.gather && c < e.ngather; c++)
        free(e.gather[c].ranks), free(e.gather[c].members);
    free(e.gather);
    return rc;
}
