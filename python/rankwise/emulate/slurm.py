"""Slurm on an emulated cluster: a real slurmctld in the head namespace, one slurmd per host in
that host's network namespace (and a UTS namespace naming it), one munged, all from files in
DIR/slurm (docs/concepts/emulation.md, "Slurm").

Every daemon runs inside a namespace of the cluster, so `down` ends them with the rest (it ends
every process left in the cluster's namespaces); `emulate slurm down` (stop) ends only them.
What was started is recorded in the plan (state.json's "plan"."slurm") before anything starts.

Why each setting (Debian's slurm-wlm 22.05 on one machine):
- munged with its own key and socket in DIR/slurm/munge (AuthInfo=socket=...), started with
  --force: munged refuses a socket whose path is not searchable by all (pytest's and many
  users' temporary folders are 0700); only root uses it here.
- slurmd always initialises a cgroup plugin, and `ip netns exec` gives each host a fresh /sys
  without /sys/fs/cgroup mounted: each slurmd mounts an empty tmpfs there, in its own mount
  namespace (nothing outside sees it), and runs cgroup/v1 with proctrack/linuxproc and task/none:
  no cgroup is created anywhere.
- TmpFS=DIR/slurm/tmp/%n: the PMIx plugin makes its per-step folders under TmpFS; with one /tmp
  shared by all slurmds the second host's step finds the first's folder and fails.
- MpiDefault=pmix: Debian's Open MPI 4.1 is built with PMIx (ext3x) and Slurm's mpi/pmix_v4
  launches its ranks directly, so `srun` needs no mpirun.
- SlurmdParameters=config_overrides: each host declares the plan's cores, not the machine's."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import signal
import subprocess
import tempfile
import time
from os import PathLike
from pathlib import Path

from rankwise.emulate import system
from rankwise.emulate.plan import Plan
from rankwise.emulate.state import write_state
from rankwise.util.errors import RankwiseError, UsageError
from rankwise.util.files import write_atomic
from rankwise.cluster.hostlist import compress
from rankwise.sim.platform import PlatformSpec

INSTALL = "apt-get install slurmctld slurmd slurm-client munge"
DAEMONS = ("munged", "slurmctld", "slurmd")
COMMANDS = ("srun", "sbatch", "salloc", "scontrol", "sinfo", "squeue", "scancel")
CONTROLLER = "head"  # the head namespace's host name, slurmctld's
READY_TIMEOUT = 90.0  # s for every slurmd to register (slow under CPU load)


def check_slurm() -> None:
    """Slurm's daemons, clients and munge installed, or one line (exit 2)."""
    for tool in (*DAEMONS, *COMMANDS):
        if shutil.which(tool) is None:
            raise system.Unsupported(f"Slurm on an emulated cluster needs '{tool}' (Debian: {INSTALL})")


def folder(cluster_dir: str | PathLike) -> Path:
    return Path(cluster_dir).resolve() / "slurm"


def slurm_conf(plan: Plan, base: Path) -> str:
    """slurm.conf of the cluster: the head as controller, every host a node at its address."""
    cores = PlatformSpec.from_dict(plan.spec).cores
    nodes = [f"NodeName={h} NodeAddr={a} CPUs={cores} State=UNKNOWN" for h, a in zip(plan.hosts, plan.addresses)]
    return "\n".join([
        f"# slurm.conf of the emulated cluster {plan.name} (rankwise emulate slurm); docs/concepts/emulation.md",
        f"ClusterName={plan.name}",
        f"SlurmctldHost={CONTROLLER}({plan.login_address})",
        "SlurmUser=root", "SlurmdUser=root",
        "AuthType=auth/munge", f"AuthInfo=socket={base}/munge/munge.socket", "CredType=cred/munge",
        "SlurmctldPort=6817", "SlurmdPort=6818",
        f"StateSaveLocation={base}/ctld",
        f"SlurmdSpoolDir={base}/spool/%n",
        f"TmpFS={base}/tmp/%n",
        f"SlurmctldPidFile={base}/slurmctld.pid",
        f"SlurmdPidFile={base}/spool/%n/slurmd.pid",
        f"SlurmctldLogFile={base}/log/slurmctld.log",
        f"SlurmdLogFile={base}/log/slurmd-%n.log",
        "ProctrackType=proctrack/linuxproc", "TaskPlugin=task/none",
        "JobAcctGatherType=jobacct_gather/none", "AccountingStorageType=accounting_storage/none",
        "JobCompType=jobcomp/none",
        "SchedulerType=sched/backfill", "SelectType=select/cons_tres", "SelectTypeParameters=CR_Core",
        "MpiDefault=pmix", "ReturnToService=2", "SlurmdParameters=config_overrides",
        "TopologyPlugin=topology/tree",
        "SlurmctldDebug=info", "SlurmdDebug=info",
        *nodes,
        f"PartitionName=emulated Nodes={compress(plan.hosts)} Default=YES MaxTime=INFINITE State=UP",
    ]) + "\n"


def first_topology(plan: Plan) -> str:
    """Before anything is measured Slurm knows one switch: `rankwise export slurm-topology`
    replaces this file, `DIR/scontrol reconfigure` reads it."""
    return (f"# topology.conf of the emulated cluster {plan.name}: nothing measured yet, one switch.\n"
            "# Replace it with `rankwise export slurm-topology MODEL -o THIS_FILE`, then `DIR/scontrol reconfigure`.\n"
            f"SwitchName=emulated Nodes={compress(plan.hosts)}\n")


def command_wrapper(plan: Plan, base: Path, command: str) -> str:
    """DIR/srun, DIR/sbatch...: the Slurm command in the head namespace with the cluster's
    slurm.conf, and Open MPI's options for the cluster's subnet in the environment (srun
    passes it on to the ranks)."""
    env = {"SLURM_CONF": f"{base}/slurm.conf", "OMPI_MCA_btl": "tcp,vader,self",
           "OMPI_MCA_btl_tcp_if_include": plan.subnet, "OMPI_MCA_oob_tcp_if_include": plan.subnet,
           "OMPI_MCA_mpi_yield_when_idle": "1"}
    exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
    tool = shutil.which(command) or command
    return f"""#!/bin/sh
# Slurm's {command} on the emulated cluster {plan.name} (rankwise emulate slurm), run in its head.
export {exports}
exec ip netns exec {shlex.quote(plan.head)} {shlex.quote(tool)} "$@"
"""


def start(cluster_dir: str | PathLike, plan: Plan) -> Plan:
    """Start munged, slurmctld and one slurmd per host; return once every node is idle.
    On any failure what was started is ended and the error names the log to read."""
    system.check_supported()
    check_slurm()
    if plan.slurm:
        raise RankwiseError(f"Slurm already runs on {cluster_dir}: 'rankwise emulate slurm down {cluster_dir}' first")
    base = folder(cluster_dir)
    if re.search(r"[\s#=\"'\\]", str(base)):
        raise UsageError(f"{base}: Slurm's configuration files cannot hold a path with spaces, '#', '=', quotes "
                         "or backslashes; bring the cluster up in another folder")
    plan.slurm = {"folder": str(base), "conf": str(base / "slurm.conf"),
                  "daemons": [{"name": "munged", "ns": plan.head, "pid_file": str(base / "munge" / "munged.pid")},
                              {"name": "slurmctld", "ns": plan.head, "pid_file": str(base / "slurmctld.pid")},
                              *({"name": "slurmd", "ns": ns, "pid_file": str(base / "spool" / h / "slurmd.pid")}
                                for h, ns in zip(plan.hosts, plan.host_ns))]}
    write_state(cluster_dir, plan, complete=True)  # before any daemon: stop and down find them all
    try:
        _write_files(plan, base, Path(cluster_dir))
        _start_daemons(plan, base)
        _wait_ready(plan, base)
    except BaseException:
        stop(cluster_dir, plan)
        raise
    return plan


def _write_files(plan: Plan, base: Path, cluster_dir: Path) -> None:
    for sub in ("munge", "ctld", "log", *(f"spool/{h}" for h in plan.hosts), *(f"tmp/{h}" for h in plan.hosts)):
        (base / sub).mkdir(parents=True, exist_ok=True)
    os.chmod(base / "munge", 0o755)  # munged: the socket's folder searchable by all
    key = base / "munge" / "munge.key"
    key.unlink(missing_ok=True)
    fd = os.open(key, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o400)
    with os.fdopen(fd, "wb") as f:
        f.write(os.urandom(1024))
    write_atomic(base / "slurm.conf", slurm_conf(plan, base))
    # cgroup/v1 over the empty tmpfs each slurmd mounts (module docstring); nothing is mounted for it
    write_atomic(base / "cgroup.conf", "CgroupPlugin=cgroup/v1\nCgroupAutomount=no\n")
    if not (base / "topology.conf").exists():
        write_atomic(base / "topology.conf", first_topology(plan))
    for command in COMMANDS:
        path = cluster_dir / command
        write_atomic(path, command_wrapper(plan, base, command))
        os.chmod(path, 0o755)


def _daemon(cmd: list[str], what: str, log: Path) -> None:
    """Run a daemon's start command (it forks and returns); its failure as one line."""
    with tempfile.TemporaryFile("w+") as err:
        try:
            r = subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err, timeout=60)
        except subprocess.TimeoutExpired:
            raise RankwiseError(f"{what} did not start within 60 s (log: {log})") from None
        err.seek(0)
        text = " ".join(err.read().split())
    if r.returncode != 0:
        raise RankwiseError(f"{what} failed to start: {text or f'exit code {r.returncode}'} (log: {log})")


def _start_daemons(plan: Plan, base: Path) -> None:
    m = base / "munge"
    _daemon(["ip", "netns", "exec", plan.head, "munged", "--force", f"--socket={m}/munge.socket",
             f"--key-file={m}/munge.key", f"--pid-file={m}/munged.pid", f"--log-file={m}/munged.log",
             f"--seed-file={m}/munged.seed"], "munged", m / "munged.log")
    conf = str(base / "slurm.conf")
    _daemon(["ip", "netns", "exec", plan.head, "unshare", "--uts", "sh", "-c",
             'hostname "$0" && exec slurmctld -c -f "$1"', CONTROLLER, conf],
            "slurmctld", base / "log" / "slurmctld.log")
    for host, ns in zip(plan.hosts, plan.host_ns):
        _daemon(["ip", "netns", "exec", ns, "unshare", "--uts", "sh", "-c",
                 'hostname "$0" && mount -t tmpfs -o size=64k,mode=755 rankwise-cgroup /sys/fs/cgroup '
                 '&& exec slurmd -f "$1" -N "$0"', host, conf],
                f"slurmd of {host}", base / "log" / f"slurmd-{host}.log")


def node_states(plan: Plan, base: Path) -> dict[str, str]:
    """Each node's state as slurmctld has it (sinfo), {} when it does not answer."""
    r = subprocess.run(["ip", "netns", "exec", plan.head, "sinfo", "-h", "-N", "-o", "%N %T"],
                       capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=30,
                       env={**os.environ, "SLURM_CONF": str(base / "slurm.conf")})
    if r.returncode != 0:
        return {}
    return dict(line.split(None, 1) for line in r.stdout.splitlines() if len(line.split()) == 2)


def _wait_ready(plan: Plan, base: Path) -> None:
    deadline = time.monotonic() + READY_TIMEOUT
    states: dict[str, str] = {}
    while time.monotonic() < deadline:
        states = node_states(plan, base)
        if all(states.get(h, "").rstrip("*") == "idle" for h in plan.hosts):
            return
        time.sleep(0.5)
    late = [h for h in plan.hosts if states.get(h, "").rstrip("*") != "idle"]
    raise RankwiseError(f"Slurm: {compress(late)} not idle after {READY_TIMEOUT:.0f} s "
                        f"({states.get(late[0], 'no answer from slurmctld')}; logs in {base / 'log'})")


def stop(cluster_dir: str | PathLike, plan: Plan) -> list[str]:
    """End the daemons the plan records (by their pid files, checked against their names):
    slurmds, then slurmctld, then munged. Jobs' steps end with their slurmd's namespace at
    `down`. Returns the daemons that would not end."""
    daemons = list(reversed(plan.slurm.get("daemons", [])))
    stuck = []
    for d in daemons:
        pid = _pid(d)
        if pid is None:
            continue
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                break
            deadline = time.monotonic() + 5
            while system._alive(pid) and time.monotonic() < deadline:
                time.sleep(0.05)
            if not system._alive(pid):
                break
        else:
            stuck.append(f"{d['name']} ({pid})")
    plan.slurm = {}
    write_state(cluster_dir, plan, complete=True)
    return stuck


def _pid(daemon: dict) -> int | None:
    """The daemon's pid from its pid file, when that process still is that daemon."""
    try:
        pid = int(Path(daemon["pid_file"]).read_text().split()[0])
        with open(f"/proc/{pid}/comm") as f:
            return pid if f.read().strip() == daemon["name"] else None
    except (OSError, ValueError, IndexError):
        return None


def running(plan: Plan) -> list[tuple[str, str, int | None]]:
    """(daemon, namespace, pid or None when not running) of each recorded daemon."""
    return [(d["name"], d["ns"], _pid(d)) for d in plan.slurm.get("daemons", [])]
