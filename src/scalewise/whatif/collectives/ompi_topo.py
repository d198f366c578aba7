"""Open MPI's trees, rank by rank as ompi/mca/coll/base/coll_base_topo.c builds them (v5.0.10; v4.1.4
builds the same, bar build_tree's fanout 1, which no algorithm here asks for).

Each builder returns, for every rank of the communicator, ``(prev, next)``: its parent (None at the
root) and its children in the order of ``tree_next``, which is the order the algorithms post to them.
They are not MPICH's trees: build_bmtree's child clears its highest bit, not its lowest, and
build_tree fills a k-ary tree level by level with children ``delta`` apart, not as a heap."""

from __future__ import annotations

Tree = list[tuple[int | None, list[int]]]


def _next_poweroftwo(value: int) -> int:
    """opal_next_poweroftwo: the smallest power of two strictly above ``value`` (1 for 0)."""
    return 1 << value.bit_length()


def bmtree(size: int, root: int) -> Tree:
    """ompi_coll_base_topo_build_bmtree: children index + 2^k for every 2^k above index."""
    out: Tree = []
    for rank in range(size):
        index = (rank - root) % size
        mask = _next_poweroftwo(index)
        prev = None if rank == root else ((index ^ (mask >> 1)) + root) % size
        kids = []
        while mask < size:
            remote = index ^ mask
            if remote >= size:
                break
            kids.append((remote + root) % size)
            mask <<= 1
        out.append((prev, kids))
    return out


def in_order_bmtree(size: int, root: int) -> Tree:
    """ompi_coll_base_topo_build_in_order_bmtree: vrank's parent clears its lowest set bit."""
    out: Tree = []
    for rank in range(size):
        vrank = (rank - root) % size
        prev, kids, mask = None, [], 1
        while mask < size:
            remote = vrank ^ mask
            if remote < vrank:
                prev = (remote + root) % size
                break
            if remote < size:
                kids.append((remote + root) % size)
            mask <<= 1
        out.append((prev, kids))
    return out


def _pown(fanout: int, num: int) -> int:
    return 0 if num < 0 else fanout ** num


def _level(fanout: int, rank: int) -> int:
    level, num = 0, 0
    while num <= rank:
        num += _pown(fanout, level)
        level += 1
    return level - 1


def tree(fanout: int, size: int, root: int) -> Tree:
    """ompi_coll_base_topo_build_tree: level by level from the shifted root; a rank of level l
    (delta = fanout^l) has children shiftedrank + delta * i, i = 1..fanout."""
    out: Tree = []
    for rank in range(size):
        if size < 2:
            out.append((None, []))
            continue
        shifted = (rank - root) % size
        level = _level(fanout, shifted)
        delta = _pown(fanout, level)
        kids = []
        for i in range(fanout):
            child = shifted + delta * (i + 1)
            if child >= size:
                break
            kids.append((child + root) % size)
        slimit = level if fanout == 1 else (_pown(fanout, level) - 1) // (fanout - 1)
        parent = shifted
        if parent < fanout:
            parent = 0
        else:
            while parent >= slimit:
                parent -= delta // fanout
        out.append((None if shifted == 0 else (parent + root) % size, kids))
    return out


def in_order_bintree(size: int) -> Tree:
    """ompi_coll_base_topo_build_in_order_bintree: rooted at size - 1, left subtree above the right."""
    out: Tree = []
    for rank in range(size):
        myrank, n, parent, delta = rank, size, size - 1, 0
        prev, kids = None, []
        while True:
            rightsize = n >> 1
            lchild = rchild = -1
            if n - 1 > 0:
                lchild = parent - 1
                if lchild > 0:
                    rchild = rightsize - 1
            if myrank == parent:
                kids = [c + delta for c in (lchild, rchild) if c >= 0]
                break
            if myrank > rchild:
                if myrank == lchild:
                    prev = parent + delta
                n -= rightsize + 1
                delta += rightsize
                myrank -= rightsize
                parent = n - 1
            else:
                if myrank == rchild:
                    prev = parent + delta
                n = rightsize
                parent = rchild
        out.append((prev, kids))
    return out


def chain(fanout: int, size: int, root: int) -> Tree:
    """ompi_coll_base_topo_build_chain: ``fanout`` chains off the root, the first (size-1) % fanout
    of them one rank longer; a fanout below 1 is taken as 1 (a pipeline)."""
    fanout = max(fanout, 1)
    if size - 1 < fanout:
        fanout = size - 1
    out: Tree = []
    if size == 1:
        return [(None, [])]
    if fanout == 1:
        for rank in range(size):
            srank = (rank - root) % size
            out.append((None if srank == 0 else (srank - 1 + root) % size,
                        [(srank + 1 + root) % size] if srank + 1 < size else []))
        return out
    maxchainlen, rest = divmod(size - 1, fanout)
    mark = fanout + 1
    if rest:
        maxchainlen += 1
        mark = rest
    for rank in range(size):
        srank = (rank - root) % size
        if srank == 0:
            heads = [(root + 1) % size]
            for i in range(1, fanout):
                heads.append((heads[-1] + maxchainlen - (1 if i > mark else 0)) % size)
            out.append((None, heads))
            continue
        if srank - 1 < mark * maxchainlen:
            head = 1 + (srank - 1) // maxchainlen * maxchainlen
            length = maxchainlen
        else:
            column = mark + (srank - 1 - mark * maxchainlen) // (maxchainlen - 1)
            head = mark * maxchainlen + 1 + (column - mark) * (maxchainlen - 1)
            length = maxchainlen - 1
        prev = 0 if srank == head else srank - 1
        last = srank == head + length - 1 or srank + 1 >= size
        out.append(((prev + root) % size, [] if last else [(srank + 1 + root) % size]))
    return out


def kmtree(size: int, root: int, radix: int) -> Tree:
    """ompi_coll_base_topo_build_kmtree: the k-nomial tree, children from the farthest subtree in."""
    out: Tree = []
    for rank in range(size):
        vrank = (rank - root) % size
        prev, mask = None, 1
        while mask < size:
            if vrank % (radix * mask):
                prev = (vrank // (radix * mask) * (radix * mask) + root) % size
                break
            mask *= radix
        mask //= radix
        kids = []
        while mask > 0:
            kids.extend((vrank + mask * r + root) % size for r in range(1, radix) if vrank + mask * r < size)
            mask //= radix
        out.append((prev, kids))
    return out
