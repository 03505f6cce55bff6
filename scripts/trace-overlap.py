#!/usr/bin/env python3
"""Overlap of collectives with compute, read from a starlops FxT trace.

Usage: scripts/trace-overlap.py TRACE_DIR [COLLECTIVE] [COMPUTE]
TRACE_DIR holds the per-rank prof_file_* written under STARLOPS_TRACE (the overlap run of bench_comm);
starpu_fxt_tool converts them to tasks.rec there when that file is missing (STARPU_BIN or PATH must reach
it). For every task named COLLECTIVE (default sl_allgatherv), prints its interval on its rank and the part
of that interval during which at least one COMPUTE task (default sl_axpby) was running on the same rank:
the compute work the transfer ran beside. paje.trace, in the same folder, opens in ViTE or StarVZ.
"""
import glob
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from trace_summary import records, union  # noqa: E402  (the same reader and interval union)


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    tdir = sys.argv[1]
    coll = sys.argv[2] if len(sys.argv) > 2 else "sl_allgatherv"
    comp = sys.argv[3] if len(sys.argv) > 3 else "sl_axpby"
    tasks = os.path.join(tdir, "tasks.rec")
    if not os.path.exists(tasks):
        files = sorted(glob.glob(os.path.join(tdir, "prof_file_*")))
        if not files:
            print(f"trace-overlap: no tasks.rec and no prof_file_* in {tdir}", file=sys.stderr)
            return 1
        tool = os.path.join(os.environ.get("STARPU_BIN", ""), "starpu_fxt_tool")
        if not os.environ.get("STARPU_BIN"):
            tool = "starpu_fxt_tool"
        subprocess.run([tool, "-i"] + files, cwd=tdir, check=True, stdout=subprocess.DEVNULL)
    colls, compute = [], {}
    for r in records(tasks):
        if "StartTime" not in r or "EndTime" not in r:
            continue
        rank = r.get("MPIRank", "0")
        iv = (float(r["StartTime"]), float(r["EndTime"]))
        if r.get("Name") == coll:
            colls.append((rank, iv, r.get("WorkerId", "?")))
        elif r.get("Name") == comp:
            compute.setdefault(rank, []).append(iv)
    if not colls:
        print(f"trace-overlap: no task named {coll} in {tasks}", file=sys.stderr)
        return 1
    print(f"| rank | {coll} start (ms) | duration (ms) | worker | time with {comp} running | {comp} tasks inside |")
    print("|---|---|---|---|---|---|")
    for rank, (a, b), worker in sorted(colls):
        busy = union(compute.get(rank, []), a, b)
        inside = sum(1 for x, y in compute.get(rank, []) if x < b and y > a)
        print(f"| {rank} | {a:.3f} | {b - a:.3f} | {worker} | {100 * busy / (b - a) if b > a else 0:.0f}% | {inside} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
