/* The replay engine: every rank runs through its events in program order and
 * stops only where it needs a time that another rank has not produced yet (a
 * message not yet sent, a receive not yet posted).  Each time is a function of
 * the two ranks' own program-order states, so the result does not depend on
 * which blocked rank is resumed first, and no global event queue is needed.
 * The model and its simplifications are in docs/whatif.md. */
#define _DEFAULT_SOURCE /* madvise */
#include "replay.h"

#include <math.h>
#include <sys/mman.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define READY 1u /* a request's completion time is known */
#define RNDV 2u  /* a send that goes by rendezvous */

typedef struct {
    double clock, tx_free, rx_free, call_start;
    double tx_from; /* start of the link's current stretch of sending, which ends at tx_free */
    double credit, credit_at; /* the shaped link's bucket: bytes of credit at time credit_at */
    int64_t pos;
    int started; /* the current event's compute and posting are done */
    int blocked;
} rank_state;

/* 32 bytes, two to a cache line.  The queue holds unmatched sends or
 * unmatched receives, never both; which one is the top bit of tail. */
typedef struct {
    int32_t dst, src, comm, tag;
    int64_t head, tail;
} match_slot;

#define RECV_QUEUE ((int64_t)1 << 62)

/* Per event: posting time, a second time (arrival, RTS, or for a receive the
 * size actually sent), completion, the next event in its match queue. */
typedef struct {
    double t_post, t_aux, done;
    int64_t next;
    uint32_t flags;
} ev_state;

typedef struct {
    const sw_trace *tr;
    const sw_network *net;
    sw_result *out;
    rank_state *ranks;
    int32_t *stack;
    int64_t nstack;
    ev_state *st;
    match_slot *slots;
    int64_t nslots, used;
    int64_t rank_span; /* a power of two >= nranks */
    double *scratch; /* (arrival, bytes) pairs of one wait */
    int64_t scratch_size;
} engine;

/* Per-event arrays are read at every rank's current position at once, which
 * spreads accesses over the whole array: on 4 KiB pages long traces would
 * pay a TLB miss per access, so ask for huge pages. */
static void *big_alloc(size_t size)
{
    size_t huge = (size_t)2 << 20;
    size_t rounded = (size + huge - 1) / huge * huge;
    void *p = aligned_alloc(huge, rounded);
    if (p)
        madvise(p, rounded, MADV_HUGEPAGE);
    return p;
}

static int range_of(const sw_network *net, double bytes)
{
    int64_t k = 0;
    while (k + 1 < net->nranges && bytes > net->upto[k])
        k++;
    return (int)k;
}

/* Keys of one receiver start in that receiver's own stretch of the table, so
 * a rank's posts and matches touch a few cache lines, not the whole table. */
static uint64_t slot_of(const engine *e, int64_t nslots, int32_t dst, int32_t src, int32_t comm, int32_t tag)
{
    uint64_t h = (uint64_t)(uint32_t)src * 0x9E3779B97F4A7C15ull;
    h ^= (uint64_t)(uint32_t)comm * 0xC2B2AE3D27D4EB4Full + (h << 6) + (h >> 2);
    h ^= (uint64_t)(uint32_t)tag * 0x165667B19E3779F9ull + (h << 6) + (h >> 2);
    h ^= h >> 29;
    uint64_t span = nslots > e->rank_span ? (uint64_t)(nslots / e->rank_span) : 1;
    return ((uint64_t)(uint32_t)dst * span + (h & (span - 1))) & (uint64_t)(nslots - 1);
}

static int grow_slots(engine *e)
{
    int64_t n = e->nslots ? e->nslots * 2 : 8 * e->rank_span;
    match_slot *fresh = big_alloc((size_t)n * sizeof *fresh);
    if (!fresh)
        return -1;
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

static void wake(engine *e, int32_t r)
{
    if (e->ranks[r].blocked) {
        e->ranks[r].blocked = 0;
        e->stack[e->nstack++] = r;
    }
}

/* Both sides are known: fix the message's arrival and, for a rendezvous,
 * when the sender's buffer is free again. */
static void match(engine *e, int64_t s, int64_t r)
{
    const sw_network *net = e->net;
    double bytes = (double)e->tr->events[s].bytes;
    int k = range_of(net, bytes);
    double arrival;
    if (e->st[s].flags & RNDV) {
        double cts = fmax(e->st[s].t_aux, e->st[r].t_post) + net->latency[0];
        double start = fmax(e->st[s].t_post, cts);
        arrival = start + net->latency[k] + net->per_byte[k] * bytes;
        e->st[s].done = start + net->per_byte[k] * bytes;
        e->st[s].flags |= READY;
        wake(e, e->tr->events[r].peer);
    } else {
        arrival = e->st[s].t_aux;
    }
    e->st[r].done = arrival;
    e->st[r].t_aux = bytes; /* the receiver's side needs the size actually sent */
    e->st[r].flags |= READY;
    wake(e, e->tr->events[s].peer);
}

/* Queue ev on its key, or pair it with the oldest event of the other kind. */
static int post(engine *e, int64_t ev, int32_t dst, int32_t src, int is_recv)
{
    match_slot *s = find_slot(e, dst, src, e->tr->events[ev].comm, e->tr->events[ev].tag);
    if (!s)
        return -1;
    e->st[ev].next = -1;
    int64_t kind = is_recv ? RECV_QUEUE : 0;
    if (s->head >= 0 && (s->tail & RECV_QUEUE) != kind) {
        int64_t other = s->head;
        s->head = e->st[other].next;
        if (is_recv)
            match(e, other, ev);
        else
            match(e, ev, other);
        return 0;
    }
    if (s->head < 0)
        s->head = ev;
    else
        e->st[s->tail & ~RECV_QUEUE].next = ev;
    s->tail = ev | kind;
    return 0;
}

/* How long the shaped link holds a message of `bytes` leaving at `start`
 * back: the bucket refills up to its size, the message takes what credit
 * there is and waits for the rest at the bucket's rate. */
static double shaping_delay(const sw_network *net, rank_state *st, double start, double bytes)
{
    if (net->bucket_rate <= 0)
        return 0;
    double credit = fmin(net->bucket_bytes, st->credit + fmax(start - st->credit_at, 0) * net->bucket_rate);
    double delay = fmax(bytes - credit, 0) / net->bucket_rate;
    st->credit = fmax(credit - bytes, 0);
    st->credit_at = fmax(start, st->credit_at) + delay;
    return delay;
}

static int post_send(engine *e, int32_t r, int64_t ev)
{
    const sw_network *net = e->net;
    rank_state *st = &e->ranks[r];
    double bytes = (double)e->tr->events[ev].bytes;
    int k = range_of(net, bytes);
    /* The NIC sends one message after the other; the CPU only pays o. */
    double start = fmax(st->clock, st->tx_free);
    if (start > st->tx_free)
        st->tx_from = start;
    start += shaping_delay(net, st, start, bytes);
    st->tx_free = start + net->gap[k] + net->per_byte[k] * bytes;
    e->st[ev].t_post = start;
    if (bytes <= net->eager_limit) {
        e->st[ev].t_aux = start + net->overhead[k] + net->latency[k] + net->per_byte[k] * bytes;
        e->st[ev].done = st->clock + net->overhead[k];
        e->st[ev].flags = READY;
    } else {
        e->st[ev].t_aux = st->clock + net->overhead[k] + net->latency[0]; /* RTS arrives */
        e->st[ev].flags = RNDV;
    }
    st->clock += net->overhead[k];
    return post(e, ev, e->tr->events[ev].peer, r, 0);
}

static int post_recv(engine *e, int32_t r, int64_t ev)
{
    e->st[ev].t_post = e->ranks[r].clock;
    e->st[ev].flags = 0;
    return post(e, ev, r, e->tr->events[ev].peer, 1);
}

/* By arrival, then size: equal arrivals still get one order on every run. */
static int by_arrival(const void *a, const void *b)
{
    const double *x = a, *y = b;
    if (x[0] != y[0])
        return (x[0] > y[0]) - (x[0] < y[0]);
    return (x[1] > y[1]) - (x[1] < y[1]);
}

/* Sort (arrival, bytes) pairs by arrival: waits are mostly a handful of
 * requests, where insertion sort beats qsort's indirect calls. */
static void sort_pairs(double *p, int64_t m)
{
    if (m > 16) {
        qsort(p, (size_t)m, 2 * sizeof(double), by_arrival);
        return;
    }
    for (int64_t i = 1; i < m; i++) {
        double a = p[2 * i], b = p[2 * i + 1];
        int64_t j = i - 1;
        for (; j >= 0 && (p[2 * j] > a || (p[2 * j] == a && p[2 * j + 1] > b)); j--) {
            p[2 * j + 2] = p[2 * j];
            p[2 * j + 3] = p[2 * j + 1];
        }
        p[2 * j + 2] = a;
        p[2 * j + 3] = b;
    }
}

/* Complete every request of the list, or return 1 (blocked) and change
 * nothing.  Received messages pass the rank's link one at a time, in the
 * order they arrived, and each costs the receiver o. */
static int wait_all(engine *e, int32_t r, const int64_t *reqs, int64_t n)
{
    const sw_network *net = e->net;
    rank_state *st = &e->ranks[r];
    int64_t nrecv = 0;
    for (int64_t i = 0; i < n; i++) {
        if (!(e->st[reqs[i]].flags & READY))
            return 1;
        if (e->tr->events[reqs[i]].op == SW_OP_IRECV || e->tr->events[reqs[i]].op == SW_OP_RECV)
            nrecv++;
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
        int64_t q = reqs[i];
        if (e->tr->events[q].op == SW_OP_IRECV || e->tr->events[q].op == SW_OP_RECV) {
            e->scratch[2 * m] = e->st[q].done;
            e->scratch[2 * m + 1] = e->st[q].t_aux;
            m++;
        } else {
            t = fmax(t, e->st[q].done);
        }
    }
    sort_pairs(e->scratch, m);
    for (int64_t i = 0; i < m; i++) {
        double arrival = e->scratch[2 * i], bytes = e->scratch[2 * i + 1];
        int k = range_of(net, bytes);
        double wire = net->per_byte[k] * bytes;
        double end = fmax(arrival - wire, st->rx_free) + wire;
        if (net->half_duplex) {
            /* The message held the link for its wire time and, shaped, its wait beyond the
             * bucket; whatever of that overlaps the rank's own sending is moved after it. */
            double held = wire + (net->bucket_rate > 0 ? fmax(bytes - net->bucket_bytes, 0) / net->bucket_rate : 0);
            double from = fmax(arrival - held, st->rx_free);
            end = from + held + fmax(0, fmin(from + held, st->tx_free) - fmax(from, st->tx_from));
        }
        st->rx_free = end;
        t = fmax(t, end) + net->overhead[k];
    }
    st->clock = t;
    return 0;
}

/* 0: event done; 1: blocked; -1: out of memory. */
static int step(engine *e, int32_t r, int64_t ev)
{
    const sw_trace *tr = e->tr;
    rank_state *st = &e->ranks[r];
    uint8_t op = tr->events[ev].op;
    if (!st->started) {
        st->clock += tr->events[ev].compute;
        e->out->compute[r] += tr->events[ev].compute;
        st->call_start = st->clock;
        st->clock += tr->events[ev].cost;
        int rc = 0;
        if (op == SW_OP_ISEND || op == SW_OP_SEND)
            rc = post_send(e, r, ev);
        else if (op == SW_OP_IRECV || op == SW_OP_RECV)
            rc = post_recv(e, r, ev);
        if (rc)
            return rc;
        st->started = 1;
    }
    int rc = 0;
    if (op == SW_OP_SEND || op == SW_OP_RECV)
        rc = wait_all(e, r, &ev, 1);
    else if (op == SW_OP_WAITALL)
        rc = wait_all(e, r, tr->reqs + tr->events[ev].aux, tr->events[ev].peer);
    if (rc)
        return rc;
    e->out->func_time[r * tr->nfuncs + tr->events[ev].func] += st->clock - st->call_start;
    st->started = 0;
    return 0;
}

static const char *op_name(uint8_t op)
{
    static const char *names[] = {"compute", "isend", "irecv", "waitall", "send", "recv"};
    return op < sizeof names / sizeof *names ? names[op] : "unknown";
}

static int check(const sw_trace *tr, sw_result *out)
{
    for (int64_t ev = 0; ev < tr->nevents; ev++) {
        const sw_event *x = &tr->events[ev];
        int bad = x->op > SW_OP_RECV || x->func < 0 || x->func >= tr->nfuncs || !(x->cost >= 0) || isinf(x->cost);
        if (x->op == SW_OP_WAITALL) {
            bad |= x->peer < 0 || x->aux < 0 || x->aux + x->peer > tr->nreqs;
            for (int64_t i = 0; !bad && i < x->peer; i++) {
                int64_t q = tr->reqs[x->aux + i];
                bad |= q < 0 || q >= tr->nevents || (tr->events[q].op != SW_OP_ISEND &&
                                                     tr->events[q].op != SW_OP_IRECV);
            }
        } else if (x->op != SW_OP_NONE) {
            bad |= x->peer < 0 || x->peer >= tr->nranks;
        }
        if (!bad)
            continue;
        snprintf(out->error, (size_t)out->error_size,
                 "event %lld: bad operation, peer, function, cost or request list", (long long)ev);
        return -1;
    }
    return 0;
}

static int run(engine *e)
{
    const sw_trace *tr = e->tr;
    for (int32_t r = (int32_t)tr->nranks - 1; r >= 0; r--) {
        e->ranks[r].pos = tr->rank_start[r];
        e->stack[e->nstack++] = r;
    }
    while (e->nstack > 0) {
        int32_t r = e->stack[--e->nstack];
        rank_state *st = &e->ranks[r];
        while (st->pos < tr->rank_start[r + 1]) {
            int rc = step(e, r, st->pos);
            if (rc < 0) {
                snprintf(e->out->error, (size_t)e->out->error_size, "out of memory");
                return -1;
            }
            if (rc > 0) {
                st->blocked = 1;
                break;
            }
            st->pos++;
        }
    }
    for (int64_t r = 0; r < tr->nranks; r++) {
        rank_state *st = &e->ranks[r];
        if (st->pos < tr->rank_start[r + 1]) {
            snprintf(e->out->error, (size_t)e->out->error_size,
                     "deadlock: rank %lld waits forever at its event %lld (%s, peer %d)", (long long)r,
                     (long long)(st->pos - tr->rank_start[r]), op_name(tr->events[st->pos].op),
                     (int)tr->events[st->pos].peer);
            return -1;
        }
        e->out->finish[r] = st->clock;
    }
    return 0;
}

int sw_replay(const sw_trace *tr, const sw_network *net, sw_result *out)
{
    if (check(tr, out))
        return -1;
    size_t n = (size_t)(tr->nevents ? tr->nevents : 1);
    engine e = {.tr = tr, .net = net, .out = out, .rank_span = 1};
    while (e.rank_span < tr->nranks)
        e.rank_span *= 2;
    e.ranks = calloc((size_t)tr->nranks + 1, sizeof *e.ranks);
    e.stack = malloc(((size_t)tr->nranks + 1) * sizeof *e.stack);
    e.st = big_alloc(n * sizeof *e.st);
    if (e.st) /* a wait on a request not yet posted must read "not ready" */
        memset(e.st, 0, n * sizeof *e.st);
    for (int64_t r = 0; e.ranks && r < tr->nranks; r++)
        e.ranks[r].credit = net->bucket_bytes; /* every link starts rested */
    int rc = -1;
    if (e.ranks && e.stack && e.st && grow_slots(&e) == 0)
        rc = run(&e);
    else
        snprintf(out->error, (size_t)out->error_size, "out of memory");
    free(e.ranks);
    free(e.stack);
    free(e.st);
    free(e.slots);
    free(e.scratch);
    return rc;
}
