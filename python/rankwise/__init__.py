"""rankwise: measure the network an MPI job runs on and act on what was measured."""

__version__ = "0.1.0"
