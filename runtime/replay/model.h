/* The model's formulas (docs/whatif.md), shared by the generic replay (replay.c) and the batched
 * collectives (collective.c): both paths compute every time with this same code, so that their results
 * are bit for bit the same. */
#ifndef SW_MODEL_H
#define SW_MODEL_H

#include "replay.h"

#include <stdint.h>
#include <stdlib.h>

/* fmax and fmin stay calls into libm (they must order NaNs, which no time here is): these inline. */
static inline double later(double a, double b) { return a > b ? a : b; }
static inline double earlier(double a, double b) { return a < b ? a : b; }

/* A network link: a rank's own, or with ranks on nodes the node's, which the node's ranks share (one NIC
 * per node, one shaped tbf per node on the emulated cluster): its messages go one after the other out
 * and in, and out through one token bucket.  A shared link takes the node's messages in the order the
 * replay reaches them, so there the times depend on the order blocked ranks are resumed (run: the last
 * one woken first, rank 0 first at the start), which the reference in tests/whatif follows. */
typedef struct {
    double tx_free, rx_free;
    double tx_from;           /* start of the link's current stretch of sending, which ends at tx_free */
    double credit, credit_at; /* the shaped link's bucket: bytes of credit at time credit_at */
    uint64_t tx_to;           /* the nodes (bit node % 64) the current stretch of sending goes to */
} link_state;

static inline int range_of(const sw_network *net, double bytes)
{
    int64_t k = 0;
    while (k + 1 < net->nranges && bytes > net->upto[k])
        k++;
    return (int)k;
}

/* How long the shaped link holds a message of `bytes` leaving at `start`
 * back: the bucket refills up to its size, the message takes what credit
 * there is and waits for the rest at the bucket's rate. */
static inline double shaping_delay(const sw_network *net, link_state *lk, double start, double bytes)
{
    if (net->bucket_rate <= 0)
        return 0;
    double credit = earlier(net->bucket_bytes, lk->credit + later(start - lk->credit_at, 0) * net->bucket_rate);
    double delay = later(bytes - credit, 0) / net->bucket_rate;
    lk->credit = later(credit - bytes, 0);
    lk->credit_at = later(start, lk->credit_at) + delay;
    return delay;
}

/* The CPU time of a message at one end: the network's o (the local channel's through shared memory), or
 * the rank's host cost per message (host, the traced run's) when more.  The caller passes host 0 where the
 * traced run did not measure it (a collective's messages; between nodes for a one-node trace, inside a node
 * for one recorded across nodes). */
static inline double overhead(const sw_network *net, int k, double host)
{
    return later(net->overhead[k], host);
}

/* A message of `bytes` (size range k) leaves the rank, ready at `clock`, through its network link to
 * node `to`: the NIC sends one message after the other, shaped by the link's bucket.  Returns when it
 * starts on the wire. */
static inline double link_send(const sw_network *net, link_state *lk, double clock, double bytes, int k, int64_t to)
{
    double start = later(clock, lk->tx_free);
    if (start > lk->tx_free) {
        lk->tx_from = start;
        lk->tx_to = 0;
    }
    lk->tx_to |= (uint64_t)1 << (to & 63);
    start += shaping_delay(net, lk, start, bytes);
    lk->tx_free = start + net->gap[k] + net->per_byte[k] * bytes;
    return start;
}

/* An eager message's arrival, from its start on the wire and the sender's o. */
static inline double eager_arrival(const sw_network *net, int k, double start, double o, double bytes)
{
    return start + o + net->latency[k] + net->per_byte[k] * bytes;
}

/* A rendezvous: the sender's request to send (its start on the wire when the receiver is ready, and the
 * request's arrival rts) meets the receive posted at recv_post.  Returns when the sender's buffer is free;
 * *arrival: when the message has arrived. */
static inline double rendezvous(const sw_network *net, int k, double bytes, double start_at, double rts,
                                double recv_post, double *arrival)
{
    double cts = later(rts, recv_post) + net->latency[0];
    double start = later(start_at, cts);
    *arrival = start + net->latency[k] + net->per_byte[k] * bytes;
    return start + net->per_byte[k] * bytes;
}

/* What of an incoming message's time overlapping the link's own sending costs more, by the nodes the
 * link's current stretch of sending goes to (npeers > 0). */
static inline double peers_extra_of(const sw_network *net, const link_state *lk)
{
    int64_t k = __builtin_popcountll(lk->tx_to);
    k = k < 1 ? 1 : k > net->npeers ? net->npeers : k;
    return net->peers_extra[k - 1];
}

/* A message that arrived at `arrival` passes the receiving rank's network link, after the messages before
 * it: returns when it is through (before the receiver's o). */
static inline double link_receive(const sw_network *net, link_state *lk, double arrival, double bytes, int k)
{
    double wire = net->per_byte[k] * bytes;
    double end = later(arrival - wire, lk->rx_free) + wire;
    if (net->half_duplex) {
        /* The message held the link for its wire time and, shaped, its wait beyond the
         * bucket; whatever of that overlaps the rank's own sending is moved after it. */
        double held = wire + (net->bucket_rate > 0 ? later(bytes - net->bucket_bytes, 0) / net->bucket_rate : 0);
        double from = later(arrival - held, lk->rx_free);
        end = from + held + later(0, earlier(from + held, lk->tx_free) - later(from, lk->tx_from));
    } else if (net->npeers > 0) {
        /* Exchanging with k nodes at once: while the link sends, its incoming streams move at
         * 1/b_k of the rate, so what of the message's time on the link overlaps the link's own
         * sending costs peers_extra[k-1] more, and the next message queues behind all of it. */
        double held = wire + (net->bucket_rate > 0 ? later(bytes - net->bucket_bytes, 0) / net->bucket_rate : 0);
        double from = later(arrival - held, lk->rx_free);
        end = from + held +
              peers_extra_of(net, lk) * later(0, earlier(from + held, lk->tx_free) - later(from, lk->tx_from));
    } else if (net->exchange_extra > 0) {
        /* Both directions at once, each slower than alone: what of the time the message
         * held the link overlaps the rank's own sending costs exchange_extra more. */
        double held = wire + (net->bucket_rate > 0 ? later(bytes - net->bucket_bytes, 0) / net->bucket_rate : 0);
        end += net->exchange_extra * later(0, earlier(end, lk->tx_free) - later(end - held, lk->tx_from));
    }
    lk->rx_free = end;
    return end;
}

/* By arrival, then size: equal arrivals still get one order on every run.  A local message's size is
 * stored negated (-1 - bytes), so that the pair carries which channel it came through; they sort apart. */
static inline int by_arrival(const void *a, const void *b)
{
    const double *x = a, *y = b;
    if (x[0] != y[0])
        return (x[0] > y[0]) - (x[0] < y[0]);
    return (x[1] > y[1]) - (x[1] < y[1]);
}

/* Sort (arrival, bytes) pairs by arrival: waits are mostly a handful of
 * requests, where insertion sort beats qsort's indirect calls. */
static inline void sort_pairs(double *p, int64_t m)
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

#endif
