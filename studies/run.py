"""Run the studies of rankwise itself, by area or by name (`make studies [AREA=coll]`).

    .venv/bin/python studies/run.py                  # every study that runs unattended
    .venv/bin/python studies/run.py coll live        # the studies of these areas
    .venv/bin/python studies/run.py tofu_collectives -- --quick   # one study, its own options
    .venv/bin/python studies/run.py --list [AREA...]

Each study is a script of studies/AREA/ and runs on its own just as well (its docstring says
how); this table only says which arguments the unattended run gives it. A study prints its
tables and exits 1 when its goal is missed; the runner goes on and exits 1 at the end if one
failed. The emulated cluster's studies exit 2 where the machine cannot run them (no root or
network namespaces): reported as skipped. Studies marked "by name only" need inputs or a network
and run only when named."""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
CANNOT_RUN = 2  # the studies' exit status where the machine lacks what they need


@dataclass(frozen=True)
class Study:
    area: str
    name: str  # unique; the script's name unless one script runs twice
    script: str  # under studies/
    args: tuple[str, ...] = ()
    by_name_only: str = ""  # why it is not part of the unattended run
    needs_root: bool = False  # exit status 2: no root or network namespaces here (skipped, not failed)


# In the order `make studies` runs them; model fidelity last: the longest, and it misses issue 21's
# targets today.
STUDIES: tuple[Study, ...] = (
    Study("probe", "probe_accuracy", "probe/probe_accuracy.py"),
    Study("probe", "probe_cost", "probe/probe_cost.py"),
    Study("probe", "probe_real_mpi", "probe/probe_real_mpi.py"),
    Study("probe", "capacity_accuracy", "probe/capacity_accuracy.py"),
    Study("probe", "groups_accuracy", "probe/groups_accuracy.py"),
    Study("probe", "knee_accuracy", "probe/knee_accuracy.py"),
    Study("probe", "profile_overhead", "probe/profile_overhead.py"),
    Study("map", "map_quality", "map/map_quality.py"),
    Study("map", "torus_mapping", "map/torus_mapping.py"),
    Study("map", "cart_reorder", "map/cart_reorder.py"),
    Study("predict", "predict_accuracy", "predict/predict_accuracy.py"),
    Study("predict", "predict_speed", "predict/predict_speed.py"),
    Study("predict", "predict_luo2018", "predict/predict_luo2018.py"),
    Study("coll", "coll_verify_real", "coll/coll_verify_real.py"),
    Study("coll", "coll_overhead", "coll/coll_overhead.py"),
    Study("coll", "coll_probe_cost", "coll/coll_probe_cost.py"),
    Study("coll", "coll_selection_gains", "coll/coll_selection_gains.py"),
    Study("coll", "coll_tree_validate", "coll/coll_tree_validate.py"),
    Study("coll", "coll_all_validate", "coll/coll_all_validate.py"),
    Study("coll", "tofu_collectives", "coll/tofu_collectives.py"),
    Study("coll", "tofu_alltoall", "coll/tofu_alltoall.py"),
    Study("coll", "tofu_allgather", "coll/tofu_allgather.py"),
    Study("coll", "ompi_rules_gain", "coll/ompi_rules_gain.py",
          by_name_only="needs platform folders with probed models (--sim DIR...) or a launcher and a model"),
    Study("coll", "coll_mpich_tests", "coll/coll_mpich_tests.py",
          by_name_only="clones SimGrid's MPICH tests unless given --simgrid PATH; about 20 minutes"),
    Study("node", "node_domains", "node/node_domains.py"),
    Study("live", "live_remap", "live/live_remap.py"),
    Study("live", "live_remap_emulated", "live/live_remap.py", ("--emulated",), needs_root=True),
    Study("hardening", "mutate_inputs", "hardening/mutate_inputs.py"),
    Study("hardening", "mutate_library", "hardening/mutate_library.py"),
    Study("emulated", "emulated_before_after", "emulated/emulated_before_after.py", needs_root=True),
    Study("model", "model_fidelity", "model/model_fidelity.py", ("--out", "rankwise-fidelity")),
    Study("model", "fidelity_predict", "model/fidelity_predict.py"),
)

AREAS = tuple(dict.fromkeys(s.area for s in STUDIES))


def command(study: Study, extra: list[str]) -> list[str]:
    return [sys.executable, str(HERE / study.script), *study.args, *extra]


def select(words: list[str]) -> list[Study]:
    """The studies of the areas named, and those named themselves; everything unattended when empty."""
    if not words:
        return [s for s in STUDIES if not s.by_name_only]
    names = {s.name for s in STUDIES}
    unknown = [w for w in words if w not in AREAS and w not in names]
    if unknown:
        raise SystemExit(f"studies/run.py: unknown area or study {', '.join(unknown)} "
                         f"(areas: {', '.join(AREAS)}; --list shows the studies)")
    return [s for s in STUDIES
            if s.name in words or (s.area in words and not s.by_name_only)]


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    extra = []
    if "--" in argv:  # what follows goes to every study selected
        argv, extra = argv[:argv.index("--")], argv[argv.index("--") + 1:]
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("words", nargs="*", metavar="AREA|STUDY", help=f"areas: {', '.join(AREAS)}; or study names")
    ap.add_argument("--list", action="store_true", help="print the studies and their commands, run nothing")
    args = ap.parse_args(argv)
    chosen = select(args.words)
    if args.list:
        listed = chosen if args.words else STUDIES
        for s in listed:
            note = f"  (by name only: {s.by_name_only})" if s.by_name_only else ""
            root = "  (root and network namespaces)" if s.needs_root else ""
            print(f"{s.area:10} {s.name:22} studies/{s.script} {' '.join(s.args)}".rstrip() + root + note)
        return 0
    failed, skipped = [], []
    for s in chosen:
        print(f"== studies/run.py: {s.area}/{s.name}: {' '.join(command(s, extra)[1:])}", flush=True)
        start = time.monotonic()
        rc = subprocess.run(command(s, extra)).returncode
        print(f"== {s.name}: exit {rc} after {time.monotonic() - start:.0f} s", flush=True)
        if rc == CANNOT_RUN and s.needs_root:
            skipped.append(s.name)
        elif rc:
            failed.append(s.name)
    print(f"== studies/run.py: {len(chosen) - len(failed) - len(skipped)} passed, "
          f"failed: {', '.join(failed) or 'none'}, skipped (cannot run here): {', '.join(skipped) or 'none'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
