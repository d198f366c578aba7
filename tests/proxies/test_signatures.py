"""Each proxy profiled with libscalewise.so: the recorded MPI calls, bytes
and communication partners must match the signature formulas in the app's
README, computed here independently (partitions re-derived in Python)."""
from __future__ import annotations

import pytest

import scalewise
from proxy_harness import BUILD, run_proxy

XSUM_BYTES = 42 * 8  # one exact accumulator: 40 limbs + 2 bookkeeping words
CASES = [("openmpi", 4), ("mpich", 3)]


def profile(flavour, app, nranks, tmp_path, *args):
    lib = BUILD / flavour / "libscalewise.so"
    assert lib.is_file(), f"profiler library not built: {lib} (run `make runtime`)"
    log = tmp_path / f"{app}-{flavour}-{nranks}.swlog"
    run = run_proxy(flavour, app, nranks, *args,
                    env={"LD_PRELOAD": str(lib), "SCALEWISE_LOGFILE": str(log),
                         "SCALEWISE_QUIET": "1"})
    assert run.returncode == 0 and run.result["status"] == "PASS", run.stdout + run.stderr
    prof = scalewise.load(log)
    assert sorted(prof.ranks["rank"]) == list(range(nranks))
    return run, prof


def calls(prof, function, nranks):
    f = prof.functions
    rows = f[f["function"] == function].set_index("rank")
    return [int(rows["calls"].get(r, 0)) for r in range(nranks)]


def nbytes(prof, function, nranks):
    f = prof.functions
    rows = f[f["function"] == function].set_index("rank")
    return [int(rows["bytes"].get(r, 0)) for r in range(nranks)]


def p2p_pairs(prof):
    return {(int(r.src), int(r.dst)): (int(r.messages), int(r.bytes))
            for r in prof.p2p.itertuples()}


def assert_only(prof, allowed):
    extra = set(prof.functions["function"]) - set(allowed) - {"MPI_Init", "MPI_Finalize"}
    assert not extra, f"unexpected MPI functions: {extra}"


# ---------------------------------------------------------------- sem

def hilbert_d2xy(n, d):
    x = y = 0
    s, t = 1, d
    while s < n:
        rx = 1 & (t // 2)
        ry = 1 & (t ^ rx)
        if ry == 0:
            if rx == 1:
                x, y = s - 1 - x, s - 1 - y
            x, y = y, x
        x += s * rx
        y += s * ry
        s *= 2
        t //= 4
    return x, y


def sem_shared_faces(ne, nranks):
    """faces[(r, p)]: element faces rank r shares with rank p."""
    owner, n = {}, ne * ne
    for r in range(nranks):
        for d in range(r * n // nranks, (r + 1) * n // nranks):
            owner[hilbert_d2xy(ne, d)] = r
    faces = {}
    for (x, y), r in owner.items():
        for nb in (((x - 1) % ne, y), ((x + 1) % ne, y), (x, (y - 1) % ne), (x, (y + 1) % ne)):
            p = owner[nb]
            if p != r:
                faces[(r, p)] = faces.get((r, p), 0) + 1
    return faces


@pytest.mark.parametrize("flavour,nranks", CASES)
def test_sem_signature(proxies_built, tmp_path, flavour, nranks):
    ne, np_, steps, every = 8, 4, 12, 5
    run, prof = profile(flavour, "sem", nranks, tmp_path, "--ne", str(ne), "--np", str(np_),
                        "--steps", str(steps), "--diag-every", str(every))
    faces = sem_shared_faces(ne, nranks)
    peers = [sum(1 for (r, _p) in faces if r == rank) for rank in range(nranks)]
    assert int(run.note["rank0_peers"]) == peers[0]
    assert calls(prof, "MPI_Isend", nranks) == [2 * steps * p for p in peers]
    assert calls(prof, "MPI_Irecv", nranks) == [2 * steps * p for p in peers]
    assert calls(prof, "MPI_Waitall", nranks) == [2 * steps] * nranks
    n_diag = 1 + steps // every + (steps % every != 0)
    assert calls(prof, "MPI_Allreduce", nranks) == [n_diag] * nranks
    assert nbytes(prof, "MPI_Allreduce", nranks) == [n_diag * 2 * XSUM_BYTES] * nranks
    assert calls(prof, "MPI_Barrier", nranks) == [2] * nranks
    assert p2p_pairs(prof) == {pair: (2 * steps, 2 * steps * 8 * np_ * f)
                               for pair, f in faces.items()}
    assert_only(prof, {"MPI_Isend", "MPI_Irecv", "MPI_Waitall", "MPI_Allreduce", "MPI_Barrier"})


# -------------------------------------------------------------- ocean

def ocean_process_grid(nx, ny, nranks):
    best = None
    for px in range(1, nranks + 1):
        if nranks % px:
            continue
        py = nranks // px
        cost = -(-nx // px) + -(-ny // py)
        if best is None or cost < best[0]:
            best = (cost, px, py)
    return best[1], best[2]


def ocean_messages(nx, ny, nranks):
    """Per rank: list of (peer, bytes) messages of one halo exchange."""
    px, py = ocean_process_grid(nx, ny, nranks)
    out = []
    for r in range(nranks):
        cx, cy = r % px, r // px
        nlx = (cx + 1) * nx // px - cx * nx // px
        nly = (cy + 1) * ny // py - cy * ny // py
        msgs = []
        if px > 1:
            msgs += [(cy * px + (cx + 1) % px, 8 * nly), (cy * px + (cx - 1) % px, 8 * nly)]
        if cy < py - 1:
            msgs.append((r + px, 8 * nlx))
        if cy > 0:
            msgs.append((r - px, 8 * nlx))
        out.append(msgs)
    return out


@pytest.mark.parametrize("flavour,nranks", CASES)
def test_ocean_signature(proxies_built, tmp_path, flavour, nranks):
    nx, ny, steps = 40, 24, 2
    run, prof = profile(flavour, "ocean", nranks, tmp_path, "--nx", str(nx), "--ny", str(ny),
                        "--steps", str(steps))
    iters = int(run.result["check"])
    halos = steps + iters + 1
    msgs = ocean_messages(nx, ny, nranks)
    assert calls(prof, "MPI_Isend", nranks) == [len(m) * halos for m in msgs]
    assert calls(prof, "MPI_Irecv", nranks) == [len(m) * halos for m in msgs]
    assert calls(prof, "MPI_Waitall", nranks) == [halos] * nranks
    n_allreduce = 2 * steps + 2 * iters + 1
    assert calls(prof, "MPI_Allreduce", nranks) == [n_allreduce] * nranks
    assert nbytes(prof, "MPI_Allreduce", nranks) == [8 * n_allreduce] * nranks
    assert calls(prof, "MPI_Barrier", nranks) == [2] * nranks
    expected = {}
    for r, m in enumerate(msgs):
        for peer, size in m:
            count, total = expected.get((r, peer), (0, 0))
            expected[(r, peer)] = (count + halos, total + halos * size)
    assert p2p_pairs(prof) == expected
    assert_only(prof, {"MPI_Isend", "MPI_Irecv", "MPI_Waitall", "MPI_Allreduce", "MPI_Barrier"})


# ---------------------------------------------------------------- amr

@pytest.mark.parametrize("flavour,nranks", CASES)
def test_amr_signature(proxies_built, tmp_path, flavour, nranks):
    tiles, cells, steps, every = 6, 8, 25, 10
    run, prof = profile(flavour, "amr", nranks, tmp_path, "--tiles", str(tiles),
                        "--tile-cells", str(cells), "--steps", str(steps),
                        "--regrid-every", str(every))
    regrids = -(-steps // every)
    assert calls(prof, "MPI_Waitall", nranks) == [steps + regrids] * nranks
    assert calls(prof, "MPI_Allreduce", nranks) == [regrids + 2] * nranks
    assert nbytes(prof, "MPI_Allreduce", nranks) == \
        [regrids * tiles * tiles + 2 * 2 * XSUM_BYTES] * nranks
    assert calls(prof, "MPI_Barrier", nranks) == [2] * nranks
    sends, recvs = calls(prof, "MPI_Send", nranks), calls(prof, "MPI_Irecv", nranks)
    assert sends[0] == int(run.note["rank0_sends"]) and recvs[0] == int(run.note["rank0_recvs"])
    assert sum(sends) == sum(recvs) > 100 * nranks  # many small messages
    assert sum(m for m, _b in p2p_pairs(prof).values()) == sum(sends)
    # Sizes: ghost edge (B or 3B doubles) or migrated tile (B^2 or 5 B^2).
    allowed = {(8 * k).bit_length() for k in (cells, 3 * cells, cells ** 2, 5 * cells ** 2)}
    hist = prof.hist[prof.hist["function"] == "MPI_Send"]
    assert set(hist["bin"]) <= allowed and len(hist) > 0
    assert_only(prof, {"MPI_Send", "MPI_Irecv", "MPI_Waitall", "MPI_Allreduce", "MPI_Barrier"})


# ---------------------------------------------------------------- dft

@pytest.mark.parametrize("flavour,nranks", CASES)
def test_dft_signature(proxies_built, tmp_path, flavour, nranks):
    n, bands, iters = 8, 3, 4
    run, prof = profile(flavour, "dft", nranks, tmp_path, "--n", str(n), "--bands", str(bands),
                        "--iters", str(iters))
    n_a2a = 2 * bands * iters + 3
    assert calls(prof, "MPI_Alltoallv", nranks) == [n_a2a] * nranks
    planes = [n // nranks + (r < n % nranks) for r in range(nranks)]
    assert nbytes(prof, "MPI_Alltoallv", nranks) == [n_a2a * 16 * n * n * z for z in planes]
    assert calls(prof, "MPI_Allreduce", nranks) == [iters + 2] * nranks
    assert nbytes(prof, "MPI_Allreduce", nranks) == [(iters + 2) * 16 * bands ** 2] * nranks
    assert calls(prof, "MPI_Reduce", nranks) == [iters + 1] * nranks
    assert nbytes(prof, "MPI_Reduce", nranks) == [16 + iters * 8 * bands] * nranks
    assert calls(prof, "MPI_Bcast", nranks) == [iters + 2] * nranks
    assert nbytes(prof, "MPI_Bcast", nranks) == [12 + 16 + 8 * iters] * nranks
    assert calls(prof, "MPI_Barrier", nranks) == [2] * nranks
    assert prof.p2p.empty
    assert_only(prof, {"MPI_Alltoallv", "MPI_Allreduce", "MPI_Reduce", "MPI_Bcast",
                       "MPI_Barrier"})
