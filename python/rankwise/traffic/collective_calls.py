"""Collective calls a run made, grouped: what the predictor needs to cost a
collective by the messages its algorithm sends rather than by the logical
root-to-all volumes a communication matrix holds (docs/concepts/prediction.md).

A matrix holds them beside its traffic (CommMatrix.collectives, the `coll`
lines of docs/reference/formats.md): a profile records them, a `collective` pattern
holds its one call.
"""

from __future__ import annotations

from dataclasses import dataclass

from rankwise._engine.core import collective_ops

COLLECTIVE_OPS = collective_ops()


@dataclass(frozen=True)
class CollectiveCall:
    """`calls` calls of `op` with the same size and root on one communicator.

    bytes: as rankwise-bench-collectives counts SIZE and the predictor takes
        it (rankwise_predict.h, rw_sched_collective): bcast the bytes from the
        root, alltoall per rank pair, the others per rank.
    root: communicator rank of the root (rooted operations; 0 otherwise).
    ranks: world ranks of the communicator's members in communicator rank
        order; None for every rank of the matrix in order (MPI_COMM_WORLD).
    """

    op: str
    bytes: int
    calls: int = 1
    root: int = 0
    ranks: tuple[int, ...] | None = None

    def __post_init__(self):
        from rankwise.util.errors import RankwiseError

        if self.op not in COLLECTIVE_OPS:
            raise RankwiseError(f"unknown collective '{self.op}' (choose from {', '.join(COLLECTIVE_OPS)})")
        if self.bytes < 0 or self.calls < 1:
            raise RankwiseError(f"{self.op}: bytes must be >= 0 and calls >= 1 "
                                f"(got {self.bytes} and {self.calls})")
        size = None if self.ranks is None else len(self.ranks)
        if self.root < 0 or (size is not None and self.root >= size):
            raise RankwiseError(f"{self.op}: root {self.root} is not a rank of its communicator")
