/* A collective replayed for all its members at once.  The generic path (replay.c) walks each member's
 * part of the template op by op: every message goes through a match key, a queue and a request, and a
 * member blocks and is resumed by the sweep as its partners post, each turn reading a rank block that
 * at 16,384 ranks has left the cache.  Once every member has reached the call, nothing outside the call
 * changes its messages (collective traffic has its own context, and a call's messages pair up within
 * the call), so here the members' states are copied into one array and the template runs over it: which
 * op of which member each send pairs with is fixed by the template and found once, when the plan is made.
 *
 * The times are those of the generic path bit for bit: every formula is model.h's, applied in each
 * member's program order to its own state, and a match reads only the two sides' values.  The order the
 * members are run in changes nothing, as in the sweep; where it would (a link shared by ranks), the
 * engine does not batch. */
#define _DEFAULT_SOURCE
#include "collective.h"

#include <stdlib.h>
#include <string.h>

/* One template op's message side: for a send, when it starts on the wire (or may start, rendezvous) and
 * its arrival (eager) or request-to-send time; for a receive, when it was posted, then the size sent.
 * done/ready: the op's request.  epoch: posted in the current call (records are not cleared per call). */
typedef struct {
    double t_post, t_aux, done;
    uint32_t epoch, ready;
} msg_rec;

/* A template's plan: for each of its message ops the op it pairs with (a send's receive, a receive's
 * send), as offsets from the template's first op; -1: not batchable. */
typedef struct {
    int32_t *partner;
    int64_t nops;
    int ok;
} plan;

struct sw_batch {
    const sw_trace *tr;
    const sw_templates *tpl;
    const sw_network *net;
    int64_t *plan_of; /* per signature: its template's plan */
    plan *plans;
    int64_t nplans;
    int64_t *comm_of; /* per signature: its communicator's dense number */
    int64_t ncomms;
    sw_member *members; /* the call's, while it runs */
    uint8_t *blocked;
    int32_t *stack;
    msg_rec *recs;
    double *pairs; /* (arrival, bytes) of one wait's receives */
    int64_t max_size, max_ops, max_wait;
    uint32_t epoch;
};

typedef struct {
    int32_t src, dst, kind; /* kind 0: send, 1: receive */
    int64_t op;
} side;

static int by_pair(const void *a, const void *b)
{
    const side *x = a, *y = b;
    if (x->src != y->src)
        return x->src < y->src ? -1 : 1;
    if (x->dst != y->dst)
        return x->dst < y->dst ? -1 : 1;
    if (x->kind != y->kind)
        return x->kind - y->kind;
    return (x->op > y->op) - (x->op < y->op);
}

static int is_send(uint8_t op) { return op == SW_ISEND || op == SW_SEND; }

/* Pair the sends and receives of the template at first (size members): the k-th send from i to j with
 * j's k-th receive from i, as the match queues do.  Not batchable (ok 0) if they do not pair up, or a
 * member's phases are not as the templates build them (a WAIT n right after its n posts, a blocking op
 * with nothing posted before it, nothing left posted at the end), which the generic path alone takes.
 * Returns -1 out of memory. */
static int make_plan(sw_batch *b, plan *pl, int64_t first, int64_t size)
{
    const sw_templates *tp = b->tpl;
    int64_t op0 = tp->start[first], nops = tp->start[first + size] - op0;
    pl->nops = nops;
    pl->ok = 0;
    if (nops >= INT32_MAX)
        return 0;
    side *sides = malloc((size_t)(nops ? nops : 1) * sizeof *sides);
    pl->partner = malloc((size_t)(nops ? nops : 1) * sizeof *pl->partner);
    if (!sides || !pl->partner) {
        free(sides);
        return -1;
    }
    int64_t n = 0, widest = 0;
    for (int64_t i = 0; i < size; i++) {
        int64_t open = 0;
        for (int64_t g = tp->start[first + i]; g < tp->start[first + i + 1]; g++) {
            uint8_t op = tp->op[g];
            pl->partner[g - op0] = -1;
            if (op == SW_WAIT) {
                if (tp->peer[g] != open)
                    goto out;
                widest = open > widest ? open : widest;
                open = 0;
                continue;
            }
            if ((op == SW_SEND || op == SW_RECV) && open)
                goto out;
            open += op == SW_ISEND || op == SW_IRECV;
            int32_t p = tp->peer[g];
            sides[n++] = is_send(op) ? (side){(int32_t)i, p, 0, g} : (side){p, (int32_t)i, 1, g};
        }
        if (open)
            goto out;
    }
    qsort(sides, (size_t)n, sizeof *sides, by_pair);
    for (int64_t a = 0; a < n;) {
        int64_t sends = a, recvs = a;
        while (recvs < n && sides[recvs].src == sides[a].src && sides[recvs].dst == sides[a].dst &&
               sides[recvs].kind == 0)
            recvs++;
        int64_t end = recvs;
        while (end < n && sides[end].src == sides[a].src && sides[end].dst == sides[a].dst)
            end++;
        if (recvs - sends != end - recvs)
            goto out;
        for (int64_t k = 0; k < recvs - sends; k++) {
            pl->partner[sides[sends + k].op - op0] = (int32_t)(sides[recvs + k].op - op0);
            pl->partner[sides[recvs + k].op - op0] = (int32_t)(sides[sends + k].op - op0);
        }
        a = end;
    }
    pl->ok = 1;
    b->max_size = size > b->max_size ? size : b->max_size;
    b->max_ops = nops > b->max_ops ? nops : b->max_ops;
    b->max_wait = widest + 1 > b->max_wait ? widest + 1 : b->max_wait;
out:
    free(sides);
    return 0;
}

static int by_comm(const void *a, const void *b)
{
    const int64_t *x = a, *y = b;
    return (x[0] > y[0]) - (x[0] < y[0]);
}

sw_batch *sw_batch_new(const sw_trace *tr, const sw_templates *tpl, const sw_network *net, int *oom)
{
    *oom = 0;
    sw_batch *b = calloc(1, sizeof *b);
    int64_t nsigs = tpl->nsigs, nfirst = 1;
    for (int64_t s = 0; s < nsigs; s++)
        nfirst = tpl->sig_first[s] + 1 > nfirst ? tpl->sig_first[s] + 1 : nfirst;
    int64_t *by_first = b ? malloc((size_t)nfirst * sizeof *by_first) : NULL;
    int64_t *order = by_first ? malloc((size_t)(2 * nsigs + 2) * sizeof *order) : NULL;
    if (b) {
        b->tr = tr, b->tpl = tpl, b->net = net;
        b->plan_of = malloc((size_t)(nsigs + 1) * sizeof *b->plan_of);
        b->comm_of = malloc((size_t)(nsigs + 1) * sizeof *b->comm_of);
        b->plans = calloc((size_t)(nsigs + 1), sizeof *b->plans);
    }
    if (!order || !b->plan_of || !b->comm_of || !b->plans)
        goto oom;
    for (int64_t f = 0; f < nfirst; f++)
        by_first[f] = -1;
    for (int64_t s = 0; s < nsigs; s++) {
        int64_t f = tpl->sig_first[s];
        if (by_first[f] < 0) { /* signatures of one schedule share its template, and its plan */
            by_first[f] = b->nplans;
            if (make_plan(b, &b->plans[b->nplans++], f, tpl->sig_size[s]))
                goto oom;
        }
        b->plan_of[s] = by_first[f];
        if (!b->plans[by_first[f]].ok) /* its messages could pair with another call's: no call is batched */
            goto none;
    }
    for (int64_t s = 0; s < nsigs; s++) { /* the communicators, numbered */
        order[2 * s] = tr->sigs[s].comm;
        order[2 * s + 1] = s;
    }
    qsort(order, (size_t)nsigs, 2 * sizeof *order, by_comm);
    for (int64_t i = 0; i < nsigs; i++) {
        if (i > 0 && order[2 * i] != order[2 * i - 2])
            b->ncomms++;
        b->comm_of[order[2 * i + 1]] = b->ncomms;
    }
    b->ncomms += nsigs > 0;
    b->blocked = malloc((size_t)(b->max_size + 1));
    b->stack = malloc((size_t)(b->max_size + 1) * sizeof *b->stack);
    b->recs = calloc((size_t)(b->max_ops + 1), sizeof *b->recs);
    b->pairs = malloc((size_t)(2 * b->max_wait) * sizeof *b->pairs);
    if (!b->blocked || !b->stack || !b->recs || !b->pairs)
        goto oom;
    free(by_first);
    free(order);
    return b;
oom:
    *oom = 1;
none:
    free(by_first);
    free(order);
    sw_batch_free(b);
    return NULL;
}

void sw_batch_free(sw_batch *b)
{
    if (!b)
        return;
    for (int64_t p = 0; p < b->nplans; p++)
        free(b->plans[p].partner);
    free(b->plans);
    free(b->plan_of);
    free(b->comm_of);
    free(b->blocked);
    free(b->stack);
    free(b->recs);
    free(b->pairs);
    free(b);
}

int64_t sw_batch_comm(const sw_batch *b, int64_t sig) { return b->comm_of[sig]; }
int64_t sw_batch_ncomms(const sw_batch *b) { return b->ncomms; }

/* One call's run: the template, its members, its records. */
typedef struct {
    sw_batch *b;
    const sw_templates *tp;
    const sw_network *net;
    const int32_t *partner;
    const int32_t *world; /* the communicator's members' world ranks, NULL: the world in order */
    int64_t op0;
    msg_rec *rec; /* by op, from op0 */
    int64_t nstack;
} call;

/* A member's request is complete: run it again if it is blocked (it checks its wait itself). */
static inline void wake_member(call *c, int32_t i)
{
    if (c->b->blocked[i]) {
        c->b->blocked[i] = 0;
        c->b->stack[c->nstack++] = i;
    }
}

/* Send s (offset) meets receive r: the message's arrival and, for a rendezvous, the sender's buffer free,
 * as match() in replay.c. */
static void deliver(call *c, int64_t s, int64_t r, int32_t sender, int32_t receiver)
{
    const sw_network *net = c->net;
    msg_rec *sr = &c->rec[s], *rr = &c->rec[r];
    double bytes = (double)c->tp->bytes[c->op0 + s];
    double arrival;
    if (!(bytes <= net->eager_limit)) {
        sr->done = rendezvous(net, range_of(net, bytes), bytes, sr->t_post, sr->t_aux, rr->t_post, &arrival);
        sr->ready = 1;
        wake_member(c, sender);
    } else {
        arrival = sr->t_aux;
    }
    rr->done = arrival;
    rr->t_aux = bytes; /* the receiver's side needs the size actually sent */
    rr->ready = 1;
    wake_member(c, receiver);
}

/* Member i posts op g, as post_send/post_recv in replay.c (a collective's message costs the network's o). */
static void post_op(call *c, int32_t i, int64_t g)
{
    const sw_network *net = c->net;
    sw_member *m = &c->b->members[i];
    int64_t at = g - c->op0, other = c->partner[at];
    int32_t p = c->tp->peer[g];
    msg_rec *r = &c->rec[at];
    r->epoch = c->b->epoch;
    r->ready = 0;
    if (is_send(c->tp->op[g])) {
        double bytes = (double)c->tp->bytes[g];
        int k = range_of(net, bytes);
        double o = overhead(net, k, 0);
        double start = link_send(net, &m->link, m->clock, bytes, k, c->world ? c->world[p] : p);
        r->t_post = start;
        if (bytes <= net->eager_limit) {
            r->t_aux = eager_arrival(net, k, start, o, bytes);
            r->done = m->clock + o;
            r->ready = 1;
        } else {
            r->t_aux = m->clock + o + net->latency[0]; /* RTS arrives */
        }
        m->clock += o;
        if (c->rec[other].epoch == c->b->epoch)
            deliver(c, at, other, i, p);
    } else {
        r->t_post = m->clock;
        if (c->rec[other].epoch == c->b->epoch)
            deliver(c, other, at, p, i);
    }
}

/* Member i completes ops lo .. hi - 1's requests, as wait_all in replay.c; 1: one is not complete yet. */
static int wait_ops(call *c, int32_t i, int64_t lo, int64_t hi)
{
    const sw_network *net = c->net;
    sw_member *m = &c->b->members[i];
    for (int64_t g = lo; g < hi; g++)
        if (!c->rec[g - c->op0].ready)
            return 1;
    double t = m->clock, *pairs = c->b->pairs;
    int64_t n = 0;
    for (int64_t g = lo; g < hi; g++) {
        const msg_rec *r = &c->rec[g - c->op0];
        if (is_send(c->tp->op[g])) {
            t = later(t, r->done);
        } else {
            pairs[2 * n] = r->done;
            pairs[2 * n + 1] = r->t_aux;
            n++;
        }
    }
    sort_pairs(pairs, n);
    for (int64_t j = 0; j < n; j++) {
        double bytes = pairs[2 * j + 1];
        int k = range_of(net, bytes);
        double end = link_receive(net, &m->link, pairs[2 * j], bytes, k);
        t = later(t, end) + overhead(net, k, 0);
    }
    m->clock = t;
    return 0;
}

/* Member i runs its part until it must wait for a partner or is done (1 / 0). */
static int run_member(call *c, int32_t i, int64_t end)
{
    sw_member *m = &c->b->members[i];
    const uint8_t *ops = c->tp->op;
    for (int64_t g = m->pc; g < end; g++) {
        uint8_t op = ops[g];
        if (op == SW_ISEND || op == SW_IRECV) {
            post_op(c, i, g);
            continue;
        }
        int64_t lo = g;
        if (op == SW_WAIT)
            lo = g - c->tp->peer[g];
        else if (c->rec[g - c->op0].epoch != c->b->epoch) /* a blocking op resumed is posted already */
            post_op(c, i, g);
        if (wait_ops(c, i, lo, op == SW_WAIT ? g : g + 1)) {
            m->pc = g;
            return 1;
        }
    }
    m->pc = end;
    return 0;
}

int sw_batch_run(sw_batch *b, int64_t sig, sw_member *members, int64_t *ops)
{
    const sw_templates *tp = b->tpl;
    const plan *pl = &b->plans[b->plan_of[sig]];
    int64_t first = tp->sig_first[sig], size = tp->sig_size[sig];
    int64_t mo = b->tr->sig_members[sig];
    b->members = members;
    call c = {.b = b, .tp = tp, .net = b->net, .partner = pl->partner, .world = mo < 0 ? NULL : b->tr->members + mo,
              .op0 = tp->start[first], .rec = b->recs};
    if (++b->epoch == 0) { /* after 2^32 calls the records' epochs come round: start them afresh */
        memset(b->recs, 0, (size_t)(b->max_ops + 1) * sizeof *b->recs);
        b->epoch = 1;
    }
    for (int64_t i = size - 1; i >= 0; i--) { /* member 0 first */
        b->members[i].pc = tp->start[first + i];
        b->blocked[i] = 0;
        b->stack[c.nstack++] = (int32_t)i;
    }
    int64_t done = 0;
    while (c.nstack) {
        int32_t i = b->stack[--c.nstack];
        if (run_member(&c, i, tp->start[first + i + 1]))
            b->blocked[i] = 1;
        else
            done++;
    }
    *ops = pl->nops;
    return done == size ? 0 : 1;
}
