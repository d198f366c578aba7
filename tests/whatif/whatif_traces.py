"""Random but matched traces for the what-if tests."""

import random

from scalewise import whatif
from scalewise.whatif.trace import Call as C


def random_trace(seed: int, P: int):
    """Matched random traffic: rounds of random pairs doing blocking or
    non-blocking exchanges of random sizes, with random compute, plus collectives."""
    rnd = random.Random(seed)
    ranks = [[] for _ in range(P)]
    req = [0] * P
    for _ in range(rnd.randint(3, 8)):
        order = list(range(P))
        rnd.shuffle(order)
        for a, b in zip(order[::2], order[1::2]):
            n = rnd.choice([0, 8, 900, 5000, 70000])
            if rnd.random() < 0.5:
                ranks[a] += [C("MPI_Send", b, n, tag=3, compute=rnd.random() * 1e-4)]
                ranks[b] += [C("MPI_Recv", a, n, tag=3, compute=rnd.random() * 1e-4)]
            else:
                for x, y in ((a, b), (b, a)):
                    ranks[x] += [C("MPI_Irecv", y, n, req=req[x], compute=rnd.random() * 1e-4),
                                 C("MPI_Isend", y, n, req=req[x] + 1),
                                 C("MPI_Waitall", reqs=(req[x], req[x] + 1), compute=rnd.random() * 1e-5)]
                    req[x] += 2
        if rnd.random() < 0.5:
            func = rnd.choice(["MPI_Allreduce", "MPI_Bcast", "MPI_Alltoall", "MPI_Barrier", "MPI_Gather"])
            n = rnd.choice([8, 3000, 200_000])
            for r in range(P):
                ranks[r].append(C(func, bytes=n, root=0, compute=rnd.random() * 1e-4))
    return whatif.from_calls(ranks)
