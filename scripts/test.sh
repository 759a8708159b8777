#!/usr/bin/env bash
# Installs NVRTC/ptxas if needed (scripts/setup-cuda.sh), then runs the whole test suite.
# Extra arguments go to `cargo test`; with `-p`/`--package` only those packages are tested
# (cargo would otherwise let --workspace win). Exits with cargo's status.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/setup-cuda.sh
scope=(--workspace)
for arg in "$@"; do
  [[ "$arg" == "--" ]] && break
  case "$arg" in -p|-p*|--package|--package=*) scope=() ;; esac
done
status=0
cargo test "${scope[@]}" "$@" || status=$?
exit "$status"
