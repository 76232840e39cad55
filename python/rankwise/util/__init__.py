"""Shared utilities every stage may use: errors, output and input files, numbers, paths, variables."""
