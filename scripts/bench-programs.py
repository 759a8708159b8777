#!/usr/bin/env python3
"""Real-program benchmark (issue 24): whole CUDA programs of our own
(bench/programs/*.cu, each checking its own result) run with `fencehound exec` under
sc, bugaroo, scoped, weak and sc with --race, by the baseline build (commit 1767b1a,
built in a git worktree under target/) and by this tree's build, alternating old and new
per row so both see the same machine load. Prints one Markdown table: lane instructions,
wall time of the launches (the side channel's `wall_ms`, so host set-up is not counted)
and million lane-instructions per second, old and new, and the ratio.

  python3 scripts/bench-programs.py                 # default sizes (a few minutes)
  python3 scripts/bench-programs.py --scale 8       # sizes × 8
  python3 scripts/bench-programs.py --only histogram,reduce --configs sc,weak
  python3 scripts/bench-programs.py --no-baseline   # this tree only
  python3 scripts/bench-programs.py --baseline b35efc7 --rounds 2   # another baseline; best of 2

Needs scripts/setup-cuda.sh (nvcc wheels). The programs are built once, with this tree's
`fencehound nvcc`; both builds run the same binaries.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BASELINE = "1767b1a"

# name -> default size argument (elements; matmul: n of an n×n matrix, cubic work).
# Sized so one sc run takes seconds on the team's 2-core VM; --scale multiplies them.
PROGRAMS = [
    ("histogram", 1 << 22),
    ("reduce", 1 << 22),
    ("cub_scan", 1 << 20),
    ("cub_radix", 1 << 17),
    ("bitonic", 1 << 17),
    ("matmul", 256),
    ("transpose", 1 << 20),
    ("stencil", 1 << 20),
    ("spmv", 1 << 18),
]

CONFIGS = {
    "sc": ["--model", "sc"],
    "bugaroo": ["--model", "bugaroo", "--p", "0.5"],
    "scoped": ["--model", "scoped", "--p", "0.5"],
    "weak": ["--model", "weak", "--p", "0.5"],
    "sc+race": ["--model", "sc", "--race"],
}


def sh(cmd, **kw):
    return subprocess.run(cmd, check=True, **kw)


def baseline_bin(rev=BASELINE):
    wt = os.path.join(ROOT, "target", f"baseline-{rev}")
    exe = os.path.join(wt, "target", "release", "fencehound")
    if not os.path.isfile(exe):
        if not os.path.isdir(wt):
            sh(["git", "-C", ROOT, "worktree", "add", "--detach", wt, rev])
        tools = os.path.join(wt, ".tools")
        if not os.path.exists(tools):
            os.symlink(os.path.join(ROOT, ".tools"), tools)
        print(f"building the baseline {rev} in {wt} ...", file=sys.stderr)
        sh(["cargo", "build", "--release", "--quiet"], cwd=wt)
    return exe


def new_bin():
    sh(["cargo", "build", "--release", "--quiet"], cwd=ROOT)
    return os.path.join(ROOT, "target", "release", "fencehound")


def build_programs(exe, names, out):
    paths = {}
    for name in names:
        dst = os.path.join(out, name)
        src = os.path.join(ROOT, "bench", "programs", f"{name}.cu")
        inc = "-I" + os.path.join(ROOT, "bench", "programs")
        r = subprocess.run([exe, "nvcc", "-O2", inc, "-o", dst, src], capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit(f"fencehound nvcc {name} failed:\n{r.stdout}{r.stderr}")
        paths[name] = dst
    return paths


def run(exe, cfg, prog, size, timeout):
    """(lane instructions, launch ms, verdict) of one `exec` of `prog`."""
    with tempfile.NamedTemporaryFile(suffix=".jsonl") as side:
        cmd = [exe, "exec", *CONFIGS[cfg], "--side-channel", side.name, "--", prog, str(size)]
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return None, None, f"killed after {timeout} s"
        lanes = ms = 0
        errors = set()
        for line in open(side.name):
            rec = json.loads(line)
            if rec.get("event") != "launch":
                continue
            d = rec["data"]
            lanes += d.get("lane_instructions", 0)
            ms += d.get("wall_ms", 0)
            if d.get("outcome") != "completed":
                errors.add(d.get("outcome"))
            if d.get("cuda_error", "cudaSuccess") != "cudaSuccess":
                errors.add(d["cuda_error"])
        ok = r.returncode == 0 and "MISMATCH" not in r.stdout
        if not ok and not errors:
            errors.add(f"exit {r.returncode}")
        verdict = "ok" if ok else "FAIL " + ",".join(sorted(map(str, errors)))
        return lanes, ms, verdict


def rate(lanes, ms):
    if not lanes or not ms:
        return None
    return lanes / ms / 1e3


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--only", default="")
    ap.add_argument("--configs", default=",".join(CONFIGS))
    ap.add_argument("--no-baseline", action="store_true")
    ap.add_argument("--timeout", type=int, default=900, help="seconds per exec")
    ap.add_argument("--baseline", default=BASELINE, help=f"the old build's commit (default {BASELINE})")
    ap.add_argument("--rounds", type=int, default=1,
                    help="runs per row and build, alternating; the fastest is kept")
    a = ap.parse_args()
    names = [n for n, _ in PROGRAMS if not a.only or n in a.only.split(",")]
    sizes = {n: max(1, int(s * a.scale)) for n, s in PROGRAMS}
    if a.scale != 1.0:
        sizes["matmul"] = max(16, int(PROGRAMS[5][1] * a.scale ** (1 / 3)))
    configs = a.configs.split(",")
    for c in configs:
        if c not in CONFIGS:
            sys.exit(f"unknown config {c} ({', '.join(CONFIGS)})")
    new = new_bin()
    old = None if a.no_baseline else baseline_bin(a.baseline)
    out = tempfile.mkdtemp(prefix="fh-bench-")
    progs = build_programs(new, names, out)
    host = os.uname().nodename
    print(f"<!-- {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {host}, {os.cpu_count()} CPUs; "
          f"python3 scripts/bench-programs.py {' '.join(sys.argv[1:])} -->")
    print()
    print(f"old = {a.baseline if old else '-'}, new = this tree; {a.rounds} round(s) per row, the fastest kept")
    print()
    print("| program | size | config | lane-instr | old ms | new ms | old M/s | new M/s | new/old | old vs sc | new vs sc | verdict old / new |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    sc_ms = {}

    def best(runs):
        # The fastest run that finished (a killed run has no time).
        done = [r for r in runs if r[1]]
        return min(done, key=lambda r: r[1]) if done else runs[0]

    for name in names:
        for cfg in configs:
            os_, ns = [], []
            for _ in range(max(1, a.rounds)):
                os_.append(run(old, cfg, progs[name], sizes[name], a.timeout) if old else (None, None, "-"))
                ns.append(run(new, cfg, progs[name], sizes[name], a.timeout))
            o, n = best(os_), best(ns)
            ro, rn = rate(o[0], o[1]), rate(n[0], n[1])
            if cfg == "sc":
                sc_ms[name] = (o[1], n[1])
            ratio = f"{rn / ro:.2f}×" if ro and rn and o[2] == "ok" else "-"
            sco, scn = sc_ms.get(name, (None, None))
            vso = f"{o[1] / sco:.2f}×" if o[1] and sco else "-"
            vs = f"{n[1] / scn:.2f}×" if n[1] and scn else "-"
            fmt = lambda x: f"{x:.1f}" if x else "-"
            print(f"| {name} | {sizes[name]} | {cfg} | {n[0] or '-'} | {o[1] if o[1] is not None else '-'} | "
                  f"{n[1] if n[1] is not None else '-'} | {fmt(ro)} | {fmt(rn)} | {ratio} | {vso} | {vs} | {o[2]} / {n[2]} |",
                  flush=True)


if __name__ == "__main__":
    main()
