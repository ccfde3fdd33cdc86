#!/usr/bin/env python3
"""Runs the Helios simulator and headroom on the same jobs and cluster, checks that every job
starts at the same second under both, and prints the speed ratio.

    bench/peers/helios/compare.py --peer PATH [--trace cluster_log.csv[.gz]] [--policies fifo sjf]
    bench/peers/helios/compare.py --peer PATH --from-swf RICC-2010-2.swf.gz --days 7 --nodes 1024

PATH is a checkout of S-Lab-System-Group/HeliosArtifact (or its "framework/QSSF Service"
folder); nothing is fetched. The peer's files are copied into a scratch folder and run there
with Debian's python3-pandas, as `simulator.py -e Philly -s POLICY -p consolidate -j 1` under
TZ=UTC. The default trace is the shared synthetic 40,001-job trace
(shared/peers/helios-synth40k). Needs python3-pandas and python3-h5py.

On a shared machine, time both through the same spells of load: `--peer-repeat 3 --repeat 7`
runs Helios three times, each run followed by seven headroom runs, and reports both medians.

Helios loads the trace with an unstable pandas sort, which reorders jobs submitted in the same
second; both simulators then break start ties by that order. headroom is therefore given the
jobs in the order Helios holds them (read back from Helios's per-job log), so the comparison
is of scheduling decisions, not of sort stability.
"""
import argparse
import csv
import datetime
import gzip
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
DEFAULT_TRACE = os.path.join(ROOT, "..", "shared", "peers", "helios-synth40k", "cluster_log.csv.gz")
PHILLY_START = datetime.datetime(2017, 10, 1)


def open_text(path):
    return gzip.open(path, "rt") if path.endswith(".gz") else open(path)


def swf_to_helios(swf, days, out_path):
    """Writes the first `days` of an SWF log in the Helios/Philly cluster_log.csv layout
    (one processor = one GPU), starting at 2017-10-01 00:00:00 as Helios's Philly mode expects."""
    rows = []
    with open_text(swf) as f:
        for line in f:
            if line.startswith(";") or not line.strip():
                continue
            v = line.split()
            submit, run, procs, user = int(v[1]), int(v[3]), int(v[4]), v[11]
            if procs <= 0:
                procs = int(v[7])
            if submit >= days * 86400 or procs <= 0 or run < 1:
                continue
            rows.append((submit, user, procs, run, v[0]))
    rows.sort(key=lambda r: r[0])
    with open(out_path, "w") as f:
        f.write("user,vc,jobname,gpu_num,state,submit_time,duration\n")
        for submit, user, procs, run, jid in rows:
            t = (PHILLY_START + datetime.timedelta(seconds=submit)).strftime("%Y-%m-%d %H:%M:%S")
            f.write(f"u{user},vcSWF,job{jid},{procs},Pass,{t},{run}\n")
    return len(rows)


def find_qssf(peer):
    for cand in (os.path.join(peer, "framework", "QSSF Service"), peer):
        if os.path.isfile(os.path.join(cand, "simulator.py")):
            return cand
    sys.exit(f"error: {peer}: no simulator.py (expected a HeliosArtifact checkout or its 'framework/QSSF Service')")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--peer", required=True, help="HeliosArtifact checkout")
    ap.add_argument("--trace", default=DEFAULT_TRACE, help="Helios/Philly-layout cluster_log.csv (or .gz)")
    ap.add_argument("--from-swf", help="convert this SWF log instead of --trace")
    ap.add_argument("--days", type=int, default=7, help="with --from-swf: days to keep")
    ap.add_argument("--nodes", type=int, default=52, help="8-GPU nodes of the single VC")
    ap.add_argument("--policies", nargs="+", default=["fifo", "sjf"])
    ap.add_argument("--headroom", default=os.path.join(ROOT, "build", "apps", "headroom"))
    ap.add_argument("--repeat", type=int, default=3, help="headroom runs after each Helios run (median reported)")
    ap.add_argument("--peer-repeat", type=int, default=1,
                    help="Helios runs per policy (median reported), each followed by --repeat headroom runs, so that "
                         "both are timed through the same spells of a shared machine's load")
    ap.add_argument("--keep", action="store_true", help="keep the scratch folder")
    args = ap.parse_args()

    import h5py  # noqa: E402  (Debian python3-h5py)
    import pandas as pd  # noqa: E402

    if not os.access(args.headroom, os.X_OK):
        sys.exit(f"error: {args.headroom}: not built (run scripts/demo or cmake --build build)")
    work = tempfile.mkdtemp(prefix="helios-compare-")
    try:
        peer = os.path.join(work, "peer")
        shutil.copytree(find_qssf(args.peer), peer, ignore=shutil.ignore_patterns("data", "log", "*.pdf", "*.ipynb"))
        os.makedirs(os.path.join(peer, "estimators"), exist_ok=True)
        lgb = os.path.join(peer, "estimators", "Philly_lgb.csv")
        if not os.path.exists(lgb):
            with open(lgb, "w") as f:
                f.write("jobname,priority\n")
        data = os.path.join(work, "data")
        os.makedirs(data)
        log_csv = os.path.join(data, "cluster_log.csv")
        if args.from_swf:
            n = swf_to_helios(args.from_swf, args.days, log_csv)
            print(f"converted {n} jobs of the first {args.days} days of {args.from_swf}")
        else:
            with open_text(args.trace) as src, open(log_csv, "w") as dst:
                shutil.copyfileobj(src, dst)
        vcs = sorted(set(pd.read_csv(log_csv, usecols=["vc"])["vc"]))
        if len(vcs) != 1:
            sys.exit(f"error: the trace has {len(vcs)} VCs; this comparison models one")
        vc = vcs[0]
        pd.to_pickle({vc: args.nodes}, os.path.join(data, "vc_dict_homo.pkl"))

        print(f"{'policy':8} {'jobs':>7} {'same start':>11} {'Helios s':>9} {'headroom s':>11} {'ratio':>8}")
        failed = False
        for policy in args.policies:
            logs = os.path.join(work, "log")
            helios_times, times = [], []
            for round_ in range(args.peer_repeat):
                t0 = time.perf_counter()
                r = subprocess.run([sys.executable, "simulator.py", "-e", "Philly", "-t", data, "-s", policy, "-p",
                                    "consolidate", "-j", "1", "-l", logs], cwd=peer, env=dict(os.environ, TZ="UTC"),
                                   capture_output=True, text=True)
                helios_times.append(time.perf_counter() - t0)
                out = os.path.join(logs, "Philly", vc, f"{policy}_consolidate_{vc}_log.csv")
                if not os.path.exists(out):
                    print(r.stdout[-2000:], r.stderr[-2000:])
                    sys.exit(f"error: Helios wrote no {out}")
                if round_ == 0:
                    ref = pd.read_csv(out)
                    trace = os.path.join(work, f"{policy}.csv")
                    with open(trace, "w", newline="") as f:
                        w = csv.writer(f)
                        w.writerow(["id", "tenant", "queue", "submit", "gpus", "runtime"])
                        for i, row in enumerate(ref.itertuples(index=False)):
                            w.writerow([i, row.user, row.vc, int(row.submit_time), int(row.gpu_num), int(row.duration)])
                    scenario = os.path.join(work, f"{policy}.yaml")
                    with open(scenario, "w") as f:
                        f.write(f"name: helios-compare-{policy}\nseed: 1\ncluster:\n  pools:\n"
                                f"    - {{name: {vc}, nodes: {args.nodes}, gpus_per_node: 8, gpu_type: V100-32G}}\n"
                                f"policy: {{name: {policy}, placement: consolidate}}\n"
                                f"workload: {{trace: {policy}.csv, format: csv}}\n")
                    h5 = os.path.join(work, f"{policy}.h5")
                elif not pd.read_csv(out)["start_time"].equals(ref["start_time"]):
                    sys.exit(f"error: Helios run {round_ + 1} started jobs at other times than its first run")
                for _ in range(args.repeat):
                    t0 = time.perf_counter()
                    subprocess.run([args.headroom, "run", scenario, "-o", h5], check=True, stdout=subprocess.DEVNULL)
                    times.append(time.perf_counter() - t0)
            helios_s = statistics.median(helios_times)
            headroom_s = statistics.median(times)
            with h5py.File(h5, "r") as f:
                ids = f["jobs/trace_id"][:]
                start = f["jobs/start"][:]
            ours = dict(zip(ids.tolist(), (start // 1000).tolist()))
            same = sum(1 for i, s in enumerate(ref["start_time"]) if ours.get(i) == int(s))
            failed |= same != len(ref)
            print(f"{policy:8} {len(ref):7d} {same:11d} {helios_s:9.1f} {headroom_s:11.3f} {helios_s / headroom_s:7.0f}x")
            if args.peer_repeat > 1:
                print(f"         Helios runs: {', '.join(f'{t:.1f}' for t in helios_times)} s; headroom "
                      f"{min(times):.3f}-{max(times):.3f} s over {len(times)} runs")
        if failed:
            sys.exit("error: some start times differ")
    finally:
        if args.keep:
            print(f"scratch folder kept: {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
