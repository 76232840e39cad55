"""Every environment variable rankwise reads, with who reads it and what it means.

The one list: `rankwise info` prints it with each variable's value, docs/guide/environment.md is
this table (tests/python/cli/test_info.py keeps the two equal), and the same test fails when
a source file reads a `RANKWISE_` variable that is not listed here."""

from __future__ import annotations

from dataclasses import dataclass

COLL = "collectives library"
PROFILER = "profiler"
CLI = "rankwise command"


@dataclass(frozen=True)
class Variable:
    name: str
    reader: str
    meaning: str
    doc: str  # where it is explained in full


_COLL_DOC = "docs/concepts/collectives.md"
_OPS = ("BCAST", "REDUCE", "GATHER", "SCATTER", "ALLREDUCE", "ALLGATHER", "ALLTOALL")

VARIABLES: tuple[Variable, ...] = (
    Variable("RANKWISE_MODEL", COLL, "a probed model (.rwm): every communicator decides its collectives from the "
             "network of its own ranks; topology constructors reorder on it", _COLL_DOC),
    Variable("RANKWISE_COLL_RULES", COLL, "a rules file of `rankwise coll tune`: its choices for MPI_COMM_WORLD",
             "docs/concepts/collectives.md"),
    Variable("RANKWISE_COLL_PROBE", COLL, "boolean: without rules or a model, measure the network in the job once "
             "per communicator and decide from it", _COLL_DOC),
    *(Variable(f"RANKWISE_COLL_{op}", COLL, f"force MPI_{op.capitalize()}'s algorithm: one of its names, or "
               "passthrough", _COLL_DOC + ' "Environment" (the names per operation)') for op in _OPS),
    Variable("RANKWISE_COLL_SEGMENT", COLL, "bytes per segment of pipelined broadcasts (default 0: not segmented)",
             _COLL_DOC),
    Variable("RANKWISE_COLL_KNOMIAL_K", COLL, "k of k-nomial trees, 2..1024 (default 4)", _COLL_DOC),
    Variable("RANKWISE_COLL_ALLTOALL_CAP", COLL, "concurrent sends per rank of the symmetric all-to-all, >= 1",
             _COLL_DOC),
    Variable("RANKWISE_COLL_MAX_EVALS", COLL, "predictor runs per local search when deciding from a network "
             "(default 1000)", _COLL_DOC),
    Variable("RANKWISE_COLL_VERIFY", COLL, "boolean: verify a decision against the MPI's own in its first calls "
             "(default on with a real MPI, off under SMPI)", _COLL_DOC),
    Variable("RANKWISE_COLL_TRACE", COLL, "boolean: rank 0 prints each algorithm run and each decision", _COLL_DOC),
    Variable("RANKWISE_CART_WEIGHTS", COLL, "w1,...,wN: relative volume along each dimension of MPI_Cart_create's "
             "grid, for the reordering", _COLL_DOC),
    Variable("RANKWISE_TOPO_REORDER", COLL, "boolean, default on; off: topology constructors keep the MPI's order "
             "although RANKWISE_MODEL is set", _COLL_DOC),
    Variable("RANKWISE_PROFILE_OUT", PROFILER, "the matrix file the profiler writes (.rwc)", "docs/reference/formats.md"),
    Variable("RANKWISE_PROFILE_SOURCE", PROFILER, "the matrix's source line (default pmpi: and the command line)",
             "docs/reference/formats.md"),
    Variable("RANKWISE_PROFILE_CLOCK", PROFILER, "`monotonic`: time calls with clock_gettime", "docs/reference/formats.md"),
    Variable("RANKWISE_PROFILE_COLL_GROUPS", PROFILER, "the most groups of collective calls a rank keeps "
             "(default 1024)", "docs/reference/formats.md"),
    Variable("RANKWISE_LIB", CLI, "the C engine library (librankwise.so) to load instead of the installed one",
             "docs/guide/environment.md"),
    Variable("RANKWISE_MPI_BIN", CLI, "the folder of the real-MPI programs (rankwise-probe, ...) to run instead of "
             "the installed ones, e.g. an MPICH build", _COLL_DOC),
    Variable("RANKWISE_SMPI_BIN", CLI, "the folder of the simulated-cluster programs to run instead of the "
             "installed ones", "docs/guide/environment.md"),
    Variable("_RANKWISE_COMPLETE", CLI, "set by the shell completion scripts (complete_bash, complete_zsh, ...): "
             "print the completions of the words typed instead of running", "docs/guide/install.md"),
)


def by_name() -> dict[str, Variable]:
    return {v.name: v for v in VARIABLES}


def markdown_table() -> str:
    """docs/guide/environment.md's table."""
    rows = ["| variable | read by | meaning | in full |", "|---|---|---|---|"]
    rows += [f"| `{v.name}` | {v.reader} | {v.meaning} | {v.doc} |" for v in VARIABLES]
    return "\n".join(rows) + "\n"
