"""A deliberately plain Python replay of engine streams, written from the
model in docs/whatif.md, to check the compiled engine against."""

from collections import deque

from scalewise.whatif.trace import category

OP_NONE, OP_ISEND, OP_IRECV, OP_WAITALL, OP_SEND, OP_RECV = range(6)


def reference_replay(streams, net, host=None):
    """``host``: the traced run's host costs (hostcost.HostCosts), or None.  A rank's own messages (not a
    collective's) cost it at least host.per_message at its end, and posting an irecv host.irecv."""
    ranges = net.ranges
    upto = [r.upto for r in ranges]

    def par(nbytes):
        k = next((i for i, u in enumerate(upto) if nbytes <= u), len(upto) - 1)
        r = ranges[k]
        return r.latency_us * 1e-6, r.overhead_us * 1e-6, r.gap_us * 1e-6, r.per_byte

    L0 = ranges[0].latency_us * 1e-6
    c = streams.events
    P = streams.nranks
    clock, tx, rx = [0.0] * P, [0.0] * P, [0.0] * P
    tx_from = [0.0] * P  # start of each rank's current stretch of sending, which ends at tx
    extra = (net.both_ways or 1.0) - 1.0 if net.duplex == "full" else 0.0
    shaped = net.shaping
    bucket = [(shaped.bucket_bytes if shaped else 0.0, 0.0) for _ in range(P)]  # (credit, at what time)

    def held_back(r, start, nbytes):
        """The token bucket: refill to its size since the last message, take what is there, wait for the rest."""
        if not shaped:
            return 0.0
        rate = shaped.rate_gbit_s * 1e9 / 8
        credit, at = bucket[r]
        credit = min(shaped.bucket_bytes, credit + max(start - at, 0.0) * rate)
        wait = max(nbytes - credit, 0.0) / rate
        bucket[r] = (max(credit - nbytes, 0.0), max(start, at) + wait)
        return wait
    pos = [int(streams.rank_start[r]) for r in range(P)]
    started = [False] * P
    call_start = [0.0] * P
    comp = [0.0] * P
    ftime = [[0.0] * max(1, len(streams.functions)) for _ in range(P)]
    state = {}  # event -> dict
    queues = {}  # key -> deque of (is_recv, event)

    def match(s, r):
        ss, rr = state[s], state[r]
        nbytes = int(c["bytes"][s])
        L, o, g, G = par(nbytes)
        if ss["rndv"]:
            start = max(ss["start"], max(ss["rts"], rr["post"]) + L0)
            ss["done"] = start + G * nbytes
            arrival = start + L + G * nbytes
        else:
            arrival = ss["arrival"]
        rr["done"], rr["size"] = arrival, nbytes

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

    def least_o(r, ev, o):
        return max(o, float(host.per_message[r])) if host is not None and own(ev) else o

    def initiate(r, ev):
        op = int(c["op"][ev])
        peer = int(c["peer"][ev])
        if op in (OP_ISEND, OP_SEND):
            nbytes = int(c["bytes"][ev])
            L, o, g, G = par(nbytes)
            o = least_o(r, ev, o)
            start = max(clock[r], tx[r])
            if start > tx[r]:
                tx_from[r] = start
            start += held_back(r, start, nbytes)
            tx[r] = start + g + G * nbytes
            st = state[ev] = {"start": start, "rndv": nbytes > net.eager_limit, "done": None}
            if not st["rndv"]:
                st["arrival"] = start + o + L + G * nbytes
                st["done"] = clock[r] + o
            else:
                st["rts"] = clock[r] + o + L0
            clock[r] += o
            post(ev, peer, r, False)
        elif op in (OP_IRECV, OP_RECV):
            state[ev] = {"post": clock[r], "done": None}
            post(ev, r, peer, True)
            if op == OP_IRECV and host is not None and own(ev):
                clock[r] += float(host.irecv[r])

    def complete(r, reqs, ev):
        if any(state[q]["done"] is None for q in reqs):
            return False
        t = clock[r]
        recvs = []
        for q in reqs:
            if int(c["op"][q]) in (OP_IRECV, OP_RECV):
                recvs.append((state[q]["done"], state[q]["size"]))
            else:
                t = max(t, state[q]["done"])
        for arrival, nbytes in sorted(recvs):  # by arrival, then size
            L, o, g, G = par(nbytes)
            end = max(arrival - G * nbytes, rx[r]) + G * nbytes
            # both ways at once: what of the time it held the link (on the wire, and shaped, waiting
            # for what it had beyond the bucket) overlaps the rank's own sending costs `extra` more
            held = G * nbytes + (max(nbytes - shaped.payload_bucket, 0.0) / shaped.payload_per_second if shaped else 0.0)
            end += extra * max(0.0, min(end, tx[r]) - max(end - held, tx_from[r]))
            rx[r] = end
            t = max(t, end) + least_o(r, ev, o)
        clock[r] = t
        return True

    progress = True
    while progress:
        progress = False
        for r in range(P):
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
                    break
                ftime[r][int(c["func"][ev])] += clock[r] - call_start[r]
                started[r] = False
                pos[r] += 1
                progress = True
    assert all(pos[r] == streams.rank_start[r + 1] for r in range(P)), "reference replay deadlocked"
    return clock, comp, ftime
