"""An emulated cluster brought up, changed, listed and removed (the plan of plan.py made real).

`up` writes the state file before it creates anything and removes what it made if any step
fails; `down` removes what the state file lists, whatever of it exists, so it is idempotent
and finishes what a crashed `up` or `down` left."""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import os
import re
from dataclasses import dataclass
from os import PathLike
from pathlib import Path

from rankwise.emulate import launchers, system
from rankwise.emulate.plan import SUBNET_BASE, End, Plan, check_name, make_plan, prefix
from rankwise.emulate.state import read_state, remove_state, write_state
from rankwise.util.errors import RankwiseError, UsageError
from rankwise.util.files import write_atomic
from rankwise.sim.platform import Degraded, PlatformSpec, generate

# Bytes HTB may send at once: at least a full-size GSO packet of a veth (64 KiB), else 1 ms
# at the rate. Smaller buckets make HTB undershoot its rate with TCP segmentation offload.
MIN_BURST = 65536
LOCK = "/run/lock/rankwise-emulate.lock" if os.path.isdir("/run/lock") else "/tmp/rankwise-emulate.lock"


def up(spec: PlatformSpec, cluster_dir: str | PathLike, name: str) -> Plan:
    """Build the cluster of `spec` named `name` and write its files into cluster_dir."""
    system.check_supported()
    out = Path(cluster_dir)
    check_name(name)
    if out.exists() and not out.is_dir():
        raise UsageError(f"-o {out}: not a directory")
    if read_state(out) is not None:
        raise RankwiseError(f"{out} already holds an emulated cluster: 'rankwise emulate down {out}' first")
    with _machine_lock():  # two `up`s at once would pick the same name or subnet
        taken = sorted(ns for ns in system.namespaces() if ns.startswith(prefix(name)))
        if taken:
            raise RankwiseError(f"cluster name '{name}' is in use on this machine "
                                f"({taken[0]}); choose another --name or remove that cluster")
        plan = make_plan(spec, name, _free_subnet())
        out.mkdir(parents=True, exist_ok=True)
        write_state(out, plan, complete=False)  # before anything exists: a crash leaves a full list
        try:
            _create(plan)
            write_files(plan, out)
        except BaseException as failure:
            _undo(out, failure)
            raise
    write_state(out, plan, complete=True)
    return plan


def _undo(out: Path, failure: BaseException) -> None:
    """Remove what a failed `up` made; if that fails too, say so with the first failure (the
    state file stays, so a later `down` can finish)."""
    try:
        down(out)
    except RankwiseError as e:
        raise RankwiseError(f"{failure}; removing what was made failed too ({e}): "
                            f"run 'rankwise emulate down {out}'") from failure


@contextlib.contextmanager
def _machine_lock():
    """One `up` at a time on this machine, between choosing the subnet and routing it."""
    with open(LOCK, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def _free_subnet() -> int:
    """The lowest K whose 10.77.K.0/24 no other emulated cluster's head uses. Clusters never
    meet (each has its own bridges), so this only keeps their addresses apart for people."""
    used = set()
    for ns in system.namespaces():
        if ns.startswith("rw-") and ns.endswith("-head"):
            for address in system.addresses(ns):
                m = re.match(rf"{re.escape(SUBNET_BASE)}\.(\d+)\.", address)
                if m:
                    used.add(int(m.group(1)))
    for k in range(1, 255):
        if k not in used:
            return k
    raise RankwiseError(f"no free {SUBNET_BASE}.K.0/24 subnet left on this machine")


def _create(plan: Plan) -> None:
    ip, fab = system.run, plan.fabric
    ip("ip", "netns", "add", fab)
    ip("ip", "link", "set", "lo", "up", ns=fab)
    for bridge in plan.bridges:
        ip("ip", "link", "add", bridge, "type", "bridge", ns=fab)
        ip("ip", "link", "set", bridge, "up", ns=fab)
    for ns in plan.host_ns:
        ip("ip", "netns", "add", ns)
        ip("ip", "link", "set", "lo", "up", ns=ns)
    for link in plan.links:
        lo, hi = link.lower, link.upper
        ip("ip", "link", "add", hi.dev, "type", "veth", "peer", "name", lo.dev, "netns", lo.ns, ns=fab)
        if link.kind == "node":
            ip("ip", "addr", "add", f"{plan.addresses[link.index]}/24", "dev", lo.dev, ns=lo.ns)
            ip("ip", "link", "set", hi.dev, "master", f"rack-{plan.rack_of_host[link.index]}", "up", ns=fab)
        else:
            ip("ip", "link", "set", lo.dev, "master", f"rack-{link.index}", "up", ns=fab)
            ip("ip", "link", "set", hi.dev, "master", "core", "up", ns=fab)
        ip("ip", "link", "set", lo.dev, "up", ns=lo.ns)
        for end in (lo, hi):
            _shape(end, link.rate_bit, "replace")
    # The head linked to the core bridge: mpirun there, its daemons in the hosts.
    head = plan.head
    ip("ip", "netns", "add", head)
    ip("ip", "link", "set", "lo", "up", ns=head)
    ip("ip", "link", "add", "login", "type", "veth", "peer", "name", plan.login.dev, "netns", head, ns=fab)
    ip("ip", "addr", "add", f"{plan.login_address}/24", "dev", plan.login.dev, ns=head)
    ip("ip", "link", "set", plan.login.dev, "up", ns=head)
    ip("ip", "link", "set", "login", "master", "core", "up", ns=fab)


def _shape(end: End, rate_bit: int, verb: str) -> None:
    """HTB at rate_bit on end's egress (qdisc 1:, one class 1:1 every packet falls into)."""
    burst = str(max(MIN_BURST, rate_bit // 8000))
    if verb == "replace":
        system.run("tc", "qdisc", "replace", "dev", end.dev, "root", "handle", "1:", "htb", "default", "1", ns=end.ns)
    system.run("tc", "class", verb, "dev", end.dev, "parent", "1:", "classid", "1:1", "htb", "rate", f"{rate_bit}bit",
               "ceil", f"{rate_bit}bit", "burst", burst, "cburst", burst, ns=end.ns)


@dataclass
class Removed:
    namespaces: list[str]
    stuck: list[str]  # namespaces whose processes would not end (they outlive their name)


def down(cluster_dir: str | PathLike) -> Removed | None:
    """Remove what DIR's state lists and then the state; None when there was no state."""
    found = read_state(cluster_dir)
    if found is None:
        return None
    system.check_supported()
    plan, _ = found
    removed = Removed([], [])
    present = system.namespaces()
    for ns in [*plan.host_ns, plan.head, plan.fabric]:  # the fabric last: it holds the far ends
        if ns in present:
            if system.end_processes(ns):
                removed.stuck.append(ns)
            system.run("ip", "netns", "delete", ns)
            removed.namespaces.append(ns)
    remove_state(cluster_dir)
    return removed


def set_rate(cluster_dir: str | PathLike, kind: str, index: int, rate_bit: int) -> Plan:
    """Change one link's rate, both ways, while jobs run (HTB's class changed in place)."""
    plan = _complete_plan(cluster_dir)
    link = plan.link(kind, index)
    system.check_supported()
    for end in (link.lower, link.upper):
        _shape(end, rate_bit, "change")
    link.rate_bit = rate_bit
    write_state(cluster_dir, plan, complete=True)
    write_files(plan, Path(cluster_dir))
    return plan


def slurm_start(cluster_dir: str | PathLike) -> Plan:
    """Slurm on the cluster (slurm.py): munged, slurmctld in the head, a slurmd per host."""
    from rankwise.emulate import slurm

    return slurm.start(cluster_dir, _complete_plan(cluster_dir))


def slurm_stop(cluster_dir: str | PathLike) -> list[str] | None:
    """End the cluster's Slurm daemons (the cluster stays); None when none were started."""
    from rankwise.emulate import slurm

    plan = _complete_plan(cluster_dir)
    if not plan.slurm:
        return None
    system.check_supported()
    return slurm.stop(cluster_dir, plan)


def _complete_plan(cluster_dir: str | PathLike) -> Plan:
    found = read_state(cluster_dir)
    if found is None:
        raise RankwiseError(f"{cluster_dir}: no emulated cluster here (no state.json)")
    plan, complete = found
    if not complete:
        raise RankwiseError(f"{cluster_dir}: the cluster was not completely brought up; "
                            f"'rankwise emulate down {cluster_dir}' removes what was made")
    return plan


@dataclass
class HostStatus:
    host: str
    namespace: str
    address: str
    rack: int
    present: bool
    processes: int


def status(cluster_dir: str | PathLike) -> tuple[Plan, bool, list[HostStatus], dict[str, int | None]]:
    """The plan, whether `up` completed, each host, and each link's rate as tc reports it
    (None: its qdisc is gone)."""
    found = read_state(cluster_dir)
    if found is None:
        raise RankwiseError(f"{cluster_dir}: no emulated cluster here (no state.json)")
    system.check_supported()
    plan, complete = found
    present = system.namespaces()
    hosts = []
    for i, (host, ns) in enumerate(zip(plan.hosts, plan.host_ns)):
        pids = system.run("ip", "netns", "pids", ns, check=False).stdout.split() if ns in present else []
        hosts.append(HostStatus(host, ns, plan.addresses[i], plan.rack_of_host[i], ns in present, len(pids)))
    rates = {link.name: (_tc_rate(link.lower) if link.lower.ns in present else None) for link in plan.links}
    return plan, complete, hosts, rates


def _tc_rate(end: End) -> int | None:
    out = system.run("tc", "class", "show", "dev", end.dev, ns=end.ns, check=False).stdout
    m = re.search(r"\brate (\d+(?:\.\d+)?)([KMG]?)bit", out)
    if not m:
        return None
    return round(float(m.group(1)) * {"": 1, "K": 1e3, "M": 1e6, "G": 1e9}[m.group(2)])


# --- the cluster's files --------------------------------------------------------------------


def current_spec(plan: Plan) -> PlatformSpec:
    """The spec with each link's present rate: a link changed by `set` as a degraded link."""
    spec = PlatformSpec.from_dict(plan.spec)
    keep = [d for d in spec.degraded if d.kind not in ("node", "uplink")]
    changed = [Degraded(link.kind, link.index, bw_factor=link.rate_bit / link.nominal_bit)
               for link in plan.links if link.rate_bit != link.nominal_bit]
    return dataclasses.replace(spec, degraded=tuple(keep + changed), congested=())


def write_files(plan: Plan, out: Path) -> None:
    """hostfile, machinefile, ground_truth.json (and the simulated twin's platform.xml), agent, launchers."""
    generate(current_spec(plan), out)
    slots = PlatformSpec.from_dict(plan.spec).cores
    write_atomic(out / "hostfile", "".join(f"{h} slots={slots}\n" for h in plan.hosts))
    agent = (out / launchers.AGENT).resolve()
    write_atomic(agent, launchers.agent_script(plan))
    os.chmod(agent, 0o755)
    write_atomic(out / launchers.OPENMPI, launchers.line(launchers.openmpi_options(plan, agent)))
    write_atomic(out / launchers.MPICH, launchers.line(launchers.mpich_options(plan, agent)))
    write_atomic(out / launchers.MACHINEFILE, "".join(f"{h}:{slots}\n" for h in plan.hosts))
    write_atomic(out / launchers.WRAPPER, launchers.mpirun_wrapper(plan, agent))
    os.chmod(out / launchers.WRAPPER, 0o755)
    write_atomic(out / launchers.HYDRA_WRAPPER, launchers.hydra_wrapper(plan, agent))
    os.chmod(out / launchers.HYDRA_WRAPPER, 0o755)
