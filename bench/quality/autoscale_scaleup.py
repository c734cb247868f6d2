#!/usr/bin/python3
"""bench/quality/autoscale_scaleup.py - scale-up quality of `berth autoscale plan`
against an exact solver (not part of CI; docs/autoscale.md "Packing quality").

Random instances: one VirtualNodeGroup, no existing node, pending pods of 5-10
Deployments of 1-8 replicas each (written out as Pods; larger instances leave CBC
without a proof of optimality within minutes), Azure-like instance types (D: 4 GiB
per vCPU, E: 8 GiB, F: 2 GiB; 2..64 vCPU; prices per vCPU-hour as East US pay as
you go, linear in size within a family) with the AKS node overhead written
explicitly into each type (kubeReserved cpu brackets, min(20 MiB x maxPods +
50 MiB, 25 % of memory), 100 MiB eviction), so both models read the same
allocatable. One zone, spot offerings without interruption rate: berth's market
score is then the price, and its cheapest plan is the cheapest set of nodes.

The exact model: min-cost variable-sized bin packing, integer count x[d, t, j] of
Deployment d's pods on node j of type t, y[t, j] node open, cpu, memory and pod
slots per node, symmetry broken by y[t, j] >= y[t, j + 1]; at most
floor(berth's cost / price(t)) nodes of type t (a cheaper plan cannot have more).
Solved with CBC through PuLP (Debian coinor-cbc, python3-pulp).

Usage: bench/quality/autoscale_scaleup.py [--berth build/berth] [--n 40] [--seed 1]
       [--keep DIR] [--time-limit 60]
Prints one line per instance and the average and worst gap (berth / optimum - 1).
"""
import argparse
import json
import math
import os
import random
import subprocess
import sys
import tempfile

import pulp

MIB = 1024 * 1024
GIB = 1024 * MIB
SIZES = [2, 4, 8, 16, 32, 48, 64]
FAMILIES = [  # (name, GiB per vCPU, $ per vCPU-hour, name pattern)
    ("D", 4, 0.048, "Standard_D{}s_v5"),
    ("E", 8, 0.063, "Standard_E{}s_v5"),
    ("F", 2, 0.0425, "Standard_F{}s_v2"),
]
MAX_PODS = 110


def aks_cpu_reserved(cores):
    """AKS kube-reserved cpu in millicores: 6 % of core 1, 4 % of core 2,
    2 % of cores 3-4, 1 % above."""
    m = 60 if cores >= 1 else 0
    m += 40 if cores >= 2 else 0
    m += 20 * max(0, min(cores, 4) - 2)
    m += 10 * max(0, cores - 4)
    return m


def instance_types():
    out = []
    for fam, gib, per_cpu, pat in FAMILIES:
        for c in SIZES:
            mem = c * gib * GIB
            kr_mem = min(20 * MIB * MAX_PODS + 50 * MIB, mem // 4)
            kr_cpu = aks_cpu_reserved(c)
            out.append({
                "name": pat.format(c), "cpu": c * 1000, "memory": mem,
                "kr_cpu": kr_cpu, "kr_mem": kr_mem, "evict": 100 * MIB,
                "alloc_cpu": c * 1000 - kr_cpu,
                "alloc_mem": mem - kr_mem - 100 * MIB,
                "pods": MAX_PODS, "price": round(c * per_cpu, 4),
            })
    return out


def random_instance(rng):
    deps = []
    for d in range(rng.randint(5, 10)):
        cpu = rng.choice([100, 250, 500, 750, 1000, 1500, 2000, 3000, 4000, 6000])
        gib_per_cpu = rng.choice([0.5, 1, 2, 3, 4, 6, 8])
        mem = int(cpu / 1000 * gib_per_cpu * 1024) * MIB
        mem = max(mem, 64 * MIB)
        deps.append({"name": "app%d" % d, "cpu": cpu, "mem": mem,
                     "replicas": rng.randint(1, 8)})
    return deps


def write_yaml(path, types, deps):
    with open(path, "w") as f:
        f.write("apiVersion: berth.io/v1\nkind: VirtualNodeGroup\nmetadata: {name: general}\n"
                "spec: {zones: [z1]}\n")
        for t in types:
            f.write("---\napiVersion: berth.io/v1\nkind: InstanceType\nmetadata: {name: %s}\n"
                    "spec:\n  provider: azure\n  capacity: {cpu: \"%d\", memory: %dMi, pods: %d}\n"
                    "  kubeReserved: {cpu: %dm, memory: %dMi}\n"
                    "  evictionThreshold: {memory: %dMi}\n"
                    "  offerings: [{zone: z1, capacityType: spot, price: %s}]\n"
                    % (t["name"], t["cpu"] // 1000, t["memory"] // MIB, t["pods"], t["kr_cpu"],
                       t["kr_mem"] // MIB, t["evict"] // MIB, t["price"]))
        for d in deps:
            for r in range(d["replicas"]):
                f.write("---\napiVersion: v1\nkind: Pod\nmetadata: {name: %s-%d, namespace: default}\n"
                        "spec:\n  containers: [{name: c, resources: {requests: {cpu: %dm, memory: %dMi}}}]\n"
                        % (d["name"], r, d["cpu"], d["mem"] // MIB))


def berth_cost(berth, path):
    r = subprocess.run([berth, "autoscale", "plan", path, "--at", "2024-05-01T12:00:00Z",
                        "-o", "json"], capture_output=True, text=True)
    if r.returncode not in (0, 1):
        raise RuntimeError("berth failed: " + r.stderr)
    plan = json.loads(r.stdout)
    if plan.get("unschedulable"):
        raise RuntimeError("berth left pods unschedulable: %s" % plan["unschedulable"][:2])
    cost = sum(u["count"] * u["pricePerHour"] for u in plan["scaleUp"])
    nodes = sorted("%dx%s" % (u["count"], u["instanceType"]) for u in plan["scaleUp"])
    bound = plan.get("lowerBound", {}).get("costPerHour")
    return cost, nodes, bound


def exact_cost(types, deps, upper, time_limit):
    prob = pulp.LpProblem("scaleup", pulp.LpMinimize)
    y, x = {}, {}
    for ti, t in enumerate(types):
        fit = [d for d in deps if d["cpu"] <= t["alloc_cpu"] and d["mem"] <= t["alloc_mem"]]
        if not fit:
            continue
        jmax = int(math.floor(upper / t["price"] + 1e-9))
        need = sum(d["replicas"] for d in fit)
        jmax = min(jmax, need)
        for j in range(jmax):
            y[ti, j] = pulp.LpVariable("y_%d_%d" % (ti, j), cat="Binary")
            for di, d in enumerate(deps):
                if d in fit:
                    cap = min(d["replicas"], t["alloc_cpu"] // d["cpu"], t["alloc_mem"] // d["mem"],
                              t["pods"])
                    x[di, ti, j] = pulp.LpVariable("x_%d_%d_%d" % (di, ti, j), 0, cap,
                                                   cat="Integer")
                    prob += x[di, ti, j] <= cap * y[ti, j]
    prob.setObjective(pulp.lpSum(types[ti]["price"] * v for (ti, j), v in y.items()))
    for di, d in enumerate(deps):
        prob += pulp.lpSum(v for (dd, ti, j), v in x.items() if dd == di) == d["replicas"]
    for (ti, j), yv in y.items():
        t = types[ti]
        xs = [(deps[di], v) for (di, tt, jj), v in x.items() if tt == ti and jj == j]
        prob += pulp.lpSum(d["cpu"] * v for d, v in xs) <= t["alloc_cpu"] * yv
        prob += pulp.lpSum((d["mem"] // MIB) * v for d, v in xs) <= (t["alloc_mem"] // MIB) * yv
        prob += pulp.lpSum(v for d, v in xs) <= t["pods"] * yv
        if (ti, j + 1) in y:
            prob += yv >= y[ti, j + 1]
    solver = pulp.COIN_CMD(msg=False, timeLimit=time_limit) if hasattr(pulp, "COIN_CMD") else None
    status = prob.solve(solver)
    val = pulp.value(prob.objective)
    # CBC stopped by the time limit still reports status Optimal through
    # PuLP; sol_status tells a proven optimum (1) from a feasible one (2)
    optimal = getattr(prob, "sol_status", status) == 1
    used = {}
    for (ti, j), v in y.items():
        if v.value() and v.value() > 0.5:
            used[types[ti]["name"]] = used.get(types[ti]["name"], 0) + 1
    return val, optimal, sorted("%dx%s" % (c, n) for n, c in used.items())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--berth", default="build/berth")
    ap.add_argument("--n", type=int, default=40)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--keep", default=None)
    ap.add_argument("--time-limit", type=int, default=60)
    ap.add_argument("--baseline", default=None, help="another berth binary to measure too")
    ap.add_argument("--only", type=int, default=-1, help="run instance ONLY of the sequence")
    a = ap.parse_args()
    rng = random.Random(a.seed)
    types = instance_types()
    gaps, base_gaps, bound_ok, proven = [], [], True, 0
    tmp = a.keep or tempfile.mkdtemp(prefix="berth-scaleup-")
    os.makedirs(tmp, exist_ok=True)
    for i in range(a.n):
        deps = random_instance(rng)
        if a.only >= 0 and i != a.only:
            continue
        path = os.path.join(tmp, "inst-%03d.yaml" % i)
        write_yaml(path, types, deps)
        cost, nodes, bound = berth_cost(a.berth, path)
        opt, optimal, opt_nodes = exact_cost(types, deps, cost, a.time_limit)
        if opt is None:
            opt = cost
        gap = cost / opt - 1 if opt > 0 else 0.0
        gaps.append(gap)
        proven += optimal
        base = ""
        if a.baseline:
            bcost = berth_cost(a.baseline, path)[0]
            base_gaps.append(bcost / opt - 1 if opt > 0 else 0.0)
            base = " baseline %.4f (%.2f %%)" % (bcost, 100 * base_gaps[-1])
        if bound is not None and bound > opt + 1e-6:
            bound_ok = False
        pods = sum(d["replicas"] for d in deps)
        print("%3d pods %4d berth %.4f opt %.4f%s gap %5.2f %% bound %s%s  berth: %s  opt: %s"
              % (i, pods, cost, opt, "" if optimal else "?", 100 * gap,
                 "-" if bound is None else "%.4f" % bound, base, " ".join(nodes),
                 " ".join(opt_nodes)))
        sys.stdout.flush()
    print("instances %d (optimum proven in %d; '?': CBC's best solution at the time limit)  "
          "average gap %.2f %%  worst %.2f %%  lower bound never above optimum: %s"
          % (len(gaps), proven, 100 * sum(gaps) / len(gaps), 100 * max(gaps),
             "yes" if bound_ok else "NO"))
    if base_gaps:
        print("baseline: average gap %.2f %%  worst %.2f %%"
              % (100 * sum(base_gaps) / len(base_gaps), 100 * max(base_gaps)))


if __name__ == "__main__":
    main()
