"""The kernel's side of an emulated cluster: `ip` and `tc` run, their failures as one line.

Every call names its namespace (`ip -n NS`, `tc -n NS`); None is the machine's own namespace,
touched only for the one link to the cluster's core bridge (cluster.py)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time

from rankwise.util.errors import RankwiseError

# Exit code when the machine cannot hold an emulated cluster: not root, no `ip`/`tc`, no netns.
UNSUPPORTED = 2


class Unsupported(RankwiseError):
    """This machine or user cannot create network namespaces (exit 2, one line)."""

    exit_code = UNSUPPORTED


def check_supported() -> None:
    """Root, iproute2 and network namespaces, or one clear line: before anything is made."""
    if os.geteuid() != 0:
        raise Unsupported("an emulated cluster needs root (it creates network namespaces, veth links and tc qdiscs)")
    for tool in ("ip", "tc", "unshare"):
        if shutil.which(tool) is None:
            raise Unsupported(f"an emulated cluster needs '{tool}' (Debian: apt-get install iproute2 util-linux)")
    if not os.path.exists("/proc/self/ns/net"):
        raise Unsupported("this kernel has no network namespaces (/proc/self/ns/net is missing)")
    # A namespace of this process alone, gone when it ends: can one be made, and shaped by HTB?
    r = subprocess.run(["unshare", "--net", "tc", "qdisc", "add", "dev", "lo", "root", "handle", "1:", "htb"],
                       capture_output=True, text=True, stdin=subprocess.DEVNULL)
    if r.returncode != 0:
        why = " ".join(r.stderr.split()) or f"exit code {r.returncode}"
        raise Unsupported(f"this machine cannot make a network namespace shaped by tc HTB: {why}")


def run(*args: str, ns: str | None = None, check: bool = True) -> subprocess.CompletedProcess:
    """`ip ...` or `tc ...` (args[0]), in namespace ns; a failure as one line quoting the tool."""
    cmd = [args[0], *(["-n", ns] if ns else []), *args[1:]]
    r = subprocess.run(cmd, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    if check and r.returncode != 0:
        why = " ".join(r.stderr.split()) or f"exit code {r.returncode}"
        raise RankwiseError(f"'{' '.join(cmd)}' failed: {why}")
    return r


def namespaces() -> set[str]:
    """Names of the machine's named network namespaces (`ip netns list`)."""
    out = run("ip", "netns", "list").stdout
    return {line.split()[0] for line in out.splitlines() if line.strip()}


def link_exists(dev: str, ns: str | None = None) -> bool:
    return run("ip", "link", "show", "dev", dev, ns=ns, check=False).returncode == 0


def addresses(ns: str) -> list[str]:
    """IPv4 addresses (with their prefix length) in namespace ns."""
    out = run("ip", "-4", "-o", "addr", "show", ns=ns, check=False).stdout
    return [line.split()[3] for line in out.splitlines() if len(line.split()) > 3]


def end_processes(ns: str, grace: float = 2.0) -> list[int]:
    """End the processes left in namespace ns (ranks of a job still running): SIGTERM, then
    SIGKILL after `grace` s. A namespace with processes would outlive `ip netns delete`."""
    pids = [int(p) for p in run("ip", "netns", "pids", ns, check=False).stdout.split() if p.isdigit()]
    pids = [p for p in pids if p != os.getpid()]
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in pids:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + grace
        while pids and time.monotonic() < deadline:
            pids = [p for p in pids if _alive(p)]
            time.sleep(0.05)
        if not pids:
            break
    return pids


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def disable_ipv6(dev: str) -> None:
    """No IPv6 on the host-namespace end of the cluster's link: nothing but the subnet's IPv4
    (no router solicitations, no duplicate-address probes) leaves on the machine's side."""
    path = f"/proc/sys/net/ipv6/conf/{dev}/disable_ipv6"
    if os.path.exists(path):
        with open(path, "w") as f:
            f.write("1\n")
