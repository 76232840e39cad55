"""Intel MPI configfile (the format seed 004 generated): one line per run
of consecutive ranks on a node, `-n K -host NODE APP ARGS`, started with
`mpiexec.hydra -configfile FILE`."""

from __future__ import annotations

import shlex
from os import PathLike

from rankwise.errors import RankwiseError, file_error
from rankwise.launchers._text import count, lines
from rankwise.placement import Placement
from rankwise.sim.platform_file import write_atomic


def write(placement: Placement, path: str | PathLike, *, app: str | None = None) -> None:
    if not app or not app.strip() or "\n" in app:
        raise RankwiseError("the intel configfile names the application on every line: give the app command")
    body = "".join(f"-n {n} -host {host} {app.strip()}\n" for host, n in placement.runs())
    write_atomic(path, "# Intel MPI configfile written by rankwise: mpiexec.hydra -configfile\n" + body)


def read(path: str | PathLike) -> Placement:
    hosts: list[str] = []
    for number, text in lines(path):
        try:
            words = shlex.split(text)
        except ValueError as exc:
            raise file_error(path, number, f"cannot split the line: {exc}") from None
        n, host, i = None, None, 0
        while i < len(words) and words[i].startswith("-"):
            if words[i] in ("-n", "-np") and i + 1 < len(words):
                n = count(words[i + 1], "rank count", path, number)
            elif words[i] == "-host" and i + 1 < len(words):
                host = words[i + 1]
            else:
                raise file_error(path, number, f"unexpected option '{words[i]}' (expected -n K -host NODE APP)")
            i += 2
        if n is None or host is None or i == len(words) or n == 0:
            raise file_error(path, number, f"expected '-n K -host NODE APP', got '{text}'")
        hosts += [host] * n
    if not hosts:
        raise file_error(path, None, "no line in configfile")
    return Placement.from_hosts(hosts)
