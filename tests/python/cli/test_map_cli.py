"""`rankwise map` as a user runs it: model + traffic in, a launcher file out."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import assert_one_line_error, run_cli

from rankwise.model.model import MEASURED, Model
from rankwise.traffic.patterns import generate


def make_model(path, n_nodes=8, ranks_per_node=2, slow=(1,), racks=2):
    """A measured-looking model: racks of n/racks nodes, slow nodes' links x10."""
    m = Model.empty([f"node-{i}" for i in range(n_nodes)], [8, 65536], [ranks_per_node] * n_nodes)
    rack = np.arange(n_nodes) // (n_nodes // racks)
    alpha = np.where(rack[:, None] == rack[None, :], 2e-6, 8e-6)
    beta = np.where(rack[:, None] == rack[None, :], 1e-10, 3e-10)
    for s in slow:
        alpha[s, :] *= 10
        alpha[:, s] *= 10
        beta[s, :] *= 10
        beta[:, s] *= 10
    m.alpha[:] = alpha
    m.beta[:] = beta
    m.state[:] = MEASURED
    np.fill_diagonal(m.state, 0)
    m.intra_alpha[:] = 3e-7
    m.intra_beta[:] = 2e-11
    m.intra_state[:] = MEASURED
    m.save(path)
    return m


@pytest.fixture()
def model_file(tmp_path):
    path = tmp_path / "net.rwm"
    make_model(path)
    return path


def read_rankfile(path):
    import re

    out = {}
    for line in path.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        m = re.fullmatch(r"rank\s+(\d+)\s*=\s*(\S+)\s+slot=(\d+)", line)
        assert m, line
        out[int(m.group(1))] = (m.group(2), int(m.group(3)))
    return out


def test_alltoall_on_half_the_nodes_avoids_the_slow_node(tmp_path, model_file):
    out = tmp_path / "rankfile"
    r = run_cli("map", "--model", model_file, "--pattern", "alltoall:ranks=8,bytes=64K",
                "--format", "openmpi", "-o", out)
    assert r.returncode == 0, r.stderr
    ranks = read_rankfile(out)
    assert sorted(ranks) == list(range(8))
    assert len(set(ranks.values())) == 8  # one core each
    hosts = {h for h, _ in ranks.values()}
    assert "node-1" not in hosts and len(hosts) == 4
    assert "total time" in r.stdout and "x" in r.stdout
    assert "mpirun" in r.stdout


@pytest.mark.parametrize("fmt", ["openmpi", "mpich", "intel", "slurm", "permutation"])
def test_every_format_round_trips(tmp_path, model_file, fmt):
    from rankwise.cluster.launcher_files import FORMATS

    out = tmp_path / f"placement.{fmt}"
    args = ["map", "--model", model_file, "--pattern", "groups:groups=2,per_group=4,bytes=1M,link_bytes=1K",
            "--format", fmt, "-o", out]
    if fmt == "intel":
        args += ["--app", "./app -x 1"]
    r = run_cli(*args)
    assert r.returncode == 0, r.stderr
    back = FORMATS[fmt].read(out)
    hosts = back.hosts_in_rank_order() if hasattr(back, "hosts_in_rank_order") else list(back)
    assert len(hosts) == 8
    assert "node-1" not in hosts


def test_matrix_file_and_hostfile(tmp_path, model_file):
    matrix = tmp_path / "app.rwc"
    generate("stencil2d:grid=4x4,bytes=128K").save(matrix)
    hostfile = tmp_path / "hosts"
    hostfile.write_text("node-4 slots=4\nnode-5 slots=4\nnode-6 slots=4\nnode-7 slots=4\nnode-0 slots=4\n")
    out = tmp_path / "machinefile"
    r = run_cli("map", "--model", model_file, "--matrix", matrix, "--hostfile", hostfile, "--format", "mpich", "-o", out)
    assert r.returncode == 0, r.stderr
    from rankwise.cluster.launcher_files import mpich

    hosts = mpich.read(out).hosts_in_rank_order()
    assert len(hosts) == 16 and "node-0" not in hosts  # the rack-1 nodes hold the whole job
    lines = [line for line in out.read_text().splitlines() if not line.startswith("#")]
    assert all(":" in line for line in lines)


def test_hop_bytes_without_a_model(tmp_path):
    hostfile = tmp_path / "hosts"
    hostfile.write_text("".join(f"h{i} slots=2\n" for i in range(8)))
    r = run_cli("map", "--hostfile", hostfile, "--rack-size", "4", "--objective", "hop-bytes",
                "--pattern", "groups:groups=2,per_group=4,bytes=1M,link_bytes=1K", "-o", tmp_path / "p.txt")
    assert r.returncode == 0, r.stderr
    assert "hop-bytes" in r.stdout


@pytest.mark.parametrize("args, text", [
    (["--pattern", "alltoall:ranks=64,bytes=1K"], "16 slots for 64 ranks"),
    (["--pattern", "alltoall:ranks=8,bytes=1K", "--format", "lsf"], "unknown format 'lsf'"),
    (["--pattern", "alltoall:ranks=8,bytes=1K", "--algorithm", "magic"], "unknown algorithm 'magic'"),
    (["--pattern", "alltoall:ranks=8,bytes=1K", "--objective", "speed"], "unknown objective 'speed'"),
    (["--pattern", "alltoall:ranks=8,bytes=1K", "--format", "intel"], "--app"),
    (["--pattern", "alltoall:ranks=12,bytes=1K", "--algorithm", "exhaustive"], "at most 10 ranks"),
    (["--pattern", "alltoall:ranks=8,bytes=1K", "--ranks", "4"], "beyond the job's 4 ranks"),
    ([], "--pattern SPEC or --matrix FILE"),
    (["--pattern", "alltoall:ranks=8,bytes=1K", "--min-gain", "1.5"], "--min-gain must be in [0, 1)"),
])
def test_bad_requests(tmp_path, model_file, args, text):
    out = tmp_path / "out"
    r = run_cli("map", "--model", model_file, *args, "-o", out)
    assert_one_line_error(r, text)
    assert not out.exists()


def test_missing_pairs_fail_or_fill_with_a_warning(tmp_path):
    path = tmp_path / "holes.rwm"
    m = make_model(path)
    m.state[0, 3] = 2  # probed, no answer
    m.save(path)
    out = tmp_path / "p.txt"
    r = run_cli("map", "--model", path, "--pattern", "alltoall:ranks=16,bytes=1K", "-o", out)
    assert_one_line_error(r, "node-0 -> node-3")
    assert not out.exists()
    r = run_cli("map", "--model", path, "--pattern", "alltoall:ranks=16,bytes=1K", "--allow-missing", "-o", out)
    assert r.returncode == 0, r.stderr
    assert "lacks 1 pair" in r.stdout and out.exists()


def test_duplicate_hosts_and_unknown_hosts(tmp_path, model_file):
    hostfile = tmp_path / "hosts"
    hostfile.write_text("node-0 slots=2\nnode-1 slots=2\nnode-0 slots=2\n")
    r = run_cli("map", "--model", model_file, "--hostfile", hostfile, "--pattern", "ring:ranks=4,bytes=1K")
    assert_one_line_error(r, f"{hostfile}:3")
    hostfile.write_text("node-0 slots=2\nnode-99 slots=2\n")
    r = run_cli("map", "--model", model_file, "--hostfile", hostfile, "--pattern", "ring:ranks=4,bytes=1K")
    assert_one_line_error(r, "node-99")


def test_ranks_as_nodes_map_onto_their_host(tmp_path):
    """A model probed with --group-by rank names nodes HOST:RANK; the
    launcher file names the host, cores numbered per host."""
    path = tmp_path / "local.rwm"
    m = make_model(path, n_nodes=4, ranks_per_node=1, slow=(), racks=1)
    m.names = [f"vm:{i}" for i in range(4)]
    m.save(path)
    out = tmp_path / "rankfile"
    r = run_cli("map", "--model", path, "--pattern", "ring:ranks=4,bytes=1K", "--format", "openmpi", "-o", out)
    assert r.returncode == 0, r.stderr
    lines = [line for line in out.read_text().splitlines() if not line.startswith("#")]
    assert [line.split("=")[1] for line in lines] == ["vm slot"] * 4
    assert sorted(int(line.rsplit("=", 1)[1]) for line in lines) == [0, 1, 2, 3]


def test_ranks_keeps_the_profiles_collective_calls(tmp_path):
    """`--ranks N` resizes the job: the recorded collectives stay, on the
    profile's own ranks (its MPI_COMM_WORLD), and one beyond N is refused."""
    from rankwise.cli.map import _traffic
    from rankwise.traffic.collective_calls import CollectiveCall
    from rankwise.util.errors import UsageError
    from rankwise.traffic.matrix import CommMatrix

    m = generate("ring:ranks=4,bytes=1K")
    path = tmp_path / "app.rwc"
    CommMatrix(4, m.src, m.dst, m.msgs, m.bytes, collectives=[CollectiveCall("bcast", 4096, calls=3, root=1)]).save(path)
    grown = _traffic(None, path, 8)
    assert grown.n_ranks == 8
    assert [(c.op, c.bytes, c.calls, c.root, c.ranks) for c in grown.collectives] == [("bcast", 4096, 3, 1, (0, 1, 2, 3))]
    with pytest.raises(UsageError, match="bcast involves rank 3, beyond the job's 3 ranks"):
        small = generate("ring:ranks=2,bytes=1K")
        CommMatrix(4, small.src, small.dst, small.msgs, small.bytes,
                   collectives=[CollectiveCall("bcast", 8)]).save(tmp_path / "b.rwc")
        _traffic(None, tmp_path / "b.rwc", 3)
