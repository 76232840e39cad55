"""The network model in Python: numpy arrays over the C engine's model.

Reading and writing go through the C engine (one implementation of the
file format, docs/reference/formats.md); this module only copies arrays across."""

from __future__ import annotations

import ctypes as C
from dataclasses import dataclass, field, fields
from functools import lru_cache
from os import PathLike, fspath

import numpy as np

from rankwise._engine import core as engine
from rankwise.util.errors import RankwiseError
from rankwise.util.files import prepare_output
from rankwise.util.inputs import check_input

# Pair states in the numpy arrays (the engine's values are looked up by
# name when crossing to C: _states_to_c, _states_from_c).
UNPROBED, MEASURED, MISSING = 0, 1, 2
STATE_NAMES = ("unprobed", "measured", "missing")
MODES = ("concurrent", "isolated")


@dataclass
class Settings:
    mode: str = "concurrent"
    repetitions: int = 5
    rounds: int = 3
    warmup: int = 1
    timeout: float = 10.0
    time_budget: float = 0.0


@dataclass(frozen=True)
class Link:
    """A shared link between groups of nodes (a rack uplink): every flow
    from a node whose group is in from_groups to a node of another group in
    to_groups crosses it; None means every group. capacity in bytes/s."""

    name: str
    capacity: float
    from_groups: tuple[int, ...] | None = None
    to_groups: tuple[int, ...] | None = None

    def crosses(self, group_of: np.ndarray) -> np.ndarray:
        """n x n booleans: which node pairs' flows cross the link."""
        g = np.asarray(group_of)
        src = np.ones(g.size, bool) if self.from_groups is None else np.isin(g, self.from_groups)
        dst = np.ones(g.size, bool) if self.to_groups is None else np.isin(g, self.to_groups)
        known = g >= 0
        return (src & known)[:, None] & (dst & known)[None, :] & (g[:, None] != g[None, :])


@dataclass(frozen=True)
class Spread:
    """A stress-test phase (`up-3`, `down-3`) read at `times` separate times
    of the probe (format 5): the lowest, median and highest reading (bytes/s,
    each the median of its repetitions) and `noise`, the median over times
    of the repetitions' (max - min) / median. Readings that differ well
    beyond the noise: the link's load varies over time."""

    name: str
    low: float
    median: float
    high: float
    noise: float
    times: int


@dataclass(frozen=True)
class Hop:
    """A direct network's link from node src to its neighbour dst (one
    direction; format 7): a torus's, from the analysis of the latencies
    (rankwise.model.hops). A flow crosses the hops of its shortest routes,
    spread evenly over them (rw_model_hop_share). capacity in bytes/s."""

    src: int
    dst: int
    capacity: float


@dataclass
class Model:
    """A complete directed graph of nodes weighted by measured timings.

    Per ordered pair (i, j) and message size s, ``rtt_*[i, j, s]`` hold the
    round-trip statistics of ``sizes[s]`` bytes i -> j with an empty reply;
    ``alpha``/``beta`` are the Hockney fit (one-way time = alpha + beta *
    bytes). ``state`` says which pairs were measured, missing or unprobed.
    """

    names: list[str]
    sizes: np.ndarray
    ranks_per_node: np.ndarray
    rtt_min: np.ndarray
    rtt_median: np.ndarray
    rtt_max: np.ndarray
    jitter: np.ndarray
    samples: np.ndarray
    alpha: np.ndarray
    beta: np.ndarray
    measured_at: np.ndarray
    state: np.ndarray
    intra_min: np.ndarray
    intra_median: np.ndarray
    intra_max: np.ndarray
    intra_jitter: np.ndarray
    intra_samples: np.ndarray
    intra_alpha: np.ndarray
    intra_beta: np.ndarray
    intra_state: np.ndarray
    settings: Settings = field(default_factory=Settings)
    source: str = ""
    created: float = float("nan")
    duration: float = float("nan")  # seconds the probe took (simulated under SMPI)
    # The network's structure (format 2, docs/reference/formats.md "Structure"); NaN,
    # -1, 0 or empty where it was not measured.
    overhead: np.ndarray | None = None  # per node, send overhead o (s)
    recv_overhead: np.ndarray | None = None  # per node, receive overhead (s; format 4)
    inject: np.ndarray | None = None  # per node, bytes/s sent to several peers at once
    eject: np.ndarray | None = None  # per node, bytes/s received from several at once
    duplex: np.ndarray | None = None  # per node, bytes/s sent and received in all at once (format 6)
    knee: int = 0  # first size of the large-message protocol (bytes), 0 = none found
    alpha_large: np.ndarray | None = None  # per pair, the fit on sizes >= knee
    beta_large: np.ndarray | None = None
    group_of: np.ndarray | None = None  # per node, the group links refer to (-1 none)
    links: list[Link] = field(default_factory=list)
    spreads: list[Spread] = field(default_factory=list)  # capacities read at separate times (format 5)
    hops: list[Hop] = field(default_factory=list)  # a direct network's links (format 7), by (src, dst)
    # Inside the node (format 3, docs/concepts/inside-node.md): alpha and beta by the
    # level two cores share (rankwise.model.node.LEVELS), NaN where not measured.
    node_alpha: np.ndarray | None = None
    node_beta: np.ndarray | None = None

    def __post_init__(self):
        n = len(self.names)
        for name, shape, fill, dtype in (("overhead", (n,), np.nan, np.float64),
                                         ("recv_overhead", (n,), np.nan, np.float64),
                                         ("inject", (n,), np.nan, np.float64),
                                         ("eject", (n,), np.nan, np.float64),
                                         ("duplex", (n,), np.nan, np.float64),
                                         ("alpha_large", (n, n), np.nan, np.float64),
                                         ("beta_large", (n, n), np.nan, np.float64),
                                         ("group_of", (n,), -1, np.int32),
                                         ("node_alpha", (4,), np.nan, np.float64),
                                         ("node_beta", (4,), np.nan, np.float64)):
            if getattr(self, name) is None:
                setattr(self, name, np.full(shape, fill, dtype=dtype))

    # ------------------------------------------------------------ building
    @classmethod
    def empty(cls, names, sizes, ranks_per_node=None) -> "Model":
        """A model with every pair unprobed."""
        n, k = len(names), len(sizes)
        nan = lambda *shape: np.full(shape, np.nan)  # noqa: E731
        return cls(
            names=list(names),
            sizes=np.asarray(sizes, dtype=np.int64),
            ranks_per_node=np.asarray(
                ranks_per_node if ranks_per_node is not None else np.ones(n), dtype=np.int32
            ),
            rtt_min=nan(n, n, k),
            rtt_median=nan(n, n, k),
            rtt_max=nan(n, n, k),
            jitter=nan(n, n, k),
            samples=np.zeros((n, n, k), np.int32),
            alpha=nan(n, n),
            beta=nan(n, n),
            measured_at=nan(n, n),
            state=np.zeros((n, n), np.uint8),
            intra_min=nan(n, k),
            intra_median=nan(n, k),
            intra_max=nan(n, k),
            intra_jitter=nan(n, k),
            intra_samples=np.zeros((n, k), np.int32),
            intra_alpha=nan(n),
            intra_beta=nan(n),
            intra_state=np.zeros(n, np.uint8),
        )

    # ----------------------------------------------------------- properties
    @property
    def n_nodes(self) -> int:
        return len(self.names)

    @property
    def bandwidth(self) -> np.ndarray:
        """Bytes per second i -> j (NaN where unknown or infinite)."""
        with np.errstate(divide="ignore", invalid="ignore"):
            bw = 1.0 / self.beta
        bw[~np.isfinite(bw)] = np.nan
        return bw

    @property
    def pair_jitter(self) -> np.ndarray:
        """Per pair, the median jitter over message sizes (NaN if unknown)."""
        out = np.full(self.state.shape, np.nan)
        ok = self.state == MEASURED
        if ok.any():
            jitter = self.jitter[ok]
            known = ~np.isnan(jitter).all(axis=-1)  # a measured pair may lack every jitter (nan in the file)
            picked = np.full(jitter.shape[0], np.nan)
            if known.any():
                picked[known] = np.nanmedian(jitter[known], axis=-1)
            out[ok] = picked
        return out

    def missing_pairs(self) -> list[tuple[int, int]]:
        return [tuple(map(int, p)) for p in np.argwhere(self.state == MISSING)]

    def index(self, name: str) -> int:
        try:
            return self.names.index(name)
        except ValueError:
            raise RankwiseError(f"node '{name}' is not in the model") from None

    def time(self, i: int, j: int, nbytes: float) -> float:
        """Predicted one-way time of nbytes from node i to node j (NaN if
        unknown); at and above the knee, the pair's large-message fit when it
        has one (as rw_model_time)."""
        if i == j:
            return float(self.intra_alpha[i] + self.intra_beta[i] * nbytes)
        if self.state[i, j] != MEASURED:
            return float("nan")
        if self.knee > 0 and nbytes >= self.knee and self.alpha_large is not None:
            a, b = self.alpha_large[i, j], self.beta_large[i, j]
            if np.isfinite(a) and np.isfinite(b):
                return float(a + b * nbytes)
        return float(self.alpha[i, j] + self.beta[i, j] * nbytes)

    # -------------------------------------------------------- C round trip
    def _to_c(self) -> engine.ModelPtr:
        n, k = self.n_nodes, len(self.sizes)
        so = engine.lib()
        # The engine checks every rule (rw_model_check); here only what C
        # strings and fixed-size integers would silently change.
        names = (C.c_char_p * n)(*[_c_text(f"node {i}: the name", s) for i, s in enumerate(self.names)])
        source = _c_text("the source", self.source)
        if len(source) > engine.TEXT_MAX:
            raise RankwiseError(f"the source is longer than {engine.TEXT_MAX} bytes: {self.source[:40]}...")
        ranks = _int_array("ranks per node", self.ranks_per_node, np.int32)
        sizes = _int_array("message sizes", self.sizes, np.int64)
        for name in ("repetitions", "rounds", "warmup"):
            _int_array(f"settings: {name}", [getattr(self.settings, name)], np.int32)
        ptr = engine.ModelPtr()
        engine.check(
            so.rw_model_create(
                n,
                names,
                ranks.ctypes.data_as(C.POINTER(C.c_int32)),
                k,
                sizes.ctypes.data_as(C.POINTER(C.c_int64)),
                C.byref(ptr),
            )
        )
        m = ptr.contents
        st = m.settings
        if self.settings.mode not in MODES:
            raise RankwiseError(f"unknown probe mode '{self.settings.mode}' (choose from {', '.join(MODES)})")
        st.mode = engine.enum_value("probe_mode", self.settings.mode)
        for name in ("repetitions", "rounds", "warmup", "timeout", "time_budget"):
            setattr(st, name, getattr(self.settings, name))
        m.source = source
        m.created = self.created
        m.duration = self.duration
        _view(m.alpha, (n, n))[:] = self.alpha
        _view(m.beta, (n, n))[:] = self.beta
        _view(m.measured_at, (n, n))[:] = self.measured_at
        _view(m.pair_state, (n, n))[:] = _states_to_c(self.state)
        pair = _view(m.pair_stats, (n, n, k))
        for col, arr in _stat_columns(self, "pair"):
            pair[col] = _int_array("sample counts", arr, np.int32) if col == "count" else arr
        _view(m.intra_alpha, (n,))[:] = self.intra_alpha
        _view(m.intra_beta, (n,))[:] = self.intra_beta
        _view(m.intra_state, (n,))[:] = _states_to_c(self.intra_state)
        intra = _view(m.intra_stats, (n, k))
        for col, arr in _stat_columns(self, "intra"):
            intra[col] = _int_array("sample counts", arr, np.int32) if col == "count" else arr
        try:
            self._structure_to_c(ptr)
        except BaseException:
            so.rw_model_free(ptr)
            raise
        return ptr

    def _structure_to_c(self, ptr: engine.ModelPtr) -> None:
        m, n = ptr.contents, self.n_nodes
        for name, shape in (("overhead", (n,)), ("recv_overhead", (n,)), ("inject", (n,)), ("eject", (n,)),
                            ("duplex", (n,)), ("alpha_large", (n, n)), ("beta_large", (n, n))):
            value = np.asarray(getattr(self, name), dtype=np.float64)
            if value.shape != shape:
                raise RankwiseError(f"{name} needs shape {shape}, got {value.shape}")
            _view(getattr(m, name), shape)[:] = value
        _view(m.group_of, (n,))[:] = _int_array("groups", np.asarray(self.group_of).reshape(n), np.int32)
        m.knee = int(_int_array("knee", [self.knee], np.int64)[0])
        for name in ("node_alpha", "node_beta"):
            value = np.asarray(getattr(self, name), dtype=np.float64)
            if value.shape != (4,):
                raise RankwiseError(f"{name} needs shape (4,), got {value.shape}")
            getattr(m, name)[:] = value.tolist()
        for link in self.links:
            lists = []
            for groups in (link.from_groups, link.to_groups):
                arr = _int_array(f"link {link.name}: groups", [] if groups is None else list(groups), np.int32)
                lists.append((arr.size, arr.ctypes.data_as(C.POINTER(C.c_int32)) if arr.size else None, arr))
            engine.check(engine.lib().rw_model_add_link(
                ptr, _c_text(f"link {link.name}: the name", link.name), float(link.capacity),
                lists[0][0], lists[0][1], lists[1][0], lists[1][1]))
        for hop in self.hops:
            ends = _int_array("hop nodes", [hop.src, hop.dst], np.int32)
            engine.check(engine.lib().rw_model_add_hop(ptr, int(ends[0]), int(ends[1]), float(hop.capacity)))
        for sp in self.spreads:
            engine.check(engine.lib().rw_model_add_spread(
                ptr, _c_text(f"capacity-spread {sp.name}: the name", sp.name), float(sp.low), float(sp.median),
                float(sp.high), float(sp.noise), int(_int_array("capacity-spread times", [sp.times], np.int32)[0])))

    @classmethod
    def _from_c(cls, ptr: engine.ModelPtr) -> "Model":
        m = ptr.contents
        n, k = m.n_nodes, m.n_sizes
        names = [_node_name(m.node_names[i], i) for i in range(n)]
        model = cls.empty(names, _view(m.sizes, (k,)).copy(), _view(m.ranks_per_node, (n,)).copy())
        st = m.settings
        model.settings = Settings(
            mode=engine.lib().rw_probe_mode_name(st.mode).decode(),
            repetitions=st.repetitions,
            rounds=st.rounds,
            warmup=st.warmup,
            timeout=st.timeout,
            time_budget=st.time_budget,
        )
        model.source = m.source.decode(errors="replace")
        model.created = m.created
        model.duration = m.duration
        model.alpha = _view(m.alpha, (n, n)).copy()
        model.beta = _view(m.beta, (n, n)).copy()
        model.measured_at = _view(m.measured_at, (n, n)).copy()
        model.state = _states_from_c(_view(m.pair_state, (n, n)))
        pair = _view(m.pair_stats, (n, n, k))
        model.rtt_min, model.rtt_median, model.rtt_max = (pair[c].copy() for c in ("min", "median", "max"))
        model.jitter, model.samples = pair["jitter"].copy(), pair["count"].copy()
        model.intra_alpha = _view(m.intra_alpha, (n,)).copy()
        model.intra_beta = _view(m.intra_beta, (n,)).copy()
        model.intra_state = _states_from_c(_view(m.intra_state, (n,)))
        intra = _view(m.intra_stats, (n, k))
        model.intra_min, model.intra_median, model.intra_max = (
            intra[c].copy() for c in ("min", "median", "max")
        )
        model.intra_jitter, model.intra_samples = intra["jitter"].copy(), intra["count"].copy()
        for name, shape in (("overhead", (n,)), ("recv_overhead", (n,)), ("inject", (n,)), ("eject", (n,)),
                            ("duplex", (n,)), ("alpha_large", (n, n)), ("beta_large", (n, n)), ("group_of", (n,))):
            setattr(model, name, _view(getattr(m, name), shape).copy())
        model.knee = int(m.knee)
        model.node_alpha = np.array(list(m.node_alpha), dtype=np.float64)
        model.node_beta = np.array(list(m.node_beta), dtype=np.float64)
        model.links = []
        for li in range(m.n_links):
            c = m.links[li]
            groups = [tuple(int(g) for g in _view(p, (count,))) if count else None
                      for p, count in ((c.from_, c.n_from), (c.to, c.n_to))]
            model.links.append(Link(c.name.decode(errors="replace"), float(c.capacity), *groups))
        model.spreads = [Spread(c.name.decode(errors="replace"), float(c.low), float(c.median), float(c.high),
                                float(c.noise), int(c.times)) for c in (m.spreads[k] for k in range(m.n_spreads))]
        model.hops = [Hop(int(c.from_), int(c.to), float(c.capacity)) for c in (m.hops[h] for h in range(m.n_hops))]
        return model

    # ----------------------------------------------------------------- I/O
    @classmethod
    def load(cls, path: str | PathLike) -> "Model":
        check_input(path)  # the C reader would block on a FIFO, and says only "read error" of a directory
        ptr = engine.ModelPtr()
        engine.check(engine.lib().rw_model_read(fspath(path).encode(), C.byref(ptr)))
        try:
            return cls._from_c(ptr)
        except RankwiseError as exc:
            raise RankwiseError(f"{path}: {exc}") from None
        finally:
            engine.lib().rw_model_free(ptr)

    def save(self, path: str | PathLike) -> None:
        """Write atomically (the engine renames a complete temporary file);
        refused, naming the file, when the model breaks a rule of the format
        (rw_model_check: the file would not read back)."""
        path = prepare_output(path)  # a link: the file it points to
        try:
            ptr = self._to_c()
        except RankwiseError as exc:
            raise RankwiseError(f"{fspath(path)}: cannot write: {exc}") from None
        try:
            engine.check(engine.lib().rw_model_write(ptr, fspath(path).encode()))
        finally:
            engine.lib().rw_model_free(ptr)

    def refit(self) -> None:
        """Recompute alpha/beta of every measured pair from the median RTTs: the protocol
        knee, then each pair's fit below it and its large-message fit at and above it."""
        ptr = self._to_c()
        try:
            n = self.n_nodes
            engine.check(engine.lib().rw_model_fit_knee(ptr))
            for i in np.flatnonzero(self.intra_state == MEASURED):
                engine.check(engine.lib().rw_model_fit_intra(ptr, int(i)))
            fitted = Model._from_c(ptr)
        finally:
            engine.lib().rw_model_free(ptr)
        for name in ("alpha", "beta", "intra_alpha", "intra_beta", "knee", "alpha_large", "beta_large"):
            setattr(self, name, getattr(fitted, name))
        assert fitted.n_nodes == n

    def groups(self) -> np.ndarray:
        """Group index per node: nodes that are close to each other (C engine)."""
        ptr = self._to_c()
        out = np.zeros(self.n_nodes, dtype=np.int32)
        try:
            count = engine.lib().rw_model_groups(ptr, out.ctypes.data_as(C.POINTER(C.c_int32)))
        finally:
            engine.lib().rw_model_free(ptr)
        if count < 0:
            engine.check(1)
        return out

    def latency_noisy(self) -> bool:
        """Whether the smallest size's round trips spread so much that latency levels and
        nodes' latency terms are noise (C engine: rw_model_latency_noisy)."""
        ptr = self._to_c()
        try:
            noisy = engine.lib().rw_model_latency_noisy(ptr)
        finally:
            engine.lib().rw_model_free(ptr)
        if noisy < 0:
            engine.check(1)
        return bool(noisy)

    def equals(self, other: "Model", rtol: float = 1e-9) -> bool:
        """Same nodes, sizes, settings and numbers (NaN equal to NaN)."""
        for f in fields(self):
            a, b = getattr(self, f.name), getattr(other, f.name)
            if isinstance(a, np.ndarray):
                if a.shape != b.shape or not np.allclose(a, b, rtol=rtol, atol=0, equal_nan=True):
                    return False
            elif f.name in ("created", "duration"):
                if not (np.isnan(a) and np.isnan(b)) and abs(a - b) > 1e-3:
                    return False
            elif a != b:
                return False
        return True


_STAT_DTYPE = np.dtype(
    {
        "names": ["min", "median", "max", "jitter", "count"],
        "formats": ["<f8", "<f8", "<f8", "<f8", "<i4"],
        "offsets": [0, 8, 16, 24, 32],
        "itemsize": C.sizeof(engine.Stat),
    }
)


def _node_name(raw: bytes, i: int) -> str:
    """A node name from C: UTF-8, or an error (a name with replaced bytes
    would go to a hostfile as a host that does not exist)."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise RankwiseError(f"the name of node {i} ({raw!r}) is not UTF-8") from None


def _view(ptr, shape) -> np.ndarray:
    """A numpy view of C memory (no copy): valid while the C model lives."""
    count = int(np.prod(shape))
    if isinstance(ptr._type_, type) and issubclass(ptr._type_, engine.Stat):
        raw = (C.c_char * (count * C.sizeof(engine.Stat))).from_address(C.addressof(ptr.contents))
        return np.frombuffer(raw, dtype=_STAT_DTYPE).reshape(shape)
    return np.ctypeslib.as_array(ptr, shape=(count,)).reshape(shape)


def _stat_columns(model: Model, which: str):
    prefix = "rtt" if which == "pair" else "intra"
    yield "min", getattr(model, f"{prefix}_min")
    yield "median", getattr(model, f"{prefix}_median")
    yield "max", getattr(model, f"{prefix}_max")
    yield "jitter", model.jitter if which == "pair" else model.intra_jitter
    yield "count", model.samples if which == "pair" else model.intra_samples


@lru_cache(maxsize=1)
def _state_tables() -> tuple[np.ndarray, np.ndarray]:
    """Python state -> engine value and back, matched by name."""
    to_c = np.array([engine.enum_value("pair_state", name) for name in STATE_NAMES], dtype=np.uint8)
    from_c = np.zeros(256, dtype=np.uint8)  # a value the engine never makes reads as unprobed
    from_c[to_c] = np.arange(len(STATE_NAMES), dtype=np.uint8)
    return to_c, from_c


def _states_to_c(states: np.ndarray) -> np.ndarray:
    states = np.asarray(states)
    if states.size and (states.min() < 0 or states.max() >= len(STATE_NAMES)):
        raise RankwiseError(f"a pair state must be one of 0..{len(STATE_NAMES) - 1} ({', '.join(STATE_NAMES)})")
    return _state_tables()[0][states.astype(np.intp)]


def _states_from_c(states: np.ndarray) -> np.ndarray:
    return _state_tables()[1][states]


def _c_text(what: str, text: str) -> bytes:
    """UTF-8 bytes for a C string; a NUL would cut it short unseen."""
    if not isinstance(text, str):
        raise RankwiseError(f"{what} must be text, got {type(text).__name__}")
    if "\0" in text:
        raise RankwiseError(f"{what} holds a control character (0x00)")
    try:
        return text.encode()
    except UnicodeEncodeError:
        raise RankwiseError(f"{what} is not valid UTF-8 text") from None


def _int_array(what: str, values, dtype) -> np.ndarray:
    """Integers that fit dtype, as a contiguous array; no silent wrap-around."""
    info = np.iinfo(dtype)
    refused = RankwiseError(f"{what} must be integers in [{info.min}, {info.max}]")
    try:
        arr = np.asarray(values)
    except (ValueError, TypeError, OverflowError):
        raise refused from None
    if arr.dtype.kind == "f":
        # Exact bounds: float(int64 max) rounds up to 2**63, beyond the type.
        if not np.all(np.isfinite(arr)) or np.any(arr != np.round(arr)):
            raise refused
        if arr.size and (arr.min() < float(info.min) or arr.max() >= -float(info.min)):
            raise refused
        return np.ascontiguousarray(arr.astype(dtype))
    elif arr.dtype.kind in "uO":  # beyond int64, or Python objects: compare exactly
        items = arr.ravel().tolist()
        if not all(isinstance(v, int) for v in items):
            raise refused
        arr = np.array(items, dtype=object).reshape(arr.shape)
    elif arr.dtype.kind not in "ib":
        raise refused
    if arr.size and (arr.min() < info.min or arr.max() > info.max):
        raise refused
    return np.ascontiguousarray(arr.astype(dtype))
