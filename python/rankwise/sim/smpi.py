"""Running MPI programs on a simulated cluster with SimGrid's smpirun."""

from __future__ import annotations

import re
import shutil
from os import PathLike
from pathlib import Path

from rankwise.util.errors import RankwiseError

# Simulated time must depend on the platform only: computation between MPI
# calls is not timed (smpi/simulate-computation:no), nor is reading the
# clock (smpi/wtime:0; SMPI charges 10 ns per MPI_Wtime by default, a bias
# on every timing and an extra simulator event). CM02 without cross traffic
# makes a route's latency the sum of its links' latencies and its bandwidth
# the smallest link's, which is what the ground truth states.
SMPI_SETTINGS = (
    "smpi/simulate-computation:no",
    "smpi/wtime:0",
    "network/model:CM02",
    "network/crosstraffic:0",
)

# The probe's start (rw_nodes: MPI_Allgather of host names) under SMPI's
# default allgather posts every send and receive at once: 2 ranks on each of
# 96 nodes put ~36,000 flows in one max-min system. SimGrid 3.32 then
# subtracts thousands of 1/latency terms (up to 1e6 each) from a link's usage
# and compares the rest with an absolute precision of 1e-5; with uneven
# latencies (a few slow links) the rounding left over exceeds it and
# MaxMin::do_solve aborts ("Cannot saturate more a constraint that has no
# active element") or segfaults while formatting that message. The ring
# allgather keeps one flow per rank in flight (docs/concepts/simulation.md).
PROBE_SETTINGS = ("smpi/allgather:ring",)

# Send and receive overheads for collective experiments. SMPI's default is
# 0: a rank then posts any number of messages in no time, and a flat tree
# (the root sends to every rank itself) beats a binomial one for small
# messages, which no real MPI does. SMPI charges smpi/os to a blocking send
# it detaches (below smpi/send-is-detached-thresh, 64 KiB), smpi/ois to
# every nonblocking send and smpi/or to the receive of a detached message,
# each as a sleep of the rank (SimGrid 3.32, smpi_request.cpp). rankwise
# sets os = ois for messages below 64 KiB (eager: the CPU copies the data
# and posts it) and 0 from 64 KiB (rendezvous: the NIC moves the data), so
# every eager message costs its sender `send` and its receiver `recv`,
# which is what the predictor charges (rw_pnet_set_overhead). The values
# for experiments, 1 us each, are the order of an MPI library's CPU time
# per small message on a current cluster, and of one link latency of
# rankwise's generated platforms (node_lat).
COLLECTIVE_OVERHEADS = (1e-6, 1e-6)
EAGER_LIMIT = 65536  # smpi/send-is-detached-thresh's default


def model_overheads(model) -> tuple[float, float]:
    """The send and receive overheads a probed model measured (medians over its nodes; 0 where
    it has none): the settings a simulated run against that model needs, since its pairs'
    latencies were measured under them and tuning with others would take from those latencies
    what they do not hold."""
    import numpy as np

    def median(v) -> float:
        v = np.asarray(v if v is not None else [], dtype=np.float64)
        v = v[np.isfinite(v)]
        return float(np.median(v)) if v.size else 0.0

    return median(model.overhead), median(model.recv_overhead)


def overhead_settings(send: float, recv: float) -> tuple[str, ...]:
    """--cfg values giving every eager message (< 64 KiB) a send overhead
    `send` and a receive overhead `recv` (seconds), larger ones none."""
    for name, v in (("send", send), ("receive", recv)):
        if not (v == v and 0 <= v < 1):  # NaN fails v == v
            raise RankwiseError(f"{name} overhead must be >= 0 and below 1 s, got {v}")

    def piecewise(v: float) -> str:
        # sizes up to EAGER_LIMIT - 1 bytes cost v; from EAGER_LIMIT, 0 (smpi_host.cpp's sections)
        return f"0:{v:.9g}:0;{EAGER_LIMIT - 1}:0:0"

    return (f"smpi/os:{piecewise(send)}", f"smpi/ois:{piecewise(send)}", f"smpi/or:{piecewise(recv)}")


def failure_message(what: str, returncode: int, log: list[str]) -> str:
    """One line for a failed smpirun, shared by every simulated run: SimGrid's
    own failure (simgrid_failure), else the program's own error line, else
    the program's last line."""
    lines = [line.strip() for line in log if line.strip()]
    program = [line for line in lines if not _SMPIRUN_NOISE.search(line) and not _SIMGRID_LOG.search(line)]
    simgrid = simgrid_failure(what, returncode, log)
    if simgrid is not None:
        return simgrid
    for line in reversed(program):  # 'rankwise-probe: error: ...'
        if "error:" in line:
            return line.split("error:", 1)[1].strip() if line.startswith("rankwise") else line
    last = program[-1] if program else "no output"
    return f"{what} failed (exit code {returncode}): {last}"


def simgrid_failure(what: str, returncode: int, log: list[str]) -> str | None:
    """SimGrid's crash with what to try, or SimGrid's last error line ('no
    connecting path between these two hosts'); None when SimGrid itself did
    not fail (the program did, and says why in its own words)."""
    lines = [line.strip() for line in log if line.strip()]
    program = [line for line in lines if not _SMPIRUN_NOISE.search(line) and not _SIMGRID_LOG.search(line)]
    crash = _simgrid_crash(lines, program, returncode)
    if crash is not None:
        return (f"SimGrid crashed on this platform: {crash}; try fewer ranks per node or fewer "
                "nodes (see 'SimGrid crashes' in docs/concepts/simulation.md)")
    if any("error:" in line for line in program):
        return None  # the program's own message comes first
    for line in reversed(lines):
        if _SIMGRID_ERROR.search(line):
            return f"{what} failed: {_strip_simgrid_prefix(line).rstrip('.')}"
    return None


# SimGrid's log lines: '[host:rank:(pid) 0.000065] file.cpp:123: [category/CRITICAL] text'.
_SIMGRID_LOG = re.compile(r"^\[[^\]]*\]\s*(\S+:\d+:\s*)?\[[\w./-]+/[A-Z]+\]")
_SIMGRID_PREFIX = re.compile(r"^\[[^\]]*\]\s*(\S+:\d+:\s*)?\[[\w./-]+/[A-Z]+\]\s*")
_SIMGRID_ERROR = re.compile(r"\[[\w./-]+/(CRITICAL|ERROR)\]")
# smpirun's epilogue, SimGrid's signal handler and the command line smpirun echoes.
_SMPIRUN_NOISE = re.compile(r"^(Execution failed with code \d+|Segmentation fault|Aborted)\.?$|--cfg=")
_MAXMIN = re.compile(r"(Cannot saturate more a constraint|There is no sense adding a constraint"
                     r"|Should not keep a maximum constraint)[^!]*")


def _strip_simgrid_prefix(line: str) -> str:
    return _SIMGRID_PREFIX.sub("", line).strip()


def _simgrid_crash(lines: list[str], program: list[str], returncode: int) -> str | None:
    """SimGrid's own message when its max-min solver failed; a signal with
    no word from the program or from SimGrid (3.32's solver segfaults while
    formatting that message when the constraint is first in its table);
    None when SimGrid did not crash. smpirun reports SIGSEGV as exit code
    139, SIGABRT as 134."""
    for line in reversed(lines):
        m = _MAXMIN.search(line)
        if m:
            return f"{m.group(0).strip()} (MaxMin::do_solve)"
    quiet = not program and not any(_SIMGRID_ERROR.search(line) for line in lines)
    if returncode in (134, 139, -6, -11) and quiet:
        how = "segmentation fault" if returncode in (139, -11) else "abort"
        return f"{how} inside the simulation, with no message from SimGrid or the program"
    return None


def smpirun() -> str:
    path = shutil.which("smpirun")
    if not path:
        raise RankwiseError(
            "smpirun not found: the simulated cluster needs SimGrid "
            "(Debian: apt-get install libsimgrid-dev)"
        )
    return path


_PLATFORM_MODEL = re.compile(r'<prop\s+id="network/model"\s+value="([A-Za-z0-9_-]+)"\s*/>')


def platform_network_model(platform: str | PathLike) -> str | None:
    """The network model a platform's <config> names (rankwise writes SMPI when it simulates a
    protocol switch: CM02 ignores per-size factors), else None. The <config> tag comes first in
    a SimGrid platform, so only the file's head is read."""
    try:
        with open(platform, encoding="utf-8", errors="replace") as f:
            head = f.read(8192)
    except OSError:
        return None  # smpirun reports the unreadable platform itself
    config = head.split("</config>", 1)[0] if "</config>" in head else ""
    m = _PLATFORM_MODEL.search(config)
    return m.group(1) if m else None


def smpirun_command(
    program: str | PathLike,
    args: list[str],
    platform: str | PathLike,
    hostfile: str | PathLike,
    nprocs: int,
    extra_cfg: tuple[str, ...] = (),
) -> list[str]:
    """The smpirun command line for `program args` with one rank per hostfile line."""
    cmd = [smpirun(), "-np", str(nprocs), "-platform", str(Path(platform).resolve())]
    cmd += ["-hostfile", str(Path(hostfile).resolve())]
    settings = SMPI_SETTINGS
    model = platform_network_model(platform)
    if model:  # the platform's own model (its size factors need it): the command line would win
        settings = tuple(f"network/model:{model}" if c.startswith("network/model:") else c for c in settings)
    for cfg in settings + tuple(extra_cfg):
        cmd.append(f"--cfg={cfg}")
    cmd.append("--log=root.thres:warning")
    cmd += [str(program), *args]
    return cmd
