"""Hand-written-style SimGrid platforms, as users write them (not rankwise's generator).

One `Full`-routing zone, an explicit <route> for every host pair (symmetrical),
hosts in racks in order: a NIC per host, an uplink per rack, one spine link.
This is the shape of the platform that crashed SimGrid 3.32's max-min solver
under a 2-ranks-per-node probe (see docs/concepts/simulation.md)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path


def full_zone_platform(
    path: Path,
    hosts: int = 96,
    racks: int = 6,
    cores: int = 4,
    slow_nics: Sequence[int] = (3, 21, 40, 59, 77),
    slow_uplink: int | None = 2,
    loopbacks: bool = False,
    intra_links: bool = False,
    nic: tuple[str, str] = ("12.5GBps", "1us"),
    slow_nic: tuple[str, str] = ("1.5625GBps", "20us"),
    uplink: tuple[str, str] = ("50GBps", "2us"),
    slow_up: tuple[str, str] = ("12.5GBps", "20us"),
    spine: tuple[str, str] = ("400GBps", "1us"),
) -> Path:
    """Write the platform to `path` and return it.

    loopbacks: a <route> from every host to itself through its own loopback
    link (else SimGrid adds its model's loopback). intra_links: each host's
    self-route goes through its NIC instead (what some users write)."""
    per_rack = -(-hosts // racks)
    rack = [h // per_rack for h in range(hosts)]
    out = ["<?xml version='1.0'?>", '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">',
           '<platform version="4.1">', '  <zone id="cluster" routing="Full">']
    out += [f'    <host id="h{h}" speed="1Gf" core="{cores}"/>' for h in range(hosts)]
    for h in range(hosts):
        bw, lat = slow_nic if h in slow_nics else nic
        out.append(f'    <link id="nic{h}" bandwidth="{bw}" latency="{lat}"/>')
        if loopbacks:
            out.append(f'    <link id="lo{h}" bandwidth="100GBps" latency="0.1us" sharing_policy="FATPIPE"/>')
    for r in range(max(rack) + 1):
        bw, lat = slow_up if r == slow_uplink else uplink
        out.append(f'    <link id="up{r}" bandwidth="{bw}" latency="{lat}"/>')
    out.append(f'    <link id="spine" bandwidth="{spine[0]}" latency="{spine[1]}"/>')
    for a in range(hosts):
        if loopbacks or intra_links:
            via = f"lo{a}" if loopbacks else f"nic{a}"
            out.append(f'    <route src="h{a}" dst="h{a}" symmetrical="NO"><link_ctn id="{via}"/></route>')
        for b in range(a + 1, hosts):
            path_links = [f"nic{a}"]
            if rack[a] != rack[b]:
                path_links += [f"up{rack[a]}", "spine", f"up{rack[b]}"]
            path_links.append(f"nic{b}")
            ctn = "".join(f'<link_ctn id="{x}"/>' for x in path_links)
            out.append(f'    <route src="h{a}" dst="h{b}">{ctn}</route>')
    out += ["  </zone>", "</platform>", ""]
    path.write_text("\n".join(out))
    return path
