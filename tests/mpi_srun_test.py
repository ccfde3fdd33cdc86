#!/usr/bin/env python3
"""The Slurm recipe of docs/sweep-mpi.md, run as written: its batch script (srun --mpi=pmix ...
headroom sweep --mpi), submitted with sbatch to a private one-node Slurm cluster (the referee's,
scripts/referee/slurm_referee.py) at 2 tasks of 1 CPU. The sweep writes the CSV one process
writes, byte for byte, and the job exits 0; with a bad scenario the job exits 2 and its output
names the scenario's file:line once. Exit 77 (skipped) when the daemons cannot start, this Slurm
has no PMIx plugin, or the MPI headroom was built with is not Open MPI (whose PMIx Slurm's speaks).

Usage: mpi_srun_test.py HEADROOM_BINARY SOURCE_DIR [MPIEXEC]"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

SKIP = 77


def doc_script(source_dir, headroom):
    """The recipe's batch script, at 1 node x 2 tasks x 1 CPU, calling this build's binary."""
    with open(os.path.join(source_dir, "docs", "sweep-mpi.md")) as f:
        text = f.read()
    blocks = [b for b in re.findall(r"```sh\n(.*?)```", text, re.S) if "srun --mpi=pmix" in b]
    if len(blocks) != 1:
        raise SystemExit("FAIL: expected one sh block with srun --mpi=pmix in docs/sweep-mpi.md, found %d"
                         % len(blocks))
    script = blocks[0]
    for old, new in (("--nodes=4", "--nodes=1"), ("--ntasks-per-node=4", "--ntasks-per-node=2"),
                     ("--cpus-per-task=8", "--cpus-per-task=1"),
                     ("srun --mpi=pmix headroom ", "srun --mpi=pmix %s " % headroom)):
        if old not in script:
            raise SystemExit("FAIL: the recipe no longer has %r:\n%s" % (old, script))
        script = script.replace(old, new)
    return script


def write_sweep(folder, nodes):
    os.makedirs(folder)
    with open(os.path.join(folder, "trace.csv"), "w") as f:
        f.write("id,tenant,queue,submit,gpus,runtime\n")
        for i in range(200):
            f.write("%d,t%d,q,%d,%d,%d\n" % (i, i % 3, i * 7, 1 + i % 8, 50 + (i * 37) % 400))
    with open(os.path.join(folder, "sweep.yaml"), "w") as f:
        f.write("name: srun-test\nseed: 5\ncluster:\n  pools:\n"
                "    - {name: a100, nodes: %s, gpus_per_node: 8, gpu_type: A100}\n"
                "policy: fifo\nworkload:\n  trace: trace.csv\n  arrival_scale: 0.8\n"
                "variants:\n  policy: [fifo, sjf]\n  cluster.pools.a100.nodes: [2, 3, 4]\nseeds: 2\n" % nodes)


def main(argv):
    headroom, source_dir = os.path.abspath(argv[1]), os.path.abspath(argv[2])
    mpiexec = argv[3] if len(argv) > 3 else "mpiexec"
    try:
        version = subprocess.run([mpiexec, "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        version = ""
    if "Open MPI" not in version and "OpenRTE" not in version:
        print("SKIP: %s is not Open MPI's" % mpiexec)
        return SKIP
    sys.path.insert(0, os.path.join(source_dir, "scripts", "referee"))
    import slurm_referee as referee

    script = doc_script(source_dir, headroom)
    work = tempfile.mkdtemp(prefix="headroom-srun-")
    good, bad = os.path.join(work, "good"), os.path.join(work, "bad")
    write_sweep(good, 4)
    write_sweep(bad, -4)  # line 5, column 27: a negative node count
    subprocess.run([headroom, "--threads", "1", "sweep", os.path.join(good, "sweep.yaml"), "--csv",
                    os.path.join(work, "one.csv")], check=True, stdout=subprocess.DEVNULL)
    conf = {"nodes": 1, "gpus_per_node": 1, "bf_max_job_test": 100, "priority": "priority/basic", "weights": {},
            "partitions": [{"name": "p", "first": 0, "last": 0, "tier": 1, "factor": 1, "default": True}]}
    cluster = referee.Cluster(conf)
    fails = []
    try:
        try:
            cluster.start(work)
        except referee.ClusterError as e:
            print("SKIP: the private Slurm cluster did not start: %s" % e)
            return SKIP
        if "pmix" not in cluster.cmd(["srun", "--mpi=list"], check=False):
            print("SKIP: this Slurm has no PMIx plugin (srun --mpi=list)")
            return SKIP
        jobs = {}
        for folder in (good, bad):
            with open(os.path.join(folder, "job.sh"), "w") as f:
                f.write(script)
            r = subprocess.run(["sbatch", "--parsable", "job.sh"], cwd=folder, env=cluster.env, capture_output=True,
                               text=True, timeout=60)
            if r.returncode != 0:
                raise SystemExit("FAIL: sbatch: %s" % r.stderr)
            jobs[folder] = r.stdout.strip().split(";")[0]
        exit_codes = {}
        deadline = time.time() + 120
        while len(exit_codes) < len(jobs) and time.time() < deadline:
            for folder, jid in jobs.items():
                line = cluster.cmd(["scontrol", "-o", "show", "job", jid], check=False)
                state = re.search(r"JobState=(\S+)", line)
                if state and state.group(1) in ("COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL"):
                    exit_codes[folder] = (state.group(1), re.search(r" ExitCode=(\S+)", line).group(1))
            time.sleep(0.5)

        def output(folder):
            path = os.path.join(folder, "headroom-sweep-%s.out" % jobs[folder])
            return open(path).read() if os.path.exists(path) else "(no job output)"

        if exit_codes.get(good) != ("COMPLETED", "0:0"):
            fails.append("good sweep: job %s, output:\n%s" % (exit_codes.get(good), output(good)))
        elif "12 runs on 2 MPI ranks: 12 done, 0 not done" not in output(good):
            fails.append("good sweep: output:\n" + output(good))
        else:
            with open(os.path.join(work, "one.csv"), "rb") as a, open(os.path.join(good, "sweep.csv"), "rb") as b:
                if a.read() != b.read():
                    fails.append("good sweep: the CSV under srun differs from one process")
        if exit_codes.get(bad) != ("FAILED", "2:0"):
            fails.append("bad scenario: job %s (expected FAILED 2:0), output:\n%s" % (exit_codes.get(bad), output(bad)))
        errors = [l for l in output(bad).splitlines() if l.startswith("error: ")]
        if len(errors) != 1 or "sweep.yaml:5:27: cluster.pools[0].nodes" not in errors[0]:
            fails.append("bad scenario: expected one error naming sweep.yaml:5:27, output:\n" + output(bad))
        if os.path.exists(os.path.join(bad, "sweep.csv")):
            fails.append("bad scenario: a CSV was written")
    finally:
        cluster.stop()
        shutil.rmtree(work, ignore_errors=True)
    for f in fails:
        print("FAIL: " + f)
    if fails:
        return 1
    print("mpi_srun_test: passed (the docs/sweep-mpi.md batch script under sbatch + srun --mpi=pmix)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
