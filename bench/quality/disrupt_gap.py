#!/usr/bin/python3
# bench/quality/disrupt_gap.py - how far `berth disrupt plan` (and with
# --optimize) is above the optimum consolidation, measured with an exact
# MILP (PuLP + CBC, Debian packages coinor-cbc and python3-pulp). Not part
# of `make check` or CI: a measurement for docs/disrupt.md ("Quality").
#
#   /usr/bin/python3 bench/quality/disrupt_gap.py [--berth build/berth] [--instances 24]
#        [--seed 1] [--budget 100|low|both] [--time-limit 60] [--keep DIR] [-v]
#
# Each instance: Azure-like D/E/F (s_v5 / s_v2) instance types, one zone,
# on-demand, no node overhead (provider none, Node allocatable = capacity),
# 20-200 NodeClaim nodes of one NodePool that may launch any of them, 5-10
# Deployments (cpu-heavy, memory-heavy or balanced pod sizes) whose pods
# fill each node to 25-85 %, a PDB with maxUnavailable 0 on one small
# Deployment (its nodes cannot go), a PDB with maxUnavailable 1 on another
# (does not block: berth and Karpenter do not sum PDB allowances across a
# command's nodes), about 2 % of the pods with karpenter.sh/do-not-disrupt,
# and a budget of 100 % or 10-20 % of the nodes.
#
# The exact model (the issue's): choose the nodes to delete among the
# deletable ones (no do-not-disrupt pod, no pod under the blocking PDB), at
# most the budget's count; the pods of deleted nodes move to kept nodes
# (within their free cpu, memory and pod slots) or to new nodes of any
# instance type; pods on kept nodes stay. Minimise the price per hour of the
# nodes left plus the new ones. Pods of one Deployment are identical, so
# moves are counted per Deployment and receiving node; new nodes are slots
# with one type each (symmetry broken by price). Karpenter's replacement
# rules (one new node per command, strictly cheaper) are NOT in the model:
# it is the optimum of any plan, so the gap includes what those rules cost.
#
# Prints per instance: nodes, budget, the cost before, the optimum (and
# whether CBC proved it within the time limit), berth's plain and
# --optimize costs after and their gaps; then average and worst gaps per
# budget class.
import argparse
import json
import math
import os
import random
import subprocess
import sys
import tempfile

import pulp

AT = "2024-05-01T12:00:00Z"
ZONE = "eastus-1"

# name, cpu, memory GiB, price per hour (Azure pay-as-you-go, East US, Linux)
TYPES = [
    ("Standard_D2s_v5", 2, 8, 0.096), ("Standard_D4s_v5", 4, 16, 0.192),
    ("Standard_D8s_v5", 8, 32, 0.384), ("Standard_D16s_v5", 16, 64, 0.768),
    ("Standard_E2s_v5", 2, 16, 0.126), ("Standard_E4s_v5", 4, 32, 0.252),
    ("Standard_E8s_v5", 8, 64, 0.504), ("Standard_E16s_v5", 16, 128, 1.008),
    ("Standard_F2s_v2", 2, 4, 0.0846), ("Standard_F4s_v2", 4, 8, 0.169),
    ("Standard_F8s_v2", 8, 16, 0.338), ("Standard_F16s_v2", 16, 32, 0.677),
]
MAX_PODS = 110
GI = 1024  # memory in MiB


def gen_instance(rng, nnodes, budget_pct):
    """Returns the instance as plain data (nodes, deployments, pods)."""
    ndep = rng.randint(5, 10)
    deps = []
    for d in range(ndep):
        kind = rng.choice(["cpu", "mem", "bal"])
        if kind == "cpu":
            cpu, mem = rng.choice([500, 750, 1000, 1500, 2000]), rng.choice([256, 512, 1024])
        elif kind == "mem":
            cpu, mem = rng.choice([100, 250, 500]), rng.choice([2048, 3072, 4096, 6144])
        else:
            cpu, mem = rng.choice([250, 500, 1000]), rng.choice([1024, 2048, 4096])
        deps.append({"name": "app%d" % d, "cpu": cpu, "mem": mem})
    # the node mix leans on one or two families, sizes mostly small
    fams = rng.sample(["D", "E", "F"], rng.randint(1, 3))
    weights = [3, 3, 2, 1]
    nodes, pods = [], []
    for i in range(nnodes):
        fam = rng.choice(fams)
        size = rng.choices([0, 1, 2, 3], weights)[0]
        t = [x for x in TYPES if x[0].startswith("Standard_" + fam)][size]
        nodes.append({"name": "node-%03d" % i, "type": t[0], "cpu": t[1] * 1000,
                      "mem": t[2] * GI, "price": t[3]})
    for i, n in enumerate(nodes):
        target = rng.uniform(0.25, 0.85)
        ucpu = umem = 0
        tries = 0
        placed = 0
        while tries < 40:
            tries += 1
            d = rng.randrange(ndep)
            dp = deps[d]
            if ucpu + dp["cpu"] > n["cpu"] * target or umem + dp["mem"] > n["mem"] * target:
                if placed == 0 and ucpu + dp["cpu"] <= n["cpu"] and umem + dp["mem"] <= n["mem"]:
                    pass  # every node gets at least one pod
                else:
                    continue
            ucpu += dp["cpu"]
            umem += dp["mem"]
            placed += 1
            pods.append({"name": "%s-%d" % (dp["name"], len(pods)), "dep": d, "node": i,
                         "dnd": False})
        if not placed:  # no empty nodes: emptiness has its own budget allowance
            d = min(range(ndep), key=lambda e: deps[e]["cpu"] + deps[e]["mem"] / 4)
            pods.append({"name": "%s-%d" % (deps[d]["name"], len(pods)), "dep": d, "node": i,
                         "dnd": False})
    # do-not-disrupt on ~2 % of the pods
    for p in pods:
        if rng.random() < 0.02:
            p["dnd"] = True
    # PDBs: maxUnavailable 0 on the smallest Deployment, 1 on another
    counts = [sum(1 for p in pods if p["dep"] == d) for d in range(ndep)]
    order = sorted(range(ndep), key=lambda d: counts[d])
    pdb0 = order[0] if counts[order[0]] <= max(3, nnodes // 25) else None
    pdb1 = order[-1]
    return {"nodes": nodes, "deps": deps, "pods": pods, "pdb0": pdb0, "pdb1": pdb1,
            "budget": budget_pct}


def write_input(inst, path):
    docs = []
    budget = "%d%%" % inst["budget"]
    docs.append({"apiVersion": "karpenter.sh/v1", "kind": "NodePool",
                 "metadata": {"name": "default"},
                 "spec": {"template": {"spec": {
                     "nodeClassRef": {"group": "karpenter.azure.com", "kind": "AKSNodeClass",
                                      "name": "default"},
                     "requirements": [{"key": "karpenter.sh/capacity-type", "operator": "In",
                                       "values": ["on-demand"]}]}},
                     "disruption": {"consolidationPolicy": "WhenEmptyOrUnderutilized",
                                    "consolidateAfter": "0s",
                                    "budgets": [{"nodes": budget}]}}})
    for t in TYPES:
        docs.append({"apiVersion": "berth.io/v1", "kind": "InstanceType",
                     "metadata": {"name": t[0]},
                     "spec": {"provider": "none",
                              "capacity": {"cpu": str(t[1]), "memory": "%dGi" % t[2],
                                           "pods": MAX_PODS},
                              "offerings": [{"zone": ZONE, "capacityType": "on-demand",
                                             "price": t[3]}]}})
    for n in inst["nodes"]:
        labels = {"karpenter.sh/nodepool": "default", "node.kubernetes.io/instance-type": n["type"],
                  "karpenter.sh/capacity-type": "on-demand", "topology.kubernetes.io/zone": ZONE}
        docs.append({"apiVersion": "karpenter.sh/v1", "kind": "NodeClaim",
                     "metadata": {"name": n["name"], "labels": labels,
                                  "creationTimestamp": "2024-04-30T00:00:00Z"},
                     "status": {"nodeName": n["name"], "conditions": [
                         {"type": "Initialized", "status": "True",
                          "lastTransitionTime": "2024-04-30T00:05:00Z"}]}})
        nl = dict(labels)
        nl["karpenter.sh/initialized"] = "true"
        nl["kubernetes.io/hostname"] = n["name"]
        docs.append({"apiVersion": "v1", "kind": "Node",
                     "metadata": {"name": n["name"], "labels": nl},
                     "status": {"allocatable": {"cpu": "%dm" % n["cpu"], "memory": "%dMi" % n["mem"],
                                                "pods": str(MAX_PODS)},
                                "conditions": [{"type": "Ready", "status": "True"}]}})
    for p in inst["pods"]:
        dp = inst["deps"][p["dep"]]
        meta = {"name": p["name"], "namespace": "default", "labels": {"app": dp["name"]},
                "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                                     "name": dp["name"] + "-rs", "uid": "u-" + dp["name"],
                                     "controller": True}]}
        if p["dnd"]:
            meta["annotations"] = {"karpenter.sh/do-not-disrupt": "true"}
        docs.append({"apiVersion": "v1", "kind": "Pod", "metadata": meta,
                     "spec": {"nodeName": inst["nodes"][p["node"]]["name"],
                              "containers": [{"name": "c", "image": "app",
                                              "resources": {"requests": {
                                                  "cpu": "%dm" % dp["cpu"],
                                                  "memory": "%dMi" % dp["mem"]}}}]},
                     "status": {"phase": "Running", "startTime": "2024-05-01T11:00:00Z",
                                "conditions": [{"type": "Ready", "status": "True"}]}})
    for d, mu in ((inst["pdb0"], 0), (inst["pdb1"], 1)):
        if d is None:
            continue
        name = inst["deps"][d]["name"]
        docs.append({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
                     "metadata": {"name": name, "namespace": "default"},
                     "spec": {"maxUnavailable": mu, "selector": {"matchLabels": {"app": name}}}})
    with open(path, "w") as f:
        for doc in docs:
            f.write("---\n")
            f.write(json.dumps(doc))
            f.write("\n")


def solve_exact(inst, time_limit):
    nodes, deps, pods = inst["nodes"], inst["deps"], inst["pods"]
    N, G = len(nodes), len(deps)
    cnt = [[0] * G for _ in range(N)]
    used = [[0, 0, 0] for _ in range(N)]
    deletable = [True] * N
    for p in pods:
        i, d = p["node"], p["dep"]
        cnt[i][d] += 1
        used[i][0] += deps[d]["cpu"]
        used[i][1] += deps[d]["mem"]
        used[i][2] += 1
        if p["dnd"] or d == inst["pdb0"]:
            deletable[i] = False
    allowed = math.ceil(inst["budget"] * N / 100)
    prob = pulp.LpProblem("consolidate", pulp.LpMinimize)
    dl = {i: pulp.LpVariable("d%d" % i, cat="Binary") for i in range(N) if deletable[i]}
    # receiving existing nodes: every node (a deleted one receives nothing)
    x = {}
    for j in range(N):
        for g in range(G):
            x[g, j] = pulp.LpVariable("x%d_%d" % (g, j), lowBound=0, cat="Integer")
    # new node slots: enough for every movable pod on the smallest-ratio type
    mov = [0, 0, 0]
    for i in dl:
        for r in range(3):
            mov[r] += used[i][r]
    big = max(TYPES, key=lambda t: t[1])
    K = max(1, min(allowed, len(dl), int(math.ceil(max(mov[0] / (big[1] * 1000),
                                                            mov[1] / (max(t[2] for t in TYPES) * GI)))) + 3))
    z = {(k, t): pulp.LpVariable("z%d_%d" % (k, t), cat="Binary")
         for k in range(K) for t in range(len(TYPES))}
    y = {(g, k): pulp.LpVariable("y%d_%d" % (g, k), lowBound=0, cat="Integer")
         for g in range(G) for k in range(K)}
    total = sum(n["price"] for n in nodes)
    prob += (total - pulp.lpSum(nodes[i]["price"] * dl[i] for i in dl)
             + pulp.lpSum(TYPES[t][3] * z[k, t] for k in range(K) for t in range(len(TYPES))))
    prob += pulp.lpSum(dl.values()) <= allowed
    for g in range(G):
        moving = pulp.lpSum(cnt[i][g] * dl[i] for i in dl if cnt[i][g])
        prob += (pulp.lpSum(x[g, j] for j in range(N)) + pulp.lpSum(y[g, k] for k in range(K))
                 == moving)
    for j in range(N):
        n = nodes[j]
        free = [n["cpu"] - used[j][0], n["mem"] - used[j][1], MAX_PODS - used[j][2]]
        keep = (1 - dl[j]) if j in dl else 1
        req = [lambda g: deps[g]["cpu"], lambda g: deps[g]["mem"], lambda g: 1]
        for r in range(3):
            prob += pulp.lpSum(req[r](g) * x[g, j] for g in range(G)) <= max(0, free[r]) * keep
    for k in range(K):
        prob += pulp.lpSum(z[k, t] for t in range(len(TYPES))) <= 1
        prob += (pulp.lpSum(deps[g]["cpu"] * y[g, k] for g in range(G))
                 <= pulp.lpSum(TYPES[t][1] * 1000 * z[k, t] for t in range(len(TYPES))))
        prob += (pulp.lpSum(deps[g]["mem"] * y[g, k] for g in range(G))
                 <= pulp.lpSum(TYPES[t][2] * GI * z[k, t] for t in range(len(TYPES))))
        prob += (pulp.lpSum(y[g, k] for g in range(G))
                 <= MAX_PODS * pulp.lpSum(z[k, t] for t in range(len(TYPES))))
        if k + 1 < K:
            prob += (pulp.lpSum(TYPES[t][3] * z[k, t] for t in range(len(TYPES)))
                     >= pulp.lpSum(TYPES[t][3] * z[k + 1, t] for t in range(len(TYPES))))
    solver = pulp.COIN_CMD(path="/usr/bin/cbc", msg=0, timeLimit=time_limit)
    prob.solve(solver)
    status = pulp.LpStatus[prob.status]
    val = pulp.value(prob.objective)
    # a solution stopped by the time limit is feasible but maybe not optimal
    proven = status == "Optimal" and prob.sol_status == pulp.LpSolutionOptimal
    return val, proven, total


def run_berth(berth, path, optimize):
    cmd = [berth, "disrupt", "plan", path, "--at", AT, "-o", "json"]
    if optimize:
        cmd.append("--optimize")
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit("berth failed (%d): %s\n%s" % (out.returncode, " ".join(cmd), out.stderr))
    return json.loads(out.stdout)


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--berth", default=os.path.join(os.path.dirname(__file__), "..", "..",
                                                    "build", "berth"))
    ap.add_argument("--instances", type=int, default=24, help="per budget class")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--budget", choices=["100", "low", "both"], default="both")
    ap.add_argument("--time-limit", type=int, default=60, help="CBC seconds per instance")
    ap.add_argument("--min-nodes", type=int, default=20)
    ap.add_argument("--max-nodes", type=int, default=200)
    ap.add_argument("--keep", help="write the instances (and the optimum found, reused by "
                    "later runs with the same seed and time limit) into this directory")
    ap.add_argument("-v", action="store_true")
    a = ap.parse_args()
    rng = random.Random(a.seed)
    classes = {"100": ["100"], "low": ["low"], "both": ["100", "low"]}[a.budget]
    tmp = a.keep or tempfile.mkdtemp(prefix="berth-gap-")
    os.makedirs(tmp, exist_ok=True)
    print("%-4s %5s %6s %9s %9s %6s %9s %7s %9s %7s %9s" % (
        "#", "nodes", "budget", "before", "optimum", "proven", "plain", "gap", "optimize", "gap",
        "bound"))
    res = {c: [] for c in classes}
    for c in classes:
        for it in range(a.instances):
            nn = rng.randint(a.min_nodes, a.max_nodes)
            pct = 100 if c == "100" else rng.randint(10, 20)
            inst = gen_instance(rng, nn, pct)
            path = os.path.join(tmp, "gap-%s-%02d.yaml" % (c, it))
            write_input(inst, path)
            cache = path + ".optimum.json"  # with --keep: solved once per instance
            if a.keep and os.path.exists(cache):
                with open(cache) as f:
                    opt, proven, before = json.load(f)
            else:
                opt, proven, before = solve_exact(inst, a.time_limit)
                if a.keep:
                    with open(cache, "w") as f:
                        json.dump([opt, proven, before], f)
            plain = run_berth(a.berth, path, False)
            better = run_berth(a.berth, path, True)
            gp = (plain["costAfter"] - opt) / opt * 100
            go = (better["costAfter"] - opt) / opt * 100
            lbk = "costPerHourWithinBudgets"
            res[c].append((gp, go, proven, better["costAfter"] <= plain["costAfter"] + 1e-9,
                           better["costAfter"] - better["lowerBound"][lbk]))
            print("%-4s %5d %5d%% %9.4f %9.4f %6s %9.4f %6.2f%% %9.4f %6.2f%% %9.4f" % (
                "%s%d" % (c[0], it), nn, pct, before, opt, "yes" if proven else "no",
                plain["costAfter"], gp, better["costAfter"], go, better["lowerBound"][lbk]))
            sys.stdout.flush()
            if go < -1e-6 and proven:
                print("   ! --optimize below the proven optimum: the model and berth disagree")
    for c in classes:
        r = res[c]
        if not r:
            continue
        name = "budget 100%" if c == "100" else "budget 10-20%"
        print("%s: %d instances (%d proven optimal); plain avg %.2f%% worst %.2f%%; "
              "--optimize avg %.2f%% worst %.2f%%; --optimize never worse than plain: %s" % (
                  name, len(r), sum(1 for x in r if x[2]),
                  sum(x[0] for x in r) / len(r), max(x[0] for x in r),
                  sum(x[1] for x in r) / len(r), max(x[1] for x in r),
                  "yes" if all(x[3] for x in r) else "NO"))
    if not a.keep:
        for f in os.listdir(tmp):
            os.unlink(os.path.join(tmp, f))
        os.rmdir(tmp)


if __name__ == "__main__":
    main()
