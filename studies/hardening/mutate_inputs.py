"""Mutation corpus: damaged inputs through every reader and verb of rankwise.

    .venv/bin/python studies/hardening/mutate_inputs.py                 # 5,000 inputs, 2 workers
    .venv/bin/python studies/hardening/mutate_inputs.py --count 200     # the quick version the tests run

Valid seed inputs are made with rankwise itself (a model .rwm, matrices
.rwc/.npz, each importer's format, a hostfile, a SimGrid platform, every
launcher file, Slurm node lists, pattern specs); each case damages one
(bit flips, truncation, huge numbers, NaN/inf, non-UTF-8 bytes, CR/LF
games, deep nesting, NUL bytes, long lines, empty files, directories,
FIFOs) and runs a verb on it, in a fresh folder, with an output name that
is absent, an existing file, a directory or a FIFO.

Each case runs `rankwise.cli.main` as the `rankwise` command does, in a
process forked from a worker that has imported rankwise once (a fresh
interpreter per case would cost 0.4 s of imports), with a time limit
(SIGALRM) and an address-space limit. Platform and launcher files, which
no verb reads back alone, go through their readers the same way.

Printed: inputs tried, tracebacks (or deaths by a signal), hangs,
half-written files (an output present after a failure, an existing output
changed by a failure, a directory or FIFO replaced, a temporary left), and
errors that are not one `rankwise: error:` line. Exit status 1 when any
traceback, hang or half-written file was found.
"""

from __future__ import annotations

import argparse
import gzip
import io
import os
import random
import re
import shutil
import signal
import stat
import sys
import tempfile
import time
from dataclasses import dataclass, field
from multiprocessing import get_context
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # forked children must not inherit a thread pool
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("COLUMNS", "200")

import numpy as np  # noqa: E402

SENTINEL = b"previous content of the output\n"
WATCH_MODEL = "model-0001-20260101T000000Z.rwm"  # the models the watch-index seed lists
WATCH_MODEL2 = "model-0002-20260101T000100Z.rwm"
SEED_DIR_NAME = "seeds"


# ------------------------------------------------------------------ seeds
INTEL = """\
Intel(R) MPI Library Version 2019 Update 9

____ MPI Communication Statistics ____
Stats level: 1

~~~~ Process 0 of 2 on node n01 lifetime = 2001.50 usec

Data Transfers
Src     Dst     Amount(MB)      Transfers
-----------------------------------------
000 --> 000     0.000000e+00    0
000 --> 001     2.500000e-01    8
=========================================
Totals          2.500000e-01    8

~~~~ Process 1 of 2 on node n02 lifetime = 1998.00 usec

Data Transfers
Src     Dst     Amount(MB)      Transfers
-----------------------------------------
001 --> 000     1.000000e+00    3
001 --> 001     0.000000e+00    0
=========================================
Totals          1.000000e+00    3

____ End of stats.txt file ____
"""


def _prof(rank: int, peer: int) -> str:
    return ("# POINT TO POINT\n"
            f"E\t{rank}\t{peer}\t4096 bytes\t4 msgs sent\t0,0,0,4\n"
            f"I\t{rank}\t{peer}\t96 bytes\t12 msgs sent\n"
            "# OSC\n"
            f"S\t{rank}\t{peer}\t8192 bytes\t1 msgs sent\n"
            "# COLLECTIVES\n"
            f"C\t{rank}\t{peer}\t96 bytes\t12 msgs sent\n"
            "D\tMPI_COMM_WORLD\tprocs: 0,1\n"
            f"O2A\t{rank}\t0 bytes\t0 msgs sent\n"
            f"A2O\t{rank}\t0 bytes\t0 msgs sent\n"
            f"A2A\t{rank}\t96 bytes\t12 msgs sent\n")


def make_seeds(folder: Path) -> dict[str, bytes]:
    """name -> bytes of a valid input (the name's extension is the file's)."""
    from rankwise.cluster.launcher_files import FORMATS, write_placement
    from rankwise.traffic.matrix import CommMatrix
    from rankwise.model.model import MEASURED, Model
    from rankwise.cluster.placement import Placement
    from rankwise.sim.platform import PlatformSpec, generate

    folder.mkdir(parents=True, exist_ok=True)
    seeds: dict[str, bytes] = {}

    n, sizes = 4, (8, 1024, 65536)
    model = Model.empty([f"n{i}" for i in range(n)], sizes, ranks_per_node=np.full(n, 2))
    s = np.asarray(sizes, float)
    rtt = 2e-6 + s[None, None, :] / 5e9 + np.zeros((n, n, 1))
    for arr, f in ((model.rtt_median, 1.0), (model.rtt_min, 0.95), (model.rtt_max, 1.1)):
        arr[:] = rtt * f
    model.jitter[:] = 0.1
    model.samples[:] = 5
    model.state[:] = MEASURED
    np.fill_diagonal(model.state, 0)
    for arr in (model.rtt_median, model.rtt_min, model.rtt_max, model.jitter):
        arr[np.arange(n), np.arange(n)] = np.nan
    model.samples[np.arange(n), np.arange(n)] = 0
    model.measured_at[model.state != 0] = 1.79e9
    model.intra_state[:] = MEASURED
    for arr in (model.intra_min, model.intra_median, model.intra_max):
        arr[:] = rtt[0, 0] / 10
    model.intra_jitter[:], model.intra_samples[:] = 0.0, 5
    model.source, model.created, model.duration = "mutation seed", 1.79e9, 12.5
    model.refit()
    model.save(folder / "model.rwm")
    seeds["model.rwm"] = (folder / "model.rwm").read_bytes()

    matrix = CommMatrix(4, [0, 1, 2, 3, 0], [1, 2, 3, 0, 2], [2, 2, 2, 2, 1], [4096, 4096, 4096, 4096, 8],
                        source="mutation seed", pattern="ring:ranks=4,bytes=4K")
    for name in ("matrix.rwc", "matrix.npz"):
        matrix.save(folder / name)
        seeds[name] = (folder / name).read_bytes()

    seeds["list.txt"] = b"# src dst bytes msgs\n0 1 4096 4\n1,0,4096,4\n2 3 1e6 1\n3 0 512 2\n"
    seeds["header.csv"] = b"src,dst,bytes\n0,1,100\n1,2,200\n2,0,300\n"
    seeds["dense.mat"] = b"# bytes\n0 4096 0\n4096 0 512\n0 512 0\n# msgs\n0 4 0\n4 0 1\n0 1 0\n"
    seeds["coord.mtx"] = (b"%%MatrixMarket matrix coordinate integer general\n% a comment\n"
                          b"4 4 3\n1 2 4096\n2 1 4096\n3 4 512\n")
    seeds["array.mtx"] = b"%%MatrixMarket matrix array real general\n2 2\n0\n5\n7.0\n0\n"
    seeds["stats.txt"] = INTEL.encode()
    seeds["all.prof"] = (_prof(0, 1) + _prof(1, 0)).encode()
    seeds["run.0.prof"] = _prof(0, 1).encode()
    seeds["hostfile"] = b"# hosts\nn0 slots=2\nn1:2\nn2\nn2\nn3 slots=2 max_slots=4\n"

    generate(PlatformSpec(racks=1, nodes_per_rack=2, cores=2), folder / "platform")
    seeds["platform.xml"] = (folder / "platform" / "platform.xml").read_bytes()
    seeds["cluster.xml"] = (b"<?xml version='1.0'?>\n<platform version=\"4.1\">\n"
                            b"  <cluster id=\"c\" prefix=\"node-\" suffix=\".lan\" radical=\"0-3,8\" speed=\"1Gf\"\n"
                            b"           core=\"4\" bw=\"125MBps\" lat=\"50us\"/>\n"
                            b"  <zone id=\"z\" routing=\"Full\"><host id=\"h1\" speed=\"1Gf\" core=\"2\"/></zone>\n"
                            b"</platform>\n")

    placement = Placement(("n0", "n1"), [0, 1, 0, 1], [0, 0, 1, 1])
    for fmt in FORMATS:
        path = folder / f"launcher.{fmt}"
        write_placement(placement, fmt, path, app="./app arg")
        seeds[f"launcher.{fmt}"] = path.read_bytes()

    seeds["nodelist.arg"] = b"node[01-04,07],gpu3"
    seeds["nodelist2.arg"] = b"r[1-2]n[01-03]"
    seeds["pattern.arg"] = b"stencil3d:grid=4x4x4,neighbours=6,periodic=1,bytes=1M"
    seeds["pattern2.arg"] = b"ring:ranks=8,bytes=64K,bidirectional=1,iterations=3"
    seeds["pattern3.arg"] = b"groups:groups=2,per_group=4,bytes=1K,link_bytes=64K"
    seeds["slots.arg"] = b"2"
    seeds["ranks.arg"] = b"4"
    seeds["top.arg"] = b"10"
    # issue 25: the verbs and options added since, and the files they read
    seeds["rules.rwr"] = (b"rankwise-coll-rules 1\ncomm-size 4\nranks-per-node 1\neager-limit 65536\n"
                          b"trinary-order 0,2,1,3\n"
                          b"rule op=bcast root=0 bytes=0:1023 alg=tree parents=-1,0,0,1 segment=0 predicted=1e-6\n"
                          b"rule op=bcast root=0 bytes=1024:1048576 alg=trinary segment=8192\n"
                          b"rule op=reduce root=* bytes=0:65536 alg=binomial\n"
                          b"rule op=allreduce root=* bytes=0:100 alg=ring gain=0.2\n"
                          b"rule op=alltoall root=* bytes=0:100 alg=pairwise\n")
    seeds["index.tsv"] = (b"rankwise-watch 1\n# seq\ttime\tmodel\tpairs\tchanged\tlinks\tnodes\tsim_start\tsim_end\n"
                          b"1\t2026-01-01T00:00:00Z\t" + WATCH_MODEL.encode() + b"\t12\t-\t-\t-\t0\t0.0125\n"
                          b"2\t2026-01-01T00:01:00Z\t" + WATCH_MODEL2.encode() + b"\t6\t0\t-\t-\t1.0125\t1.02\n")
    seeds["switch.arg"] = b"radix=16,hops=3,packet=32,cycle=3.2e-9,load=0.8"
    seeds["degrade.arg"] = b"node:1:0.25:2"
    seeds["synthetic.arg"] = b"pack:2 numa:2 core:4 pu:1"
    seeds["gamma.arg"] = b"1e-9"
    return seeds


# ----------------------------------------------------------------- mutators
NUMBER = re.compile(rb"[0-9]+(?:\.[0-9]+)?(?:e[+-]?[0-9]+)?")
NASTY_NUMBERS = [
    b"9" * 4301, b"1" + b"0" * 5000, b"0" * 5000 + b"1", b"99999999999999999999", b"-1", b"-0", b"+7",
    b"nan", b"NaN", b"inf", b"-inf", b"1e300", b"-1e300", b"1e-300", b"9.2e18", b"9223372036854775807",
    b"9223372036854775808", b"18446744073709551616", b"2147483647", b"2147483648", b"4294967296",
    b"67108864", b"0", b"0.5", b"1e6", b"1_000", b"0x10", "\u0663".encode(), "\u00b2".encode(),
    b"", b"  ", b"1.7976931348623157e308", b"4.9e-324",
]


def _lines(data: bytes) -> list[bytes]:
    return data.split(b"\n")


def m_bitflip(data, rng):
    if not data:
        return b"\x80"
    b = bytearray(data)
    for _ in range(rng.randint(1, 8)):
        k = rng.randrange(len(b))
        b[k] ^= 1 << rng.randrange(8)
    return bytes(b)


def m_truncate(data, rng):
    return data[:rng.randrange(len(data) + 1)] if data else data


def m_cut_line_end(data, rng):
    return data.rstrip(b"\n")


def m_number(data, rng):
    spans = [m.span() for m in NUMBER.finditer(data)]
    if not spans:
        return data + rng.choice(NASTY_NUMBERS)
    for _ in range(rng.choice((1, 1, 1, 2, 3))):
        a, b = rng.choice(spans)
        data = data[:a] + rng.choice(NASTY_NUMBERS) + data[b:]
        spans = [m.span() for m in NUMBER.finditer(data)] or [(0, 0)]
    return data


def m_all_numbers(data, rng):
    value = rng.choice(NASTY_NUMBERS)
    return NUMBER.sub(lambda m: value, data)


def m_non_utf8(data, rng):
    k = rng.randrange(len(data) + 1)
    return data[:k] + rng.choice((b"\xff", b"\xfe\xff", b"\xc3", b"\xed\xa0\x80", b"\xe9t\xe9", b"\x80abc")) + data[k:]


def m_nul(data, rng):
    k = rng.randrange(len(data) + 1)
    return data[:k] + b"\x00" + data[k:]


def m_crlf(data, rng):
    how = rng.randrange(5)
    if how == 0:
        return data.replace(b"\n", b"\r\n")
    if how == 1:
        return data.replace(b"\n", b"\r")
    if how == 2:
        k = rng.randrange(len(data) + 1)
        return data[:k] + b"\r" + data[k:]
    if how == 3:
        return data.replace(b"\n", b"\n\r")
    return data.replace(b"\n", b"\x0c\n").replace(b" ", "\u2028".encode(), 1)


def m_lines(data, rng):
    lines = _lines(data)
    how = rng.randrange(4)
    k = rng.randrange(len(lines))
    if how == 0:
        lines.insert(k, lines[rng.randrange(len(lines))])
    elif how == 1 and len(lines) > 1:
        del lines[k]
    elif how == 2:
        j = rng.randrange(len(lines))
        lines[k], lines[j] = lines[j], lines[k]
    else:
        lines = lines[:k] + lines[:k] + lines[k:]  # a file written twice, partly
    return b"\n".join(lines)


def m_long_line(data, rng):
    k = rng.randrange(len(data) + 1)
    return data[:k] + rng.choice((b"x", b"9", b" ", b"[", b"<a>")) * rng.choice((10_000, 300_000)) + data[k:]


def m_nesting(data, rng):
    depth = rng.choice((100, 2000, 20000))
    kind = rng.randrange(4)
    if kind == 0:
        return data.replace(b"<zone", b"<zone id='z'>" * depth + b"<zone", 1) if b"<zone" in data else \
            b"<a>" * depth + data
    if kind == 1:
        return b"[" * depth + data + b"]" * depth
    if kind == 2:
        return data + b"\n" + b"(" * depth
    return data.replace(b":", b":" + b"a=" * depth, 1) if b":" in data else b"{" * depth + data


def m_blanks(data, rng):
    how = rng.randrange(4)
    if how == 0:
        return b"\xef\xbb\xbf" + data  # a UTF-8 BOM
    if how == 1:
        return data.replace(b" ", b"\t")
    if how == 2:
        return data.replace(b" ", "\u00a0".encode())
    return b"\n\n  \n" + data + b"\n\n\n"


def m_bytes(data, rng):
    b = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        k = rng.randrange(len(b) + 1)
        how = rng.randrange(3)
        if how == 0:
            b[k:k] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 8)))
        elif how == 1 and b:
            del b[k:k + rng.randint(1, 16)]
        elif b:
            b[min(k, len(b) - 1)] = rng.randrange(256)
    return bytes(b)


def m_gzip(data, rng):
    out = gzip.compress(data)
    return out[:rng.randrange(len(out) + 1)] if rng.random() < 0.5 else out


def m_empty(data, rng):
    return b""


TEXT_MUTATORS = [m_bitflip, m_truncate, m_cut_line_end, m_number, m_number, m_number, m_all_numbers, m_non_utf8,
                 m_nul, m_crlf, m_lines, m_lines, m_long_line, m_nesting, m_blanks, m_bytes, m_gzip, m_empty]
ARG_MUTATORS = [m_bitflip, m_truncate, m_number, m_number, m_number, m_all_numbers, m_non_utf8, m_long_line,
                m_nesting, m_blanks, m_bytes, m_empty]


def npz_variant(rng) -> dict:
    """The arrays of a damaged .npz (built, not bit-flipped: zip CRCs would
    catch flips before rankwise sees anything)."""
    d = dict(format=np.array("rankwise-matrix 1"), n_ranks=np.int64(4), src=np.array([0, 1, 2], np.int32),
             dst=np.array([1, 2, 3], np.int32), msgs=np.array([1, 1, 1], np.int64),
             bytes=np.array([8, 8, 8], np.int64), source=np.array("x"), pattern=np.array(""))
    key = rng.choice(list(d))
    choice = rng.randrange(12)
    if choice == 0:
        del d[key]
    elif choice == 1:
        d[key] = np.array([1, 2, 3])
    elif choice == 2:
        d[key] = np.array([[1, 2], [3, 4]])
    elif choice == 3:
        d[key] = np.array([np.nan, np.inf, -1.0])
    elif choice == 4:
        d[key] = np.array("9" * 5000)
    elif choice == 5:
        d[key] = np.array(2**62)
    elif choice == 6:
        d[key] = np.array([], np.int64)
    elif choice == 7:
        d[key] = np.array(["a", "b"])
    elif choice == 8:
        d["format"] = np.array(rng.choice(["rankwise-matrix 2", "rankwise-matrix " + "9" * 5000,
                                           "rankwise-matrix \u00b2", "rankwise-matrix", "", "x 1"]))
    elif choice == 9:
        d[key] = np.array(-5)
    elif choice == 10:
        d[key] = np.array(1.5)
    else:
        d[key] = np.array([True, False, True])
    return d


def make_npz(rng) -> bytes:
    buf = io.BytesIO()
    np.savez(buf, **npz_variant(rng))
    return buf.getvalue()


# ------------------------------------------------------------------ targets
@dataclass
class Target:
    name: str
    seed: str                    # a key of the seeds
    argv: list[str]              # {in}, {out}, {arg}, {good_rwc}, {good_model} are filled in
    out_ext: str | None = None   # the output written on success (None: nothing is written)
    reader: str | None = None    # instead of the CLI: 'platform' or 'launcher:FMT'
    in_name: str | None = None   # the damaged file's name (default: the seed's)


TARGETS = [
    Target("show model", "model.rwm", ["show", "{in}"]),
    Target("map --model", "model.rwm", ["map", "--model", "{in}", "--pattern", "ring:ranks=4,bytes=1K",
                                        "--algorithm", "greedy", "-o", "{out}"], ".txt"),
    Target("show rwc", "matrix.rwc", ["show", "{in}"]),
    Target("pattern show rwc", "matrix.rwc", ["pattern", "show", "{in}"]),
    Target("import rwc", "matrix.rwc", ["import", "{in}", "-o", "{out}"], ".npz"),
    Target("map --matrix rwc", "matrix.rwc", ["map", "--matrix", "{in}", "--nodelist", "n[1-4]", "--objective",
                                              "hop-bytes", "--algorithm", "greedy", "-o", "{out}"], ".txt"),
    Target("show npz", "matrix.npz", ["show", "{in}"]),
    Target("import npz", "matrix.npz", ["import", "{in}", "-o", "{out}"], ".rwc"),
    Target("map --matrix npz", "matrix.npz", ["map", "--matrix", "{in}", "--model", "{good_model}",
                                              "--algorithm", "greedy", "-o", "{out}"], ".txt"),
    Target("import list", "list.txt", ["import", "{in}", "-o", "{out}"], ".rwc"),
    Target("import list --format", "header.csv", ["import", "{in}", "--format", "list", "-o", "{out}"], ".npz"),
    Target("import dense", "dense.mat", ["import", "{in}", "-o", "{out}"], ".rwc"),
    Target("import dense --format", "dense.mat", ["import", "{in}", "-f", "dense", "--ranks", "3", "-o", "{out}"],
           ".rwc"),
    Target("import mtx", "coord.mtx", ["import", "{in}", "-o", "{out}"], ".rwc"),
    Target("import mtx array", "array.mtx", ["import", "{in}", "--format", "mtx", "-o", "{out}"], ".rwc"),
    Target("import intel", "stats.txt", ["import", "{in}", "-o", "{out}"], ".rwc"),
    Target("import intel --format", "stats.txt", ["import", "{in}", "--format", "intel", "-o", "{out}"], ".npz"),
    Target("import openmpi file", "all.prof", ["import", "{in}", "--format", "openmpi", "-o", "{out}"], ".rwc"),
    Target("import openmpi dir", "run.0.prof", ["import", "{dir}", "-o", "{out}"], ".rwc", in_name="run.0.prof"),
    Target("import openmpi --kinds", "all.prof", ["import", "{in}", "--kinds", "EC", "-o", "{out}"], ".rwc"),
    Target("map --hostfile", "hostfile", ["map", "--matrix", "{good_rwc}", "--hostfile", "{in}", "--objective",
                                          "hop-bytes", "--algorithm", "greedy", "-o", "{out}"], ".txt"),
    Target("map --model --hostfile", "hostfile", ["map", "--matrix", "{good_rwc}", "--model", "{good_model}",
                                                  "--hostfile", "{in}", "--format", "openmpi", "-o", "{out}"],
           ".rankfile"),
    Target("map --nodelist", "nodelist.arg", ["map", "--matrix", "{good_rwc}", "--nodelist={arg}",
                                              "--objective", "hop-bytes", "--algorithm", "greedy", "-o", "{out}"],
           ".txt"),
    Target("map --nodelist 2", "nodelist2.arg", ["map", "--matrix", "{good_rwc}", "--nodelist={arg}",
                                                 "--objective", "hop-bytes", "--format", "slurm", "-o", "{out}"],
           ".hosts"),
    Target("pattern spec", "pattern.arg", ["pattern", "spec", "-o", "{out}", "--", "{arg}"], ".rwc"),
    Target("pattern spec 2", "pattern2.arg", ["pattern", "spec", "-o", "{out}", "--", "{arg}"], ".npz"),
    Target("pattern spec 3", "pattern3.arg", ["pattern", "spec", "-o", "{out}", "--", "{arg}"], ".rwc"),
    Target("map --pattern", "pattern2.arg", ["map", "--pattern={arg}", "--nodelist", "n[1-8]", "--objective",
                                             "hop-bytes", "--algorithm", "greedy", "-o", "{out}"], ".txt"),
    Target("map --slots", "slots.arg", ["map", "--matrix", "{good_rwc}", "--nodelist", "n[1-4]", "--slots={arg}",
                                        "--objective", "hop-bytes", "-o", "{out}"], ".txt"),
    Target("map --ranks", "ranks.arg", ["map", "--matrix", "{good_rwc}", "--model", "{good_model}", "--ranks={arg}",
                                        "-o", "{out}"], ".txt"),
    Target("import --ranks", "ranks.arg", ["import", "{good_rwc}", "--ranks={arg}", "-o", "{out}"], ".npz"),
    Target("show --top", "top.arg", ["show", "{good_model}", "--top={arg}"]),
    Target("optimize --matrix", "matrix.rwc", ["optimize", "--sim", "{good_platform}", "--model", "{good_model}",
                                               "--max-age", "1e12", "--no-verify", "--out", "{folder}/opt",
                                               "--matrix", "{in}"]),
    Target("optimize --pattern", "pattern2.arg", ["optimize", "--sim", "{good_platform}", "--model",
                                                  "{good_model}", "--max-age", "1e12", "--no-verify", "--out",
                                                  "{folder}/opt", "--pattern={arg}"]),
    # issue 25: every --plot by the -o rules, bounded --ranks, finite numbers, synthetic nodes, rules files,
    # watch indexes
    Target("show --plot", "model.rwm", ["show", "{in}", "--plot", "{out}"], ".png"),
    Target("diff --plot", "model.rwm", ["diff", "{in}", "{good_model}", "--plot", "{out}"], ".png"),
    Target("coll predict --ranks", "ranks.arg", ["coll", "predict", "--model", "{good_model}", "--op", "bcast",
                                                 "--sizes", "8", "--ranks={arg}", "--plot", "{out}"], ".png"),
    Target("coll tune --ranks", "ranks.arg", ["coll", "tune", "--model", "{good_model}", "--ops", "bcast",
                                              "--sizes", "8", "--ranks={arg}", "-o", "{out}"], ".rwr"),
    Target("coll predict --gamma", "gamma.arg", ["coll", "predict", "--model", "{good_model}", "--op", "reduce",
                                                 "--sizes", "8", "--ranks", "4", "--gamma={arg}"]),
    Target("predict --switch", "switch.arg", ["predict", "--model", "{good_model}", "--op", "alltoall", "--ranks", "4",
                                              "--sizes", "1K", "--switch={arg}", "-o", "{out}"], ".csv"),
    Target("sim platform --degrade", "degrade.arg", ["sim", "platform", "--racks", "1", "--nodes-per-rack", "2",
                                                     "--cores", "1", "--degrade={arg}", "-o", "{folder}/plat"]),
    Target("node show --synthetic", "synthetic.arg", ["node", "show", "--synthetic={arg}"]),
    Target("coll rules", "rules.rwr", [], reader="rules"),
    Target("watch index", "index.tsv", [], reader="watch"),
    Target("platform xml", "platform.xml", [], reader="platform"),
    Target("platform xml cluster", "cluster.xml", [], reader="platform"),
    *[Target(f"launcher {fmt}", f"launcher.{fmt}", [], reader=f"launcher:{fmt}")
      for fmt in ("openmpi", "mpich", "intel", "slurm", "permutation")],
]

SPECIAL_INPUTS = ("empty", "directory", "fifo", "absent", "devnull", "symlink-loop")
OUTPUT_KINDS = ("absent", "absent", "existing", "existing", "directory", "fifo", "missing-folder", "link",
                "devlink")


@dataclass
class Case:
    number: int
    target: int
    mutation: str
    data: bytes | None           # the damaged input (None: a special input)
    special: str | None
    output: str


@dataclass
class Outcome:
    case: Case
    code: int | None
    signal: int | None
    stderr: str
    seconds: float = 0.0
    findings: list[str] = field(default_factory=list)


def make_cases(count: int, seed: int, seeds: dict[str, bytes]) -> list[Case]:
    rng = random.Random(seed)
    cases = []
    for number in range(count):
        t = number % len(TARGETS)
        target = TARGETS[t]
        is_arg = target.seed.endswith(".arg")
        output = rng.choice(OUTPUT_KINDS) if target.out_ext else "absent"
        if not is_arg and rng.random() < 0.04:
            cases.append(Case(number, t, "special", None, rng.choice(SPECIAL_INPUTS), output))
            continue
        if target.seed == "matrix.npz" and rng.random() < 0.5:
            cases.append(Case(number, t, "npz arrays", make_npz(rng), None, output))
            continue
        data = seeds[target.seed]
        names = []
        for _ in range(rng.choice((1, 1, 1, 2, 3))):
            mutator = rng.choice(ARG_MUTATORS if is_arg else TEXT_MUTATORS)
            data = mutator(data, rng)
            names.append(mutator.__name__[2:])
        cases.append(Case(number, t, "+".join(names), data, None, output))
    return cases


# ------------------------------------------------------------------ running
_STATE: dict = {}


def _init_worker(seed_dir: str, work: str, timeout: float, memory: int) -> None:
    import rankwise.cli  # noqa: F401  imported once, before the children are forked
    import rankwise.cluster.launcher_files  # noqa: F401
    import rankwise.sim.platform_file  # noqa: F401
    _STATE.update(seed_dir=Path(seed_dir), work=Path(work), timeout=timeout, memory=memory)


def _prepare(case: Case, folder: Path) -> tuple[list[str], Path | None, Path]:
    target = TARGETS[case.target]
    seeds = _STATE["seed_dir"]
    folder.mkdir(parents=True)
    in_name = target.in_name or target.seed
    inp = folder / "in" / in_name
    inp.parent.mkdir()
    arg = ""
    if target.seed.endswith(".arg"):
        arg = case.data.replace(b"\x00", b"").decode("utf-8", "surrogateescape")  # as argv arrives
    elif case.special is None:
        inp.write_bytes(case.data)
    elif case.special == "empty":
        inp.write_bytes(b"")
    elif case.special == "directory":
        inp.mkdir()
    elif case.special == "fifo":
        os.mkfifo(inp)
    elif case.special == "devnull":
        inp.symlink_to("/dev/null")
    elif case.special == "symlink-loop":
        inp.symlink_to(inp.name)
    if target.in_name == "run.0.prof" and case.special is None:  # a run of two ranks, one file damaged
        (inp.parent / "run.1.prof").write_bytes(_prof(1, 0).encode())

    out = None
    if target.out_ext:
        out = folder / ("out" + target.out_ext)
        if case.output == "existing":
            out.write_bytes(SENTINEL)
        elif case.output == "directory":
            out.mkdir()
        elif case.output == "fifo":
            os.mkfifo(out)
        elif case.output == "missing-folder":
            out = folder / "new" / "deeper" / ("out" + target.out_ext)
        elif case.output == "link":  # followed: the target written, the link kept
            (folder / ("target" + target.out_ext)).write_bytes(SENTINEL)
            out.symlink_to("target" + target.out_ext)
        elif case.output == "devlink":  # a link to a device: refused as the device (never /dev/null itself)
            out.symlink_to("/dev/null")
    words = {"{in}": str(inp), "{dir}": str(inp.parent), "{arg}": arg, "{out}": str(out),
             "{good_rwc}": str(seeds / "matrix.rwc"), "{good_model}": str(seeds / "model.rwm"),
             "{good_platform}": str(seeds / "platform" / "platform.xml"), "{folder}/opt": str(folder / "opt"),
             "{folder}/plat": str(folder / "plat")}
    # '--nodelist={arg}': an argument starting with '-' stays a value, as a careful user would write it
    argv = [words.get(w, w) if "{arg}" not in w or w == "{arg}" else w.replace("{arg}", arg) for w in target.argv]
    (folder / "argv").write_text(repr(["rankwise", *argv]) + "\n")  # to run a finding again by hand
    return argv, out, inp


def _child(target: Target, argv: list[str], inp: Path, folder: Path) -> None:
    """In the forked child: run the CLI (or a reader) as `rankwise` would."""
    import resource
    import traceback

    signal.signal(signal.SIGALRM, signal.SIG_DFL)
    signal.alarm(int(_STATE["timeout"]))
    resource.setrlimit(resource.RLIMIT_AS, (_STATE["memory"], _STATE["memory"]))
    os.chdir(folder)
    fd_out = os.open(folder / "stdout", os.O_WRONLY | os.O_CREAT, 0o644)
    fd_err = os.open(folder / "stderr", os.O_WRONLY | os.O_CREAT, 0o644)
    os.dup2(fd_out, 1)
    os.dup2(fd_err, 2)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    code = 0
    try:
        if target.reader is None:
            from rankwise.cli import main

            sys.argv = ["rankwise", *argv]
            main()
        else:
            from rankwise.util.errors import RankwiseError

            try:
                if target.reader == "platform":
                    from rankwise.sim.platform_file import read_platform

                    read_platform(inp)
                elif target.reader == "rules":
                    from rankwise.coll.selection import Rules

                    Rules(inp).close()
                elif target.reader == "watch":
                    from rankwise.measure.watch import read_index

                    for name in (WATCH_MODEL, WATCH_MODEL2):
                        shutil.copyfile(_STATE["seed_dir"] / "model.rwm", inp.parent / name)
                    read_index(inp.parent)
                else:
                    from rankwise.cluster.launcher_files import read_placement

                    read_placement(target.reader.split(":")[1], inp)
            except RankwiseError as exc:
                print(f"rankwise: error: {exc}", file=sys.stderr)
                code = exc.exit_code
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except BaseException:  # noqa: BLE001 - what a user would see as a traceback
        traceback.print_exc()
        code = 1
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


def run_case(case: Case) -> Outcome:
    target = TARGETS[case.target]
    folder = _STATE["work"] / f"case-{case.number}"
    argv, out, inp = _prepare(case, folder)
    sys.stdout.flush()
    sys.stderr.flush()
    start = time.monotonic()
    pid = os.fork()
    if pid == 0:
        _child(target, argv, inp, folder)
    deadline = time.monotonic() + _STATE["timeout"] + 10
    status = None
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        time.sleep(0.005)
    else:
        os.kill(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    sig = -code if code < 0 else None
    stderr = (folder / "stderr").read_text(errors="replace")
    outcome = Outcome(case, None if sig else code, sig, stderr, time.monotonic() - start)
    _judge(outcome, out, folder)
    if not outcome.findings:
        shutil.rmtree(folder, ignore_errors=True)
    return outcome


def _judge(o: Outcome, out: Path | None, folder: Path) -> None:
    if o.signal in (signal.SIGALRM, signal.SIGKILL):
        o.findings.append("hang")
        return
    if o.signal is not None:
        o.findings.append(f"traceback (killed by signal {signal.Signals(o.signal).name})")
    elif "Traceback (most recent call last)" in o.stderr:
        o.findings.append("traceback")
    failed = o.code != 0
    if "Warning:" in o.stderr and not o.findings:
        o.findings.append("warning printed")
    if failed and not o.findings:
        lines = [line for line in o.stderr.split("\n") if line.strip()]
        if len(lines) != 1 or not lines[0].startswith("rankwise: error: "):
            # typer's own usage box (an option that is not an integer, say) is told apart
            boxed = o.code == 2 and any(line.startswith("╭") for line in lines)
            o.findings.append("error not one line" + (" (typer usage box)" if boxed else ""))
    if out is not None:
        kind = o.case.output
        if kind in ("absent", "missing-folder") and failed and os.path.lexists(out):
            o.findings.append("half-written (output left after a failure)")
        if kind == "existing" and failed and out.read_bytes() != SENTINEL:
            o.findings.append("half-written (existing output changed by a failure)")
        if kind == "directory" and not out.is_dir():
            o.findings.append("half-written (a directory replaced)")
        if kind == "fifo" and not stat.S_ISFIFO(os.lstat(out).st_mode):
            o.findings.append("half-written (a FIFO replaced)")
        if kind in ("directory", "fifo") and not failed:
            o.findings.append("half-written (wrote to a directory or FIFO and succeeded)")
        if kind in ("link", "devlink") and not out.is_symlink():
            o.findings.append("half-written (a symbolic link replaced instead of followed)")
        if kind == "link" and failed and (out.parent / ("target" + out.suffix)).read_bytes() != SENTINEL:
            o.findings.append("half-written (a link's target changed by a failure)")
        if kind == "devlink" and not failed:
            o.findings.append("half-written (wrote through a link to a device and succeeded)")
    temps = [p for p in folder.rglob("*") if re.search(r"\.tmp(\.|$)", p.name) or p.name.startswith(".rankwise-")]
    if temps:
        o.findings.append(f"half-written (temporary left: {temps[0].name})")


# ------------------------------------------------------------------ main
def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--count", type=int, default=5000, help="inputs to try (default 5000)")
    ap.add_argument("--seed", type=int, default=1, help="random seed of the mutations")
    ap.add_argument("--workers", type=int, default=2, help="worker processes (at most 2)")
    ap.add_argument("--timeout", type=float, default=30, help="seconds a case may take before it is a hang")
    ap.add_argument("--memory", type=int, default=2048, help="MiB of address space per case")
    ap.add_argument("--keep", type=Path, help="keep the folders of cases with findings here")
    ap.add_argument("--show", type=int, default=12, help="findings to describe (default 12)")
    args = ap.parse_args(argv)
    workers = max(1, min(args.workers, 2))

    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="rankwise-mutate-") as tmp:
        root = Path(args.keep) if args.keep else Path(tmp)
        seed_dir = root / SEED_DIR_NAME
        seeds = make_seeds(seed_dir)
        cases = make_cases(args.count, args.seed, seeds)
        work = root / "cases"
        work.mkdir(parents=True, exist_ok=True)
        ctx = get_context("fork")
        with ctx.Pool(workers, _init_worker, (str(seed_dir), str(work), args.timeout,
                                               args.memory << 20)) as pool:
            outcomes = list(pool.imap_unordered(run_case, cases, chunksize=4))

    outcomes.sort(key=lambda o: o.case.number)
    count = lambda prefix: sum(any(f.startswith(prefix) for f in o.findings) for o in outcomes)  # noqa: E731
    tracebacks, hangs, half = count("traceback"), count("hang"), count("half-written")
    not_one_line = count("error not one line")
    warnings = count("warning printed")
    failures = sum(o.code not in (0, None) for o in outcomes)
    print(f"inputs tried: {len(outcomes)} ({len(TARGETS)} readers and verbs, "
          f"{time.monotonic() - started:.0f} s, {workers} workers)")
    print(f"refused with an error: {failures}; accepted: {sum(o.code == 0 for o in outcomes)}")
    print(f"tracebacks: {tracebacks}")
    print(f"hangs: {hangs}")
    print(f"half-written files: {half}")
    print(f"errors not one 'rankwise: error:' line: {not_one_line} "
          f"(of which typer usage boxes: {count('error not one line (typer')})")
    print(f"warnings printed (numpy or Python): {warnings}")
    slow = sorted(outcomes, key=lambda o: -o.seconds)[:3]
    print("slowest: " + "; ".join(f"{TARGETS[o.case.target].name} ({o.case.special or o.case.mutation}) "
                                  f"{o.seconds:.1f} s" for o in slow))
    shown = [o for o in outcomes if o.findings][:args.show]
    for o in shown:
        t = TARGETS[o.case.target]
        tail = [line for line in o.stderr.splitlines() if line.strip()][-1:] or ["(no stderr)"]
        print(f"  case {o.case.number} [{t.name}; {o.case.special or o.case.mutation}; output {o.case.output}]: "
              f"{', '.join(o.findings)}: {tail[0][:160]}")
    return 1 if tracebacks or hangs or half else 0


if __name__ == "__main__":
    sys.exit(main())
