/* tests/unit/test_autoscale_threads.c - scale-down's speculative waves
 * (docs/autoscale.md "Threads", src/autoscale/parallel.c; issue 15 item
 * 6): on random Ocean estates of 1,030-1,200 nodes (above BERTH_PAR_MIN,
 * so the plan's questions run on worker sessions) laid out as kubectl lists
 * them (NodeList, PodList: items without kind, managedFields, status
 * blocks), plans with 2 and 4 threads equal the plan with 1 thread: the
 * whole JSON report (scale-down list with every move, blocked nodes with
 * their reason texts, scale-up, warnings). The estates mix what makes the
 * walk accept and reject in runs and alone: light nodes whose pods move
 * (accepted), nodes whose pod selects a label only its node carries (fits
 * nowhere: the fit index's FitError text), pods labelled
 * spotinst.io/restrict-scale-down or annotated safe-to-evict "false", a
 * PodDisruptionBudget with a small budget (spent across the plan), a group
 * at its minNodes and one with headroom; and pods the what-if session
 * answers (hostname topology spread, DoNotSchedule or ScheduleAnyway, and
 * required pod anti-affinity), some of them the only pods of their node. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <jansson.h>

#define YAML_BUF_SIZE (8 << 20)
#include "autoscale_fixture.h"
#include "autoscale/scaledown.h"
#include "berth/plan_report.h"
#include "berth/random.h"

static unsigned below(berth_rng *r, unsigned n)
{
    return (unsigned)berth_rng_below(r, n);
}

/* node kinds */
enum { K_LIGHT, K_PINNED, K_RESTRICT, K_SESSION, K_PDB, K_BUSY, K_KINDS };

static void pod(buf *b, berth_rng *r, const char *name, unsigned app, unsigned node, unsigned cpu,
                const char *extra_meta, const char *extra_spec)
{
    add(b, "- metadata:\n    name: %s\n    namespace: ns%u\n    labels: {app: app%u%s}\n", name,
        app % 5, app, extra_meta[0] == 'L' ? extra_meta + 1 : "");
    if (extra_meta[0] == 'A')
        add(b, "    annotations: {%s}\n", extra_meta + 1);
    add(b, "    creationTimestamp: \"2024-04-21T00:00:00Z\"\n"
           "    ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: app%u-5d8f, "
           "uid: u%u, controller: true}]\n"
           "    managedFields: [{manager: kube-controller-manager, operation: Update, "
           "apiVersion: v1}]\n  spec:\n    nodeName: ip-%06u\n%s"
           "    containers: [{name: app, image: app:1, resources: {requests: {cpu: %um, "
           "memory: %uMi}}}]\n"
           "  status: {phase: Running, conditions: [{type: Ready, status: \"True\"}]}\n",
        app, app, node, extra_spec, cpu, cpu * 2 + 64 * below(r, 4));
}

/* A random estate of nn nodes (see the top of the file). */
static void estate(buf *b, berth_rng *r, uint32_t nn)
{
    static const char *const zones[3] = {"z1", "z2", "z3"};
    b->n = 0;
    add(b, "apiVersion: berth.io/v1\nkind: VirtualNodeGroup\nmetadata: {name: general}\nspec:\n"
           "  labels: {pool: general}\n  instanceTypes: [m5.xlarge, m5.2xlarge]\n"
           "  zones: [z1, z2, z3]\n  minNodes: %u\n  maxNodes: %u\n",
        5 + below(r, 20), nn + 100);
    add(b, "---\napiVersion: berth.io/v1\nkind: VirtualNodeGroup\nmetadata: {name: batch}\nspec:\n"
           "  labels: {pool: batch}\n  instanceTypes: [m5.xlarge, m5.2xlarge]\n"
           "  zones: [z1, z2, z3]\n  minNodes: %u\n  maxNodes: %u\n"
           "  headroom: [{cpuPerUnit: \"2\", memoryPerUnit: 2Gi, numOfUnits: %u}]\n",
        nn / 4 + below(r, nn / 8), nn, 100 + below(r, 400));
    for (unsigned s = 0; s < 2; s++) {
        unsigned cpu = 4u << s;
        add(b, "---\napiVersion: berth.io/v1\nkind: InstanceType\nmetadata: {name: m5.%s}\n"
               "spec:\n  capacity: {cpu: \"%u\", memory: %uGi, pods: 58}\n  offerings:\n",
            s ? "2xlarge" : "xlarge", cpu, cpu * 4);
        for (unsigned z = 0; z < 3; z++)
            add(b, "  - {zone: %s, capacityType: on-demand, price: %.4f}\n", zones[z],
                cpu * 0.048);
    }
    add(b, "---\napiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: guarded, "
           "namespace: ns0}\nspec: {maxUnavailable: %u, selector: {matchLabels: {guard: "
           "\"yes\"}}}\n",
        2 + below(r, 6));
    uint8_t *kind = malloc(nn), *size = malloc(nn);
    assert_non_null(kind);
    assert_non_null(size);
    /* kinds come in runs (the walk meets accepted and rejected nodes in runs
     * and alone) */
    for (uint32_t i = 0; i < nn; i++) {
        if (!i || below(r, 3) == 0)
            kind[i] = (uint8_t)below(r, K_KINDS);
        else
            kind[i] = kind[i - 1];
        size[i] = (uint8_t)below(r, 2);
    }
    add(b, "---\napiVersion: v1\nkind: NodeList\nmetadata: {resourceVersion: \"92\"}\nitems:\n");
    for (uint32_t i = 0; i < nn; i++) {
        unsigned cpu = 4u << size[i], z = below(r, 3);
        add(b, "- metadata:\n    name: ip-%06u\n    labels: {pool: %s, "
               "node.kubernetes.io/instance-type: m5.%s, topology.kubernetes.io/zone: %s, "
               "kubernetes.io/hostname: ip-%06u, pin: p%u}\n"
               "    creationTimestamp: \"2024-04-20T00:00:00Z\"\n"
               "    managedFields: [{manager: kubelet, operation: Update, apiVersion: v1}]\n"
               "  spec: {providerID: \"aws:///%s/i-%06u\"}\n"
               "  status:\n    capacity: {cpu: \"%u\", memory: %uGi, pods: \"58\"}\n"
               "    allocatable: {cpu: %um, memory: %uMi, pods: \"58\"}\n"
               "    conditions: [{type: Ready, status: \"True\"}]\n",
            i, below(r, 3) ? "general" : "batch", size[i] ? "2xlarge" : "xlarge", zones[z], i,
            i, zones[z], i, cpu, cpu * 4, cpu * 1000 - 140, cpu * 4096 - 1500);
    }
    add(b, "---\napiVersion: v1\nkind: PodList\nmetadata: {resourceVersion: \"93\"}\nitems:\n");
    char name[64], spec[512];
    for (uint32_t i = 0; i < nn; i++) {
        unsigned cpu = 4000u << size[i], np = 1 + below(r, 3);
        /* utilisation: light kinds low, so they are asked early, among the others */
        unsigned target = kind[i] == K_BUSY ? cpu / 2 + below(r, cpu / 3)
                                            : cpu / 20 + below(r, cpu / 4);
        for (unsigned j = 0; j < np; j++) {
            unsigned app = below(r, 40), req = target / np;
            const char *meta = "L";
            spec[0] = 0;
            snprintf(name, sizeof name, "app%u-%06u-%u", app, i, j);
            switch (kind[i]) {
            case K_PINNED: /* a label only its node carries: fits nowhere else */
                if (!j)
                    snprintf(spec, sizeof spec, "    nodeSelector: {pin: p%u}\n", i);
                break;
            case K_RESTRICT:
                if (!j)
                    meta = below(r, 2) ? "L, spotinst.io/restrict-scale-down: \"true\""
                                       : "Acluster-autoscaler.kubernetes.io/safe-to-evict: "
                                         "\"false\"";
                break;
            case K_SESSION: /* the what-if session answers: spread, anti-affinity */
                if (below(r, 2))
                    snprintf(spec, sizeof spec,
                             "    topologySpreadConstraints: [{maxSkew: %u, topologyKey: "
                             "kubernetes.io/hostname, whenUnsatisfiable: %s, labelSelector: "
                             "{matchLabels: {app: app%u}}}]\n",
                             1 + below(r, 2), below(r, 2) ? "DoNotSchedule" : "ScheduleAnyway",
                             app);
                else
                    snprintf(spec, sizeof spec,
                             "    affinity: {podAntiAffinity: "
                             "{requiredDuringSchedulingIgnoredDuringExecution: [{topologyKey: "
                             "kubernetes.io/hostname, labelSelector: {matchLabels: {app: "
                             "app%u}}}]}}\n",
                             app);
                break;
            case K_PDB:
                app = 0; /* namespace ns0, the budget's */
                snprintf(name, sizeof name, "guarded-%06u-%u", i, j);
                meta = "L, guard: \"yes\"";
                break;
            default:
                break;
            }
            pod(b, r, name, app, i, req, meta, spec);
        }
    }
    free(kind);
    free(size);
}

static char *plan_json(buf *b, uint32_t threads, int *rc, uint32_t *ndown, uint32_t *nblocked,
                       uint32_t *nworker)
{
    berth_aplan_options o = {0};
    o.threads = threads;
    berth_aplan p;
    memset(&p, 0, sizeof p);
    char *out = plan_json_opt(b, o, rc, &p);
    *ndown = p.ndown;
    *nblocked = p.nblocked;
    *nworker = p.down_worker_questions;
    return out;
}

static void test_threads_same_plan(void **st)
{
    (void)st;
    static buf b;
    uint32_t downs = 0, blocked = 0, seeds = 0, on_workers = 0;
    int fits_nowhere = 0, restrict_ = 0, pdb = 0, min_nodes = 0, headroom = 0;
    for (uint64_t seed = 1; seed <= 4; seed++) {
        berth_rng r;
        berth_rng_seed(&r, seed * 7919);
        uint32_t nn = 1030 + below(&r, 171);
        estate(&b, &r, nn);
        int rc1 = 0;
        uint32_t nd1 = 0, nb1 = 0, nw1 = 0;
        char *one = plan_json(&b, 1, &rc1, &nd1, &nb1, &nw1);
        assert_int_equal(rc1, 0);
        assert_int_equal(nw1, 0);
        for (uint32_t T = 2; T <= 4; T += 2) {
            int rc = 0;
            uint32_t nd = 0, nb = 0, nw = 0;
            char *many = plan_json(&b, T, &rc, &nd, &nb, &nw);
            on_workers += nw;
            assert_int_equal(rc, 0);
            if (strcmp(one, many)) {
                size_t at = 0;
                while (one[at] && one[at] == many[at])
                    at++;
                fail_msg("seed %llu, %u nodes, %u threads: plans differ at byte %zu\n"
                         "1: ...%.300s\n%u: ...%.300s\n",
                         (unsigned long long)seed, nn, T, at, one + (at > 100 ? at - 100 : 0), T,
                         many + (at > 100 ? at - 100 : 0));
            }
            assert_int_equal(nd, nd1);
            assert_int_equal(nb, nb1);
            free(many);
        }
        downs += nd1;
        blocked += nb1;
        fits_nowhere += strstr(one, "fits no other node") != NULL;
        restrict_ += strstr(one, "restrict-scale-down") != NULL &&
                     strstr(one, "safe-to-evict") != NULL;
        pdb += strstr(one, "PodDisruptionBudget") != NULL;
        min_nodes += strstr(one, "is at minNodes") != NULL;
        headroom += strstr(one, "short of its headroom") != NULL;
        seeds++;
        free(one);
    }
    /* the waves ran: questions were answered on worker sessions */
    fprintf(stderr, "# %u questions asked on workers\n", on_workers);
    assert_true(on_workers >= 20 * seeds);
    /* the walks accept and reject, for every reason */
    if (downs < 100 * seeds || blocked < 100 * seeds || fits_nowhere < 4 || restrict_ < 4 ||
        pdb < 4 || min_nodes < 2)
        fail_msg("coverage: %u scale-downs, %u blocked; estates with fits-nowhere %d, "
                 "restrict %d, PDB %d, minNodes %d, headroom %d",
                 downs, blocked, fits_nowhere, restrict_, pdb, min_nodes, headroom);
}

/* the wave rule: one question after an acceptance, one more per rejection
 * in a row, at most the threads */
static void test_width_rule(void **st)
{
    (void)st;
    assert_int_equal(sd_width(0, 4), 1);
    assert_int_equal(sd_width(1, 4), 2);
    assert_int_equal(sd_width(2, 4), 3);
    assert_int_equal(sd_width(3, 4), 4);
    assert_int_equal(sd_width(50, 4), 4);
    assert_int_equal(sd_width(50, 2), 2);
    assert_int_equal(sd_width(0, 1), 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_width_rule),
        cmocka_unit_test(test_threads_same_plan),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
