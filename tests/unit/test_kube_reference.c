/* test_kube_reference.c - berth_kube_schedule against a plain, independent
 * reference implementation of kube-scheduler's filters and scores written
 * from SPEC 2.5 (and upstream kube-scheduler where SPEC is terse), on random
 * clusters and a few hand-made corner cases (issue 3 item 7).
 *
 * The reference below deliberately uses none of berth's matching helpers
 * (labels, taints, requests, plugins): it reads the public model
 * (berth/kube.h) of an untouched copy of the cluster and recomputes
 * everything per pod from the list of pods on each node.
 *
 * Each random cluster is scheduled by berth four ways: the default fast
 * path (detail 0: chosen node and nfeasible compared), reference = 1,
 * detail = 1 (feasible set, every per-plugin normalised score and totals
 * compared), and detail = 1 on the same cluster written as YAML and loaded
 * with berth_kube_load (the loader is exercised too). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "berth/kube.h"
#include "berth/random.h"

#define MI (1024LL * 1024)
#define GI (1024LL * MI)
#define MAXN 256
#define MAXP 256
#define NKP BERTH_KP_COUNT
#define BIT(p) (1u << (unsigned)(p))
#define HOSTNAME "kubernetes.io/hostname"
#define ZONE "topology.kubernetes.io/zone"

/* ======================================================================
 * Random cluster generator (public model)
 * ==================================================================== */

static berth_rng G;
static uint32_t rnd(uint32_t n) { return (uint32_t)berth_rng_below(&G, n); }
static int chance(uint32_t pct) { return rnd(100) < pct; }

typedef struct gen_params {
    uint32_t min_nodes, max_nodes, min_pods, max_pods;
    int ext;          /* an extended resource example.com/gpu */
    int no_fields;    /* no matchFields (percentageOfNodesToScore runs) */
} gen_params;

static const char *fmt(berth_arena *a, const char *f, ...)
{
    char buf[128];
    va_list ap;
    va_start(ap, f);
    vsnprintf(buf, sizeof buf, f, ap);
    va_end(ap);
    return berth_arena_strdup(a, buf);
}

static void *aalloc(berth_arena *a, size_t n)
{
    void *p = berth_arena_alloc(a, n ? n : 1);
    memset(p, 0, n ? n : 1);
    return p;
}

static const char *ZONES[] = {"z-a", "z-b", "z-c", "z-d"};
static const char *RACKS[] = {"r0", "r1", "r2", "r3", "r4"};
static const char *APPS[] = {"web", "db", "cache", "batch"};
static const char *NSS[] = {"default", "team-a", "team-b"};
static const struct { const char *name; int64_t size; } IMAGES[] = {
    {"reg.io/web:1.0", 300 * MI}, {"reg.io/db:2.1", 900 * MI}, {"reg.io/tiny:1", 5 * MI},
    {"reg.io/huge:3", 2500 * MI}, {"reg.io/side:1", 120 * MI}, {"reg.io/none:1", 50 * MI},
};
#define NIMG 5 /* the last one is on no node */

static const berth_taint TAINTS[] = {
    {"dedicated", "gpu", BERTH_EFFECT_NOSCHEDULE},
    {"spot", "true", BERTH_EFFECT_PREFERNOSCHEDULE},
    {"maint", "", BERTH_EFFECT_NOEXECUTE},
    {"dedicated", "infra", BERTH_EFFECT_NOSCHEDULE},
    {"noisy", "yes", BERTH_EFFECT_PREFERNOSCHEDULE},
    {"spot", "false", BERTH_EFFECT_PREFERNOSCHEDULE},
};
static const berth_toleration TOLS[] = {
    {"dedicated", "gpu", BERTH_TOL_EQUAL, BERTH_EFFECT_NOSCHEDULE, -1},
    {"dedicated", NULL, BERTH_TOL_EXISTS, BERTH_EFFECT_ALL, -1},
    {"spot", NULL, BERTH_TOL_EXISTS, BERTH_EFFECT_PREFERNOSCHEDULE, -1},
    {"spot", "true", BERTH_TOL_EQUAL, BERTH_EFFECT_ALL, -1},
    {"node.kubernetes.io/unschedulable", NULL, BERTH_TOL_EXISTS, BERTH_EFFECT_NOSCHEDULE, -1},
    {"maint", NULL, BERTH_TOL_EXISTS, BERTH_EFFECT_NOEXECUTE, 300},
    {"noisy", "yes", BERTH_TOL_EQUAL, BERTH_EFFECT_NOSCHEDULE, -1},
    {NULL, NULL, BERTH_TOL_EXISTS, BERTH_EFFECT_ALL, -1},
};

static berth_requirement in1(berth_arena *a, const char *key, const char *v)
{
    const char **vals = aalloc(a, sizeof *vals);
    vals[0] = v;
    return (berth_requirement){key, BERTH_SEL_IN, vals, 1};
}

static berth_selector sel1(berth_arena *a, const char *key, const char *v)
{
    berth_requirement *r = aalloc(a, sizeof *r);
    *r = in1(a, key, v);
    return (berth_selector){r, 1, 0};
}

/* a node-affinity requirement over the generated node labels */
static berth_requirement gen_expr(berth_arena *a)
{
    static const char *keys[] = {ZONE, "disk", "rank", "rack", "absent"};
    const char *key = keys[rnd(5)];
    berth_requirement r = {key, (berth_sel_op)rnd(6), NULL, 0};
    const char **vals = aalloc(a, 2 * sizeof *vals);
    r.values = vals;
    if (r.op == BERTH_SEL_IN || r.op == BERTH_SEL_NOTIN) {
        r.nvalues = 1 + rnd(2);
        for (uint32_t i = 0; i < r.nvalues; i++) {
            if (key == keys[0]) vals[i] = ZONES[rnd(4)];
            else if (key == keys[1]) vals[i] = rnd(2) ? "ssd" : "hdd";
            else if (key == keys[2]) vals[i] = fmt(a, "%u", rnd(10));
            else vals[i] = RACKS[rnd(5)];
        }
    } else if (r.op == BERTH_SEL_GT || r.op == BERTH_SEL_LT) {
        r.nvalues = 1;
        if (chance(70))
            r.key = "rank";
        vals[0] = fmt(a, "%u", rnd(10));
    }
    /* a value the API server accepts but labels.NewRequirement rejects:
     * the term then matches nothing (and a preferred one fails PreScore) */
    if (r.nvalues && chance(4)) {
        static const char *bad[] = {"not valid", "-1", "x1", "trailing-"};
        vals[rnd(r.nvalues)] = bad[rnd(4)];
    }
    return r;
}

/* the loader's berth_kterm.invalid, for clusters built without it */
static void mark_invalid(berth_kterm *t)
{
    for (uint32_t i = 0; i < t->nexprs; i++)
        t->invalid |= berth_requirement_validate(&t->exprs[i], NULL) != 0;
}

static berth_kterm gen_term(berth_arena *a, berth_kcluster *k, int no_fields)
{
    berth_kterm t = {0};
    if (chance(3))
        return t; /* empty: matches nothing */
    if (!no_fields && chance(12)) {
        t.fields = aalloc(a, sizeof *t.fields);
        t.nfields = 1;
        t.fields[0] = in1(a, "metadata.name", k->nodes[rnd(k->nnodes)].name);
        if (chance(50))
            t.fields[0].op = BERTH_SEL_NOTIN;
        if (chance(50))
            return t;
    }
    t.nexprs = 1 + rnd(2);
    t.exprs = aalloc(a, t.nexprs * sizeof *t.exprs);
    for (uint32_t i = 0; i < t.nexprs; i++)
        t.exprs[i] = gen_expr(a);
    mark_invalid(&t);
    return t;
}

static void gen_container(berth_arena *a, berth_kcontainer *c, const char *name, int ext)
{
    c->name = name;
    c->image = chance(60) ? IMAGES[rnd(NIMG + 1)].name : "reg.io/none:1";
    if (chance(70)) {
        c->has_req |= BIT(BERTH_KRES_CPU);
        c->req[BERTH_KRES_CPU] = chance(10) ? 0 : 50 * (1 + (int64_t)rnd(30));
    }
    if (chance(70)) {
        c->has_req |= BIT(BERTH_KRES_MEMORY);
        c->req[BERTH_KRES_MEMORY] = chance(10) ? 0 : 32 * MI * (1 + (int64_t)rnd(40));
    }
    if (chance(12)) {
        c->has_req |= BIT(BERTH_KRES_EPHEMERAL);
        c->req[BERTH_KRES_EPHEMERAL] = GI * (1 + (int64_t)rnd(5));
    }
    if (ext && chance(15)) {
        c->has_req |= BIT(BERTH_KRES_FIRST_EXT);
        c->req[BERTH_KRES_FIRST_EXT] = rnd(3);
    }
    for (int r = 0; r < 2; r++)
        if ((c->has_req & BIT(r)) && chance(30)) {
            c->has_lim |= BIT(r);
            c->lim[r] = c->req[r] * (1 + rnd(2));
        }
}

static berth_kaffinity_term gen_aff(berth_arena *a, const berth_kpod *p)
{
    static const char *keys[] = {ZONE, HOSTNAME, "rack"};
    berth_kaffinity_term t = {0};
    const char *app = p->labels.n ? p->labels.items[0].value : "web";
    if (chance(80))
        t.selector = sel1(a, "app", chance(50) ? app : APPS[rnd(4)]);
    else
        t.selector = sel1(a, "tier", rnd(2) ? "fe" : "be");
    t.topology_key = keys[rnd(3)];
    uint32_t m = rnd(10);
    if (m >= 6 && m < 8) {
        t.nnamespaces = 1 + rnd(2);
        t.namespaces = aalloc(a, 2 * sizeof *t.namespaces);
        for (uint32_t i = 0; i < t.nnamespaces; i++)
            t.namespaces[i] = NSS[rnd(3)];
    } else if (m >= 8) {
        t.has_ns_selector = 1;
        uint32_t w = rnd(3);
        if (w == 0)
            t.ns_selector = sel1(a, "team", "a");
        else if (w == 1)
            t.ns_selector = sel1(a, "env", "prod");
        /* else {}: every namespace */
    }
    t.weight = 1 + (int32_t)rnd(100);
    return t;
}

static void gen_cluster(berth_kcluster *k, uint64_t seed, const gen_params *gp)
{
    berth_rng_seed(&G, seed);
    berth_kube_init(k);
    berth_arena *a = &k->arena;
    if (gp->ext)
        k->res_names[k->nres++] = "example.com/gpu";
    uint32_t N = gp->min_nodes + rnd(gp->max_nodes - gp->min_nodes + 1);
    k->nodes = calloc(N, sizeof *k->nodes);
    k->nnodes = k->capnodes = N;
    /* distinct names in random order */
    uint8_t used[1000] = {0};
    for (uint32_t n = 0; n < N; n++) {
        berth_knode *nd = &k->nodes[n];
        uint32_t id;
        do
            id = rnd(1000);
        while (used[id]);
        used[id] = 1;
        nd->name = fmt(a, "node-%03u", id);
        berth_label *l = aalloc(a, 6 * sizeof *l);
        uint32_t nl = 0;
        l[nl++] = (berth_label){HOSTNAME, nd->name};
        if (chance(90))
            l[nl++] = (berth_label){ZONE, ZONES[rnd(4)]};
        if (chance(50))
            l[nl++] = (berth_label){"disk", rnd(2) ? "ssd" : "hdd"};
        if (chance(40))
            l[nl++] = (berth_label){"rank", fmt(a, "%u", rnd(10))};
        if (chance(60))
            l[nl++] = (berth_label){"rack", RACKS[rnd(5)]};
        nd->labels = (berth_labels){l, nl};
        berth_labels_sort(&nd->labels);
        nd->alloc[BERTH_KRES_CPU] = 500 * (2 + (int64_t)rnd(15));
        nd->alloc[BERTH_KRES_MEMORY] = (1 + (int64_t)rnd(16)) * GI / 2;
        nd->alloc[BERTH_KRES_EPHEMERAL] = (10 + (int64_t)rnd(90)) * GI;
        if (gp->ext && chance(50))
            nd->alloc[BERTH_KRES_FIRST_EXT] = rnd(5);
        nd->alloc_pods = 2 + rnd(18);
        if (chance(45)) {
            uint32_t nt = 1 + rnd(2);
            nd->taints = aalloc(a, nt * sizeof *nd->taints);
            uint32_t first = rnd(6);
            for (uint32_t t = 0; t < nt; t++)
                nd->taints[nd->ntaints++] = TAINTS[(first + t * (1 + rnd(5))) % 6];
            if (nt == 2 && !strcmp(nd->taints[0].key, nd->taints[1].key) &&
                nd->taints[0].effect == nd->taints[1].effect)
                nd->ntaints = 1;
        }
        nd->unschedulable = chance(8);
        nd->images = aalloc(a, NIMG * sizeof *nd->images);
        for (uint32_t i = 0; i < NIMG; i++)
            if (chance(30))
                nd->images[nd->nimages++] = (berth_kimage){IMAGES[i].name, IMAGES[i].size};
    }
    /* namespaces (all the pods' namespaces exist, as in a real cluster) */
    k->namespaces = calloc(3, sizeof *k->namespaces);
    k->nnamespaces = k->capnamespaces = 3;
    for (int i = 0; i < 3; i++) {
        berth_label *l = aalloc(a, 3 * sizeof *l);
        l[0] = (berth_label){"kubernetes.io/metadata.name", NSS[i]};
        l[1] = (berth_label){"env", i == 2 ? "dev" : "prod"};
        uint32_t nl = 2;
        if (i)
            l[nl++] = (berth_label){"team", i == 1 ? "a" : "b"};
        k->namespaces[i].name = NSS[i];
        k->namespaces[i].labels = (berth_labels){l, nl};
        berth_labels_sort(&k->namespaces[i].labels);
    }
    /* Services and ReplicaSets (system default spreading) */
    k->workloads = calloc(5, sizeof *k->workloads);
    k->nworkloads = k->capworkloads = 5;
    k->workloads[0] = (berth_kworkload){"Service", "default", "web-svc", sel1(a, "app", "web")};
    k->workloads[1] = (berth_kworkload){"Service", "team-a", "db-svc", sel1(a, "app", "db")};
    berth_requirement *two = aalloc(a, 2 * sizeof *two);
    two[0] = in1(a, "app", "cache");
    two[1] = in1(a, "tier", "be");
    k->workloads[2] = (berth_kworkload){"Service", "default", "cache-svc", {two, 2, 0}};
    k->workloads[3] = (berth_kworkload){"ReplicaSet", "default", "rs-1", sel1(a, "rs", "rs-1")};
    k->workloads[4] = (berth_kworkload){"ReplicaSet", "team-b", "rs-2", sel1(a, "rs", "rs-2")};

    uint32_t P = gp->min_pods + rnd(gp->max_pods - gp->min_pods + 1);
    k->pods = calloc(P, sizeof *k->pods);
    k->npods = k->cappods = P;
    for (uint32_t i = 0; i < P; i++) {
        berth_kpod *p = &k->pods[i];
        p->ns = NSS[rnd(3)];
        p->name = fmt(a, "pod-%03u", i);
        p->order = i;
        berth_label *l = aalloc(a, 3 * sizeof *l);
        uint32_t nl = 0;
        if (chance(90))
            l[nl++] = (berth_label){"app", APPS[rnd(4)]};
        if (chance(40))
            l[nl++] = (berth_label){"tier", rnd(2) ? "fe" : "be"};
        if (chance(15) && strcmp(p->ns, "team-a")) {
            const char *rs = strcmp(p->ns, "default") ? "rs-2" : "rs-1";
            l[nl++] = (berth_label){"rs", rs};
            p->owner_kind = "ReplicaSet";
            p->owner_name = rs;
        }
        p->labels = (berth_labels){l, nl};
        berth_labels_sort(&p->labels);
        if (chance(30)) {
            static const int64_t pr[] = {-5, 10, 100, 1000};
            p->priority = pr[rnd(4)];
        }
        p->created = 1700000000 + rnd(30);
        p->has_created = 1;
        if (chance(25)) {
            p->node_name = chance(5) ? "ghost-node" : k->nodes[rnd(N)].name;
            p->terminating = chance(6);
        }
        p->ncontainers = 1 + rnd(3);
        p->containers = aalloc(a, p->ncontainers * sizeof *p->containers);
        for (uint32_t c = 0; c < p->ncontainers; c++)
            gen_container(a, &p->containers[c], fmt(a, "c%u", c), gp->ext);
        if (chance(35)) {
            p->ninit = 1 + rnd(2);
            p->init = aalloc(a, p->ninit * sizeof *p->init);
            for (uint32_t c = 0; c < p->ninit; c++) {
                gen_container(a, &p->init[c], fmt(a, "init%u", c), gp->ext);
                p->init[c].sidecar = chance(40);
            }
        }
        if (chance(10)) {
            p->overhead[BERTH_KRES_CPU] = 100;
            p->overhead[BERTH_KRES_MEMORY] = 50 * MI;
        }
        if (chance(30)) {
            uint32_t nt = 1 + rnd(2);
            p->tols = aalloc(a, nt * sizeof *p->tols);
            for (uint32_t t = 0; t < nt; t++)
                p->tols[p->ntols++] = TOLS[rnd(8)];
        }
        if (chance(12)) {
            berth_label *s = aalloc(a, sizeof *s);
            s[0] = chance(50) ? (berth_label){ZONE, ZONES[rnd(4)]} : (berth_label){"disk", "ssd"};
            p->node_selector = (berth_labels){s, 1};
        }
        if (chance(20)) {
            p->has_req_affinity = 1;
            p->nreq_terms = 1 + rnd(2);
            p->req_terms = aalloc(a, p->nreq_terms * sizeof *p->req_terms);
            for (uint32_t t = 0; t < p->nreq_terms; t++)
                p->req_terms[t] = gen_term(a, k, gp->no_fields);
        }
        if (chance(25)) {
            p->npref_terms = 1 + rnd(3);
            p->pref_terms = aalloc(a, p->npref_terms * sizeof *p->pref_terms);
            for (uint32_t t = 0; t < p->npref_terms; t++) {
                p->pref_terms[t].weight = 1 + (int32_t)rnd(100);
                p->pref_terms[t].term = gen_term(a, k, gp->no_fields);
            }
        }
        if (chance(15)) {
            static const int32_t ports[] = {80, 443, 8080};
            static const char *ips[] = {"0.0.0.0", "0.0.0.0", "0.0.0.0", "10.0.0.1", "10.0.0.2"};
            p->nports = 1 + rnd(2);
            p->ports = aalloc(a, p->nports * sizeof *p->ports);
            for (uint32_t t = 0; t < p->nports; t++)
                p->ports[t] = (berth_kport){ports[rnd(3)], chance(75) ? BERTH_PROTO_TCP
                                                                       : BERTH_PROTO_UDP,
                                            ips[rnd(5)]};
            if (p->nports == 2 && p->ports[0].port == p->ports[1].port &&
                p->ports[0].proto == p->ports[1].proto)
                p->nports = 1;
        }
        if (chance(25)) {
            static const char *keys[] = {ZONE, HOSTNAME, "rack"};
            uint32_t first = rnd(3);
            p->nspread = 1 + rnd(2);
            p->spread = aalloc(a, p->nspread * sizeof *p->spread);
            for (uint32_t c = 0; c < p->nspread; c++) {
                berth_kspread *s = &p->spread[c];
                s->topology_key = keys[(first + c) % 3];
                s->max_skew = 1 + (int32_t)rnd(3);
                s->do_not_schedule = chance(50);
                const char *app = p->labels.n && !strcmp(p->labels.items[0].key, "app")
                                      ? p->labels.items[0].value : "web";
                if (chance(8)) {
                    berth_requirement *r = aalloc(a, sizeof *r);
                    *r = (berth_requirement){"app", BERTH_SEL_EXISTS, NULL, 0};
                    s->selector = (berth_selector){r, 1, 0};
                } else {
                    s->selector = sel1(a, "app", chance(60) ? app : APPS[rnd(4)]);
                }
                s->min_domains = s->do_not_schedule && chance(20) ? 2 + (int32_t)rnd(4) : 1;
                s->honor_node_affinity = chance(85);
                s->honor_node_taints = chance(15);
            }
        }
        for (int kind = 0; kind < 4; kind++) {
            if (!chance(kind < 2 ? 12 : 18))
                continue;
            uint32_t n = 1 + (chance(25) ? 1 : 0);
            berth_kaffinity_term *t = aalloc(a, n * sizeof *t);
            for (uint32_t j = 0; j < n; j++)
                t[j] = gen_aff(a, p);
            if (kind == 0) p->aff_req = t, p->naff_req = n;
            if (kind == 1) p->anti_req = t, p->nanti_req = n;
            if (kind == 2) p->aff_pref = t, p->naff_pref = n;
            if (kind == 3) p->anti_pref = t, p->nanti_pref = n;
        }
        berth_kube_pod_requests(k, p);
    }
}

static void free_cluster(berth_kcluster *k)
{
    berth_kube_free(k);
}

/* ======================================================================
 * The reference profile
 * ==================================================================== */

typedef struct rprof {
    const char *name;
    uint32_t filters;               /* bit per berth_kplugin */
    int64_t w[NKP];                 /* score weight, 0 = disabled */
    berth_kfit_strategy strat;
    uint32_t fr[4];
    int64_t fw[4];
    uint32_t nfr;
    int32_t su[8], ss[8];
    uint32_t nshape;
    uint32_t br[4];
    uint32_t nbr;
    int64_t hard;
    int sysdef;
    int32_t pct;                    /* percentageOfNodesToScore, 0 = unset */
    const char *ksc;                /* KubeSchedulerConfiguration YAML for berth, or NULL */
    int added;                      /* NodeAffinity addedAffinity: r_added_* below */
} rprof;

#define DEF_FILTERS                                                                        \
    (BIT(BERTH_KP_NODE_UNSCHEDULABLE) | BIT(BERTH_KP_NODE_NAME) |                          \
     BIT(BERTH_KP_TAINT_TOLERATION) | BIT(BERTH_KP_NODE_AFFINITY) | BIT(BERTH_KP_NODE_PORTS) | \
     BIT(BERTH_KP_NODE_RESOURCES_FIT) | BIT(BERTH_KP_VOLUME_ZONE) |                        \
     BIT(BERTH_KP_POD_TOPOLOGY_SPREAD) | BIT(BERTH_KP_INTER_POD_AFFINITY))
#define DEF_W                                                                              \
    {[BERTH_KP_TAINT_TOLERATION] = 3, [BERTH_KP_NODE_AFFINITY] = 2,                        \
     [BERTH_KP_NODE_RESOURCES_FIT] = 1, [BERTH_KP_POD_TOPOLOGY_SPREAD] = 2,                \
     [BERTH_KP_INTER_POD_AFFINITY] = 2, [BERTH_KP_BALANCED_ALLOCATION] = 1,                \
     [BERTH_KP_IMAGE_LOCALITY] = 1}
#define KSC_HEAD "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"

static const rprof PROFILES[] = {
    /* 0: the default profile (berth's built-in) */
    {"default", DEF_FILTERS, DEF_W, BERTH_FIT_LEAST_ALLOCATED, {0, 1}, {1, 1}, 2, {0}, {0}, 0,
     {0, 1}, 2, 1, 1, 0, NULL},
    /* 1: MostAllocated with weights and an extended resource */
    {"most", DEF_FILTERS, DEF_W, BERTH_FIT_MOST_ALLOCATED, {0, 1, 3}, {2, 1, 3}, 3, {0}, {0}, 0,
     {0, 1}, 2, 1, 1, 0,
     KSC_HEAD "profiles:\n- schedulerName: default-scheduler\n  pluginConfig:\n"
              "  - name: NodeResourcesFit\n    args:\n      scoringStrategy:\n"
              "        type: MostAllocated\n        resources: [{name: cpu, weight: 2}, "
              "{name: memory, weight: 1}, {name: example.com/gpu, weight: 3}]\n"},
    /* 2: RequestedToCapacityRatio with a falling shape */
    {"rtcr", DEF_FILTERS, DEF_W, BERTH_FIT_REQUESTED_TO_CAPACITY_RATIO, {0, 1}, {1, 3}, 2,
     {0, 40, 100}, {10, 6, 0}, 3, {0, 1}, 2, 1, 1, 0,
     KSC_HEAD "profiles:\n- schedulerName: default-scheduler\n  pluginConfig:\n"
              "  - name: NodeResourcesFit\n    args:\n      scoringStrategy:\n"
              "        type: RequestedToCapacityRatio\n        resources: [{name: cpu, weight: 1}, "
              "{name: memory, weight: 3}]\n        requestedToCapacityRatio:\n          shape:\n"
              "          - {utilization: 0, score: 10}\n          - {utilization: 40, score: 6}\n"
              "          - {utilization: 100, score: 0}\n"},
    /* 3: RequestedToCapacityRatio, rising shape with a plateau, gpu too */
    {"rtcr2", DEF_FILTERS, DEF_W, BERTH_FIT_REQUESTED_TO_CAPACITY_RATIO, {0, 1, 3}, {1, 1, 2}, 3,
     {10, 50, 90}, {0, 7, 10}, 3, {0, 1}, 2, 1, 1, 0,
     KSC_HEAD "profiles:\n- schedulerName: default-scheduler\n  pluginConfig:\n"
              "  - name: NodeResourcesFit\n    args:\n      scoringStrategy:\n"
              "        type: RequestedToCapacityRatio\n        resources: [{name: cpu, weight: 1}, "
              "{name: memory, weight: 1}, {name: example.com/gpu, weight: 2}]\n"
              "        requestedToCapacityRatio:\n          shape:\n"
              "          - {utilization: 10, score: 0}\n          - {utilization: 50, score: 7}\n"
              "          - {utilization: 90, score: 10}\n"},
    /* 4: changed weights, balanced over three resources, hardPodAffinityWeight 3 (struct) */
    {"weights", DEF_FILTERS,
     {[BERTH_KP_TAINT_TOLERATION] = 1, [BERTH_KP_NODE_AFFINITY] = 5,
      [BERTH_KP_NODE_RESOURCES_FIT] = 2, [BERTH_KP_POD_TOPOLOGY_SPREAD] = 4,
      [BERTH_KP_INTER_POD_AFFINITY] = 7, [BERTH_KP_BALANCED_ALLOCATION] = 3,
      [BERTH_KP_IMAGE_LOCALITY] = 2},
     BERTH_FIT_LEAST_ALLOCATED, {0, 1}, {1, 1}, 2, {0}, {0}, 0, {0, 1, 3}, 3, 3, 1, 0, NULL},
    /* 5: TaintToleration disabled everywhere, ImageLocality score off, Fit weight 4 (YAML) */
    {"disabled", DEF_FILTERS & ~BIT(BERTH_KP_TAINT_TOLERATION),
     {[BERTH_KP_NODE_AFFINITY] = 2, [BERTH_KP_NODE_RESOURCES_FIT] = 4,
      [BERTH_KP_POD_TOPOLOGY_SPREAD] = 2, [BERTH_KP_INTER_POD_AFFINITY] = 2,
      [BERTH_KP_BALANCED_ALLOCATION] = 1},
     BERTH_FIT_LEAST_ALLOCATED, {0, 1}, {1, 1}, 2, {0}, {0}, 0, {0, 1}, 2, 5, 1, 0,
     KSC_HEAD "profiles:\n- schedulerName: default-scheduler\n  plugins:\n"
              "    multiPoint:\n      disabled: [{name: TaintToleration}]\n"
              "    score:\n      disabled: [{name: ImageLocality}]\n"
              "      enabled: [{name: NodeResourcesFit, weight: 4}]\n"
              "  pluginConfig:\n  - name: InterPodAffinity\n    args: {hardPodAffinityWeight: 5}\n"},
    /* 6: PodTopologySpread and NodePorts disabled (struct) */
    {"nospread", DEF_FILTERS & ~BIT(BERTH_KP_POD_TOPOLOGY_SPREAD) & ~BIT(BERTH_KP_NODE_PORTS),
     {[BERTH_KP_TAINT_TOLERATION] = 3, [BERTH_KP_NODE_AFFINITY] = 2,
      [BERTH_KP_NODE_RESOURCES_FIT] = 1, [BERTH_KP_INTER_POD_AFFINITY] = 2,
      [BERTH_KP_BALANCED_ALLOCATION] = 1, [BERTH_KP_IMAGE_LOCALITY] = 1},
     BERTH_FIT_LEAST_ALLOCATED, {0, 1}, {1, 1}, 2, {0}, {0}, 0, {0, 1}, 2, 1, 1, 0, NULL},
    /* 7: NodeAffinityArgs addedAffinity (YAML): required (disk In [ssd]) or
     * (zone In [z-b, z-c]); preferred 7 rank Gt 4, 3 rack In [r1, r2], and
     * a weight-0 term that counts nothing; NodeAffinity weight 3 */
    {"added", DEF_FILTERS,
     {[BERTH_KP_TAINT_TOLERATION] = 3, [BERTH_KP_NODE_AFFINITY] = 3,
      [BERTH_KP_NODE_RESOURCES_FIT] = 1, [BERTH_KP_POD_TOPOLOGY_SPREAD] = 2,
      [BERTH_KP_INTER_POD_AFFINITY] = 2, [BERTH_KP_BALANCED_ALLOCATION] = 1,
      [BERTH_KP_IMAGE_LOCALITY] = 1},
     BERTH_FIT_LEAST_ALLOCATED, {0, 1}, {1, 1}, 2, {0}, {0}, 0, {0, 1}, 2, 1, 1, 0,
     KSC_HEAD "profiles:\n- schedulerName: default-scheduler\n  plugins:\n"
              "    score:\n      enabled: [{name: NodeAffinity, weight: 3}]\n"
              "  pluginConfig:\n  - name: NodeAffinity\n    args:\n      addedAffinity:\n"
              "        requiredDuringSchedulingIgnoredDuringExecution:\n"
              "          nodeSelectorTerms:\n"
              "          - matchExpressions: [{key: disk, operator: In, values: [ssd]}]\n"
              "          - matchExpressions: [{key: topology.kubernetes.io/zone, operator: In, "
              "values: [z-b, z-c]}]\n"
              "        preferredDuringSchedulingIgnoredDuringExecution:\n"
              "        - weight: 7\n          preference:\n"
              "            matchExpressions: [{key: rank, operator: Gt, values: [\"4\"]}]\n"
              "        - weight: 3\n          preference:\n"
              "            matchExpressions: [{key: rack, operator: In, values: [r1, r2]}]\n"
              "        - weight: 0\n          preference:\n"
              "            matchExpressions: [{key: disk, operator: Exists}]\n",
     1},
};
#define NPROFILES (sizeof PROFILES / sizeof *PROFILES)

/* ======================================================================
 * The reference scheduler (plain; SPEC 2.5)
 * ==================================================================== */

typedef struct dec {
    int seen;
    int node;                       /* sorted node index, -1 none */
    uint32_t nfeas;
    uint8_t feas[MAXN];
    int scored;                     /* >= 2 feasible: scores below valid */
    int prescore_error;             /* >= 2 feasible, NodeAffinity's PreScore failed */
    int64_t sc[NKP][MAXN];
    int64_t tot[MAXN];
} dec;

typedef struct ref {
    const berth_kcluster *k;
    const rprof *pf;
    uint32_t N, P;
    uint32_t ord[MAXN];             /* sorted index -> k->nodes index */
    int pnode[MAXP];                /* pod -> sorted node index, -1 */
    int64_t req[MAXP][BERTH_KUBE_MAX_RES], nz[MAXP][BERTH_KUBE_MAX_RES];
    uint32_t np[MAXN], pods[MAXN][MAXP];
    int64_t reqd[MAXN][BERTH_KUBE_MAX_RES], nzd[MAXN][2];
    uint32_t next_start;
    uint32_t queue[MAXP], nq;
} ref;

static const berth_knode *ND(const ref *r, uint32_t i) { return &r->k->nodes[r->ord[i]]; }

static const char *lab(const berth_labels *l, const char *key)
{
    for (uint32_t i = 0; i < l->n; i++)
        if (!strcmp(l->items[i].key, key))
            return l->items[i].value;
    return NULL;
}

static int streq0(const char *a, const char *b) { return !strcmp(a ? a : "", b ? b : ""); }

static int parse_int(const char *s, int64_t *out)
{
    if (!s || !*s)
        return 0;
    int neg = 0;
    if (*s == '-' || *s == '+')
        neg = *s++ == '-';
    if (!*s)
        return 0;
    int64_t v = 0;
    for (; *s; s++) {
        if (*s < '0' || *s > '9' || v > 100000000000LL)
            return 0;
        v = v * 10 + (*s - '0');
    }
    *out = neg ? -v : v;
    return 1;
}

static int r_req(const berth_requirement *q, const berth_labels *l)
{
    const char *v = lab(l, q->key);
    switch (q->op) {
    case BERTH_SEL_IN:
    case BERTH_SEL_NOTIN: {
        int any = 0;
        for (uint32_t i = 0; v && i < q->nvalues; i++)
            any |= !strcmp(v, q->values[i]);
        return q->op == BERTH_SEL_IN ? any : !any;
    }
    case BERTH_SEL_EXISTS: return v != NULL;
    case BERTH_SEL_DOESNOTEXIST: return v == NULL;
    case BERTH_SEL_GT:
    case BERTH_SEL_LT: {
        int64_t x, y;
        if (!v || q->nvalues != 1 || !parse_int(v, &x) || !parse_int(q->values[0], &y))
            return 0;
        return q->op == BERTH_SEL_GT ? x > y : x < y;
    }
    }
    return 0;
}

static int r_sel(const berth_selector *s, const berth_labels *l)
{
    if (s->nothing)
        return 0;
    for (uint32_t i = 0; i < s->n; i++)
        if (!r_req(&s->reqs[i], l))
            return 0;
    return 1;
}

/* labels.NewRequirement accepts the values: label values (<= 63 of
 * [A-Za-z0-9_.-], alphanumeric at both ends, or empty), Gt/Lt integers */
static int r_parses(const berth_requirement *q)
{
    for (uint32_t i = 0; i < q->nvalues; i++) {
        const char *v = q->values[i];
        size_t n = strlen(v);
        int64_t x;
        if (n > 63 || ((q->op == BERTH_SEL_GT || q->op == BERTH_SEL_LT) && !parse_int(v, &x)))
            return 0;
        for (size_t j = 0; j < n; j++) {
            int an = (v[j] >= 'a' && v[j] <= 'z') || (v[j] >= 'A' && v[j] <= 'Z') ||
                     (v[j] >= '0' && v[j] <= '9');
            if (!an && ((j == 0 || j == n - 1) || !strchr("-_.", v[j])))
                return 0;
        }
    }
    return 1;
}

static int r_term(const berth_kterm *t, const berth_knode *n)
{
    if (!t->nexprs && !t->nfields)
        return 0;
    for (uint32_t i = 0; i < t->nexprs; i++)
        if (!r_parses(&t->exprs[i]))
            return 0; /* a term that does not parse matches nothing */
    for (uint32_t i = 0; i < t->nexprs; i++)
        if (!r_req(&t->exprs[i], &n->labels))
            return 0;
    for (uint32_t i = 0; i < t->nfields; i++) {
        const berth_requirement *f = &t->fields[i];
        int any = 0;
        for (uint32_t j = 0; j < f->nvalues; j++)
            any |= !strcmp(f->values[j], n->name);
        if (strcmp(f->key, "metadata.name") || (f->op == BERTH_SEL_IN ? !any : f->op == BERTH_SEL_NOTIN ? any : 1))
            return 0;
    }
    return 1;
}

/* nodeSelector and required node affinity */
static int r_node_required(const berth_kpod *p, const berth_knode *n)
{
    for (uint32_t i = 0; i < p->node_selector.n; i++) {
        const char *v = lab(&n->labels, p->node_selector.items[i].key);
        if (!v || strcmp(v, p->node_selector.items[i].value))
            return 0;
    }
    if (p->has_req_affinity) {
        for (uint32_t t = 0; t < p->nreq_terms; t++)
            if (r_term(&p->req_terms[t], n))
                return 1;
        return 0;
    }
    return 1;
}

/* profile 7's addedAffinity */
static int r_added_req(const berth_knode *n)
{
    const char *disk = lab(&n->labels, "disk"), *zone = lab(&n->labels, ZONE);
    return (disk && !strcmp(disk, "ssd")) ||
           (zone && (!strcmp(zone, "z-b") || !strcmp(zone, "z-c")));
}

static int64_t r_added_pref(const berth_knode *n)
{
    const char *rank = lab(&n->labels, "rank"), *rack = lab(&n->labels, "rack");
    int64_t x, w = 0;
    if (rank && parse_int(rank, &x) && x > 4)
        w += 7;
    if (rack && (!strcmp(rack, "r1") || !strcmp(rack, "r2")))
        w += 3;
    return w;
}

/* NodeAffinity's PreScore fails: a preferred term (weight > 0, not empty)
 * that does not parse */
static int r_prescore_fails(const berth_kpod *p)
{
    for (uint32_t t = 0; t < p->npref_terms; t++) {
        const berth_kterm *tm = &p->pref_terms[t].term;
        for (uint32_t i = 0; p->pref_terms[t].weight && i < tm->nexprs; i++)
            if (!r_parses(&tm->exprs[i]))
                return 1;
    }
    return 0;
}

static int r_tolerates(const berth_toleration *t, const berth_taint *x)
{
    if (t->effect != BERTH_EFFECT_ALL && t->effect != x->effect)
        return 0;
    if (t->key && *t->key && strcmp(t->key, x->key))
        return 0;
    if (t->op == BERTH_TOL_EXISTS)
        return 1;
    return streq0(t->value, x->value);
}

static int r_tolerated(const berth_kpod *p, const berth_taint *x)
{
    for (uint32_t i = 0; i < p->ntols; i++)
        if (r_tolerates(&p->tols[i], x))
            return 1;
    return 0;
}

static int r_hard_taints_ok(const berth_kpod *p, const berth_knode *n)
{
    for (uint32_t i = 0; i < n->ntaints; i++)
        if ((n->taints[i].effect == BERTH_EFFECT_NOSCHEDULE ||
             n->taints[i].effect == BERTH_EFFECT_NOEXECUTE) && !r_tolerated(p, &n->taints[i]))
            return 0;
    return 1;
}

/* SPEC 2.5 "Pod requests"; nz: with the scoring defaults for cpu/memory */
static int64_t cval(const berth_kcontainer *c, uint32_t r, int nz)
{
    if (!(c->has_req & BIT(r)))
        return nz && r == BERTH_KRES_CPU ? 100 : nz && r == BERTH_KRES_MEMORY ? 200 * MI : 0;
    return c->req[r];
}

static void r_pod_req(const berth_kpod *p, int64_t *out, int nz)
{
    for (uint32_t r = 0; r < BERTH_KUBE_MAX_RES; r++) {
        int64_t sum = 0, side = 0, initmax = 0;
        for (uint32_t c = 0; c < p->ncontainers; c++)
            sum += cval(&p->containers[c], r, nz);
        for (uint32_t c = 0; c < p->ninit; c++) {
            int64_t v = cval(&p->init[c], r, nz);
            if (p->init[c].sidecar) {
                side += v;
                if (side > initmax)
                    initmax = side;
            } else if (v + side > initmax) {
                initmax = v + side;
            }
        }
        sum += side;
        out[r] = (sum > initmax ? sum : initmax) + p->overhead[r];
    }
}

static const berth_labels *ns_labels(const ref *r, const char *ns)
{
    static const berth_labels none = {0};
    for (uint32_t i = 0; i < r->k->nnamespaces; i++)
        if (!strcmp(r->k->namespaces[i].name, ns))
            return &r->k->namespaces[i].labels;
    return &none;
}

/* pod affinity term t of owner matches target */
static int r_aff(const ref *r, const berth_kaffinity_term *t, const berth_kpod *owner,
                 const berth_kpod *target)
{
    int ok = 0;
    if (!t->nnamespaces && !t->has_ns_selector) {
        ok = !strcmp(owner->ns, target->ns);
    } else {
        for (uint32_t i = 0; i < t->nnamespaces; i++)
            ok |= !strcmp(t->namespaces[i], target->ns);
        if (!ok && t->has_ns_selector)
            ok = r_sel(&t->ns_selector, ns_labels(r, target->ns));
    }
    return ok && r_sel(&t->selector, &target->labels);
}

/* ---- small (key, value) -> count map ---- */
typedef struct pent { const char *k, *v; int64_t n; } pent;
typedef struct pmap { pent *a; uint32_t n, cap; } pmap;

static int64_t *pm_at(pmap *m, const char *k, const char *v, int create)
{
    for (uint32_t i = 0; i < m->n; i++)
        if (!strcmp(m->a[i].k, k) && !strcmp(m->a[i].v, v))
            return &m->a[i].n;
    if (!create)
        return NULL;
    if (m->n == m->cap) {
        m->cap = m->cap ? 2 * m->cap : 16;
        m->a = realloc(m->a, m->cap * sizeof *m->a);
    }
    m->a[m->n] = (pent){k, v, 0};
    return &m->a[m->n++].n;
}
static int64_t pm_get(pmap *m, const char *k, const char *v)
{
    int64_t *x = pm_at(m, k, v, 0);
    return x ? *x : 0;
}

/* ---- per-pod context ---- */
typedef struct spread_c {
    const berth_kspread *c;
    berth_kspread own;              /* for the defaults */
    pmap cnt;                       /* filter: (key,value) -> matchNum */
    int64_t min;
} spread_c;

typedef struct pctx {
    const berth_kpod *p;
    uint32_t pi;
    spread_c hard[4];
    uint32_t nhard;
    spread_c soft[4];
    uint32_t nsoft;
    int own_constraints;
    berth_requirement defreq[8];
    pmap aff, anti, exanti, ipascore;
} pctx;

static uint32_t count_match(const ref *r, uint32_t n, const berth_selector *s, const char *ns)
{
    uint32_t c = 0;
    for (uint32_t i = 0; i < r->np[n]; i++) {
        const berth_kpod *e = &r->k->pods[r->pods[n][i]];
        if (e->terminating || strcmp(e->ns, ns))
            continue;
        c += r_sel(s, &e->labels);
    }
    return c;
}

static int has_keys(const berth_knode *n, spread_c *cs, uint32_t nc)
{
    for (uint32_t i = 0; i < nc; i++)
        if (!lab(&n->labels, cs[i].c->topology_key))
            return 0;
    return 1;
}

static int inclusion(const berth_kspread *c, const berth_kpod *p, const berth_knode *n)
{
    if (c->honor_node_affinity && !r_node_required(p, n))
        return 0;
    if (c->honor_node_taints && !r_hard_taints_ok(p, n))
        return 0;
    return 1;
}

static void ctx_init(ref *r, pctx *x, uint32_t pi)
{
    memset(x, 0, sizeof *x);
    const berth_kpod *p = &r->k->pods[pi];
    x->p = p;
    x->pi = pi;
    x->own_constraints = p->nspread > 0;
    for (uint32_t i = 0; i < p->nspread; i++) {
        if (p->spread[i].do_not_schedule)
            x->hard[x->nhard++].c = &p->spread[i];
        else
            x->soft[x->nsoft++].c = &p->spread[i];
    }
    if (!p->nspread && r->pf->sysdef) {
        /* system defaults: selector = services' selectors merged + the RS's */
        uint32_t nr = 0;
        for (uint32_t w = 0; w < r->k->nworkloads; w++) {
            const berth_kworkload *wl = &r->k->workloads[w];
            int take = 0;
            if (!strcmp(wl->kind, "Service"))
                take = !strcmp(wl->ns, p->ns) && wl->selector.n && r_sel(&wl->selector, &p->labels);
            else if (!strcmp(wl->kind, "ReplicaSet"))
                take = p->owner_kind && !strcmp(p->owner_kind, "ReplicaSet") &&
                       !strcmp(wl->ns, p->ns) && !strcmp(wl->name, p->owner_name);
            for (uint32_t q = 0; take && q < wl->selector.n && nr < 8; q++) {
                int dup = 0;
                for (uint32_t j = 0; j < nr; j++)
                    dup |= !strcmp(x->defreq[j].key, wl->selector.reqs[q].key);
                if (!dup)
                    x->defreq[nr++] = wl->selector.reqs[q];
            }
        }
        if (nr) {
            berth_selector s = {x->defreq, nr, 0};
            x->soft[0].own = (berth_kspread){.max_skew = 3, .topology_key = HOSTNAME,
                                             .selector = s, .min_domains = 1,
                                             .honor_node_affinity = 1};
            x->soft[1].own = (berth_kspread){.max_skew = 5, .topology_key = ZONE, .selector = s,
                                             .min_domains = 1, .honor_node_affinity = 1};
            x->soft[0].c = &x->soft[0].own;
            x->soft[1].c = &x->soft[1].own;
            x->nsoft = 2;
        }
    }
    /* PodTopologySpread filter state */
    for (uint32_t i = 0; i < x->nhard; i++) {
        spread_c *h = &x->hard[i];
        for (uint32_t m = 0; m < r->N; m++) {
            const berth_knode *nd = ND(r, m);
            if (!has_keys(nd, x->hard, x->nhard) || !inclusion(h->c, p, nd))
                continue;
            *pm_at(&h->cnt, h->c->topology_key, lab(&nd->labels, h->c->topology_key), 1) +=
                count_match(r, m, &h->c->selector, p->ns);
        }
        int32_t md = h->c->min_domains > 0 ? h->c->min_domains : 1;
        h->min = 0;
        if (h->cnt.n >= (uint32_t)md) {
            h->min = INT64_MAX;
            for (uint32_t j = 0; j < h->cnt.n; j++)
                if (h->cnt.a[j].n < h->min)
                    h->min = h->cnt.a[j].n;
        }
    }
    /* InterPodAffinity filter state */
    for (uint32_t m = 0; m < r->N; m++) {
        const berth_knode *nd = ND(r, m);
        for (uint32_t i = 0; i < r->np[m]; i++) {
            const berth_kpod *e = &r->k->pods[r->pods[m][i]];
            if (p->naff_req) {
                int all = 1;
                for (uint32_t t = 0; t < p->naff_req; t++)
                    all &= r_aff(r, &p->aff_req[t], p, e);
                for (uint32_t t = 0; all && t < p->naff_req; t++) {
                    const char *v = lab(&nd->labels, p->aff_req[t].topology_key);
                    if (v)
                        *pm_at(&x->aff, p->aff_req[t].topology_key, v, 1) += 1;
                }
            }
            for (uint32_t t = 0; t < p->nanti_req; t++) {
                const char *v = lab(&nd->labels, p->anti_req[t].topology_key);
                if (v && r_aff(r, &p->anti_req[t], p, e))
                    *pm_at(&x->anti, p->anti_req[t].topology_key, v, 1) += 1;
            }
            for (uint32_t t = 0; t < e->nanti_req; t++) {
                const char *v = lab(&nd->labels, e->anti_req[t].topology_key);
                if (v && r_aff(r, &e->anti_req[t], e, p))
                    *pm_at(&x->exanti, e->anti_req[t].topology_key, v, 1) += 1;
            }
            /* scoring map */
            const struct { const berth_kaffinity_term *t; uint32_t n; int sign; int incoming; } sets[] = {
                {p->aff_pref, p->naff_pref, 1, 1},   {p->anti_pref, p->nanti_pref, -1, 1},
                {e->aff_req, e->naff_req, 0, 0},     {e->aff_pref, e->naff_pref, 1, 0},
                {e->anti_pref, e->nanti_pref, -1, 0},
            };
            for (int s = 0; s < 5; s++)
                for (uint32_t t = 0; t < sets[s].n; t++) {
                    const berth_kaffinity_term *term = &sets[s].t[t];
                    if (sets[s].sign == 0 && r->pf->hard <= 0)
                        continue;
                    int match = sets[s].incoming ? r_aff(r, term, p, e) : r_aff(r, term, e, p);
                    const char *v = lab(&nd->labels, term->topology_key);
                    if (!match || !v)
                        continue;
                    int64_t d = sets[s].sign == 0 ? r->pf->hard : sets[s].sign * (int64_t)term->weight;
                    *pm_at(&x->ipascore, term->topology_key, v, 1) += d;
                }
        }
    }
}

static void ctx_free(pctx *x)
{
    for (uint32_t i = 0; i < x->nhard; i++)
        free(x->hard[i].cnt.a);
    free(x->aff.a);
    free(x->anti.a);
    free(x->exanti.a);
    free(x->ipascore.a);
}

static int r_feasible(const ref *r, pctx *x, uint32_t n)
{
    const berth_kpod *p = x->p;
    const berth_knode *nd = ND(r, n);
    uint32_t f = r->pf->filters;
    if ((f & BIT(BERTH_KP_NODE_UNSCHEDULABLE)) && nd->unschedulable) {
        berth_taint t = {"node.kubernetes.io/unschedulable", "", BERTH_EFFECT_NOSCHEDULE};
        if (!r_tolerated(p, &t))
            return 0;
    }
    if ((f & BIT(BERTH_KP_NODE_NAME)) && p->node_name && strcmp(p->node_name, nd->name))
        return 0;
    if ((f & BIT(BERTH_KP_TAINT_TOLERATION)) && !r_hard_taints_ok(p, nd))
        return 0;
    if ((f & BIT(BERTH_KP_NODE_AFFINITY)) &&
        ((r->pf->added && !r_added_req(nd)) || !r_node_required(p, nd)))
        return 0;
    if (f & BIT(BERTH_KP_NODE_PORTS)) {
        for (uint32_t w = 0; w < p->nports; w++)
            for (uint32_t i = 0; i < r->np[n]; i++) {
                const berth_kpod *e = &r->k->pods[r->pods[n][i]];
                for (uint32_t u = 0; u < e->nports; u++) {
                    const berth_kport *a = &p->ports[w], *b = &e->ports[u];
                    const char *ia = a->ip ? a->ip : "0.0.0.0", *ib = b->ip ? b->ip : "0.0.0.0";
                    if (a->port > 0 && a->port == b->port && a->proto == b->proto &&
                        (!strcmp(ia, "0.0.0.0") || !strcmp(ib, "0.0.0.0") || !strcmp(ia, ib)))
                        return 0;
                }
            }
    }
    if (f & BIT(BERTH_KP_NODE_RESOURCES_FIT)) {
        if ((int64_t)r->np[n] + 1 > nd->alloc_pods)
            return 0;
        for (uint32_t res = 0; res < r->k->nres; res++) {
            int64_t q = r->req[x->pi][res];
            if (q > 0 && q > nd->alloc[res] - r->reqd[n][res])
                return 0;
        }
    }
    if (f & BIT(BERTH_KP_POD_TOPOLOGY_SPREAD)) {
        for (uint32_t i = 0; i < x->nhard; i++) {
            spread_c *h = &x->hard[i];
            const char *v = lab(&nd->labels, h->c->topology_key);
            if (!v)
                return 0;
            int64_t self = r_sel(&h->c->selector, &p->labels);
            if (pm_get(&h->cnt, h->c->topology_key, v) + self - h->min > h->c->max_skew)
                return 0;
        }
    }
    if (f & BIT(BERTH_KP_INTER_POD_AFFINITY)) {
        if (p->naff_req) {
            int exist = 1;
            for (uint32_t t = 0; t < p->naff_req; t++) {
                const char *v = lab(&nd->labels, p->aff_req[t].topology_key);
                if (!v)
                    return 0;
                if (pm_get(&x->aff, p->aff_req[t].topology_key, v) <= 0)
                    exist = 0;
            }
            if (!exist) {
                int self = 1;
                for (uint32_t t = 0; t < p->naff_req; t++)
                    self &= r_aff(r, &p->aff_req[t], p, p);
                if (x->aff.n || !self)
                    return 0;
            }
        }
        for (uint32_t t = 0; t < p->nanti_req; t++) {
            const char *v = lab(&nd->labels, p->anti_req[t].topology_key);
            if (v && pm_get(&x->anti, p->anti_req[t].topology_key, v) > 0)
                return 0;
        }
        for (uint32_t i = 0; i < x->exanti.n; i++) {
            const char *v = lab(&nd->labels, x->exanti.a[i].k);
            if (v && !strcmp(v, x->exanti.a[i].v) && x->exanti.a[i].n > 0)
                return 0;
        }
    }
    return 1;
}

static void default_normalize(int64_t *s, uint32_t n, int reverse)
{
    int64_t mx = 0;
    for (uint32_t i = 0; i < n; i++)
        if (s[i] > mx)
            mx = s[i];
    for (uint32_t i = 0; i < n; i++) {
        if (mx == 0) {
            s[i] = reverse ? 100 : s[i];
            continue;
        }
        s[i] = 100 * s[i] / mx;
        if (reverse)
            s[i] = 100 - s[i];
    }
}

static int64_t shape_f(const rprof *pf, int64_t u)
{
    for (uint32_t i = 0; i < pf->nshape; i++)
        if (u <= pf->su[i]) {
            if (i == 0)
                return 10 * (int64_t)pf->ss[0];
            int64_t y0 = 10 * (int64_t)pf->ss[i - 1], y1 = 10 * (int64_t)pf->ss[i];
            return y0 + (y1 - y0) * (u - pf->su[i - 1]) / (pf->su[i] - pf->su[i - 1]);
        }
    return 10 * (int64_t)pf->ss[pf->nshape - 1];
}

static int64_t fit_score(const ref *r, pctx *x, uint32_t n)
{
    const rprof *pf = r->pf;
    const berth_knode *nd = ND(r, n);
    int64_t num = 0, wsum = 0;
    for (uint32_t i = 0; i < pf->nfr; i++) {
        uint32_t res = pf->fr[i];
        int64_t w = pf->fw[i];
        int64_t preq = r->nz[x->pi][res];
        if (res >= BERTH_KRES_FIRST_EXT && preq == 0)
            continue;
        int64_t cap = nd->alloc[res];
        if (cap == 0)
            continue;
        int64_t req = (res <= BERTH_KRES_MEMORY ? r->nzd[n][res] : r->reqd[n][res]) + preq;
        int64_t s;
        if (pf->strat == BERTH_FIT_LEAST_ALLOCATED) {
            s = req > cap ? 0 : (cap - req) * 100 / cap;
        } else if (pf->strat == BERTH_FIT_MOST_ALLOCATED) {
            s = (req > cap ? cap : req) * 100 / cap;
        } else {
            s = req > cap ? shape_f(pf, 100) : shape_f(pf, req * 100 / cap);
            if (s <= 0)
                continue;
        }
        num += s * w;
        wsum += w;
    }
    if (!wsum)
        return 0;
    if (pf->strat == BERTH_FIT_REQUESTED_TO_CAPACITY_RATIO)
        return (int64_t)round((double)num / (double)wsum);
    return num / wsum;
}

static int64_t balanced_score(const ref *r, pctx *x, uint32_t n)
{
    const rprof *pf = r->pf;
    const berth_knode *nd = ND(r, n);
    double fr[8], tot = 0;
    uint32_t k = 0;
    for (uint32_t i = 0; i < pf->nbr; i++) {
        uint32_t res = pf->br[i];
        int64_t preq = r->req[x->pi][res];
        if (res >= BERTH_KRES_FIRST_EXT && preq == 0)
            continue;
        int64_t cap = nd->alloc[res];
        if (cap == 0)
            continue;
        double f = (double)(r->reqd[n][res] + preq) / (double)cap;
        if (f > 1)
            f = 1;
        fr[k++] = f;
        tot += f;
    }
    double sd = 0;
    if (k == 2) {
        sd = fabs((fr[0] - fr[1]) / 2);
    } else if (k > 2) {
        double mean = tot / k, s = 0;
        for (uint32_t i = 0; i < k; i++)
            s += (fr[i] - mean) * (fr[i] - mean);
        sd = sqrt(s / k);
    }
    return (int64_t)((1 - sd) * 100);
}

static int64_t image_score(const ref *r, pctx *x, uint32_t n)
{
    const berth_kpod *p = x->p;
    const berth_knode *nd = ND(r, n);
    int64_t sum = 0;
    for (int pass = 0; pass < 2; pass++) {
        const berth_kcontainer *cs = pass ? p->containers : p->init;
        uint32_t nc = pass ? p->ncontainers : p->ninit;
        for (uint32_t c = 0; c < nc; c++) {
            const char *img = cs[c].image;
            if (!img)
                continue;
            for (uint32_t i = 0; i < nd->nimages; i++) {
                if (strcmp(nd->images[i].name, img))
                    continue;
                uint32_t have = 0;
                for (uint32_t m = 0; m < r->N; m++)
                    for (uint32_t j = 0; j < ND(r, m)->nimages; j++)
                        have += !strcmp(ND(r, m)->images[j].name, img);
                sum += (int64_t)((double)nd->images[i].size * ((double)have / (double)r->N));
                break;
            }
        }
    }
    int64_t lo = 23 * MI, hi = 1000 * MI * (int64_t)(p->ncontainers + p->ninit);
    if (sum < lo)
        sum = lo;
    if (sum > hi)
        sum = hi;
    return 100 * (sum - lo) / (hi - lo);
}

static void pts_scores(const ref *r, pctx *x, const uint32_t *F, uint32_t nf, int64_t *out)
{
    memset(out, 0, nf * sizeof *out);
    if (!x->nsoft)
        return;
    int require_all = x->own_constraints || !r->pf->sysdef;
    uint8_t ign[MAXN] = {0};
    uint32_t nign = 0;
    for (uint32_t i = 0; i < nf; i++)
        if (require_all && !has_keys(ND(r, F[i]), x->soft, x->nsoft))
            ign[i] = 1, nign++;
    double w[4];
    pmap vals[4];
    memset(vals, 0, sizeof vals);
    for (uint32_t c = 0; c < x->nsoft; c++) {
        const char *key = x->soft[c].c->topology_key;
        for (uint32_t i = 0; i < nf; i++) {
            /* upstream keys the pair by node.Labels[key]: a (non-ignored)
             * node without the key adds the value "" (one more domain) */
            const char *v = lab(&ND(r, F[i])->labels, key);
            if (!ign[i] && strcmp(key, HOSTNAME))
                pm_at(&vals[c], key, v ? v : "", 1);
        }
        uint32_t size = strcmp(key, HOSTNAME) ? vals[c].n : nf - nign;
        w[c] = log((double)size + 2);
        for (uint32_t m = 0; m < r->N; m++) {
            const berth_knode *nd = ND(r, m);
            if (!has_keys(nd, x->soft, x->nsoft) || !inclusion(x->soft[c].c, x->p, nd))
                continue;
            int64_t *cnt = pm_at(&vals[c], key, lab(&nd->labels, key), 0);
            if (cnt)
                *cnt += count_match(r, m, &x->soft[c].c->selector, x->p->ns);
        }
    }
    int64_t mn = INT64_MAX, mx = 0;
    for (uint32_t i = 0; i < nf; i++) {
        if (ign[i])
            continue;
        const berth_knode *nd = ND(r, F[i]);
        double s = 0;
        for (uint32_t c = 0; c < x->nsoft; c++) {
            const char *key = x->soft[c].c->topology_key;
            const char *v = lab(&nd->labels, key);
            if (!v)
                continue;
            int64_t cnt = !strcmp(key, HOSTNAME)
                              ? count_match(r, F[i], &x->soft[c].c->selector, x->p->ns)
                              : pm_get(&vals[c], key, v);
            s += (double)cnt * w[c] + (double)(x->soft[c].c->max_skew - 1);
        }
        out[i] = (int64_t)round(s);
        if (out[i] < mn) mn = out[i];
        if (out[i] > mx) mx = out[i];
    }
    for (uint32_t i = 0; i < nf; i++)
        out[i] = ign[i] ? 0 : mx == 0 ? 100 : 100 * (mx + mn - out[i]) / mx;
    for (uint32_t c = 0; c < x->nsoft; c++)
        free(vals[c].a);
}

static void ipa_scores(const ref *r, pctx *x, const uint32_t *F, uint32_t nf, int64_t *out)
{
    int64_t mn = INT64_MAX, mx = INT64_MIN;
    for (uint32_t i = 0; i < nf; i++) {
        const berth_knode *nd = ND(r, F[i]);
        int64_t s = 0;
        for (uint32_t j = 0; j < x->ipascore.n; j++) {
            const char *v = lab(&nd->labels, x->ipascore.a[j].k);
            if (v && !strcmp(v, x->ipascore.a[j].v))
                s += x->ipascore.a[j].n;
        }
        out[i] = s;
        if (s < mn) mn = s;
        if (s > mx) mx = s;
    }
    if (!x->ipascore.n)
        return;
    for (uint32_t i = 0; i < nf; i++)
        out[i] = mx > mn ? (int64_t)(100.0 * ((double)(out[i] - mn) / (double)(mx - mn))) : 0;
}

static void ref_state(ref *r)
{
    memset(r->np, 0, sizeof r->np);
    memset(r->reqd, 0, sizeof r->reqd);
    memset(r->nzd, 0, sizeof r->nzd);
    for (uint32_t p = 0; p < r->P; p++) {
        int n = r->pnode[p];
        if (n < 0)
            continue;
        r->pods[n][r->np[n]++] = p;
        for (uint32_t res = 0; res < BERTH_KUBE_MAX_RES; res++)
            r->reqd[n][res] += r->req[p][res];
        r->nzd[n][0] += r->nz[p][0];
        r->nzd[n][1] += r->nz[p][1];
    }
}

static const berth_kcluster *qsort_k;
static int cmp_q(const void *a, const void *b)
{
    const berth_kpod *x = &qsort_k->pods[*(const uint32_t *)a];
    const berth_kpod *y = &qsort_k->pods[*(const uint32_t *)b];
    if (x->priority != y->priority)
        return x->priority > y->priority ? -1 : 1;
    if (x->created != y->created)
        return x->created < y->created ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}
static const ref *sort_r;
static int cmp_ord(const void *a, const void *b)
{
    return strcmp(sort_r->k->nodes[*(const uint32_t *)a].name,
                  sort_r->k->nodes[*(const uint32_t *)b].name);
}

static int ref_node_by_name(const ref *r, const char *name)
{
    for (uint32_t i = 0; i < r->N; i++)
        if (!strcmp(ND(r, i)->name, name))
            return (int)i;
    return -1;
}

/* Runs the reference over k (not modified); out[pod]. pct: the effective
 * percentageOfNodesToScore. */
static void ref_run(ref *r, const berth_kcluster *k, const rprof *pf, dec *out)
{
    memset(r, 0, sizeof *r);
    r->k = k;
    r->pf = pf;
    r->N = k->nnodes;
    r->P = k->npods;
    assert_true(r->N <= MAXN && r->P <= MAXP);
    for (uint32_t i = 0; i < r->N; i++)
        r->ord[i] = i;
    sort_r = r;
    qsort(r->ord, r->N, sizeof *r->ord, cmp_ord);
    uint32_t queue[MAXP], nq = 0;
    for (uint32_t p = 0; p < r->P; p++) {
        const berth_kpod *pod = &k->pods[p];
        r_pod_req(pod, r->req[p], 0);
        r_pod_req(pod, r->nz[p], 1);
        /* the model's own request computation must agree */
        for (uint32_t res = 0; res < k->nres; res++) {
            assert_int_equal(r->req[p][res], pod->req[res]);
            if (res <= BERTH_KRES_MEMORY)
                assert_int_equal(r->nz[p][res], pod->req_nz[res]);
        }
        r->pnode[p] = pod->node_name ? ref_node_by_name(r, pod->node_name) : -1;
        if (!pod->node_name)
            queue[nq++] = p;
    }
    qsort_k = k;
    qsort(queue, nq, sizeof *queue, cmp_q);
    memcpy(r->queue, queue, nq * sizeof *queue);
    r->nq = nq;
    uint32_t N = r->N;
    for (uint32_t qi = 0; qi < nq; qi++) {
        uint32_t pi = queue[qi];
        dec *d = &out[pi];
        memset(d, 0, sizeof *d);
        d->seen = 1;
        d->node = -1;
        ref_state(r);
        pctx x;
        ctx_init(r, &x, pi);
        uint32_t F[MAXN], nf = 0, start = 0, maxf = N;
        int32_t pct = pf->pct;
        if (pct > 0 && pct < 100 && N >= 100) {
            uint32_t want = N * (uint32_t)pct / 100;
            maxf = want < 100 ? 100 : want;
            start = r->next_start % N;
        }
        uint32_t examined = 0;
        for (uint32_t i = 0; i < N && nf < maxf; i++) {
            uint32_t n = (start + i) % N;
            examined++;
            if (r_feasible(r, &x, n))
                F[nf++] = n;
        }
        if (maxf < N)
            r->next_start = (start + examined) % N;
        d->nfeas = nf;
        for (uint32_t i = 0; i < nf; i++)
            d->feas[F[i]] = 1;
        if (nf == 1) {
            d->node = (int)F[0];
        } else if (nf > 1 && pf->w[BERTH_KP_NODE_AFFINITY] > 0 && r_prescore_fails(x.p)) {
            d->node = -1; /* a scheduling error: no scores, not placed */
            d->prescore_error = 1;
        } else if (nf > 1) {
            d->scored = 1;
            int64_t tmp[MAXN];
            for (int pl = 0; pl < NKP; pl++) {
                if (pf->w[pl] <= 0)
                    continue;
                for (uint32_t i = 0; i < nf; i++)
                    tmp[i] = 0;
                switch (pl) {
                case BERTH_KP_TAINT_TOLERATION:
                    for (uint32_t i = 0; i < nf; i++) {
                        const berth_knode *nd = ND(r, F[i]);
                        for (uint32_t t = 0; t < nd->ntaints; t++) {
                            if (nd->taints[t].effect != BERTH_EFFECT_PREFERNOSCHEDULE)
                                continue;
                            int tol = 0;
                            for (uint32_t j = 0; j < x.p->ntols; j++)
                                if ((x.p->tols[j].effect == BERTH_EFFECT_ALL ||
                                     x.p->tols[j].effect == BERTH_EFFECT_PREFERNOSCHEDULE) &&
                                    r_tolerates(&x.p->tols[j], &nd->taints[t]))
                                    tol = 1;
                            tmp[i] += !tol;
                        }
                    }
                    default_normalize(tmp, nf, 1);
                    break;
                case BERTH_KP_NODE_AFFINITY:
                    for (uint32_t i = 0; i < nf; i++) {
                        for (uint32_t t = 0; t < x.p->npref_terms; t++)
                            if (r_term(&x.p->pref_terms[t].term, ND(r, F[i])))
                                tmp[i] += x.p->pref_terms[t].weight;
                        if (pf->added)
                            tmp[i] += r_added_pref(ND(r, F[i]));
                    }
                    default_normalize(tmp, nf, 0);
                    break;
                case BERTH_KP_NODE_RESOURCES_FIT:
                    for (uint32_t i = 0; i < nf; i++)
                        tmp[i] = fit_score(r, &x, F[i]);
                    break;
                case BERTH_KP_BALANCED_ALLOCATION: {
                    int any = 0;
                    for (uint32_t j = 0; j < pf->nbr; j++)
                        any |= r->req[pi][pf->br[j]] != 0;
                    for (uint32_t i = 0; any && i < nf; i++)
                        tmp[i] = balanced_score(r, &x, F[i]);
                    break;
                }
                case BERTH_KP_IMAGE_LOCALITY:
                    for (uint32_t i = 0; i < nf; i++)
                        tmp[i] = image_score(r, &x, F[i]);
                    break;
                case BERTH_KP_POD_TOPOLOGY_SPREAD:
                    pts_scores(r, &x, F, nf, tmp);
                    break;
                case BERTH_KP_INTER_POD_AFFINITY:
                    ipa_scores(r, &x, F, nf, tmp);
                    break;
                default:
                    break;
                }
                for (uint32_t i = 0; i < nf; i++) {
                    d->sc[pl][F[i]] = tmp[i];
                    d->tot[F[i]] += pf->w[pl] * tmp[i];
                }
            }
            int best = -1;
            for (uint32_t i = 0; i < nf; i++) {
                int n = (int)F[i];
                if (best < 0 || d->tot[n] > d->tot[best] || (d->tot[n] == d->tot[best] && n < best))
                    best = n;
            }
            d->node = best;
        }
        if (d->node >= 0)
            r->pnode[pi] = d->node;
        ctx_free(&x);
    }
}

/* ======================================================================
 * Running berth and comparing
 * ==================================================================== */

typedef struct bctx {
    const ref *r;
    dec *out;
    int detail;
} bctx;

static void on_dec(void *vctx, const berth_kcluster *k, const berth_kdecision *d)
{
    bctx *c = vctx;
    dec *o = &c->out[d->pod];
    memset(o, 0, sizeof *o);
    o->seen = 1;
    o->node = d->node == BERTH_KUBE_NONE ? -1 : ref_node_by_name(c->r, k->nodes[d->node].name);
    o->nfeas = d->nfeasible;
    if (!c->detail)
        return;
    for (uint32_t i = 0; i < d->nfeasible; i++) {
        int n = ref_node_by_name(c->r, k->nodes[d->feasible[i]].name);
        assert_true(n >= 0);
        o->feas[n] = 1;
        if (!d->totals)
            continue; /* not scored: NodeAffinity's PreScore failed */
        o->tot[n] = d->totals[i];
        for (uint32_t s = 0; s < d->nscore_plugins; s++)
            o->sc[d->score_plugins[s]][n] = d->plugin_scores[(size_t)s * d->cap + i];
    }
    o->scored = d->nfeasible > 1 && d->totals;
    if (d->nfeasible > 1 && !d->totals)
        assert_non_null(strstr(d->summary ? d->summary : "", "running PreScore plugin"));
}

static int g_fail;
static char g_where[160];

static void report(const berth_kcluster *k, uint32_t p, const char *fmt_, ...)
{
    if (g_fail++ > 12)
        return;
    va_list ap;
    va_start(ap, fmt_);
    fprintf(stderr, "MISMATCH %s pod %s/%s: ", g_where, k->pods[p].ns, k->pods[p].name);
    vfprintf(stderr, fmt_, ap);
    fprintf(stderr, "\n");
    va_end(ap);
}

static void compare(const ref *r, const rprof *pf, const dec *want, const dec *got, int detail)
{
    const berth_kcluster *k = r->k;
    int before = g_fail;
    for (uint32_t qi = 0; qi < r->nq && g_fail == before; qi++) {
        uint32_t p = r->queue[qi];
        if (want[p].seen != got[p].seen) {
            report(k, p, "decided: ref %d berth %d", want[p].seen, got[p].seen);
            continue;
        }
        const dec *a = &want[p], *b = &got[p];
        const char *na = a->node >= 0 ? ND(r, (uint32_t)a->node)->name : "(none)";
        const char *nb = b->node >= 0 ? ND(r, (uint32_t)b->node)->name : "(none)";
        if (a->node != b->node || a->nfeas != b->nfeas) {
            report(k, p, "node ref %s berth %s, nfeasible ref %u berth %u", na, nb, a->nfeas,
                   b->nfeas);
            for (uint32_t n = 0; detail && n < r->N; n++)
                if (a->feas[n] != b->feas[n])
                    fprintf(stderr, "   feasible %s: ref %d berth %d\n", ND(r, n)->name, a->feas[n], b->feas[n]);
            if (a->node >= 0 && b->node >= 0 && a->scored && detail) {
                for (int pl = 0; pl < NKP; pl++)
                    if (pf->w[pl] > 0)
                        fprintf(stderr, "   %s: ref %s=%lld %s=%lld berth %s=%lld %s=%lld\n",
                                berth_kplugin_name((berth_kplugin)pl), na,
                                (long long)a->sc[pl][a->node], nb, (long long)a->sc[pl][b->node],
                                na, (long long)b->sc[pl][a->node], nb,
                                (long long)b->sc[pl][b->node]);
            }
            continue;
        }
        if (!detail)
            continue;
        for (uint32_t n = 0; n < r->N; n++) {
            if (a->feas[n] != b->feas[n]) {
                report(k, p, "node %s feasible: ref %d berth %d", ND(r, n)->name, a->feas[n],
                       b->feas[n]);
                break;
            }
            if (!a->feas[n] || !a->scored)
                continue;
            int bad = a->tot[n] != b->tot[n];
            for (int pl = 0; pl < NKP; pl++)
                bad |= a->sc[pl][n] != b->sc[pl][n];
            if (bad) {
                char buf[512];
                size_t off = 0;
                for (int pl = 0; pl < NKP; pl++)
                    if (a->sc[pl][n] != b->sc[pl][n])
                        off += (size_t)snprintf(buf + off, sizeof buf - off, " %s ref %lld berth %lld;",
                                                berth_kplugin_name((berth_kplugin)pl),
                                                (long long)a->sc[pl][n], (long long)b->sc[pl][n]);
                report(k, p, "node %s scores:%s total ref %lld berth %lld", ND(r, n)->name, buf,
                       (long long)a->tot[n], (long long)b->tot[n]);
                break;
            }
        }
    }
}

/* the profile for berth: filled struct, or loaded from KSC YAML into k */
static void apply_profile(berth_kcluster *k, const rprof *pf, berth_kprofile *bp,
                          berth_kube_options *opt)
{
    if (pf->ksc) {
        berth_error e;
        berth_source src;
        berth_error_clear(&e);
        int rc = berth_doc_load_buffer(&k->arena, "ksc.yaml", pf->ksc, strlen(pf->ksc), &src, &e);
        if (!rc)
            rc = berth_kube_load(k, &src, 1, &e);
        if (rc)
            fail_msg("KSC load failed: %s", e.msg);
        assert_true(k->nprofiles >= 1);
        opt->profile = &k->profiles[0];
        if (pf->pct) /* the top-level value */
            k->percentage_of_nodes_to_score = pf->pct;
        return;
    }
    berth_kube_default_profile(k, bp);
    bp->filters = pf->filters;
    bp->scores = 0;
    for (int i = 0; i < NKP; i++) {
        bp->weight[i] = pf->w[i];
        if (pf->w[i] > 0)
            bp->scores |= BIT(i);
    }
    bp->fit_strategy = pf->strat;
    bp->nfit_res = pf->nfr;
    for (uint32_t i = 0; i < pf->nfr; i++)
        bp->fit_res[i] = (berth_kres_weight){pf->fr[i], pf->fw[i]};
    bp->nshape = pf->nshape;
    for (uint32_t i = 0; i < pf->nshape; i++) {
        bp->shape_util[i] = pf->su[i];
        bp->shape_score[i] = pf->ss[i];
    }
    bp->nbalanced_res = pf->nbr;
    for (uint32_t i = 0; i < pf->nbr; i++)
        bp->balanced_res[i] = (berth_kres_weight){pf->br[i], 1};
    bp->hard_pod_affinity_weight = pf->hard;
    bp->spread_system_defaults = pf->sysdef;
    bp->percentage_of_nodes_to_score = pf->pct;
    opt->profile = bp;
}

/* ---- the same cluster as YAML (kubectl get -o yaml style) ---- */

typedef struct sbuf { char *s; size_t n, cap; } sbuf;
static void sb(sbuf *b, const char *f, ...)
{
    va_list ap;
    for (;;) {
        va_start(ap, f);
        int w = vsnprintf(b->s + b->n, b->cap - b->n, f, ap);
        va_end(ap);
        if ((size_t)w < b->cap - b->n) {
            b->n += (size_t)w;
            return;
        }
        b->cap = b->cap * 2 + (size_t)w + 256;
        b->s = realloc(b->s, b->cap);
    }
}

static const char *opname(berth_sel_op op) { return berth_sel_op_name(op); }

static void y_reqs(sbuf *b, const char *ind, const berth_requirement *r, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        sb(b, "%s- key: %s\n%s  operator: %s\n", ind, r[i].key, ind, opname(r[i].op));
        if (r[i].nvalues) {
            sb(b, "%s  values:", ind);
            for (uint32_t j = 0; j < r[i].nvalues; j++)
                sb(b, "%s\"%s\"", j ? ", " : " [", r[i].values[j]);
            sb(b, "]\n");
        }
    }
}

static void y_selector(sbuf *b, const char *ind, const berth_selector *s)
{
    /* In with one value as matchLabels, the rest as matchExpressions */
    char ind2[64];
    snprintf(ind2, sizeof ind2, "%s  ", ind);
    int ml = 0, me = 0;
    for (uint32_t i = 0; i < s->n; i++) {
        if (s->reqs[i].op == BERTH_SEL_IN && s->reqs[i].nvalues == 1)
            ml++;
        else
            me++;
    }
    if (!ml && !me) {
        sb(b, "%s{}\n", ind);
        return;
    }
    if (ml) {
        sb(b, "%smatchLabels:\n", ind);
        for (uint32_t i = 0; i < s->n; i++)
            if (s->reqs[i].op == BERTH_SEL_IN && s->reqs[i].nvalues == 1)
                sb(b, "%s%s: \"%s\"\n", ind2, s->reqs[i].key, s->reqs[i].values[0]);
    }
    if (me) {
        sb(b, "%smatchExpressions:\n", ind);
        for (uint32_t i = 0; i < s->n; i++)
            if (!(s->reqs[i].op == BERTH_SEL_IN && s->reqs[i].nvalues == 1))
                y_reqs(b, ind2, &s->reqs[i], 1);
    }
}

static void y_labels(sbuf *b, const char *ind, const berth_labels *l)
{
    for (uint32_t i = 0; i < l->n; i++)
        sb(b, "%s%s: \"%s\"\n", ind, l->items[i].key, l->items[i].value);
}

static void y_qty(sbuf *b, uint32_t res, int64_t v)
{
    if (res == BERTH_KRES_CPU)
        sb(b, "%lldm", (long long)v);
    else
        sb(b, "%lld", (long long)v);
}

static void y_container(sbuf *b, const berth_kcluster *k, const berth_kcontainer *c,
                        const berth_kpod *p, int with_ports)
{
    sb(b, "    - name: %s\n      image: %s\n", c->name, c->image);
    if (c->sidecar)
        sb(b, "      restartPolicy: Always\n");
    if (with_ports && p->nports) {
        sb(b, "      ports:\n");
        for (uint32_t i = 0; i < p->nports; i++) {
            static const char *pr[] = {"TCP", "UDP", "SCTP"};
            sb(b, "      - containerPort: %d\n        hostPort: %d\n        protocol: %s\n",
               8000 + (int)i, p->ports[i].port, pr[p->ports[i].proto]);
            if (p->ports[i].ip && strcmp(p->ports[i].ip, "0.0.0.0"))
                sb(b, "        hostIP: %s\n", p->ports[i].ip);
        }
    }
    sb(b, "      resources:\n");
    for (int kind = 0; kind < 2; kind++) {
        uint32_t has = kind ? c->has_lim : c->has_req;
        const int64_t *v = kind ? c->lim : c->req;
        if (!has)
            continue;
        sb(b, "        %s:\n", kind ? "limits" : "requests");
        for (uint32_t r = 0; r < k->nres; r++)
            if (has & BIT(r)) {
                sb(b, "          %s: \"", k->res_names[r]);
                y_qty(b, r, v[r]);
                sb(b, "\"\n");
            }
    }
}

static void y_aff_terms(sbuf *b, const berth_kaffinity_term *t, uint32_t n, int pref)
{
    for (uint32_t i = 0; i < n; i++) {
        const char *ind = pref ? "          " : "        ";
        if (pref)
            sb(b, "        - weight: %d\n          podAffinityTerm:\n", t[i].weight);
        else
            sb(b, "        -");
        char in2[64];
        snprintf(in2, sizeof in2, "%s  ", ind);
        sb(b, "%stopologyKey: %s\n", pref ? in2 : " ", t[i].topology_key);
        sb(b, "%slabelSelector:\n", in2);
        char in4[80];
        snprintf(in4, sizeof in4, "%s  ", in2);
        y_selector(b, in4, &t[i].selector);
        if (t[i].nnamespaces) {
            sb(b, "%snamespaces:", in2);
            for (uint32_t j = 0; j < t[i].nnamespaces; j++)
                sb(b, "%s%s", j ? ", " : " [", t[i].namespaces[j]);
            sb(b, "]\n");
        }
        if (t[i].has_ns_selector) {
            if (!t[i].ns_selector.n) {
                sb(b, "%snamespaceSelector: {}\n", in2);
            } else {
                sb(b, "%snamespaceSelector:\n", in2);
                y_selector(b, in4, &t[i].ns_selector);
            }
        }
    }
}

static void y_node_term(sbuf *b, const char *ind, const berth_kterm *t)
{
    char in2[64];
    snprintf(in2, sizeof in2, "%s  ", ind);
    if (!t->nexprs && !t->nfields) {
        sb(b, "%s- {}\n", ind);
        return;
    }
    int first = 1;
    if (t->nexprs) {
        sb(b, "%s- matchExpressions:\n", ind);
        y_reqs(b, in2, t->exprs, t->nexprs);
        first = 0;
    }
    if (t->nfields) {
        sb(b, "%s%smatchFields:\n", first ? ind : in2, first ? "- " : "");
        y_reqs(b, in2, t->fields, t->nfields);
    }
}

static char *to_yaml(const berth_kcluster *k)
{
    sbuf b = {0};
    sb(&b, "apiVersion: v1\nkind: List\nitems:\n");
    for (uint32_t i = 0; i < k->nnamespaces; i++) {
        sb(&b, "- apiVersion: v1\n  kind: Namespace\n  metadata:\n    name: %s\n    labels:\n",
           k->namespaces[i].name);
        y_labels(&b, "      ", &k->namespaces[i].labels);
    }
    for (uint32_t i = 0; i < k->nworkloads; i++) {
        const berth_kworkload *w = &k->workloads[i];
        int svc = !strcmp(w->kind, "Service");
        sb(&b, "- apiVersion: %s\n  kind: %s\n  metadata:\n    name: %s\n    namespace: %s\n"
               "  spec:\n    selector:\n",
           svc ? "v1" : "apps/v1", w->kind, w->name, w->ns);
        if (svc) {
            for (uint32_t j = 0; j < w->selector.n; j++)
                sb(&b, "      %s: \"%s\"\n", w->selector.reqs[j].key, w->selector.reqs[j].values[0]);
        } else {
            y_selector(&b, "      ", &w->selector);
            /* a template is required; replicas 0: the ReplicaSet is read
             * for its selector (this test does not expand workloads) */
            sb(&b, "    replicas: 0\n    template:\n      spec:\n        containers: []\n");
        }
    }
    static const char *eff[] = {"", "NoSchedule", "PreferNoSchedule", "NoExecute"};
    for (uint32_t i = 0; i < k->nnodes; i++) {
        const berth_knode *n = &k->nodes[i];
        sb(&b, "- apiVersion: v1\n  kind: Node\n  metadata:\n    name: %s\n    labels:\n", n->name);
        y_labels(&b, "      ", &n->labels);
        sb(&b, "  spec:\n");
        if (n->unschedulable)
            sb(&b, "    unschedulable: true\n");
        if (n->ntaints) {
            sb(&b, "    taints:\n");
            for (uint32_t t = 0; t < n->ntaints; t++) {
                sb(&b, "    - key: %s\n      effect: %s\n", n->taints[t].key, eff[n->taints[t].effect]);
                if (n->taints[t].value && *n->taints[t].value)
                    sb(&b, "      value: \"%s\"\n", n->taints[t].value);
            }
        }
        sb(&b, "  status:\n    allocatable:\n");
        for (uint32_t r = 0; r < k->nres; r++) {
            if (r >= BERTH_KRES_FIRST_EXT && !n->alloc[r])
                continue;
            sb(&b, "      %s: \"", k->res_names[r]);
            y_qty(&b, r, n->alloc[r]);
            sb(&b, "\"\n");
        }
        sb(&b, "      pods: \"%lld\"\n", (long long)n->alloc_pods);
        if (n->nimages) {
            sb(&b, "    images:\n");
            for (uint32_t m = 0; m < n->nimages; m++)
                sb(&b, "    - names: [\"%s\"]\n      sizeBytes: %lld\n", n->images[m].name,
                   (long long)n->images[m].size);
        }
    }
    static const char *effn[] = {"", "NoSchedule", "PreferNoSchedule", "NoExecute"};
    for (uint32_t i = 0; i < k->npods; i++) {
        const berth_kpod *p = &k->pods[i];
        long long ts = (long long)p->created - 1700000000LL;
        sb(&b, "- apiVersion: v1\n  kind: Pod\n  metadata:\n    name: %s\n    namespace: %s\n"
               "    creationTimestamp: \"2023-11-14T22:%02lld:%02lldZ\"\n",
           p->name, p->ns, (13 + ts / 60), (20 + ts) % 60);
        if (p->terminating)
            sb(&b, "    deletionTimestamp: \"2023-11-15T00:00:00Z\"\n");
        if (p->labels.n) {
            sb(&b, "    labels:\n");
            y_labels(&b, "      ", &p->labels);
        }
        if (p->owner_kind)
            sb(&b, "    ownerReferences:\n    - apiVersion: apps/v1\n      kind: %s\n      name: %s\n"
                   "      uid: u-%s\n      controller: true\n",
               p->owner_kind, p->owner_name, p->owner_name);
        sb(&b, "  spec:\n");
        if (p->node_name)
            sb(&b, "    nodeName: %s\n", p->node_name);
        if (p->priority)
            sb(&b, "    priority: %lld\n", (long long)p->priority);
        if (p->overhead[0] || p->overhead[1])
            sb(&b, "    overhead:\n      cpu: \"%lldm\"\n      memory: \"%lld\"\n",
               (long long)p->overhead[0], (long long)p->overhead[1]);
        sb(&b, "    containers:\n");
        for (uint32_t c = 0; c < p->ncontainers; c++)
            y_container(&b, k, &p->containers[c], p, c == 0);
        if (p->ninit) {
            sb(&b, "    initContainers:\n");
            for (uint32_t c = 0; c < p->ninit; c++)
                y_container(&b, k, &p->init[c], p, 0);
        }
        if (p->ntols) {
            sb(&b, "    tolerations:\n");
            for (uint32_t t = 0; t < p->ntols; t++) {
                const berth_toleration *to = &p->tols[t];
                sb(&b, "    - operator: %s\n", to->op == BERTH_TOL_EXISTS ? "Exists" : "Equal");
                if (to->key)
                    sb(&b, "      key: %s\n", to->key);
                if (to->value)
                    sb(&b, "      value: \"%s\"\n", to->value);
                if (to->effect)
                    sb(&b, "      effect: %s\n", effn[to->effect]);
                if (to->toleration_seconds >= 0)
                    sb(&b, "      tolerationSeconds: %lld\n", (long long)to->toleration_seconds);
            }
        }
        if (p->node_selector.n) {
            sb(&b, "    nodeSelector:\n");
            y_labels(&b, "      ", &p->node_selector);
        }
        if (p->nspread) {
            sb(&b, "    topologySpreadConstraints:\n");
            for (uint32_t c = 0; c < p->nspread; c++) {
                const berth_kspread *s = &p->spread[c];
                sb(&b, "    - maxSkew: %d\n      topologyKey: %s\n      whenUnsatisfiable: %s\n",
                   s->max_skew, s->topology_key, s->do_not_schedule ? "DoNotSchedule" : "ScheduleAnyway");
                if (s->min_domains != 1)
                    sb(&b, "      minDomains: %d\n", s->min_domains);
                sb(&b, "      nodeAffinityPolicy: %s\n      nodeTaintsPolicy: %s\n",
                   s->honor_node_affinity ? "Honor" : "Ignore", s->honor_node_taints ? "Honor" : "Ignore");
                sb(&b, "      labelSelector:\n");
                y_selector(&b, "        ", &s->selector);
            }
        }
        int na = p->has_req_affinity || p->npref_terms;
        int pa = p->naff_req || p->naff_pref;
        int aa = p->nanti_req || p->nanti_pref;
        if (na || pa || aa)
            sb(&b, "    affinity:\n");
        if (na) {
            sb(&b, "      nodeAffinity:\n");
            if (p->has_req_affinity) {
                sb(&b, "        requiredDuringSchedulingIgnoredDuringExecution:\n"
                       "          nodeSelectorTerms:\n");
                for (uint32_t t = 0; t < p->nreq_terms; t++)
                    y_node_term(&b, "          ", &p->req_terms[t]);
            }
            if (p->npref_terms) {
                sb(&b, "        preferredDuringSchedulingIgnoredDuringExecution:\n");
                for (uint32_t t = 0; t < p->npref_terms; t++) {
                    sb(&b, "        - weight: %d\n          preference:\n", p->pref_terms[t].weight);
                    const berth_kterm *tm = &p->pref_terms[t].term;
                    if (!tm->nexprs && !tm->nfields) {
                        sb(&b, "            matchExpressions: []\n");
                        continue;
                    }
                    if (tm->nexprs) {
                        sb(&b, "            matchExpressions:\n");
                        y_reqs(&b, "            ", tm->exprs, tm->nexprs);
                    }
                    if (tm->nfields) {
                        sb(&b, "            matchFields:\n");
                        y_reqs(&b, "            ", tm->fields, tm->nfields);
                    }
                }
            }
        }
        for (int anti = 0; anti < 2; anti++) {
            uint32_t nr = anti ? p->nanti_req : p->naff_req, np = anti ? p->nanti_pref : p->naff_pref;
            if (!nr && !np)
                continue;
            sb(&b, "      %s:\n", anti ? "podAntiAffinity" : "podAffinity");
            if (nr) {
                sb(&b, "        requiredDuringSchedulingIgnoredDuringExecution:\n");
                y_aff_terms(&b, anti ? p->anti_req : p->aff_req, nr, 0);
            }
            if (np) {
                sb(&b, "        preferredDuringSchedulingIgnoredDuringExecution:\n");
                y_aff_terms(&b, anti ? p->anti_pref : p->aff_pref, np, 1);
            }
        }
    }
    return b.s;
}

/* ======================================================================
 * Scenarios
 * ==================================================================== */

typedef struct stats {
    uint32_t clusters, pods, placed, unplaced, scored, prescore_errors;
} stats;
static stats S;

static int run_berth(berth_kcluster *k, const rprof *pf, const ref *r, dec *got, int mode)
{
    berth_kprofile bp;
    berth_kube_options opt = {.tiebreak = BERTH_TIE_FIRST, .seed = 1};
    apply_profile(k, pf, &bp, &opt);
    bctx c = {r, got, mode >= 2};
    opt.reference = mode == 1;
    opt.detail = mode >= 2;
    opt.on_decision = on_dec;
    opt.ctx = &c;
    memset(got, 0, r->P * sizeof *got);
    berth_error e;
    berth_error_clear(&e);
    int rc = berth_kube_schedule(k, &opt, &e);
    if (rc && rc != BERTH_ENOFIT)
        fail_msg("berth_kube_schedule: %s", e.msg);
    return rc;
}

static void scenario(uint64_t seed, const gen_params *gp, const rprof *pf, int yaml)
{
    static const char *modes[] = {"fast", "reference", "detail", "yaml+detail"};
    berth_kcluster kr;
    gen_cluster(&kr, seed, gp);
    ref *r = calloc(1, sizeof *r);
    dec *want = calloc(MAXP, sizeof *want), *got = calloc(MAXP, sizeof *got);
    ref_run(r, &kr, pf, want);
    S.clusters++;
    for (uint32_t p = 0; p < kr.npods; p++)
        if (want[p].seen) {
            S.pods++;
            S.placed += want[p].node >= 0;
            S.unplaced += want[p].node < 0;
            S.scored += want[p].scored;
            S.prescore_errors += want[p].prescore_error;
        }
    for (int mode = 0; mode < (yaml ? 4 : 3); mode++) {
        berth_kcluster kb;
        gen_cluster(&kb, seed, gp);
        if (mode == 3) {
            char *y = to_yaml(&kb);
            free_cluster(&kb);
            berth_kube_init(&kb);
            berth_error e;
            berth_source src;
            berth_error_clear(&e);
            int rc = berth_doc_load_buffer(&kb.arena, "gen.yaml", y, strlen(y), &src, &e);
            if (!rc)
                rc = berth_kube_load(&kb, &src, 1, &e);
            if (rc) {
                fprintf(stderr, "%s\n", y);
                fail_msg("seed %llu: generated YAML does not load: %s", (unsigned long long)seed, e.msg);
            }
            free(y);
            assert_int_equal(kb.npods, kr.npods);
            assert_int_equal(kb.nnodes, kr.nnodes);
        }
        snprintf(g_where, sizeof g_where, "seed %llu profile %s mode %s",
                 (unsigned long long)seed, pf->name, modes[mode]);
        run_berth(&kb, pf, r, got, mode);
        compare(r, pf, want, got, mode >= 2);
        free_cluster(&kb);
    }
    free(want);
    free(got);
    free(r);
    free_cluster(&kr);
}

/* TIE_RANDOM and TIE_LAST (the model above breaks ties by index only):
 * berth's fast path against its reference path, decision by decision, on
 * the same random clusters (pods with system default spreading take the
 * fast path's fused PodTopologySpread pick); the seeded rng must be drawn
 * alike */
typedef struct tie_dec {
    int node[MAXP];
    uint32_t nfeas[MAXP];
    int64_t total[MAXP];
} tie_dec;

static void on_tie(void *vctx, const berth_kcluster *k, const berth_kdecision *d)
{
    (void)k;
    tie_dec *t = vctx;
    assert_true(d->pod < MAXP);
    t->node[d->pod] = d->node == BERTH_KUBE_NONE ? -1 : (int)d->node;
    t->nfeas[d->pod] = d->nfeasible;
    t->total[d->pod] = d->total;
}

/* identical nodes (some without a zone or hostname label, some tainted
 * away) and identical ReplicaSet replicas, a few already bound: many
 * equal totals */
static void tie_cluster(berth_kcluster *k, uint64_t seed)
{
    berth_rng_seed(&G, seed);
    berth_kube_init(k);
    berth_arena *a = &k->arena;
    uint32_t N = 8 + rnd(40);
    k->nodes = calloc(N, sizeof *k->nodes);
    k->nnodes = k->capnodes = N;
    for (uint32_t n = 0; n < N; n++) {
        berth_knode *nd = &k->nodes[n];
        nd->name = fmt(a, "node-%03u", n);
        berth_label *l = aalloc(a, 2 * sizeof *l);
        uint32_t nl = 0;
        if (chance(95))
            l[nl++] = (berth_label){HOSTNAME, nd->name};
        if (chance(85))
            l[nl++] = (berth_label){ZONE, ZONES[rnd(3)]};
        nd->labels = (berth_labels){l, nl};
        berth_labels_sort(&nd->labels);
        nd->alloc[BERTH_KRES_CPU] = 4000;
        nd->alloc[BERTH_KRES_MEMORY] = 8 * GI;
        nd->alloc[BERTH_KRES_EPHEMERAL] = 50 * GI;
        nd->alloc_pods = 110;
        if (chance(10)) {
            nd->taints = aalloc(a, sizeof *nd->taints);
            nd->taints[nd->ntaints++] = TAINTS[0];
        }
    }
    k->namespaces = calloc(1, sizeof *k->namespaces);
    k->nnamespaces = k->capnamespaces = 1;
    berth_label *nl = aalloc(a, sizeof *nl);
    nl[0] = (berth_label){"kubernetes.io/metadata.name", "default"};
    k->namespaces[0] = (berth_knamespace){.name = "default", .labels = {nl, 1}};
    k->workloads = calloc(1, sizeof *k->workloads);
    k->nworkloads = k->capworkloads = 1;
    k->workloads[0] = (berth_kworkload){"ReplicaSet", "default", "rs-1", sel1(a, "rs", "rs-1")};
    uint32_t P = 10 + rnd(60);
    k->pods = calloc(P, sizeof *k->pods);
    k->npods = k->cappods = P;
    for (uint32_t i = 0; i < P; i++) {
        berth_kpod *p = &k->pods[i];
        p->ns = "default";
        p->name = fmt(a, "pod-%03u", i);
        p->order = i;
        berth_label *l = aalloc(a, sizeof *l);
        l[0] = (berth_label){"rs", "rs-1"};
        p->labels = (berth_labels){l, 1};
        p->owner_kind = "ReplicaSet";
        p->owner_name = "rs-1";
        p->created = 1700000000;
        p->has_created = 1;
        if (chance(20))
            p->node_name = k->nodes[rnd(N)].name;
        p->ncontainers = 1;
        p->containers = aalloc(a, sizeof *p->containers);
        berth_kcontainer *c = &p->containers[0];
        c->name = "c0";
        c->image = "reg.io/none:1";
        c->has_req = BIT(BERTH_KRES_CPU) | BIT(BERTH_KRES_MEMORY);
        c->req[BERTH_KRES_CPU] = 100;
        c->req[BERTH_KRES_MEMORY] = 128 * MI;
    }
}

static void test_tiebreaks_fast_vs_reference(void **st)
{
    (void)st;
    static const berth_tiebreak tbs[] = {BERTH_TIE_RANDOM, BERTH_TIE_LAST, BERTH_TIE_FIRST};
    gen_params gp = {3, 40, 5, 80, 0, 0};
    tie_dec *got = calloc(2, sizeof *got);
    assert_non_null(got);
    uint32_t ndec = 0;
    for (uint64_t seed = 1; seed <= 240; seed++)
        for (uint32_t b = 0; b < 3; b++) {
            uint32_t npods = 0;
            for (int mode = 0; mode < 2; mode++) {
                berth_kcluster k;
                if (seed % 2)
                    gen_cluster(&k, 9000 + seed, &gp);
                else
                    tie_cluster(&k, 9000 + seed);
                berth_kprofile bp;
                berth_kube_options opt = {.tiebreak = tbs[b], .seed = seed};
                apply_profile(&k, &PROFILES[seed % 4 < 2 ? 0 : 1 + seed / 4 % (NPROFILES - 1)], &bp, &opt);
                opt.tiebreak = tbs[b];
                opt.reference = mode == 1;
                opt.on_decision = on_tie;
                opt.ctx = &got[mode];
                memset(&got[mode], 0xff, sizeof got[mode]);
                berth_error e;
                berth_error_clear(&e);
                int rc = berth_kube_schedule(&k, &opt, &e);
                if (rc && rc != BERTH_ENOFIT)
                    fail_msg("berth_kube_schedule: %s", e.msg);
                npods = k.npods;
                free_cluster(&k);
            }
            for (uint32_t p = 0; p < npods && p < MAXP; p++) {
                if (got[0].node[p] != got[1].node[p] || got[0].nfeas[p] != got[1].nfeas[p] ||
                    got[0].total[p] != got[1].total[p])
                    fail_msg("seed %llu tiebreak %d pod %u: fast node %d (%u feasible, total "
                             "%lld), reference node %d (%u, %lld)",
                             (unsigned long long)seed, (int)tbs[b], p, got[0].node[p],
                             got[0].nfeas[p], (long long)got[0].total[p], got[1].node[p],
                             got[1].nfeas[p], (long long)got[1].total[p]);
                ndec += got[0].node[p] >= 0;
            }
        }
    free(got);
    assert_true(ndec > 1000);
}

/* The fast path's per-domain index (src/kube/fastpath.c pick_indexed:
 * PodTopologySpread DoNotSchedule domains judged whole, anti-affinity
 * exclusions listed per domain, block maxima per class) against the
 * reference path on random clusters built for it: 70-400 nodes (several
 * blocks of 64), zone / rack / hostname labels some nodes lack, hostname
 * values shared by a few nodes, few request shapes (classes repeat), spread
 * constraints on one key (sometimes two keys or ScheduleAnyway: the other
 * paths), required anti-affinity on any key, a few required affinity
 * terms, bound pods carrying anti-affinity. Every placement, feasible count
 * and total, for tie-breaks first, last and random. */
static void index_cluster(berth_kcluster *k, uint64_t seed)
{
    static const char *keys[] = {ZONE, "rack", HOSTNAME};
    berth_rng_seed(&G, seed);
    berth_kube_init(k);
    berth_arena *a = &k->arena;
    uint32_t N = 70 + rnd(331);
    k->nodes = calloc(N, sizeof *k->nodes);
    k->nnodes = k->capnodes = N;
    for (uint32_t n = 0; n < N; n++) {
        berth_knode *nd = &k->nodes[n];
        nd->name = fmt(a, "node-%03u", n);
        berth_label *l = aalloc(a, 3 * sizeof *l);
        uint32_t nl = 0;
        if (chance(97))
            l[nl++] = (berth_label){HOSTNAME, chance(3) ? "shared-host" : nd->name};
        if (chance(90))
            l[nl++] = (berth_label){ZONE, ZONES[rnd(seed % 2 ? 3 : 4)]};
        if (chance(80))
            l[nl++] = (berth_label){"rack", RACKS[rnd(5)]};
        nd->labels = (berth_labels){l, nl};
        berth_labels_sort(&nd->labels);
        int big = chance(30);
        nd->alloc[BERTH_KRES_CPU] = big ? 8000 : 2000 + 1000 * (int64_t)rnd(3);
        nd->alloc[BERTH_KRES_MEMORY] = (big ? 16 : 4 + (int64_t)rnd(5)) * GI;
        nd->alloc[BERTH_KRES_EPHEMERAL] = 50 * GI;
        nd->alloc_pods = 20 + rnd(30);
        if (chance(8)) {
            nd->taints = aalloc(a, sizeof *nd->taints);
            nd->taints[nd->ntaints++] = TAINTS[0];
        }
    }
    k->namespaces = calloc(1, sizeof *k->namespaces);
    k->nnamespaces = k->capnamespaces = 1;
    berth_label *nsl = aalloc(a, sizeof *nsl);
    nsl[0] = (berth_label){"kubernetes.io/metadata.name", "default"};
    k->namespaces[0] = (berth_knamespace){.name = "default", .labels = {nsl, 1}};
    uint32_t P = 60 + rnd(MAXP - 60);
    k->pods = calloc(P, sizeof *k->pods);
    k->npods = k->cappods = P;
    for (uint32_t i = 0; i < P; i++) {
        berth_kpod *p = &k->pods[i];
        const char *app = APPS[rnd(4)];
        p->ns = "default";
        p->name = fmt(a, "pod-%03u", i);
        p->order = i;
        berth_label *l = aalloc(a, sizeof *l);
        l[0] = (berth_label){"app", app};
        p->labels = (berth_labels){l, 1};
        p->ncontainers = 1;
        p->containers = aalloc(a, sizeof *p->containers);
        berth_kcontainer *c = &p->containers[0];
        c->name = "c0";
        c->image = "reg.io/none:1";
        c->has_req = BIT(BERTH_KRES_CPU) | BIT(BERTH_KRES_MEMORY);
        c->req[BERTH_KRES_CPU] = 100 + 150 * (int64_t)rnd(3);
        c->req[BERTH_KRES_MEMORY] = (128 + 256 * (int64_t)rnd(2)) * MI;
        int bound = chance(15);
        if (bound)
            p->node_name = k->nodes[rnd(N)].name;
        if (chance(10)) {
            p->tols = aalloc(a, sizeof *p->tols);
            p->tols[p->ntols++] = TOLS[0];
        }
        if (!bound && chance(75)) {
            uint32_t two = chance(10);
            const char *key = keys[rnd(3)];
            p->spread = aalloc(a, 2 * sizeof *p->spread);
            for (uint32_t j = 0; j <= two; j++)
                p->spread[p->nspread++] = (berth_kspread){
                    .max_skew = 1 + (int32_t)rnd(2),
                    .topology_key = j && chance(50) ? keys[rnd(3)] : key,
                    .do_not_schedule = !chance(10),
                    .selector = sel1(a, "app", chance(85) ? app : APPS[rnd(4)]),
                    .min_domains = chance(10) ? 4 : 1,
                    .honor_node_affinity = 1,
                    .honor_node_taints = chance(20)};
        }
        if (chance(60)) {
            p->anti_req = aalloc(a, sizeof *p->anti_req);
            p->nanti_req = 1;
            p->anti_req[0] = (berth_kaffinity_term){
                .selector = sel1(a, "app", chance(70) ? app : APPS[rnd(4)]),
                .topology_key = chance(60) ? HOSTNAME : keys[rnd(3)]};
        }
        if (!bound && chance(5)) {
            p->aff_req = aalloc(a, sizeof *p->aff_req);
            p->naff_req = 1;
            p->aff_req[0] = (berth_kaffinity_term){.selector = sel1(a, "app", APPS[rnd(4)]),
                                                   .topology_key = keys[rnd(3)]};
        }
    }
}

/* KUBE_REFERENCE_SCALE=N in the environment: N times as many random
 * clusters (seeds) in test_index_fast_vs_reference, test_random_default and
 * test_random_profiles, for longer local runs (2: the counts before
 * 2026-11-26, 60 seeds, 300 and 360 clusters) */
static uint64_t reference_scale(void)
{
    const char *env = getenv("KUBE_REFERENCE_SCALE");
    return env && atoi(env) > 0 ? (uint64_t)atoi(env) : 1;
}

static void test_index_fast_vs_reference(void **st)
{
    (void)st;
    static const berth_tiebreak tbs[] = {BERTH_TIE_FIRST, BERTH_TIE_LAST, BERTH_TIE_RANDOM};
    tie_dec *got = calloc(2, sizeof *got);
    assert_non_null(got);
    uint32_t ndec = 0, nnone = 0;
    const uint64_t nseeds = 30 * reference_scale();
    for (uint64_t seed = 1; seed <= nseeds; seed++)
        for (uint32_t b = 0; b < 3; b++) {
            uint32_t npods = 0;
            for (int mode = 0; mode < 2; mode++) {
                berth_kcluster k;
                index_cluster(&k, 31000 + seed);
                for (uint32_t q = 0; q < k.npods; q++) /* the pods' own requests */
                    berth_kube_pod_requests(&k, &k.pods[q]);
                berth_kube_options opt = {.tiebreak = tbs[b], .seed = seed};
                opt.reference = mode == 1;
                opt.on_decision = on_tie;
                opt.ctx = &got[mode];
                memset(&got[mode], 0xff, sizeof got[mode]);
                berth_error e;
                berth_error_clear(&e);
                int rc = berth_kube_schedule(&k, &opt, &e);
                if (rc && rc != BERTH_ENOFIT)
                    fail_msg("berth_kube_schedule: %s", e.msg);
                npods = k.npods;
                free_cluster(&k);
            }
            for (uint32_t p = 0; p < npods; p++) {
                if (got[0].node[p] != got[1].node[p] || got[0].nfeas[p] != got[1].nfeas[p] ||
                    got[0].total[p] != got[1].total[p])
                    fail_msg("index seed %llu tiebreak %d pod %u: fast node %d (%u feasible, "
                             "total %lld), reference node %d (%u, %lld)",
                             (unsigned long long)seed, (int)tbs[b], p, got[0].node[p],
                             got[0].nfeas[p], (long long)got[0].total[p], got[1].node[p],
                             got[1].nfeas[p], (long long)got[1].total[p]);
                ndec += got[0].node[p] >= 0;
                nnone += got[0].node[p] == -1;
            }
        }
    free(got);
    fprintf(stderr, "index: %u placements, %u unplaced compared\n", ndec, nnone);
    assert_true(ndec > 5000);
    assert_true(nnone > 0);
}

/* Shared dynamic columns (fastpath.c fast_dyn: classes with the same
 * requests and images share the NodeResourcesFit / BalancedAllocation /
 * ImageLocality column, each masking it with its own static filters): the
 * index clusters' nodes and request shapes with plain pods that differ
 * only by tolerations, node selector, nodeName and image, so classes of one
 * shape interleave and each refreshes from a column another class
 * advanced. Every placement, feasible count and total against the
 * reference path. */
static void shared_cluster(berth_kcluster *k, uint64_t seed)
{
    index_cluster(k, seed);
    berth_arena *a = &k->arena;
    for (uint32_t i = 0; i < k->npods; i++) {
        berth_kpod *p = &k->pods[i];
        p->nspread = 0;
        p->nanti_req = 0;
        p->naff_req = 0;
        p->ntols = 0;
        p->tols = aalloc(a, 2 * sizeof *p->tols);
        if (chance(40))
            p->tols[p->ntols++] = TOLS[rnd(2)];
        if (chance(30)) {
            berth_label *l = aalloc(a, sizeof *l);
            l[0] = (berth_label){ZONE, ZONES[rnd(3)]};
            p->node_selector = (berth_labels){l, 1};
        }
        if (chance(30))
            p->containers[0].image = "reg.io/app:2";
        /* index_cluster leaves the pod-level requests to the caller */
        berth_kube_pod_requests(k, p);
    }
}

static void test_shared_fast_vs_reference(void **st)
{
    (void)st;
    static const berth_tiebreak tbs[] = {BERTH_TIE_FIRST, BERTH_TIE_LAST, BERTH_TIE_RANDOM};
    tie_dec *got = calloc(2, sizeof *got);
    assert_non_null(got);
    uint32_t ndec = 0;
    for (uint64_t seed = 1; seed <= 30; seed++)
        for (uint32_t b = 0; b < 3; b++) {
            uint32_t npods = 0;
            for (int mode = 0; mode < 2; mode++) {
                berth_kcluster k;
                shared_cluster(&k, 47000 + seed);
                berth_kube_options opt = {.tiebreak = tbs[b], .seed = seed};
                opt.reference = mode == 1;
                opt.on_decision = on_tie;
                opt.ctx = &got[mode];
                memset(&got[mode], 0xff, sizeof got[mode]);
                berth_error e;
                berth_error_clear(&e);
                int rc = berth_kube_schedule(&k, &opt, &e);
                if (rc && rc != BERTH_ENOFIT)
                    fail_msg("berth_kube_schedule: %s", e.msg);
                npods = k.npods;
                free_cluster(&k);
            }
            for (uint32_t p = 0; p < npods; p++) {
                if (got[0].node[p] != got[1].node[p] || got[0].nfeas[p] != got[1].nfeas[p] ||
                    got[0].total[p] != got[1].total[p])
                    fail_msg("shared seed %llu tiebreak %d pod %u: fast node %d (%u feasible, "
                             "total %lld), reference node %d (%u, %lld)",
                             (unsigned long long)seed, (int)tbs[b], p, got[0].node[p],
                             got[0].nfeas[p], (long long)got[0].total[p], got[1].node[p],
                             got[1].nfeas[p], (long long)got[1].total[p]);
                ndec += got[0].node[p] >= 0;
            }
        }
    free(got);
    fprintf(stderr, "shared: %u placements compared\n", ndec);
    assert_true(ndec > 3000);
}

static void test_random_default(void **st)
{
    (void)st;
    gen_params gp = {3, 40, 5, 80, 0, 0};
    const uint64_t n = 150 * reference_scale();
    for (uint64_t s = 1; s <= n; s++) {
        gp.ext = s % 3 == 0;
        scenario(1000 + s, &gp, &PROFILES[0], s % 4 == 0);
    }
    fprintf(stderr, "default: %u clusters, %u pending pods (%u placed, %u unplaced, %u scored, "
                    "%u NodeAffinity PreScore errors)\n",
            S.clusters, S.pods, S.placed, S.unplaced, S.scored, S.prescore_errors);
    assert_int_equal(g_fail, 0);
    assert_true(S.prescore_errors > 0); /* invalid preferred terms were exercised */
}

static void test_random_profiles(void **st)
{
    (void)st;
    memset(&S, 0, sizeof S);
    gen_params gp = {3, 40, 5, 80, 0, 0};
    const uint64_t n = 180 * reference_scale();
    for (uint64_t s = 1; s <= n; s++) {
        gp.ext = s % 2 == 0;
        const rprof *pf = &PROFILES[1 + s % (NPROFILES - 1)];
        scenario(5000 + s, &gp, pf, s % 5 == 0);
    }
    fprintf(stderr, "profiles: %u clusters, %u pending pods (%u placed, %u unplaced, %u scored)\n",
            S.clusters, S.pods, S.placed, S.unplaced, S.scored);
    assert_int_equal(g_fail, 0);
}

/* percentageOfNodesToScore with >= 100 nodes: the round-robin start */
static void test_random_percentage(void **st)
{
    (void)st;
    memset(&S, 0, sizeof S);
    gen_params gp = {100, 160, 30, 90, 1, 1};
    for (uint64_t s = 1; s <= 16; s++) {
        rprof pf = PROFILES[s % 2 ? 0 : 5];
        pf.pct = s % 3 == 0 ? 70 : s % 3 == 1 ? 10 : 95;
        if (s % 2 == 0)
            pf.ksc = NULL; /* struct-filled, profile-level value */
        scenario(9000 + s, &gp, &pf, 0);
    }
    fprintf(stderr, "percentage: %u clusters, %u pending pods (%u placed, %u unplaced)\n",
            S.clusters, S.pods, S.placed, S.unplaced);
    assert_int_equal(g_fail, 0);
}

/* ---- hand-made corner cases ---- */

static berth_knode plain_node(berth_arena *a, const char *name, int64_t cpu, int64_t mem)
{
    berth_knode n = {0};
    n.name = name;
    berth_label *l = aalloc(a, sizeof *l);
    l[0] = (berth_label){HOSTNAME, name};
    n.labels = (berth_labels){l, 1};
    n.alloc[BERTH_KRES_CPU] = cpu;
    n.alloc[BERTH_KRES_MEMORY] = mem;
    n.alloc[BERTH_KRES_EPHEMERAL] = 100 * GI;
    n.alloc_pods = 110;
    return n;
}

static berth_kpod plain_pod(berth_arena *a, const char *name, uint32_t order, int64_t cpu, int64_t mem)
{
    berth_kpod p = {0};
    p.ns = "default";
    p.name = name;
    p.order = order;
    p.containers = aalloc(a, sizeof *p.containers);
    p.ncontainers = 1;
    p.containers[0].name = "c";
    p.containers[0].image = "x:1";
    p.containers[0].req[0] = cpu;
    p.containers[0].req[1] = mem;
    p.containers[0].has_req = 3;
    return p;
}

typedef struct simple_out { uint32_t n; const char *node[8]; uint32_t nfeas[8]; } simple_out;
static void simple_cb(void *ctx, const berth_kcluster *k, const berth_kdecision *d)
{
    simple_out *o = ctx;
    o->node[d->pod] = d->node == BERTH_KUBE_NONE ? NULL : k->nodes[d->node].name;
    o->nfeas[d->pod] = d->nfeasible;
    o->n++;
}

static void test_ties_and_nofit(void **st)
{
    (void)st;
    for (int mode = 0; mode < 3; mode++) {
        berth_kcluster k;
        berth_kube_init(&k);
        berth_arena *a = &k.arena;
        /* identical nodes in reverse name order: the tie goes to the lowest name */
        k.nodes = calloc(4, sizeof *k.nodes);
        k.nnodes = k.capnodes = 4;
        k.nodes[0] = plain_node(a, "zeta", 4000, 8 * GI);
        k.nodes[1] = plain_node(a, "gamma", 4000, 8 * GI);
        k.nodes[2] = plain_node(a, "beta", 4000, 8 * GI);
        k.nodes[3] = plain_node(a, "alpha", 1000, 1 * GI);
        k.pods = calloc(3, sizeof *k.pods);
        k.npods = k.cappods = 3;
        k.pods[0] = plain_pod(a, "tie", 0, 1000, GI);
        k.pods[1] = plain_pod(a, "huge", 1, 64000, GI); /* fits nowhere */
        k.pods[2] = plain_pod(a, "second", 2, 1000, GI);
        for (int i = 0; i < 3; i++) {
            k.pods[i].created = 100 + i;
            k.pods[i].has_created = 1;
            berth_kube_pod_requests(&k, &k.pods[i]);
        }
        simple_out o = {0};
        berth_kube_options opt = {.tiebreak = BERTH_TIE_FIRST, .reference = mode == 1,
                                  .detail = mode == 2, .on_decision = simple_cb, .ctx = &o};
        berth_error e;
        assert_int_equal(berth_kube_schedule(&k, &opt, &e), BERTH_ENOFIT);
        assert_int_equal(o.n, 3);
        /* beta, gamma and zeta tie on every score; alpha is smaller */
        assert_non_null(o.node[0]);
        assert_string_equal(o.node[0], "beta");
        assert_int_equal(o.nfeas[0], 4);
        assert_null(o.node[1]);
        assert_int_equal(o.nfeas[1], 0);
        /* beta now has less room: gamma (lowest of the remaining tie) */
        assert_non_null(o.node[2]);
        assert_string_equal(o.node[2], "gamma");
        free_cluster(&k);
    }
}

/* 120 nodes n000..n119 (n101..n119 twice as large, n005 unschedulable),
 * percentageOfNodesToScore 10 -> each search stops at the 100th feasible
 * node and the next one starts right after it (SPEC 2.5, upstream
 * nextStartNodeIndex):
 *   pod 0 walks n000..n100 (n005 infeasible): 100 feasible, takes n000;
 *   pod 1 walks n101..n119, n000..n081: the large empty n101 wins;
 *   pod 2 walks n082..n119, n000..n062: n102 (n101 is no longer empty).
 * A scheduler that restarts every search at n000 would give n001 and n002. */
static void test_percentage_round_robin(void **st)
{
    (void)st;
    for (int mode = 0; mode < 3; mode++) {
        berth_kcluster k;
        berth_kube_init(&k);
        berth_arena *a = &k.arena;
        uint32_t N = 120;
        k.nodes = calloc(N, sizeof *k.nodes);
        k.nnodes = k.capnodes = N;
        for (uint32_t i = 0; i < N; i++)
            k.nodes[N - 1 - i] = plain_node(a, fmt(a, "n%03u", i), i > 100 ? 8000 : 4000,
                                             i > 100 ? 16 * GI : 8 * GI);
        k.nodes[N - 1 - 5].unschedulable = 1; /* n005 */
        k.pods = calloc(3, sizeof *k.pods);
        k.npods = k.cappods = 3;
        for (uint32_t i = 0; i < 3; i++) {
            k.pods[i] = plain_pod(a, fmt(a, "p%u", i), i, 500, GI);
            k.pods[i].created = 100 + i;
            k.pods[i].has_created = 1;
            berth_kube_pod_requests(&k, &k.pods[i]);
        }
        berth_kprofile bp;
        berth_kube_default_profile(&k, &bp);
        bp.percentage_of_nodes_to_score = 10;
        simple_out o = {0};
        berth_kube_options opt = {.profile = &bp, .tiebreak = BERTH_TIE_FIRST,
                                  .reference = mode == 1, .detail = mode == 2,
                                  .on_decision = simple_cb, .ctx = &o};
        berth_error e;
        int rc = berth_kube_schedule(&k, &opt, &e);
        char got[3][16];
        for (int i = 0; i < 3; i++)
            snprintf(got[i], sizeof got[i], "%s", o.node[i] ? o.node[i] : "(none)");
        free_cluster(&k);
        assert_int_equal(rc, 0);
        assert_int_equal(o.n, 3);
        assert_string_equal(got[0], "n000");
        assert_int_equal(o.nfeas[0], 100);
        assert_string_equal(got[1], "n101");
        assert_int_equal(o.nfeas[1], 100);
        assert_string_equal(got[2], "n102");
        assert_int_equal(o.nfeas[2], 100);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shared_fast_vs_reference),
        cmocka_unit_test(test_ties_and_nofit),
        cmocka_unit_test(test_percentage_round_robin),
        cmocka_unit_test(test_random_default),
        cmocka_unit_test(test_tiebreaks_fast_vs_reference),
        cmocka_unit_test(test_index_fast_vs_reference),
        cmocka_unit_test(test_random_profiles),
        cmocka_unit_test(test_random_percentage),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
