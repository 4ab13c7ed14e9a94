#!/usr/bin/env bash
# usage: benchmarks/ic_eng.sh SRC "FAM1 FAM2 ..." [REQUESTS]
# Compiled instructions of the engine alone (Simulator.run, benchmarks/ic_engine_only.py) per
# warm run: (I(3 runs) - I(1 run)) / 2, counted by cachegrind. SRC: a checkout's src/ with its
# compiled .so files. Needs valgrind.
set -euo pipefail
src="$1"; fams="${2//,/ }"; n="${3:-5000}"  # families by spaces or commas
bench="$(cd "$(dirname "$0")" && pwd)/ic_engine_only.py"
for f in $fams; do
  declare -A I
  for r in 1 3; do
    out=$(OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 PYTHONHASHSEED=0 PYTHONPATH="$src" \
      valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null \
      python "$bench" "$f" "$r" "$n" 2>&1)
    I[$r]=$(echo "$out" | grep "I *refs" | sed 's/.*refs: *//; s/,//g')
  done
  echo "$f $(( (${I[3]} - ${I[1]}) / 2 ))"
done
