"""A real-MPI probe whose job goes wrong: a rank that stops answering, a
rank that is killed, a launcher that fails. rankwise returns in bounded
time and says what happened in the launcher's own words."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from rankwise.cluster import launch
from rankwise.model.model import MEASURED, MISSING, Model

from conftest import run_cli
from test_probe_real import pid_of_rank

needs_open_mpi = pytest.mark.skipif(
    not (shutil.which("mpirun") and shutil.which("ompi_info")),
    reason="finds ranks through Open MPI's environment",
)


def _gone(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


def _probe_and_signal(tmp_path: Path, sig: signal.Signals, timeout: float, after: float = 1.5):
    """`rankwise probe` on 4 localhost ranks, measuring for 5 s; `sig` to
    rank 2 `after` s into the job. Returns (result, seconds from the signal
    to the return, pid)."""
    out = tmp_path / "m.rwm"
    cmd = [sys.executable, "-m", "rankwise", "probe", "--launcher", "mpirun -np 4 --oversubscribe",
           "--group-by", "rank", "--sizes", "8,1K,64K", "--repetitions", "5", "--rounds", "20000",
           "--time-budget", "5", "--timeout", str(timeout), "-o", str(out)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            stdin=subprocess.DEVNULL, start_new_session=True)
    victim = None
    try:
        victim = pid_of_rank(2, proc.pid, time.monotonic() + 30)
        time.sleep(after)
        os.kill(victim, sig)
        signalled = time.monotonic()
        stdout, stderr = proc.communicate(timeout=timeout + 60)
        took = time.monotonic() - signalled
    finally:
        if proc.poll() is None:  # a failed test leaves no job behind
            for pid, kill in ((proc.pid, os.killpg), (victim, os.kill)):
                try:
                    if pid:
                        kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            proc.communicate()
    return subprocess.CompletedProcess(cmd, proc.returncode, stdout, stderr), took, victim


@needs_open_mpi
def test_a_stopped_rank_costs_its_pairs_and_the_probe_returns(tmp_path):
    """SIGSTOP rank 2: rankwise returns with the model written, exit 0 and a
    warning naming the node and its missing pairs, within timeout + 30 s of
    the stop, and leaves no process of the job behind (the stopped one too)."""
    timeout = 2.0
    result, took, victim = _probe_and_signal(tmp_path, signal.SIGSTOP, timeout)
    print(f"\nstopped rank: rankwise returned {took:.1f} s after the stop (timeout {timeout:g} s)")
    assert result.returncode == 0, result.stderr
    assert took < timeout + 30
    warning = [line for line in result.stderr.splitlines() if "warning:" in line]
    assert warning and ":2 stopped answering" in warning[0], result.stderr
    assert ":2 -> " in warning[0]
    assert "Traceback" not in result.stderr
    model = Model.load(tmp_path / "m.rwm")
    assert (model.state[2, [0, 1, 3]] == MISSING).all()  # rank 2 never reported
    assert model.state[0, 1] == MEASURED and model.state[3, 1] == MEASURED
    assert "model written to" in result.stdout
    deadline = time.monotonic() + 10
    while not _gone(victim) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _gone(victim), "the stopped rank outlived the job"


@needs_open_mpi
def test_a_killed_rank_is_named_with_its_signal(tmp_path):
    """SIGKILL rank 2: one error line naming the rank, its node and the
    signal, and that no model was written; never Open MPI's dashes."""
    result, took, _ = _probe_and_signal(tmp_path, signal.SIGKILL, timeout=2.0)
    assert result.returncode == 1
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("rankwise: error:"), result.stderr
    assert "process rank 2" in lines[0] and "signal 9 (Killed); no model was written" in lines[0], lines[0]
    assert "no model was written" in lines[0]
    assert not (tmp_path / "m.rwm").exists()
    assert took < 30


@needs_open_mpi
@pytest.mark.parametrize(
    "launcher, said",
    [
        ("mpirun -np 64", "There are not enough slots available in the system"),
        ("mpirun --no-such-option -np 2", 'unknown option "--no-such-option"'),
    ],
)
def test_open_mpi_failures_quote_open_mpi(tmp_path, launcher, said):
    result = run_cli("probe", "--launcher", launcher, "--group-by", "rank", "-o", tmp_path / "m.rwm",
                     timeout=120)
    assert result.returncode == 1
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and said in lines[0], result.stderr
    assert "-----" not in lines[0]


def _fake_launcher(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "fake-mpiexec"
    path.write_text("#!/bin/sh\n" + textwrap.dedent(body))
    path.chmod(0o755)
    return path


HYDRA_BAD_TERMINATION = """\
    cat >&2 <<'EOF'

    ===================================================================================
    =   BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES
    =   PID 4242 RUNNING AT node17
    =   EXIT CODE: 9
    =   CLEANING UP REMAINING PROCESSES
    =   YOU CAN IGNORE THE BELOW CLEANUP MESSAGES
    ===================================================================================
    YOUR APPLICATION TERMINATED WITH THE EXIT STRING: Killed (signal 9)
    This typically refers to a problem with your application.
    Please see the FAQ page for debugging suggestions
    EOF
    exit 9
"""

HYDRA_BAD_ARGUMENT = """\
    cat >&2 <<'EOF'
    [mpiexec@node17] match_arg (utils/args/args.c:163): unrecognized argument bogus
    [mpiexec@node17] HYDU_parse_array (utils/args/args.c:178): argument matching returned error
    [mpiexec@node17] main (ui/mpich/mpiexec.c:127): error parsing parameters
    EOF
    exit 255
"""


@pytest.mark.parametrize(
    "body, said",
    [
        (HYDRA_BAD_TERMINATION, "bad termination of process 4242 on node17: Killed (signal 9)"),
        (HYDRA_BAD_ARGUMENT, "mpiexec: unrecognized argument bogus"),
    ],
)
def test_a_hydra_like_launcher_is_quoted(tmp_path, body, said):
    """MPICH's mpiexec (Hydra) frames its message with '=' lines or prints
    '[mpiexec@host] function (file:line): message': the message is shown."""
    fake = _fake_launcher(tmp_path, body)
    result = run_cli("probe", "--launcher", str(fake), "-o", tmp_path / "m.rwm", timeout=60)
    assert result.returncode == 1
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and said in lines[0], result.stderr
    assert "no model was written" in lines[0]


def test_a_job_that_does_not_end_after_writing_is_ended(tmp_path, monkeypatch):
    """A launcher that reports the output written, then hangs with a child
    that ignores SIGTERM: its whole process group is ended after the grace."""
    monkeypatch.setattr(launch, "FINALIZE_GRACE", 1.0)
    monkeypatch.setattr(launch, "TERM_GRACE", 1.0)
    pidfile = tmp_path / "child.pid"
    fake = _fake_launcher(tmp_path, f"""\
        sh -c 'trap "" TERM; while :; do sleep 1; done' &
        echo $! > {pidfile}
        echo "RW-WRITTEN {tmp_path}/m.rwm" >&2
        trap "" TERM
        while :; do sleep 1; done
    """)
    start = time.monotonic()
    result = launch.run_with_progress([str(fake)], "test", show=False, end_after_written=True)
    took = time.monotonic() - start
    assert result.written == f"{tmp_path}/m.rwm"
    assert result.ended_after is not None and result.ended_after >= 1.0
    assert took < 10
    child = int(pidfile.read_text())
    deadline = time.monotonic() + 5
    while not _gone(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _gone(child)


@pytest.mark.parametrize("grace, end_after_written", [(4.0, True), (0.5, False)])
def test_a_job_that_ends_by_itself_is_left_alone(tmp_path, monkeypatch, grace, end_after_written):
    """A job that ends within the grace after RW-WRITTEN (a healthy
    MPI_Finalize) is not ended, and without end_after_written (smpirun) none is."""
    monkeypatch.setattr(launch, "FINALIZE_GRACE", grace)
    fake = _fake_launcher(tmp_path, """\
        echo "RW-WRITTEN /x.rwm" >&2
        sleep 2
        echo done
    """)
    result = launch.run_with_progress([str(fake)], "test", show=False, end_after_written=end_after_written)
    assert result.returncode == 0 and result.ended_after is None and result.log == ["done"]


# Launcher output as the launchers print it (Open MPI 4.1, MPICH 4.0 Hydra).
OMPI_KILLED = """\
--------------------------------------------------------------------------
Primary job  terminated normally, but 1 process returned
a non-zero exit code. Per user-direction, the job has been aborted.
--------------------------------------------------------------------------
--------------------------------------------------------------------------
mpirun noticed that process rank 2 with PID 0 on node vm exited on signal 9 (Killed).
--------------------------------------------------------------------------
"""

OMPI_NO_EXECUTABLE = """\
--------------------------------------------------------------------------
mpirun was unable to launch the specified application as it could not access
or execute an executable:

Executable: /nonexistent/prog
Node: vm

while attempting to start process rank 0.
--------------------------------------------------------------------------
2 total processes failed to start
"""

OMPI_NO_DAEMON = """\
ssh: Could not resolve hostname nosuchhost: Name or service not known
--------------------------------------------------------------------------
ORTE was unable to reliably start one or more daemons.
This usually is caused by:

* not finding the required libraries and/or binaries on
  one or more nodes. Please check your PATH and LD_LIBRARY_PATH
--------------------------------------------------------------------------
"""


@pytest.mark.parametrize(
    "text, message",
    [
        (OMPI_KILLED, "mpirun noticed that process rank 2 with PID 0 on node vm exited on signal 9 (Killed)."),
        (OMPI_NO_EXECUTABLE, "mpirun was unable to launch the specified application as it could not access or "
                             "execute an executable: Executable: /nonexistent/prog Node: vm while attempting to "
                             "start process rank 0."),
        (OMPI_NO_DAEMON, "ssh: Could not resolve hostname nosuchhost: Name or service not known; "
                         "ORTE was unable to reliably start one or more daemons."),
        ("-" * 74 + "\n", "without a message"),
    ],
)
def test_launcher_messages_are_read_from_between_the_dashes(text, message):
    for log in (text.splitlines(), [line for line in text.splitlines() if line.strip()]):
        got = launch.failure_message("the probe", launch.RunResult(137, log))
        assert message in got and "-----" not in got, got


@needs_open_mpi
def test_a_terminated_rankwise_ends_its_job_too(tmp_path):
    """The job runs in a process group of its own, out of reach of the signals
    sent to rankwise: a SIGTERM to rankwise must still end the job, with one line."""
    cmd = [sys.executable, "-m", "rankwise", "probe", "--launcher", "mpirun -np 2",
           "--group-by", "rank", "--sizes", "8,4M", "--rounds", "20000", "--time-budget", "60",
           "-o", str(tmp_path / "m.rwm")]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            stdin=subprocess.DEVNULL, start_new_session=True)
    rank = None
    try:
        rank = pid_of_rank(1, proc.pid, time.monotonic() + 30)
        time.sleep(1)  # measuring
        proc.send_signal(signal.SIGTERM)
        _, stderr = proc.communicate(timeout=30)
        deadline = time.monotonic() + 15
        while not _gone(rank) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert _gone(rank), "the probe's rank outlived rankwise"
    finally:
        for pid, kill in ((proc.pid, os.killpg), (rank, os.kill)):
            try:
                if pid:
                    kill(pid, signal.SIGKILL)
            except OSError:
                pass
    assert proc.returncode == 143
    assert [line for line in stderr.splitlines() if line.strip()] == ["rankwise: error: terminated"]
