"""Open MPI's rules file checked on the machine it is for (`coll tune
--format ompi-rules --verify LAUNCHER`): the predictor chose each row from a
model, and a model can be wrong where the job's own MPI and stack decide
(per-message CPU costs, progress, ranks sharing cores). The benchmark
program runs the rows' operations and sizes without and with the file,
alternately, and a row keeps its algorithm only where the library's own
verdict (rw_verdict_keep) says it beat Open MPI's fixed decision in every
run by the margin; the others fall back to the fixed decision
(docs/concepts/collectives.md, "Open MPI's own rules file")."""

from __future__ import annotations

import dataclasses
import statistics
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

from rankwise._engine.coll import verdict_keep
from rankwise.coll.comparison import PROGRAM, LauncherTarget, program_args, run_program
from rankwise.coll.ompi_rules import OmpiRow, format_ompi_rules
from rankwise.util import paths
from rankwise.util.errors import RankwiseError

# The library's verdict margin (verify.c): a choice must be this much faster.
MARGIN = 0.02


@dataclass
class VerifiedRow:
    row: OmpiRow  # as the predictor chose it
    fixed_us: list[float]  # Open MPI's fixed decision, one time per run
    rules_us: list[float]  # with the rules file
    kept: bool

    @property
    def gain(self) -> float:
        """1 - median with the file / median without."""
        f = statistics.median(self.fixed_us)
        return 1 - statistics.median(self.rules_us) / f if f > 0 else float("nan")


def job_size(launcher: str) -> int:
    """How many ranks the launcher starts (a one-call run of the program)."""
    with tempfile.TemporaryDirectory(prefix="rankwise-verify-") as tmp:
        return LauncherTarget(launcher, None, None, None).ranks(Path(tmp))


def verify_ompi(rows: Sequence[OmpiRow], launcher: str, ranks: int, *, repeats: int = 3, iterations: int = 10,
                margin: float = MARGIN, progress: Callable[[str], None] | None = None
                ) -> tuple[list[OmpiRow], list[VerifiedRow]]:
    """The rows with the algorithms that did not win set back to the fixed
    decision, and what each changed row measured."""
    from rankwise.measure.profile import launcher_command

    if repeats < 1:
        raise RankwiseError(f"--verify-repeats: {repeats} is not a positive count of runs")
    changed = [r for r in rows if r.choice.chosen]
    if not changed:
        return list(rows), []
    ops = sorted({r.op for r in changed})
    sizes = sorted({r.choice.nbytes for r in changed})
    program = str(paths.program(PROGRAM, "mpi"))
    with tempfile.TemporaryDirectory(prefix="rankwise-verify-") as tmp:
        rules = Path(tmp) / "ompi.rules"
        rules.write_text(format_ompi_rules(rows, ranks, model="verification", min_gain=0.0))
        ways = {"fixed": "", "rules": (f" --mca coll_tuned_use_dynamic_rules 1"
                                       f" --mca coll_tuned_dynamic_rules_filename {rules}")}
        times: dict[str, list] = {w: [] for w in ways}
        done = 0
        for k in range(repeats):
            # Alternate which goes first: a machine that drifts during a run favours neither.
            for way in (("fixed", "rules") if k % 2 == 0 else ("rules", "fixed")):
                done += 1
                if progress:
                    progress(f"run {done}/{2 * repeats}: {'without' if way == 'fixed' else 'with'} the file")
                cmd, env = launcher_command(launcher + ways[way], program, program_args(ops, sizes, iterations), {})
                times[way].append(run_program(cmd, env, f"{PROGRAM} under {launcher} ({way})", simulated=False))
    checked = {}
    for r in changed:
        f = [t[r.op].at(r.choice.nbytes) for t in times["fixed"]]
        c = [t[r.op].at(r.choice.nbytes) for t in times["rules"]]
        checked[id(r)] = VerifiedRow(r, f, c, verdict_keep(c, f, margin))
    out = [r if id(r) not in checked or checked[id(r)].kept
           else dataclasses.replace(r, choice=dataclasses.replace(r.choice, chosen=0, gain=0.0)) for r in rows]
    return out, [checked[id(r)] for r in changed]
