"""Whether the stress test finds what shared links carry (docs/concepts/model.md, "Shared-link capacity").

Platforms (64 nodes in 4 racks of 16, rankwise.sim.platform):
  default      default_spec(): rack 3's uplink congested to 1/4 of non-blocking, nodes 5 and 41
               at 1/4 and 1/2 of the bandwidth, node 22's latency x5, node 30's bandwidth varying
  oversub      every uplink at 1/4 of non-blocking (4:1)
  shuffled     racks dealt to hosts in a shuffled order, nodes 3, 17, 38, 60 at 1/8 of the
               bandwidth and 20x the latency, rack 1's uplink at 1/2 of non-blocking
Each platform is probed in isolated mode (sizes 8,16K,1M, 2 x 2 ping-pongs), then the stress test
runs alone on that model (rankwise probe --capacities-only --update), for its own wall time.

Per rack: the uplink's bandwidth (ground truth), whether it limits the rack's nodes (below 90 %
of what they send at once), and the up/down link the stress test found for the rack's group.
Goals: every limiting uplink found within 10 % in both directions, no link where none limits;
every node's nic cap within 10 % of its link's bandwidth (varying node 30 apart: the stress test
sees its bandwidth of the moment).

Then all-to-all (pair, 64 ranks one per node) on the oversubscribed platform: SMPI against the
predictor on the probed model without (links and nic caps removed: the fallback) and with the
capacities. Goal: median |error| <= 10 % with capacities.

Run: .venv/bin/python studies/probe/capacity_accuracy.py [--platforms default,oversub,shuffled]
     [--sizes 64K,1M] [--no-predict]
Cost: about 1 minute on 2 cores (the all-to-all simulations dominate).
"""

from __future__ import annotations

import argparse
import copy
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.table import Table

from rankwise.predict.predictor import PredictNetwork, predict_collective
from rankwise.measure.probe import LIGHT_SIM_PROBE, probe_sim
from rankwise.sim.platform import Congested, Degraded, PlatformSpec, default_spec, generate
from rankwise.predict.validate import simulate_pinned

TOLERANCE = 0.10


def platforms() -> dict[str, PlatformSpec]:
    base = PlatformSpec(racks=4, nodes_per_rack=16, cores=4, seed=1)
    slow = tuple(Degraded("node", i, bw_factor=0.125, lat_factor=20.0) for i in (3, 17, 38, 60))
    return {
        "default": default_spec(),
        "oversub": replace(base, oversubscription=4.0),
        "shuffled": replace(base, shuffle_racks=True, degraded=slow, congested=(Congested(1, 0.5),), seed=5),
    }


def probe(gp, out: Path, capacities: str | None, update: Path | None = None):
    costs = []
    options = replace(LIGHT_SIM_PROBE, mode="isolated", capacities=capacities, update=update)
    if capacities == "only":
        options = replace(options, sizes=None, repetitions=None, rounds=None, warmup=None, mode=None)
    t0 = time.time()
    model = probe_sim(gp.platform_xml, out, options, show_progress=False, on_stress_cost=costs.append)
    return model, time.time() - t0, costs[0] if costs else None


def rack_rows(gp, model):
    """Per rack: (rack, uplink B/s, limits?, found up, found down), and the misses."""
    node_link = {link.index: link for link in gp.links if link.kind == "node"}
    links = {link.name: link.capacity for link in model.links}
    rows, misses = [], []
    for r in range(gp.spec.racks):
        members = np.flatnonzero(gp.rack_of_node == r)
        uplink = next(link.bandwidth for link in gp.links if link.kind == "uplink" and link.index == r)
        sent = sum(node_link[i].bandwidth for i in members)
        limits = uplink < 0.9 * sent
        groups = [int(model.group_of[model.index(gp.nodes[i])]) for i in members]
        g = max(set(groups), key=groups.count)
        up, down = links.get(f"up-{g}"), links.get(f"down-{g}")
        rows.append((r, uplink, sent, limits, g, up, down))
        if limits and not all(v is not None and abs(v / uplink - 1) <= TOLERANCE for v in (up, down)):
            misses.append(f"rack {r}: uplink {uplink / 1e9:.3g} GB/s, found {up} / {down}")
        if not limits and (up is not None or down is not None):
            misses.append(f"rack {r}: no limit, but a link was found ({up} / {down})")
    known = {f"{kind}-{g}" for *_, g, _, _ in rows for kind in ("up", "down")}
    misses += [f"link {name} matches no rack" for name in links if name not in known]
    return rows, misses


def nic_errors(gp, model):
    """Worst relative error of a nic cap against the node's link (the varying node apart)."""
    errors = [abs(value / link.bandwidth - 1) for link in gp.links if link.kind == "node" and "varying" not in link.reasons
              for value in (model.inject[model.index(gp.nodes[link.index])], model.eject[model.index(gp.nodes[link.index])])]
    return max(errors)


def nic_misses(gp, model):
    out = []
    for link in gp.links:
        if link.kind != "node" or "varying" in link.reasons:
            continue
        i = model.index(gp.nodes[link.index])
        for what, value in (("inject", model.inject[i]), ("eject", model.eject[i])):
            if not abs(value / link.bandwidth - 1) <= TOLERANCE:
                out.append(f"{gp.nodes[link.index]} {what} {value / 1e9:.3g} GB/s, link {link.bandwidth / 1e9:.3g}")
    return out


def gb(x) -> str:
    return "-" if x is None else f"{x / 1e9:.2f}"


def predict_rows(gp, model, sizes):
    hosts = list(gp.nodes)
    bare = copy.deepcopy(model)
    bare.links = []
    bare.inject = np.full(model.n_nodes, np.nan)
    bare.eject = np.full(model.n_nodes, np.nan)
    nets = {"without": PredictNetwork.from_model(bare), "with": PredictNetwork.from_model(model)}
    node_of = np.asarray([model.index(h) for h in hosts], dtype=np.int32)
    t0 = time.time()
    simulated = simulate_pinned(gp.platform_xml, "alltoall", "pair", sizes, hosts, iterations=1)
    wall = time.time() - t0
    rows = []
    for size in sizes:
        if size not in simulated:
            continue
        pred = {}
        for key, net in nets.items():
            pred[key] = predict_collective(net, "alltoall", "pair", size, node_of).span
        rows.append((size, simulated[size], pred["without"], pred["with"]))
    return rows, wall


def parse_size(text: str) -> int:
    text = text.strip().upper()
    mult = {"K": 1 << 10, "M": 1 << 20}.get(text[-1:], 1)
    return int(text.rstrip("KM")) * mult


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--platforms", default="default,oversub,shuffled")
    ap.add_argument("--sizes", default="64K,1M", help="all-to-all sizes per rank pair")
    ap.add_argument("--no-predict", action="store_true", help="skip the all-to-all comparison")
    args = ap.parse_args()
    console = Console(width=150, force_terminal=False)
    failed = []
    with tempfile.TemporaryDirectory(prefix="rankwise-capacity-") as tmp:
        for name in args.platforms.split(","):
            gp = generate(platforms()[name], Path(tmp) / name)
            _, wall_plain, _ = probe(gp, Path(tmp) / f"{name}-pairs.rwm", None)
            model, wall, cost = probe(gp, Path(tmp) / f"{name}.rwm", "only", Path(tmp) / f"{name}-pairs.rwm")
            rows, misses = rack_rows(gp, model)
            misses += nic_misses(gp, model)
            t = Table(title=f"{name}: uplinks (GB/s) against the links found", title_justify="left")
            for col in ("rack", "uplink", "its nodes send", "limits", "group", "up found", "down found", "error"):
                t.add_column(col, justify="right")
            for r, uplink, sent, limits, g, up, down in rows:
                err = max(abs(v / uplink - 1) for v in (up, down) if v is not None) if (up or down) else None
                t.add_row(str(r), gb(uplink), gb(sent), "yes" if limits else "no", f"g{g}", gb(up), gb(down),
                          "-" if err is None else f"{100 * err:.1f}%")
            console.print(t)
            console.print(f"  stress test: {cost.phases} phases, {cost.seconds * 1e3:.1f} ms simulated; "
                          f"wall {wall:.1f} s (--capacities-only run, launch included; the ping-pong's run "
                          f"{wall_plain:.1f} s); ping-pong {model.duration * 1e3:.1f} ms simulated; "
                          f"{len(model.links)} links; nic caps missed: {len(nic_misses(gp, model))}, "
                          f"worst nic error {100 * nic_errors(gp, model):.1f}%",
                          highlight=False)
            for m in misses:
                console.print(f"  [red]miss[/]: {m}", highlight=False)
            failed += [f"{name}: {m}" for m in misses]

            if name == "oversub" and not args.no_predict:
                sizes = [parse_size(s) for s in args.sizes.split(",")]
                prows, swall = predict_rows(gp, model, sizes)
                t = Table(title="oversub: alltoall pair, 64 ranks x 1 per node: SMPI vs predicted (ms)",
                          title_justify="left")
                for col in ("bytes per pair", "SMPI", "without capacities", "error", "with capacities", "error"):
                    t.add_column(col, justify="right")
                errors = []
                for size, sim, without, with_ in prows:
                    e0, e1 = without / sim - 1, with_ / sim - 1
                    errors.append(abs(e1))
                    t.add_row(str(size), f"{sim * 1e3:.2f}", f"{without * 1e3:.2f}", f"{100 * e0:+.1f}%",
                              f"{with_ * 1e3:.2f}", f"{100 * e1:+.1f}%")
                console.print(t)
                console.print(f"  SMPI wall {swall:.1f} s", highlight=False)
                if errors and np.median(errors) > TOLERANCE:
                    failed.append(f"oversub alltoall: median |error| {100 * np.median(errors):.1f}% with capacities")
    for f in failed:
        console.print(f"[bold red]goal missed[/]: {f}", highlight=False)
    if not failed:
        console.print("[bold green]all goals met[/]")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
