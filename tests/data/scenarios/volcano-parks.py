#!/usr/bin/env python3
"""Writes volcano-parks.csv (tests/data/scenarios/volcano-parks.yaml): 300 PodGroups, seed 2.

Usage: python3 volcano-parks.py [SEED] > volcano-parks.csv
"""
import random
import sys

r = random.Random(int(sys.argv[1]) if len(sys.argv) > 1 else 2)
print("id,tenant,queue,submit,gpus,cpus,memory_mib,runtime,walltime,group,gang_min,priority,preemptible")
t = 0.0
job = 0
for group in range(1, 301):
    t += r.expovariate(1 / 45.0)
    queue = r.choice(["train", "train", "batch", "cpu"])
    members = r.choice([1, 1, 2, 3, 4]) if queue != "cpu" else r.choice([1, 2])
    runtime = int(r.expovariate(1 / 1500.0)) + 30
    priority = r.choice([0, 0, 10])
    preemptible = "true" if r.random() < 0.6 else "false"
    gpus, cpus, mem = r.choice([1, 2, 4, 8]), r.choice([0, 0, 8, 24]), r.choice([0, 0, 65536])
    for m in range(members):
        job += 1
        if queue == "cpu":  # one GPU, some CPUs
            row = (1, r.choice([4, 16, 32]), r.choice([0, 16384]))
        elif members > 1 and m == members - 1:  # a launcher: one GPU, many CPUs
            row = (1, r.choice([16, 24, 32]), 0)
        else:
            row = (gpus, cpus, mem)
        tenant = f"t{r.randint(1, 4)}"
        gang = members if members > 1 else ""
        print(f"{job},{tenant},{queue},{t:.0f},{row[0]},{row[1]},{row[2]},{runtime},{runtime * 2},"
              f"{group},{gang},{priority},{preemptible}")
