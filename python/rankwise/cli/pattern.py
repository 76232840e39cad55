"""`rankwise pattern`: generate communication matrices and summarise them.

Every generating command turns its options into the fields of a pattern
spec and goes through the same parser as `rankwise pattern spec TEXT`, so
the CLI and the specs accept exactly the same values (sizes like 64K or
1M, grids like 8x8x8) and refuse them with the same one-line errors.
Values are taken as text for that reason: typer's own integer parsing
would answer bad input with a multi-line usage box."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from rankwise.util.files import prepare_output
from rankwise.traffic.matrix import MATRIX_SUFFIXES
from rankwise.report.matrix import show_summary

pattern_app = typer.Typer(
    no_args_is_help=True,
    help="Communication patterns: matrices of who sends how much to whom (.rwc, .npz).",
)
from rankwise.cli.common import console

OUTPUT = typer.Option(..., "--output", "-o", help="Matrix file to write: .rwc (text) or .npz.")
ITERATIONS = typer.Option(None, "--iterations", metavar="N", help="Repetitions summed into the matrix (1).")
RANKS = typer.Option(None, "--ranks", metavar="N", help="Number of ranks.")
BYTES = typer.Option(None, "--bytes", metavar="SIZE", help="Bytes per message: 512, 64K, 1M.")


def _flag(value: Optional[bool]) -> Optional[str]:
    return None if value is None else str(int(value))


def _make(name: str, output: Path, **options: Optional[str]) -> None:
    from rankwise.traffic.patterns import PatternSpec, generate

    prepare_output(output, MATRIX_SUFFIXES)  # before generating: a wrong name costs nothing
    fields = {key: value for key, value in options.items() if value is not None}
    matrix = generate(PatternSpec.from_fields(name, fields, options=True))
    matrix.save(output)
    show_summary(matrix, output, console)


@pattern_app.command()
def alltoall(
    output: Path = OUTPUT,
    ranks: Optional[str] = RANKS,
    bytes: Optional[str] = BYTES,
    sizes: Optional[Path] = typer.Option(None, "--sizes", help="Alltoallv: N x N bytes from i to j (.npy or text)."),
    iterations: Optional[str] = ITERATIONS,
):
    """MPI_Alltoall: every rank sends --bytes to every other rank (--sizes: alltoallv)."""
    if sizes is not None:
        if bytes is not None:
            from rankwise.util.errors import UsageError

            raise UsageError("give --bytes (alltoall) or --sizes (alltoallv), not both")
        _make("alltoallv", output, sizes=str(sizes), ranks=ranks, iterations=iterations)
    else:
        _make("alltoall", output, ranks=ranks, bytes=bytes, iterations=iterations)


@pattern_app.command()
def stencil3d(
    output: Path = OUTPUT,
    grid: Optional[str] = typer.Option(None, "--grid", metavar="PXxPYxPZ", help="Process grid (default: most cubic for --ranks)."),
    ranks: Optional[str] = RANKS,
    neighbours: Optional[str] = typer.Option(None, "--neighbours", "--neighbors", metavar="6|18|26", help="Faces, + edges, + corners (6)."),
    periodic: Optional[bool] = typer.Option(None, "--periodic/--no-periodic", help="Wrap around the grid (no)."),
    bytes: Optional[str] = BYTES,
    edge_bytes: Optional[str] = typer.Option(None, "--edge-bytes", metavar="SIZE", help="Bytes per edge message (--bytes)."),
    corner_bytes: Optional[str] = typer.Option(None, "--corner-bytes", metavar="SIZE", help="Bytes per corner message (--bytes)."),
    mode: Optional[str] = typer.Option(None, "--mode", metavar="direct|1d|2d|3d", help="26-neighbour exchange as rankwise-bench-stencil runs it: at once (1d), plane then z (2d), axis by axis (3d)."),
    iterations: Optional[str] = ITERATIONS,
):
    """3-D halo exchange on a process grid (ranks in MPI_Cart_create order)."""
    _make("stencil3d", output, grid=grid, ranks=ranks, neighbours=neighbours, periodic=_flag(periodic),
          bytes=bytes, edge_bytes=edge_bytes, corner_bytes=corner_bytes, mode=mode, iterations=iterations)


@pattern_app.command()
def stencil2d(
    output: Path = OUTPUT,
    grid: Optional[str] = typer.Option(None, "--grid", metavar="PXxPY", help="Process grid (default: most square for --ranks)."),
    ranks: Optional[str] = RANKS,
    neighbours: Optional[str] = typer.Option(None, "--neighbours", "--neighbors", metavar="4|8", help="Edges, + corners (4)."),
    periodic: Optional[bool] = typer.Option(None, "--periodic/--no-periodic", help="Wrap around the grid (no)."),
    bytes: Optional[str] = BYTES,
    corner_bytes: Optional[str] = typer.Option(None, "--corner-bytes", metavar="SIZE", help="Bytes per corner message (--bytes)."),
    iterations: Optional[str] = ITERATIONS,
):
    """2-D halo exchange on a process grid."""
    _make("stencil2d", output, grid=grid, ranks=ranks, neighbours=neighbours, periodic=_flag(periodic),
          bytes=bytes, corner_bytes=corner_bytes, iterations=iterations)


@pattern_app.command()
def ring(
    output: Path = OUTPUT,
    ranks: Optional[str] = RANKS,
    bytes: Optional[str] = BYTES,
    bidirectional: Optional[bool] = typer.Option(None, "--bidirectional/--one-way", help="Also send to i-1 (no)."),
    iterations: Optional[str] = ITERATIONS,
):
    """Rank i sends to i+1 (mod N)."""
    _make("ring", output, ranks=ranks, bytes=bytes, bidirectional=_flag(bidirectional), iterations=iterations)


@pattern_app.command()
def groups(
    output: Path = OUTPUT,
    groups: Optional[str] = typer.Option(None, "--groups", metavar="N", help="Number of groups (N_bl)."),
    per_group: Optional[str] = typer.Option(None, "--per-group", metavar="N", help="Ranks per group (N_perbl)."),
    bytes: Optional[str] = typer.Option(None, "--bytes", metavar="SIZE", help="Bytes per message inside a group, every iteration (D)."),
    link_bytes: Optional[str] = typer.Option(None, "--link-bytes", metavar="SIZE", help="Bytes per message between neighbouring groups (D_bl)."),
    skip: Optional[str] = typer.Option(None, "--skip", metavar="N", help="Links exchange every 1+N iterations (N_skip, 0)."),
    iterations: Optional[str] = typer.Option(None, "--iterations", metavar="N", help="Iterations (N_iter, 1)."),
    seed: Optional[str] = typer.Option(None, "--seed", metavar="S", help="Seed of the rank shuffle (0)."),
    shuffle: Optional[bool] = typer.Option(None, "--shuffle/--no-shuffle", help="Shuffle rank numbers (yes)."),
):
    """Synthetic groups: all-to-all inside groups, a chain of links between them."""
    _make("groups", output, groups=groups, per_group=per_group, bytes=bytes, link_bytes=link_bytes,
          skip=skip, iterations=iterations, seed=seed, shuffle=_flag(shuffle))


@pattern_app.command()
def fft(
    output: Path = OUTPUT,
    grid: Optional[str] = typer.Option(None, "--grid", metavar="NXxNYxNZ", help="FFT grid of complex doubles."),
    ranks: Optional[str] = RANKS,
    decomp: Optional[str] = typer.Option(None, "--decomp", metavar="slab|pencil", help="Decomposition (pencil)."),
    pgrid: Optional[str] = typer.Option(None, "--pgrid", metavar="P1xP2", help="Pencil process grid (default: most square for --ranks)."),
    iterations: Optional[str] = typer.Option(None, "--iterations", metavar="N", help="Forward transforms (1)."),
):
    """Transposes of a distributed 3-D FFT (slab: one all-to-all; pencil: rows then columns)."""
    _make("fft", output, grid=grid, ranks=ranks, decomp=decomp, pgrid=pgrid, iterations=iterations)


@pattern_app.command()
def tree(
    output: Path = OUTPUT,
    ranks: Optional[str] = RANKS,
    bytes: Optional[str] = BYTES,
    op: Optional[str] = typer.Option(None, "--op", metavar="bcast|reduce", help="Direction of the tree (bcast)."),
    root: Optional[str] = typer.Option(None, "--root", metavar="RANK", help="Root rank (0)."),
    iterations: Optional[str] = ITERATIONS,
):
    """Binomial-tree broadcast or reduce."""
    _make("tree", output, ranks=ranks, bytes=bytes, op=op, root=root, iterations=iterations)


@pattern_app.command()
def collective(
    output: Path = OUTPUT,
    ranks: Optional[str] = RANKS,
    bytes: Optional[str] = BYTES,
    op: Optional[str] = typer.Option(None, "--op", metavar="bcast|reduce|allreduce|gather|scatter|allgather",
                                     help="The collective (bcast)."),
    root: Optional[str] = typer.Option(None, "--root", metavar="RANK", help="Root rank (0)."),
    iterations: Optional[str] = ITERATIONS,
):
    """The logical traffic of a collective, as the profiler counts it."""
    _make("collective", output, ranks=ranks, bytes=bytes, op=op, root=root, iterations=iterations)


@pattern_app.command("spec")
def from_spec(
    spec: str = typer.Argument(..., metavar="SPEC", help="e.g. 'stencil3d:grid=8x8x8,neighbours=6,bytes=1M'."),
    output: Path = OUTPUT,
):
    """Generate a matrix from a pattern spec (grammar: docs/reference/formats.md)."""
    from rankwise.traffic.patterns import generate

    prepare_output(output, MATRIX_SUFFIXES)
    matrix = generate(spec)
    matrix.save(output)
    show_summary(matrix, output, console)


@pattern_app.command()
def show(path: Path = typer.Argument(..., metavar="FILE", help="A matrix file (.rwc or .npz).")):
    """Summarise a matrix: ranks, nonzeros, volumes, degrees."""
    from rankwise.traffic.matrix import CommMatrix

    show_summary(CommMatrix.load(path), path, console)
