#!/usr/bin/env python3
"""Times several commands side by side on a shared machine: N rounds, each running every command
once in turn, so that all of them go through the same spells of load. Prints, per command, the
median and fastest wall time and the median CPU time (user + system of the process and its
children), in milliseconds.

    bench/interleave.py 31 "OLD/headroom run sjf.yaml -o a.h5" "build/apps/headroom run sjf.yaml -o b.h5"
"""
import resource
import statistics
import subprocess
import sys
import time


def main():
    if len(sys.argv) < 3 or not sys.argv[1].isdigit():
        sys.exit(__doc__)
    rounds, commands = int(sys.argv[1]), sys.argv[2:]
    wall = {c: [] for c in commands}
    cpu = {c: [] for c in commands}
    for _ in range(rounds):
        for c in commands:
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            t0 = time.perf_counter()
            subprocess.run(c, shell=True, stdout=subprocess.DEVNULL, check=True)
            wall[c].append((time.perf_counter() - t0) * 1e3)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu[c].append((after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime) * 1e3)
    for c in commands:
        print(f"median {statistics.median(wall[c]):7.1f}  fastest {min(wall[c]):7.1f}  "
              f"cpu {statistics.median(cpu[c]):7.1f}  {c}")


if __name__ == "__main__":
    main()
