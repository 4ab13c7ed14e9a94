#!/usr/bin/env bash
# usage: benchmarks/ic_fam.sh SRC "FAM1 FAM2 ..." [REQUESTS]
# Compiled instructions per warm run_config event of each family (the bench's representative
# configs, benchmarks/ic_families.py): (I(3 runs) - I(1 run)) / 2 / events, counted by
# cachegrind, so the process's start and the first (cold) run cancel out. SRC is a checkout's
# src/ with its compiled .so files (copy the trees to paths of the same length before comparing
# two of them: the count moves a little with the path). Needs valgrind. IC_GENERAL=1: passes
# ic_families.py's "general", which changes nothing since the column loop was deleted.
set -euo pipefail
src="$1"; fams="${2//,/ }"; n="${3:-5000}"  # families by spaces or commas
bench="$(cd "$(dirname "$0")" && pwd)/ic_families.py"
for f in $fams; do
  declare -A I
  ev=0
  for r in 1 3; do
    out=$(OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 PYTHONHASHSEED=0 PYTHONPATH="$src" \
      valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null \
      python "$bench" "$f" "$r" "$n" ${IC_GENERAL:+general} 2>&1)
    I[$r]=$(echo "$out" | grep "I *refs" | sed 's/.*refs: *//; s/,//g')
    ev=$(echo "$out" | grep "^$f " | awk '{print $2}')
  done
  python3 -c "i1=${I[1]};i3=${I[3]};ev=$ev;print('$f', ev, round((i3-i1)/2/ev))"
done
