#!/usr/bin/env python3
"""Summary of a converted starlops trace (used by scripts/starlops-trace).

trace_summary.py TASKS.REC SUMMARY.TXT GANTT.DAT
Per worker (rank, WorkerId): busy time (union of its task intervals) and idle time within the traced span;
per rank: time in communication tasks (the comm layer's collectives) and the part of it during which a
compute task ran on the same rank. GANTT.DAT: row start end is_comm name, one line per task.
"""
import sys

COMM = ("sl_allreduce", "sl_allgatherv", "sl_bcast", "sl_reduce_scatter", "sl_alltoallv", "sl_exchange")
SKIP = ("_starpu", "starpu_data", "sl_comm_release", "nowhere")


def records(path):
    rec = {}
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                if rec:
                    yield rec
                rec = {}
                continue
            k, _, v = line.partition(": ")
            rec[k] = v
    if rec:
        yield rec


def union(iv, lo=None, hi=None):
    total, cur = 0.0, None
    for a, b in sorted((max(a, lo) if lo is not None else a, min(b, hi) if hi is not None else b) for a, b in iv):
        if b <= a:
            continue
        if cur is None or a > cur[1]:
            if cur:
                total += cur[1] - cur[0]
            cur = [a, b]
        else:
            cur[1] = max(cur[1], b)
    return total + (cur[1] - cur[0] if cur else 0.0)


def main():
    tasks = []
    for r in records(sys.argv[1]):
        if "StartTime" not in r or "EndTime" not in r or r.get("Name", "").startswith(SKIP):
            continue
        tasks.append((r.get("MPIRank", "0"), int(r.get("WorkerId", "-1")), r.get("Name", "?"),
                      float(r["StartTime"]), float(r["EndTime"])))
    if not tasks:
        sys.exit("trace_summary: no executed tasks in the trace")
    t0 = min(t[3] for t in tasks)
    t1 = max(t[4] for t in tasks)
    workers = sorted({(t[0], t[1]) for t in tasks}, key=lambda w: (int(w[0]), w[1]))
    row = {w: i for i, w in enumerate(workers)}
    out = [f"traced span: {t1 - t0:.3f} ms, {len(tasks)} tasks, {len(workers)} workers",
           "", "| rank | worker | tasks | busy (ms) | idle (ms) | busy % |", "|---|---|---|---|---|---|"]
    for w in workers:
        iv = [(t[3], t[4]) for t in tasks if (t[0], t[1]) == w]
        busy = union(iv)
        out.append(f"| {w[0]} | {w[1]} | {len(iv)} | {busy:.3f} | {t1 - t0 - busy:.3f} | {100 * busy / (t1 - t0):.1f} |")
    out += ["", "| rank | communication tasks | time in communication (ms) | overlapped by compute (ms) | overlapped % |",
            "|---|---|---|---|---|"]
    for rank in sorted({t[0] for t in tasks}, key=int):
        comm = [(t[3], t[4]) for t in tasks if t[0] == rank and t[2].startswith(COMM)]
        comp = [(t[3], t[4]) for t in tasks if t[0] == rank and not t[2].startswith(COMM)]
        ct = union(comm)
        # overlap: for each communication interval, the time some compute task ran inside it
        ov = sum(union(comp, a, b) for a, b in comm) if comm else 0.0
        ov = min(ov, ct) if ct > 0 else 0.0
        out.append(f"| {rank} | {len(comm)} | {ct:.3f} | {ov:.3f} | {100 * ov / ct if ct > 0 else 0:.1f} |")
    with open(sys.argv[2], "w") as f:
        f.write("\n".join(out) + "\n")
    with open(sys.argv[3], "w") as f:
        f.write("# row start_ms end_ms is_comm name\n")
        for t in tasks:
            f.write(f"{row[(t[0], t[1])]} {t[3] - t0:.6f} {t[4] - t0:.6f} {1 if t[2].startswith(COMM) else 0} {t[2]}\n")


if __name__ == "__main__":
    main()
