"""MPICH / Hydra machinefile: `HOST:N` gives the next N ranks to HOST, in
file order (`mpiexec -f FILE -n N ./app`). Interleaved placements list a
host several times: Hydra merges a host only with the line just before it,
and runs of ranks never repeat their host. Slots (cores) are not carried in
the file: Hydra binds from its command line (-bind-to user:CPU,CPU,...,
one list for the local ranks of every node), which the header comment and
the usage hint give when the placement has a core binding."""

from __future__ import annotations

from os import PathLike

from rankwise.cluster.core_binding import CoreBinding, cpu_list_text
from rankwise.util.errors import file_error
from rankwise.cluster.launcher_files._text import count, host, lines
from rankwise.cluster.placement import Placement
from rankwise.util.files import write_atomic

# Hydra's per-host keys after HOST[:N]; they change neither hosts nor order.
_KEYS = ("binding=", "user=")


def write(placement: Placement, path: str | PathLike, *, app: str | None = None,
          binding: CoreBinding | None = None) -> None:
    header = "# MPICH machinefile written by rankwise: mpiexec -f\n"
    if binding is not None:  # Hydra binds from its command line, one list for every node
        cpus = cpu_list_text(binding.common_cpu_list(placement, "mpich"))
        header += f"# bind each node's local ranks in order: mpiexec -f FILE -bind-to user:{cpus}\n"
    body = "".join(f"{h}:{n}\n" for h, n in placement.runs())
    write_atomic(path, header + body)


def read(path: str | PathLike) -> Placement:
    hosts: list[str] = []
    for number, text in lines(path):
        first, *rest = text.split()
        name, colon, n = first.partition(":")
        bad = [w for w in rest if not w.startswith(_KEYS)]
        if bad or not name:
            raise file_error(path, number, f"expected 'HOST' or 'HOST:N', got '{text}'")
        k = count(n, "rank count", path, number) if colon else 1
        if k == 0:
            raise file_error(path, number, "rank count must be positive")
        hosts += [host(name, path, number)] * k
    if not hosts:
        raise file_error(path, None, "no host in machinefile")
    return Placement.from_hosts(hosts)
