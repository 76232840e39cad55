"""The protocol knee and the send overhead against SimGrid's ground truth: a platform with a
known eager/rendezvous switch (SMPI's per-size factors) and a known smpi/os."""

from __future__ import annotations

import numpy as np
import pytest

from rankwise.model.model import Model
from rankwise.measure.probe import ProbeOptions, probe_sim
from rankwise.sim.platform import Degraded, PlatformSpec, generate
from conftest import assert_one_line_error, run_cli

# Two sizes each side of 64 KiB at least, and the switch itself among them.
SIZES = "8,512,8K,16K,32K,64K,128K,512K,2M"
OPTIONS = ProbeOptions(sizes=SIZES, repetitions=2, rounds=1)


@pytest.fixture(scope="module")
def switched(tmp_path_factory):
    """3 nodes, one with a slow link (the fits are per pair); rendezvous from 64 KiB on; 2 us
    per blocking send."""
    spec = PlatformSpec(racks=1, nodes_per_rack=3, cores=1, protocol_switch=65536, send_overhead=2e-6,
                        degraded=[Degraded("node", 2, bw_factor=0.5, lat_factor=3.0)])
    gen = generate(spec, tmp_path_factory.mktemp("switched"))
    model = probe_sim(gen.platform_xml, tmp_path_factory.mktemp("m") / "m.rwm", OPTIONS, show_progress=False)
    return spec, gen, model


def test_probe_finds_the_configured_knee_and_fits_each_side(switched):
    spec, gen, model = switched
    assert model.knee == spec.protocol_switch
    mask = ~np.eye(3, dtype=bool)
    one_way = gen.alpha  # route latency i -> j; the empty acknowledgement comes back j -> i
    # Eager: rtt = a_ij + a_ji + size / (eager_bw_factor * bw).
    np.testing.assert_allclose(model.alpha[mask], ((one_way + one_way.T) / 2)[mask], rtol=0.02)
    np.testing.assert_allclose(model.beta[mask], (1 / (spec.eager_bw_factor * gen.bandwidth))[mask], rtol=0.02)
    # Rendezvous: the payload's route pays rendezvous_lat_factor x its latency, full bandwidth;
    # the fit takes the eager acknowledgement's alpha off the intercept.
    large = spec.rendezvous_lat_factor * one_way + one_way.T - (one_way + one_way.T) / 2
    np.testing.assert_allclose(model.alpha_large[mask], large[mask], rtol=0.02)
    np.testing.assert_allclose(model.beta_large[mask], (1 / gen.bandwidth)[mask], rtol=0.02)


def test_probe_measures_the_send_overhead(switched):
    spec, _, model = switched
    np.testing.assert_allclose(model.overhead, spec.send_overhead, rtol=0.01)


def test_refit_finds_the_knee_again(switched, tmp_path):
    _, _, model = switched
    model.save(tmp_path / "m.rwm")
    again = Model.load(tmp_path / "m.rwm")
    again.knee, again.alpha_large[:] = 0, np.nan
    again.refit()
    assert again.knee == model.knee
    np.testing.assert_allclose(again.alpha_large, model.alpha_large, equal_nan=True)


def test_one_way_time_takes_the_large_fit_from_the_knee_on(switched):
    """Model.time (the mapper's and the reports' cost of one message) follows
    the protocol: the eager line below the knee, the large fit at and above."""
    _, _, model = switched
    knee = model.knee
    assert knee > 0
    for i, j in ((0, 1), (2, 0)):
        below, above = knee // 2, 4 * knee
        assert model.time(i, j, below) == pytest.approx(model.alpha[i, j] + model.beta[i, j] * below)
        assert model.time(i, j, above) == pytest.approx(model.alpha_large[i, j] + model.beta_large[i, j] * above)
        # the eager line would be off above the knee (SMPI's factors change there)
        assert abs(model.alpha[i, j] + model.beta[i, j] * above - model.time(i, j, above)) > 0.05 * model.time(i, j, above)


def test_no_knee_and_no_overhead_on_a_plain_platform(tmp_path):
    gen = generate(PlatformSpec(racks=1, nodes_per_rack=3, cores=1), tmp_path / "plain")
    model = probe_sim(gen.platform_xml, tmp_path / "m.rwm", OPTIONS, show_progress=False)
    assert model.knee == 0
    assert np.isnan(model.alpha_large).all() and np.isnan(model.beta_large).all()
    assert (model.overhead == 0).all()  # CM02 without smpi/os: a detached send costs nothing
    # nor a receive without smpi/or: what is left is the 15 extra 8-byte messages on the wire (2 ns)
    assert (model.recv_overhead < 1e-8).all()


def test_probe_measures_the_receive_overhead_apart_from_the_send_overhead(tmp_path):
    """smpi/os = 1 us, smpi/or = 2 us: each is found on every node, the ping-pong's alpha holds
    the receive overhead (its sends are nonblocking: smpi/ois, 0 here), and the model file is
    format 4, which reads back the same."""
    spec = PlatformSpec(racks=1, nodes_per_rack=3, cores=1, send_overhead=1e-6, recv_overhead=2e-6)
    gen = generate(spec, tmp_path / "p")
    model = probe_sim(gen.platform_xml, tmp_path / "m.rwm", ProbeOptions(sizes="8,1K", repetitions=2, rounds=1),
                      show_progress=False)
    np.testing.assert_allclose(model.overhead, 1e-6, rtol=0.01)
    np.testing.assert_allclose(model.recv_overhead, 2e-6, rtol=0.01)
    mask = ~np.eye(3, dtype=bool)
    np.testing.assert_allclose(model.alpha[mask], ((gen.alpha + gen.alpha.T) / 2 + 2e-6)[mask], rtol=0.02)
    text = (tmp_path / "m.rwm").read_text()
    assert text.startswith("rankwise-model 4\n") and text.count("\nrecv-overhead ") == 3
    again = Model.load(tmp_path / "m.rwm")
    np.testing.assert_array_equal(again.recv_overhead, model.recv_overhead)
    r = run_cli("show", tmp_path / "m.rwm")
    assert r.returncode == 0, r.stderr
    assert "Receive overhead: 2 / 2 / 2 us (min / median / max)" in r.stdout


def test_sim_platform_writes_the_switch(tmp_path):
    result = run_cli("sim", "platform", "--out", tmp_path / "p", "--racks", "1", "--nodes-per-rack", "2",
                     "--protocol-switch", "64K", "--send-overhead", "1e-6")
    assert result.returncode == 0, result.stderr
    xml = (tmp_path / "p" / "platform.xml").read_text()
    assert '<prop id="smpi/lat-factor" value="0:1;65535:3"/>' in xml
    assert '<prop id="network/model" value="SMPI"/>' in xml
    assert '<prop id="smpi/os" value="0:1e-06:0"/>' in xml


@pytest.mark.parametrize("value, text", [("64Q", "--protocol-switch: '64Q' is not a size"),
                                         ("1", "protocol_switch must be 0 (none) or a size")])
def test_sim_platform_rejects_a_bad_switch(tmp_path, value, text):
    result = run_cli("sim", "platform", "--out", tmp_path / "p", "--protocol-switch", value)
    assert_one_line_error(result, text)
    assert not (tmp_path / "p").exists()


# --- the predictor on each side of the knee -------------------------------------------------------


def test_prediction_above_the_knee_uses_the_large_fit_and_matches_smpi(tmp_path):
    from rankwise.predict.predictor import SMPI_ALGORITHM, PredictNetwork, placement, predict_collective
    from rankwise.cluster.benchmark_programs import run_benchmark

    # The switched platform without its send overhead: the model's o is not the predictor's.
    spec = PlatformSpec(racks=1, nodes_per_rack=3, cores=1, protocol_switch=65536,
                        degraded=[Degraded("node", 2, bw_factor=0.5, lat_factor=3.0)])
    gen = generate(spec, tmp_path / "plat")
    model = probe_sim(gen.platform_xml, tmp_path / "m.rwm", OPTIONS, show_progress=False)
    net = PredictNetwork.from_model(model)
    assert net.knee == spec.protocol_switch
    eager_only = PredictNetwork.from_model(model)
    eager_only.knee = 0
    table = run_benchmark("collectives", ["--collectives", "bcast", "--sizes", "8K,1M", "--iterations", "2",
                                          "--warmup", "1"], sim=gen.platform_xml, ranks_per_node=1, nodes=3,
                          smpi_cfg=[f"smpi/bcast:{SMPI_ALGORITHM['bcast', 'binomial']}"])["bcast"]
    node_of = placement(1, 3)
    for size, measured in zip(table.size, table.median_us):
        predicted = predict_collective(net, "bcast", "binomial", size, node_of).span / 1e-6
        without = predict_collective(eager_only, "bcast", "binomial", size, node_of).span / 1e-6
        print(f"bcast binomial {size} B: smpi {measured:.2f} us, predicted {predicted:.2f} us, "
              f"eager fit only {without:.2f} us")
        assert abs(predicted - measured) <= 0.03 * measured
        if size >= spec.protocol_switch:  # the eager fit's half bandwidth doubles a 1 MiB transfer
            assert without > 1.5 * measured
        else:
            assert without == predicted


def test_show_prints_the_knee_and_the_overheads(switched, tmp_path):
    spec, gen, model = switched
    model.save(tmp_path / "m.rwm")
    result = run_cli("show", tmp_path / "m.rwm")
    assert result.returncode == 0, result.stderr
    out = " ".join(result.stdout.split())
    pairs = ~np.eye(3, dtype=bool)
    large_alpha, large_bw = np.median(model.alpha_large[pairs]) * 1e6, np.median(1 / model.beta_large[pairs]) / 1e9
    assert "Protocol knee at 64 KiB: below it alpha" in out
    assert f"from it alpha {large_alpha:.3g} us, {large_bw:.3g} GB/s" in out
    assert "Send overhead o: 2 / 2 / 2 us (min / median / max)" in out


def test_show_says_when_no_knee_was_found(tmp_path):
    model = Model.empty(["a", "b"], [8, 1024])
    model.overhead[:] = [1e-6, 3e-6]
    model.save(tmp_path / "m.rwm")
    out = " ".join(run_cli("show", tmp_path / "m.rwm").stdout.split())
    assert "Protocol knee: none" in out
    assert "Send overhead o: 1 / 2 / 3 us (min / median / max), highest on b" in out


def test_overhead_of_a_node_next_to_one_that_does_not_answer_is_unknown(tmp_path):
    gen = generate(PlatformSpec(racks=1, nodes_per_rack=4, cores=1, unreachable=[3], send_overhead=1e-6),
                   tmp_path / "plat")
    model = probe_sim(gen.platform_xml, tmp_path / "m.rwm", ProbeOptions(sizes="8,1K", repetitions=2, rounds=1,
                                                                         timeout=0.5), show_progress=False)
    # The ring goes 0 -> 1 -> 2 -> 3 -> 0: nodes 2 and 3 send to or through the unanswering link.
    np.testing.assert_allclose(model.overhead[:2], 1e-6, rtol=0.01)
    assert np.isnan(model.overhead[2:]).all()


def test_a_partial_reprobe_keeps_one_knee_and_fits_its_pairs_on_both_sides(switched, tmp_path):
    spec, gen, model = switched
    model.save(tmp_path / "m.rwm")
    names = model.names
    options = ProbeOptions(sizes=SIZES, repetitions=2, rounds=1, pairs=[(names[0], names[1])],
                           update=tmp_path / "m.rwm")
    merged = probe_sim(gen.platform_xml, tmp_path / "merged.rwm", options, show_progress=False)
    assert merged.knee == spec.protocol_switch
    np.testing.assert_allclose(merged.alpha_large, model.alpha_large, rtol=0.01, equal_nan=True)
    np.testing.assert_allclose(merged.beta, model.beta, rtol=0.01, equal_nan=True)
