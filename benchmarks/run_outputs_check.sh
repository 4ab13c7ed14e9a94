#!/bin/bash
# Before/after check of `npusched run` on the example configs: summary.json, records.parquet
# (and timeline.json with --timeline) written by two source trees, compared byte for byte.
#   benchmarks/run_outputs_check.sh A/src B/src OUT_DIR
# Prints "<config>/<file> equal" or "... DIFFERS" per file.
set -u
A=$1; B=$2; OUT=$3
HERE=$(cd "$(dirname "$0")/.." && pwd)
cd "$HERE/examples"
for v in a b; do
  if [ $v = a ]; then SRC=$A; else SRC=$B; fi
  for c in prema_small.toml poisson_small.yaml planaria_workload_c.toml prema_dfs_ab9.toml \
           planaria_dfs.toml transformer_mix.toml; do
    PYTHONPATH=$SRC npusched run "$c" --out "$OUT/$v/${c%.*}" > /dev/null 2>&1 || echo "$v $c failed"
  done
  PYTHONPATH=$SRC npusched run prema_small.toml --timeline --out "$OUT/$v/prema_small_tl" \
    > /dev/null 2>&1 || echo "$v timeline failed"
done
for d in "$OUT"/a/*; do
  b=$(basename "$d")
  for f in summary.json records.parquet timeline.json; do
    [ -f "$d/$f" ] || continue
    if cmp -s "$d/$f" "$OUT/b/$b/$f"; then echo "$b/$f equal"; else echo "$b/$f DIFFERS"; fi
  done
done
