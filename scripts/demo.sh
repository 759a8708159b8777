#!/usr/bin/env bash
# Installs NVRTC/ptxas if needed, then runs `fencehound demo` (release build).
# Extra arguments go to the demo subcommand.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/setup-cuda.sh
exec cargo run --release --quiet -- demo "$@"
