#!/usr/bin/env bash
# Runs the PTX parser fuzz target (fuzz/fuzz_targets/parse.rs) for a bounded time on the
# seed corpus, on the stable toolchain: cargo-fuzz wants nightly for its sanitizer flags,
# but libFuzzer's coverage instrumentation only needs stable `-C` options, so the target
# is built with plain cargo (the flags cargo-fuzz would pass, minus AddressSanitizer) and
# run directly. A crash, a failed round trip or a timeout fails the script and leaves
# the input in fuzz/artifacts/parse/ (reproduce: run the binary printed below on it).
#
#   FUZZ_SECONDS   how long to fuzz (default 60)
#
# Needs a C++ compiler (libfuzzer-sys builds libFuzzer) and NVRTC for the seeds
# (scripts/setup-cuda.sh). Without a C++ compiler it prints SKIPPED and exits 0.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
seconds="${FUZZ_SECONDS:-60}"
if ! command -v c++ >/dev/null 2>&1; then
  echo "fuzz: SKIPPED (no C++ compiler to build libFuzzer); the parser was not fuzzed"
  exit 0
fi
host=$(rustc -vV | sed -n 's/^host: //p')
# The sanitizer-coverage flags cargo-fuzz uses (`--target` keeps them off build scripts).
flags="-Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=4"
flags+=" -Cllvm-args=-sanitizer-coverage-inline-8bit-counters"
flags+=" -Cllvm-args=-sanitizer-coverage-pc-table"
flags+=" -Cllvm-args=-sanitizer-coverage-trace-compares"
flags+=" --cfg fuzzing -Cdebug-assertions -Coverflow-checks"
(cd fuzz && RUSTFLAGS="$flags" cargo build --quiet --locked --release --target "$host" --bin parse)
bin="fuzz/target/$host/release/parse"
if [[ ! -d fuzz/corpus/parse ]] || [[ -z "$(ls -A fuzz/corpus/parse)" ]]; then
  bash fuzz/seed-corpus.sh
fi
# New inputs go to a scratch directory: the seed corpus stays as generated.
scratch="$(mktemp -d)"
log="$(mktemp)"
trap 'rm -rf "$scratch" "$log"' EXIT
mkdir -p fuzz/artifacts/parse
status=0
"$bin" "$scratch" fuzz/corpus/parse -dict=fuzz/parse.dict -max_len=4096 \
  -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
  -artifact_prefix=fuzz/artifacts/parse/ >"$log" 2>&1 || status=$?
seeds=$(ls fuzz/corpus/parse | wc -l)
runs=$(sed -n 's/^Done \([0-9]*\) runs.*/\1/p' "$log" | tail -1)
if [[ "$status" -ne 0 ]]; then
  tail -n 40 "$log"
  echo "fuzz: FAILED after ${runs:-?} runs (exit $status); input in fuzz/artifacts/parse/"
  echo "fuzz: reproduce with $bin <artifact>"
  exit 1
fi
echo "fuzz: parse target, ${seconds}s, ${seeds} seeds, ${runs:-0} runs, no failure"
