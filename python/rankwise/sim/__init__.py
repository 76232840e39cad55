"""Simulated clusters: SimGrid platforms, hostfiles and their ground truth."""
