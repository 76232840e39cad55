"""rankwise.cluster.slurm_topology and rankwise.cluster.hostlist: the Slurm export."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from slurm_conf import check_topology_conf, nodes_under

from rankwise.util.errors import RankwiseError
from rankwise.cluster.hostlist import compress, expand
from rankwise.model.model import MEASURED, Model
from rankwise.cluster.slurm_topology import build_switches, nodes_to_avoid, topology_conf


@given(st.lists(st.tuples(st.sampled_from(["node-", "n", "gpu"]), st.integers(0, 300), st.booleans()),
                min_size=1, max_size=40, unique=True))
def test_hostlist_round_trip(items):
    names = list(dict.fromkeys(f"{p}{x:03d}" if pad else f"{p}{x}" for p, x, pad in items))
    assert sorted(expand(compress(names))) == sorted(names)


def test_hostlist_forms():
    assert compress(["node-0", "node-1", "node-2", "node-7"]) == "node-[0-2,7]"
    assert compress(["n01", "n02", "login"]) == "n[01-02],login"
    assert expand("tux[0-3,12],s9") == ["tux0", "tux1", "tux2", "tux3", "tux12", "s9"]
    with pytest.raises(RankwiseError, match="hostlist"):
        compress(["a[1]"])


def clustered(group_sizes, latency, names=None) -> Model:
    """A model whose one-way latency between nodes of groups a and b is latency[a][b]."""
    g = np.repeat(np.arange(len(group_sizes)), group_sizes)
    n = g.size
    m = Model.empty(names or [f"node-{i}" for i in range(n)], [8])
    m.state[:] = MEASURED
    np.fill_diagonal(m.state, 0)
    m.alpha = np.asarray(latency, float)[g][:, g] * (1 + 0.01 * np.random.default_rng(0).random((n, n)))
    m.beta[:] = 1e-10
    m.group_of = g.astype(np.int32)
    return m


def test_switches_follow_the_groups_and_the_levels_above():
    """Four racks in two pods: racks 0, 1 close (3 us), racks 2, 3 close, the pods 8 us apart."""
    lat = [[1, 3, 8, 8], [3, 1, 8, 8], [8, 8, 1, 3], [8, 8, 3, 1]]
    m = clustered([4, 4, 4, 4], np.array(lat) * 1e-6)
    conf = topology_conf(m, build_switches(m), "m.rwm")
    switches = check_topology_conf(conf)
    assert "SwitchName=rw-g0 Nodes=node-[0-3]" in conf
    assert switches["rw-l1-0"]["switches"] == ["rw-g0", "rw-g1"]
    assert switches["rw-root"]["switches"] == ["rw-l1-0", "rw-l1-1"]
    assert sorted(nodes_under(switches, "rw-root")) == sorted(m.names)


def test_flat_groups_hang_from_one_root_and_one_group_is_one_switch():
    m = clustered([3, 3, 3], np.array([[1, 6, 6], [6, 1, 6], [6, 6, 1]]) * 1e-6)
    switches = check_topology_conf(topology_conf(m, build_switches(m), "m"))
    assert set(switches) == {"rw-g0", "rw-g1", "rw-g2", "rw-root"}
    one = clustered([5], [[1e-6]])
    switches = check_topology_conf(topology_conf(one, build_switches(one), "m"))
    assert switches == {"rw-g0": {"nodes": [f"node-{i}" for i in range(5)], "switches": []}}


def test_nodes_to_avoid_slow_link_slow_nic_and_silent():
    m = clustered([4, 4], np.array([[1, 6], [6, 1]]) * 1e-6)
    m.beta[2, :] = m.beta[:, 2] = 4e-10  # node-2's link at a quarter
    m.inject[:] = m.eject[:] = 1e10
    m.inject[6] = 3e9  # node-6 sends to several peers at 30 %
    m.state[7, :] = 2  # node-7 never answered
    m.state[7, 7] = 0
    m.alpha[7, :] = m.beta[7, :] = np.nan
    avoid = {a.name: a.why for a in nodes_to_avoid(m)}
    assert set(avoid) == {"node-2", "node-6", "node-7"}
    assert "slow link" in avoid["node-2"] and "NIC sends" in avoid["node-6"] and "did not answer" in avoid["node-7"]
