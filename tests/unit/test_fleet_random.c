/* tests/unit/test_fleet_random.c - randomized comparison of the fast path
 * (cached policy columns, the top-K narrow index, the derived final pass)
 * with the plain reference scan: random fleets (labels, properties, taints,
 * ineligible clusters), random placements (PickN / PickAll / PickFixed,
 * required and preferred terms, 0-2 spread constraints, tolerations) and
 * bindings (Scheduled / Bound under the latest policy snapshot or an older
 * one, Unscheduled, some to clusters that are gone). Every outcome field and every per-cluster reason must agree,
 * placing in input order and again in a shuffled order (scratch reuse).
 * FLEET_RANDOM_RUNS=N in the environment runs N fleets per test. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "berth/fleet.h"
#include "berth/random.h"

#define NOW "2024-05-01T12:00:00Z"

typedef struct buf { char *p; size_t n, cap; } buf;

static void put(buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(buf *b, const char *fmt, ...)
{
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int w = vsnprintf(b->p + b->n, b->cap - b->n, fmt, ap);
        va_end(ap);
        if (w >= 0 && (size_t)w < b->cap - b->n) {
            b->n += (size_t)w;
            return;
        }
        b->cap = b->cap * 2 + 4096;
        b->p = realloc(b->p, b->cap);
        assert_non_null(b->p);
    }
}

static uint32_t rnd(berth_rng *r, uint32_t n) { return (uint32_t)berth_rng_below(r, n); }

static const char *const zones[] = {"a", "b", "c", "d"};
static const char *const keys[] = {"zone", "rack", "env"};

static void gen(berth_rng *r, buf *b, uint32_t *ncl, uint32_t *npl)
{
    uint32_t nc = 1 + rnd(r, rnd(r, 4) ? 40 : 200), np = 1 + rnd(r, 14);
    *ncl = nc;
    *npl = np;
    for (uint32_t i = 0; i < nc; i++) {
        char labels[256] = "", props[256] = "", extra[256] = "";
        size_t l = 0;
        if (rnd(r, 8))
            l += (size_t)snprintf(labels + l, sizeof labels - l, "zone: %s, ", zones[rnd(r, 4)]);
        if (rnd(r, 3))
            l += (size_t)snprintf(labels + l, sizeof labels - l, "rack: r%u, ", rnd(r, 6));
        if (rnd(r, 6))
            l += (size_t)snprintf(labels + l, sizeof labels - l, "env: %s, ",
                                  rnd(r, 3) ? "prod" : "test");
        if (l)
            labels[l - 2] = 0;
        l = 0;
        if (rnd(r, 6))
            l += (size_t)snprintf(props + l, sizeof props - l, "p: {value: \"%u\"}, ", rnd(r, 12));
        if (rnd(r, 4))
            l += (size_t)snprintf(props + l, sizeof props - l, "q: {value: \"%u.%u\"}, ", rnd(r, 3),
                                  rnd(r, 10));
        if (l)
            props[l - 2] = 0;
        if (!rnd(r, 6))
            snprintf(extra, sizeof extra, "spec: {taints: [{key: k, value: v%u, effect: NoSchedule}]}\n",
                     rnd(r, 2));
        const char *hb = rnd(r, 12) ? "2024-05-01T11:59:00Z" : "2024-05-01T11:00:00Z";
        const char *joined = rnd(r, 15) ? "True" : "False";
        put(b,
            "---\napiVersion: cluster.kubernetes-fleet.io/v1beta1\nkind: MemberCluster\n"
            "metadata: {name: m%03u%s, labels: {%s}%s}\n%s"
            "status:\n  agentStatus:\n  - type: MemberAgent\n"
            "    lastReceivedHeartbeat: \"%s\"\n"
            "    conditions:\n    - {type: Joined, status: \"%s\"}\n"
            "    - {type: Healthy, status: \"True\", lastTransitionTime: \"2024-04-01T00:00:00Z\"}\n"
            "  properties: {%s}\n",
            (i * 7919u) % 1000u, rnd(r, 3) ? "" : "x", labels,
            rnd(r, 20) ? "" : ", deletionTimestamp: \"2024-05-01T11:00:00Z\"", extra, hb, joined,
            props);
    }
    for (uint32_t i = 0; i < np; i++) {
        put(b,
            "---\napiVersion: placement.kubernetes-fleet.io/v1beta1\n"
            "kind: ClusterResourcePlacement\nmetadata: {name: crp-%u}\nspec:\n  policy:\n", i);
        uint32_t type = rnd(r, 10);
        if (type == 0) {
            put(b, "    placementType: PickAll\n");
        } else if (type == 1) {
            put(b, "    placementType: PickFixed\n    clusterNames: [m%03u, m%03u, nope]\n",
                (rnd(r, nc) * 7919u) % 1000u, (rnd(r, nc) * 7919u) % 1000u);
            continue;
        } else {
            put(b, "    placementType: PickN\n    numberOfClusters: %u\n",
                rnd(r, 4) ? rnd(r, 6) : rnd(r, 30));
        }
        /* every fourth policy repeats a common shape (shared cached columns) */
        int common = !rnd(r, 4);
        uint32_t nreq = common ? 1 : rnd(r, 3), npref = common ? 2 : rnd(r, 4);
        if (nreq || npref)
            put(b, "    affinity:\n      clusterAffinity:\n");
        if (nreq) {
            put(b, "        requiredDuringSchedulingIgnoredDuringExecution:\n"
                   "          clusterSelectorTerms:\n");
            for (uint32_t t = 0; t < nreq; t++) {
                uint32_t kind = common ? 0 : rnd(r, 4);
                if (kind == 0)
                    put(b, "          - labelSelector: {matchLabels: {env: prod}}\n");
                else if (kind == 1)
                    put(b, "          - labelSelector: {matchExpressions: [{key: zone, operator: "
                           "In, values: [a, b]}]}\n");
                else if (kind == 2)
                    put(b, "          - propertySelector: {matchExpressions: [{name: p, operator: "
                           "%s, values: [\"%u\"]}]}\n",
                        rnd(r, 2) ? "Ge" : "Lt", rnd(r, 12));
                else
                    put(b, "          - labelSelector: {matchExpressions: [{key: rack, operator: "
                           "Exists}]}\n            propertySelector: {matchExpressions: [{name: q, "
                           "operator: Gt, values: [\"1\"]}]}\n");
            }
        }
        if (npref) {
            put(b, "        preferredDuringSchedulingIgnoredDuringExecution:\n");
            for (uint32_t t = 0; t < npref; t++) {
                int w = common ? (t ? 30 : 70) : (int)rnd(r, 201) - 100;
                uint32_t kind = common ? 0 : rnd(r, 4);
                put(b, "        - weight: %d\n          preference:\n", w);
                if (kind == 1 || kind == 3)
                    put(b, "            labelSelector: {matchLabels: {zone: %s}}\n", zones[rnd(r, 4)]);
                if (kind != 1)
                    put(b, "            propertySorter: {name: %s, sortOrder: %s}\n",
                        common ? (t ? "q" : "p") : (rnd(r, 2) ? "p" : "q"),
                        common || rnd(r, 2) ? "Descending" : "Ascending");
            }
        }
        uint32_t nsp = common ? 1 : rnd(r, 3);
        if (nsp) {
            put(b, "    topologySpreadConstraints:\n");
            for (uint32_t k = 0; k < nsp; k++)
                put(b, "    - {maxSkew: %u, topologyKey: %s%s}\n", 1 + (common ? 0 : rnd(r, 2)),
                    common ? "zone" : keys[rnd(r, 3)],
                    !common && !rnd(r, 3) ? ", whenUnsatisfiable: ScheduleAnyway" : "");
        }
        if (!rnd(r, 4))
            put(b, "    tolerations:\n    - {key: k, %s}\n",
                rnd(r, 2) ? "operator: Exists" : "value: v1");
    }
    /* the current policy snapshot of some placements: a latest snapshot
     * object (after an older one), or the berth annotation on a copy */
    for (uint32_t i = 0; i < np; i++)
        if (!rnd(r, 2))
            for (uint32_t k = 0; k < 2; k++)
                put(b,
                    "---\napiVersion: placement.kubernetes-fleet.io/v1beta1\n"
                    "kind: ClusterSchedulingPolicySnapshot\nmetadata:\n  name: crp-%u-%u\n"
                    "  labels: {kubernetes-fleet.io/parent-CRP: crp-%u, "
                    "kubernetes-fleet.io/is-latest-snapshot: \"%s\", "
                    "kubernetes-fleet.io/policy-index: \"%u\"}\n"
                    "spec: {policyHash: YWJj}\n",
                    i, k, i, k ? "true" : "false", k);
    /* bindings: distinct (placement, cluster) pairs; made under snapshot
     * 0 (obsolete where 1 is the latest), 1, or none; Unscheduled ones may
     * name a cluster that is gone */
    uint32_t nb = rnd(r, 3) ? 0 : rnd(r, 12);
    for (uint32_t i = 0; i < nb; i++) {
        uint32_t p = rnd(r, np), c = rnd(r, nc), st = rnd(r, 3), snap = rnd(r, 3);
        static const char *const sts[] = {"Scheduled", "Bound", "Unscheduled"};
        char target[32], sn[64] = "";
        if (st == 2 && !rnd(r, 3))
            snprintf(target, sizeof target, "gone-%u", i);
        else
            snprintf(target, sizeof target, "m%03u", (c * 7919u) % 1000u);
        if (snap < 2)
            snprintf(sn, sizeof sn, ", schedulingPolicySnapshotName: crp-%u-%u", p, snap);
        put(b,
            "---\napiVersion: placement.kubernetes-fleet.io/v1beta1\nkind: ClusterResourceBinding\n"
            "metadata: {name: b%u, labels: {kubernetes-fleet.io/parent-CRP: crp-%u}}\n"
            "spec: {targetCluster: %s, state: %s%s}\n",
            i, p, target, sts[st], sn);
    }
}

typedef struct run {
    berth_fleet f;
    berth_fleet_ctx *ctx;
} run;

static int start(run *r, const buf *b, int reference, int explain)
{
    berth_fleet_init(&r->f);
    berth_error e;
    berth_error_clear(&e);
    berth_source src;
    berth_fleet_options opt = {0};
    opt.reference = reference;
    opt.explain = explain;
    berth_time_parse(NOW, &opt.now_ms);
    int rc = berth_doc_load_buffer(&r->f.arena, "r.yaml", b->p, b->n, &src, &e);
    if (!rc)
        rc = berth_fleet_load(&r->f, &src, 0, &e);
    if (!rc)
        rc = berth_fleet_finalize(&r->f, &e);
    if (!rc)
        rc = berth_fleet_ctx_new(&r->f, &opt, &r->ctx, &e);
    if (rc)
        berth_fleet_free(&r->f);
    return rc;
}

static void stop(run *r)
{
    berth_fleet_ctx_free(r->ctx);
    berth_fleet_free(&r->f);
}

static void compare(run *a, run *b, uint32_t p, uint32_t iter)
{
    berth_fleet_outcome x, y;
    assert_int_equal(berth_fleet_place(a->ctx, p, &x), 0);
    assert_int_equal(berth_fleet_place(b->ctx, p, &y), 0);
    uint32_t n = a->f.nclusters;
    if (x.status != y.status || strcmp(x.reason, y.reason) || x.nselected != y.nselected ||
        x.wanted != y.wanted || x.nnotfound != y.nnotfound)
        fail_msg("iter %u placement %u: status %d/%d nselected %u/%u reason '%s' / '%s'", iter, p,
                 x.status, y.status, x.nselected, y.nselected, x.reason, y.reason);
    for (uint32_t i = 0; i < x.nselected; i++)
        if (x.selected[i] != y.selected[i])
            fail_msg("iter %u placement %u: selected[%u] %s / %s", iter, p, i,
                     a->f.clusters[x.selected[i]].name, b->f.clusters[y.selected[i]].name);
    for (uint32_t c = 0; c < n; c++) {
        char ra[512], rb[512];
        berth_fleet_reason(a->ctx, c, ra, sizeof ra);
        berth_fleet_reason(b->ctx, c, rb, sizeof rb);
        if (x.cstatus[c] != y.cstatus[c] || x.affinity[c] != y.affinity[c] ||
            x.spread[c] != y.spread[c] || x.held[c] != y.held[c] || strcmp(ra, rb))
            fail_msg("iter %u placement %u cluster %s: status %u/%u aff %lld/%lld spread "
                     "%lld/%lld held %u/%u reason '%s' / '%s'",
                     iter, p, a->f.clusters[c].name, x.cstatus[c], y.cstatus[c],
                     (long long)x.affinity[c], (long long)y.affinity[c], (long long)x.spread[c],
                     (long long)y.spread[c], x.held[c], y.held[c], ra, rb);
        for (uint32_t t = 0; t < a->f.placements[p].npref; t++) {
            double da, db;
            if (berth_fleet_term_score(a->ctx, t, c, &da) != berth_fleet_term_score(b->ctx, t, c, &db))
                fail_msg("iter %u placement %u: term %u differs", iter, p, t);
        }
    }
}

static uint32_t runs_or(uint32_t dflt)
{
    const char *env = getenv("FLEET_RANDOM_RUNS");
    return env && atoi(env) > 0 ? (uint32_t)atoi(env) : dflt;
}

static void test_fast_equals_reference(void **state)
{
    (void)state;
    berth_rng rng;
    berth_rng_seed(&rng, 20240501);
    uint32_t compared = 0, obsolete = 0, ignored = 0, runs = runs_or(400);
    for (uint32_t iter = 0; iter < runs; iter++) {
        buf b = {NULL, 0, 0};
        uint32_t nc, np;
        gen(&rng, &b, &nc, &np);
        run fast, ref;
        int explain = (int)(iter % 5 == 4);
        int rc = start(&fast, &b, 0, explain);
        if (rc) {   /* e.g. a binding pair drawn twice: both paths reject it */
            assert_int_equal(start(&ref, &b, 1, 0), rc);
            free(b.p);
            continue;
        }
        assert_int_equal(start(&ref, &b, 1, 0), 0);
        for (uint32_t i = 0; i < fast.f.nbindings; i++) {
            obsolete += (uint32_t)fast.f.bindings[i].obsolete;
            ignored += fast.f.bindings[i].cluster == BERTH_FLEET_NONE;
        }
        for (uint32_t p = 0; p < fast.f.nplacements; p++)
            compare(&fast, &ref, p, iter);
        /* again in a shuffled order, with repeats */
        for (uint32_t i = 0; i < 2 * fast.f.nplacements; i++)
            compare(&fast, &ref, rnd(&rng, fast.f.nplacements), iter);
        compared += fast.f.nplacements;
        stop(&fast);
        stop(&ref);
        free(b.p);
    }
    assert_true(compared > 1000);
    assert_true(obsolete > 20);   /* the obsolete-binding paths were exercised */
    assert_true(ignored > 5);     /* and Unscheduled bindings to clusters that are gone */
}

/* Heavy ties and many obsolete bindings: few property values (affinity
 * sums tie across many clusters), PickN of 1-4 with one or two sorters and
 * at most one spread constraint (the top-K index by sorted access), and
 * for most placements many bindings made under an older policy snapshot
 * (+1 in ranking, among the tied). */
static void gen_ties(berth_rng *r, buf *b, uint32_t *ncl, uint32_t *npl)
{
    uint32_t nc = 20 + rnd(r, 100), np = 1 + rnd(r, 6);
    *ncl = nc;
    *npl = np;
    for (uint32_t i = 0; i < nc; i++) {
        char labels[64] = "";
        if (rnd(r, 6))
            snprintf(labels, sizeof labels, "zone: %s", zones[rnd(r, 2)]);
        put(b,
            "---\napiVersion: cluster.kubernetes-fleet.io/v1beta1\nkind: MemberCluster\n"
            "metadata: {name: t%03u, labels: {%s}}\n"
            "status:\n  agentStatus:\n  - type: MemberAgent\n"
            "    lastReceivedHeartbeat: \"2024-05-01T11:59:00Z\"\n"
            "    conditions:\n    - {type: Joined, status: \"True\"}\n"
            "    - {type: Healthy, status: \"True\", lastTransitionTime: \"2024-04-01T00:00:00Z\"}\n"
            "  properties: {p: {value: \"%u\"}, q: {value: \"%u\"}}\n",
            i, labels, rnd(r, 3), rnd(r, 2));
    }
    for (uint32_t i = 0; i < np; i++) {
        uint32_t npref = 1 + rnd(r, 2);
        put(b,
            "---\napiVersion: placement.kubernetes-fleet.io/v1beta1\n"
            "kind: ClusterResourcePlacement\nmetadata: {name: crp-%u}\nspec:\n  policy:\n"
            "    placementType: PickN\n    numberOfClusters: %u\n    affinity:\n"
            "      clusterAffinity:\n        preferredDuringSchedulingIgnoredDuringExecution:\n",
            i, 1 + rnd(r, 4));
        for (uint32_t t = 0; t < npref; t++)
            put(b,
                "        - weight: %d\n          preference: {propertySorter: {name: %s, "
                "sortOrder: %s}}\n",
                rnd(r, 2) ? 50 : 100, t ? "q" : "p", rnd(r, 4) ? "Descending" : "Ascending");
        if (rnd(r, 2))
            put(b, "    topologySpreadConstraints:\n    - {maxSkew: %u, topologyKey: zone}\n",
                1 + rnd(r, 2));
        for (uint32_t k = 0; k < 2; k++)
            put(b,
                "---\napiVersion: placement.kubernetes-fleet.io/v1beta1\n"
                "kind: ClusterSchedulingPolicySnapshot\nmetadata:\n  name: crp-%u-%u\n"
                "  labels: {kubernetes-fleet.io/parent-CRP: crp-%u, "
                "kubernetes-fleet.io/is-latest-snapshot: \"%s\", "
                "kubernetes-fleet.io/policy-index: \"%u\"}\n"
                "spec: {policyHash: YWJj}\n",
                i, k, i, k ? "true" : "false", k);
        /* distinct clusters: a random stride through the ring of clusters */
        uint32_t nb = rnd(r, 4) ? rnd(r, nc / 2) : 0, start = rnd(r, nc);
        for (uint32_t j = 0; j < nb; j++)
            put(b,
                "---\napiVersion: placement.kubernetes-fleet.io/v1beta1\n"
                "kind: ClusterResourceBinding\n"
                "metadata: {name: b%u-%u, labels: {kubernetes-fleet.io/parent-CRP: crp-%u}}\n"
                "spec: {targetCluster: t%03u, state: %s, schedulingPolicySnapshotName: "
                "crp-%u-%u}\n",
                i, j, i, (start + 2 * j) % nc, rnd(r, 2) ? "Scheduled" : "Bound", i,
                rnd(r, 8) ? 0 : 1);
    }
}

static void test_ties_and_obsolete_bindings(void **state)
{
    (void)state;
    berth_rng rng;
    berth_rng_seed(&rng, 20240502);
    uint32_t compared = 0, obsolete = 0, runs = runs_or(300);
    for (uint32_t iter = 0; iter < runs; iter++) {
        buf b = {NULL, 0, 0};
        uint32_t nc, np;
        gen_ties(&rng, &b, &nc, &np);
        run fast, ref;
        int rc = start(&fast, &b, 0, 0);
        if (rc) {   /* a binding pair drawn twice: both paths reject it */
            assert_int_equal(start(&ref, &b, 1, 0), rc);
            free(b.p);
            continue;
        }
        assert_int_equal(start(&ref, &b, 1, 0), 0);
        for (uint32_t i = 0; i < fast.f.nbindings; i++)
            obsolete += (uint32_t)fast.f.bindings[i].obsolete;
        for (uint32_t p = 0; p < fast.f.nplacements; p++)
            compare(&fast, &ref, p, iter);
        for (uint32_t i = 0; i < 2 * fast.f.nplacements; i++)
            compare(&fast, &ref, rnd(&rng, fast.f.nplacements), iter);
        compared += fast.f.nplacements;
        stop(&fast);
        stop(&ref);
        free(b.p);
    }
    assert_true(compared > 500);
    assert_true(obsolete > 1000);
}

/* Shared policies: many placements over a few policy shapes (equal static
 * column, topology key and sorter columns: one ranked list each, shared by
 * placements of different numberOfClusters), each with its own bindings:
 * current ones (clusters picked before the cycles, skipped in the ranked
 * lists; with numberOfClusters above 16 sometimes so many that fewer than
 * the picks still to make are left in a bucket's list and the index is
 * built by sorted access) and obsolete ones (the held-before bonus, added
 * after the lists). Zones of 0 to ~60 clusters: lists that hold every
 * feasible cluster of their bucket and lists that do not. */
static void gen_shared(berth_rng *r, buf *b, uint32_t *ncl, uint32_t *npl)
{
    uint32_t nc = 10 + rnd(r, 240), np = 4 + rnd(r, 14);
    *ncl = nc;
    *npl = np;
    for (uint32_t i = 0; i < nc; i++) {
        char labels[64] = "";
        if (rnd(r, 8))
            snprintf(labels, sizeof labels, "zone: %s, env: %s", zones[rnd(r, 4)],
                     rnd(r, 4) ? "prod" : "test");
        put(b,
            "---\napiVersion: cluster.kubernetes-fleet.io/v1beta1\nkind: MemberCluster\n"
            "metadata: {name: s%03u, labels: {%s}}\n"
            "status:\n  agentStatus:\n  - type: MemberAgent\n"
            "    lastReceivedHeartbeat: \"%s\"\n"
            "    conditions:\n    - {type: Joined, status: \"True\"}\n"
            "    - {type: Healthy, status: \"True\", lastTransitionTime: \"2024-04-01T00:00:00Z\"}\n"
            "  properties: {p: {value: \"%u\"}, q: {value: \"%u\"}}\n",
            i, labels, rnd(r, 10) ? "2024-05-01T11:59:00Z" : "2024-05-01T11:00:00Z", rnd(r, 4),
            rnd(r, 3));
    }
    /* three shapes per fleet */
    uint32_t sw1[3], sw2[3], ssp[3], sreq[3], snp[3];
    for (int k = 0; k < 3; k++) {
        sw1[k] = 1 + rnd(r, 100);
        sw2[k] = 1 + rnd(r, 100);
        ssp[k] = rnd(r, 3);   /* 0 none, 1 maxSkew 1, 2 maxSkew 2 */
        sreq[k] = rnd(r, 2);
        snp[k] = 1 + rnd(r, 2);
    }
    for (uint32_t i = 0; i < np; i++) {
        uint32_t k = rnd(r, 3);
        put(b,
            "---\napiVersion: placement.kubernetes-fleet.io/v1beta1\n"
            "kind: ClusterResourcePlacement\nmetadata: {name: crp-%u}\nspec:\n  policy:\n"
            "    placementType: PickN\n    numberOfClusters: %u\n    affinity:\n"
            "      clusterAffinity:\n",
            i, 1 + rnd(r, rnd(r, 3) ? 4 : 24));
        if (sreq[k])
            put(b, "        requiredDuringSchedulingIgnoredDuringExecution:\n"
                   "          clusterSelectorTerms:\n"
                   "          - labelSelector: {matchLabels: {env: prod}}\n");
        put(b,
            "        preferredDuringSchedulingIgnoredDuringExecution:\n"
            "        - weight: %u\n          preference: {propertySorter: {name: p, "
            "sortOrder: Descending}}\n",
            sw1[k]);
        if (snp[k] > 1)
            put(b,
                "        - weight: %u\n          preference: {propertySorter: {name: q, "
                "sortOrder: Ascending}}\n",
                sw2[k]);
        if (ssp[k])
            put(b, "    topologySpreadConstraints:\n    - {maxSkew: %u, topologyKey: zone}\n",
                ssp[k]);
        for (uint32_t v = 0; v < 2; v++)
            put(b,
                "---\napiVersion: placement.kubernetes-fleet.io/v1beta1\n"
                "kind: ClusterSchedulingPolicySnapshot\nmetadata:\n  name: crp-%u-%u\n"
                "  labels: {kubernetes-fleet.io/parent-CRP: crp-%u, "
                "kubernetes-fleet.io/is-latest-snapshot: \"%s\", "
                "kubernetes-fleet.io/policy-index: \"%u\"}\n"
                "spec: {policyHash: YWJj}\n",
                i, v, i, v ? "true" : "false", v);
        /* distinct clusters: every third through the ring of clusters, or a
         * run of the last ones (the top of tied rankings) */
        uint32_t nb = rnd(r, 3) ? rnd(r, nc / 3) : 0, start = rnd(r, nc), obs = rnd(r, 5);
        uint32_t stride = rnd(r, 2) ? 3 : 1;
        if (stride == 1)
            start = nc - nb;
        for (uint32_t j = 0; j < nb; j++)
            put(b,
                "---\napiVersion: placement.kubernetes-fleet.io/v1beta1\n"
                "kind: ClusterResourceBinding\n"
                "metadata: {name: b%u-%u, labels: {kubernetes-fleet.io/parent-CRP: crp-%u}}\n"
                "spec: {targetCluster: s%03u, state: %s, schedulingPolicySnapshotName: "
                "crp-%u-%u}\n",
                i, j, i, (start + stride * j) % nc, rnd(r, 2) ? "Scheduled" : "Bound", i,
                rnd(r, 4) < obs ? 0 : 1);
    }
}

static void test_shared_policies(void **state)
{
    (void)state;
    berth_rng rng;
    berth_rng_seed(&rng, 20240503);
    uint32_t compared = 0, obsolete = 0, current = 0, runs = runs_or(200);
    for (uint32_t iter = 0; iter < runs; iter++) {
        buf b = {NULL, 0, 0};
        uint32_t nc, np;
        gen_shared(&rng, &b, &nc, &np);
        run fast, ref;
        int rc = start(&fast, &b, 0, 0);
        if (rc) {   /* a binding pair drawn twice: both paths reject it */
            assert_int_equal(start(&ref, &b, 1, 0), rc);
            free(b.p);
            continue;
        }
        assert_int_equal(start(&ref, &b, 1, 0), 0);
        for (uint32_t i = 0; i < fast.f.nbindings; i++) {
            obsolete += (uint32_t)fast.f.bindings[i].obsolete;
            current += (uint32_t)!fast.f.bindings[i].obsolete;
        }
        for (uint32_t p = 0; p < fast.f.nplacements; p++)
            compare(&fast, &ref, p, iter);
        for (uint32_t i = 0; i < 2 * fast.f.nplacements; i++)
            compare(&fast, &ref, rnd(&rng, fast.f.nplacements), iter);
        compared += fast.f.nplacements;
        stop(&fast);
        stop(&ref);
        free(b.p);
    }
    assert_true(compared > 1000);
    assert_true(obsolete > 1000);
    assert_true(current > 1000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fast_equals_reference),
        cmocka_unit_test(test_ties_and_obsolete_bindings),
        cmocka_unit_test(test_shared_policies),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
