#!/usr/bin/python3
"""The real Slurm as referee for headroom's `slurm` policy (issue #38).

    slurm_referee.py gen SEED DIR          write a seeded workload (slurm.conf, gres.conf, jobs.json)
    slurm_referee.py run DIR               run it through a private slurmctld + slurmd cluster:
                                           real.csv (start, end, nodes, GPU indices per job),
                                           trace.csv (headroom's CSV) and scenario.yaml
    slurm_referee.py compare DIR HEADROOM  run headroom's slurm on the same files, compare job for
                                           job, write report.txt and compare.json
    slurm_referee.py case SEED DIR HEADROOM [--min-agree F]   gen + run + compare (exit 1 below F)
    slurm_referee.py bench FIRST LAST OUT HEADROOM [--jobs N]  many seeds; agreement table (markdown)

The cluster is private: munged, slurmctld and one slurmd per node run in the foreground as
children of this script, with their keys, sockets, spool, state and logs in one temporary folder
(mkdtemp, mode 0700). They are stopped by PID (SIGTERM, then SIGKILL) and the folder is removed on
every exit path (normal end, exception, SIGINT, SIGTERM). Nothing else is touched: no system
service, no /etc/slurm, no /run/munge. A cluster that cannot start gives exit code 77 (the CTest
skip code) with the daemon's log on stderr.

Python 3 standard library only (h5py for `compare`, Debian's python3-h5py).
"""

import json
import math
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

SKIP = 77

# ----------------------------------------------------------------------------------------------
# The workload generator


def generate(seed, small=False):
    """A seeded workload over what the slurm policy models: conservative backfill with
    reservations (time limits above run times), multi-node jobs, GPUs per node, priorities
    (multifactor job size / partition weights), two partitions (PriorityJobFactor, PriorityTier),
    bf_max_job_test and default_queue_depth."""
    rng = random.Random(seed)
    nodes = rng.choice([4, 4, 4, 6, 6, 8, 8, 12, 16])
    gpus = rng.choice([4, 4, 8])
    n_jobs = rng.randint(10, 20)
    if small:  # the CTest's: about a minute of slurmctld time each
        nodes, n_jobs = 3, 8
    multifactor = rng.random() < 0.6
    two_parts = rng.random() < 0.5
    tiers = two_parts and rng.random() < 0.4
    bf_max_job_test = rng.choice([100, 100, 100, 3, 5, 8])
    conf = {
        "nodes": nodes,
        "gpus_per_node": gpus,
        "priority": "priority/multifactor" if multifactor else "priority/basic",
        "weights": {},
        "bf_max_job_test": bf_max_job_test,
        "partitions": [],
    }
    if multifactor:
        conf["weights"] = {
            "PriorityWeightJobSize": rng.choice([0, 1000, 10000]),
            "PriorityWeightPartition": rng.choice([0, 1000, 10000]) if two_parts else 0,
            "PriorityWeightAge": 0,
            "PriorityWeightFairshare": 0,
            "PriorityFavorSmall": rng.choice(["NO", "YES"]),
        }
    if two_parts:
        # "batch" over every node; "prio" over a subset, favoured by job factor or tier.
        sub = max(2, nodes // 2)
        conf["partitions"] = [
            {"name": "batch", "first": 0, "last": nodes - 1, "tier": 1, "factor": 1, "default": True},
            {"name": "prio", "first": nodes - sub, "last": nodes - 1, "tier": 2 if tiers else 1,
             "factor": 10, "default": False},
        ]
    else:
        conf["partitions"] = [{"name": "batch", "first": 0, "last": nodes - 1, "tier": 1, "factor": 1,
                               "default": True}]
    jobs = []
    used_runtimes = set()
    for i in range(n_jobs):
        part = conf["partitions"][0] if not two_parts or rng.random() < 0.65 else conf["partitions"][1]
        span = part["last"] - part["first"] + 1
        r = rng.random()
        if r < 0.5:
            n = 1
        elif r < 0.75:
            n = min(span, 2)
        else:
            n = min(span, rng.randint(3, max(3, nodes // 2)))
        g = rng.choice([g for g in (1, 2, 4, 8) if g <= gpus])
        # Run times 8..64 s, each at least 2 s from the others (ends of jobs started together
        # fall in different seconds); time limits of 1 or 2 minutes above them.
        top = 36 if small else 65
        run = rng.choice([r for r in range(8, top) if all(abs(r - u) >= 2 for u in used_runtimes)])
        used_runtimes.add(run)
        limit = 1 if run + rng.randint(0, 40) <= 60 else 2
        jobs.append({"id": i + 1, "partition": part["name"], "nodes": n, "gpus_per_node": g,
                     "runtime": run, "limit_min": limit})
    return {"seed": seed, "conf": conf, "jobs": jobs}


# ----------------------------------------------------------------------------------------------
# slurm.conf and gres.conf: one text that the real daemons and headroom's reader both read


def free_ports(n):
    socks, ports = [], []
    try:
        while len(ports) < n:
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            socks.append(s)
            ports.append(s.getsockname()[1])
    finally:
        for s in socks:
            s.close()
    return ports


def write_conf(work, conf, private, ports):
    """slurm.conf in `work` (what headroom reads: scheduling keys) including `private.conf`
    (the daemons' paths and ports, which headroom's reader ignores)."""
    n, g = conf["nodes"], conf["gpus_per_node"]
    sched = "bf_interval=1,bf_resolution=1,sched_interval=1,bf_max_job_test=%d" % conf["bf_max_job_test"]
    lines = [
        "# headroom referee workload (scripts/referee/slurm_referee.py); site part",
        "ClusterName=referee",
        "SchedulerType=sched/backfill",
        "SchedulerParameters=" + sched,
        "SelectType=select/cons_tres",
        "SelectTypeParameters=CR_Core",
        "GresTypes=gpu",
        "PriorityType=" + conf["priority"],
    ]
    for k, v in conf["weights"].items():
        lines.append("%s=%s" % (k, v))
    if conf["priority"] == "priority/multifactor":
        lines.append("PriorityMaxAge=7-0")
    lines.append("NodeName=n[0-%d] CPUs=64 Gres=gpu:%d State=UNKNOWN" % (n - 1, g))
    for p in conf["partitions"]:
        lines.append("PartitionName=%s Nodes=n[%d-%d] MaxTime=INFINITE State=UP PriorityTier=%d "
                     "PriorityJobFactor=%d%s" % (p["name"], p["first"], p["last"], p["tier"], p["factor"],
                                                 " Default=YES" if p["default"] else ""))
    site = "\n".join(lines) + "\n"
    with open(os.path.join(work, "slurm.conf"), "w") as f:
        f.write(site)
    with open(os.path.join(work, "gres.conf"), "w") as f:
        f.write("AutoDetect=off\nNodeName=n[0-%d] Name=gpu File=/dev/nvidia[0-%d]\n" % (n - 1, g - 1))
    if private is None:
        return
    # The daemons' copy: the site text with the private part, node ports and device files.
    ctl_port, first_port = ports[0], ports[1]
    priv = [
        "SlurmctldHost=localhost",
        "SlurmctldPort=%d" % ctl_port,
        "SlurmUser=root",
        "SlurmdUser=root",
        "AuthType=auth/munge",
        "AuthInfo=socket=%s/munge.sock" % private,
        "CredType=cred/munge",
        "StateSaveLocation=%s/state" % private,
        "SlurmdSpoolDir=%s/spool/%%n" % private,
        "SlurmctldPidFile=%s/slurmctld.pid" % private,
        "SlurmdPidFile=%s/slurmd-%%n.pid" % private,
        "SlurmctldLogFile=%s/slurmctld.log" % private,
        "SlurmdLogFile=%s/slurmd-%%n.log" % private,
        "SlurmctldDebug=%s" % os.environ.get(
            "HEADROOM_REFEREE_DEBUG", "debug" if os.environ.get("HEADROOM_REFEREE_DEBUGFLAGS") else "info"),
        "DebugFlags=%s" % os.environ.get("HEADROOM_REFEREE_DEBUGFLAGS", "NO_CONF_HASH"),
        "SlurmdDebug=info",
        "ProctrackType=proctrack/linuxproc",
        "TaskPlugin=task/none",
        "JobAcctGatherType=jobacct_gather/none",
        "AccountingStorageType=accounting_storage/none",
        "JobCompType=jobcomp/none",
        "MpiDefault=none",
        "SwitchType=switch/none",
        "ReturnToService=2",
        "SlurmdParameters=config_overrides",
        "MinJobAge=86400",
        "KillWait=5",
        "InactiveLimit=0",
        "SlurmdTimeout=300",
    ]
    text = site.replace(
        "NodeName=n[0-%d] CPUs=64" % (n - 1),
        "NodeName=n[0-%d] NodeHostname=localhost NodeAddr=127.0.0.1 Port=[%d-%d] CPUs=64"
        % (n - 1, first_port, first_port + n - 1))
    with open(os.path.join(private, "slurm.conf"), "w") as f:
        f.write("\n".join(priv) + "\n" + text)
    os.makedirs(os.path.join(private, "dev"), exist_ok=True)
    for i in range(g):
        open(os.path.join(private, "dev", "gpu%d" % i), "w").close()
    with open(os.path.join(private, "gres.conf"), "w") as f:
        f.write("AutoDetect=off\nNodeName=n[0-%d] Name=gpu File=%s/dev/gpu[0-%d]\n" % (n - 1, private, g - 1))


# ----------------------------------------------------------------------------------------------
# The private cluster


class Cluster:
    """munged + slurmctld + one slurmd per node, children of this process, in a private folder."""

    def __init__(self, conf):
        self.conf = conf
        self.procs = []  # (name, Popen)
        self.dir = tempfile.mkdtemp(prefix="headroom-referee-")
        os.chmod(self.dir, 0o700)
        self.env = dict(os.environ, SLURM_CONF=os.path.join(self.dir, "slurm.conf"), SLURM_TIME_FORMAT="%s")
        for k in list(self.env):
            if k.startswith("SLURM_") and k not in ("SLURM_CONF", "SLURM_TIME_FORMAT"):
                del self.env[k]

    def _spawn(self, name, argv):
        log = open(os.path.join(self.dir, name + ".out"), "w")
        p = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                             env=self.env, start_new_session=True)
        log.close()
        self.procs.append((name, p))
        return p

    def log_tail(self, name, n=20):
        out = []
        for fn in (name + ".out", name + ".log"):
            path = os.path.join(self.dir, fn)
            if os.path.exists(path):
                with open(path, errors="replace") as f:
                    out += f.read().splitlines()[-n:]
        return "\n".join(out)

    def fail(self, why, name):
        raise ClusterError("%s\n--- %s log ---\n%s" % (why, name, self.log_tail(name)))

    def start(self, work):
        d = self.dir
        for sub in ("state", "spool"):
            os.makedirs(os.path.join(d, sub), mode=0o700)
        ports = free_ports(1 + self.conf["nodes"])
        write_conf(work, self.conf, d, ports)
        with open(os.path.join(d, "munge.key"), "wb") as f:
            f.write(os.urandom(1024))
        os.chmod(os.path.join(d, "munge.key"), 0o400)
        munged = shutil.which("munged") or "/usr/sbin/munged"
        slurmctld = shutil.which("slurmctld") or "/usr/sbin/slurmctld"
        slurmd = shutil.which("slurmd") or "/usr/sbin/slurmd"
        for exe in (munged, slurmctld, slurmd, shutil.which("sbatch"), shutil.which("scontrol")):
            if not exe or not os.access(exe, os.X_OK):
                raise ClusterError("Slurm or munge is not installed (apt-get install slurmctld slurmd "
                                   "slurm-client munge)")
        self._spawn("munged", [munged, "-F", "-f", "--socket=" + d + "/munge.sock", "--key-file=" + d + "/munge.key",
                               "--pid-file=" + d + "/munged.pid", "--log-file=" + d + "/munged.log",
                               "--seed-file=" + d + "/munged.seed", "--num-threads=2"])
        self._wait(lambda: os.path.exists(d + "/munge.sock"), 15, "munged did not create its socket", "munged")
        conf = d + "/slurm.conf"
        self._spawn("slurmctld", [slurmctld, "-D", "-i", "-f", conf])
        self._wait(lambda: self.scontrol_ok(), 60, "slurmctld did not answer", "slurmctld")
        for i in range(self.conf["nodes"]):
            self._spawn("slurmd-n%d" % i, [slurmd, "-D", "-f", conf, "-N", "n%d" % i])
        try:
            self._wait(self.nodes_idle, 90, "the nodes did not all become idle", "slurmctld")
        except ClusterError as e:
            states = self.cmd(["sinfo", "-h", "-N", "-o", "%N %T %E"], check=False)
            raise ClusterError("%s\n--- sinfo ---\n%s--- slurmd-n0 log ---\n%s" % (e, states, self.log_tail("slurmd-n0")))

    def _wait(self, ok, seconds, why, name):
        end = time.time() + seconds
        while time.time() < end:
            for pname, p in self.procs:
                if p.poll() is not None:
                    self.fail("%s exited with code %s" % (pname, p.returncode), pname)
            if ok():
                return
            time.sleep(0.5)
        self.fail(why, name)

    def cmd(self, argv, check=True):
        try:
            r = subprocess.run(argv, env=self.env, capture_output=True, text=True, timeout=60)
        except subprocess.TimeoutExpired:
            raise ClusterError("%s did not answer within 60 s" % " ".join(argv))
        if check and r.returncode != 0:
            raise ClusterError("%s failed (%d): %s" % (" ".join(argv), r.returncode, r.stderr.strip()))
        return r.stdout

    def scontrol_ok(self):
        try:
            return subprocess.run(["scontrol", "ping"], env=self.env, capture_output=True, text=True,
                                  timeout=10).stdout.find("UP") >= 0
        except subprocess.TimeoutExpired:
            return False

    def nodes_idle(self):
        out = self.cmd(["sinfo", "-h", "-N", "-o", "%N %T"], check=False)
        # One line per node and partition: keep one per node.
        states = list({l.split()[0]: l.split()[1] for l in out.splitlines() if l.strip()}.values())
        bad = [s for s in states if s.startswith(("inval", "drain", "fail"))]
        if bad:
            self.fail("nodes in state " + ",".join(sorted(set(bad))), "slurmctld")
        return len(states) == self.conf["nodes"] and all(s == "idle" for s in states)

    def stop(self):
        # Jobs still running (an interrupted run) are cancelled through this cluster's own
        # slurmctld first: their slurmstepd and sleep leave the daemons' sessions.
        if any(name == "slurmctld" and p.poll() is None for name, p in self.procs):
            try:
                ids = self.cmd(["squeue", "-h", "-o", "%i"], check=False).split()
                if ids:
                    self.cmd(["scancel"] + ids, check=False)
                    deadline = time.time() + 20
                    while time.time() < deadline and self.cmd(["squeue", "-h", "-o", "%i"], check=False).split():
                        time.sleep(0.5)
            except (ClusterError, subprocess.TimeoutExpired, OSError):
                pass
        # Daemons this object started, by PID: slurmd first, then slurmctld, then munged.
        for name, p in reversed(self.procs):
            if p.poll() is None:
                try:
                    p.send_signal(signal.SIGTERM)
                except ProcessLookupError:
                    pass
        deadline = time.time() + 15
        for name, p in reversed(self.procs):
            try:
                p.wait(timeout=max(0.1, deadline - time.time()))
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        # Job steps (slurmstepd, sleep) run in the daemons' sessions: the sessions we created.
        for name, p in self.procs:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        self.procs = []
        # A job step whose slurmd is gone (slurmstepd, its sleep) runs in a session of its own:
        # found by this cluster's SLURM_CONF in its environment, and ended by PID.
        mine = ("SLURM_CONF=%s/slurm.conf" % self.dir).encode()
        for pid in os.listdir("/proc"):
            if not pid.isdigit() or int(pid) == os.getpid():
                continue
            try:
                with open("/proc/%s/environ" % pid, "rb") as f:
                    if mine in f.read().split(b"\0"):
                        os.kill(int(pid), signal.SIGKILL)
            except (OSError, ProcessLookupError):
                pass
        shutil.rmtree(self.dir, ignore_errors=True)


class ClusterError(Exception):
    pass


def _raise_interrupt(signum, frame):
    raise KeyboardInterrupt("signal %d" % signum)


# ----------------------------------------------------------------------------------------------
# Running a workload


def run(work, keep_logs=False):
    with open(os.path.join(work, "jobs.json")) as f:
        wl = json.load(f)
    conf, jobs = wl["conf"], wl["jobs"]
    cluster = Cluster(conf)
    old = {s: signal.signal(s, _raise_interrupt) for s in (signal.SIGTERM, signal.SIGHUP)}
    try:
        cluster.start(work)
        parts = [p["name"] for p in conf["partitions"]]
        for p in parts:
            cluster.cmd(["scontrol", "update", "PartitionName=" + p, "State=DOWN"])
        slurm_id = {}
        for j in jobs:
            out = cluster.cmd(["sbatch", "--parsable", "-J", "j%d" % j["id"], "-p", j["partition"],
                               "-N", str(j["nodes"]), "--gres=gpu:%d" % j["gpus_per_node"],
                               "-t", str(j["limit_min"]), "-o", "/dev/null", "--wrap",
                               "sleep %d" % j["runtime"]])
            slurm_id[j["id"]] = int(out.strip().split(";")[0])
        for p in parts:
            cluster.cmd(["scontrol", "update", "PartitionName=" + p, "State=UP"])
        t_up = time.time()
        limit = sum(j["limit_min"] * 60 for j in jobs) + 120
        gpu_idx = {}  # Slurm job id -> "n0:0-3;n1:0-3", read while it runs (gone once it ends)
        while True:
            out = cluster.cmd(["squeue", "-h", "-o", "%i"], check=False)
            for line in cluster.cmd(["scontrol", "-d", "-o", "show", "job"], check=False).splitlines():
                rec = parse_job_line(line)
                if rec and rec.get("JobState") == "RUNNING" and rec["_gres_idx"]:
                    gpu_idx.setdefault(rec["JobId"], rec["_gres_idx"])
            if not out.strip():
                break
            if time.time() - t_up > limit:
                raise ClusterError("jobs still queued after %d s:\n%s" % (limit, out))
            time.sleep(2)
        records = {}
        out = cluster.cmd(["scontrol", "-d", "-o", "show", "job"])
        with open(os.path.join(work, "scontrol.txt"), "w") as f:
            f.write(out)
        for line in out.splitlines():
            rec = parse_job_line(line)
            if rec:
                records[rec["JobId"]] = rec
        rows = []
        for j in jobs:
            rec = records[slurm_id[j["id"]]]
            rows.append({"id": j["id"], "slurm_id": slurm_id[j["id"]], "state": rec["JobState"],
                         "priority": int(rec.get("Priority", 0)),
                         "start": int(rec["StartTime"]), "end": int(rec["EndTime"]),
                         "nodes": ",".join(expand_nodes(rec.get("NodeList", ""))),
                         "gpu_idx": gpu_idx.get(slurm_id[j["id"]], "")})
        # The controller's log times starts and ends to the millisecond (scontrol's are whole
        # seconds): kept beside the results, read by retime().
        shutil.copy(os.path.join(cluster.dir, "slurmctld.log"), os.path.join(work, "slurmctld.log"))
    finally:
        cluster.stop()
        for s, h in old.items():
            signal.signal(s, h)
    t0 = min(r["start"] for r in rows)
    with open(os.path.join(work, "real.csv"), "w") as f:
        f.write("id,slurm_id,state,priority,start,end,nodes,gpu_idx\n")
        for r in rows:
            f.write('%d,%d,%s,%d,%d,%d,"%s","%s"\n' % (r["id"], r["slurm_id"], r["state"], r["priority"],
                                                     r["start"] - t0, r["end"] - t0, r["nodes"], r["gpu_idx"]))
    retime(work)
    write_trace(work, wl)
    return rows


def log_times(path):
    """Slurm job id -> [start, end] in epoch seconds with milliseconds, from slurmctld's log:
    "sched: Allocate JobId=N" (main scheduler) or "_start_job: Started JobId=N" (backfill), and
    "_job_complete: JobId=N done". The log's times are local time, as the daemons'."""
    import datetime
    import re
    out = {}
    pat = re.compile(r"^\[(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3})\] (.*)$")
    with open(path, errors="replace") as f:
        for line in f:
            m = pat.match(line)
            if not m:
                continue
            t, msg = m.groups()
            j = re.search(r"JobId=(\d+)", msg)
            if not j:
                continue
            jid = int(j.group(1))
            when = datetime.datetime.fromisoformat(t).timestamp()
            if "sched: Allocate JobId=" in msg or "_start_job: Started JobId=" in msg:
                out.setdefault(jid, [None, None])[0] = when
            elif "_job_complete: JobId=" in msg and msg.rstrip().endswith("done"):
                out.setdefault(jid, [None, None])[1] = when
    return out


def retime(work):
    """real.csv with slurmctld's millisecond times (start, end, from the first start); scontrol's
    whole seconds stay as start_s, end_s. Jobs the log does not time keep the whole seconds."""
    path = os.path.join(work, "real.csv")
    rows = read_csv(path)
    log = os.path.join(work, "slurmctld.log")
    times = log_times(log) if os.path.exists(log) else {}
    for r in rows:
        r.setdefault("start_s", r["start"])
        r.setdefault("end_s", r["end"])
    abs_start = {}
    for r in rows:
        t = times.get(int(r["slurm_id"]), [None, None])
        if t[0] is not None and t[1] is not None:
            abs_start[r["id"]] = (t[0], t[1])
    if len(abs_start) != len(rows):
        return
    t0 = min(a for a, b in abs_start.values())
    # The start instant on slurmctld's clock (epoch seconds): select/cons_tres groups running
    # jobs' ends on 30-s barriers of time_t, so headroom's clock takes the same phase (phase()).
    with open(os.path.join(work, "t0"), "w") as f:
        f.write("%.3f\n" % t0)
    with open(path, "w") as f:
        f.write("id,slurm_id,state,priority,start,end,nodes,gpu_idx,start_s,end_s\n")
        for r in rows:
            a, b = abs_start[r["id"]]
            f.write('%s,%s,%s,%s,%.3f,%.3f,"%s","%s",%s,%s\n' % (
                r["id"], r["slurm_id"], r["state"], r["priority"], a - t0, b - t0, r["nodes"], r["gpu_idx"],
                r["start_s"], r["end_s"]))


def parse_job_line(line):
    rec = {}
    gres = []
    for tok in line.split():
        if "=" not in tok:
            continue
        k, v = tok.split("=", 1)
        if k == "Nodes" and "IDX:" in tok:
            continue
        if k == "GRES" and "IDX:" in v:
            gres.append(v)
            continue
        rec.setdefault(k, v)
    # `scontrol -d` prints " Nodes=n[0-1] CPU_IDs=0 Mem=0 GRES=gpu:2(IDX:0-1)" per group of nodes
    # while the job runs.
    idx = []
    words = line.split()
    for i, tok in enumerate(words):
        if tok.startswith("Nodes=") and i + 1 < len(words) and words[i + 1].startswith("CPU_IDs="):
            g = next((w for w in words[i + 1:i + 5] if w.startswith("GRES=")), "")
            if "IDX:" in g:
                for node in expand_nodes(tok.split("=", 1)[1]):
                    idx.append("%s:%s" % (node, g.split("IDX:", 1)[1].split(")")[0]))
    if "JobId" not in rec:
        return None
    rec["JobId"] = int(rec["JobId"])
    rec["_gres_idx"] = ";".join(idx)
    return rec


def expand_nodes(text):
    """n[0-2,5],n7 -> n0 n1 n2 n5 n7 (the one-prefix hostlists this harness writes)."""
    out = []
    i = 0
    while i < len(text):
        j = i
        while j < len(text) and text[j] not in "[,":
            j += 1
        prefix = text[i:j]
        if j < len(text) and text[j] == "[":
            k = text.index("]", j)
            for part in text[j + 1:k].split(","):
                lo, _, hi = part.partition("-")
                for v in range(int(lo), int(hi or lo) + 1):
                    out.append("%s%d" % (prefix, v))
            i = k + 2
        else:
            if prefix and prefix != "(null)":
                out.append(prefix)
            i = j + 1
    return out


def phase(work):
    """Seconds from the last 30-s barrier of slurmctld's clock (time_t % 30) to the start instant
    (the `t0` file retime() writes; 0 without it). headroom's trace submits at this time, so that
    its clock's 30-s barriers (backfill's groups of ends) fall where slurmctld's did."""
    path = os.path.join(work, "t0")
    if not os.path.exists(path):
        return 0
    with open(path) as f:
        return int(float(f.read().split()[0])) % 30


def write_trace(work, wl):
    """headroom's CSV from jobs.json and real.csv: every job submitted at phase() (the partitions were
    DOWN while sbatch ran), one CPU per node (what sbatch -N asks without -n or -c: Slurm's job
    size factor counts it), the run time Slurm recorded (end - start, as sacct's Elapsed), the
    time limit, and the real start and end as trace_start / trace_end."""
    real = {int(r["id"]): r for r in read_csv(os.path.join(work, "real.csv"))}
    with open(os.path.join(work, "trace.csv"), "w") as f:
        f.write("id,tenant,queue,submit,gpus,gpus_per_node,nodes,cpus,runtime,walltime,trace_start,trace_end\n")
        for j in wl["jobs"]:
            r = real[j["id"]]
            start, end = float(r["start"]), float(r["end"])
            f.write("%d,root,%s,%d,%d,%d,%d,%d,%.3f,%d,%.3f,%.3f\n" % (
                j["id"], j["partition"], phase(work), j["nodes"] * j["gpus_per_node"], j["gpus_per_node"], j["nodes"],
                j["nodes"], end - start, j["limit_min"] * 60, start, end))
    with open(os.path.join(work, "scenario.yaml"), "w") as f:
        f.write("# Referee workload %d (scripts/referee/slurm_referee.py)\n" % wl["seed"])
        f.write("name: referee-%d\nseed: 1\ncluster: {slurm_conf: slurm.conf}\n" % wl["seed"])
        f.write("policy: {name: slurm, slurm_conf: slurm.conf, will_run_groups: YES, first_pass_backfill: YES}\nworkload: {trace: trace.csv}\n")


# ----------------------------------------------------------------------------------------------
# Comparing


def read_csv(path):
    import csv
    with open(path) as f:
        return list(csv.DictReader(f))


def run_headroom(work, headroom):
    out = os.path.join(work, "headroom.h5")
    r = subprocess.run([headroom, "run", os.path.join(work, "scenario.yaml"), "-o", out, "--json"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError("headroom run failed (%d): %s" % (r.returncode, r.stderr))
    import h5py
    with h5py.File(out, "r") as h:
        jobs = h["jobs"]
        ids = [int(x) for x in jobs["trace_id"][:]]
        start = [int(x) for x in jobs["start"][:]]
        end = [int(x) for x in jobs["end"][:]]
        pl = h["placements"]
        pj, pn = [int(x) for x in pl["job"][:]], [int(x) for x in pl["node"][:]]
    nodes = {}
    for row, node in zip(pj, pn):
        nodes.setdefault(ids[row], set()).add(node)
    p = phase(work)  # headroom's clock: the start instant at p s
    return {ids[i]: {"start": start[i] / 1000.0 - p, "end": end[i] / 1000.0 - p,
                     "nodes": sorted("n%d" % n for n in nodes.get(ids[i], ()))} for i in range(len(ids))}


def queue_order(wl, real):
    """The order of the pending queue: partition PriorityTier, then priority (Slurm's own
    number, from scontrol), then job id (sort_job_queue2)."""
    tier = {p["name"]: p["tier"] for p in wl["conf"]["partitions"]}
    return sorted(wl["jobs"], key=lambda j: (-tier[j["partition"]], -real[j["id"]]["priority"], j["id"]))


def compare(work, headroom, tol=2.0):
    with open(os.path.join(work, "jobs.json")) as f:
        wl = json.load(f)
    real = {int(r["id"]): {"start": float(r["start"]), "end": float(r["end"]), "priority": int(r["priority"]),
                           "nodes": sorted(x for x in r["nodes"].split(",") if x), "state": r["state"]}
            for r in read_csv(os.path.join(work, "real.csv"))}
    write_trace(work, wl)
    hr = run_headroom(work, headroom)
    order = queue_order(wl, real)
    rank = {j["id"]: k for k, j in enumerate(order)}

    def jumped(outcome, jid):
        # Started ahead of a job earlier in the queue order (backfilled past it).
        return sorted(o for o in rank if rank[o] < rank[jid] and outcome[o]["start"] > outcome[jid]["start"] + 1)

    rows = []
    for j in wl["jobs"]:
        i = j["id"]
        dt = hr[i]["start"] - real[i]["start"]
        inversions = [o for o in real if o != i and
                      (real[i]["start"] - real[o]["start"]) * (hr[i]["start"] - hr[o]["start"]) < 0 and
                      abs(real[i]["start"] - real[o]["start"]) > 1 and abs(hr[i]["start"] - hr[o]["start"]) > 1]
        time_ok = abs(dt) <= tol
        order_ok = not inversions
        nodes_ok = hr[i]["nodes"] == real[i]["nodes"]
        rj, hj = jumped(real, i), jumped(hr, i)
        rule = ""
        if not (time_ok and order_ok):
            if rj and not hj:
                rule = "backfilled by Slurm only (ahead of %s)" % ",".join(map(str, rj))
            elif hj and not rj:
                rule = "backfilled by headroom only (ahead of %s)" % ",".join(map(str, hj))
            elif abs(dt) <= 6 and order_ok:
                rule = "lag along a chain of ends (whole-second records)"
            else:
                rule = "start differs"
        rows.append({"id": i, "partition": j["partition"], "shape": "%dx%d" % (j["nodes"], j["gpus_per_node"]),
                     "limit": j["limit_min"] * 60, "run": real[i]["end"] - real[i]["start"],
                     "priority": real[i]["priority"],
                     "real_start": real[i]["start"], "hr_start": hr[i]["start"], "dt": dt,
                     "real_nodes": ",".join(real[i]["nodes"]), "hr_nodes": ",".join(hr[i]["nodes"]),
                     "time_ok": time_ok, "order_ok": order_ok, "nodes_ok": nodes_ok,
                     "real_jumped": rj, "hr_jumped": hj, "agree": time_ok and order_ok, "rule": rule})
    agree = sum(r["agree"] for r in rows)
    summary = {"seed": wl["seed"], "nodes": wl["conf"]["nodes"], "gpus_per_node": wl["conf"]["gpus_per_node"],
               "jobs": len(rows), "agree": agree, "time_ok": sum(r["time_ok"] for r in rows),
               "order_ok": sum(r["order_ok"] for r in rows), "nodes_ok": sum(r["nodes_ok"] for r in rows),
               "priority": wl["conf"]["priority"], "partitions": len(wl["conf"]["partitions"]),
               "bf_max_job_test": wl["conf"]["bf_max_job_test"],
               "backfilled_real": sum(bool(r["real_jumped"]) for r in rows),
               "backfilled_hr": sum(bool(r["hr_jumped"]) for r in rows)}
    with open(os.path.join(work, "compare.json"), "w") as f:
        json.dump({"summary": summary, "jobs": rows}, f, indent=1)
    lines = ["workload %d: %d nodes x %d GPUs, %s, %d partition(s), bf_max_job_test=%d" % (
        wl["seed"], summary["nodes"], summary["gpus_per_node"], summary["priority"], summary["partitions"],
        summary["bf_max_job_test"]),
        "agree (start within +-%g s, same order): %d of %d; same nodes: %d" % (tol, agree, len(rows),
                                                                             summary["nodes_ok"]),
        "%4s %-6s %-5s %5s %4s %8s %8s %8s %6s  %-14s %-14s %s" % (
            "job", "part", "shape", "limit", "run", "prio", "slurm", "headroom", "dt", "slurm nodes",
            "headroom nodes", "rule")]
    for r in sorted(rows, key=lambda r: (r["real_start"], r["id"])):
        lines.append("%4d %-6s %-5s %5d %4d %8d %8.3f %8.3f %+6.1f  %-14s %-14s %s%s" % (
            r["id"], r["partition"], r["shape"], r["limit"], r["run"], r["priority"], r["real_start"],
            r["hr_start"], r["dt"], r["real_nodes"], r["hr_nodes"], "" if r["agree"] else "DIFFERS: ", r["rule"]))
    text = "\n".join(lines) + "\n"
    with open(os.path.join(work, "report.txt"), "w") as f:
        f.write(text)
    return summary, text


# ----------------------------------------------------------------------------------------------


def cmd_gen(seed, work, small=False):
    os.makedirs(work, exist_ok=True)
    wl = generate(seed, small)
    with open(os.path.join(work, "jobs.json"), "w") as f:
        json.dump(wl, f, indent=1)
    write_conf(work, wl["conf"], None, None)


def case(seed, work, headroom, keep_logs=False):
    cmd_gen(seed, work)
    t = time.time()
    run(work, keep_logs)
    wall = time.time() - t
    summary, text = compare(work, headroom)
    summary["wall_s"] = round(wall)
    return summary, text


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    sub, args = argv[1], argv[2:]
    try:
        if sub == "gen" and len(args) == 2:
            cmd_gen(int(args[0]), args[1])
        elif sub == "run" and len(args) == 1:
            run(args[0], keep_logs=True)
        elif sub == "compare" and len(args) == 2:
            print(compare(args[0], args[1])[1], end="")
        elif sub == "case" and len(args) >= 3:
            min_agree = float(args[args.index("--min-agree") + 1]) if "--min-agree" in args else 0.0
            summary, text = case(int(args[0]), args[1], args[2], keep_logs=True)
            print(text, end="")
            if summary["agree"] < min_agree * summary["jobs"]:
                print("referee: %d of %d jobs agree, below %.0f %%" % (summary["agree"], summary["jobs"],
                                                                       100 * min_agree), file=sys.stderr)
                return 1
        elif sub == "retime" and len(args) == 1:
            retime(args[0])
        elif sub == "gen-small" and len(args) == 2:
            cmd_gen(int(args[0]), args[1], small=True)
        elif sub == "ctest" and len(args) >= 2:
            return ctest(args[0], args[1], [int(a) for a in args[2:]] or [101, 102, 103])
        elif sub == "check" and len(args) == 3:
            summary, text = compare(args[0], args[1])
            print(text, end="")
            if summary["agree"] < int(args[2]):
                print("referee: %d of %d jobs agree with the recorded slurmctld run, expected at least %s"
                      % (summary["agree"], summary["jobs"], args[2]), file=sys.stderr)
                return 1
        elif sub == "bench" and len(args) >= 4:
            return bench(int(args[0]), int(args[1]), args[2], args[3])
        else:
            print(__doc__, file=sys.stderr)
            return 2
    except ClusterError as e:
        print("referee: the private Slurm cluster did not run: %s" % e, file=sys.stderr)
        return SKIP
    except KeyboardInterrupt:
        print("referee: interrupted; daemons stopped, private folder removed", file=sys.stderr)
        return 130
    return 0


def ctest(headroom, out, seeds, min_each=0.75, min_all=0.85):
    """The CTest: small workloads through the real slurmctld, one private cluster each, all at
    once (each a child process that cleans up after itself); each must agree on at least
    `min_each` of its jobs and all of them on `min_all` (a live run on a loaded machine can lag a
    job by a second more than the recorded ones). Exit 77 (skipped) when a cluster cannot start."""
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    children = []
    old = {s: signal.signal(s, _raise_interrupt) for s in (signal.SIGTERM, signal.SIGHUP)}
    try:
        for seed in seeds:
            work = os.path.join(out, "w%d" % seed)
            cmd_gen(seed, work, small=True)
            children.append((seed, work, subprocess.Popen([sys.executable, os.path.abspath(__file__), "run", work])))
        codes = {seed: p.wait() for seed, work, p in children}
    finally:
        for seed, work, p in children:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)  # the child stops its daemons and removes its folder
                try:
                    p.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    p.kill()
        for s, h in old.items():
            signal.signal(s, h)
    if any(c == SKIP for c in codes.values()):
        print("referee: SKIPPED: the private slurmctld/slurmd/munged cluster could not start here "
              "(see the message above); install slurmctld slurmd slurm-client munge", file=sys.stderr)
        return SKIP
    bad = [seed for seed, c in codes.items() if c != 0]
    if bad:
        print("referee: the Slurm run of workload(s) %s failed" % bad, file=sys.stderr)
        return 1
    failed = 0
    agree = jobs = 0
    for seed, work, p in children:
        summary, text = compare(work, headroom)
        print(text)
        agree += summary["agree"]
        jobs += summary["jobs"]
        if summary["agree"] < min_each * summary["jobs"]:
            print("referee: workload %d: %d of %d jobs agree with slurmctld, below %.0f %%" % (
                seed, summary["agree"], summary["jobs"], 100 * min_each), file=sys.stderr)
            failed += 1
    print("referee: %d of %d jobs agree with slurmctld" % (agree, jobs))
    if agree < min_all * jobs:
        print("referee: below %.0f %% in all" % (100 * min_all), file=sys.stderr)
        failed += 1
    return 1 if failed else 0


def bench(first, last, out, headroom):
    """Seeds first..last under `out`/wNN: generated and run through Slurm unless real.csv is
    there already, then compared (unless HEADROOM is `-`); the agreement table goes to
    `out`/table.md."""
    os.makedirs(out, exist_ok=True)
    results = []
    for seed in range(first, last + 1):
        work = os.path.join(out, "w%02d" % seed)
        if not os.path.exists(os.path.join(work, "real.csv")):
            cmd_gen(seed, work)
            t = time.time()
            run(work, keep_logs=True)
            print("workload %d: ran in %.0f s" % (seed, time.time() - t), flush=True)
        if headroom == "-":
            continue
        summary, text = compare(work, headroom)
        print(text, flush=True)
        results.append(summary)
    if headroom == "-":
        return 0
    lines = ["| workload | nodes x GPUs | priority | partitions | bf_max_job_test | jobs | agree | same nodes | "
             "backfilled (Slurm / headroom) |",
             "|---:|---|---|---:|---:|---:|---:|---:|---|"]
    tj = ta = tn = 0
    for s in results:
        lines.append("| %d | %d x %d | %s | %d | %d | %d | %d | %d | %d / %d |" % (
            s["seed"], s["nodes"], s["gpus_per_node"], s["priority"].split("/")[1], s["partitions"],
            s["bf_max_job_test"], s["jobs"], s["agree"], s["nodes_ok"], s["backfilled_real"],
            s["backfilled_hr"]))
        tj += s["jobs"]
        ta += s["agree"]
        tn += s["nodes_ok"]
    lines.append("| **all %d** | | | | | %d | **%d (%.1f %%)** | %d (%.1f %%) | |" % (
        len(results), tj, ta, 100.0 * ta / max(1, tj), tn, 100.0 * tn / max(1, tj)))
    with open(os.path.join(out, "table.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
