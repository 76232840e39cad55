"""Where a job runs: hosts, hostfiles, hostlists, allocations, placements, core bindings, launchers and the files they take, the benchmark programs."""
