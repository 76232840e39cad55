"""Open MPI's own dynamic rules file (coll/tuned) from the predictor's
choices among Open MPI's algorithms (binding.ompi_choose): rankwise's
decisions where they are Open MPI's, without the preload library
(docs/concepts/collectives.md, "Open MPI's own rules file").

Open MPI reads it with
    mpirun --mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_dynamic_rules_filename FILE
The file holds numbers only (a '#' starts a comment to the end of the line):
the count of collectives, then per collective its id, the count of
communicator sizes, and per size the size, the count of message sizes and
per message size `bytes algorithm faninout segsize`, the first at 0 bytes.
Open MPI takes the last communicator size not above the communicator's
(the first if none is) and the last message size not above the call's."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable, Sequence

from rankwise.coll.selection import OmpiChoice, TuneOptions, ompi_choose, ompi_collective_id
from rankwise.coll.tune import size_classes
from rankwise.predict.predictor import PredictNetwork

# Open MPI counts these calls' bytes over the whole communicator (a block
# per rank); rankwise decides them per rank.
WHOLE_COMM_OPS = ("gather", "scatter", "allgather", "alltoall")
OMPI_OPS = ("allgather", "allreduce", "alltoall", "bcast", "gather", "reduce", "scatter")


@dataclass
class OmpiRow:
    op: str
    lo: int  # bytes as rankwise counts them (per rank for WHOLE_COMM_OPS), inclusive
    hi: int  # inclusive
    choice: OmpiChoice


def tune_ompi(network: PredictNetwork, node_of, ops: Iterable[str], sizes: Sequence[int],
              options: TuneOptions | None = None,
              progress: Callable[[str], None] | None = None) -> list[OmpiRow]:
    """A row per (op, size class), chosen at the class's size."""
    rows = []
    for op in ops:
        for lo, hi, at in size_classes(sizes):
            if progress:
                progress(f"{op} {at} B")
            rows.append(OmpiRow(op, lo, hi, ompi_choose(network, node_of, op, at, options)))
    return rows


def _ompi_bytes(op: str, nbytes: int, comm_size: int) -> int:
    return nbytes * comm_size if op in WHOLE_COMM_OPS else nbytes


def message_rules(rows: Sequence[OmpiRow], comm_size: int) -> list[tuple[int, int, int, int, str]]:
    """(bytes as Open MPI counts them, algorithm, faninout, segsize, name)
    from 0 bytes up, neighbours with the same algorithm and segment merged."""
    out: list[tuple[int, int, int, int, str]] = []
    for r in sorted(rows, key=lambda r: r.lo):
        c = r.choice.choice
        alg, seg, name = (0, 0, "") if r.choice.chosen == 0 else (c.id, c.segment, c.name)
        if out and (out[-1][1], out[-1][3]) == (alg, seg):
            continue
        out.append((0 if not out else _ompi_bytes(r.op, r.lo, comm_size), alg, 0, seg, name))
    return out


def format_ompi_rules(rows: Sequence[OmpiRow], comm_size: int, *, model: str, min_gain: float, note: str = "") -> str:
    """The rules file's text: the tuned rules hold for communicators of
    exactly comm_size ranks; smaller and larger ones get rules of Open MPI's
    fixed decision (algorithm 0), since Open MPI would otherwise apply the
    nearest size's rules to them."""
    model = " ".join(model.split())  # one comment line: a newline would start numbers Open MPI reads
    by_op: dict[str, list[OmpiRow]] = {}
    for r in rows:
        by_op.setdefault(r.op, []).append(r)
    lines = [
        "# Open MPI coll/tuned dynamic rules written by `rankwise coll tune --format ompi-rules`",
        f"# for communicators of {comm_size} ranks on {model} (min gain {min_gain:g});",
        "# use: mpirun --mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_dynamic_rules_filename THIS_FILE",
        "# per message size: bytes algorithm faninout segsize (algorithm 0: Open MPI's fixed decision)",
        *([f"# {' '.join(note.split())}"] if note else []),
        f"{len(by_op)}  # collectives",
    ]
    fixed = [(0, 0, 0, 0, "")]
    for op in sorted(by_op, key=ompi_collective_id):
        lines.append(f"{ompi_collective_id(op)}  # {op}")
        sizes = [(0, fixed), (comm_size, message_rules(by_op[op], comm_size)), (comm_size + 1, fixed)]
        lines.append(f"{len(sizes)}  # communicator sizes: below, exactly and above {comm_size}")
        for cs, msgs in sizes:
            lines.append(f"{cs}  # communicator size")
            lines.append(f"{len(msgs)}  # message sizes")
            lines += [f"{b} {alg} {fan} {seg}" + (f"  # {name}" if name else "") for b, alg, fan, seg, name in msgs]
    return "\n".join(lines) + "\n"
