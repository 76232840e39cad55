"""Where each rank runs inside its node, in the terms launchers bind with:
Open MPI's rankfile names a core as PACKAGE:CORE (logical indices, the
core counted within its package); Slurm's --cpu-bind=map_cpu, Hydra's
-bind-to user: and Intel MPI's I_MPI_PIN_PROCESSOR_LIST take OS cpu ids,
one per local rank (the k-th rank of the job on a node is its local rank
k). The last three apply one list to every node (Intel MPI: one list per
configfile line); a placement whose nodes need different lists cannot be
written for Slurm or Hydra, and says so naming the launcher."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rankwise.util.errors import RankwiseError
from rankwise.cluster.placement import Placement

# What a launcher calls itself in messages.
LAUNCHER_NAMES = {"slurm": "Slurm (srun --cpu-bind=map_cpu)", "mpich": "MPICH/Hydra (-bind-to user:)",
                  "intel": "Intel MPI (I_MPI_PIN_PROCESSOR_LIST)", "openmpi": "Open MPI (rankfile slot=P:C)"}


@dataclass(frozen=True, eq=False)
class CoreBinding:
    """Per rank: its core's package, the core's index within that package,
    and the OS cpu id of the core's first hardware thread."""

    package_of: np.ndarray
    core_in_package: np.ndarray
    cpu_of: np.ndarray

    def __post_init__(self):
        for name in ("package_of", "core_in_package", "cpu_of"):
            object.__setattr__(self, name, np.asarray(getattr(self, name), dtype=np.int64))
        if not (self.package_of.shape == self.core_in_package.shape == self.cpu_of.shape) or self.package_of.ndim != 1:
            raise RankwiseError("a core binding needs one package, core and cpu per rank")
        if self.package_of.size and min(self.package_of.min(), self.core_in_package.min(), self.cpu_of.min()) < 0:
            raise RankwiseError("a core binding holds a negative package, core or cpu")

    @property
    def n_ranks(self) -> int:
        return int(self.cpu_of.size)

    @classmethod
    def from_cores(cls, topology, cores) -> "CoreBinding":
        """Ranks on cores (logical indices) of a node topology (rankwise.model.node)."""
        cores = np.asarray(cores, dtype=np.int64)
        return cls(topology.package_of[cores], topology.core_in_package[cores], topology.cpu_of[cores])

    def check(self, placement: Placement) -> None:
        if self.n_ranks != placement.n_ranks:
            raise RankwiseError(f"a core binding of {self.n_ranks} ranks for a placement of {placement.n_ranks}")

    def local_cpus(self, placement: Placement) -> dict[str, list[int]]:
        """Each node's cpus in local-rank order (its ranks in rank order)."""
        self.check(placement)
        out: dict[str, list[int]] = {}
        for h, cpu in zip(placement.hosts_in_rank_order(), self.cpu_of.tolist()):
            out.setdefault(h, []).append(cpu)
        return out

    def common_cpu_list(self, placement: Placement, fmt: str) -> list[int]:
        """The one list of cpus a launcher applying the same list on every
        node needs: every node's list is a start of it. Refused, naming the
        launcher and two nodes that disagree, when there is none."""
        lists = self.local_cpus(placement)
        longest_host = max(lists, key=lambda h: len(lists[h]))
        longest = lists[longest_host]
        for h, cpus in lists.items():
            if cpus != longest[:len(cpus)]:
                k = next(i for i, (a, b) in enumerate(zip(cpus, longest)) if a != b)
                raise RankwiseError(
                    f"{LAUNCHER_NAMES[fmt]} applies one cpu list to every node, but this placement binds local "
                    f"rank {k} to cpu {cpus[k]} on {h} and to cpu {longest[k]} on {longest_host}: "
                    "write an Open MPI rankfile or an Intel MPI configfile, which bind each node apart")
        return longest


def cpu_list_text(cpus: list[int]) -> str:
    return ",".join(str(c) for c in cpus)
