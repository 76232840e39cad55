"""Importers: every accepted input against matrices worked out by hand,
format detection, and every refusal as one 'path:line: message' error.

The fixtures are written here, in the documented syntax of each format
(docs/reference/formats.md, "Importers"); none is copied from another project."""

from __future__ import annotations

import gzip
import re
import shutil
import subprocess

import numpy as np
import pytest
from conftest import run_cli
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rankwise.util.errors import RankwiseError
from rankwise.traffic.importers import FORMATS, detect_format, format_name, load_comm
from rankwise.cluster.launch import mpi_environment
from rankwise.traffic.matrix import CommMatrix

MB = 1 << 20


def write(path, text: str):
    path.write_text(text)
    return path


def line_of(text: str, needle: str, nth: int = 1) -> int:
    """1-based number of the nth line of text that contains needle."""
    hits = [k for k, line in enumerate(text.splitlines(), 1) if needle in line]
    return hits[nth - 1]


def fails(where: str, message: str, *args, **kwargs):
    """load_comm(*args) raises exactly 'where: message...'."""
    with pytest.raises(RankwiseError) as info:
        load_comm(*args, **kwargs)
    text = str(info.value)
    assert text.startswith(f"{where}: "), text
    assert message in text, text
    assert "\n" not in text
    return text


def dense_of(m: CommMatrix):
    return m.to_dense().tolist(), m.to_dense("msgs").tolist()


# ====================================================== Intel MPI statistics
INTEL = """\
Intel(R) MPI Library Version 2019 Update 9

____ MPI Communication Statistics ____
Stats level: 2
P2P scope:< FULL >
Collectives scope:< FULL >

~~~~ Process 0 of 3 on node n01 lifetime = 2001.50 usec

Data Transfers
Src     Dst     Amount(MB)      Transfers
-----------------------------------------
000 --> 000     0.000000e+00    0
000 --> 001     2.500000e-01    8
000 --> 002     9.536743e-06    1
=========================================
Totals          2.500095e-01    9

Communication Activity
Operation       Volume(MB)      Calls
-----------------------------------------
P2P
Csend           2.500095e-01    9
Send            0.000000e+00    0
Collectives
Barrier         0.000000e+00    2
Allreduce       6.103516e-05    4
=========================================

~~~~ Process 1 of 3 on node n01 lifetime = 1998.00 usec

Data Transfers
Src     Dst     Amount(MB)      Transfers
-----------------------------------------
001 --> 000     1.000000e+00    3
001 --> 001     0.000000e+00    0
001 --> 002     0.000000e+00    0
=========================================
Totals          1.000000e+00    3

Communication Activity
Operation       Volume(MB)      Calls
-----------------------------------------
P2P
Csend           1.000000e+00    3
Collectives
Barrier         0.000000e+00    2
Allreduce       6.103516e-05    4
=========================================

~~~~ Process 2 of 3 on node n02 lifetime = 1990.25 usec

Data Transfers
Src     Dst     Amount(MB)      Transfers
-----------------------------------------
002 --> 000     0.000000e+00    5
002 --> 001     4.882812e-04    2
002 --> 002     0.000000e+00    0
=========================================
Totals          4.882812e-04    7

Communication Activity
Operation       Volume(MB)      Calls
-----------------------------------------
P2P
Csend           4.882812e-04    7
Collectives
Barrier         0.000000e+00    2
Allreduce       6.103516e-05    4
=========================================

____ End of stats.txt file ____
"""
# By hand: MB are 2^20 bytes. 0.25 MB = 262144 B; 9.536743e-06 MB = 10 B;
# 1 MB = 1048576 B; 4.882812e-04 MB = 512 B; 2 -> 0 is 5 empty messages.
INTEL_BYTES = [[0, 262144, 10], [1048576, 0, 0], [0, 512, 0]]
INTEL_MSGS = [[0, 8, 1], [3, 0, 0], [5, 2, 0]]


def test_intel_stats_point_to_point_tables(tmp_path):
    m = load_comm(write(tmp_path / "stats.txt", INTEL))
    assert m.n_ranks == 3
    assert dense_of(m) == (INTEL_BYTES, INTEL_MSGS)
    assert m.source.startswith("intel-mpi-stats:stats.txt (point-to-point")
    assert "collective" in m.source and "not imported" in m.source
    assert load_comm(tmp_path / "stats.txt", "intel", n_ranks=3) == m


def test_intel_stats_gzip_and_crlf(tmp_path):
    gz = tmp_path / "stats.txt.gz"
    gz.write_bytes(gzip.compress(INTEL.replace("\n", "\r\n").encode()))
    assert dense_of(load_comm(gz)) == (INTEL_BYTES, INTEL_MSGS)


def cut_after(text: str, needle: str, nth: int = 1) -> str:
    lines = text.splitlines(keepends=True)
    return "".join(lines[:line_of(text, needle, nth)])


def test_intel_truncated_files(tmp_path):
    # Cut inside process 1's table: the table has no Totals.
    text = cut_after(INTEL, "001 --> 000")
    p = write(tmp_path / "cut.txt", text)
    fails(f"{p}:{len(text.splitlines())}", "the Data Transfers table of process 1 (line "
          f"{line_of(INTEL, 'Data Transfers', 2)}) ends without its Totals line: truncated file?", p)
    # Two files pasted: the cut table runs into the next section.
    glued = cut_after(INTEL, "001 --> 000") + INTEL[INTEL.index("~~~~ Process 2"):]
    p = write(tmp_path / "glued.txt", glued)
    fails(f"{p}:{line_of(glued, '~~~~ Process 2')}", "the Data Transfers table of process 1", p)
    # Cut between two sections: process 2 is missing.
    text = cut_after(INTEL, "Totals", 2)
    p = write(tmp_path / "short.txt", text)
    fails(f"{p}:{len(text.splitlines())}", "no section for process 2 of 3 (1 missing): truncated file?", p)
    # Cut right after a section header: a process without its table.
    text = cut_after(INTEL, "~~~~ Process 2")
    p = write(tmp_path / "header.txt", text)
    fails(f"{p}:{line_of(text, '~~~~ Process 2')}", "process 2 has no Data Transfers table", p)


@pytest.mark.parametrize("old, new, needle, message", [
    ("001 --> 002     0.000000e+00    0", "001 --> 003     0.000000e+00    0", "001 --> 003",
     "destination rank 3 is not in [0, 3)"),
    ("001 --> 000     1.000000e+00    3", "001 --> 000     -1.000000e+00    3", "001 --> 000",
     "amount (MB) -1.000000e+00 is negative"),
    ("001 --> 000     1.000000e+00    3", "001 --> 000     nan    3", "001 --> 000", "amount (MB) is NaN"),
    ("001 --> 000     1.000000e+00    3", "001 --> 000     1.000000e+00    3.5", "001 --> 000",
     "transfer count 3.5 is not a whole number"),
    ("001 --> 000     1.000000e+00    3", "000 --> 001     1.000000e+00    3", "000 --> 001     1.0",
     "a row from process 0 in the table of process 1"),
    ("001 --> 000     1.000000e+00    3", "001 --> 000     1.000000e+00    4", "Totals          1.0",
     "the Totals (1.000000e+00 MB, 3 transfers) are not the sum of the rows (1.000000e+00 MB, 4 transfers)"),
    ("Totals          1.000000e+00    3", "Totals          2.000000e+00    3", "Totals          2.0",
     "are not the sum of the rows"),
    ("001 --> 000     1.000000e+00    3", "001 --> 000     one MB    3", "one MB",
     "'001 --> 000     one MB    3' is not a row"),
    ("~~~~ Process 2 of 3", "~~~~ Process 2 of 4", "~~~~ Process 2 of 4",
     "process 2 of 4, but the first section says 3 ranks"),
    ("~~~~ Process 2 of 3", "~~~~ Process 1 of 3", "~~~~ Process 1 of 3 on node n02",
     "a second section for process 1 (the first is at line"),
])
def test_intel_bad_content(tmp_path, old, new, needle, message):
    assert old in INTEL
    text = INTEL.replace(old, new, 1)
    p = write(tmp_path / "stats.txt", text)
    fails(f"{p}:{line_of(text, needle)}", message, p)


def test_intel_ranks_option_and_foreign_files(tmp_path):
    p = write(tmp_path / "stats.txt", INTEL)
    fails(f"{p}:{line_of(INTEL, '~~~~ Process 0')}", "the statistics are of 3 ranks, but --ranks says 4",
          p, n_ranks=4)
    other = write(tmp_path / "pairs.txt", "0 1 10\n")
    fails(str(other), "no '~~~~ Process P of N' section: not Intel MPI native statistics", other, "intel")
    ipm = write(tmp_path / "stats.ipm", "#" * 40 + "\n#\n# command : ./app (completed)\n"
                "# host    : n01/x86_64_Linux   mpi_tasks : 4 on 1 nodes\n# wallclock : 1.5\n")
    assert detect_format(ipm) == "intel"
    fails(str(ipm), "Intel MPI IPM summary (I_MPI_STATS=ipm): it has no per-destination volumes", ipm)


# =================================================== Open MPI monitoring
# pml_monitoring_enable 2, output 3: one file per rank, E/I split, the
# histogram after the first line of each peer, sections always printed.
OMPI_0 = ("# POINT TO POINT\n"
          "E\t0\t1\t4000 bytes\t10 msgs sent\t0,0,2,0,3,5,0\n"
          "E\t0\t2\t64 bytes\t1 msgs sent\t0,0,0,0,0,0,1\n"
          "I\t0\t1\t24 bytes\t3 msgs sent\n"
          "# OSC\n"
          "S\t0\t2\t8192 bytes\t2 msgs sent\n"
          "# COLLECTIVES\n"
          "C\t0\t1\t24 bytes\t3 msgs sent\n"
          "D\tMPI_COMM_WORLD\tprocs: 0,1,2\n"
          "O2A\t0\t24 bytes\t3 msgs sent\n"
          "A2O\t0\t0 bytes\t0 msgs sent\n"
          "A2A\t0\t0 bytes\t0 msgs sent\n")
OMPI_1 = ("# POINT TO POINT\n"
          "E\t1\t0\t300 bytes\t3 msgs sent\t0,0,0,0,3,0,0\n"
          "I\t1\t2\t16 bytes\t2 msgs sent\t0,0,2,0,0,0,0\n"
          "# OSC\n"
          "R\t1\t2\t512 bytes\t1 msgs sent\n"
          "# COLLECTIVES\n"
          "C\t1\t2\t16 bytes\t2 msgs sent\n")
OMPI_2 = ("# POINT TO POINT\n"
          "E\t2\t0\t0 bytes\t4 msgs sent\t4,0,0,0,0,0,0\n"
          "# OSC\n"
          "# COLLECTIVES\n"
          "D\tMPI COMMUNICATOR 3 SPLIT FROM 0\tprocs: 0,2\n"
          "O2A\t2\t0 bytes\t0 msgs sent\n"
          "A2O\t2\t8 bytes\t1 msgs sent\n"
          "A2A\t2\t0 bytes\t0 msgs sent\n")
# By hand, default E+I+S+R: 0->1 4000+24 B in 13, 0->2 64+8192 B in 3,
# 1->0 300 B in 3, 1->2 16 B in 2, R at 1 from 2: 2->1 512 B in 1,
# 2->0 four empty messages. C lines and D blocks are not counted.
OMPI_BYTES = [[0, 4024, 8256], [300, 0, 16], [0, 512, 0]]
OMPI_MSGS = [[0, 13, 3], [3, 0, 2], [4, 1, 0]]


def ompi_dir(tmp_path, files=(OMPI_0, OMPI_1, OMPI_2), stem="out", ranks=None):
    d = tmp_path / "prof"
    d.mkdir(exist_ok=True)
    for rank, text in zip(ranks or range(len(files)), files):
        write(d / f"{stem}.{rank}.prof", text)
    return d


def test_openmpi_directory_glob_and_single_file(tmp_path):
    d = ompi_dir(tmp_path)
    m = load_comm(d)
    assert m.n_ranks == 3 and dense_of(m) == (OMPI_BYTES, OMPI_MSGS)
    assert m.source == "openmpi-monitoring:out.*.prof (E+I+S+R lines)"
    assert load_comm(str(d / "out.*.prof")) == m
    # aggregate_profile.pl (or cat) puts every rank in one file
    one = write(tmp_path / "all.prof", OMPI_2 + OMPI_0 + OMPI_1)
    assert dense_of(load_comm(one)) == (OMPI_BYTES, OMPI_MSGS)
    assert load_comm(one, n_ranks=5).n_ranks == 5


def test_openmpi_list_of_files(tmp_path):
    # what a shell passes for an unquoted prof/out.*.prof
    d = ompi_dir(tmp_path)
    files = [d / f"out.{r}.prof" for r in (2, 0, 1)]
    m = load_comm(files)
    assert dense_of(m) == (OMPI_BYTES, OMPI_MSGS) and load_comm([d]) == load_comm(d)
    fails(str(d / "out.1.prof"), "missing: the files are of ranks 0-2 with no file for rank 1",
          [files[0], files[1]])
    fails(str(d), "is not a file (several inputs must all be monitoring files)", [files[0], d])
    with pytest.raises(RankwiseError, match="several inputs are only read as Open MPI monitoring files"):
        load_comm(files, "list")


def test_openmpi_kinds(tmp_path):
    d = ompi_dir(tmp_path)
    m = load_comm(d, kinds="E")  # the application's point-to-point only
    assert dense_of(m) == ([[0, 4000, 64], [300, 0, 0], [0, 0, 0]], [[0, 10, 1], [3, 0, 0], [4, 0, 0]])
    m = load_comm(d, kinds="E,C")  # logical collective traffic instead of the PML's
    assert m.to_dense().tolist() == [[0, 4024, 64], [300, 0, 16], [0, 0, 0]]
    assert m.source.endswith("(E+C lines)")
    with pytest.raises(RankwiseError, match="monitoring line kinds 'X': choose among E, I, S, R, C"):
        load_comm(d, kinds="X")
    with pytest.raises(RankwiseError, match="--kinds applies to Open MPI monitoring files"):
        load_comm(write(tmp_path / "l.txt", "0 1 5\n"), kinds="E")


def test_openmpi_aggregated_output_without_sections(tmp_path):
    # pml_monitoring_enable 1 printed on stderr: E lines only, every message.
    text = "E\t0\t1\t100 bytes\t1 msgs sent\nE\t1\t0\t50 bytes\t2 msgs sent\nE\t0\t1\t7 bytes\t1 msgs sent\n"
    m = load_comm(write(tmp_path / "stderr.txt", text))
    assert dense_of(m) == ([[0, 107], [50, 0]], [[0, 2], [2, 0]])


def test_openmpi_incomplete_runs(tmp_path):
    # rank 2's file is missing
    d = ompi_dir(tmp_path, (OMPI_0, OMPI_1, OMPI_2.replace("\t2\t", "\t3\t")), ranks=(0, 1, 3))
    fails(f"{d / 'out.2.prof'}", "missing: the files are of ranks 0-3 with no file for rank 2", d)
    # the last file is missing: rank 0 sends to a rank that has no file
    (d / "out.3.prof").unlink()
    fails(f"{d / 'out.0.prof'}:{line_of(OMPI_0, 'E	0	2')}",
          "destination rank 2 is not in [0, 2) (the run has files for ranks 0-1 only: are files missing?)", d)
    fails(f"{d}/out.*.prof", "found files for 2 ranks, but --ranks says 3", d, n_ranks=3)
    # one rank's file next to its siblings is a fraction of the job
    fails(str(d / "out.1.prof"), "is rank 1's file only, next to 1 others", d / "out.1.prof")


def test_openmpi_cut_and_foreign_lines(tmp_path):
    d = ompi_dir(tmp_path)
    f1 = d / "out.1.prof"
    # no line end at the end: cut in the middle of a line
    f1.write_text(OMPI_1[:-1])
    fails(f"{f1}:{len(OMPI_1.splitlines())}", "the last line has no line end: truncated file?", d)
    # cut between two lines: the COLLECTIVES section is missing
    text = cut_after(OMPI_1, "R\t1")
    f1.write_text(text)
    fails(f"{f1}:{len(text.splitlines())}", "the output begun at line 1 has no '# COLLECTIVES' section", d)
    # cut inside a D block
    f1.write_text(OMPI_1)
    f2 = d / "out.2.prof"
    text = cut_after(OMPI_2, "A2O")
    f2.write_text(text)
    fails(f"{f2}:{len(text.splitlines())}", "the D block at line 5 is cut short: truncated file?", d)
    text = OMPI_2.replace("A2O", "X2O")
    f2.write_text(text)
    fails(f"{f2}:{line_of(text, 'X2O')}", "expected the A2O line of the D block at line 5", d)
    # a line of another rank, a negative volume, a foreign line
    f2.write_text(OMPI_2.replace("E\t2\t0", "E\t1\t0"))
    fails(f"{f2}:2", "a line of rank 1 in the file of rank 2", d)
    f2.write_text(OMPI_2.replace("0 bytes\t4 msgs", "-8 bytes\t4 msgs"))
    fails(f"{f2}:2", "is not an Open MPI monitoring line ('E|I|S|R|C ME PEER B bytes M msgs sent')", d)
    f2.write_text("# POINT TO POINT\nhello world\n# OSC\n# COLLECTIVES\n")
    fails(f"{f2}:2", "'hello world' is not an Open MPI monitoring line", d)
    f2.write_text("# OSC\n# POINT TO POINT\n")
    fails(f"{f2}:1", "'# OSC' out of order", d)


def test_openmpi_directory_problems(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    fails(str(empty), "no Open MPI monitoring files (NAME.RANK.prof) in this directory", empty)
    d = ompi_dir(tmp_path)
    write(d / "phase_1.0.prof", OMPI_0)
    fails(str(d), "holds the monitoring of several runs or phases (out.*.prof, phase_1.*.prof)", d)
    fails(str(tmp_path / "nothing.*.prof"), "no file matches this pattern", str(tmp_path / "nothing.*.prof"))
    fails(f"{d}/*.prof", "mixes the files of several runs or phases (out, phase_1)", f"{d}/*.prof")


# A ring of known volumes and a broadcast, to be monitored by a real Open MPI.
RING_C = r"""
#include <mpi.h>
#include <stdlib.h>
int main(int argc, char **argv) {
    int rank, size, v[64] = {0};
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    char *out = calloc(8000, 1), *in = calloc(8000, 1);
    for (int it = 0; it < 3; it++)  /* rank r sends 1000 (r + 1) bytes to r + 1, 3 times */
        MPI_Sendrecv(out, 1000 * (rank + 1), MPI_BYTE, (rank + 1) % size, 5, in, 8000, MPI_BYTE,
                     (rank + size - 1) % size, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Bcast(v, 64, MPI_INT, 0, MPI_COMM_WORLD);  /* 256 bytes from rank 0 */
    free(out);
    free(in);
    MPI_Finalize();
    return 0;
}
"""


def _open_mpi_monitoring() -> bool:
    if not all(shutil.which(tool) for tool in ("mpicc", "mpirun", "ompi_info")):
        return False
    info = subprocess.run(["ompi_info"], capture_output=True, text=True, env=mpi_environment())
    return "MCA pml: monitoring" in info.stdout


@pytest.mark.skipif(not _open_mpi_monitoring(), reason="no Open MPI with the monitoring components")
def test_openmpi_monitoring_of_a_real_run(tmp_path):
    (tmp_path / "ring.c").write_text(RING_C)
    subprocess.run(["mpicc", "-o", tmp_path / "ring", tmp_path / "ring.c"], check=True, env=mpi_environment())
    (tmp_path / "prof").mkdir()
    run = subprocess.run(["mpirun", "-np", "4", "--oversubscribe", "--mca", "pml_monitoring_enable", "2",
                          "--mca", "pml_monitoring_enable_output", "3", "--mca", "pml_monitoring_filename",
                          "prof/run", "./ring"], cwd=tmp_path, env=mpi_environment(), capture_output=True,
                         text=True, timeout=300, stdin=subprocess.DEVNULL)
    assert run.returncode == 0, run.stderr
    ring = load_comm(tmp_path / "prof", kinds="E")
    assert ring.n_ranks == 4
    assert dense_of(ring) == ([[0, 3000, 0, 0], [0, 0, 6000, 0], [0, 0, 0, 9000], [12000, 0, 0, 0]],
                              [[0, 3, 0, 0], [0, 0, 3, 0], [0, 0, 0, 3], [3, 0, 0, 0]])
    # The broadcast reaches ranks 1-3 through whatever tree the library chose
    # (I lines); the coll component counts it from the root (C lines).
    everything = load_comm(tmp_path / "prof")
    internal = everything.received_bytes() - ring.received_bytes()
    assert internal[0] == 0 and (internal[1:] >= 256).all()
    logical = load_comm(tmp_path / "prof", kinds="EC")
    assert [logical.get(0, peer) for peer in (1, 2, 3)] == [(4, 3256), (1, 256), (1, 256)]


# ============================================================ plain lists
def test_list_blanks_commas_comments_and_repeats(tmp_path):
    text = ("# traffic of a 4-rank job\n"
            "0 1 4096 4\n"
            "1,0,4096,4   # commas work\n"
            "\n"
            "2\t3\t1e3\t1\n"
            "3;3;8;1\n"
            "0 1 100 1\n")  # repeated pair: summed
    m = load_comm(write(tmp_path / "pairs.txt", text))
    assert m.n_ranks == 4
    assert (m.src.tolist(), m.dst.tolist(), m.msgs.tolist(), m.bytes.tolist()) == \
        ([0, 1, 2, 3], [1, 0, 3, 3], [5, 4, 1, 1], [4196, 4096, 1000, 8])
    assert load_comm(tmp_path / "pairs.txt", n_ranks=8).n_ranks == 8


def test_list_fast_and_careful_readers_agree(tmp_path):
    # Digits only: read with numpy at once. One '1e1' sends the file through
    # the line-by-line reader; both must give the same matrix.
    rng = np.random.default_rng(7)
    rows = rng.integers(0, 50, size=(500, 4))
    text = "".join(f"{s} {d} {b} {c}\n" for s, d, b, c in rows)
    fast = load_comm(write(tmp_path / "fast.txt", text))
    careful = load_comm(write(tmp_path / "careful.txt", text + "0 1 1e1 1\n"))
    n = int(rows[:, :2].max()) + 1
    extra = CommMatrix(n, [0], [1], [1], [10])
    assert fast.n_ranks == careful.n_ranks == n
    both = CommMatrix(n, np.concatenate([fast.src, extra.src]), np.concatenate([fast.dst, extra.dst]),
                      np.concatenate([fast.msgs, extra.msgs]), np.concatenate([fast.bytes, extra.bytes]))
    assert dense_of(careful) == dense_of(both)


def test_list_without_messages_and_with_header(tmp_path):
    # three columns: one message per line with bytes > 0
    m = load_comm(write(tmp_path / "t.txt", "0 2 10\n0 2 5\n2 0 0\n"), "triplets")
    assert dense_of(m) == ([[0, 0, 15], [0, 0, 0], [0, 0, 0]], [[0, 0, 2], [0, 0, 0], [0, 0, 0]])
    assert m.source == "list:t.txt (one message per line)"
    # a header names the columns, in any order
    m = load_comm(write(tmp_path / "h.csv", "dst,src,msgs,bytes\n1,0,3,300\n0,1,1,7\n"))
    assert dense_of(m) == ([[0, 300], [7, 0]], [[0, 3], [1, 0]])
    m = load_comm(write(tmp_path / "ij.txt", "i j value\n0 1 64\n"))
    assert dense_of(m) == ([[0, 64], [0, 0]], [[0, 1], [0, 0]])


@pytest.mark.parametrize("text, line, message, kwargs", [
    ("0 1 10\n1 4 10\n", 2, "destination rank 4 is not in [0, 4)", {"n_ranks": 4}),
    ("0 1 10\n4 1 10\n", 2, "source rank 4 is not in [0, 4)", {"n_ranks": 4}),
    ("0 1 10\n1 0 -5\n", 2, "bytes -5 is negative", {}),
    ("0 1 nan\n", 1, "bytes is NaN", {}),
    ("0 1 inf\n", 1, "bytes is infinite", {}),
    ("0 1 2.5\n", 1, "bytes 2.5 is not a whole number", {}),
    ("0 1 10 -1\n", 1, "message count -1 is negative", {}),
    ("0 1.5 10\n", 1, "destination rank '1.5' is not a whole number", {}),
    ("0 -1 10\n", 1, "destination rank -1 is below 0", {}),
    ("0 1 10 1\n1 0 10\n", 2, "3 fields where the first line has 4", {}),
    ("0 1\n", 1, "expected 'SRC DST BYTES [MSGS]', got 2 fields", {}),
    ("from to weight colour\n0 1 1 1\n", 1, "unknown column 'colour' in the header line", {}),
    ("src dst msgs\n0 1 1\n", 1, "the header line has no 'bytes' column", {}),
    ("0 1 9223372036854775807\n1 0 1\n", 2, "the total volume exceeds 64 bits", {}),
    ("0 1 99999999999999999999\n", 1, "bytes 99999999999999999999 does not fit in 64 bits", {}),
])
def test_list_errors(tmp_path, text, line, message, kwargs):
    p = write(tmp_path / "l.txt", text)
    fails(f"{p}:{line}", message, p, "list", **kwargs)


def test_list_without_traffic_needs_the_job_size(tmp_path):
    p = write(tmp_path / "l.txt", "# nothing was sent\n")
    fails(str(p), "no traffic and no job size: give --ranks N", p, "list")
    m = load_comm(p, "list", n_ranks=6)
    assert m.n_ranks == 6 and m.nnz == 0


# ========================================================= dense matrices
def test_dense_bytes_then_messages(tmp_path):
    text = ("# bytes\n0 4096 0\n4096 0 512\n0 512 0\n\n"
            "# messages\n0 4 0\n4 0 1\n0 1 0\n")
    m = load_comm(write(tmp_path / "m.mat", text))
    assert dense_of(m) == ([[0, 4096, 0], [4096, 0, 512], [0, 512, 0]], [[0, 4, 0], [4, 0, 1], [0, 1, 0]])
    # a single matrix: one message per nonzero entry; CSV; the diagonal is kept
    m = load_comm(write(tmp_path / "c.csv", "5,1,0,0,0\n0,0,2,0,0\n0,0,0,3,0\n0,0,0,0,4\n6,0,0,0,0\n"))
    assert m.n_ranks == 5 and m.get(0, 0) == (1, 5) and m.get(4, 0) == (1, 6) and m.nnz == 6
    assert m.source == "dense:c.csv (one message per nonzero entry)"


def test_dense_profile2mat_pairs(tmp_path):
    # profile2mat.pl writes NAME_size_KIND.mat and NAME_msg_KIND.mat side by side
    size = write(tmp_path / "phase_1_size_all.mat", "0 1500 \n1500 0 \n")
    write(tmp_path / "phase_1_msg_all.mat", "0 6 \n6 0 \n")
    avg = write(tmp_path / "phase_1_avg_all.mat", "0 250 \n250 0 \n")
    m = load_comm(size)
    assert dense_of(m) == ([[0, 1500], [1500, 0]], [[0, 6], [6, 0]])
    assert m.source == ("dense:phase_1_size_all.mat (messages from phase_1_msg_all.mat; "
                        "profile2mat: each direction is the mean of both)")
    fails(str(avg), "holds profile2mat's average message sizes; give the phase_1_size_all.mat file", avg)
    write(tmp_path / "phase_1_msg_all.mat", "0 6 \n")
    fails(f"{tmp_path / 'phase_1_msg_all.mat'}:1", "1 rows, but phase_1_size_all.mat is a 2 x 2 matrix", size)


@pytest.mark.parametrize("text, line, message, kwargs", [
    ("0 1 2 3 4\n1 0 1 1 1\n1 1 0\n", 3, "a row of 3 numbers in a matrix of 5 columns", {}),
    ("0 1 2 3 4\n1 0 1 1 1\n", 2, "2 rows for 5 columns: the matrix is cut short", {}),
    ("0 9\n9 0\n0 1\n", 3, "the messages matrix has 1 of its 2 rows: cut short", {}),
    ("0 9\n9 0\n0 1\n1 0\n0 0\n", 5, "more rows than a bytes and a messages matrix of 2 x 2", {}),
    ("0 9\n-9 0\n", 2, "bytes -9 is negative", {}),
    ("0 nan\n9 0\n", 1, "bytes is NaN", {}),
    ("0 9\n9 0\n", 1, "the matrix has 2 ranks, but --ranks says 3", {"n_ranks": 3}),
])
def test_dense_errors(tmp_path, text, line, message, kwargs):
    p = write(tmp_path / "d.mat", text)
    fails(f"{p}:{line}", message, p, "dense", **kwargs)


# ========================================================= Matrix Market
def test_matrix_market_coordinate_array_and_symmetric(tmp_path):
    coo = write(tmp_path / "a.mtx", "%%MatrixMarket matrix coordinate integer general\n% a comment\n"
                                    "4 4 4\n1 2 4096\n2 1 4096\n3 4 512\n3 4 8\n")
    m = load_comm(coo)
    assert m.n_ranks == 4
    assert (m.src.tolist(), m.dst.tolist(), m.msgs.tolist(), m.bytes.tolist()) == \
        ([0, 1, 2], [1, 0, 3], [1, 1, 2], [4096, 4096, 520])
    sym = write(tmp_path / "s.mtx", "%%MatrixMarket matrix coordinate real symmetric\n3 3 2\n"
                                    "2 1 1.0e3\n3 3 7\n")
    assert dense_of(load_comm(sym)) == ([[0, 1000, 0], [1000, 0, 0], [0, 0, 7]],
                                        [[0, 1, 0], [1, 0, 0], [0, 0, 1]])
    arr = write(tmp_path / "d.mtx", "%%MatrixMarket matrix array integer general\n2 2\n0\n30\n40\n0\n")
    assert load_comm(arr).to_dense().tolist() == [[0, 40], [30, 0]]  # column after column


@pytest.mark.parametrize("body, line, message, kwargs", [
    ("coordinate integer general\n3 3 1\n4 1 5\n", 3, "entry (4, 1) is outside the 3 x 3 matrix", {}),
    ("coordinate integer general\n3 3 1\n0 1 5\n", 3, "row 0 is below 1", {}),
    ("coordinate integer general\n3 3 1\n1 2 -5\n", 3, "value -5 is negative", {}),
    ("coordinate real general\n3 3 1\n1 2 NaN\n", 3, "value is NaN", {}),
    ("coordinate integer general\n3 3 3\n1 2 5\n2 1 5\n", 4,
     "2 of the 3 entries the size line announces: the file is cut short", {}),
    ("coordinate integer general\n3 3 1\n1 2 5\n2 1 5\n", 4, "more entries than the 1 the size line announces", {}),
    ("coordinate integer general\n3 4 1\n1 2 5\n", 2, "a 3 x 4 matrix is not square", {}),
    ("coordinate integer general\n3 3 1\n1 2 5\n", 2, "the matrix has 3 ranks, but --ranks says 2", {"n_ranks": 2}),
    ("coordinate pattern general\n3 3 1\n1 2\n", 1, "field 'pattern' has no values: bytes are needed", {}),
    ("coordinate complex general\n3 3 1\n1 2 5 0\n", 1, "field 'complex' is not integer or real", {}),
    ("coordinate integer skew-symmetric\n3 3 0\n", 1, "symmetry 'skew-symmetric' is not general or symmetric", {}),
    ("array integer general\n2 2\n0\n1\n2\n", 5, "3 of the 4 entries", {}),
])
def test_matrix_market_errors(tmp_path, body, line, message, kwargs):
    p = write(tmp_path / "e.mtx", "%%MatrixMarket matrix " + body)
    fails(f"{p}:{line}", message, p, **kwargs)


# ==================================================== rankwise's own files
def test_rwc_and_npz_pass_through(tmp_path):
    m = CommMatrix(3, [0, 1, 2], [1, 2, 0], [1, 2, 3], [10, 20, 30], source="unit test")
    m.save(tmp_path / "m.rwc")
    m.save(tmp_path / "m.npz")
    assert load_comm(tmp_path / "m.rwc") == m
    assert load_comm(tmp_path / "m.npz") == m
    (tmp_path / "m.npz").rename(tmp_path / "renamed.bin")  # told by content, not by name
    assert detect_format(tmp_path / "renamed.bin") == "npz" and load_comm(tmp_path / "renamed.bin") == m
    fails(str(tmp_path / "m.rwc"), "the matrix has 3 ranks, but --ranks says 4", tmp_path / "m.rwc", n_ranks=4)


# =========================================== round trips (property tests)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.integers(1, 9).flatmap(lambda n: st.tuples(
    st.just(n), st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1), st.integers(0, 5),
                                   st.integers(0, 2**40)), max_size=30))))
def test_every_text_format_reads_back_what_was_written(tmp_path, case):
    n, entries = case
    src, dst, msgs, nbytes = (list(col) for col in zip(*entries)) if entries else ([], [], [], [])
    m = CommMatrix(n, src, dst, msgs, nbytes)
    body = "".join(f"{s},{d},{b},{c}\n" for s, d, c, b in zip(m.src, m.dst, m.msgs, m.bytes))
    lst = load_comm(write(tmp_path / "l.csv", "src,dst,bytes,msgs\n" + body), n_ranks=n)
    assert dense_of(lst) == dense_of(m)
    two = "\n".join(" ".join(map(str, row)) for row in np.vstack([m.to_dense(), m.to_dense("msgs")]))
    assert dense_of(load_comm(write(tmp_path / "d.mat", two + "\n"))) == dense_of(m)
    # Matrix Market: one message per entry, so compare bytes only
    mtx = "".join(f"{s + 1} {d + 1} {b}\n" for s, d, b in zip(m.src, m.dst, m.bytes))
    mm = load_comm(write(tmp_path / "m.mtx", f"%%MatrixMarket matrix coordinate integer general\n"
                                             f"{n} {n} {m.nnz}\n{mtx}"))
    assert mm.to_dense().tolist() == m.to_dense().tolist()


# ============================================================== detection
def test_detection_by_content_then_name(tmp_path):
    files = {
        "stats.txt": (INTEL, "intel"),
        "stderr.log": ("E\t0\t1\t100 bytes\t1 msgs sent\n", "openmpi"),
        "a.data": ("%%MatrixMarket matrix coordinate integer general\n2 2 0\n", "mtx"),
        "b.data": ("rankwise-matrix 1\nranks 2\n", "rwc"),
        "pairs.txt": ("0 1 10\n1 0 10\n2 0 5\n3 0 5\n0 2 1\n", "list"),
        "hdr.txt": ("src dst bytes\n0 1 10\n1 0 10\n", "list"),
        "big.txt": ("0 1 2 3 4\n" * 5, "dense"),
        "two.txt": ("0 1\n1 0\n", "dense"),
        "m.mat": ("0 1 1\n1 0 1\n1 1 0\n", "dense"),
    }
    for name, (text, want) in files.items():
        assert detect_format(write(tmp_path / name, text)) == want, name
    assert detect_format(ompi_dir(tmp_path)) == "openmpi"
    assert detect_format(str(tmp_path / "prof" / "*.prof")) == "openmpi"


def test_detection_refuses_what_it_cannot_tell(tmp_path):
    known = "known: intel, openmpi, list, dense, mtx, npz, rwc"
    amb = write(tmp_path / "m.txt", "0 1 1\n1 0 1\n1 1 0\n")
    fails(str(amb), "3 lines of 3 numbers: a 3 x 3 dense matrix or a list of 'SRC DST BYTES [MSGS]'? "
                    "give --format dense or list", amb)
    assert load_comm(amb, "dense").nnz == 6 and load_comm(amb, "list").nnz == 2  # "1 1 0" adds nothing
    prose = write(tmp_path / "notes.txt", "Some notes about the run.\nNothing to import.\n")
    fails(f"{prose}:1", f"cannot tell the format of this file ({known}); give --format", prose)
    binary = tmp_path / "image.png"
    binary.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\xff\xfe")
    fails(str(binary), f"not a text file (byte 0 is not UTF-8): cannot tell its format ({known})", binary)
    fails(str(tmp_path / "absent.txt"), "cannot open: No such file or directory", tmp_path / "absent.txt")
    with pytest.raises(RankwiseError, match=f"unknown format 'excel'; known formats: {', '.join(FORMATS)}"):
        load_comm(amb, "excel")
    assert format_name("Open-MPI") == "openmpi" and format_name("MM") == "mtx"
    with pytest.raises(RankwiseError, match=re.escape("--ranks must be in [1, 67108864], got 0")):
        load_comm(amb, "list", n_ranks=0)


# ==================================================================== CLI
def test_cli_import_writes_the_matrix_and_one_summary_line(tmp_path):
    stats = write(tmp_path / "stats.txt", INTEL)
    out = tmp_path / "app.rwc"
    r = run_cli("import", stats, "-o", out)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith(f"{out}: 3 ranks, 5 nonzeros, 19 messages, 1311242 bytes (1.25 MiB) from {stats}")
    assert "[intel-mpi-stats:stats.txt" in lines[0]
    assert dense_of(CommMatrix.load(out)) == (INTEL_BYTES, INTEL_MSGS)

    d = ompi_dir(tmp_path)
    out = tmp_path / "ompi.npz"
    r = run_cli("import", d, "--format", "openmpi", "--ranks", "3", "--kinds", "E", "-o", out)
    assert r.returncode == 0, r.stderr
    assert CommMatrix.load(out).total_bytes == 4364


def test_cli_import_several_files(tmp_path):
    d = ompi_dir(tmp_path)
    out = tmp_path / "m.rwc"
    r = run_cli("import", *sorted(d.iterdir()), "-o", out)
    assert r.returncode == 0, r.stderr
    assert "3 ranks, 6 nonzeros" in r.stdout and f"from 3 files ({d / 'out.0.prof'} ...)" in r.stdout
    assert dense_of(CommMatrix.load(out)) == (OMPI_BYTES, OMPI_MSGS)


def test_cli_import_errors_are_one_line_and_write_nothing(tmp_path):
    from conftest import assert_one_line_error

    out = tmp_path / "x.rwc"
    bad = write(tmp_path / "l.txt", "0 1 10\n1 0 -1\n")
    assert_one_line_error(run_cli("import", bad, "-o", out), f"rankwise: error: {bad}:2: bytes -1 is negative")
    assert_one_line_error(run_cli("import", bad, "--ranks", "two", "-o", out),
                          "--ranks must be a whole number, got 'two'")
    assert_one_line_error(run_cli("import", bad, "--format", "xls", "-o", out), "unknown format 'xls'")
    assert not out.exists()
    assert np.all(load_comm(write(tmp_path / "ok.txt", "0 1 10\n")).bytes == [10])
