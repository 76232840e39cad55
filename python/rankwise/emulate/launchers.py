"""How MPI launchers reach an emulated cluster's hosts: an rsh/ssh agent and option lines.

The agent does what ssh would (the command's words joined, run by sh) inside the host's network
namespace and a UTS namespace of its own named after the host, so that MPI_Get_processor_name
and `hostname` name the emulated host. Launchers run in the cluster's head namespace and reach
the hosts through its link to the core bridge (plan.py)."""

from __future__ import annotations

import shlex
import shutil
from pathlib import Path

from rankwise.emulate.plan import Plan, prefix

AGENT = "agent"
OPENMPI = "launcher-openmpi"
MPICH = "launcher-mpich"
WRAPPER = "mpirun"  # DIR/mpirun: Open MPI's mpirun with the cluster's options, for --launcher
HYDRA_WRAPPER = "mpiexec.hydra"  # DIR/mpiexec.hydra: MPICH's, the same for Hydra
MACHINEFILE = "machinefile"  # HOST:SLOTS lines: Hydra refuses the hostfile's "slots=" ("token slots not supported")


def agent_script(plan: Plan) -> str:
    hosts = "|".join(plan.hosts)
    return f"""#!/bin/sh
# rsh/ssh agent of the emulated cluster {plan.name} (rankwise emulate): runs a command on one of
# its hosts as ssh would, inside that host's network namespace, with the host's name as hostname.
while [ $# -gt 0 ]; do case "$1" in -*) shift ;; *) break ;; esac; done  # ssh options (Hydra: -x)
host=$1
shift
case "$host" in
  {hosts}) ;;
  *) echo "emulated cluster {plan.name}: no host '$host'" >&2; exit 255 ;;
esac
exec ip netns exec "{prefix(plan.name)}$host" unshare --uts sh -c 'hostname "$0" && exec sh -c "$1"' "$host" "$*"
"""


def openmpi_options(plan: Plan, agent: Path) -> list[str]:
    """mpirun and its options; the hosts are the caller's (--hostfile DIR/hostfile, --host, a rankfile).

    --bind-to none: each host's daemon sees the whole machine and would bind every host's
    first rank to the same core. No tree spawn: every daemon is started from mpirun's namespace,
    the head. vader: ranks of one host share memory, as on a node (Open MPI keeps it to ranks of
    one daemon, so between hosts it is TCP over the shaped links)."""
    return ["ip", "netns", "exec", plan.head, "mpirun", "--mca", "plm_rsh_agent", str(agent), "--mca", "plm_rsh_no_tree_spawn", "1",
            "--mca", "btl", "tcp,vader,self", "--mca", "btl_tcp_if_include", plan.subnet,
            "--mca", "oob_tcp_if_include", plan.subnet, "--mca", "mpi_yield_when_idle", "1", "--bind-to", "none"]


def mpich_options(plan: Plan, agent: Path) -> list[str]:
    """mpiexec.hydra in the head through the same agent; -localhost: the proxies call back to the
    head's address (the machine's name resolves to an address the hosts cannot reach).

    UCX_TLS=tcp,self: Debian's MPICH is ch4:ucx, and UCX's shared-memory transports (sysv, posix,
    cma) judge two processes on one machine by its boot id, which every namespace shares: left to
    itself UCX joins the ranks of different hosts through memory (43 Gbit/s across a link shaped
    to 200 Mbit/s), never the links. With TCP only, between hosts it is the shaped eth0; ranks of
    one host talk TCP over that host's loopback (this MPICH sends them nothing through its own
    shared memory either). UCX_NET_DEVICES=eth0: UCX would add the host's lo as a second lane."""
    return ["ip", "netns", "exec", plan.head, "mpiexec.hydra", "-launcher", "ssh", "-launcher-exec", str(agent), "-localhost", plan.login_address,
            "-iface", "eth0", "-genv", "UCX_TLS", "tcp,self", "-genv", "UCX_NET_DEVICES", "eth0"]


def mpirun_wrapper(plan: Plan, agent: Path) -> str:
    """DIR/mpirun: `--launcher 'DIR/mpirun --hostfile DIR/hostfile -np 8'` without quoting the
    options; the system's mpirun by its full path (DIR may be on PATH), `--version` passed on
    so that rankwise still recognises Open MPI."""
    words = openmpi_options(plan, agent)
    words[words.index("mpirun")] = shutil.which("mpirun") or "mpirun"
    return f"""#!/bin/sh
# Open MPI's mpirun on the emulated cluster {plan.name} (rankwise emulate); give it the hosts.
exec {shlex.join(words)} "$@"
"""


def hydra_wrapper(plan: Plan, agent: Path) -> str:
    """DIR/mpiexec.hydra: `--launcher 'DIR/mpiexec.hydra -f DIR/machinefile -n 8'`; Hydra's
    `--version` answers whatever options precede it, so rankwise recognises Hydra."""
    words = mpich_options(plan, agent)
    words[words.index("mpiexec.hydra")] = shutil.which("mpiexec.hydra") or "mpiexec.hydra"
    return f"""#!/bin/sh
# MPICH's mpiexec.hydra on the emulated cluster {plan.name} (rankwise emulate); give it the hosts.
exec {shlex.join(words)} "$@"
"""


def line(words: list[str]) -> str:
    return shlex.join(words) + "\n"
