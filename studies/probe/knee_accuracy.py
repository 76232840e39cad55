"""The protocol knee and the send overhead against SimGrid's ground truth.

Platforms of 2 racks x 8 nodes (1 rank per node; node 3 at half bandwidth and 3x latency, so that
pairs differ) with an eager/rendezvous switch made by SMPI's per-size factors (`rankwise sim
platform --protocol-switch`: below the switch half bandwidth, from it 3x the route's latency) and a
send overhead made by smpi/os (`--send-overhead`), probed in concurrent mode (default settings).
Per case:
- knee found vs the first probed size at or above the switch (the probe cannot see between sizes);
- median / max relative error over ordered pairs of alpha, beta (below the knee) and alpha_large,
  beta_large (at and above it) against the ground truth: alpha = (a_ij + a_ji) / 2 and
  beta = 1 / (0.5 bw) eager; alpha_large = 3 a_ij + a_ji - alpha (the empty acknowledgement is
  eager), beta_large = 1 / bw;
- send overhead: median / max relative error over nodes against smpi/os;
- a plain CM02 platform (no switch): no knee may be found.
Probe sizes: the default 11 (8 B .. 4 MiB, steps of 4) and the same with 16 KiB and 64 KiB added.

Goal: knee at the first probed size at or above the switch, every fit within 2 %, o within 2 %.
Exit status 1 when a goal is missed.
Run: .venv/bin/python studies/probe/knee_accuracy.py
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from rankwise.measure.probe import ProbeOptions, probe_sim
from rankwise.sim.platform import Degraded, PlatformSpec, generate

DEFAULT = [8, 32, 128, 512, 2048, 8192, 32768, 131072, 524288, 2097152, 4194304]
DENSE = sorted(DEFAULT + [16384, 65536])


def errors(model, gen, spec):
    n = len(gen.nodes)
    pairs = ~np.eye(n, dtype=bool)
    a = gen.alpha
    truth = {
        "alpha": (a + a.T) / 2,
        "beta": 1 / (spec.eager_bw_factor * gen.bandwidth) if spec.protocol_switch else 1 / gen.bandwidth,
        "alpha_large": spec.rendezvous_lat_factor * a + a.T - (a + a.T) / 2,
        "beta_large": 1 / gen.bandwidth,
    }
    out = {}
    for name, t in truth.items():
        got = getattr(model, name)[pairs]
        if np.isnan(got).all():
            continue
        e = np.abs(got - t[pairs]) / t[pairs]
        out[name] = (float(np.median(e)), float(e.max()))
    return out


def main() -> int:
    ok = True
    print("| switch | sizes | o (us) | knee found | alpha | beta | alpha_large | beta_large | o error | probe: simulated / wall |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    cases = [(65536, DEFAULT, 2e-6), (65536, DENSE, 2e-6), (4096, DEFAULT, 0.5e-6), (4096, DENSE, 10e-6),
             (0, DEFAULT, 1e-6), (0, DENSE, 0.0)]
    with tempfile.TemporaryDirectory(prefix="rankwise-knee-") as tmp:
        for k, (switch, sizes, o) in enumerate(cases):
            spec = PlatformSpec(racks=2, nodes_per_rack=8, cores=1, protocol_switch=switch, send_overhead=o,
                                degraded=[Degraded("node", 3, bw_factor=0.5, lat_factor=3.0)])
            gen = generate(spec, Path(tmp) / f"p{k}")
            t0 = time.monotonic()
            model = probe_sim(gen.platform_xml, Path(tmp) / f"m{k}.rwm",
                              ProbeOptions(sizes=",".join(map(str, sizes))), show_progress=False)
            wall = time.monotonic() - t0
            expected = min((s for s in sizes if s >= switch), default=0) if switch else 0
            e = errors(model, gen, spec)
            o_err = np.abs(model.overhead - o) / o if o else np.abs(model.overhead)
            cells = [f"{e[n][0]:.3%} / {e[n][1]:.3%}" if n in e else "-" for n in
                     ("alpha", "beta", "alpha_large", "beta_large")]
            o_text = (f"{np.median(o_err):.3%} / {o_err.max():.3%}" if o else f"{o_err.max() * 1e6:.3g} us (abs)")
            print(f"| {switch or 'none'} | {len(sizes)} | {o * 1e6:g} | {model.knee} (expected {expected}) | "
                  + " | ".join(cells) + f" | {o_text} | {model.duration:.3f} s / {wall:.1f} s |")
            ok &= model.knee == expected and all(v[1] <= 0.02 for v in e.values())
            ok &= bool(o_err.max() <= 0.02) if o else bool(o_err.max() == 0)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
