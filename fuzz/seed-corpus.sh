#!/usr/bin/env bash
# Seeds fuzz/corpus/parse with real NVRTC output: every kernels/*.cu for compute_75/80/90
# (header nvrtc-flags applied), plus each top-level item of those files on its own
# (with the .version/.target/.address_size header) so the fuzzer also has small inputs.
# Needs NVRTC (scripts/setup-cuda.sh). The corpus is not committed (.gitignore).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
cargo build --quiet -p fencehound
bin=target/debug/fencehound
out=fuzz/corpus/parse
mkdir -p "$out"
for cu in kernels/*.cu; do
  name=$(basename "$cu" .cu)
  flags=$(sed -n 's|^// nvrtc-flags: ||p' "$cu" | head -1)
  opts=()
  if [[ "$flags" != none ]]; then
    for o in $flags; do opts+=("--nvrtc-option=$o"); done
  fi
  for arch in 75 80 90; do
    "$bin" compile "$cu" --arch "compute_$arch" "${opts[@]}" -o "$out/${name}_$arch.ptx"
  done
done
python3 - "$out" <<'PY'
import glob, hashlib, sys
out = sys.argv[1]
n = 0
for f in sorted(glob.glob(out + "/*_[0-9][0-9].ptx")):
    lines = open(f).read().split("\n")
    header = [l for l in lines[:40] if l.startswith((".version", ".target", ".address_size"))]
    chunks, cur, depth = [], [], 0
    for l in lines:
        if depth == 0 and l.startswith(("//", ".version", ".target", ".address_size")):
            continue
        cur.append(l)
        depth += l.count("{") - l.count("}")
        if depth == 0 and (l.strip() == "}" or l.rstrip().endswith(";")):
            chunks.append("\n".join(cur))
            cur = []
    for c in chunks:
        s = "\n".join(header) + "\n" + c + "\n"
        if c.strip() and len(s) <= 12000:
            h = hashlib.sha1(s.encode()).hexdigest()[:16]
            open(f"{out}/piece_{h}.ptx", "w").write(s)
            n += 1
print(f"seed-corpus: {len(glob.glob(out + '/*'))} files in {out} ({n} pieces)")
PY
