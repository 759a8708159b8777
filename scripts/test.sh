#!/usr/bin/env bash
# Installs NVRTC/ptxas if needed (scripts/setup-cuda.sh), then runs the whole test suite.
# Extra arguments go to `cargo test` (e.g. `scripts/test.sh -p fencehound-toolchain`).
# Exits with cargo's status.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/setup-cuda.sh
status=0
cargo test --workspace "$@" || status=$?
exit "$status"
