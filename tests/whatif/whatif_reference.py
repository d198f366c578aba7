"""A deliberately plain Python replay of engine streams, written from the
model in docs/whatif.md, to check the compiled engine against."""

from collections import deque

from scalewise.whatif.trace import category

OP_NONE, OP_ISEND, OP_IRECV, OP_WAITALL, OP_SEND, OP_RECV = range(6)


def reference_replay(streams, net, host=None, node_of=None, local=None):
    """``host``: the traced run's host costs (hostcost.HostCosts), or None.  A rank's own messages (not a
    collective's) to or from another node (with host.inside, inside its node instead) cost it at least
    host.per_message at its end, and posting an irecv from another node (inside: from its node) host.irecv.  ``node_of`` (a node per rank) with ``local`` (the shared-memory network):
    a message between two ranks of one node is costed with ``local`` on each rank's own channel, and the
    ranks of a node share the node's network link (and its bucket) for every other message.

    A shared link takes the node's messages in the order the replay reaches them, so the ranks are resumed
    in the engine's order (runtime/replay/replay.c, run): a stack, rank 0 first, the last rank woken first."""
    placed = node_of is not None and local is not None
    L0 = {id(m): m.ranges[0].latency_us * 1e-6 for m in (net, local) if m is not None}

    def par(model, nbytes):
        upto = [r.upto for r in model.ranges]
        k = next((i for i, u in enumerate(upto) if nbytes <= u), len(upto) - 1)
        r = model.ranges[k]
        return r.latency_us * 1e-6, r.overhead_us * 1e-6, r.gap_us * 1e-6, r.per_byte

    c = streams.events
    P = streams.nranks
    link = [int(node_of[r]) for r in range(P)] if placed else list(range(P))  # the network link rank r uses
    nlinks = max(link, default=-1) + 1
    clock = [0.0] * P
    tx, rx = [0.0] * nlinks, [0.0] * nlinks
    tx_from = [0.0] * nlinks  # start of each link's current stretch of sending, which ends at tx
    tx_to = [set() for _ in range(nlinks)]  # the nodes (node % 64) that stretch sends to
    peers_extra = [b - 1.0 for b in net.both_ways_peers or []] if net.duplex == "full" else []
    shm_tx, shm_rx = [0.0] * P, [0.0] * P  # each rank's shared-memory channel
    half = net.duplex == "half"
    extra = (net.both_ways or 1.0) - 1.0 if net.duplex == "full" else 0.0
    shaped = net.shaping
    bucket = [(shaped.payload_bucket if shaped else 0.0, 0.0) for _ in range(nlinks)]  # (credit, at what time)

    def is_local(a, b):
        return placed and node_of[a] == node_of[b]

    def held_back(lk, start, nbytes):
        """The token bucket: refill to its size since the last message, take what is there, wait for the rest."""
        if not shaped:
            return 0.0
        rate, size = shaped.payload_per_second, shaped.payload_bucket
        credit, at = bucket[lk]
        credit = min(size, credit + max(start - at, 0.0) * rate)
        wait = max(nbytes - credit, 0.0) / rate
        bucket[lk] = (max(credit - nbytes, 0.0), max(start, at) + wait)
        return wait
    pos = [int(streams.rank_start[r]) for r in range(P)]
    started = [False] * P
    call_start = [0.0] * P
    comp = [0.0] * P
    ftime = [[0.0] * max(1, len(streams.functions)) for _ in range(P)]
    state = {}  # event -> dict
    queues = {}  # key -> deque of (is_recv, event)
    stack = list(range(P - 1, -1, -1))
    blocked = [False] * P

    def wake(r):
        if blocked[r]:
            blocked[r] = False
            stack.append(r)

    def match(s, r):
        ss, rr = state[s], state[r]
        nbytes = int(c["bytes"][s])
        model = local if ss["local"] else net
        L, o, g, G = par(model, nbytes)
        if ss["rndv"]:
            start = max(ss["start"], max(ss["rts"], rr["post"]) + L0[id(model)])
            ss["done"] = start + G * nbytes
            arrival = start + L + G * nbytes
            wake(ss["rank"])
        else:
            arrival = ss["arrival"]
        rr["done"], rr["size"], rr["local"] = arrival, nbytes, ss["local"]
        wake(rr["rank"])

    def post(ev, dst, src, is_recv):
        key = (dst, src, int(c["comm"][ev]), int(c["tag"][ev]))
        q = queues.setdefault(key, deque())
        if q and q[0][0] != is_recv:
            other = q.popleft()[1]
            match(other, ev) if is_recv else match(ev, other)
        else:
            q.append((is_recv, ev))

    def own(ev):
        """The rank's own call, not a message of a collective's schedule."""
        return category(streams.functions[int(c["func"][ev])]) != "collective"

    inside = host is not None and host.inside  # measured with every rank on one node

    def least_o(r, ev, o, near):
        """o, or the rank's host cost per message when more, where the traced run measured it."""
        return max(o, float(host.per_message[r])) if host is not None and own(ev) and near == inside else o

    def initiate(r, ev):
        op = int(c["op"][ev])
        peer = int(c["peer"][ev])
        if op in (OP_ISEND, OP_SEND):
            nbytes = int(c["bytes"][ev])
            near = is_local(r, peer)
            model = local if near else net
            L, o, g, G = par(model, nbytes)
            o = least_o(r, ev, o, near)
            if near:  # a copy through shared memory: one after the other, apart from the NIC
                start = max(clock[r], shm_tx[r])
                shm_tx[r] = start + g + G * nbytes
            else:
                lk = link[r]
                start = max(clock[r], tx[lk])
                if start > tx[lk]:
                    tx_from[lk] = start
                    tx_to[lk] = set()
                tx_to[lk].add((int(node_of[peer]) if placed else peer) % 64)
                start += held_back(lk, start, nbytes)
                tx[lk] = start + g + G * nbytes
            st = state[ev] = {"start": start, "rndv": nbytes > model.eager_limit, "done": None, "rank": r,
                              "local": near}
            if not st["rndv"]:
                st["arrival"] = start + o + L + G * nbytes
                st["done"] = clock[r] + o
            else:
                st["rts"] = clock[r] + o + L0[id(model)]
            clock[r] += o
            post(ev, peer, r, False)
        elif op in (OP_IRECV, OP_RECV):
            state[ev] = {"post": clock[r], "done": None, "rank": r}
            post(ev, r, peer, True)
            if op == OP_IRECV and host is not None and own(ev) and is_local(r, peer) == inside:
                clock[r] += float(host.irecv[r])

    def complete(r, reqs, ev):
        if any(state[q]["done"] is None for q in reqs):
            return False
        t = clock[r]
        recvs = []
        for q in reqs:
            if int(c["op"][q]) in (OP_IRECV, OP_RECV):
                # by arrival, then size; a local message's size counted as -1 - size, as the engine sorts
                size = state[q]["size"]
                recvs.append((state[q]["done"], -1 - size if state[q]["local"] else size))
            else:
                t = max(t, state[q]["done"])
        lk = link[r]
        for arrival, key in sorted(recvs):
            if key < 0:  # through shared memory: the rank's own channel, local's parameters
                nbytes = -1 - key
                L, o, g, G = par(local, nbytes)
                end = max(arrival - G * nbytes, shm_rx[r]) + G * nbytes
                shm_rx[r] = end
                t = max(t, end) + least_o(r, ev, o, True)
                continue
            nbytes = key
            L, o, g, G = par(net, nbytes)
            wire = G * nbytes
            end = max(arrival - wire, rx[lk]) + wire
            # the time it held the link: on the wire, and shaped, waiting for what it had beyond the bucket
            held = wire + (max(nbytes - shaped.payload_bucket, 0.0) / shaped.payload_per_second if shaped else 0.0)
            if half:  # whatever of it overlaps the link's own sending is moved after it
                start = max(arrival - held, rx[lk])
                end = start + held + max(0.0, min(start + held, tx[lk]) - max(start, tx_from[lk]))
            elif peers_extra:  # exchanging with k nodes: that overlap costs b_k - 1 more, the next queues behind it
                more = peers_extra[min(max(len(tx_to[lk]), 1), len(peers_extra)) - 1]
                start = max(arrival - held, rx[lk])
                end = start + held + more * max(0.0, min(start + held, tx[lk]) - max(start, tx_from[lk]))
            else:  # both ways at once: what of it overlaps the link's own sending costs `extra` more
                end += extra * max(0.0, min(end, tx[lk]) - max(end - held, tx_from[lk]))
            rx[lk] = end
            t = max(t, end) + least_o(r, ev, o, False)
        clock[r] = t
        return True

    while stack:
        r = stack.pop()
        while pos[r] < streams.rank_start[r + 1]:
            ev = pos[r]
            op = int(c["op"][ev])
            if not started[r]:
                clock[r] += float(c["compute"][ev])
                comp[r] += float(c["compute"][ev])
                call_start[r] = clock[r]
                initiate(r, ev)
                started[r] = True
            if op in (OP_SEND, OP_RECV):
                ok = complete(r, [ev], ev)
            elif op == OP_WAITALL:
                lo = int(c["aux"][ev])
                ok = complete(r, [int(x) for x in streams.reqs[lo:lo + int(c["peer"][ev])]], ev)
            else:
                ok = True
            if not ok:
                blocked[r] = True
                break
            ftime[r][int(c["func"][ev])] += clock[r] - call_start[r]
            started[r] = False
            pos[r] += 1
    assert all(pos[r] == streams.rank_start[r + 1] for r in range(P)), "reference replay deadlocked"
    return clock, comp, ftime
