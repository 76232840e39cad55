"""Mutation runs of the collectives library: damaged environments around real MPI jobs.

    .venv/bin/python studies/hardening/mutate_library.py               # 300 runs
    .venv/bin/python studies/hardening/mutate_library.py --count 20    # the quick version the tests run

Each run is an MPI job (Open MPI on this host, 2-6 ranks) with librankwise_coll, running either
tests/engine/mpi/coll_check.c (every collective against the MPI's own, byte for byte) or
pipeline_stress.c (long broadcasts, reduces and allreduces, 1 KiB-4 MiB) under the preload,
with one to four of the library's variables set to a value drawn from what users get wrong:
valid and unknown algorithms, numbers out of range or beyond 64 bits, booleans that are not
booleans, 100,000-character values, and files that are not what they should be (a valid rules
file or model, one damaged by bit flips or truncation, /dev/zero, a FIFO with no writer, a
directory, a missing path, a rules file for another rank count).

Counted: hangs (no end within the time limit), deaths by a signal, wrong results (a failure
line or a non-zero exit), and stderr that is not one short line per problem (a line repeated,
longer than 300 characters, or holding bytes that are not UTF-8). Exit status 1 when any was
found."""

from __future__ import annotations

import argparse
import os
import random
import re
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from rankwise.util import paths
from rankwise.cluster.launch import mpi_environment
from rankwise.model.model import MEASURED, Model

ROOT = Path(__file__).resolve().parents[2]
SOURCES = ROOT / "tests" / "engine" / "mpi"
LIB = paths.PACKAGE_DIR / "_lib"
OPS = ("BCAST", "REDUCE", "GATHER", "SCATTER", "ALLREDUCE", "ALLGATHER", "ALLTOALL")
ALGORITHMS = ("binomial", "knomial", "flat", "chain", "hier", "ring", "rd", "recursive_doubling", "trinary",
              "multiring", "pairwise", "symmetric", "passthrough")
LONG_LINE = 300


@dataclass
class Tally:
    runs: int = 0
    hangs: list[str] = field(default_factory=list)
    signals: list[str] = field(default_factory=list)
    wrong: list[str] = field(default_factory=list)
    noisy: list[str] = field(default_factory=list)
    seconds: float = 0.0


def build(out: Path) -> tuple[Path, Path]:
    env = {k: v for k, v in os.environ.items() if k != "SMPI_PRETEND_CC"}
    check = out / "coll_check"
    subprocess.run(["mpicc", "-O1", f"-I{LIB / 'include'}", str(SOURCES / "coll_check.c"), f"-L{LIB}",
                    f"-Wl,-rpath,{LIB}", "-lrankwise_coll", "-o", str(check)], check=True, env=env,
                   capture_output=True)
    stress = out / "pipeline_stress"
    subprocess.run(["mpicc", "-O1", str(SOURCES / "pipeline_stress.c"), "-o", str(stress)], check=True, env=env,
                   capture_output=True)
    return check, stress


def model_for(n: int, path: Path, rng: random.Random) -> Path:
    """Ranks as nodes (`rankwise probe --group-by rank` names them host:rank), random distances."""
    names = [f"{socket.gethostname()}:{r}" for r in range(n)]
    m = Model.empty(names, [8, 1 << 20])
    for i in range(n):
        for j in range(n):
            if i != j:
                a = rng.uniform(1e-6, 20e-6)
                m.state[i, j] = MEASURED
                m.alpha[i, j], m.beta[i, j], m.measured_at[i, j] = a, rng.uniform(1e-10, 1e-9), 1.79e9
                small, big = 2 * a + 8 * m.beta[i, j], 2 * a + (1 << 20) * m.beta[i, j]
                m.rtt_min[i, j] = m.rtt_median[i, j] = m.rtt_max[i, j] = [small, big]
                m.jitter[i, j], m.samples[i, j] = [0.0, 0.0], [5, 5]
    m.source, m.created, m.duration = "mutation study", 1.79e9, 1.0
    m.save(path)
    return path


def rules_for(n: int, path: Path, rng: random.Random) -> Path:
    lines = ["rankwise-coll-rules 1", f"comm-size {n}"]
    if rng.random() < 0.5:
        order = list(range(n))
        rng.shuffle(order)
        lines.append("trinary-order " + ",".join(map(str, order)))
    for op, algs in (("bcast", ("binomial", "knomial", "chain", "trinary", "flat")),
                     ("reduce", ("binomial", "trinary", "chain")), ("gather", ("binomial", "flat")),
                     ("allreduce", ("ring", "recursive_doubling", "trinary"))):
        lo = 0
        for hi in sorted(rng.sample([64, 1024, 65536, 1 << 20], 2)) + [1 << 30]:
            root = "*" if op == "allreduce" or rng.random() < 0.5 else "0"
            lines.append(f"rule op={op} root={root} bytes={lo}:{hi} alg={rng.choice(algs)} segment=0")
            lo = hi + 1
    path.write_text("\n".join(lines) + "\n")
    return path


def damaged(src: Path, path: Path, rng: random.Random) -> Path:
    data = bytearray(src.read_bytes())
    if rng.random() < 0.5 and data:
        del data[rng.randrange(len(data)):]
    else:
        for _ in range(rng.randint(1, 8)):
            if data:
                data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
    path.write_bytes(bytes(data))
    return path


def a_file(kind: str, n: int, work: Path, rng: random.Random) -> str:
    """A path for RANKWISE_COLL_RULES or RANKWISE_MODEL, valid or not."""
    make = rules_for if kind == "rules" else model_for
    good = make(n, work / f"good.{kind}", rng)
    choice = rng.choice(["good", "good", "damaged", "damaged", "zero", "fifo", "dir", "missing", "other-size"])
    if choice == "good":
        return str(good)
    if choice == "damaged":
        return str(damaged(good, work / f"bad.{kind}", rng))
    if choice == "zero":
        return "/dev/zero"
    if choice == "fifo":
        fifo = work / f"fifo.{kind}"
        os.mkfifo(fifo)
        return str(fifo)
    if choice == "dir":
        return str(work)
    if choice == "missing":
        return str(work / "nowhere")
    return str(make(n + 1, work / f"other.{kind}", rng))


def a_value(var: str, n: int, work: Path, rng: random.Random) -> str:
    if var == "RANKWISE_COLL_RULES":
        return a_file("rules", n, work, rng)
    if var == "RANKWISE_MODEL":
        return a_file("model", n, work, rng)
    if var in ("RANKWISE_COLL_TRACE", "RANKWISE_COLL_PROBE", "RANKWISE_COLL_VERIFY"):
        return rng.choice(["1", "0", "true", "FALSE", "yes", "no", "on", "off", "2", "abc", "", " 1"])
    if var in ("RANKWISE_COLL_SEGMENT", "RANKWISE_COLL_KNOMIAL_K", "RANKWISE_COLL_MAX_EVALS",
               "RANKWISE_COLL_ALLTOALL_CAP"):
        return rng.choice(["0", "1", "3", "7", "100", "4096", "-1", "1e3", "abc", "99999999999999999999",
                           str(2 ** 31), "0x10", "", "12 "])
    if var == "RANKWISE_CART_WEIGHTS":
        return rng.choice(["1,2", "1,1,1", "-1,2", "nan,1", "1e308,1", "x", ""])
    return rng.choice([*ALGORITHMS, *ALGORITHMS, "fastest", "", "x" * 100_000, "BINOMIAL", "tree"])


VARIABLES = [f"RANKWISE_COLL_{op}" for op in OPS] + [
    "RANKWISE_COLL_RULES", "RANKWISE_MODEL", "RANKWISE_COLL_TRACE", "RANKWISE_COLL_PROBE", "RANKWISE_COLL_VERIFY",
    "RANKWISE_COLL_SEGMENT", "RANKWISE_COLL_KNOMIAL_K", "RANKWISE_COLL_MAX_EVALS", "RANKWISE_COLL_ALLTOALL_CAP",
    "RANKWISE_CART_WEIGHTS"]


def one_run(k: int, programs: tuple[Path, Path], work: Path, rng: random.Random, timeout: float, t: Tally) -> None:
    n = rng.randint(2, 6)
    variables = {v: a_value(v, n, work, rng) for v in rng.sample(VARIABLES, rng.randint(1, 4))}
    check, stress = programs
    stressing = rng.random() < 0.3
    args = [str(stress), "1"] if stressing else [str(check), str(rng.choice([1, 301, 2001]))]
    cmd = ["mpirun", "-np", str(n), "--oversubscribe", "--mca", "mpi_yield_when_idle", "1"]
    if stressing:
        cmd += ["-x", f"LD_PRELOAD={LIB / 'librankwise_coll.so'}"]
    for name, value in variables.items():
        cmd += ["-x", f"{name}={value}"]
    shown = {name: (value[:40] + "...") if len(value) > 40 else value for name, value in variables.items()}
    what = f"run {k}: {n} ranks, {Path(args[0]).name}, {shown}"
    t.runs += 1
    start = time.monotonic()
    try:
        r = subprocess.run(cmd + args, capture_output=True, text=True, errors="replace", env=mpi_environment(),
                           timeout=timeout, stdin=subprocess.DEVNULL, start_new_session=True)
    except subprocess.TimeoutExpired:
        subprocess.run(["pkill", "-9", "-f", str(args[0])], capture_output=True)
        t.hangs.append(what)
        return
    finally:
        t.seconds += time.monotonic() - start
    if r.returncode != 0 and re.search(r"Signal: |exited on signal", r.stderr):
        t.signals.append(f"{what}: {r.stderr[-300:]}")
        return
    if r.returncode != 0 or not re.search(r": \d+ checks, 0 failures", r.stdout):
        t.wrong.append(f"{what}: exit {r.returncode}, {r.stdout[-200:]} {r.stderr[-300:]}")
        return
    lines = [line for line in r.stderr.splitlines() if line.startswith("rankwise-coll:")
             and ("warning" in line or "error" in line)]
    repeated = [line for line, c in Counter(lines).items() if c > 1]
    long = [line for line in lines if len(line) > LONG_LINE or "\ufffd" in line]  # or bytes that are not text
    if repeated or long:
        t.noisy.append(f"{what}: {(repeated or long)[0][:200]} (x{Counter(lines)[(repeated or long)[0]]})")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--count", type=int, default=300, help="MPI runs (default 300)")
    ap.add_argument("--seed", type=int, default=1, help="random seed of the environments")
    ap.add_argument("--timeout", type=float, default=90, help="seconds a run may take before it is a hang")
    ap.add_argument("--show", type=int, default=8, help="findings to describe per kind")
    a = ap.parse_args(argv)
    rng = random.Random(a.seed)
    t = Tally()
    with tempfile.TemporaryDirectory(prefix="rankwise-mutate-lib-") as tmp:
        programs = build(Path(tmp))
        for k in range(a.count):
            work = Path(tmp) / f"run-{k}"
            work.mkdir()
            one_run(k, programs, work, rng, a.timeout, t)
            if (k + 1) % 25 == 0:
                print(f"  {k + 1}/{a.count} runs, {t.seconds:.0f} s", file=sys.stderr, flush=True)
    print(f"mutate_library: {t.runs} MPI runs in {t.seconds:.0f} s: {len(t.hangs)} hangs, {len(t.signals)} deaths "
          f"by a signal, {len(t.wrong)} wrong results or failed runs, {len(t.noisy)} with repeated or long "
          f"stderr lines")
    for kind, found in (("hang", t.hangs), ("signal", t.signals), ("wrong", t.wrong), ("stderr", t.noisy)):
        for line in found[: a.show]:
            print(f"  {kind}: {line}")
    return 1 if t.hangs or t.signals or t.wrong or t.noisy else 0


if __name__ == "__main__":
    np.seterr(all="ignore")
    sys.exit(main())
