/* tests/unit/test_kube_requests.c - pod requests (SPEC 2.5 "Pod
 * requests": regular containers, sidecars in order, init containers,
 * overhead), the usage-aware demand, the scoring-only non-zero requests (100m / 200Mi for a
 * missing key, explicit 0 kept), QoS classes (SPEC 2.1), the built-in
 * profiles and vSphere Pod sizes (SPEC 2.3). Pods are loaded from YAML so
 * the loader's defaulting is covered too. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "berth/kube.h"

#define MI (1024LL * 1024)
#define GI (1024LL * MI)

typedef struct kc {
    berth_kcluster k;
} kc;

static void load(kc *c, const char *yaml)
{
    berth_kube_init(&c->k);
    berth_error e;
    berth_error_clear(&e);
    berth_source src;
    int rc = berth_doc_load_buffer(&c->k.arena, "t.yaml", yaml, strlen(yaml), &src, &e);
    if (!rc)
        rc = berth_kube_load(&c->k, &src, 0, &e);
    if (rc)
        fail_msg("load failed: %s", e.msg);
}

/* A pod from container lines "name:REQCPU/REQMEM/LIMCPU/LIMMEM" ("-" = key absent). */
static const char *pod_yaml(char *buf, size_t n, const char *containers, const char *init,
                            const char *overhead)
{
    snprintf(buf, n,
             "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:%s\n%s%s%s",
             containers, init ? "  initContainers:" : "", init ? init : "",
             overhead ? overhead : "");
    return buf;
}

static void test_regular_sum(void **st)
{
    (void)st;
    char b[4096];
    kc c;
    load(&c, pod_yaml(b, sizeof b,
                      "\n  - {name: a, resources: {requests: {cpu: 250m, memory: 64Mi}}}"
                      "\n  - {name: b, resources: {requests: {cpu: \"1\", memory: 1Gi, "
                      "nvidia.com/gpu: 1}}}",
                      NULL, NULL));
    berth_kpod *p = &c.k.pods[0];
    assert_int_equal(p->req[BERTH_KRES_CPU], 1250);
    assert_int_equal(p->req[BERTH_KRES_MEMORY], 64 * MI + GI);
    uint32_t gpu = berth_kube_resource(&c.k, "nvidia.com/gpu", 0);
    assert_int_equal(gpu, BERTH_KRES_FIRST_EXT);
    assert_int_equal(p->req[gpu], 1);
    assert_int_equal(p->req[gpu], 1);
    assert_int_equal(p->qos, BERTH_QOS_BURSTABLE);
    berth_kube_free(&c.k);
}

/* demand (the usage-aware profile's configured size, SPEC 2.4): per
 * container the larger of request and limit, summed over the regular
 * containers; a limit alone counts, init containers do not */
static void test_demand(void **st)
{
    (void)st;
    char b[4096];
    kc c;
    load(&c, pod_yaml(b, sizeof b,
                      "\n  - {name: a, resources: {requests: {cpu: 250m, memory: 64Mi}, "
                      "limits: {cpu: 500m, memory: 64Mi}}}"
                      "\n  - {name: b, resources: {requests: {cpu: \"1\", memory: 1Gi}}}"
                      "\n  - {name: c, resources: {limits: {cpu: 300m, memory: 128Mi}}}",
                      "\n  - {name: i, resources: {requests: {cpu: \"8\", memory: 8Gi}}}\n",
                      NULL));
    berth_kpod *p = &c.k.pods[0];
    assert_int_equal(p->demand[0], 500 + 1000 + 300);
    assert_int_equal(p->demand[1], 64 * MI + GI + 128 * MI);
    assert_int_equal(p->has_image, 0);
    berth_kube_free(&c.k);
    /* has_image: any container's or init container's image */
    for (int in_init = 0; in_init < 2; in_init++) {
        load(&c, pod_yaml(b, sizeof b,
                          in_init ? "\n  - {name: a}" : "\n  - {name: a}\n  - {name: b, image: app:1}",
                          in_init ? "\n  - {name: i, image: tools:2}\n" : NULL, NULL));
        assert_int_equal(c.k.pods[0].has_image, 1);
        assert_null(c.k.pods[0].containers[0].image);
        berth_kube_free(&c.k);
    }
}

static void test_init_and_sidecars(void **st)
{
    (void)st;
    char b[4096];
    kc c;
    /* regular: 1 cpu. init order: sidecar 200m, init 2 cpu (costs 2.2),
     * sidecar 300m, init 500m (costs 1.0). sum = 1 + 0.5 = 1.5;
     * max(1.5, 2.2) = 2.2 + overhead 100m = 2.3 */
    load(&c, pod_yaml(b, sizeof b, "\n  - {name: a, resources: {requests: {cpu: \"1\"}}}",
                      "\n  - {name: s1, restartPolicy: Always, resources: {requests: {cpu: 200m}}}"
                      "\n  - {name: i1, resources: {requests: {cpu: \"2\"}}}"
                      "\n  - {name: s2, restartPolicy: Always, resources: {requests: {cpu: 300m}}}"
                      "\n  - {name: i2, resources: {requests: {cpu: 500m}}}\n",
                      "  overhead: {cpu: 100m, memory: 10Mi}\n"));
    berth_kpod *p = &c.k.pods[0];
    assert_int_equal(p->ninit, 4);
    assert_true(p->init[0].sidecar);
    assert_false(p->init[1].sidecar);
    assert_int_equal(p->req[BERTH_KRES_CPU], 2300);
    assert_int_equal(p->req[BERTH_KRES_MEMORY], 10 * MI);
    /* non-zero: every one of the 5 containers lacks memory: regular 200Mi
     * + sidecars 400Mi = 600Mi; init i1 = 200 + 200 = 400Mi; i2 = 200 +
     * 400 = 600Mi -> 600Mi + overhead */
    assert_int_equal(p->req_nz[BERTH_KRES_MEMORY], 600 * MI + 10 * MI);
    assert_int_equal(p->req_nz[BERTH_KRES_CPU], 2300);
    berth_kube_free(&c.k);

    /* sidecars alone dominate: sum = 1 + 0.2 + 0.3 = 1.5 > init 1.2 */
    load(&c, pod_yaml(b, sizeof b, "\n  - {name: a, resources: {requests: {cpu: \"1\"}}}",
                      "\n  - {name: s1, restartPolicy: Always, resources: {requests: {cpu: 200m}}}"
                      "\n  - {name: s2, restartPolicy: Always, resources: {requests: {cpu: 300m}}}"
                      "\n  - {name: i1, resources: {requests: {cpu: 700m}}}\n",
                      NULL));
    assert_int_equal(c.k.pods[0].req[BERTH_KRES_CPU], 1500);
    berth_kube_free(&c.k);
}

static void test_nonzero_defaults(void **st)
{
    (void)st;
    char b[4096];
    kc c;
    load(&c, pod_yaml(b, sizeof b,
                      "\n  - {name: a}"
                      "\n  - {name: b, resources: {requests: {cpu: \"0\", memory: \"0\"}}}"
                      "\n  - {name: c, resources: {requests: {cpu: 300m}}}",
                      NULL, NULL));
    berth_kpod *p = &c.k.pods[0];
    assert_int_equal(p->req[BERTH_KRES_CPU], 300);
    assert_int_equal(p->req[BERTH_KRES_MEMORY], 0);
    /* a: 100m + 200Mi; b: explicit 0 stays 0; c: 300m + 200Mi */
    assert_int_equal(p->req_nz[BERTH_KRES_CPU], 400);
    assert_int_equal(p->req_nz[BERTH_KRES_MEMORY], 400 * MI);
    berth_kube_free(&c.k);

    /* an empty container list requests nothing, even non-zero */
    load(&c, "apiVersion: v1\nkind: Pod\nmetadata: {name: e}\nspec:\n  containers: []\n");
    assert_int_equal(c.k.pods[0].req_nz[BERTH_KRES_CPU], 0);
    assert_int_equal(c.k.pods[0].qos, BERTH_QOS_BESTEFFORT);
    berth_kube_free(&c.k);

    /* a limit without a request defaults the request (API defaulting) */
    load(&c, pod_yaml(b, sizeof b, "\n  - {name: a, resources: {limits: {cpu: \"2\"}}}", NULL,
                      NULL));
    assert_int_equal(c.k.pods[0].req[BERTH_KRES_CPU], 2000);
    assert_int_equal(c.k.pods[0].req_nz[BERTH_KRES_CPU], 2000);
    assert_int_equal(c.k.pods[0].req_nz[BERTH_KRES_MEMORY], 200 * MI);
    berth_kube_free(&c.k);
}

static void test_qos(void **st)
{
    (void)st;
    char b[4096];
    kc c;
    /* Guaranteed: limits only (requests default to them), and equal pairs */
    load(&c, pod_yaml(b, sizeof b,
                      "\n  - {name: a, resources: {limits: {cpu: \"1\", memory: 1Gi}}}"
                      "\n  - {name: b, resources: {requests: {cpu: 500m, memory: 64Mi}, "
                      "limits: {cpu: 500m, memory: 64Mi}}}",
                      "\n  - {name: i, resources: {limits: {cpu: 100m, memory: 8Mi}}}\n", NULL));
    assert_int_equal(c.k.pods[0].qos, BERTH_QOS_GUARANTEED);
    assert_string_equal(berth_qos_name(c.k.pods[0].qos), "Guaranteed");
    berth_kube_free(&c.k);
    /* an init container without limits makes it Burstable */
    load(&c, pod_yaml(b, sizeof b,
                      "\n  - {name: a, resources: {limits: {cpu: \"1\", memory: 1Gi}}}",
                      "\n  - {name: i, resources: {requests: {cpu: 100m}}}\n", NULL));
    assert_int_equal(c.k.pods[0].qos, BERTH_QOS_BURSTABLE);
    berth_kube_free(&c.k);
    /* request below the limit: Burstable */
    load(&c, pod_yaml(b, sizeof b,
                      "\n  - {name: a, resources: {requests: {cpu: 500m, memory: 1Gi}, "
                      "limits: {cpu: \"1\", memory: 1Gi}}}",
                      NULL, NULL));
    assert_int_equal(c.k.pods[0].qos, BERTH_QOS_BURSTABLE);
    assert_string_equal(berth_qos_name(BERTH_QOS_BURSTABLE), "Burstable");
    berth_kube_free(&c.k);
    /* only an extended resource and explicit zeros: BestEffort */
    load(&c, pod_yaml(b, sizeof b,
                      "\n  - {name: a, resources: {requests: {cpu: \"0\", example.com/foo: 1}}}"
                      "\n  - {name: b}",
                      NULL, NULL));
    assert_int_equal(c.k.pods[0].qos, BERTH_QOS_BESTEFFORT);
    assert_string_equal(berth_qos_name(BERTH_QOS_BESTEFFORT), "BestEffort");
    berth_kube_free(&c.k);
    /* cpu limit only on one container: Burstable */
    load(&c, pod_yaml(b, sizeof b, "\n  - {name: a, resources: {limits: {cpu: \"1\"}}}", NULL,
                      NULL));
    assert_int_equal(c.k.pods[0].qos, BERTH_QOS_BURSTABLE);
    berth_kube_free(&c.k);
}

static void test_profiles(void **st)
{
    (void)st;
    berth_kcluster k;
    berth_kube_init(&k);
    berth_kprofile p;
    berth_kube_default_profile(&k, &p);
    assert_string_equal(p.name, "default-scheduler");
    assert_true(p.filters & (1u << BERTH_KP_VOLUME_ZONE));
    assert_false(p.filters & (1u << BERTH_KP_BALANCED_ALLOCATION));
    assert_int_equal(p.weight[BERTH_KP_TAINT_TOLERATION], 3);
    assert_int_equal(p.weight[BERTH_KP_NODE_AFFINITY], 2);
    assert_int_equal(p.weight[BERTH_KP_NODE_RESOURCES_FIT], 1);
    assert_int_equal(p.weight[BERTH_KP_POD_TOPOLOGY_SPREAD], 2);
    assert_int_equal(p.weight[BERTH_KP_INTER_POD_AFFINITY], 2);
    assert_int_equal(p.weight[BERTH_KP_BALANCED_ALLOCATION], 1);
    assert_int_equal(p.weight[BERTH_KP_IMAGE_LOCALITY], 1);
    assert_false(p.scores & (1u << BERTH_KP_USAGE_HEADROOM));
    assert_int_equal(p.fit_strategy, BERTH_FIT_LEAST_ALLOCATED);
    assert_int_equal(p.nfit_res, 2);
    assert_int_equal(p.hard_pod_affinity_weight, 1);
    assert_true(p.spread_system_defaults);
    berth_kprofile u;
    berth_kube_usage_aware_profile(&k, &u);
    assert_string_equal(u.name, "usage-aware");
    assert_true(u.usage_aware);
    assert_int_equal(u.filters, p.filters);
    assert_int_equal(u.scores, 1u << BERTH_KP_USAGE_HEADROOM);
    assert_int_equal(u.weight[BERTH_KP_USAGE_HEADROOM], 1);
    assert_string_equal(berth_kplugin_name(BERTH_KP_BALANCED_ALLOCATION),
                        "NodeResourcesBalancedAllocation");
    assert_string_equal(berth_kplugin_name(BERTH_KP_USAGE_HEADROOM), "UsageHeadroom");
    assert_int_equal(berth_kube_resource(&k, "pods", 1), BERTH_KUBE_NONE);
    assert_int_equal(berth_kube_resource(&k, "memory", 0), BERTH_KRES_MEMORY);
    assert_int_equal(berth_kube_resource(&k, "example.com/x", 0), BERTH_KUBE_NONE);
    berth_kube_free(&k);
}

static void test_vsphere(void **st)
{
    (void)st;
    kc c;
    load(&c, "apiVersion: v1\nkind: Pod\nmetadata: {name: bare}\nspec:\n  containers:\n"
             "  - {name: app, image: nginx}\n");
    berth_vsphere_opts o;
    berth_vsphere_default_opts(&o);
    assert_int_equal(o.default_cpu_milli, 500);
    assert_int_equal(o.default_memory, 512 * MI);
    berth_vsphere_size s;
    /* the seed: one container without requests or limits -> 1 vCPU, 512 MB */
    berth_kube_vsphere_size(&c.k.pods[0], &o, &s);
    assert_int_equal(s.vcpu, 1);
    assert_int_equal(s.memory, 512 * MI);
    assert_int_equal(s.reservation_cpu, 0);
    assert_int_equal(s.reservation_memory, 0);
    berth_kube_free(&c.k);

    load(&c, "apiVersion: v1\nkind: Pod\nmetadata: {name: x}\nspec:\n  containers:\n"
             "  - {name: a, resources: {requests: {cpu: 250m, memory: 64Mi}, limits: {cpu: 500m, "
             "memory: 128Mi}}}\n"
             "  - {name: b, resources: {requests: {cpu: 1500m, memory: 1Gi}, limits: {cpu: \"2\", "
             "memory: 3Gi}}}\n"
             "  - {name: c, resources: {requests: {memory: 700Mi}}}\n"
             "  initContainers:\n"
             "  - {name: setup, resources: {requests: {cpu: \"8\", memory: 8Gi}}}\n"
             "  - {name: side, restartPolicy: Always, resources: {limits: {cpu: 600m}}}\n");
    berth_kube_vsphere_size(&c.k.pods[0], &o, &s);
    /* cpu: a 500 (default; limit 500 not larger), b 2000, c 500 (default),
     * side 600 -> 3600 -> 4 vCPU. memory: a 512Mi, b 3Gi, c 700Mi, side
     * 512Mi. The regular init container is not part of the running pod. */
    assert_int_equal(s.vcpu, 4);
    assert_int_equal(s.memory, 512 * MI + 3 * GI + 700 * MI + 512 * MI);
    assert_int_equal(s.reservation_cpu, 250 + 1500 + 600);
    assert_int_equal(s.reservation_memory, 64 * MI + GI + 700 * MI);
    /* margin */
    o.margin_cpu_milli = 400;
    o.margin_memory = 100 * MI;
    berth_kube_vsphere_size(&c.k.pods[0], &o, &s);
    assert_int_equal(s.vcpu, 4);
    assert_int_equal(s.memory, 512 * MI + 3 * GI + 700 * MI + 512 * MI + 100 * MI);
    o.margin_cpu_milli = 401;
    berth_kube_vsphere_size(&c.k.pods[0], &o, &s);
    assert_int_equal(s.vcpu, 5);
    berth_kube_free(&c.k);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_regular_sum),    cmocka_unit_test(test_demand),
        cmocka_unit_test(test_init_and_sidecars),
        cmocka_unit_test(test_nonzero_defaults), cmocka_unit_test(test_qos),
        cmocka_unit_test(test_profiles),       cmocka_unit_test(test_vsphere),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
