"""A simulated cluster whose nodes have memory domains: each node of the fat tree is a group of
SimGrid hosts, one per NUMA domain (the cores of a domain are that host's cores, so the ranks on
one host share a domain), joined by links inside the node.

Inside node i (routers and links named after it):

    host node-<i>-d<k>  --link node-<i>-d<k>--  router node-<i>-p<p>   (domain k in package p)
    router node-<i>-p<p> --link node-<i>-p<p>--  router node-<i>        (the inter-package link)
    router node-<i>     --link node-<i>--        router leaf-<r>        (the NIC, as in the fat tree)

so two ranks of one domain talk through SimGrid's loopback (the domain level), two domains of one
package cross both their domain links (package level), two packages also both package links
(node level), and the network also the NIC and, between racks, the uplinks. The network itself
(NICs, leaves, uplinks, faults, jitter) is the plain fat tree's link table (platform.build_links).
The node's shape comes from hwloc (a synthetic description such as 'pack:2 numa:2 core:4', read
by rankwise.model.node), so that `rankwise map --node-synthetic` describes the very node simulated.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from os import PathLike
from pathlib import Path
from typing import Any

import numpy as np

from rankwise.util.errors import RankwiseError, UsageError, file_error
from rankwise.util.files import write_atomic
from rankwise.cluster.hostfile import write_hostfile
from rankwise.sim.platform import (FAT_TREE, Link, PlatformSpec, _config, _link_lines, _num, build_links,
                                   read_ground_truth)

__all__ = ["DomainSpec", "DomainPlatform", "generate_domains", "load_domains", "LEVELS",
           "hosts_of_cores", "block_cores", "probe_network", "probe_domains", "domains_of_platform", "alike_nodes"]

DOMAINS_FORMAT = "rankwise-domains/1"
LEVELS = ("cache", "domain", "package", "node", "network")  # rankwise.model.node.LEVELS, then the network


@dataclass(frozen=True)
class DomainSpec:
    """A fat tree (`network`) whose nodes are built as the hwloc synthetic node `node`.

    Figures per direction of each link (SPLITDUPLEX: a link's flows share it): a domain's link
    stands for its memory controller's share of the traffic leaving it, a package's link for its
    half of the inter-socket link; the NIC is the fat tree's node link."""

    network: PlatformSpec = field(default_factory=PlatformSpec)
    node: str = "pack:2 numa:2 core:4 pu:1"
    # Lone pairs then see, closest first: 0.2 us / 50 GB/s in a domain (the fat tree's loopback),
    # 0.3 us / 25 GB/s between domains of a package, 0.7 us / 20 GB/s between packages, 2.7 us /
    # 12.5 GB/s over the network in a rack: each level slower than the one before, shared memory
    # about twice the network (Getmansky et al. 2015, eq. 5).
    domain_bw: float = 25e9  # B/s
    domain_lat: float = 0.15e-6  # s
    package_bw: float = 20e9
    package_lat: float = 0.2e-6

    def __post_init__(self) -> None:
        if isinstance(self.network, dict):
            object.__setattr__(self, "network", PlatformSpec.from_dict(self.network))
        if self.network.topology != FAT_TREE:
            raise UsageError(f"invalid platform spec: nodes with domains hang off a fat tree, not {self.network.topology}")
        for name in ("domain_bw", "package_bw"):
            v = getattr(self, name)
            if not (isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0):
                raise UsageError(f"invalid platform spec: {name} must be a positive number")
        for name in ("domain_lat", "package_lat"):
            v = getattr(self, name)
            if not (isinstance(v, (int, float)) and not isinstance(v, bool) and v >= 0):
                raise UsageError(f"invalid platform spec: {name} must not be negative")
        if not isinstance(self.node, str) or not self.node.strip():
            raise UsageError("invalid platform spec: node must be an hwloc synthetic description")

    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["network"] = self.network.to_dict()
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> DomainSpec:
        unknown = sorted(set(d) - {f.name for f in dataclasses.fields(cls)})
        if unknown:
            raise RankwiseError(f"unknown domain spec field(s): {', '.join(unknown)}")
        return cls(**d)


@dataclass
class DomainPlatform:
    """Files of a generated domain-aware platform and its ground truth by host (= domain)."""

    out_dir: Path
    platform_xml: Path
    hostfile: Path  # one line per domain host
    ground_truth: Path
    spec: DomainSpec
    nodes: list[str]  # node-<i>: the names rankwise maps onto (the node routers)
    hosts: list[str] = field(repr=False)  # node-<i>-d<k>, node-major
    node_of_host: np.ndarray = field(repr=False)
    domain_of_host: np.ndarray = field(repr=False)  # the domain's index in its node (hwloc logical)
    package_of_domain: np.ndarray = field(repr=False)
    cores_of_domain: np.ndarray = field(repr=False)  # cores of each domain (hwloc logical), -1 padded
    domain_of_core: np.ndarray = field(repr=False)
    level: np.ndarray = field(repr=False)  # host x host index into LEVELS
    alpha: np.ndarray = field(repr=False)  # s, one-way route latency; diagonal = loopback
    bandwidth: np.ndarray = field(repr=False)  # B/s, the route's narrowest link

    @property
    def n_domains(self) -> int:
        return int(self.package_of_domain.size)

    @property
    def cores_per_node(self) -> int:
        return int(self.domain_of_core.size)

    def host(self, node: int, domain: int) -> str:
        return self.hosts[node * self.n_domains + domain]

    def level_figures(self) -> dict[str, tuple[float, float]]:
        """(alpha s, bandwidth B/s) of a lone message at each level inside a node (node 0's)."""
        out = {}
        for lv in ("domain", "package", "node"):
            a, b = np.nonzero((self.level == LEVELS.index(lv)) & (self.node_of_host[:, None] == 0)
                              & (self.node_of_host[None, :] == 0))
            if a.size:
                out[lv] = (float(self.alpha[a[0], b[0]]), float(self.bandwidth[a[0], b[0]]))
        return out


def _node_shape(desc: str):
    """(package of each domain, domain of each core) of the synthetic node, from hwloc."""
    from rankwise.model.node import NodeTopology

    topo = NodeTopology.load(synthetic=desc)
    n = topo.n_domains
    package_of_domain = np.full(n, -1)
    for core in range(topo.n_cores):
        d, p = int(topo.domain_of[core]), int(topo.package_of[core])
        if package_of_domain[d] not in (-1, p):
            raise UsageError(f"node '{desc}': domain {d} spans two packages; a simulated node needs each "
                             "domain inside one package")
        package_of_domain[d] = p
    if np.any(package_of_domain < 0):
        raise UsageError(f"node '{desc}': a NUMA domain without cores cannot be a simulated host")
    return package_of_domain, topo.domain_of.astype(np.int64), topo.n_packages


def _route_links(n_dom: int, package_of_domain, rack_of_node):
    """Per host pair, the names of the links crossed (for the ground truth and the tests)."""
    def up(i: int, k: int) -> list[str]:
        return [f"node-{i}-d{k}", f"node-{i}-p{package_of_domain[k]}"]

    def route(a: int, b: int) -> list[str]:
        ia, ka, ib, kb = a // n_dom, a % n_dom, b // n_dom, b % n_dom
        if a == b:
            return []
        if ia == ib:
            if package_of_domain[ka] == package_of_domain[kb]:
                return [f"node-{ia}-d{ka}", f"node-{ib}-d{kb}"]
            return up(ia, ka) + up(ib, kb)[::-1]
        net = [f"node-{ia}"]
        if rack_of_node[ia] != rack_of_node[ib]:
            net += [f"up-{rack_of_node[ia]}", f"up-{rack_of_node[ib]}"]
        return up(ia, ka) + net + [f"node-{ib}"] + up(ib, kb)[::-1]

    return route


def _node_links(spec: DomainSpec, n_nodes: int, n_dom: int, n_pack: int) -> list[Link]:
    out = []
    for i in range(n_nodes):
        for k in range(n_dom):
            out.append(Link(f"node-{i}-d{k}", "domain", i * n_dom + k, spec.domain_bw, spec.domain_lat,
                            spec.domain_bw, spec.domain_lat, spec.domain_bw))
        for p in range(n_pack):
            out.append(Link(f"node-{i}-p{p}", "package", i * n_pack + p, spec.package_bw, spec.package_lat,
                            spec.package_bw, spec.package_lat, spec.package_bw))
    return out


def _xml(spec: DomainSpec, net_links: list[Link], node_links: list[Link], package_of_domain, domain_of_core) -> str:
    net = spec.network
    n, n_dom = net.n_nodes, package_of_domain.size
    n_pack = int(package_of_domain.max()) + 1
    cores = np.bincount(domain_of_core, minlength=n_dom)
    rack = net.rack_of_node
    out = [
        "<?xml version='1.0'?>",
        '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">',
        '<platform version="4.1">',
        f"  <!-- rankwise fat tree: {net.racks} racks x {net.nodes_per_rack} nodes, seed {net.seed}; every node",
        f"       '{spec.node}': one host per NUMA domain (node-<i>-d<k>), package routers node-<i>-p<p>,",
        "       the node's router node-<i> holding its NIC (link node-<i>) -->",
        '  <config id="rankwise">',
    ]
    out += [f'    <prop id="{key}" value="{value}"/>' for key, value in _config(net)]
    out += ["  </config>", '  <zone id="rankwise" routing="DijkstraCache">']
    speed = _num(net.host_speed)
    for i in range(n):
        out += [f'    <host id="node-{i}-d{k}" speed="{speed}f" core="{cores[k]}"/>' for k in range(n_dom)]
        out += [f'    <router id="node-{i}-p{p}"/>' for p in range(n_pack)]
        out.append(f'    <router id="node-{i}"/>')
    out += [f'    <router id="leaf-{r}"/>' for r in range(net.racks)]
    out.append('    <router id="spine"/>')
    out += _link_lines(net_links) + _link_lines(node_links)
    for i in range(n):
        for k in range(n_dom):
            out.append(f'    <route src="node-{i}-d{k}" dst="node-{i}-p{package_of_domain[k]}">'
                       f'<link_ctn id="node-{i}-d{k}" direction="UP"/></route>')
        for p in range(n_pack):
            out.append(f'    <route src="node-{i}-p{p}" dst="node-{i}"><link_ctn id="node-{i}-p{p}" direction="UP"/></route>')
        out.append(f'    <route src="node-{i}" dst="leaf-{rack[i]}"><link_ctn id="node-{i}" direction="UP"/></route>')
    for r in range(net.racks):
        out.append(f'    <route src="leaf-{r}" dst="spine"><link_ctn id="up-{r}" direction="UP"/></route>')
    out += ["  </zone>", "</platform>", ""]
    return "\n".join(out)


def generate_domains(spec: DomainSpec, out_dir: str | PathLike) -> DomainPlatform:
    """Write platform.xml, hostfile (one line per domain host) and ground_truth.json into out_dir."""
    net = spec.network
    if net.varying or net.unreachable:
        raise UsageError("a platform with domains takes --degrade and --oversubscription faults only: no --vary, "
                         "--unreachable, nor --default (whose node-30 varies)")
    package_of_domain, domain_of_core, n_pack = _node_shape(spec.node)
    n, n_dom = net.n_nodes, package_of_domain.size
    net_links = build_links(net)
    node_links = _node_links(spec, n, n_dom, n_pack)
    by_name = {link.name: link for link in net_links + node_links}
    rack = net.rack_of_node
    route = _route_links(n_dom, package_of_domain, rack)

    hosts = [f"node-{i}-d{k}" for i in range(n) for k in range(n_dom)]
    h = len(hosts)
    node_of_host, domain_of_host = np.arange(h) // n_dom, np.arange(h) % n_dom
    level = np.empty((h, h), dtype=np.int64)
    alpha, bandwidth = np.empty((h, h)), np.empty((h, h))
    for a in range(h):
        for b in range(h):
            links = [by_name[name] for name in route(a, b)]
            if not links:
                level[a, b], alpha[a, b], bandwidth[a, b] = 1, net.loopback_lat, net.loopback_bw
                continue
            alpha[a, b] = sum(link.latency for link in links)
            bandwidth[a, b] = min(link.bandwidth for link in links)
            same_node = node_of_host[a] == node_of_host[b]
            same_pack = package_of_domain[domain_of_host[a]] == package_of_domain[domain_of_host[b]]
            level[a, b] = (2 if same_pack else 3) if same_node else 4

    out = Path(out_dir)
    cores = np.bincount(domain_of_core, minlength=n_dom)
    write_atomic(out / "platform.xml", _xml(spec, net_links, node_links, package_of_domain, domain_of_core))
    write_hostfile(out / "hostfile", hosts)
    # The allocation rankwise maps onto: the nodes, every core a slot (rankwise map --hostfile).
    write_atomic(out / "nodes.hostfile", "".join(f"{name} slots={len(domain_of_core)}\n"
                                                 for name in (f"node-{i}" for i in range(n))))
    width = int(cores.max())
    cores_of_domain = np.full((n_dom, width), -1)
    for d in range(n_dom):
        members = np.flatnonzero(domain_of_core == d)
        cores_of_domain[d, :members.size] = members
    dp = DomainPlatform(out, out / "platform.xml", out / "hostfile", out / "ground_truth.json", spec,
                        [f"node-{i}" for i in range(n)], hosts, node_of_host, domain_of_host, package_of_domain,
                        cores_of_domain, domain_of_core, level, alpha, bandwidth)
    write_atomic(dp.ground_truth, _ground_truth_json(dp, rack))  # last: the folder is complete
    return dp


def _ground_truth_json(dp: DomainPlatform, rack) -> str:
    head = {
        "format": DOMAINS_FORMAT,
        "units": {"alpha": "s", "bandwidth": "B/s"},
        "levels": list(LEVELS),
        "nodes": dp.nodes,
        "hosts": dp.hosts,
        "node_of_host": dp.node_of_host.tolist(),
        "domain_of_host": dp.domain_of_host.tolist(),
        "package_of_domain": dp.package_of_domain.tolist(),
        "domain_of_core": dp.domain_of_core.tolist(),
        "rack_of_node": np.asarray(rack).tolist(),
        "level_figures": dp.level_figures(),
    }
    parts = [f"{json.dumps(k)}: {json.dumps(v)}" for k, v in head.items()]
    for key in ("level", "alpha", "bandwidth"):
        rows = ",\n".join(json.dumps(row) for row in getattr(dp, key).tolist())
        parts.append(f"{json.dumps(key)}: [\n{rows}\n]")
    parts.append('"spec": ' + json.dumps(dp.spec.to_dict()))
    return "{\n" + ",\n".join(parts) + "\n}\n"


def load_domains(out_dir: str | PathLike) -> DomainPlatform:
    """Read back what generate_domains() wrote."""
    out = Path(out_dir)
    path, gt = read_ground_truth(out, DOMAINS_FORMAT, " (a platform with domains)")
    try:
        spec = DomainSpec.from_dict(gt["spec"])
        dom = np.array(gt["domain_of_core"], dtype=np.int64)
        pod = np.array(gt["package_of_domain"], dtype=np.int64)
        width = int(np.bincount(dom).max())
        cod = np.full((pod.size, width), -1)
        for d in range(pod.size):
            members = np.flatnonzero(dom == d)
            cod[d, :members.size] = members
        return DomainPlatform(out, out / "platform.xml", out / "hostfile", path, spec, list(gt["nodes"]),
                              list(gt["hosts"]), np.array(gt["node_of_host"]), np.array(gt["domain_of_host"]),
                              pod, cod, dom, np.array(gt["level"]), np.array(gt["alpha"], float),
                              np.array(gt["bandwidth"], float))
    except KeyError as e:
        raise file_error(path, None, f"malformed ground truth: no {e.args[0]!r} entry") from None
    except (RankwiseError, TypeError, ValueError) as e:
        raise file_error(path, None, f"malformed ground truth: {e}") from None


def hosts_of_cores(dp: DomainPlatform, node_names, node_of, cores) -> list[str]:
    """The simulated host of every rank placed on (node, core): the host of the core's domain.
    node_names[node_of[r]] is a node of the platform (node-<i>), cores[r] a core's logical index."""
    index = {name: i for i, name in enumerate(dp.nodes)}
    out = []
    for r, (v, c) in enumerate(zip(np.asarray(node_of).tolist(), np.asarray(cores).tolist())):
        name = node_names[v]
        if name not in index:
            raise RankwiseError(f"rank {r} is placed on '{name}', which is no node of the platform {dp.platform_xml}")
        if not 0 <= c < dp.cores_per_node:
            raise RankwiseError(f"rank {r} is placed on core {c}; the node has cores 0..{dp.cores_per_node - 1}")
        out.append(dp.host(index[name], int(dp.domain_of_core[c])))
    return out


def block_cores(n_ranks: int, cores_per_node: int) -> tuple[np.ndarray, np.ndarray]:
    """(node, core) of every rank under block placement over cores: ranks in order fill the cores
    of the first node in their logical order, then the next node (what a launcher binding to
    cores in order does)."""
    r = np.arange(n_ranks)
    return r // cores_per_node, r % cores_per_node


def domains_of_platform(platform: str | PathLike) -> DomainPlatform | None:
    """The domain-aware platform whose platform.xml this is (its folder holds a rankwise-domains
    ground truth), else None: a plain platform, or one written by hand."""
    gt = Path(platform).parent / "ground_truth.json"
    try:
        with open(gt) as f:
            head = f.read(200)
    except OSError:
        return None
    if f'"format": "{DOMAINS_FORMAT}"' not in head:
        return None
    return load_domains(Path(platform).parent)


def alike_nodes(dp: DomainPlatform) -> list[list[int]]:
    """The nodes in groups built alike (one intra-node probe stands for each group). A generated
    platform builds every node from one description (DomainSpec.node and its links; faults touch
    the network only): one group."""
    return [list(range(len(dp.nodes)))]


def probe_network(dp: DomainPlatform, output: str | PathLike, options, *, ranks_per_node: int = 2,
                  nodes: int | None = None, show_progress: bool = False, on_stress_cost=None):
    """The network model of a domain-aware platform, by node: the SMPI probe with `ranks_per_node`
    ranks on the first domain host of each of the first `nodes` nodes (the probe tells nodes
    apart by host name, so its intra-node figure is the domain level's), the model's nodes then
    named after the nodes (node-<i>, what `rankwise map` places on; nodes.hostfile offers their
    cores as slots). The
    route from a domain host crosses the node's domain and package links before its NIC: the
    model's figures are those a rank sees."""
    import tempfile

    from rankwise.model.model import Model
    from rankwise.measure.probe import probe_sim

    count = len(dp.nodes) if nodes is None else nodes
    if not 2 <= count <= len(dp.nodes):
        raise UsageError(f"--nodes {count}: the platform has {len(dp.nodes)} nodes (need 2 or more)")
    out = Path(output)
    with tempfile.TemporaryDirectory(prefix="rankwise-domains-") as tmp:
        hf = Path(tmp) / "hostfile"
        write_hostfile(hf, [dp.host(i, 0) for i in range(count) for _ in range(ranks_per_node)])
        probe_sim(dp.platform_xml, out, options, hostfile=hf, show_progress=show_progress,
                  on_stress_cost=on_stress_cost)
    model = Model.load(out)
    first = {dp.host(i, 0): name for i, name in enumerate(dp.nodes)}
    model.names = [first[h] for h in model.names]
    model.save(out)
    return Model.load(out)


def probe_domains(dp: DomainPlatform, output: str | PathLike, options, *, ranks_per_node: int = 2,
                  nodes: int | None = None, show_progress: bool = False, on_stress_cost=None,
                  node_sizes: tuple[int, ...] = (8, 1024, 65536), node_rounds: int = 20):
    """`rankwise probe --sim` on a domain-aware platform: the network by node (probe_network),
    then the intra-node probe on the first node of each group built alike (alike_nodes), its
    figures by level in the model's node-cost lines (unless options.intra is off).
    Returns (model, [SimNodeProbe of each group])."""
    from rankwise.model.node import NodeTopology
    from rankwise.measure.node_probe import fit_level_costs, run_sim

    model = probe_network(dp, output, options, ranks_per_node=ranks_per_node, nodes=nodes,
                          show_progress=show_progress, on_stress_cost=on_stress_cost)
    if not options.intra:
        return model, []
    used = set(range(len(dp.nodes) if nodes is None else nodes))
    probes = [run_sim(dp, dp.nodes[min(used & set(group))], list(node_sizes), node_rounds)
              for group in alike_nodes(dp) if used & set(group)]
    topology = NodeTopology.load(synthetic=dp.spec.node)
    model.node_alpha, model.node_beta = fit_level_costs(topology, probes[0].cpus, probes[0].samples)
    model.save(output)
    return model, probes
