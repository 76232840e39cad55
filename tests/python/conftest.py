"""Shared fixtures: small generated platforms and a CLI runner."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from rankwise.sim.platform import Degraded, PlatformSpec, generate


def run_cli(*args: str, cwd: Path | None = None, timeout: float = 600) -> subprocess.CompletedProcess:
    """Run `rankwise ARGS` as a user would, capturing its output."""
    return subprocess.run(
        [sys.executable, "-m", "rankwise", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


def assert_one_line_error(result: subprocess.CompletedProcess, text: str) -> None:
    """A failed command printed exactly one line, holding `text`, and no traceback."""
    assert result.returncode != 0
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert text in lines[0], lines[0]
    assert "Traceback" not in result.stderr


@pytest.fixture(scope="session")
def small_platform(tmp_path_factory):
    """2 racks x 4 nodes x 2 cores; node 5's link at a quarter of the
    bandwidth, node 2's latency x4, rack 1's uplink congested (bandwidth x0.3)."""
    spec = PlatformSpec(
        racks=2,
        nodes_per_rack=4,
        cores=2,
        degraded=[Degraded("node", 5, bw_factor=0.25), Degraded("node", 2, lat_factor=4.0),
                  Degraded("uplink", 1, bw_factor=0.3)],
        seed=3,
    )
    return generate(spec, tmp_path_factory.mktemp("small-platform"))
