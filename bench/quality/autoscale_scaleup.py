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

Instance classes (--shape; "all": each in turn, --n instances each): mixed (the
above), small (4-8 Deployments of 4-16 replicas of 50m..500m), large (2-5 Deployments
of 1-4 replicas of 4..24 cpu), memory (6-16 GiB per cpu), vng (an instanceTypes list
of 4-10 types that still hosts every pod), tiers (on-demand offerings at list price,
spot at 25-45 % of it for about 60 % of the types and unavailable for the others, a
reserved instance of one type, count 1-3, and a headroom of 1-6 units). For tiers the
exact model follows SPEC 5's purchase order: a pod that an available spot offering
hosts goes to spot nodes, the others to on-demand nodes, the reservation's nodes (paid
already, price 0) take any pod (a relaxation: never above the rules' optimum), and
headroom units are integer variables per node within its free room. The mixed class
draws the same instances for a seed as earlier versions of this script.

Usage: bench/quality/autoscale_scaleup.py [--berth build/berth] [--n 40] [--seed 1]
       [--shape mixed|small|large|memory|vng|tiers|all] [--keep DIR] [--time-limit 60]
       [--cache FILE] [--baseline OTHER_BERTH]
--cache keeps CBC's optima by instance text, so another binary is measured on the same
instances without solving again. Prints one line per instance and, per class, the
average and worst gap (berth / optimum - 1), also over the instances whose optimum
CBC proved.
"""
import argparse
import hashlib
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


SHAPES = ["mixed", "small", "large", "memory", "vng", "tiers"]


def random_deps(rng, shape):
    """Deployments of one instance class (see the header)."""
    if shape == "small":
        ndep, cpus, gibs, reps = (4, 8), [50, 100, 200, 250, 500], [0.5, 1, 2, 4], (4, 16)
    elif shape == "large":
        ndep, cpus, gibs, reps = (2, 5), [4000, 6000, 8000, 12000, 16000, 24000], [1, 2, 4, 8], (1, 4)
    elif shape == "memory":
        ndep, cpus, gibs, reps = (5, 10), [100, 250, 500, 1000, 2000, 4000], [6, 8, 12, 16], (1, 8)
    else:
        ndep, cpus, gibs, reps = ((5, 10), [100, 250, 500, 750, 1000, 1500, 2000, 3000, 4000, 6000],
                                  [0.5, 1, 2, 3, 4, 6, 8], (1, 8))
    deps = []
    for d in range(rng.randint(*ndep)):
        cpu = rng.choice(cpus)
        gib_per_cpu = rng.choice(gibs)
        mem = int(cpu / 1000 * gib_per_cpu * 1024) * MIB
        mem = max(mem, 64 * MIB)
        deps.append({"name": "app%d" % d, "cpu": cpu, "mem": mem,
                     "replicas": rng.randint(*reps)})
    return deps


def fits(t, d):
    return d["cpu"] <= t["alloc_cpu"] and d["mem"] <= t["alloc_mem"]


def random_instance(rng, shape, all_types):
    """One instance: the group's rules, its types (with offerings) and the Deployments.
    Each type: the dict of instance_types() plus "spot" (price or None: no available spot
    offering) and "od" (price or None)."""
    inst = {"shape": shape, "allowed": None, "reservation": None, "headroom": None}
    types = [dict(t, spot=t["price"], od=None) for t in all_types]
    deps = random_deps(rng, "mixed" if shape in ("vng", "tiers") else shape)
    if shape == "vng":  # instanceTypes: a random subset that still hosts every pod
        while True:
            allowed = rng.sample([t["name"] for t in types], rng.randint(4, 10))
            if all(any(fits(t, d) for t in types if t["name"] in allowed) for d in deps):
                break
        inst["allowed"] = sorted(allowed)
    if shape == "tiers":
        # on-demand for every type at the list price; spot at 25-45 % of it for about
        # 60 % of the types (the others' spot offering unavailable); a reserved instance
        # of one type (count 1-3, already paid); headroom of 1-6 units
        for t in types:
            t["od"] = t["price"]
            t["spot"] = round(t["price"] * rng.uniform(0.25, 0.45), 4) if rng.random() < 0.6 else None
        r = rng.choice(types)
        inst["reservation"] = {"type": r["name"], "count": rng.randint(1, 3)}
        inst["headroom"] = {"cpu": rng.choice([250, 500, 1000]), "mem": rng.choice([256, 512, 1024]) * MIB,
                            "units": rng.randint(1, 6)}
    inst["types"] = types
    inst["deps"] = deps
    return inst


def write_yaml(path, inst):
    with open(path, "w") as f:
        f.write("apiVersion: berth.io/v1\nkind: VirtualNodeGroup\nmetadata: {name: general}\n"
                "spec:\n  zones: [z1]\n")
        if inst["allowed"]:
            f.write("  instanceTypes: [%s]\n" % ", ".join(inst["allowed"]))
        h = inst["headroom"]
        if h:
            f.write("  headroom: [{cpuPerUnit: %dm, memoryPerUnit: %dMi, numOfUnits: %d}]\n"
                    % (h["cpu"], h["mem"] // MIB, h["units"]))
        if inst["reservation"]:
            f.write("---\napiVersion: berth.io/v1\nkind: Reservation\nmetadata: {name: ri}\n"
                    "spec: {instanceType: %s, zone: z1, count: %d}\n"
                    % (inst["reservation"]["type"], inst["reservation"]["count"]))
        for t in inst["types"]:
            offs = []
            if t["spot"] is not None:
                offs.append("{zone: z1, capacityType: spot, price: %s}" % t["spot"])
            elif t["od"] is not None:
                offs.append("{zone: z1, capacityType: spot, price: %s, available: false}"
                            % round(t["od"] * 0.3, 4))
            if t["od"] is not None:
                offs.append("{zone: z1, capacityType: on-demand, price: %s}" % t["od"])
            f.write("---\napiVersion: berth.io/v1\nkind: InstanceType\nmetadata: {name: %s}\n"
                    "spec:\n  provider: azure\n  capacity: {cpu: \"%d\", memory: %dMi, pods: %d}\n"
                    "  kubeReserved: {cpu: %dm, memory: %dMi}\n"
                    "  evictionThreshold: {memory: %dMi}\n"
                    "  offerings: [%s]\n"
                    % (t["name"], t["cpu"] // 1000, t["memory"] // MIB, t["pods"], t["kr_cpu"],
                       t["kr_mem"] // MIB, t["evict"] // MIB, ", ".join(offs)))
        for d in inst["deps"]:
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
    nodes = sorted("%dx%s%s" % (u["count"], u["instanceType"],
                                {"spot": "", "on-demand": "/od", "reserved": "/ri"}[u["capacityType"]])
                   for u in plan["scaleUp"])
    bound = plan.get("lowerBound", {}).get("costPerHour")
    return cost, nodes, bound


def node_kinds(inst):
    """The exact model's node kinds: (type, capacity type, price, at most, which pods):
    SPEC 5's tiers as berth's purchase order has them (a pod some available spot offering
    hosts goes to spot, the others on-demand; the reservation's nodes, already paid, may
    take any pod: a relaxation, so the optimum is never above the rules' optimum)."""
    types = [t for t in inst["types"] if not inst["allowed"] or t["name"] in inst["allowed"]]
    spot_ok = [any(t["spot"] is not None and fits(t, d) for t in types) for d in inst["deps"]]
    kinds = []
    for t in types:
        if t["spot"] is not None:
            kinds.append((t, "", t["spot"], None, [i for i, ok in enumerate(spot_ok) if ok]))
        if t["od"] is not None:
            kinds.append((t, "/od", t["od"], None, [i for i, ok in enumerate(spot_ok) if not ok]))
        r = inst["reservation"]
        if r and r["type"] == t["name"]:
            kinds.append((t, "/ri", 0.0, r["count"], list(range(len(inst["deps"])))))
    return kinds


def exact_cost(inst, upper, time_limit):
    deps = inst["deps"]
    h = inst["headroom"]
    prob = pulp.LpProblem("scaleup", pulp.LpMinimize)
    y, x, hu = {}, {}, {}
    kinds = node_kinds(inst)
    for ki, (t, suffix, price, most, allowed) in enumerate(kinds):
        fit = [di for di in allowed if fits(t, deps[di])]
        if not fit and not h:
            continue
        jmax = int(math.floor(upper / price + 1e-9)) if price > 0 else 10 ** 6
        need = sum(deps[di]["replicas"] for di in fit) + (h["units"] if h else 0)
        jmax = min(jmax, need, most if most is not None else need)
        for j in range(jmax):
            y[ki, j] = pulp.LpVariable("y_%d_%d" % (ki, j), cat="Binary")
            for di in fit:
                d = deps[di]
                cap = min(d["replicas"], t["alloc_cpu"] // d["cpu"], t["alloc_mem"] // d["mem"],
                          t["pods"])
                x[di, ki, j] = pulp.LpVariable("x_%d_%d_%d" % (di, ki, j), 0, cap, cat="Integer")
                prob += x[di, ki, j] <= cap * y[ki, j]
            if h:  # headroom units this node holds (its free room over the unit)
                hu[ki, j] = pulp.LpVariable("h_%d_%d" % (ki, j), 0, h["units"], cat="Integer")
                prob += hu[ki, j] <= h["units"] * y[ki, j]
    prob.setObjective(pulp.lpSum(kinds[ki][2] * v for (ki, j), v in y.items()))
    for di, d in enumerate(deps):
        prob += pulp.lpSum(v for (dd, ki, j), v in x.items() if dd == di) == d["replicas"]
    if h:
        prob += pulp.lpSum(hu.values()) >= h["units"]
    for (ki, j), yv in y.items():
        t = kinds[ki][0]
        xs = [(deps[di], v) for (di, kk, jj), v in x.items() if kk == ki and jj == j]
        hv = hu.get((ki, j))
        prob += (pulp.lpSum(d["cpu"] * v for d, v in xs) + (h["cpu"] * hv if hv is not None else 0)
                 <= t["alloc_cpu"] * yv)
        prob += (pulp.lpSum((d["mem"] // MIB) * v for d, v in xs) +
                 ((h["mem"] // MIB) * hv if hv is not None else 0) <= (t["alloc_mem"] // MIB) * yv)
        prob += pulp.lpSum(v for d, v in xs) <= t["pods"] * yv
        if (ki, j + 1) in y:
            prob += yv >= y[ki, j + 1]
    solver = pulp.COIN_CMD(msg=False, timeLimit=time_limit) if hasattr(pulp, "COIN_CMD") else None
    status = prob.solve(solver)
    val = pulp.value(prob.objective) or 0.0
    # CBC stopped by the time limit still reports status Optimal through
    # PuLP; sol_status tells a proven optimum (1) from a feasible one (2)
    optimal = getattr(prob, "sol_status", status) == 1
    used = {}
    for (ki, j), v in y.items():
        if v.value() and v.value() > 0.5:
            name = kinds[ki][0]["name"] + kinds[ki][1]
            used[name] = used.get(name, 0) + 1
    return val, optimal, sorted("%dx%s" % (c, n) for n, c in used.items())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--berth", default="build/berth")
    ap.add_argument("--n", type=int, default=40)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--shape", default="mixed", choices=SHAPES + ["all"],
                    help="instance class; all: the classes in turn, --n each")
    ap.add_argument("--keep", default=None)
    ap.add_argument("--cache", default=None,
                    help="JSON file of optima by instance text (read and extended)")
    ap.add_argument("--time-limit", type=int, default=60)
    ap.add_argument("--baseline", default=None, help="another berth binary to measure too")
    ap.add_argument("--only", type=int, default=-1, help="run instance ONLY of the sequence")
    a = ap.parse_args()
    all_types = instance_types()
    cache = {}
    if a.cache and os.path.exists(a.cache):
        with open(a.cache) as f:
            cache = json.load(f)
    tmp = a.keep or tempfile.mkdtemp(prefix="berth-scaleup-")
    os.makedirs(tmp, exist_ok=True)
    shapes = SHAPES if a.shape == "all" else [a.shape]
    summary = []
    for shape in shapes:
        # the mixed class keeps the sequence of earlier versions of this script
        rng = random.Random(a.seed if shape == "mixed" else "%d/%s" % (a.seed, shape))
        gaps, base_gaps, bound_ok, proven, pgaps = [], [], True, 0, []
        for i in range(a.n):
            inst = random_instance(rng, shape, all_types)
            if a.only >= 0 and i != a.only:
                continue
            path = os.path.join(tmp, "%s-%03d.yaml" % (shape, i))
            write_yaml(path, inst)
            with open(path) as f:
                key = hashlib.sha256(f.read().encode()).hexdigest()
            cost, nodes, bound = berth_cost(a.berth, path)
            if key in cache:
                opt, optimal, opt_nodes = cache[key]
            else:
                opt, optimal, opt_nodes = exact_cost(inst, cost, a.time_limit)
                if a.cache:
                    cache[key] = [opt, optimal, opt_nodes]
                    with open(a.cache, "w") as f:
                        json.dump(cache, f)
            if opt is None:
                opt = cost
            gap = cost / opt - 1 if opt > 0 else 0.0
            gaps.append(gap)
            proven += optimal
            if optimal:
                pgaps.append(gap)
            base = ""
            if a.baseline:
                bcost = berth_cost(a.baseline, path)[0]
                base_gaps.append(bcost / opt - 1 if opt > 0 else 0.0)
                base = " baseline %.4f (%.2f %%)" % (bcost, 100 * base_gaps[-1])
            if bound is not None and bound > opt + 1e-6:
                bound_ok = False
            pods = sum(d["replicas"] for d in inst["deps"])
            print("%-6s %3d pods %4d berth %.4f opt %.4f%s gap %5.2f %% bound %s%s  berth: %s  opt: %s"
                  % (shape, i, pods, cost, opt, "" if optimal else "?", 100 * gap,
                     "-" if bound is None else "%.4f" % bound, base, " ".join(nodes),
                     " ".join(opt_nodes)))
            sys.stdout.flush()
        if not gaps:
            continue
        line = ("%-6s instances %d (optimum proven in %d; '?': CBC's best solution at the time "
                "limit)  average gap %.2f %%  worst %.2f %%  lower bound never above optimum: %s"
                % (shape, len(gaps), proven, 100 * sum(gaps) / len(gaps), 100 * max(gaps),
                   "yes" if bound_ok else "NO"))
        if pgaps:
            line += ("\n%-6s where the optimum is proven: average gap %.2f %%  worst %.2f %%"
                     % (shape, 100 * sum(pgaps) / len(pgaps), 100 * max(pgaps)))
        if base_gaps:
            line += ("\n%-6s baseline: average gap %.2f %%  worst %.2f %%"
                     % (shape, 100 * sum(base_gaps) / len(base_gaps), 100 * max(base_gaps)))
        print(line)
        summary.append(line)
    if len(summary) > 1:
        print("\n".join(summary))


if __name__ == "__main__":
    main()
