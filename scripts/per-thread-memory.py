#!/usr/bin/env python3
"""Per-thread state of `fencehound exec` at 1 M threads (issue 24: <= 256 B beyond
registers with 1 M threads resident), one Markdown table per run.

The program is bench/programs/stencil.cu (one thread per element, a 5-point stencil:
each thread reads five words and writes one), built with this tree's `fencehound nvcc
-O2`. For every configuration it runs `fencehound exec CONFIG -- ./stencil N` at
N = 262,144 and N = 1,048,576 under `/usr/bin/time -f %M` and reports the slope of the
peak resident set between the two, in bytes per thread: what one more thread costs,
whatever the process holds besides. "Beyond registers" subtracts the register file,
which the table's registers column gives (the vgpu's per-thread registers for this
kernel, 120 B on 2026-12-02: `massif` of `zeroed_regs`, 31,457,280 B at 262,144
threads); pass --registers to change it.

  python3 scripts/per-thread-memory.py
  python3 scripts/per-thread-memory.py --configs sc,race --bin target/release/fencehound

Needs scripts/setup-cuda.sh (the nvcc wheels) and a release build of fencehound and its
cudart (`cargo build --release -p fencehound -p fencehound-cudart`).
"""
import argparse
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CONFIGS = {
    "sc": ["--model", "sc"],
    "bugaroo": ["--model", "bugaroo"],
    "scoped": ["--model", "scoped"],
    "weak": ["--model", "weak"],
    "race": ["--race", "--model", "sc"],
}
SIZES = (262144, 1048576)


def peak_kb(cmd, env):
    r = subprocess.run(
        ["/usr/bin/time", "-f", "%M"] + cmd,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    last = r.stderr.strip().splitlines()[-1] if r.stderr.strip() else ""
    if r.returncode != 0 or not last.isdigit():
        sys.exit(f"failed ({r.returncode}): {' '.join(cmd)}\n{r.stderr[-2000:]}")
    return int(last)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", default=os.path.join(ROOT, "target/release/fencehound"))
    ap.add_argument("--configs", default=",".join(CONFIGS))
    ap.add_argument("--registers", type=float, default=120.0)
    a = ap.parse_args()
    configs = a.configs.split(",")
    for c in configs:
        if c not in CONFIGS:
            sys.exit(f"unknown config {c}: one of {', '.join(CONFIGS)}")
    if not os.path.exists("/usr/bin/time"):
        sys.exit("needs /usr/bin/time (Debian: apt install time)")
    env = dict(os.environ)
    with tempfile.TemporaryDirectory() as tmp:
        prog = os.path.join(tmp, "stencil")
        subprocess.run(
            [a.bin, "nvcc", "-O2", "-o", prog, os.path.join(ROOT, "bench/programs/stencil.cu")],
            check=True,
            stdout=subprocess.DEVNULL,
        )
        print(f"| config | peak kB at {SIZES[0]:,} | peak kB at {SIZES[1]:,} | B per thread | "
              f"beyond registers ({a.registers:g} B) |")
        print("|---|---:|---:|---:|---:|")
        for c in configs:
            kb = [peak_kb([a.bin, "exec"] + CONFIGS[c] + ["--", prog, str(n)], env) for n in SIZES]
            per = (kb[1] - kb[0]) * 1024 / (SIZES[1] - SIZES[0])
            print(f"| {c} | {kb[0]:,} | {kb[1]:,} | {per:.0f} | {per - a.registers:.0f} |",
                  flush=True)


if __name__ == "__main__":
    main()
