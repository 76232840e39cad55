"""Intel MPI configfile (the format Getmansky et al. 2015 generated): one line per run
of consecutive ranks on a node, `-n K -host NODE [-env I_MPI_PIN_PROCESSOR_LIST
CPUS] APP ARGS`, started with
`mpiexec.hydra -configfile FILE`. Hydra reads it like a machinefile: each
line is cut at the first '#' and split at whitespace, with no quoting."""

from __future__ import annotations

from os import PathLike

from rankwise.cluster.core_binding import CoreBinding, cpu_list_text
from rankwise.util.errors import RankwiseError, file_error
from rankwise.cluster.launcher_files._text import count, host, lines
from rankwise.cluster.placement import Placement
from rankwise.util.files import write_atomic

PIN_VARIABLE = "I_MPI_PIN_PROCESSOR_LIST"


def write(placement: Placement, path: str | PathLike, *, app: str | None = None,
          binding: CoreBinding | None = None) -> None:
    if not app or not app.strip():
        raise RankwiseError("the intel configfile names the application on every line: give the app command")
    bad = sorted(set(app) & set("#'\"\\\n\r"))
    if bad:
        # Hydra would cut the line at '#' and pass quotes through as they are.
        raise RankwiseError(f"the app command {app!r} cannot go into an Intel MPI configfile: "
                            f"it contains {''.join(bad)!r} (Hydra neither quotes nor escapes)")
    cmd = " ".join(app.split())
    # Intel MPI pins a node's local rank k to the k-th cpu of the list: every
    # line of a host carries that host's whole list.
    pins = {h: f"-env {PIN_VARIABLE} {cpu_list_text(c)} " for h, c in binding.local_cpus(placement).items()} \
        if binding is not None else {}
    body = "".join(f"-n {n} -host {h} {pins.get(h, '')}{cmd}\n" for h, n in placement.runs())
    write_atomic(path, "# Intel MPI configfile written by rankwise: mpiexec.hydra -configfile\n" + body)


def read(path: str | PathLike) -> Placement:
    hosts: list[str] = []
    for number, text in lines(path):
        words = text.split()
        n, name, i = None, None, 0
        while i < len(words) and words[i].startswith("-"):
            if words[i] in ("-n", "-np") and i + 1 < len(words):
                n = count(words[i + 1], "rank count", path, number)
            elif words[i] == "-host" and i + 1 < len(words):
                name = host(words[i + 1], path, number)
            elif words[i] == "-env" and i + 3 < len(words) and words[i + 1] == PIN_VARIABLE:
                i += 1  # the binding rankwise writes, not the placement; other variables stay refused
            else:
                raise file_error(path, number, f"unexpected option '{words[i]}' (expected -n K -host NODE "
                                               f"[-env {PIN_VARIABLE} CPUS] APP)")
            i += 2
        if n is None or name is None or i == len(words) or n == 0:
            raise file_error(path, number, f"expected '-n K -host NODE APP', got '{text}'")
        hosts += [name] * n
    if not hosts:
        raise file_error(path, None, "no line in configfile")
    return Placement.from_hosts(hosts)
