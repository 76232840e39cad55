"""What an emulated cluster is made of, from the same PlatformSpec as `rankwise sim platform`.

A fat tree of network namespaces: one namespace per host (its `eth0`), and one "fabric"
namespace holding a bridge per rack and a core bridge. Host i's link is a veth pair from its
`eth0` to port `node-i` of its rack's bridge; rack r's uplink is a veth pair from port `up-r`
of the rack bridge to port `up-r-core` of the core bridge. Every veth end is shaped by HTB on
its egress, so the two ends shape the two directions. One more namespace, the "head", is joined
to the core bridge by an unshaped veth: the launchers run there (DIR/mpirun enters it) and the
hosts' daemons call back to it, so that every address of the cluster lives in a namespace the
cluster made and the machine's own namespace is left as it was.

The plan is pure data (no system call): cluster.py creates it, the state file records it,
and `down` removes what it lists."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field

from rankwise.util.errors import UsageError
from rankwise.sim.platform import PlatformSpec, build_links

NAME = re.compile(r"[a-z][a-z0-9]{0,11}")
SUBNET_BASE = "10.77"  # private; the cluster's /24 is 10.77.K.0/24, K free on this machine
MAX_HOSTS = 250  # .1 .. .250 are hosts, .254 the head's


@dataclass(frozen=True)
class End:
    """One end of a veth pair: its namespace and device name."""

    ns: str | None
    dev: str


@dataclass
class Shaped:
    """A link of the tree, shaped to rate_bit (bit/s) each way: node-i or up-r as in the
    simulated platform's link table (kind, index)."""

    name: str
    kind: str
    index: int
    lower: End  # the host's eth0, or the rack bridge's up-r: its egress goes up the tree
    upper: End  # the rack bridge's node-i, or the core's up-r-core: its egress goes down
    rate_bit: int
    nominal_bit: int


@dataclass
class Plan:
    name: str
    subnet: str  # 10.77.K.0/24
    fabric: str  # namespace of the bridges
    head: str  # namespace the launchers run in
    hosts: list[str]  # host names (the hostfile's, MPI_Get_processor_name's)
    host_ns: list[str]  # namespace of each host
    addresses: list[str]  # IPv4 of each host's eth0
    rack_of_host: list[int]
    bridges: list[str]  # in the fabric namespace
    links: list[Shaped]
    login: End  # the head's end of its unshaped link to the core bridge
    login_address: str
    spec: dict = field(default_factory=dict)
    slurm: dict = field(default_factory=dict)  # Slurm's daemons when started (slurm.py), else empty

    @property
    def namespaces(self) -> list[str]:
        return [self.fabric, self.head, *self.host_ns]

    def link(self, kind: str, index: int) -> Shaped:
        for link in self.links:
            if (link.kind, link.index) == (kind, index):
                return link
        count = len(self.hosts) if kind == "node" else len(self.bridges) - 1
        raise UsageError(f"no {kind} link {index} in cluster {self.name} ({kind} 0..{count - 1})")

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> Plan:
        d = dict(d)
        d["links"] = [Shaped(**{**x, "lower": End(**x["lower"]), "upper": End(**x["upper"])}) for x in d["links"]]
        d["login"] = End(**d["login"])
        return cls(**d)


def prefix(name: str) -> str:
    """Every namespace of cluster `name` starts with this: `down` and `up` look for nothing else."""
    return f"rw-{name}-"


def check_name(name: str) -> str:
    if not NAME.fullmatch(name):
        raise UsageError(f"--name '{name}': 1 to 12 lower-case letters and digits, starting with a letter")
    return name


def make_plan(spec: PlatformSpec, name: str, subnet_index: int) -> Plan:
    """The cluster of `spec` (a fat tree) named `name` on 10.77.<subnet_index>.0/24."""
    if spec.shape is not None:
        raise UsageError(f"an emulated cluster is a fat tree of racks; --topology {spec.topology} is not emulated")
    n = spec.n_nodes
    if n > MAX_HOSTS:
        raise UsageError(f"{n} hosts: an emulated cluster holds at most {MAX_HOSTS}")
    net = f"{SUBNET_BASE}.{subnet_index}"
    fabric = prefix(name) + "fabric"
    hosts = [f"node-{i}" for i in range(n)]
    host_ns = [prefix(name) + h for h in hosts]
    rack = [int(r) for r in spec.rack_of_node]
    links = []
    for link in build_links(spec):
        bit, nominal = _bits(link.bandwidth), _bits(link.nominal_bandwidth)
        if link.kind == "node":
            i = link.index
            lower, upper = End(host_ns[i], "eth0"), End(fabric, link.name)
        else:
            lower, upper = End(fabric, link.name), End(fabric, f"{link.name}-core")
        links.append(Shaped(link.name, link.kind, link.index, lower, upper, bit, nominal))
    return Plan(
        name=name, subnet=f"{net}.0/24", fabric=fabric, head=prefix(name) + "head", hosts=hosts, host_ns=host_ns,
        addresses=[f"{net}.{i + 1}" for i in range(n)], rack_of_host=rack,
        bridges=[f"rack-{r}" for r in range(spec.racks)] + ["core"], links=links,
        login=End(prefix(name) + "head", "eth0"), login_address=f"{net}.254", spec=spec.to_dict(),
    )


def _bits(bytes_per_s: float) -> int:
    return max(1, round(bytes_per_s * 8))
