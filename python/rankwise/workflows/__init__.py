"""Whole pipelines: optimize (probe, profile, map, verify), the demo, the papers' experiments."""
