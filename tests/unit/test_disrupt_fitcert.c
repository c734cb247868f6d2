/* tests/unit/test_disrupt_fitcert.c - the counting certificate
 * (src/disrupt/fitcert.c): on random small estates of plain pods (zone
 * nodeSelectors, tolerations of a tainted pool, cordoned nodes, mixed
 * requests, nodes nearly full) and random candidate sets, whenever the
 * certificate says "every moved pod fits", the what-if session schedules
 * them and places every one; it must say so often enough to matter, and
 * never for a pod that some pod's required anti-affinity term selects. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "berth/disrupt.h"
#include "berth/random.h"
#include "disrupt/state.h"

#define NOW 1714564800 /* 2024-05-01T12:00:00Z */

#define YAML_BUF_SIZE (1 << 17)
#include "disrupt_fixture.h"

static void estate(buf *b, berth_rng *r, int anti)
{
    static const char *zones[2] = {"z1", "z2"};
    static const char *cpus[6] = {"100m", "250m", "500m", "1", "1500m", "2"};
    b->n = 0;
    for (int p = 0; p < 2; p++)
        add(b, "---\napiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: %s}\nspec:\n"
               "  template:\n    spec:\n"
               "      nodeClassRef: {group: karpenter.azure.com, kind: AKSNodeClass, name: default}\n"
               "%s  disruption:\n    consolidationPolicy: WhenEmptyOrUnderutilized\n"
               "    consolidateAfter: 0s\n    budgets: [{nodes: \"100%%\"}]\n",
            p ? "tainted" : "plain",
            p ? "      taints: [{key: dedicated, value: x, effect: NoSchedule}]\n" : "");
    add(b, "---\napiVersion: berth.io/v1\nkind: InstanceType\nmetadata: {name: D4}\nspec:\n"
           "  capacity: {cpu: \"4\", memory: 16Gi, pods: 8}\n  offerings:\n"
           "  - {zone: z1, capacityType: on-demand, price: 0.2}\n"
           "  - {zone: z2, capacityType: on-demand, price: 0.2}\n");
    uint32_t nn = 3 + (uint32_t)berth_rng_below(r, 10);
    int anti_left = anti; /* the first pod carries the anti-affinity term */
    for (uint32_t i = 0; i < nn; i++) {
        int tainted = berth_rng_below(r, 3) == 0;
        const char *zone = zones[berth_rng_below(r, 2)];
        char name[16];
        snprintf(name, sizeof name, "n%u", i);
        add(b, "---\napiVersion: karpenter.sh/v1\nkind: NodeClaim\nmetadata:\n  name: %s\n"
               "  labels: {karpenter.sh/nodepool: %s, node.kubernetes.io/instance-type: D4, "
               "karpenter.sh/capacity-type: on-demand, topology.kubernetes.io/zone: %s}\n"
               "  creationTimestamp: \"2024-04-30T00:00:00Z\"\n"
               "status:\n  nodeName: %s\n  conditions:\n"
               "  - {type: Initialized, status: \"True\", lastTransitionTime: \"2024-04-30T00:05:00Z\"}\n",
            name, tainted ? "tainted" : "plain", zone, name);
        add(b, "---\napiVersion: v1\nkind: Node\nmetadata:\n  name: %s\n"
               "  labels: {karpenter.sh/nodepool: %s, node.kubernetes.io/instance-type: D4, "
               "karpenter.sh/capacity-type: on-demand, topology.kubernetes.io/zone: %s, "
               "kubernetes.io/hostname: %s, karpenter.sh/initialized: \"true\"}\n"
               "spec:\n%s%s"
               "status:\n  allocatable: {cpu: \"4\", memory: 16Gi, pods: \"8\"}\n",
            name, tainted ? "tainted" : "plain", zone, name,
            tainted ? "  taints: [{key: dedicated, value: x, effect: NoSchedule}]\n" : "",
            berth_rng_below(r, 8) == 0 ? "  unschedulable: true\n" : "");
        uint32_t np = (uint32_t)berth_rng_below(r, 7);
        for (uint32_t j = 0; j < np; j++) {
            uint64_t kind = berth_rng_below(r, 6);
            const char *spec = "";
            if (kind == 1)
                spec = "  nodeSelector: {topology.kubernetes.io/zone: z1}\n";
            else if (kind == 2)
                spec = "  tolerations: [{key: dedicated, operator: Exists}]\n";
            else if (kind == 3)
                spec = "  tolerations: [{key: dedicated, operator: Exists}]\n"
                       "  nodeSelector: {topology.kubernetes.io/zone: z2}\n";
            else if (kind == 4 && tainted)
                spec = "  tolerations: [{key: dedicated, operator: Equal, value: x}]\n";
            if (tainted && kind != 2 && kind != 3 && kind != 4)
                spec = "  tolerations: [{key: dedicated, operator: Exists}]\n";
            int a = anti_left;
            anti_left = 0;
            char app[8];
            snprintf(app, sizeof app, a ? "anti" : "a%u", (unsigned)kind);
            add(b, "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: p%u-%u\n  namespace: default\n"
                   "  labels: {app: %s}\n"
                   "  ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: rs, uid: u, "
                   "controller: true}]\n"
                   "spec:\n  nodeName: %s\n%s%s  containers:\n  - name: c\n"
                   "    resources: {requests: {cpu: \"%s\", memory: %uMi}}\n"
                   "status:\n  phase: Running\n  startTime: \"2024-05-01T11:00:00Z\"\n"
                   "  conditions: [{type: Ready, status: \"True\"}]\n",
                i, j, app, name, spec,
                a ? "  affinity:\n    podAntiAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n"
                    "      - labelSelector: {matchLabels: {app: a1}}\n"
                    "        topologyKey: topology.kubernetes.io/zone\n"
                  : "",
                cpus[berth_rng_below(r, 6)], 256u << berth_rng_below(r, 4));
        }
    }
}

/* For random candidate sets of one estate: certified ones place every
 * moved pod, and none moves a pod labelled app=selected (NULL: any).
 * Counts certified and uncertified questions, and those moving such a pod. */
static void questions(const berth_disrupt *m, berth_rng *r, const char *selected, uint32_t *yes,
                      uint32_t *no, uint32_t *with_selected)
{
    disrupt_state s;
    berth_dplan_options o = {.now = NOW};
    assert_int_equal(disrupt_state_init(&s, m, &o), 0);
    assert_int_equal(disrupt_options_ready(&s), 0);
    uint32_t np = m->kube.npods + 1;
    uint32_t *cands = malloc((s.nn + 1) * sizeof *cands), *moving = malloc(np * sizeof *moving),
             *moving2 = malloc(np * sizeof *moving2), *placed = malloc(np * sizeof *placed);
    assert_true(cands && moving && moving2 && placed);
    for (int q = 0; q < 12; q++) {
        uint32_t nc = 0;
        uint64_t want = 1 + berth_rng_below(r, s.nn < 4 ? s.nn : 4);
        for (uint32_t n = 0; n < s.nn; n++)
            if (berth_rng_below(r, s.nn) < want)
                cands[nc++] = n;
        uint32_t nm = 0;
        for (uint32_t i = 0; i < nc; i++)
            for (uint32_t j = 0; j < s.n[cands[i]].npods; j++)
                if (disrupt_pod_moves(&s, s.n[cands[i]].pods[j]))
                    moving[nm++] = s.n[cands[i]].pods[j];
        int c = disrupt_cert_all_fit(&s, cands, nc, moving, nm);
        assert_true(c == 0 || c == 1);
        berth_ksession *ks = disrupt_session(&s);
        assert_non_null(ks);
        assert_int_equal(berth_ksession_mark(ks), s.ks_base);
        uint32_t nm2 = 0;
        assert_int_equal(disrupt_evict_nodes(&s, cands, nc, moving2, &nm2), 0);
        assert_int_equal(nm2, nm);
        berth_error e;
        int rc = berth_ksession_place(ks, moving2, nm2, placed, NULL, NULL, &e);
        assert_true(rc == 0 || rc == BERTH_ENOFIT);
        if (c == 1 && rc) {
            uint32_t left = 0;
            for (uint32_t i = 0; i < nm2; i++)
                left += placed[i] == BERTH_KUBE_NONE;
            fail_msg("certified, but %u of %u moved pod(s) were not placed", left, nm2);
        }
        int sel = 0;
        for (uint32_t i = 0; selected && i < nm; i++) {
            const char *v = berth_labels_get(&m->kube.pods[moving[i]].labels, "app");
            sel |= v && !strcmp(v, selected);
        }
        if (c == 1 && sel)
            fail_msg("certified a question moving a pod an anti-affinity term selects");
        *with_selected += sel;
        *yes += c == 1 && nm;
        *no += c == 0;
        assert_int_equal(berth_ksession_rollback(ks, s.ks_base), 0);
    }
    free(cands);
    free(moving);
    free(moving2);
    free(placed);
    disrupt_state_free(&s);
}

static void test_certified_questions_place_every_pod(void **st)
{
    (void)st;
    static buf b;
    berth_rng r;
    berth_rng_seed(&r, 77);
    uint32_t yes = 0, no = 0, sel = 0;
    for (int iter = 0; iter < 100; iter++) {
        estate(&b, &r, 0);
        berth_disrupt m;
        berth_error e;
        if (load_model(&m, &b, &e))
            fail_msg("load: %s\n%s", e.msg, b.s);
        questions(&m, &r, NULL, &yes, &no, &sel);
        berth_disrupt_free(&m);
    }
    /* both answers occur often: the property is exercised */
    if (yes < 80 || no < 80)
        fail_msg("certified %u, unknown %u", yes, no);
}

/* A pod with a required zone anti-affinity term selecting app=a1 (pods
 * that may also be pinned to one zone): questions moving an a1 pod are
 * never certified, the others still are. */
static void test_pods_an_anti_affinity_term_selects_are_not_certified(void **st)
{
    (void)st;
    static buf b;
    berth_rng r;
    berth_rng_seed(&r, 78);
    uint32_t yes = 0, no = 0, sel = 0;
    for (int iter = 0; iter < 60; iter++) {
        estate(&b, &r, 1);
        berth_disrupt m;
        berth_error e;
        if (load_model(&m, &b, &e))
            fail_msg("load: %s\n%s", e.msg, b.s);
        questions(&m, &r, "a1", &yes, &no, &sel);
        berth_disrupt_free(&m);
    }
    if (yes < 20 || sel < 20)
        fail_msg("certified %u, questions moving an a1 pod %u", yes, sel);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_certified_questions_place_every_pod),
        cmocka_unit_test(test_pods_an_anti_affinity_term_selects_are_not_certified),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
