#!/usr/bin/env bash
# Race reports of one `fencehound` build on every campaign, for checking that a change
# to the race check (or to hb/) keeps its reports identical.
#
#   scripts/race-fingerprint.sh BIN OUTDIR [RUNS]
#   diff -r OLD_OUTDIR NEW_OUTDIR   (reports are in first-execution order: runs of one build are identical)
#
# Runs `BIN race campaigns/<c>.toml --runs RUNS --expose 0 --model <m> --json` for every
# campaign and m in sc, weak (RUNS defaults to 150), with heap addresses removed (they
# differ between processes); OUTDIR/status has each run's exit code.
set -uo pipefail
bin=$1
out=$2
runs=${3:-150}
cd "$(dirname "${BASH_SOURCE[0]}")/.."
mkdir -p "$out"
: > "$out/status"
for toml in campaigns/*.toml; do
  c=$(basename "$toml" .toml)
  for m in sc weak; do
    "$bin" race "$toml" --runs "$runs" --expose 0 --model "$m" --json 2>/dev/null \
      | grep -v '"address"' > "$out/$c.$m.json"
    echo "$c $m exit ${PIPESTATUS[0]}" >> "$out/status"
  done
done
