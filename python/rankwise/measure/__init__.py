"""Measuring: the network probe, the node probe, series of probes (watch), profiled runs."""
