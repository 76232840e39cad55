#!/bin/sh
# Build the libFuzzer harnesses of the engine's readers (clang, ASan +
# UBSan) and run each for FUZZ_SECONDS seconds (0: build only). Called by
# `make fuzz` and, with a short budget, by `make test`. Without clang it
# says so and succeeds, so that `make test` runs everywhere.
#   tests/fuzz/run.sh [harness ...]      default: every fuzz_*.c here
# Environment: FUZZ_SECONDS (20), FUZZ_OUT (build/fuzz), FUZZ_CC (clang),
# FUZZ_ARGS (extra libFuzzer options, e.g. -runs=5000000).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
seconds=${FUZZ_SECONDS:-20}
out=${FUZZ_OUT:-$root/build/fuzz}
cc=${FUZZ_CC:-clang}

if ! command -v "$cc" >/dev/null 2>&1; then
    echo "fuzz: $cc not found, fuzzing skipped (apt-get install clang)"
    exit 0
fi
mkdir -p "$out"
names=${*:-$(cd "$here" && ls fuzz_*.c | sed 's/^fuzz_//; s/\.c$//')}
# The MPI-free engine, compiled into each harness with the sanitizers.
engine_src="$(ls "$root"/engine/src/*.c) $root/engine/src/coll/registry.c"
flags="-g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"

status=0
for name in $names; do
    bin="$out/fuzz_$name"
    # shellcheck disable=SC2086
    "$cc" $flags -I"$root/engine/include" -I"$root/engine/src" -DRW_VERSION_STRING='"fuzz"' \
        -o "$bin" "$here/fuzz_$name.c" $engine_src -lm
    [ "$seconds" = 0 ] && continue
    corpus="$out/corpus-$name"
    mkdir -p "$corpus" "$out/findings-$name"
    dict=""
    [ -f "$here/$name.dict" ] && dict="-dict=$here/$name.dict"
    echo "fuzz: $name for ${seconds} s"
    # New inputs go to the build corpus; the committed seeds stay as they are.
    # shellcheck disable=SC2086
    if ! "$bin" -max_total_time="$seconds" -max_len=4096 -timeout=10 -rss_limit_mb=2048 \
        -malloc_limit_mb=1024 -print_final_stats=1 -artifact_prefix="$out/findings-$name/" \
        $dict ${FUZZ_ARGS:-} "$corpus" "$here/seeds/$name" >"$out/$name.log" 2>&1; then
        echo "fuzz: $name FOUND A PROBLEM: see $out/$name.log and $out/findings-$name/"
        tail -n 30 "$out/$name.log"
        status=1
        continue
    fi
    grep -E "^stat::(number_of_executed_units|average_exec_per_sec|peak_rss_mb)" "$out/$name.log" |
        sed "s/^/fuzz: $name /"
done
exit $status
