"""SLURM_HOSTFILE for `srun --distribution=arbitrary`: line k is the host
of rank k."""

from __future__ import annotations

from os import PathLike

from rankwise.cluster.core_binding import CoreBinding
from rankwise.util.errors import file_error
from rankwise.cluster.launcher_files._text import host, lines
from rankwise.cluster.placement import Placement
from rankwise.util.files import write_atomic


def write(placement: Placement, path: str | PathLike, *, app: str | None = None,
          binding: CoreBinding | None = None) -> None:
    # The binding rides on srun's command line (usage_hint): refused here
    # before writing when one map_cpu list cannot express it.
    if binding is not None:
        binding.common_cpu_list(placement, "slurm")
    # Slurm reads every line as a host name: no comment header.
    write_atomic(path, "".join(f"{h}\n" for h in placement.hosts_in_rank_order()))


def read(path: str | PathLike) -> Placement:
    hosts = [host(text, path, number) for number, text in lines(path, comment="")]
    if not hosts:
        raise file_error(path, None, "no host in the Slurm hostfile")
    return Placement.from_hosts(hosts)
