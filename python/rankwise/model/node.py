"""Inside the node: Python face of engine/include/rankwise_node.h. The
node's structure (packages, NUMA domains, shared caches, cores, PUs) as
hwloc reads it, and the placement of one node's ranks on its cores."""

from __future__ import annotations

import ctypes as C
from dataclasses import dataclass
from functools import lru_cache
from os import PathLike, fspath

import numpy as np

from rankwise._engine import core as engine
from rankwise._engine import node as node_engine
from rankwise._engine.node import CNodeCosts, CNodeTopology, TopologyPtr, i32p, i64p
from rankwise.util.errors import RankwiseError, UsageError
from rankwise.util.inputs import check_input
from rankwise.traffic.matrix import CommMatrix

LEVELS = ("cache", "domain", "package", "node")  # closest first (rw_node_level)


@lru_cache(maxsize=1)
def node_lib() -> C.CDLL:
    """librankwise with the node functions declared, its levels checked against ours."""
    so = node_engine.lib()
    if engine.enum_names("node_level", so) != LEVELS:
        raise RankwiseError(f"the C engine's node levels {engine.enum_names('node_level', so)} are not "
                            f"this package's {LEVELS}: rebuild and reinstall rankwise (make build)")
    return so


@dataclass(frozen=True)
class NodeCosts:
    """Seconds and seconds per byte of a message between two ranks of a node,
    by the level their cores share (LEVELS order)."""

    alpha: tuple[float, float, float, float]
    beta: tuple[float, float, float, float]

    @classmethod
    def default(cls) -> "NodeCosts":
        c = node_lib().rw_node_costs_default()
        return cls(tuple(c.alpha), tuple(c.beta))

    @classmethod
    def from_model(cls, model) -> "NodeCosts | None":
        """The model's figures inside the node (format 3), None when it has
        none. A level not measured takes the default figure; each level is
        raised to at least the one below it (measurement noise must not make
        a farther level cheaper)."""
        alpha, beta = np.asarray(model.node_alpha, float), np.asarray(model.node_beta, float)
        if np.all(np.isnan(alpha)):
            return None
        d = cls.default()
        a = np.where(np.isnan(alpha), d.alpha, alpha)
        b = np.where(np.isnan(beta), d.beta, beta)
        return cls(tuple(np.maximum.accumulate(a).tolist()), tuple(np.maximum.accumulate(b).tolist()))

    def _to_c(self) -> CNodeCosts:
        c = CNodeCosts()
        c.alpha[:] = [float(x) for x in self.alpha]
        c.beta[:] = [float(x) for x in self.beta]
        engine.check(node_lib().rw_node_costs_check(C.byref(c)))
        return c


# PUs of a synthetic node: hwloc and the flattening take 2 s at 4,096, 15 s at 8,192 and minutes
# and GBs past 60,000; real nodes have at most a few thousand.
MAX_PUS = 4096


def synthetic_size(synthetic: str) -> int:
    """The PUs (leaves) a synthetic description makes: the product of its levels' arities
    ('pack:2 numa:2 core:4 pu:1' -> 16; attributes '(...)' and memory children '[...]' aside).
    hwloc builds every object before anything can be counted: 'pack:64 numa:64 core:64 pu:1'
    took 10 GB, so the size is known, and capped, before hwloc sees it."""
    import re

    from rankwise.util.numbers import bounded_int

    text = re.sub(r"\([^()]*\)|\[[^\[\]]*\]", " ", synthetic)
    size = 1
    for token in text.split():
        arity = token.rsplit(":", 1)[-1]
        if arity.isascii() and arity.isdigit():
            try:
                size *= bounded_int(arity, MAX_PUS + 1)
            except ValueError:
                size = MAX_PUS + 1
            size = min(size, MAX_PUS + 1)  # past the cap: the product need not be known
    return size


def _checked(fn, synthetic: str | None, xml: str | PathLike | None, *rest) -> None:
    """fn(synthetic, xml, *rest) from the engine, its sources checked first: a
    synthetic description hwloc refuses is a usage error (the user's option)."""
    if synthetic is not None and xml is not None:
        raise UsageError("give a synthetic topology or an XML file, not both")
    if synthetic is not None and (not synthetic.strip() or "\0" in synthetic):
        raise UsageError(f"synthetic topology {synthetic!r} is empty or holds a NUL character")
    if synthetic is not None and not (synthetic.isascii() and synthetic.isprintable()):
        from rankwise.util.numbers import shown

        raise UsageError(f"synthetic topology '{shown(synthetic, 60)}' holds characters hwloc's syntax has not "
                         "(e.g. 'pack:2 numa:2 core:4 pu:1')")
    if synthetic is not None and synthetic_size(synthetic) > MAX_PUS:
        from rankwise.util.numbers import shown

        raise UsageError(f"synthetic topology '{shown(synthetic, 60)}' makes more than {MAX_PUS} PUs "
                         "(the largest synthetic node rankwise builds)")
    if xml is not None:
        check_input(xml)  # a FIFO or a directory is refused, never waited on
    status = fn(synthetic.encode() if synthetic is not None else None,
                fspath(xml).encode() if xml is not None else None, *rest)
    if status == engine.enum_value("status", "arg") and synthetic is not None:
        raise UsageError(node_lib().rw_last_error().decode(errors="replace"))
    engine.check(status)


def export_xml(out: str | PathLike, synthetic: str | None = None, xml: str | PathLike | None = None) -> None:
    """Write the node (same sources as NodeTopology.load) as hwloc XML, atomically."""
    _checked(node_lib().rw_node_topology_export, synthetic, xml, fspath(out).encode())


def _arr(ptr, n: int, dtype=np.int32) -> np.ndarray:
    return np.ctypeslib.as_array(ptr, shape=(n,)).astype(dtype, copy=True) if n else np.zeros(0, dtype)


@dataclass(frozen=True)
class NodeDevice:
    """A GPU or coprocessor and where it attaches (-1: no one package or domain is local to it)."""

    name: str
    kind: str  # "gpu" or "coproc"
    pci: str  # PCI bus id, "" when none
    package: int
    domain: int


@dataclass(frozen=True, eq=False)
class NodeTopology:
    """A node by core (hwloc logical order): arrays indexed by core, plus the
    shared caches and the domains' memory."""

    source: str
    n_packages: int
    n_domains: int
    n_pus: int
    package_of: np.ndarray
    domain_of: np.ndarray
    cache_of: np.ndarray  # -1: the core shares no cache
    core_in_package: np.ndarray
    cpu_of: np.ndarray  # OS index of the core's first PU
    pus_of: np.ndarray
    cache_level: np.ndarray
    cache_cores: np.ndarray
    cache_bytes: np.ndarray
    domain_bytes: np.ndarray
    devices: tuple[NodeDevice, ...] = ()  # GPUs and coprocessors (hwloc I/O discovery)

    @property
    def n_cores(self) -> int:
        return int(self.package_of.size)

    @property
    def n_caches(self) -> int:
        return int(self.cache_level.size)

    @classmethod
    def load(cls, synthetic: str | None = None, xml: str | PathLike | None = None) -> "NodeTopology":
        """From a synthetic description (hwloc syntax, e.g. 'pack:2 numa:2
        core:4 pu:1'), an hwloc XML file, or (neither) this machine."""
        so = node_lib()
        ptr = TopologyPtr()
        _checked(so.rw_node_topology_load, synthetic, xml, C.byref(ptr))
        try:
            return cls._from_c(ptr.contents)
        finally:
            so.rw_node_topology_free(ptr)

    @classmethod
    def _from_c(cls, t: CNodeTopology) -> "NodeTopology":
        n, k = t.n_cores, t.n_caches
        return cls(t.source.decode(errors="replace"), t.n_packages, t.n_domains, t.n_pus,
                   _arr(t.package_of, n), _arr(t.domain_of, n), _arr(t.cache_of, n), _arr(t.core_in_package, n),
                   _arr(t.cpu_of, n), _arr(t.pus_of, n), _arr(t.cache_level, k), _arr(t.cache_cores, k),
                   _arr(t.cache_bytes, k, np.int64), _arr(t.domain_bytes, t.n_domains, np.int64),
                   tuple(NodeDevice(d.name.decode(errors="replace"), d.kind.decode(), d.pci.decode(), d.package,
                                    d.domain) for d in (t.devices[i] for i in range(t.n_devices))))

    def _to_c(self) -> tuple[CNodeTopology, list]:
        """A C view of the arrays (the list keeps them alive while it is used)."""
        keep = [np.ascontiguousarray(a, dtype=a.dtype) for a in (
            self.package_of, self.domain_of, self.cache_of, self.core_in_package, self.cpu_of, self.pus_of,
            self.cache_level, self.cache_cores, self.cache_bytes, self.domain_bytes)]
        t = CNodeTopology()
        t.n_packages, t.n_domains, t.n_caches = self.n_packages, self.n_domains, self.n_caches
        t.n_cores, t.n_pus = self.n_cores, self.n_pus
        names = ("package_of", "domain_of", "cache_of", "core_in_package", "cpu_of", "pus_of",
                 "cache_level", "cache_cores", "cache_bytes", "domain_bytes")
        for name, a in zip(names, keep):
            setattr(t, name, a.ctypes.data_as(i64p if a.dtype == np.int64 else i32p))
        t.source = self.source.encode()[:255]
        return t, keep

    def level(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """Index into LEVELS of what cores a and b share (elementwise)."""
        a, b = np.asarray(a), np.asarray(b)
        same_cache = (self.cache_of[a] >= 0) & (self.cache_of[a] == self.cache_of[b])
        return np.where(self.package_of[a] != self.package_of[b], 3,
                        np.where(self.domain_of[a] != self.domain_of[b], 2,
                                 np.where(same_cache | (a == b), 0, 1)))

    def place(self, matrix: CommMatrix, ranks, costs: NodeCosts | None = None) -> np.ndarray:
        """Cores (logical indices) for the node's ranks, ranks[k] -> result[k]."""
        ranks = np.ascontiguousarray(ranks, dtype=np.int32)
        out = np.zeros(ranks.size, dtype=np.int32)
        self._call("rw_node_place", matrix, ranks, costs, out.ctypes.data_as(i32p))
        return out

    def cost(self, matrix: CommMatrix, ranks, cores, costs: NodeCosts | None = None) -> float:
        ranks, cores = self._pair(ranks, cores)
        value = C.c_double()
        self._call("rw_node_place_cost", matrix, ranks, costs, cores.ctypes.data_as(i32p), C.byref(value))
        return float(value.value)

    def domain_cut(self, matrix: CommMatrix, ranks, cores) -> tuple[int, int]:
        """(bytes between the ranks whose cores are in different domains, all bytes between them)."""
        ranks, cores = self._pair(ranks, cores)
        so, t, keep = node_lib(), *self._to_c()
        mptr = matrix._to_c()
        cut, total = C.c_int64(), C.c_int64()
        try:
            engine.check(so.rw_node_domain_cut(mptr, ranks.size, ranks.ctypes.data_as(i32p), C.byref(t),
                                               cores.ctypes.data_as(i32p), C.byref(cut), C.byref(total)))
        finally:
            so.rw_matrix_free(mptr)
        return int(cut.value), int(total.value)

    @staticmethod
    def _pair(ranks, cores) -> tuple[np.ndarray, np.ndarray]:
        ranks = np.ascontiguousarray(ranks, dtype=np.int32)
        cores = np.ascontiguousarray(cores, dtype=np.int32)
        if ranks.shape != cores.shape:
            raise RankwiseError(f"{ranks.size} ranks and {cores.size} cores")
        return ranks, cores

    def _call(self, fn: str, matrix: CommMatrix, ranks: np.ndarray, costs: NodeCosts | None, *rest) -> None:
        so, t, keep = node_lib(), *self._to_c()
        c = costs._to_c() if costs is not None else None
        mptr = matrix._to_c()
        try:
            engine.check(getattr(so, fn)(mptr, ranks.size, ranks.ctypes.data_as(i32p), C.byref(t),
                                         C.byref(c) if c is not None else None, *rest))
        finally:
            so.rw_matrix_free(mptr)


def place_on_cores(matrix: CommMatrix, node_of, names, topology: NodeTopology,
                   costs: NodeCosts | None = None) -> np.ndarray:
    """The core (logical index) of every rank, each node's ranks placed on
    its cores by rw_node_place; every node of the allocation is taken to
    be built as `topology` (names: the nodes, for messages)."""
    node_of = np.asarray(node_of)
    cores = np.zeros(node_of.size, dtype=np.int32)
    for v in np.unique(node_of).tolist():
        ranks = np.flatnonzero(node_of == v).astype(np.int32)
        if ranks.size > topology.n_cores:
            raise RankwiseError(f"node '{names[v]}' holds {ranks.size} ranks, but the node topology "
                                f"({topology.source}) has {topology.n_cores} cores")
        cores[ranks] = topology.place(matrix, ranks, costs)
    return cores
