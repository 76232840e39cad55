"""Communication patterns of common MPI applications, as CommMatrix objects.

Each generator returns the traffic of ``iterations`` repetitions of its
pattern (one message per pair and repetition unless said otherwise, bytes
summed over the repetitions) and records its canonical spec in
``CommMatrix.pattern``: every parameter spelled out, grids resolved, so that
``generate(m.pattern)`` rebuilds the same matrix. Traffic of a rank to
itself is left out (it never crosses the network). Specs are
``name:key=value,...`` (grammar in docs/reference/formats.md); sizes take K/M/G/T
suffixes in powers of 1024, as ``rankwise probe --sizes`` does.

Everything is vectorised with numpy, and the C engine sorts and merges the
triplets, so a 262,144-rank 3-D stencil takes well under a second.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from os import PathLike, fspath
from typing import Callable

import numpy as np

from rankwise.traffic.collective_calls import CollectiveCall
from rankwise.util.errors import RankwiseError, UsageError
from rankwise.traffic.matrix import CommMatrix
from rankwise.util.numbers import bounded_int, shown

INT64_MAX = 2**63 - 1
MAX_ENTRIES = 1 << 25  # 33.5 M pairs, ~1 GiB while building: beyond that, a typo
COMPLEX_DOUBLE = 16  # bytes per FFT grid point


# ---------------------------------------------------------------- values
_SIZE_RE = re.compile(r"(\d+)([kKmMgGtT]?)(?:iB|B)?")
_UNITS = {"": 0, "k": 1, "m": 2, "g": 3, "t": 4}


def parse_size(text: str) -> int:
    """'512', '64K', '1M', '2GiB', '8B' -> bytes (K = 1024). ValueError if not."""
    match = _SIZE_RE.fullmatch(text.strip())
    if not match:
        raise ValueError(text)
    value = bounded_int(match.group(1), INT64_MAX) << (10 * _UNITS[match.group(2).lower()])
    if value > INT64_MAX:
        raise ValueError(text)
    return value


def format_size(nbytes: int) -> str:
    """The shortest exact spelling: 1048576 -> '1M', 1000 -> '1000'."""
    for unit, power in (("T", 4), ("G", 3), ("M", 2), ("K", 1)):
        if nbytes and nbytes % (1 << (10 * power)) == 0:
            return f"{nbytes >> (10 * power)}{unit}"
    return str(nbytes)


def dims_create(n: int, ndims: int) -> tuple[int, ...]:
    """The most cubic factorisation of n into ndims factors, largest first
    (as MPI_Dims_create orders them): the one whose subdomain has the
    smallest surface (sum of the products of all but one factor), which
    is what a stencil's halo traffic grows with; ties go to the smallest
    largest factor."""
    if n < 1 or ndims < 1:
        raise UsageError(f"cannot factor {n} ranks into {ndims} dimensions")
    divisors = [d for d in range(1, int(n**0.5) + 1) if n % d == 0]
    divisors = sorted(set(divisors + [n // d for d in divisors]))

    def factorisations(m: int, k: int, most: int):
        """Non-increasing tuples of k divisors of m, none above `most`."""
        if k == 1:
            if m <= most:
                yield (m,)
            return
        for d in reversed(divisors):
            if d <= most and m % d == 0 and d ** k >= m:  # d is the largest of k factors
                for rest in factorisations(m // d, k - 1, d):
                    yield (d,) + rest

    def surface(f):
        return sum(int(np.prod(f)) // x for x in f)

    return min(factorisations(n, ndims, n), key=lambda f: (surface(f), f))


def _blocks(total: int, parts: int) -> np.ndarray:
    """Sizes of `parts` contiguous blocks of `total` items, the first ones
    one larger when it does not divide (the usual block distribution)."""
    return total // parts + (np.arange(parts) < total % parts).astype(np.int64)


def shuffle_ranks(n: int, seed: int) -> np.ndarray:
    """A permutation of 0..n-1 that depends on the seed alone, not on the
    numpy version: perm = stable argsort of the first n outputs of
    splitmix64 seeded with `seed` (simple to reproduce in C)."""
    with np.errstate(over="ignore"):
        x = np.uint64(seed) + np.arange(1, n + 1, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        x ^= x >> np.uint64(31)
    return np.argsort(x, kind="stable").astype(np.int32)


# ------------------------------------------------------------- building
def _check(cond: bool, name: str, message: str) -> None:
    if not cond:
        raise UsageError(f"{name}: {message}")


def _positive(name: str, **values) -> None:
    for key, value in values.items():
        _check(isinstance(value, (int, np.integer)) and value >= 1, name,
               f"{key} must be an integer >= 1, got {value!r}")


def _volume(name: str, nbytes: int, iterations: int) -> int:
    """Bytes of one pair over all iterations, exact (numpy would wrap)."""
    _check(isinstance(nbytes, (int, np.integer)) and nbytes >= 0, name,
           f"a message size must be an integer >= 0 bytes, got {nbytes!r}")
    _positive(name, iterations=iterations)
    total = int(nbytes) * int(iterations)
    _check(total <= INT64_MAX, name, f"{nbytes} bytes x {iterations} iterations exceed 64 bits")
    return total


def _room(name: str, entries: int) -> None:
    _check(entries <= MAX_ENTRIES, name,
           f"{entries:,} rank pairs is more than the {MAX_ENTRIES:,} a pattern may hold")


def _spec(name: str, *items: tuple[str, object]) -> str:
    """Canonical spec text; booleans as 0/1, grids as AxBxC."""
    def text(v):
        if isinstance(v, bool):
            return str(int(v))
        if isinstance(v, tuple):
            return "x".join(map(str, v))
        return str(v)

    return name + ":" + ",".join(f"{k}={text(v)}" for k, v in items)


def _finish(n: int, src, dst, msgs, nbytes, spec: str) -> CommMatrix:
    """Hand the triplets to the engine, which sorts them and sums repeats
    (the two wrap-around neighbours of a periodic dimension of 2, say)."""
    src, dst = np.asarray(src, np.int32), np.asarray(dst, np.int32)
    keep = src != dst
    msgs, nbytes = np.broadcast_to(msgs, src.shape), np.broadcast_to(nbytes, src.shape)
    return CommMatrix(n, src[keep], dst[keep], msgs[keep], nbytes[keep], pattern=spec)


def _grid(name: str, grid, n_ranks, ndims: int) -> tuple[int, ...]:
    if grid is None:
        _check(n_ranks is not None, name, "give a process grid or a number of ranks")
        _positive(name, ranks=n_ranks)
        return dims_create(int(n_ranks), ndims)
    grid = tuple(int(g) for g in grid)
    _check(len(grid) == ndims and all(g >= 1 for g in grid), name,
           f"the process grid needs {ndims} sizes >= 1, got {grid}")
    _check(n_ranks is None or int(np.prod(grid)) == n_ranks, name,
           f"grid {'x'.join(map(str, grid))} holds {int(np.prod(grid))} ranks, not {n_ranks}")
    return grid


# ----------------------------------------------------------- generators
def alltoall(n_ranks: int, nbytes: int, *, iterations: int = 1) -> CommMatrix:
    """MPI_Alltoall: every rank sends nbytes to every other rank."""
    _positive("alltoall", ranks=n_ranks)
    vol = _volume("alltoall", nbytes, iterations)
    n = int(n_ranks)
    _room("alltoall", n * (n - 1))
    src = np.repeat(np.arange(n, dtype=np.int64), n - 1)
    dst = np.tile(np.arange(n - 1, dtype=np.int64), n)
    dst += dst >= src  # skip the diagonal
    spec = _spec("alltoall", ("ranks", n), ("bytes", format_size(int(nbytes))), ("iterations", iterations))
    return _finish(n, src, dst, iterations, vol, spec)


def alltoallv(sizes, *, n_ranks: int | None = None, iterations: int = 1) -> CommMatrix:
    """MPI_Alltoallv: sizes[i, j] bytes from i to j (an N x N array, or a
    .npy / whitespace-separated text file of one). Zero sizes send nothing;
    the diagonal stays local."""
    name = "alltoallv"
    path = None
    if isinstance(sizes, (str, PathLike)):
        path = fspath(sizes)
        sizes = _load_sizes(path)
    sizes = np.asarray(sizes)
    _check(sizes.ndim == 2 and sizes.shape[0] == sizes.shape[1] and sizes.size > 0, name,
           f"sizes must be a square matrix, got shape {sizes.shape}")
    _check(sizes.dtype.kind in "iu" or (sizes.dtype.kind == "f" and np.isfinite(sizes).all()
                                         and (sizes == np.round(sizes)).all()),
           name, "sizes must be whole numbers of bytes")
    _check((sizes >= 0).all(), name, "sizes must be >= 0")
    n = sizes.shape[0]
    _check(n_ranks is None or n_ranks == n, name, f"sizes is {n} x {n}, not for {n_ranks} ranks")
    _positive(name, iterations=iterations)
    _check(float(sizes.max()) * iterations <= INT64_MAX, name, "sizes x iterations exceed 64 bits")
    src, dst = np.nonzero(sizes)
    vol = sizes[src, dst].astype(np.int64) * iterations
    spec = _spec(name, ("sizes", path), ("iterations", iterations)) if path else ""
    if not path or len(spec.encode()) > 255 or "," in path:
        # Sizes from memory (or a path the grammar cannot hold): the spec
        # names the pattern but cannot rebuild it.
        spec = _spec(name, ("ranks", n), ("iterations", iterations))
    return _finish(n, src, dst, iterations, vol, spec)


def _load_sizes(path: str) -> np.ndarray:
    try:
        if path.endswith(".npy"):
            return np.load(path, allow_pickle=False)
        return np.loadtxt(path, ndmin=2)
    except OSError as exc:
        raise RankwiseError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise RankwiseError(f"{path}: not a matrix of sizes ({exc})") from None


def _stencil(name: str, dims: tuple[int, ...], neighbours: int, periodic: bool,
             volumes: dict[int, int], iterations: int, spec: str) -> CommMatrix:
    """Halo exchange on a Cartesian grid in MPI_Cart_create order (the last
    coordinate varies fastest). volumes[k]: bytes to a neighbour whose
    offset has k nonzero coordinates (1 face, 2 edge, 3 corner)."""
    offsets = [o for o in np.ndindex(*(3,) * len(dims)) if any(c != 1 for c in o)]
    offsets = [np.array(o) - 1 for o in offsets]
    offsets = [(o, volumes[np.count_nonzero(o)]) for o in offsets if np.count_nonzero(o) in volumes]
    _check(len(offsets) == neighbours, name, f"internal: {len(offsets)} offsets for {neighbours}")
    return _exchange(name, dims, periodic, offsets, iterations, spec)


def _exchange(name: str, dims: tuple[int, ...], periodic: bool, offsets, iterations: int,
              spec: str) -> CommMatrix:
    """Every rank sends one message per (offset, bytes) of `offsets` to the
    rank at that offset on the grid (absent beyond an open border)."""
    n = int(np.prod(dims))
    _room(name, n * len(offsets))
    rank = np.arange(n, dtype=np.int32)
    srcs, dsts, vols = [], [], []
    for off, volume in offsets:
        # Per axis, the neighbour's coordinate (-1 off an open grid): tables
        # of a few entries, broadcast into the grid in row-major order, much
        # cheaper than shifting and wrapping N-long coordinate arrays.
        axes = [np.arange(size) + o for size, o in zip(dims, off)]
        axes = [a % size if periodic else np.where((a >= 0) & (a < size), a, -1)
                for a, size in zip(axes, dims)]
        grids = np.ix_(*axes)
        dst, inside = grids[0], grids[0] >= 0
        for g, size in zip(grids[1:], dims[1:]):
            dst = dst * size + g
            inside = inside & (g >= 0)
        dst = dst.ravel().astype(np.int32)
        if not periodic:
            inside = np.broadcast_to(inside, dims).ravel()
            srcs.append(rank[inside])
            dst = dst[inside]
        else:
            srcs.append(rank)
        dsts.append(dst)
        vols.append(np.full(dst.size, volume, np.int64))
    return _finish(n, np.concatenate(srcs), np.concatenate(dsts), iterations, np.concatenate(vols), spec)


# The forwarding modes of Cui et al. 2020, §3.2 (rankwise-bench-stencil --mode): per
# phase, the offsets exchanged and how many blocks each message carries.
_HALO_MODES = {
    "1d": [([o for o in np.ndindex(3, 3, 3) if o != (1, 1, 1)], 1)],
    "2d": [([(a, b, 1) for a in range(3) for b in range(3) if (a, b) != (1, 1)], 1),
           ([(1, 1, 0), (1, 1, 2)], 9)],
    "3d": [([(0, 1, 1), (2, 1, 1)], 1), ([(1, 0, 1), (1, 2, 1)], 3), ([(1, 1, 0), (1, 1, 2)], 9)],
}


def stencil3d(grid=None, *, n_ranks: int | None = None, neighbours: int | None = None, periodic: bool = False,
              nbytes: int, edge_bytes: int | None = None, corner_bytes: int | None = None,
              mode: str = "direct", iterations: int = 1) -> CommMatrix:
    """3-D halo exchange: 6 faces, 18 with edges, 26 with corners, to the
    neighbours of a px x py x pz process grid (given, or the most cubic
    factorisation of n_ranks). nbytes per face message; edge_bytes and
    corner_bytes default to nbytes; neighbours defaults to 6 (26 in the modes).

    mode 1d/2d/3d: the 26-neighbour exchange of nbytes blocks as
    rankwise-bench-stencil does it — all at once (1d); the 8 neighbours of
    the first two axes, then the last axis with 9 blocks (2d); or axis by
    axis with 1, 3 and 9 blocks (3d, "2-2-2"): fewer, larger messages that
    forward the edge and corner blocks."""
    name = "stencil3d"
    _check(mode in ("direct", *_HALO_MODES), name, f"mode must be direct, 1d, 2d or 3d, got {mode}")
    if mode != "direct":
        _check(neighbours in (None, 26) and edge_bytes is None and corner_bytes is None, name,
               "the 1d/2d/3d modes exchange with all 26 neighbours, one block size (no edge/corner bytes)")
        dims = _grid(name, grid, n_ranks, 3)
        offsets = [(np.array(o) - 1, _volume(name, blocks * nbytes, iterations))
                   for phase, blocks in _HALO_MODES[mode] for o in phase]
        spec = _spec(name, ("grid", dims), ("neighbours", 26), ("periodic", bool(periodic)),
                     ("bytes", format_size(int(nbytes))), ("mode", mode), ("iterations", iterations))
        return _exchange(name, dims, periodic, offsets, iterations, spec)
    neighbours = 6 if neighbours is None else neighbours
    _check(neighbours in (6, 18, 26), name, f"neighbours must be 6, 18 or 26, got {neighbours}")
    dims = _grid(name, grid, n_ranks, 3)
    edge = nbytes if edge_bytes is None else edge_bytes
    corner = nbytes if corner_bytes is None else corner_bytes
    volumes = {1: _volume(name, nbytes, iterations)}
    items = [("grid", dims), ("neighbours", neighbours), ("periodic", bool(periodic)),
             ("bytes", format_size(int(nbytes)))]
    if neighbours >= 18:
        volumes[2] = _volume(name, edge, iterations)
        items.append(("edge_bytes", format_size(int(edge))))
    if neighbours == 26:
        volumes[3] = _volume(name, corner, iterations)
        items.append(("corner_bytes", format_size(int(corner))))
    spec = _spec(name, *items, ("iterations", iterations))
    return _stencil(name, dims, neighbours, periodic, volumes, iterations, spec)


def stencil2d(grid=None, *, n_ranks: int | None = None, neighbours: int = 4, periodic: bool = False,
              nbytes: int, corner_bytes: int | None = None, iterations: int = 1) -> CommMatrix:
    """2-D halo exchange: 4 edges, or 8 with the diagonal corners, on a
    px x py grid (given, or the most square factorisation of n_ranks)."""
    name = "stencil2d"
    _check(neighbours in (4, 8), name, f"neighbours must be 4 or 8, got {neighbours}")
    dims = _grid(name, grid, n_ranks, 2)
    corner = nbytes if corner_bytes is None else corner_bytes
    volumes = {1: _volume(name, nbytes, iterations)}
    items = [("grid", dims), ("neighbours", neighbours), ("periodic", bool(periodic)),
             ("bytes", format_size(int(nbytes)))]
    if neighbours == 8:
        volumes[2] = _volume(name, corner, iterations)
        items.append(("corner_bytes", format_size(int(corner))))
    spec = _spec(name, *items, ("iterations", iterations))
    return _stencil(name, dims, neighbours, periodic, volumes, iterations, spec)


def ring(n_ranks: int, nbytes: int, *, bidirectional: bool = False, iterations: int = 1) -> CommMatrix:
    """Rank i sends to i+1 (mod N); bidirectional: to i-1 as well."""
    _positive("ring", ranks=n_ranks)
    vol = _volume("ring", nbytes, iterations)
    n = int(n_ranks)
    _room("ring", n * (2 if bidirectional else 1))
    src = np.arange(n)
    dst = [(src + 1) % n] + ([(src - 1) % n] if bidirectional else [])
    spec = _spec("ring", ("ranks", n), ("bytes", format_size(int(nbytes))),
                 ("bidirectional", bool(bidirectional)), ("iterations", iterations))
    return _finish(n, np.tile(src, len(dst)), np.concatenate(dst), iterations, vol, spec)


def groups(n_groups: int, per_group: int, nbytes: int, link_bytes: int, *, skip: int = 0,
           iterations: int = 1, seed: int = 0, shuffle: bool = True) -> CommMatrix:
    """Synthetic groups (N_bl = n_groups groups of N_perbl = per_group ranks).

    Every iteration, each rank of a group sends one message of nbytes (D)
    to every other rank of its group. Every 1 + skip iterations (0, 1+skip,
    ...), the last rank of group g and the first rank of group g+1 send
    each other one message of link_bytes (D_bl), for g = 0..n_groups-2 (a
    chain). Over N_iter = iterations, a pair inside a group holds N_iter
    messages and N_iter * D bytes, a linked pair ceil(N_iter / (1 + skip))
    messages of D_bl bytes. With shuffle, logical rank L (= g * per_group +
    k) runs as rank shuffle_ranks(N, seed)[L], so the groups are not
    contiguous and a mapper has to find them.
    """
    name = "groups"
    _positive(name, groups=n_groups, per_group=per_group)
    _check(isinstance(skip, (int, np.integer)) and skip >= 0, name, f"skip must be >= 0, got {skip!r}")
    _check(isinstance(seed, (int, np.integer)) and 0 <= seed <= INT64_MAX, name,
           f"seed must be an integer >= 0, got {seed!r}")
    g, p = int(n_groups), int(per_group)
    n = g * p
    inner_vol = _volume(name, nbytes, iterations)
    exchanges = (iterations + skip) // (skip + 1)
    link_vol = _volume(name, link_bytes, exchanges)
    _room(name, n * (p - 1) + 2 * (g - 1))

    a, b = np.divmod(np.arange(p * p), p)
    a, b = a[a != b], b[a != b]  # ordered pairs inside one group
    base = np.repeat(np.arange(g) * p, a.size)
    src = [base + np.tile(a, g)]
    dst = [base + np.tile(b, g)]
    last = np.arange(g - 1) * p + p - 1
    src += [last, last + 1]
    dst += [last + 1, last]
    msgs = np.concatenate([np.full(src[0].size, iterations), np.full(2 * (g - 1), exchanges)])
    vols = np.concatenate([np.full(src[0].size, inner_vol), np.full(2 * (g - 1), link_vol)])
    src, dst = np.concatenate(src), np.concatenate(dst)
    if shuffle:
        perm = shuffle_ranks(n, seed)
        src, dst = perm[src], perm[dst]
    spec = _spec(name, ("groups", g), ("per_group", p), ("bytes", format_size(int(nbytes))),
                 ("link_bytes", format_size(int(link_bytes))), ("skip", skip),
                 ("iterations", iterations), ("seed", seed), ("shuffle", bool(shuffle)))
    return _finish(n, src, dst, msgs, vols, spec)


def fft(grid, *, n_ranks: int | None = None, decomp: str = "pencil", pgrid=None,
        iterations: int = 1) -> CommMatrix:
    """Transposes of a distributed 3-D FFT of NX x NY x NZ complex doubles,
    one forward transform per iteration, one message per pair and transpose.

    slab (1-D, P ranks): rank i holds z-planes Z_i and, after one all-to-all
    of the whole job, y-rows Y_j: i sends NX * |Y_j| * |Z_i| * 16 bytes to j.
    pencil (P1 x P2 grid, rank r * P2 + c): X-pencils (Y_c over P2, Z_r over
    P1) become Y-pencils by an all-to-all inside each row r, (r, c) sending
    |X_c'| * |Y_c| * |Z_r| * 16 bytes to (r, c'); then Z-pencils by one
    inside each column c, (r, c) sending |X_c| * |Y'_r'| * |Z_r| * 16 bytes
    to (r', c) (Y' split over P1). Blocks follow the usual block
    distribution (the first ones one larger when it does not divide).
    """
    name = "fft"
    _check(decomp in ("slab", "pencil"), name, f"decomp must be slab or pencil, got {decomp!r}")
    _check(grid is not None and len(grid) == 3 and all(int(g) >= 1 for g in grid), name,
           f"the FFT grid needs 3 sizes >= 1 (NXxNYxNZ), got {grid!r}")
    nx, ny, nz = (int(g) for g in grid)
    _positive(name, iterations=iterations)
    _check(nx * ny * nz * COMPLEX_DOUBLE * iterations <= INT64_MAX, name,
           "grid x iterations exceed 64 bits of bytes")
    gspec = ("grid", (nx, ny, nz))
    if decomp == "slab":
        _check(pgrid is None, name, "pgrid is for decomp=pencil")
        _check(n_ranks is not None, name, "slab needs the number of ranks")
        _positive(name, ranks=n_ranks)
        p = int(n_ranks)
        _check(p <= min(ny, nz), name, f"slab over {p} ranks needs NY and NZ >= {p} "
               "(every rank holds a plane)")
        _room(name, p * (p - 1))
        src, dst = np.divmod(np.arange(p * p), p)
        src, dst = src[src != dst], dst[src != dst]
        vol = nx * _blocks(ny, p)[dst] * _blocks(nz, p)[src] * COMPLEX_DOUBLE * iterations
        spec = _spec(name, gspec, ("ranks", p), ("decomp", "slab"), ("iterations", iterations))
        return _finish(p, src, dst, iterations, vol, spec)

    p1, p2 = _grid(name, pgrid, n_ranks, 2) if pgrid is not None or n_ranks is not None else (0, 0)
    _check(p1 > 0, name, "pencil needs the number of ranks or pgrid=P1xP2")
    _check(p2 <= min(nx, ny) and p1 <= min(ny, nz), name,
           f"pencil grid {p1}x{p2} needs NX >= {p2}, NY >= {max(p1, p2)}, NZ >= {p1} "
           "(every rank holds a pencil)")
    p = p1 * p2
    _room(name, p * (p1 + p2 - 2))
    x2, y2, y1, z1 = _blocks(nx, p2), _blocks(ny, p2), _blocks(ny, p1), _blocks(nz, p1)
    # Row transposes: (r, c) -> (r, c2), c2 != c.
    r, c, c2 = (a.ravel() for a in np.meshgrid(np.arange(p1), np.arange(p2), np.arange(p2), indexing="ij"))
    keep = c != c2
    r, c, c2 = r[keep], c[keep], c2[keep]
    row = (r * p2 + c, r * p2 + c2, x2[c2] * y2[c] * z1[r])
    # Column transposes: (r, c) -> (r2, c), r2 != r.
    r, r2, c = (a.ravel() for a in np.meshgrid(np.arange(p1), np.arange(p1), np.arange(p2), indexing="ij"))
    keep = r != r2
    r, r2, c = r[keep], r2[keep], c[keep]
    col = (r * p2 + c, r2 * p2 + c, x2[c] * y1[r2] * z1[r])
    src, dst, vol = (np.concatenate(pair) for pair in zip(row, col))
    spec = _spec(name, gspec, ("decomp", "pencil"), ("pgrid", (p1, p2)), ("iterations", iterations))
    return _finish(p, src, dst, iterations, vol * COMPLEX_DOUBLE * iterations, spec)


def tree(n_ranks: int, nbytes: int, *, op: str = "bcast", root: int = 0, iterations: int = 1) -> CommMatrix:
    """Binomial-tree broadcast or reduce (MPICH's algorithm). With relative
    rank v = (rank - root) mod N, the parent of v > 0 is v with its lowest
    set bit cleared; bcast sends nbytes parent -> child, reduce child ->
    parent: N - 1 messages per operation."""
    name = "tree"
    _check(op in ("bcast", "reduce"), name, f"op must be bcast or reduce, got {op!r}")
    _positive(name, ranks=n_ranks)
    n = int(n_ranks)
    _check(isinstance(root, (int, np.integer)) and 0 <= root < n, name,
           f"root must be a rank in [0, {n}), got {root!r}")
    vol = _volume(name, nbytes, iterations)
    _room(name, n - 1)
    v = np.arange(1, n, dtype=np.int64)
    child, parent = (v + root) % n, ((v & (v - 1)) + root) % n
    src, dst = (parent, child) if op == "bcast" else (child, parent)
    spec = _spec(name, ("ranks", n), ("bytes", format_size(int(nbytes))), ("op", op),
                 ("root", root), ("iterations", iterations))
    return _finish(n, src, dst, iterations, vol, spec)


_COLLECTIVES = ("bcast", "reduce", "allreduce", "gather", "scatter", "allgather")


def collective(n_ranks: int, nbytes: int, *, op: str = "bcast", root: int = 0, iterations: int = 1) -> CommMatrix:
    """The logical traffic of one collective as the PMPI profiler counts it
    (docs/reference/formats.md, "What is counted"), for the calls
    rankwise-bench-collectives makes with a SIZE of nbytes: bcast/scatter
    root -> every rank, reduce/gather every rank -> root, allgather every
    pair, allreduce the reduce-scatter + allgather decomposition of
    nbytes // 4 floats (two messages per pair, blk(j) and blk(i) floats).
    Reductions use 4-byte floats: nbytes is rounded down to a multiple of 4.
    Transfers of 0 bytes are not traffic. (tree: the messages of one
    algorithm instead.) The matrix's `collectives` hold the call itself,
    `iterations` times on every rank, with the bytes the benchmark counts
    (reductions: the bytes of the whole floats), so that the predictor
    can cost it by what its algorithm sends."""
    name = "collective"
    _check(op in _COLLECTIVES, name, f"op must be one of {', '.join(_COLLECTIVES)}, got {op!r}")
    _positive(name, ranks=n_ranks)
    n = int(n_ranks)
    _check(isinstance(root, (int, np.integer)) and 0 <= root < n, name, f"root must be a rank in [0, {n}), got {root!r}")
    spec = _spec(name, ("ranks", n), ("bytes", format_size(int(nbytes))), ("op", op), ("root", root),
                 ("iterations", iterations))
    _volume(name, nbytes, iterations)  # checks the size and the total
    others = np.delete(np.arange(n), root)
    rooted = op in ("bcast", "reduce", "gather", "scatter")
    size = 4 * (int(nbytes) // 4) if op in ("reduce", "allreduce") else int(nbytes)
    call = [CollectiveCall(op, size, int(iterations), int(root) if rooted else 0)]

    def finish(src, dst, vol):
        m = _finish(n, src, dst, iterations, vol, spec)
        m.collectives = call  # already canonical: one call on every rank
        return m

    if op == "allreduce":
        count = int(nbytes) // 4
        blk = count // n + (np.arange(n) < count % n)
        _room(name, 2 * n * (n - 1))
        i, j = (a.ravel() for a in np.meshgrid(np.arange(n), np.arange(n), indexing="ij"))
        src = np.concatenate([i, i])
        dst = np.concatenate([j, j])
        vol = 4 * np.concatenate([blk[j], blk[i]]).astype(np.int64)
        keep = vol > 0
        return finish(src[keep], dst[keep], vol[keep] * iterations)
    if size == 0:
        return finish([], [], np.zeros(0, np.int64))
    vol = _volume(name, size, iterations)
    if op in ("bcast", "scatter"):
        return finish(np.full(n - 1, root), others, vol)
    if op in ("reduce", "gather"):
        return finish(others, np.full(n - 1, root), vol)
    _room(name, n * (n - 1))
    i, j = (a.ravel() for a in np.meshgrid(np.arange(n), np.arange(n), indexing="ij"))
    return finish(i, j, vol)


# ------------------------------------------------------------------ specs
_REQUIRED = object()


@dataclass(frozen=True)
class Param:
    key: str
    kind: str  # count | size | dims2 | dims3 | flag | word | path
    default: object = None  # None: optional, the generator decides; _REQUIRED
    minimum: int = 0  # for counts
    words: tuple[str, ...] = ()
    kwarg: str = ""  # generator keyword when it differs from the key


@dataclass(frozen=True)
class Pattern:
    name: str
    generator: Callable[..., CommMatrix]
    params: tuple[Param, ...]


def _ranks(default=None):
    return Param("ranks", "count", default, minimum=1, kwarg="n_ranks")


def _bytes(key="bytes", default=_REQUIRED):
    return Param(key, "size", default, kwarg="nbytes" if key == "bytes" else "")


_ITER = Param("iterations", "count", 1, minimum=1)

PATTERNS: dict[str, Pattern] = {p.name: p for p in (
    Pattern("alltoall", alltoall, (_ranks(_REQUIRED), _bytes(), _ITER)),
    Pattern("alltoallv", alltoallv, (Param("sizes", "path", _REQUIRED), _ranks(), _ITER)),
    Pattern("stencil3d", stencil3d, (Param("grid", "dims3"), _ranks(),
                                     Param("neighbours", "count", None, words=("6", "18", "26")),
                                     Param("periodic", "flag", False), _bytes(),
                                     _bytes("edge_bytes", None), _bytes("corner_bytes", None),
                                     Param("mode", "word", "direct", words=("direct", "1d", "2d", "3d")),
                                     _ITER)),
    Pattern("stencil2d", stencil2d, (Param("grid", "dims2"), _ranks(),
                                     Param("neighbours", "count", 4, words=("4", "8")),
                                     Param("periodic", "flag", False), _bytes(),
                                     _bytes("corner_bytes", None), _ITER)),
    Pattern("ring", ring, (_ranks(_REQUIRED), _bytes(), Param("bidirectional", "flag", False), _ITER)),
    Pattern("groups", groups, (Param("groups", "count", _REQUIRED, minimum=1, kwarg="n_groups"),
                               Param("per_group", "count", _REQUIRED, minimum=1), _bytes(),
                               _bytes("link_bytes"), Param("skip", "count", 0), _ITER,
                               Param("seed", "count", 0), Param("shuffle", "flag", True))),
    Pattern("fft", fft, (Param("grid", "dims3", _REQUIRED), _ranks(),
                         Param("decomp", "word", "pencil", words=("slab", "pencil")),
                         Param("pgrid", "dims2"), _ITER)),
    Pattern("collective", collective, (_ranks(_REQUIRED), _bytes(),
                                       Param("op", "word", "bcast", words=_COLLECTIVES),
                                       Param("root", "count", 0), _ITER)),
    Pattern("tree", tree, (_ranks(_REQUIRED), _bytes(), Param("op", "word", "bcast", words=("bcast", "reduce")),
                           Param("root", "count", 0), _ITER)),
)}
_ALIASES = {"neighbors": "neighbours"}
_FLAGS = {"1": True, "true": True, "yes": True, "on": True,
          "0": False, "false": False, "no": False, "off": False}


@dataclass(frozen=True)
class PatternSpec:
    """A pattern name and the parameters given (typed), before generation."""

    name: str
    params: dict = field(default_factory=dict)

    @classmethod
    def from_fields(cls, name: str, fields: dict[str, str], *, where: str | None = None,
                    options: bool = False) -> "PatternSpec":
        """Type-check text values by the pattern's parameter table. Errors
        start with `where` (the spec text) or the pattern name; with
        options, parameters are called --like-this (the CLI's spelling)."""
        prefix = f"pattern '{shown(where, 80)}'" if where is not None else name
        if name not in PATTERNS:
            raise UsageError(f"{prefix}: unknown pattern '{shown(name)}' (known: {', '.join(PATTERNS)})")
        table = {p.key: p for p in PATTERNS[name].params}
        label = (lambda k: "--" + k.replace("_", "-")) if options else (lambda k: f"'{k}'")
        params = {}
        for key, text in fields.items():
            if key not in table:
                raise UsageError(f"{prefix}: unknown parameter {label(key)} "
                                    f"(known: {', '.join(table)})")
            params[key] = _parse_value(table[key], text, lambda msg: UsageError(
                f"{prefix}: {label(key)} {msg}, got '{shown(text)}'"))
        for p in table.values():
            if p.default is _REQUIRED and p.key not in params:
                raise UsageError(f"{prefix}: {label(p.key)} is required")
        return cls(name, params)

    def __str__(self) -> str:
        return _spec(self.name, *self.params.items()) if self.params else self.name


def _parse_value(p: Param, text: str, error):
    text = text.strip()
    if p.kind == "count":
        if p.words and text not in p.words:
            raise error(f"must be {' or '.join(p.words)}")
        if not (text.isascii() and text.isdigit()):
            raise error(f"must be an integer >= {p.minimum}")
        try:
            value = bounded_int(text, INT64_MAX)
        except ValueError:
            raise error(f"must be an integer from {p.minimum} to {INT64_MAX}") from None
        if value < p.minimum:
            raise error(f"must be an integer >= {p.minimum}")
        return value
    if p.kind == "size":
        try:
            return parse_size(text)
        except ValueError:
            raise error("must be a size in bytes (512, 64K, 1M, 2G)") from None
    if p.kind in ("dims2", "dims3"):
        parts = text.lower().split("x")
        ndims = int(p.kind[-1])
        try:
            dims = tuple(bounded_int(s, INT64_MAX) if s.isascii() and s.isdigit() else 0 for s in parts)
        except ValueError:
            raise error(f"must be {ndims} integers from 1 to {INT64_MAX} joined by 'x'") from None
        if len(parts) != ndims or min(dims) < 1:
            raise error(f"must be {ndims} integers >= 1 joined by 'x' (e.g. {'x'.join(['64'] * ndims)})")
        return dims
    if p.kind == "flag":
        if text.lower() not in _FLAGS:
            raise error("must be 0 or 1")
        return _FLAGS[text.lower()]
    if p.kind == "word":
        if text not in p.words:
            raise error(f"must be {' or '.join(p.words)}")
        return text
    if not text:  # path
        raise error("must be a file")
    return text


def parse_pattern_spec(text: str) -> PatternSpec:
    """'stencil3d:grid=64x64x64,neighbours=6,periodic=1,bytes=1M' -> PatternSpec.

    Grammar: NAME [':' KEY '=' VALUE (',' KEY '=' VALUE)*]; blanks around
    names, keys and values are ignored; a key may appear once."""
    if not isinstance(text, str) or not text.strip():
        raise UsageError("empty pattern spec (expected NAME:KEY=VALUE,...)")
    name, _, rest = text.strip().partition(":")
    fields: dict[str, str] = {}
    for item in rest.split(",") if rest.strip() else []:
        key, eq, value = (s.strip() for s in item.partition("="))
        if not eq or not key or not value:
            raise UsageError(f"pattern '{shown(text, 80)}': '{shown(item.strip())}' is not KEY=VALUE")
        key = _ALIASES.get(key, key)
        if key in fields:
            raise UsageError(f"pattern '{shown(text, 80)}': '{shown(key)}' given twice")
        fields[key] = value
    return PatternSpec.from_fields(name.strip(), fields, where=text)


def generate(spec: str | PatternSpec) -> CommMatrix:
    """The matrix of a pattern spec (text or parsed)."""
    if not isinstance(spec, PatternSpec):
        spec = parse_pattern_spec(spec)
    pattern = PATTERNS[spec.name]
    table = {p.key: p for p in pattern.params}
    kwargs = {(table[k].kwarg or k): v for k, v in spec.params.items()}
    for p in pattern.params:  # defaults the table knows, for parameters not given
        if p.key not in spec.params and p.default not in (None, _REQUIRED):
            kwargs.setdefault(p.kwarg or p.key, p.default)
    return pattern.generator(**kwargs)
