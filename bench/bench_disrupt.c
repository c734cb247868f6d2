/* bench/bench_disrupt.c - disruption planning at scale (SPEC 4.1): an
 * in-memory estate of 10,000 Karpenter nodes (three NodePools, 20 instance
 * types with on-demand and spot offerings in 3 zones, NodeClaims carrying
 * the template hash, realistic labels) and 200,000 bound pods (ReplicaSet
 * pods with mixed requests sized so that nodes are 30-70 % requested, two
 * DaemonSet pods per node, a few PDBs, some do-not-disrupt pods), NodePool
 * requirements on the labels derived from the instance types' names
 * (karpenter.azure.com/sku-family In, sku-version Gt, sku-cpu Lt: every
 * replacement option is checked against them) and five DaemonSets, three
 * with a nodeSelector (their requests come off every replacement), built
 * from a fixed seed. Times one plan (median of 3, CPU seconds of the
 * single-threaded plan, and of the same plan with --threads 2 beside it;
 * building the estate is not timed) and prints the
 * nodes left after its actions, the lower bounds, and the same for
 * --optimize. Then wall-clock medians with 1 and 2 threads (interleaved
 * runs: BENCH disrupt.plan_seconds.10k.threads1 and .threads2_wall), and
 * the same on the walk estate (pin: most candidates' pods pinned, so that
 * single-node consolidation answers many questions before the first that
 * acts; BENCH disrupt.walk_plan_seconds.10k.threads1 / .threads2_wall).
 * BENCH_DISRUPT_NODES / BENCH_DISRUPT_PODS scale the estate down,
 * BENCH_DISRUPT_PLAIN=1 skips --optimize (profiling aids) and
 * BENCH_DISRUPT_PIN=N leaves one node in N unpinned (default 40);
 * BENCH_DISRUPT_WALK_ONLY=T plans the walk estate once with T threads and
 * stops (for valgrind --tool=callgrind). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "berth/disrupt.h"
#include "berth/random.h"

#define GiB (1024LL * 1024 * 1024)
#define MiB (1024LL * 1024)
#define NOW 1714564800 /* 2024-05-01T12:00:00Z */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* The plan is single-threaded: its CPU time is its time on one core, also
 * on a machine shared with other work (the wall time goes to stderr). */
static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static const char *fmt(berth_arena *a, const char *f, unsigned v)
{
    char buf[64];
    snprintf(buf, sizeof buf, f, v);
    return berth_arena_strdup(a, buf);
}

static void *zalloc(berth_arena *a, size_t n)
{
    void *p = berth_arena_alloc(a, n ? n : 1);
    if (!p) {
        fprintf(stderr, "bench_disrupt: out of memory\n");
        exit(1);
    }
    memset(p, 0, n ? n : 1);
    return p;
}

/* 4 families x 5 sizes; GiB per cpu and on-demand price per cpu-hour */
static const struct {
    const char *family;
    int64_t gib_per_cpu;
    double price_per_cpu;
} families[4] = {{"D", 4, 0.048}, {"E", 8, 0.063}, {"F", 2, 0.0425}, {"B", 4, 0.0415}};
static const int sizes[5] = {2, 4, 8, 16, 32};
static const char *zones[3] = {"eastus-1", "eastus-2", "eastus-3"};

typedef struct pooldef {
    const char *name, *ct;          /* capacity type of its nodes */
    int fam[2];                     /* families it launches */
    double share;                   /* of the nodes */
    int64_t pod_mem_per_cpu;        /* MiB of memory per cpu its pods request */
    int tainted;                    /* spot pool: taint spot=true:NoSchedule */
} pooldef;

static const pooldef pools[3] = {
    {"general", "on-demand", {0, 2}, 0.60, 1536, 0},
    {"memory", "on-demand", {1, 1}, 0.25, 6144, 0},
    {"spot", "spot", {0, 3}, 0.15, 2048, 1},
};

static void build(berth_disrupt *m, uint32_t nnodes, uint32_t npods, uint64_t seed)
{
    berth_arena *a = &m->kube.arena;
    berth_kcluster *k = &m->kube;
    berth_rng rng;
    berth_rng_seed(&rng, seed);
    k->nres = 3;
    k->res_names[0] = "cpu";
    k->res_names[1] = "memory";
    k->res_names[2] = "ephemeral-storage";
    /* instance types */
    m->ntypes = m->captypes = 20;
    m->types = calloc(20, sizeof *m->types);
    for (int f = 0; f < 4; f++)
        for (int z = 0; z < 5; z++) {
            berth_instance_type *t = &m->types[f * 5 + z];
            char name[32];
            snprintf(name, sizeof name, "Standard_%s%ds_v5", families[f].family, sizes[z]);
            t->name = berth_arena_strdup(a, name);
            t->family = families[f].family;
            t->cpu = sizes[z] * 1000LL;
            t->memory = sizes[z] * families[f].gib_per_cpu * GiB;
            t->pods = 110;
            t->capacity_cpu = t->cpu;
            t->capacity_memory = t->memory;
            t->capacity_pods = t->pods;
            t->max_pods = -1;
            if (berth_instance_type_derive_labels(a, t)) {
                fprintf(stderr, "bench_disrupt: out of memory\n");
                exit(1);
            }
            t->offerings = zalloc(a, 6 * sizeof *t->offerings);
            t->nofferings = 6;
            for (int zi = 0; zi < 3; zi++) {
                double od = sizes[z] * families[f].price_per_cpu;
                t->offerings[2 * zi] = (berth_offering){zones[zi], BERTH_CT_ON_DEMAND, od, 1, 0};
                t->offerings[2 * zi + 1] = (berth_offering){
                    zones[zi], BERTH_CT_SPOT, od * (0.18 + 0.02 * zi + 0.01 * (z % 2)), 1, 0.05};
            }
        }
    /* NodePools */
    m->npools = m->cappools = 3;
    m->pools = calloc(3, sizeof *m->pools);
    for (int p = 0; p < 3; p++) {
        berth_nodepool *np = &m->pools[p];
        np->name = pools[p].name;
        berth_label *l = zalloc(a, sizeof *l);
        l[0] = (berth_label){"workload-class", pools[p].name};
        np->labels = (berth_labels){l, 1};
        if (pools[p].tainted) {
            np->taints = zalloc(a, sizeof *np->taints);
            np->taints[0] = (berth_taint){"spot", "true", BERTH_EFFECT_NOSCHEDULE};
            np->ntaints = 1;
        }
        np->reqs = zalloc(a, 4 * sizeof *np->reqs);
        const char **ct = zalloc(a, sizeof *ct);
        ct[0] = pools[p].ct;
        np->reqs[0] = (berth_requirement){"karpenter.sh/capacity-type", BERTH_SEL_IN, ct, 1};
        const char **it = zalloc(a, 10 * sizeof *it);
        uint32_t nit = 0;
        for (int f = 0; f < 2; f++) {
            if (f && pools[p].fam[1] == pools[p].fam[0])
                break;
            for (int z = 0; z < 5; z++)
                it[nit++] = m->types[pools[p].fam[f] * 5 + z].name;
        }
        np->reqs[1] = (berth_requirement){"node.kubernetes.io/instance-type", BERTH_SEL_IN, it, nit};
        /* requirements on derived labels: the families, the generation, the size */
        const char **fam = zalloc(a, 2 * sizeof *fam);
        uint32_t nfam = 0;
        for (int f = 0; f < 2; f++)
            if (!f || pools[p].fam[1] != pools[p].fam[0])
                fam[nfam++] = families[pools[p].fam[f]].family;
        np->reqs[2] = (berth_requirement){"karpenter.azure.com/sku-family", BERTH_SEL_IN, fam, nfam};
        const char **gen = zalloc(a, sizeof *gen);
        gen[0] = p == 2 ? "64" : "4";
        np->reqs[3] = p == 2 ? (berth_requirement){"karpenter.azure.com/sku-cpu", BERTH_SEL_LT, gen, 1}
                             : (berth_requirement){"karpenter.azure.com/sku-version", BERTH_SEL_GT, gen, 1};
        np->nreqs = 4;
        np->class_group = "karpenter.azure.com";
        np->class_kind = "AKSNodeClass";
        np->class_name = "default";
        np->expire_after = 720 * 3600;
        np->termination_grace = -1;
        np->policy = BERTH_CP_WHEN_EMPTY_OR_UNDERUTILIZED;
        np->consolidate_after = 30;
        np->budgets = zalloc(a, sizeof *np->budgets);
        np->budgets[0] = (berth_dbudget){"20%", 0, NULL, 0};
        np->nbudgets = 1;
        berth_nodepool_hash(np, np->hash);
    }
    /* nodes and claims: instance size 4/8/16/32 cpu (20/35/30/15 %) */
    k->nodes = calloc(nnodes, sizeof *k->nodes);
    k->nnodes = k->capnodes = nnodes;
    m->claims = calloc(nnodes, sizeof *m->claims);
    m->nclaims = m->capclaims = nnodes;
    m->node_info = calloc(nnodes, sizeof *m->node_info);
    m->nnode_info = m->capnode_info = nnodes;
    uint32_t *pool_of = calloc(nnodes, sizeof *pool_of);
    double *util = calloc(nnodes, sizeof *util);
    int64_t sum_cpu = 0;
    for (uint32_t n = 0; n < nnodes; n++) {
        double r = (double)(n % 100) / 100.0;
        uint32_t p = r < pools[0].share ? 0 : r < pools[0].share + pools[1].share ? 1 : 2;
        pool_of[n] = p;
        uint64_t sz = berth_rng_below(&rng, 100);
        int z = sz < 20 ? 1 : sz < 55 ? 2 : sz < 85 ? 3 : 4;
        int f = pools[p].fam[berth_rng_below(&rng, 2)];
        const berth_instance_type *t = &m->types[f * 5 + z];
        const char *zone = zones[berth_rng_below(&rng, 3)];
        berth_knode *nd = &k->nodes[n];
        nd->name = fmt(a, "aks-node-%05u", n);
        berth_label *l = zalloc(a, (9 + t->labels.n) * sizeof *l);
        l[0] = (berth_label){"karpenter.sh/nodepool", pools[p].name};
        l[1] = (berth_label){"node.kubernetes.io/instance-type", t->name};
        l[2] = (berth_label){"karpenter.sh/capacity-type", pools[p].ct};
        l[3] = (berth_label){"topology.kubernetes.io/zone", zone};
        l[4] = (berth_label){"kubernetes.io/hostname", nd->name};
        l[5] = (berth_label){"kubernetes.io/os", "linux"};
        l[6] = (berth_label){"kubernetes.io/arch", "amd64"};
        l[7] = (berth_label){"workload-class", pools[p].name};
        l[8] = (berth_label){"karpenter.sh/initialized", "true"};
        nd->labels = (berth_labels){l, 9};
        berth_labels_sort(&nd->labels);
        /* the labels Karpenter puts on the nodes of this type (sku-*, ...) */
        uint32_t nl = 9;
        for (uint32_t i = 0; i < t->labels.n; i++)
            if (!berth_labels_get(&nd->labels, t->labels.items[i].key))
                l[nl++] = t->labels.items[i];
        nd->labels = (berth_labels){l, nl};
        berth_labels_sort(&nd->labels);
        nd->taints = m->pools[p].taints;
        nd->ntaints = m->pools[p].ntaints;
        nd->alloc[0] = t->cpu;
        nd->alloc[1] = t->memory;
        nd->alloc[2] = 100 * GiB;
        nd->alloc_pods = t->pods;
        m->node_info[n] = (berth_dnode){1, 0, 0, 1};
        berth_nodeclaim *c = &m->claims[n];
        c->name = nd->name;
        c->nodepool = pools[p].name;
        c->node_name = nd->name;
        c->labels = nd->labels;
        c->hash = m->pools[p].hash;
        c->hash_version = BERTH_DISRUPT_HASH_VERSION;
        c->created = NOW - 2 * 86400 - (int64_t)berth_rng_below(&rng, 86400);
        c->has_created = 1;
        c->initialized = 1;
        c->initialized_at = c->created + 120;
        c->last_pod_event = NOW - 3600 - (int64_t)berth_rng_below(&rng, 3600);
        util[n] = 0.30 + 0.40 * (double)berth_rng_below(&rng, 1001) / 1000.0;
        sum_cpu += t->cpu;
    }
    /* pods: two DaemonSet pods per node, the rest ReplicaSet pods spread
     * over the nodes in proportion to their cpu */
    uint32_t nds = 2 * nnodes < npods ? 2 * nnodes : 0;
    uint32_t napp = npods - nds;
    k->pods = calloc(npods, sizeof *k->pods);
    k->npods = k->cappods = npods;
    m->pod_info = calloc(npods, sizeof *m->pod_info);
    m->npod_info = m->cappod_info = npods;
    berth_toleration *spot_tol = zalloc(a, 2 * sizeof *spot_tol);
    spot_tol[0] = (berth_toleration){"node.kubernetes.io/not-ready", NULL, BERTH_TOL_EXISTS,
                                     BERTH_EFFECT_NOEXECUTE, 300};
    spot_tol[1] = (berth_toleration){"spot", "true", BERTH_TOL_EQUAL, BERTH_EFFECT_NOSCHEDULE, -1};
    berth_toleration *all_tol = zalloc(a, sizeof *all_tol);
    all_tol[0] = (berth_toleration){NULL, NULL, BERTH_TOL_EXISTS, BERTH_EFFECT_ALL, -1};
    /* 1,500 apps: 500 per pool, cpu request levels 100m..1500m */
    static const int64_t levels[10] = {100, 150, 200, 250, 300, 400, 500, 750, 1000, 1500};
    const uint32_t apps_per_pool = 500;
    berth_label *sel_mem = zalloc(a, sizeof *sel_mem);
    sel_mem[0] = (berth_label){"workload-class", "memory"};
    const char *ns[8];
    for (unsigned i = 0; i < 8; i++)
        ns[i] = fmt(a, "team-%u", i);
    uint32_t p = 0, left_app = napp;
    int64_t left_cpu = sum_cpu;
    for (uint32_t n = 0; n < nnodes; n++) {
        const berth_knode *nd = &k->nodes[n];
        uint32_t pl = pool_of[n];
        /* this node's share of the remaining app pods */
        uint32_t cnt = (uint32_t)((double)left_app * (double)nd->alloc[0] / (double)left_cpu + 0.5);
        if (n == nnodes - 1 || cnt > left_app)
            cnt = left_app;
        if (cnt > 100)
            cnt = 100;
        left_app -= cnt;
        left_cpu -= nd->alloc[0];
        double target = util[n] * (double)nd->alloc[0] / (cnt ? cnt : 1);
        for (uint32_t j = 0; j < cnt + (nds ? 2 : 0); j++, p++) {
            berth_kpod *pd = &k->pods[p];
            berth_dpod *x = &m->pod_info[p];
            pd->order = p;
            pd->node_name = nd->name;
            pd->created = NOW - 86400;
            pd->has_created = 1;
            pd->containers = zalloc(a, sizeof *pd->containers);
            pd->ncontainers = 1;
            pd->containers[0].name = "main";
            pd->containers[0].has_req = 3;
            x->ready = 1;
            x->started = pd->created;
            if (j >= cnt) { /* DaemonSet pods */
                int agent = j > cnt;
                pd->ns = "kube-system";
                pd->name = fmt(a, agent ? "log-agent-%05u" : "kube-proxy-%05u", n);
                pd->owner_kind = "DaemonSet";
                pd->owner_name = agent ? "log-agent" : "kube-proxy";
                pd->tols = all_tol;
                pd->ntols = 1;
                pd->priority = 2000001000;
                pd->containers[0].req[0] = agent ? 50 : 100;
                pd->containers[0].req[1] = (agent ? 64 : 128) * MiB;
                berth_label *l = zalloc(a, sizeof *l);
                l[0] = (berth_label){"k8s-app", pd->owner_name};
                pd->labels = (berth_labels){l, 1};
                berth_kube_pod_requests(k, pd);
                continue;
            }
            /* the level nearest target x jitter (0.75..1.25) */
            double want = target * (0.75 + 0.5 * (double)berth_rng_below(&rng, 1001) / 1000.0);
            int lv = 0;
            for (int i = 1; i < 10; i++)
                if (levels[i] <= want)
                    lv = i;
            uint32_t app = pl * apps_per_pool + (uint32_t)lv * 50 + (uint32_t)berth_rng_below(&rng, 50);
            pd->ns = ns[app % 8];
            pd->name = fmt(a, "pod-%06u", p);
            pd->owner_kind = "ReplicaSet";
            pd->owner_name = fmt(a, "app-%04u-5d8f7c9b", app);
            berth_label *l = zalloc(a, 2 * sizeof *l);
            l[0] = (berth_label){"app", fmt(a, "app-%04u", app)};
            l[1] = (berth_label){"pod-template-hash", "5d8f7c9b"};
            pd->labels = (berth_labels){l, 2};
            berth_labels_sort(&pd->labels);
            pd->priority = app % 7 == 0 ? 1000 : 0;
            pd->containers[0].req[0] = levels[lv];
            pd->containers[0].req[1] = levels[lv] * pools[pl].pod_mem_per_cpu / 1000 * MiB;
            if (pl == 1)
                pd->node_selector = (berth_labels){sel_mem, 1};
            if (pl == 2) {
                pd->tols = spot_tol;
                pd->ntols = 2;
            }
            /* a few pods opt out of disruption */
            if (berth_rng_below(&rng, 4000) == 0)
                x->dnd = 1;
            berth_kube_pod_requests(k, pd);
        }
    }
    k->npods = m->npod_info = p;
    /* PDBs: 20 apps with maxUnavailable 1 (status computed), 3 with none allowed */
    k->npdbs = k->cappdbs = 23;
    k->pdbs = calloc(23, sizeof *k->pdbs);
    for (uint32_t i = 0; i < 23; i++) {
        berth_kpdb *b = &k->pdbs[i];
        uint32_t app = i * 61 % (3 * apps_per_pool);
        b->ns = ns[app % 8];
        b->name = fmt(a, "app-%04u", app);
        b->selector.reqs = zalloc(a, sizeof *b->selector.reqs);
        const char **v = zalloc(a, sizeof *v);
        v[0] = b->name;
        b->selector.reqs[0] = (berth_requirement){"app", BERTH_SEL_IN, v, 1};
        b->selector.n = 1;
        b->has_max_unavailable = 1;
        b->max_unavailable = 1;
        if (i >= 20) {
            b->has_disruptions_allowed = 1;
            b->disruptions_allowed = 0;
        }
    }
    /* DaemonSets: kube-proxy and log-agent everywhere (the pods above),
     * csi-azuredisk on Linux nodes, a tuning agent on memory nodes and a
     * spot termination handler on spot nodes (nodeSelectors), a GPU driver
     * that matches no node */
    static const struct {
        const char *name, *sel_key, *sel_val;
        int64_t cpu, mem_mib;
    } ds[6] = {{"kube-proxy", NULL, NULL, 100, 128},
               {"log-agent", NULL, NULL, 50, 64},
               {"csi-azuredisk-node", "kubernetes.io/os", "linux", 30, 60},
               {"memory-tuner", "workload-class", "memory", 200, 256},
               {"spot-handler", "karpenter.sh/capacity-type", "spot", 50, 64},
               {"nvidia-driver", "accelerator", "nvidia", 500, 1024}};
    k->controllers = calloc(6, sizeof *k->controllers);
    k->ncontrollers = k->capcontrollers = 6;
    for (int i = 0; i < 6; i++) {
        berth_kcontroller *c = &k->controllers[i];
        c->type = BERTH_KCTL_DAEMONSET;
        c->kind = "DaemonSet";
        c->ns = "kube-system";
        c->name = ds[i].name;
        c->uid = fmt(a, "0d5e0000-0000-4000-8000-%012u", (unsigned)i);
        c->replicas = 1;
        c->completions = -1;
        berth_kpod *t = &c->tmpl;
        t->ns = c->ns;
        t->owner_kind = "DaemonSet";
        t->owner_name = c->name;
        t->tols = all_tol;
        t->ntols = 1;
        t->priority = 2000001000;
        t->containers = zalloc(a, sizeof *t->containers);
        t->ncontainers = 1;
        t->containers[0].name = "main";
        t->containers[0].has_req = 3;
        t->containers[0].req[0] = ds[i].cpu;
        t->containers[0].req[1] = ds[i].mem_mib * MiB;
        berth_label *l = zalloc(a, sizeof *l);
        l[0] = (berth_label){"k8s-app", c->name};
        t->labels = (berth_labels){l, 1};
        if (ds[i].sel_key) {
            berth_label *sl = zalloc(a, sizeof *sl);
            sl[0] = (berth_label){ds[i].sel_key, ds[i].sel_val};
            t->node_selector = (berth_labels){sl, 1};
        }
        berth_kube_pod_requests(k, t);
    }
    free(pool_of);
    free(util);
}

/* The walk estate (speculative candidate evaluation, docs/disrupt.md
 * "Threads"): the same estate where on all but one node in `one_in` the
 * ReplicaSet pods hold a hostPort (the session schedules them through the
 * full pipeline, over every node) and the first of them requests 64 cpu
 * (more than any node or instance type: it fits nowhere), and a budget of
 * one node per NodePool, so that multi-node consolidation has at most
 * three candidates and single-node consolidation walks past the pinned
 * candidates (each a question the session schedules and fails) to the
 * first free one. */
static void pin(berth_disrupt *m, uint32_t one_in)
{
    berth_kcluster *k = &m->kube;
    berth_kport *port = zalloc(&k->arena, sizeof *port);
    *port = (berth_kport){8080, BERTH_PROTO_TCP, "0.0.0.0"};
    const char *last = NULL;
    for (uint32_t p = 0; p < k->npods; p++) {
        berth_kpod *pd = &k->pods[p];
        if (!pd->owner_kind || strcmp(pd->owner_kind, "ReplicaSet"))
            continue;
        uint32_t h = 2166136261u; /* FNV-1a of the node's name */
        for (const char *c = pd->node_name; *c; c++)
            h = (h ^ (unsigned char)*c) * 16777619u;
        if (!(h % one_in))
            continue;
        pd->ports = port;
        pd->nports = 1;
        if (pd->node_name != last) { /* the node's first: pods are made node by node */
            pd->containers[0].req[0] = 64000;
            berth_kube_pod_requests(k, pd);
        }
        last = pd->node_name;
    }
    for (uint32_t i = 0; i < m->npools; i++)
        m->pools[i].budgets[0] = (berth_dbudget){"1", 0, NULL, 0};
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double plan_median(const berth_disrupt *m, int optimize, uint32_t threads, berth_dplan *keep,
                          double *wall)
{
    double t[3], w[3];
    for (int i = 0; i < 3; i++) {
        berth_dplan_options o = {.now = NOW, .optimize = optimize, .threads = threads};
        berth_dplan p;
        berth_error e;
        double t0 = cpu_s(), w0 = now_s();
        if (berth_disrupt_plan(m, &o, &p, &e)) {
            fprintf(stderr, "bench_disrupt: %s\n", e.msg);
            exit(1);
        }
        t[i] = cpu_s() - t0;
        w[i] = now_s() - w0;
        if (i == 2)
            *keep = p;
        else
            berth_dplan_free(&p);
    }
    qsort(t, 3, sizeof t[0], cmp_d);
    qsort(w, 3, sizeof w[0], cmp_d);
    *wall = w[1];
    return t[1];
}

/* The same plan with --threads 2 (the what-if session's per-node loops and
 * the candidates evaluated speculatively on two threads, docs/disrupt.md
 * "Threads"): its process CPU time beside the one-thread figure t1 of this
 * run, and the same answer. */
static void threads2(const berth_disrupt *m, int optimize, const berth_dplan *one, double t1)
{
    berth_dplan p;
    double wall;
    double dt = plan_median(m, optimize, 2, &p, &wall);
    if (p.nodes_after != one->nodes_after || p.cost_after != one->cost_after ||
        p.nactions != one->nactions || p.nblocked != one->nblocked) {
        fprintf(stderr, "bench_disrupt: --threads 2 planned differently from --threads 1\n");
        exit(1);
    }
    fprintf(stderr, "disrupt: %splan, 2 threads: %.3f s cpu (%.3f s wall); 1 thread %.3f s cpu\n",
            optimize ? "optimized " : "", dt, wall, t1);
    printf("BENCH disrupt.%splan_seconds.10k.threads2 %.3f s\n", optimize ? "optimized_" : "", dt);
}

/* Wall-clock seconds of one plan with `threads` threads. */
static double plan_wall(const berth_disrupt *m, uint32_t threads, berth_dplan *keep)
{
    berth_dplan_options o = {.now = NOW, .threads = threads};
    berth_dplan p;
    berth_error e;
    double w0 = now_s();
    if (berth_disrupt_plan(m, &o, &p, &e)) {
        fprintf(stderr, "bench_disrupt: %s\n", e.msg);
        exit(1);
    }
    double w = now_s() - w0;
    if (keep)
        *keep = p;
    else
        berth_dplan_free(&p);
    return w;
}

#define WALL_RUNS 3

/* Wall-clock medians of WALL_RUNS plans with 1 and with 2 threads, the
 * runs interleaved (1, 2, 1, 2, ...) so that both see the same load on a
 * shared machine: BENCH <name>.threads1 and <name>.threads2_wall; the
 * candidates single-node consolidation answered before the first that
 * acts (its failures in the blocked list) go to stderr. */
static void wall_pair(const berth_disrupt *m, const char *name)
{
    double w1[WALL_RUNS], w2[WALL_RUNS];
    berth_dplan one, two;
    for (int i = 0; i < WALL_RUNS; i++) {
        w1[i] = plan_wall(m, 1, i == WALL_RUNS - 1 ? &one : NULL);
        w2[i] = plan_wall(m, 2, i == WALL_RUNS - 1 ? &two : NULL);
    }
    if (two.nodes_after != one.nodes_after || two.cost_after != one.cost_after ||
        two.nactions != one.nactions || two.nblocked != one.nblocked) {
        fprintf(stderr, "bench_disrupt: %s: --threads 2 planned differently from --threads 1\n",
                name);
        exit(1);
    }
    qsort(w1, WALL_RUNS, sizeof w1[0], cmp_d);
    qsort(w2, WALL_RUNS, sizeof w2[0], cmp_d);
    uint32_t failed = 0;
    for (uint32_t i = 0; i < one.nblocked; i++)
        failed += strstr(one.blocked[i].reason, "fit neither") != NULL ||
                  strstr(one.blocked[i].reason, "cheaper") != NULL;
    fprintf(stderr,
            "disrupt: %s: wall 1 thread %.3f s, 2 threads %.3f s (medians of %d, interleaved); "
            "method %s, %u failed consolidation question(s) before it\n",
            name, w1[WALL_RUNS / 2], w2[WALL_RUNS / 2], WALL_RUNS,
            one.method ? one.method : "(none)", failed);
    printf("BENCH %s.threads1 %.3f s\n", name, w1[WALL_RUNS / 2]);
    printf("BENCH %s.threads2_wall %.3f s\n", name, w2[WALL_RUNS / 2]);
    berth_dplan_free(&one);
    berth_dplan_free(&two);
}

/* The walk estate (pin), 1 vs 2 threads. m is changed. */
static void walk(berth_disrupt *m)
{
    const char *e = getenv("BENCH_DISRUPT_PIN");
    pin(m, e ? (uint32_t)atoi(e) : 40);
    wall_pair(m, "disrupt.walk_plan_seconds.10k");
}

int main(void)
{
    const char *en = getenv("BENCH_DISRUPT_NODES"), *ep = getenv("BENCH_DISRUPT_PODS");
    uint32_t nnodes = en ? (uint32_t)atoi(en) : 10000, npods = ep ? (uint32_t)atoi(ep) : 200000;
    berth_disrupt m;
    berth_disrupt_init(&m);
    double t0 = now_s();
    build(&m, nnodes, npods, 42);
    fprintf(stderr, "disrupt: estate of %u nodes and %u pods built in %.2f s\n", m.kube.nnodes,
            m.kube.npods, now_s() - t0);
    const char *only = getenv("BENCH_DISRUPT_WALK_ONLY");
    if (only) { /* one walk plan with that many threads (callgrind) */
        const char *pe = getenv("BENCH_DISRUPT_PIN");
        pin(&m, pe ? (uint32_t)atoi(pe) : 40);
        berth_dplan one;
        fprintf(stderr, "disrupt: walk plan, %d thread(s): %.3f s wall\n", atoi(only),
                plan_wall(&m, (uint32_t)atoi(only), &one));
        berth_dplan_free(&one);
        berth_disrupt_free(&m);
        return 0;
    }
    berth_dplan p;
    double wall;
    double dt = plan_median(&m, 0, 1, &p, &wall);
    fprintf(stderr,
            "disrupt: plan %.3f s cpu (%.3f s wall), method %s, %u action(s), nodes %lld -> "
            "%lld, bound %lld, cost %.2f -> %.2f /h, bound %.2f /h\n",
            dt, wall, p.method ? p.method : "(none)", p.nactions, (long long)p.nodes_before,
            (long long)p.nodes_after, (long long)p.bound_nodes, p.cost_before, p.cost_after,
            p.bound_cost);
    printf("BENCH disrupt.plan_seconds.10k %.3f s\n", dt);
    printf("BENCH disrupt.nodes_after.10k %lld nodes\n", (long long)p.nodes_after);
    printf("BENCH disrupt.lower_bound_nodes.10k %lld nodes\n", (long long)p.bound_nodes);
    printf("BENCH disrupt.lower_bound_nodes_within_budgets.10k %lld nodes\n",
           (long long)p.bound_nodes_budgets);
    threads2(&m, 0, &p, dt);
    berth_dplan_free(&p);
    /* wall clock, 1 vs 2 threads: the bench estate (multi-node
     * consolidation; the binary search's probes are certified, and with 2
     * threads it runs one probe per round as with 1), then the walk
     * estate (single-node consolidation past pinned candidates) */
    wall_pair(&m, "disrupt.plan_seconds.10k");
    const char *plain = getenv("BENCH_DISRUPT_PLAIN");
    if (plain && atoi(plain)) {
        walk(&m);
        berth_disrupt_free(&m);
        return 0;
    }
    dt = plan_median(&m, 1, 1, &p, &wall);
    fprintf(stderr,
            "disrupt: optimized plan %.3f s cpu (%.3f s wall, %s), nodes %lld -> %lld, "
            "cost %.2f -> %.2f /h\n",
            dt, wall, p.optimized ? "optimiser" : "Karpenter's pass kept", (long long)p.nodes_before,
            (long long)p.nodes_after, p.cost_before, p.cost_after);
    printf("BENCH disrupt.optimized_plan_seconds.10k %.3f s\n", dt);
    printf("BENCH disrupt.optimized_nodes_after.10k %lld nodes\n", (long long)p.nodes_after);
    threads2(&m, 1, &p, dt);
    berth_dplan_free(&p);
    walk(&m);
    berth_disrupt_free(&m);
    return 0;
}
