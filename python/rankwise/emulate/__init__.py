"""An emulated cluster of real hosts on one machine: network namespaces joined by shaped veth
links under Linux bridges, built from the same PlatformSpec as the simulated cluster, where
real MPI runs across hosts (docs/concepts/emulation.md).

plan.py (what it is made of), system.py (ip and tc), state.py (what was made, for `down`),
launchers.py (the rsh agent and launcher options), cluster.py (up, set, status, down),
slurm.py (Slurm's daemons on the cluster)."""

from rankwise.emulate.cluster import down, set_rate, slurm_start, slurm_stop, status, up

__all__ = ["up", "down", "set_rate", "status", "slurm_start", "slurm_stop"]
