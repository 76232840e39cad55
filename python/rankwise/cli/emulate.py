"""`rankwise emulate`: an emulated cluster of real hosts on this machine (up, set, status, down)."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Optional

import typer
from rich.markup import escape

from rankwise.cli.common import console
from rankwise.util.errors import UsageError

emulate_app = typer.Typer(no_args_is_help=True, help="An emulated cluster of real hosts on this machine "
                                                     "(network namespaces, shaped links; root).")

RATE = re.compile(r"(\d+(?:\.\d+)?)([kmg]?)(?:bit|bit/s|bps)?", re.IGNORECASE)
MIN_RATE, MAX_RATE = 8_000, 100_000_000_000  # bit/s: what HTB shapes well


def parse_rate(text: str, option: str) -> int:
    """'400M', '400Mbit', '1.5G', '800k' or bit/s as a number: decimal units of bits per second."""
    m = RATE.fullmatch(text.strip())
    if not m:
        raise UsageError(f"{option} '{text}': expected a rate in bit/s like 400M, 1G or 250Mbit")
    bits = round(float(m.group(1)) * {"": 1, "k": 1e3, "m": 1e6, "g": 1e9}[m.group(2).lower()])
    if not MIN_RATE <= bits <= MAX_RATE:
        raise UsageError(f"{option} '{text}': a rate between 8k and 100G bit/s")
    return bits


def _link(text: str) -> tuple[str, int]:
    kind, _, index = text.partition(":")
    if kind not in ("node", "uplink") or not index.isdigit() or len(index) > 6:
        raise UsageError(f"link '{text}': expected node:INDEX or uplink:RACK")
    return kind, int(index)


def _default_name(out: Path) -> str:
    """The folder's name (letters and digits, 7 at most) and 4 hex digits of its full path:
    the same folder gives the same name, two folders named alike on one machine do not."""
    path = str(out.resolve())
    name = re.sub(r"[^a-z0-9]", "", Path(path).name.lower())
    name = ("c" + name if not name[:1].isalpha() else name)[:7]
    return name + hashlib.sha1(path.encode()).hexdigest()[:4]


@emulate_app.command("up", no_args_is_help=True)
def emulate_up(
    out: Path = typer.Option(..., "--out", "-o", help="Folder for the cluster's state, hostfile, agent, launcher options and ground truth."),
    name: Optional[str] = typer.Option(None, "--name", help="Cluster name, in its namespaces rw-NAME-* (default: the folder's name and a hash of its path)."),
    racks: int = typer.Option(2, "--racks", min=1, max=64, help="Racks (bridges under the core)."),
    nodes_per_rack: int = typer.Option(4, "--nodes-per-rack", min=1, max=125, help="Hosts per rack."),
    cores: int = typer.Option(1, "--cores", min=1, max=64, help="Slots per host in the hostfile."),
    nic_rate: str = typer.Option("400M", "--nic-rate", help="Every host link's rate, each way (bit/s: 400M, 1G)."),
    uplink_rate: Optional[str] = typer.Option(None, "--uplink-rate", help="Every rack uplink's rate, each way (default: nodes per rack x NIC rate)."),
    degrade: list[str] = typer.Option([], "--degrade", help="node:I:BW_FACTOR or uplink:R:BW_FACTOR: that link at a fraction of its rate (repeatable)."),
    shuffle: bool = typer.Option(False, "--shuffle", help="Deal racks to hosts in a seeded shuffled order."),
    seed: int = typer.Option(1, "--seed", help="Seed of the shuffle."),
    slurm: bool = typer.Option(False, "--slurm", help="Also start Slurm on it: slurmctld in the head, a slurmd per host, "
                                                     "munged (as `rankwise emulate slurm up`)."),
):
    """Bring up an emulated cluster: hosts as network namespaces, racks as bridges, links shaped by tc HTB."""
    from rankwise.cli.sim_options import parse_degrade
    from rankwise.emulate import up
    from rankwise.emulate.plan import check_name
    from rankwise.sim.platform import PlatformSpec

    name = check_name(name if name is not None else _default_name(out))
    nic = parse_rate(nic_rate, "--nic-rate")
    items = [parse_degrade(d) for d in degrade]
    for d, text in zip(items, degrade):
        if d.lat_factor != 1.0:  # netem is what delays packets; rates are all HTB shapes
            raise UsageError(f"--degrade '{text}': an emulated cluster shapes rates only, it cannot add latency")
        if d.kind not in ("node", "uplink"):
            raise UsageError(f"--degrade '{text}': an emulated cluster has node and uplink links")
    oversubscription = 1.0
    if uplink_rate is not None:
        oversubscription = nic * nodes_per_rack / parse_rate(uplink_rate, "--uplink-rate")
    spec = PlatformSpec(racks=racks, nodes_per_rack=nodes_per_rack, cores=cores, node_bw=nic / 8,
                        oversubscription=oversubscription, degraded=tuple(items), shuffle_racks=shuffle, seed=seed)
    if slurm:
        from rankwise.emulate.slurm import check_slurm
        check_slurm()  # before anything is made
    plan = up(spec, out, name)
    where = escape(str(out))
    if slurm:
        from rankwise.emulate import down, slurm_start
        try:
            slurm_start(out)
        except BaseException:
            down(out)  # --slurm: the cluster and its Slurm, or nothing
            raise
    console.print(f"emulated cluster [bold]{name}[/bold]: {len(plan.hosts)} hosts in {racks} racks on "
                  f"{plan.subnet}, files in [bold]{where}[/bold]", highlight=False, soft_wrap=True)
    console.print(f"  run:    {where}/mpirun --hostfile {where}/hostfile -np {len(plan.hosts)} APP",
                  highlight=False, soft_wrap=True)
    if slurm:
        _slurm_lines(out)
    console.print(f"  remove: rankwise emulate down {where}", highlight=False, soft_wrap=True)


def _slurm_lines(out: Path) -> None:
    where = escape(str(out))
    console.print(f"  Slurm:  {where}/srun -N 4 APP (MPI ranks through PMIx), {where}/sbatch, {where}/scontrol, "
                  f"{where}/sinfo; slurm.conf and topology.conf in {where}/slurm", highlight=False, soft_wrap=True)


slurm_app = typer.Typer(no_args_is_help=True, help="Slurm on an emulated cluster: slurmctld in its head, a slurmd "
                                                   "per host (their namespaces), munged; all files in DIR/slurm.")
emulate_app.add_typer(slurm_app, name="slurm")


@slurm_app.command("up", no_args_is_help=True)
def slurm_up(cluster: Path = typer.Argument(..., metavar="DIR", help="The cluster's folder (up -o).")):
    """Start Slurm on the cluster and wait until every host is an idle node."""
    from rankwise.emulate import slurm_start

    plan = slurm_start(cluster)
    console.print(f"Slurm on emulated cluster [bold]{plan.name}[/bold]: slurmctld in {plan.head}, "
                  f"{len(plan.hosts)} slurmd, all nodes idle", highlight=False, soft_wrap=True)
    _slurm_lines(cluster)


@slurm_app.command("down", no_args_is_help=True)
def slurm_down(cluster: Path = typer.Argument(..., metavar="DIR", help="The cluster's folder (up -o).")):
    """End the cluster's Slurm daemons; the cluster stays (`rankwise emulate down` ends both)."""
    from rankwise.emulate import slurm_stop

    stuck = slurm_stop(cluster)
    if stuck is None:
        console.print(f"no Slurm on {escape(str(cluster))}: nothing to stop", highlight=False, soft_wrap=True)
        return
    console.print("Slurm's daemons ended", highlight=False, soft_wrap=True)
    if stuck:
        console.print(f"[yellow]warning:[/yellow] {', '.join(stuck)} would not end", highlight=False, soft_wrap=True)


@emulate_app.command("set", no_args_is_help=True)
def emulate_set(
    cluster: Path = typer.Argument(..., metavar="DIR", help="The cluster's folder (up -o)."),
    link: str = typer.Argument(..., metavar="LINK", help="node:INDEX or uplink:RACK."),
    rate: str = typer.Argument(..., metavar="RATE", help="The link's new rate each way (bit/s: 100M, 1G)."),
):
    """Change one link's rate, both ways, while jobs run (the ground truth follows)."""
    from rankwise.emulate import set_rate

    kind, index = _link(link)
    bits = parse_rate(rate, "RATE")
    set_rate(cluster, kind, index, bits)
    console.print(f"{kind} {index} now shaped at {bits / 1e6:g} Mbit/s each way", highlight=False, soft_wrap=True)


@emulate_app.command("status", no_args_is_help=True)
def emulate_status(cluster: Path = typer.Argument(..., metavar="DIR", help="The cluster's folder (up -o).")):
    """The cluster's hosts, their namespaces and processes, and each link's rate as tc has it."""
    from rankwise.emulate import status

    plan, complete, hosts, rates = status(cluster)
    up_hosts = sum(h.present for h in hosts)
    state = "up" if complete and up_hosts == len(hosts) else "incomplete (rankwise emulate down removes it)"
    console.print(f"emulated cluster [bold]{plan.name}[/bold] on {plan.subnet}: {state}, "
                  f"{up_hosts}/{len(hosts)} hosts", highlight=False, soft_wrap=True)
    shaped = {link.name: link for link in plan.links}
    for h in hosts:
        console.print(f"  {h.host:<9} rack {h.rack}  {h.address:<13} {h.namespace}  NIC "
                      f"{_rate_text(shaped[h.host].rate_bit, rates[h.host])}{'' if h.present else '  (missing)'}  "
                      f"{h.processes} processes", highlight=False, soft_wrap=True)
    if plan.slurm:
        from rankwise.emulate.slurm import running
        daemons = running(plan)
        alive = sum(pid is not None for _, _, pid in daemons)
        console.print(f"  Slurm: {alive}/{len(daemons)} daemons running (munged, slurmctld, slurmd per host); "
                      f"slurm.conf in {escape(plan.slurm['folder'])}", highlight=False, soft_wrap=True)
    for link in plan.links:
        if link.kind == "uplink":
            console.print(f"  uplink of rack {link.index}: {_rate_text(link.rate_bit, rates[link.name])}",
                          highlight=False, soft_wrap=True)


def _rate_text(planned: int, measured: int | None) -> str:
    """tc's rate, and the state's when they differ beyond tc's rounding (someone changed it)."""
    if measured is None:
        return "gone"
    text = f"{measured / 1e6:g} Mbit/s"
    return text if abs(measured - planned) <= 0.005 * planned else f"{text} (state: {planned / 1e6:g} Mbit/s)"


@emulate_app.command("down", no_args_is_help=True)
def emulate_down(cluster: Path = typer.Argument(..., metavar="DIR", help="The cluster's folder (up -o).")):
    """Remove everything `up` made for this cluster (and only that); also after a crash."""
    from rankwise.emulate import down

    removed = down(cluster)
    if removed is None:
        console.print(f"no emulated cluster in {escape(str(cluster))}: nothing to remove", highlight=False, soft_wrap=True)
        return
    console.print(f"removed {len(removed.namespaces)} namespaces",
                  highlight=False, soft_wrap=True)
    if removed.stuck:
        console.print(f"[yellow]warning:[/yellow] processes in {', '.join(removed.stuck)} would not end: "
                      "those namespaces live on until they do", highlight=False, soft_wrap=True)
