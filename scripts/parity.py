#!/usr/bin/env python3
"""Detection parity of the device-side buffers (issue 25): every campaign of campaigns/,
run with the native handlers and with the instrumented PTX (`fuzz --instrumented`, what a
GPU runs, executed on the vgpu), same seeds, per variant × model × p_w. Two cells agree
when their 95% intervals (the report's Wilson `ci95`) overlap. Prints a table of every
cell and exits 1 when any disagrees.

  python3 scripts/parity.py                               # bugaroo,scoped × 0.1..1, 40 runs
  python3 scripts/parity.py --runs 20 --p 0.5,1 --campaigns mp_queue,seqlock
  python3 scripts/parity.py --max-extra-registers 16   # the register-capped PTX (gpu default)
"""
import argparse
import glob
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def cells(exe, toml, models, ps, runs, jobs, instrumented, out, cap=None):
    cmd = [exe, "fuzz", toml, "--model", models, "--p", ps, "--runs", str(runs), "--json",
           "--out-dir", out]
    if jobs:
        cmd += ["--jobs", str(jobs)]
    if instrumented:
        cmd.append("--instrumented")
        if cap is not None:
            cmd += ["--max-extra-registers", cap]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode not in (0, 1):
        sys.exit(f"{' '.join(cmd)} exited {r.returncode}:\n{r.stderr}")
    res = {}
    for camp in json.loads(r.stdout):
        for c in camp["summary"]:
            res[(c["variant"], c["model"], c["p"])] = c
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=40)
    ap.add_argument("--models", default="bugaroo,scoped")
    ap.add_argument("--p", default="0.1,0.25,0.5,0.75,1")
    ap.add_argument("--campaigns", default="")
    ap.add_argument("--jobs", type=int, default=0)
    ap.add_argument("--max-extra-registers", default=None,
                    help="run the instrumented side register-capped (N), as the gpu backend does by default")
    ap.add_argument("--bin", default=os.path.join(ROOT, "target", "release", "fencehound"))
    a = ap.parse_args()
    tomls = sorted(glob.glob(os.path.join(ROOT, "campaigns", "*.toml")))
    if a.campaigns:
        want = a.campaigns.split(",")
        tomls = [t for t in tomls if os.path.basename(t)[:-5] in want]
    bad = 0
    total = 0
    print("| campaign | variant | model | p_w | native | instrumented | agree |")
    print("|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as out:
        for t in tomls:
            name = os.path.basename(t)[:-5]
            nat = cells(a.bin, t, a.models, a.p, a.runs, a.jobs, False, out)
            ins = cells(a.bin, t, a.models, a.p, a.runs, a.jobs, True, out, a.max_extra_registers)
            for key in sorted(nat):
                n, i = nat[key], ins.get(key)
                if i is None:
                    print(f"| {name} | {key[0]} | {key[1]} | {key[2]} | {n['failures']}/{n['runs']} | missing | NO |")
                    bad += 1
                    continue
                lo = max(n["ci95"][0], i["ci95"][0])
                hi = min(n["ci95"][1], i["ci95"][1])
                ok = lo <= hi
                total += 1
                bad += not ok
                print(f"| {name} | {key[0]} | {key[1]} | {key[2]} | {n['failures']}/{n['runs']} | "
                      f"{i['failures']}/{i['runs']} | {'yes' if ok else 'NO'} |", flush=True)
    print(f"\n{total - bad} of {total} cells agree")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
