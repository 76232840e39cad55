"""An emulated cluster of real hosts on one machine: network namespaces joined by shaped veth
links under Linux bridges, built from the same PlatformSpec as the simulated cluster, where
real MPI runs across hosts (docs/emulated-cluster.md).

plan.py (what it is made of), system.py (ip and tc), state.py (what was made, for `down`),
launchers.py (the rsh agent and launcher options), cluster.py (up, set, status, down)."""

from rankwise.emulate.cluster import down, set_rate, status, up

__all__ = ["up", "down", "set_rate", "status"]
