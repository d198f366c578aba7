/* Collectives replayed for all their members at once (collective.c): once every member of a
 * communicator has reached the call, its template runs over arrays indexed by member, with each
 * message's send and receive paired in advance, instead of op by op through the match queues.  Used
 * only where any order of the ranks gives the same times (no link shared by several ranks). */
#ifndef SW_COLLECTIVE_H
#define SW_COLLECTIVE_H

#include "decoded.h"
#include "model.h"

#include <stdint.h>

/* A member's state in the collective: what its part of the template reads and changes. */
typedef struct {
    double clock;
    link_state link;
    int64_t pc; /* the template op it is at */
} sw_member;

typedef struct sw_batch sw_batch;

/* The plans of every signature's template; NULL when some template's messages do not pair up within one
 * call, so that every collective must go through the match queues (or out of memory: *oom set). */
sw_batch *sw_batch_new(const sw_trace *tr, const sw_templates *tpl, const sw_network *net, int *oom);
void sw_batch_free(sw_batch *b);
/* The dense number of signature sig's communicator, and how many there are. */
int64_t sw_batch_comm(const sw_batch *b, int64_t sig);
int64_t sw_batch_ncomms(const sw_batch *b);
/* Run signature sig's template for all its members from their states (sig_size[sig] of them, by place in
 * the communicator); 0: done, the states updated,
 * *ops the template's ops; 1: the template cannot complete (a member waits forever), nothing to keep. */
int sw_batch_run(sw_batch *b, int64_t sig, sw_member *members, int64_t *ops);

#endif
