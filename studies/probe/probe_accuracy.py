"""Probe accuracy and anomaly detection on the default simulated cluster.

1. Isolated-mode probe of the default platform (64 nodes, rankwise.sim.platform.default_spec):
   relative error of the fitted alpha against the ground truth (alpha_ij + alpha_ji) / 2 and of
   the fitted bandwidth against the route bandwidth at t=0, over all ordered pairs. Pairs whose
   route holds a time-varying link are reported apart: their bandwidth legitimately differs from
   the t=0 value. Goal: every other pair within 10 %.
2. find_slow_links on that model against the ground truth `changed_pairs`, per altered link.
   Goal: every pair of every degraded link flagged, no false positive (varying link: reported,
   not counted).
3. Concurrent-mode probe (the default mode) of the same platform: the congested rack uplink,
   invisible to an isolated ping-pong, must show up as slow blocks of its rack's group; pairs
   flagged outside the altered routes are listed as false positives.

Exit status 1 when a goal is missed. Run: .venv/bin/python studies/probe/probe_accuracy.py [--out DIR]
"""

from __future__ import annotations

import argparse
import csv
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.table import Table

from rankwise.model.anomalies import find_slow_links
from rankwise.model.model import MEASURED, Model
from rankwise.measure.probe import ProbeOptions, probe_sim
from rankwise.sim.platform import GeneratedPlatform, default_spec, generate, route
from rankwise.sim.verdict import describe_link

ERROR_GOAL = 0.10  # relative error allowed on alpha and bandwidth
QUANTILES = ((0.5, "median"), (0.9, "90 %"), (0.99, "99 %"), (1.0, "max"))

console = Console(width=None if sys.stdout.isatty() else 124, highlight=False)


# --- ground truth helpers ------------------------------------------------------------------


def on_link(gp: GeneratedPlatform) -> np.ndarray:
    """on[k, i, j]: the route i -> j goes through link k of the link table."""
    n = len(gp.nodes)
    on = np.zeros((len(gp.links), n, n), bool)
    for i in range(n):
        for j in range(n):
            for k in route(gp.spec, i, j):
                on[k, i, j] = True
    return on


def changed_by(gp: GeneratedPlatform, on: np.ndarray) -> np.ndarray:
    """by[k, i, j]: link k alone (every other link nominal) changes what an isolated ping-pong i -> j
    sees: the route's latency, its bottleneck bandwidth at t=0 or its lowest bottleneck over time.
    Attributes each of the ground truth's changed pairs to the link(s) responsible."""
    by = np.zeros_like(on)
    nom_bw = np.array([link.nominal_bandwidth for link in gp.links])
    for k, link in enumerate(gp.links):
        if not link.reasons:
            continue
        lat_changed = link.latency != link.nominal_latency
        for i, j in zip(*np.nonzero(on[k])):
            others = [m for m in route(gp.spec, int(i), int(j)) if m != k]
            floor = min(nom_bw[others], default=np.inf)
            nominal = min(floor, link.nominal_bandwidth)
            by[k, i, j] = lat_changed or min(floor, link.bandwidth) != nominal or (
                min(floor, link.bandwidth_min) != nominal)
    return by


def reorder(model: Model, gp: GeneratedPlatform) -> Model:
    """Check that the model's node order is the ground truth's (SMPI hosts keep file order)."""
    if model.names != gp.nodes:
        raise SystemExit(f"model nodes {model.names[:3]}... do not match the platform {gp.nodes[:3]}...")
    return model


def describe(link) -> str:
    """'node-5 bandwidth x0.25 (degraded)': the verdict's wording plus why."""
    return f"{link.name} {describe_link(link)} ({', '.join(link.reasons)})"


def rel_err(fit: np.ndarray, truth: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.abs(fit / truth - 1.0)


def quantile_row(label: str, values: np.ndarray) -> list[str]:
    v = values[np.isfinite(values)]
    if v.size == 0:
        return [label, "0", *["-"] * len(QUANTILES)]
    return [label, str(v.size), *[f"{100 * np.quantile(v, q):.3g} %" for q, _ in QUANTILES]]


def pct(x: float) -> str:
    return f"{100 * x:.3g} %"


# --- the steps ------------------------------------------------------------------------------


def probe(gp: GeneratedPlatform, out: Path, mode: str, progress: bool, reuse: bool) -> tuple[Model, float]:
    path = out / f"{mode}.model"
    if reuse and path.exists():
        model = Model.load(path)
        console.print(f"[bold]{mode} probe[/]: reusing {path} ({model.duration:.3f} s simulated)")
        return reorder(model, gp), float("nan")
    console.print(f"[bold]{mode} probe[/] of {len(gp.nodes)} simulated nodes ...")
    t0 = time.monotonic()
    model = probe_sim(gp.platform_xml, path, ProbeOptions(mode=mode), show_progress=progress)
    wall = time.monotonic() - t0
    s = model.settings
    console.print(
        f"  done in {wall:.1f} s wall, {model.duration:.3f} s simulated; repetitions={s.repetitions}, "
        f"rounds={s.rounds}, warmup={s.warmup}, {len(model.sizes)} sizes {int(model.sizes[0])} B..{int(model.sizes[-1])} B"
    )
    return reorder(model, gp), wall


def accuracy(gp: GeneratedPlatform, model: Model, varying: np.ndarray) -> tuple[bool, dict]:
    n = len(gp.nodes)
    off = ~np.eye(n, dtype=bool)
    truth_alpha = (gp.alpha + gp.alpha.T) / 2
    ea = rel_err(model.alpha, truth_alpha)
    eb = rel_err(model.bandwidth, gp.bandwidth)
    measured = (model.state == MEASURED) & off
    missing = off & ~measured
    steady = off & ~varying

    table = Table(title="Isolated probe: relative error |fit / truth - 1| over ordered pairs")
    table.add_column("quantity / pairs")
    table.add_column("pairs", justify="right")
    for _, name in QUANTILES:
        table.add_column(name, justify="right")
    table.add_row(*quantile_row("alpha, all but varying", ea[steady & measured]))
    table.add_row(*quantile_row("bandwidth, all but varying", eb[steady & measured]))
    table.add_row(*quantile_row("alpha, through varying link", ea[varying & measured]))
    table.add_row(*quantile_row("bandwidth vs t=0, through varying", eb[varying & measured]))
    console.print(table)

    worst_a = np.nanmax(np.where(steady & measured, ea, np.nan))
    worst_b = np.nanmax(np.where(steady & measured, eb, np.nan))
    for name, err, fit, truth, unit, scale in (
        ("alpha", ea, model.alpha, truth_alpha, "µs", 1e6),
        ("bandwidth", eb, model.bandwidth, gp.bandwidth, "GB/s", 1e-9),
    ):
        i, j = np.unravel_index(np.nanargmax(np.where(steady & measured, err, np.nan)), err.shape)
        console.print(
            f"  largest {name} error: {gp.nodes[i]} -> {gp.nodes[j]}: fit {fit[i, j] * scale:.6g} {unit}, "
            f"truth {truth[i, j] * scale:.6g} {unit} ({pct(err[i, j])})"
        )
    if varying.any():
        v = varying & measured
        bw = model.bandwidth[v]
        inside = (bw >= gp.bandwidth_min[v] * (1 - ERROR_GOAL)) & (bw <= gp.bandwidth[v] * (1 + ERROR_GOAL))
        console.print(
            f"  through the varying link (reported, not counted): {inside.sum()}/{v.sum()} fitted bandwidths\n"
            f"    inside the route's range \\[lowest, t=0] ±{pct(ERROR_GOAL)}; fit / t=0 value from "
            f"{np.min(bw / gp.bandwidth[v]):.3g} to {np.max(bw / gp.bandwidth[v]):.3g}"
        )
    ok = missing.sum() == 0 and worst_a <= ERROR_GOAL and worst_b <= ERROR_GOAL
    console.print(f"  pairs measured {measured.sum()}, missing {missing.sum()}")
    console.print(
        f"  goal, every pair not through a varying link within {pct(ERROR_GOAL)}: max alpha error "
        f"{pct(worst_a)}, max bandwidth error {pct(worst_b)} -> " + ("[green]MET[/]" if ok else "[red]MISSED[/]")
    )
    return ok, {"alpha_err": ea, "bw_err": eb, "truth_alpha": truth_alpha}


def concurrent_errors(gp: GeneratedPlatform, model: Model, on: np.ndarray, truth_alpha: np.ndarray) -> None:
    """Under concurrent load: error of healthy pairs, slowdown of the pairs through a congested link."""
    n = len(gp.nodes)
    off = ~np.eye(n, dtype=bool)
    healthy = off & (model.state == MEASURED)
    congested = np.zeros((n, n), bool)
    for k, link in enumerate(gp.links):
        if link.reasons:
            healthy &= ~on[k]
        if "congested" in link.reasons:
            congested |= on[k]
    congested &= ~gp.changed & (model.state == MEASURED)
    table = Table(title="Concurrent probe: |fit / truth - 1| (truth = isolated route values)")
    table.add_column("quantity / pairs")
    table.add_column("pairs", justify="right")
    for _, name in QUANTILES:
        table.add_column(name, justify="right")
    table.add_row(*quantile_row("alpha, routes without altered link", rel_err(model.alpha, truth_alpha)[healthy]))
    table.add_row(*quantile_row("bandwidth, routes without altered link", rel_err(model.bandwidth, gp.bandwidth)[healthy]))
    table.add_row(*quantile_row("bandwidth, through congested uplink only", rel_err(model.bandwidth, gp.bandwidth)[congested]))
    console.print(table)


def rack_group(findings, gp: GeneratedPlatform, rack: int) -> int:
    members = findings.groups[gp.rack_of_node == rack]
    return int(Counter(members.tolist()).most_common(1)[0][0])


def group_label(findings, gp: GeneratedPlatform, g: int) -> str:
    racks = sorted(set(gp.rack_of_node[findings.groups == g].tolist()))
    size = int((findings.groups == g).sum())
    return f"g{g} = {size} nodes of rack{'s' if len(racks) > 1 else ''} {','.join(map(str, racks))}"


def detection(
    gp: GeneratedPlatform, model: Model, on: np.ndarray, by: np.ndarray, mode: str
) -> tuple[bool, np.ndarray, np.ndarray, object, int]:
    """Per altered link: expected pairs, flagged, missed.

    Returns (goal met, flagged, expected, findings, false positives).

    Isolated: expected = changed pairs (an isolated ping-pong differs from nominal); a link is
    answerable for the pairs it changes by itself (changed_by).
    Concurrent: also every pair through a congested link (visible under load only).
    A pair through the varying link alone is never counted (neither missed nor false positive).
    """
    n = len(gp.nodes)
    f = find_slow_links(model)
    flagged = np.zeros((n, n), bool)
    for i, j in f.flagged():
        flagged[i, j] = True
    expected = gp.changed.copy()
    if mode == "concurrent":
        for k, link in enumerate(gp.links):
            if "congested" in link.reasons:
                expected |= on[k]
    var_links = [k for k, link in enumerate(gp.links) if "varying" in link.reasons]
    counted = [k for k, link in enumerate(gp.links) if link.reasons and k not in var_links]
    only_varying = np.zeros((n, n), bool)
    for k in var_links:
        only_varying |= on[k]
    for k in counted:
        only_varying &= ~on[k]

    console.print(f"  groups found: {', '.join(group_label(f, gp, g) for g in sorted(set(f.groups.tolist())))}")
    console.print(f"  slow nodes: {', '.join(gp.nodes[i] for i in f.slow_nodes) or 'none'}")
    console.print(f"  slow blocks: {', '.join(f'g{a}->g{b}' for a, b in f.slow_blocks) or 'none'}")
    table = Table(title=f"{mode.capitalize()} probe: find_slow_links vs ground truth, per altered link")
    for col, just in (("altered link", "left"), ("link identified", "left"), ("pairs flagged", "right"),
                      ("missed", "right"), ("counted", "left")):
        table.add_column(col, justify=just)
    ok = True
    for k, link in enumerate(gp.links):
        if not link.reasons:
            continue
        exp = on[k] if mode == "concurrent" and "congested" in link.reasons else by[k]
        found, missed = int((exp & flagged).sum()), int((exp & ~flagged).sum())
        if link.kind == "node":
            ident = "slow node" if link.index in f.slow_nodes else "no"
        else:
            g = rack_group(f, gp, link.index)
            blocks = [b for b in f.slow_blocks if g in b and b[0] != b[1]]
            ident = f"{len(blocks)} slow blocks of g{g}" if blocks else "no"
        counts = k in counted
        if counts and exp.any() and missed:
            ok = False
        note = "yes" if counts else "no (varying)"
        if counts and not exp.any():
            note = "yes (no pair changed)"
            if "congested" in link.reasons:
                ident += " (right: invisible in isolation)"
        table.add_row(describe(link), ident, f"{found}/{int(exp.sum())}", str(missed), note)
    console.print(table)

    false_pos = flagged & ~expected
    fp_counted = false_pos & ~only_varying
    scopes = Counter(p.scope for p in f.slow_pairs if fp_counted[p.src, p.dst])
    console.print(
        f"  flagged {flagged.sum()} pairs, expected {expected.sum()}; false positives: {int(fp_counted.sum())}"
        + (f" ({', '.join(f'{v} {k}' for k, v in scopes.items())})" if scopes else "")
    )
    if fp_counted.any():
        ranked = [p for p in f.slow_pairs if fp_counted[p.src, p.dst]][:15]
        fp_table = Table(title=f"{mode} false positives (worst {len(ranked)} of {int(fp_counted.sum())})")
        for col in ("pair", "groups", "scope", "latency ratio", "bandwidth ratio"):
            fp_table.add_column(col)
        for p in ranked:
            fp_table.add_row(
                f"{gp.nodes[p.src]} -> {gp.nodes[p.dst]}",
                f"g{f.groups[p.src]} -> g{f.groups[p.dst]}",
                p.scope,
                f"{p.latency_ratio:.3g}",
                f"{p.bandwidth_ratio:.3g}",
            )
        console.print(fp_table)
    return ok, flagged, expected, f, int(fp_counted.sum())


def write_csv(path: Path, gp, iso: Model, conc: Model | None, errs, varying, flagged_iso, flagged_conc,
              expected_conc) -> None:
    n = len(gp.nodes)
    ce_a = rel_err(conc.alpha, errs["truth_alpha"]) if conc is not None else None
    ce_b = rel_err(conc.bandwidth, gp.bandwidth) if conc is not None else None
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        header = ["src", "dst", "through_varying", "changed", "alpha_true_s", "alpha_fit_s", "alpha_rel_err",
                  "bw_true_Bps", "bw_min_true_Bps", "bw_fit_Bps", "bw_rel_err", "flagged_isolated"]
        if conc is not None:
            header += ["alpha_fit_concurrent_s", "alpha_rel_err_concurrent", "bw_fit_concurrent_Bps",
                       "bw_rel_err_concurrent", "flagged_concurrent", "expected_concurrent"]
        w.writerow(header)
        for i in range(n):
            for j in range(n):
                if i == j:
                    continue
                row = [gp.nodes[i], gp.nodes[j], int(varying[i, j]), int(gp.changed[i, j]),
                       f"{errs['truth_alpha'][i, j]:.9g}", f"{iso.alpha[i, j]:.9g}", f"{errs['alpha_err'][i, j]:.6g}",
                       f"{gp.bandwidth[i, j]:.9g}", f"{gp.bandwidth_min[i, j]:.9g}", f"{iso.bandwidth[i, j]:.9g}",
                       f"{errs['bw_err'][i, j]:.6g}", int(flagged_iso[i, j])]
                if conc is not None:
                    row += [f"{conc.alpha[i, j]:.9g}", f"{ce_a[i, j]:.6g}", f"{conc.bandwidth[i, j]:.9g}",
                            f"{ce_b[i, j]:.6g}", int(flagged_conc[i, j]), int(expected_conc[i, j])]
                w.writerow(row)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, help="generate the platform and keep the models and a CSV here")
    ap.add_argument("--reuse", action="store_true", help="reuse the models a previous run left in --out")
    ap.add_argument("--no-concurrent", action="store_true", help="skip the concurrent-mode probe")
    ap.add_argument("--progress", choices=("auto", "yes", "no"), default="auto",
                    help="probe progress bar (auto: when stderr is a terminal)")
    args = ap.parse_args()
    progress = sys.stderr.isatty() if args.progress == "auto" else args.progress == "yes"

    tmp = None
    if args.out:
        out = args.out
        out.mkdir(parents=True, exist_ok=True)
    else:
        tmp = tempfile.TemporaryDirectory(prefix="rankwise-bench-")
        out = Path(tmp.name)
    t_start = time.monotonic()
    console.print(f"[bold]rankwise probe accuracy[/] — {time.strftime('%Y-%m-%d %H:%M')}, platform in {out}")
    gp = generate(default_spec(), out)
    on = on_link(gp)
    varying = np.zeros((len(gp.nodes),) * 2, bool)
    for k, link in enumerate(gp.links):
        if "varying" in link.reasons:
            varying |= on[k]
    console.print(f"default platform: {gp.spec.racks} racks x {gp.spec.nodes_per_rack} nodes; altered links:")
    for link in gp.altered_links:
        console.print(f"  - {describe(link)}")

    goals: list[tuple[str, bool]] = []
    iso, _ = probe(gp, out, "isolated", progress, args.reuse and bool(args.out))
    ok_acc, errs = accuracy(gp, iso, varying)
    goals.append((f"isolated: alpha and bandwidth within {pct(ERROR_GOAL)} (varying link apart)", ok_acc))
    by = changed_by(gp, on)
    assert (by.any(axis=0) == gp.changed).all(), "per-link attribution disagrees with changed_pairs"
    ok_det, flagged_iso, _, _, fp_iso = detection(gp, iso, on, by, "isolated")
    goals.append(("isolated: every degraded link's changed pairs flagged", ok_det))
    goals.append(("isolated: no false positive", fp_iso == 0))

    conc = flagged_conc = expected_conc = None
    if not args.no_concurrent:
        conc, _ = probe(gp, out, "concurrent", progress, args.reuse and bool(args.out))
        concurrent_errors(gp, conc, on, errs["truth_alpha"])
        _, flagged_conc, expected_conc, f, fp_conc = detection(gp, conc, on, by, "concurrent")
        found = True
        for link in gp.links:
            if "congested" not in link.reasons:
                continue
            g = rack_group(f, gp, link.index)
            blocks = [b for b in f.slow_blocks if g in b and b[0] != b[1]]
            console.print(
                f"  {link.name}: rack {link.index} is group {group_label(f, gp, g)}; slow blocks with other groups: "
                + (", ".join(f"g{a}->g{b}" for a, b in blocks) or "none")
            )
            found &= bool(blocks)
        others = [b for b in f.slow_blocks
                  if not any(rack_group(f, gp, link.index) in b for link in gp.links if "congested" in link.reasons)]
        console.print(
            f"  slow blocks not involving a congested rack: {', '.join(f'g{a}->g{b}' for a, b in others) or 'none'}"
        )
        goals.append(("concurrent: congested rack uplink found (slow blocks of its group)", found))
        console.print(f"  concurrent false positives (listed, not a goal): {fp_conc}")

    if args.out:
        path = out / "probe_accuracy_pairs.csv"
        write_csv(path, gp, iso, conc, errs, varying, flagged_iso, flagged_conc, expected_conc)
        console.print(f"per-pair errors written to {path}")

    table = Table(title="Goals")
    table.add_column("goal")
    table.add_column("result")
    for name, ok in goals:
        table.add_row(name, "[green]met[/]" if ok else "[red]MISSED[/]")
    console.print(table)
    console.print(f"total wall time {time.monotonic() - t_start:.0f} s")
    if tmp:
        tmp.cleanup()
    return 0 if all(ok for _, ok in goals) else 1


if __name__ == "__main__":
    sys.exit(main())
