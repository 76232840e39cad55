"""A job on an emulated cluster whose link changes while it runs: the in-job live model's tests
and studies (tests/python/emulate/test_emulate_mpi.py, studies/live/live_remap.py --emulated) start an MPI
program that traces its live model (RANKWISE_COLL_TRACE=1), wait for its N-th re-probe, change a
link's rate (`rankwise emulate set`'s own code) and restore it after the run."""

from __future__ import annotations

import re
import subprocess
import threading
import time
from dataclasses import dataclass, field
from os import PathLike

from rankwise.emulate.cluster import set_rate

PROBE = "rankwise-live: probe "
REMEASURED = "rankwise-live: re-measured "
_MEASURED = re.compile(r", measured ([\d.]+)-([\d.]+)$")


def measured(line: str) -> tuple[float, float]:
    """When rank 0 measured what a trace line reports: (start, end) in unix seconds."""
    m = _MEASURED.search(line.strip())
    if not m:
        raise ValueError(f"a live trace line without its measured window: {line.strip()!r}")
    return float(m.group(1)), float(m.group(2))


@dataclass
class MidRun:
    """What the run printed, with when each trace line arrived (time.monotonic())."""

    returncode: int | None
    stdout: str
    probes: list[tuple[float, str]] = field(default_factory=list)  # rank 0's line per re-probe
    remeasured: list[tuple[float, str]] = field(default_factory=list)  # what a remap re-measured first
    stderr: list[tuple[float, str]] = field(default_factory=list)  # every line
    # the rate change's start and end in unix time (time.time(), as measured()); None: the run ended first
    changed_unix: tuple[float, float] | None = None

    def others(self) -> str:
        """Standard error without the re-probes' lines (the errors, for a message)."""
        return "".join(line for _, line in self.stderr if not line.startswith(PROBE))


def run_with_change(cmd: list, cluster: str | PathLike, kind: str, index: int, rate_bit: int,
                    restore_bit: int, after_probes: int, env: dict | None = None, wait_s: float = 600,
                    timeout_s: float = 900) -> MidRun:
    """Run cmd; once its after_probes-th re-probe has been traced (or wait_s has passed), set link
    (kind, index) to rate_bit; restore it to restore_bit when the run is over, whatever happened.
    The run is killed when it outlives timeout_s after the change."""
    proc = subprocess.Popen([str(c) for c in cmd], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env, stdin=subprocess.DEVNULL)
    run = MidRun(None, "")

    def read():
        for line in proc.stderr:
            at = time.monotonic()
            run.stderr.append((at, line))
            if line.startswith(PROBE):
                run.probes.append((at, line.strip()))
            elif line.startswith(REMEASURED):
                run.remeasured.append((at, line.strip()))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        deadline = time.monotonic() + wait_s
        while len(run.probes) < after_probes and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.005)
        if proc.poll() is None:
            start = time.time()
            set_rate(cluster, kind, index, rate_bit)
            run.changed_unix = (start, time.time())
        run.stdout = proc.stdout.read()  # standard error is the reader's
        proc.wait(timeout=timeout_s)
        reader.join(10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
        set_rate(cluster, kind, index, restore_bit)
    run.returncode = proc.returncode
    return run
