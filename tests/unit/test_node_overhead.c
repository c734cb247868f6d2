/* tests/unit/test_node_overhead.c - an InstanceType's node overhead and
 * allocatable (core/instance_overhead.c): the AWS and AKS formulas on examples
 * worked out by hand below, the provider from the name, the per-type
 * overrides (kubeReserved, systemReserved, evictionThreshold, maxPods,
 * enis / ipv4PerENI, provider) read from YAML, and their load errors. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "berth/autoscale.h"
#include "berth/instance.h"
#include "yaml_buf.h"

#define MI (1024LL * 1024)
#define GI (1024LL * MI)

/* A type with only a capacity: no overrides. */
static berth_instance_type bare(const char *name, int64_t milli, int64_t bytes, int64_t pods)
{
    berth_instance_type t;
    memset(&t, 0, sizeof t);
    t.name = name;
    t.capacity_cpu = milli;
    t.capacity_memory = bytes;
    t.capacity_pods = pods;
    t.max_pods = -1;
    t.kube_reserved[0] = t.kube_reserved[1] = -1;
    t.eviction_memory = -1;
    t.provider = berth_instance_provider_of_name(name);
    berth_instance_type_allocatable(&t);
    return t;
}

static void test_provider_of_name(void **st)
{
    (void)st;
    static const struct { const char *name; berth_provider want; } c[] = {
        {"m5.large", BERTH_PROVIDER_AWS},         {"m5.2xlarge", BERTH_PROVIDER_AWS},
        {"c6gn.medium", BERTH_PROVIDER_AWS},      {"t3a.nano", BERTH_PROVIDER_AWS},
        {"g5.xlarge", BERTH_PROVIDER_AWS},        {"m5d.metal", BERTH_PROVIDER_AWS},
        {"c6i.metal-32xl", BERTH_PROVIDER_AWS},   {"u-6tb1.112xlarge", BERTH_PROVIDER_AWS},
        {"x2iedn.24xlarge", BERTH_PROVIDER_AWS},  {"Standard_D2s_v3", BERTH_PROVIDER_AZURE},
        {"standard_e8ds_v5", BERTH_PROVIDER_AZURE}, {"Standard_", BERTH_PROVIDER_NONE},
        /* berth's made-up names stay without overhead */
        {"m.small", BERTH_PROVIDER_NONE},         {"a.small", BERTH_PROVIDER_NONE},
        {"f01.s2", BERTH_PROVIDER_NONE},          {"f1.t2", BERTH_PROVIDER_NONE},
        {"D4", BERTH_PROVIDER_NONE},              {"big", BERTH_PROVIDER_NONE},
        {"m5.huge", BERTH_PROVIDER_NONE},         {"M5.large", BERTH_PROVIDER_NONE},
    };
    for (size_t i = 0; i < sizeof c / sizeof *c; i++)
        if (berth_instance_provider_of_name(c[i].name) != c[i].want)
            fail_msg("%s: got %s", c[i].name,
                     berth_provider_name(berth_instance_provider_of_name(c[i].name)));
}

/* m5.large: 2 vCPU, 8192 MiB, 3 ENIs of 10 IPv4 addresses.
 *   max pods      = 3 x (10 - 1) + 2                      = 29
 *   VM overhead   = ceil(8192 x 0.075) = ceil(614.4)       = 615 MiB
 *   kube-reserved = 11 x 29 + 255                          = 574 MiB
 *                   cpu 6 % of 1000m + 1 % of 1000m        = 70m
 *   eviction      = 100 MiB
 *   allocatable   = 2000 - 70 = 1930m; 8192 - 615 - 574 - 100 = 6903 MiB */
static void test_aws_m5_large(void **st)
{
    (void)st;
    berth_instance_type t = bare("m5.large", 2000, 8 * GI, 110);
    t.enis = 3;
    t.ipv4_per_eni = 10;
    t.kube_reserved[0] = t.kube_reserved[1] = -1;
    t.eviction_memory = -1;
    berth_instance_type_allocatable(&t);
    assert_int_equal(t.provider, BERTH_PROVIDER_AWS);
    assert_int_equal(t.pods, 29);
    assert_int_equal(t.vm_overhead_memory, 615 * MI);
    assert_int_equal(t.kube_reserved[1], 574 * MI);
    assert_int_equal(t.kube_reserved[0], 70);
    assert_int_equal(t.eviction_memory, 100 * MI);
    assert_int_equal(t.cpu, 1930);
    assert_int_equal(t.memory, 6903 * MI);
}

/* Without ENI data the max pods is capacity.pods (110), which then sizes
 * kube-reserved memory: 11 x 110 + 255 = 1465 MiB; 8192 - 615 - 1465 - 100
 * = 6012 MiB. m5.24xlarge, 96 vCPU, 393216 MiB, 15 ENIs x 50 addresses:
 *   pods 15 x 49 + 2 = 737; kube-reserved 11 x 737 + 255 = 8362 MiB;
 *   VM ceil(393216 x 0.075) = ceil(29491.2) = 29492 MiB;
 *   memory 393216 - 29492 - 8362 - 100 = 355262 MiB;
 *   cpu 60 + 10 + 0.5 % x 2000 (10) + 0.25 % x 92000 (230) = 310m -> 95690m. */
static void test_aws_other_sizes(void **st)
{
    (void)st;
    berth_instance_type t = bare("m5.large", 2000, 8 * GI, 110);
    assert_int_equal(t.pods, 110);
    assert_int_equal(t.memory, 6012 * MI);
    t = bare("m5.24xlarge", 96000, 393216 * MI, 110);
    t.enis = 15;
    t.ipv4_per_eni = 50;
    t.kube_reserved[0] = t.kube_reserved[1] = -1;
    t.eviction_memory = -1;
    berth_instance_type_allocatable(&t);
    assert_int_equal(t.pods, 737);
    assert_int_equal(t.kube_reserved[0], 310);
    assert_int_equal(t.cpu, 95690);
    assert_int_equal(t.memory, 355262 * MI);
    /* maxPods wins over the ENI count (and kube-reserved still uses the
     * ENI-limited count, as the AL2 / AL2023 families) */
    t.max_pods = 50;
    t.kube_reserved[0] = t.kube_reserved[1] = -1;
    t.eviction_memory = -1;
    berth_instance_type_allocatable(&t);
    assert_int_equal(t.pods, 50);
    assert_int_equal(t.memory, 355262 * MI);
}

/* AKS (1.29+): kube-reserved memory = min(20 MiB x max pods + 50 MiB, 25 %
 * of the memory); eviction 100 MiB; cpu 60m / 100m / 140m / 180m / 260m
 * for 1 / 2 / 4 / 8 / 16 cores.
 *   Standard_D2s_v3, 2 vCPU 8 GiB, 30 pods: 20 x 30 + 50 = 650 MiB (< 2048)
 *     -> 8192 - 650 - 100 = 7442 MiB; 2000 - 100 = 1900m
 *   Standard_D4s_v3, 4 vCPU 16 GiB, 110 pods: 2250 MiB (< 4096)
 *     -> 16384 - 2250 - 100 = 14034 MiB; 4000 - 140 = 3860m
 *   Standard_B1s, 1 vCPU 1 GiB, 110 pods: 25 % = 256 MiB (< 2250)
 *     -> 1024 - 256 - 100 = 668 MiB; 1000 - 60 = 940m
 *   Standard_D16s_v5, 16 vCPU 64 GiB, 250 pods: 5050 MiB -> 65536 - 5050 -
 *     100 = 60386 MiB; 16000 - 260 = 15740m */
static void test_aks(void **st)
{
    (void)st;
    berth_instance_type t = bare("Standard_D2s_v3", 2000, 8 * GI, 30);
    assert_int_equal(t.provider, BERTH_PROVIDER_AZURE);
    assert_int_equal(t.kube_reserved[1], 650 * MI);
    assert_int_equal(t.memory, 7442 * MI);
    assert_int_equal(t.cpu, 1900);
    assert_int_equal(t.pods, 30);
    assert_int_equal(t.vm_overhead_memory, 0);
    t = bare("Standard_D4s_v3", 4000, 16 * GI, 110);
    assert_int_equal(t.memory, 14034 * MI);
    assert_int_equal(t.cpu, 3860);
    t = bare("Standard_B1s", 1000, 1 * GI, 110);
    assert_int_equal(t.kube_reserved[1], 256 * MI);
    assert_int_equal(t.memory, 668 * MI);
    assert_int_equal(t.cpu, 940);
    t = bare("Standard_D16s_v5", 16000, 64 * GI, 250);
    assert_int_equal(t.memory, 60386 * MI);
    assert_int_equal(t.cpu, 15740);
    static const int64_t cores[7] = {1, 2, 4, 8, 16, 32, 64};
    static const int64_t want[7] = {60, 100, 140, 180, 260, 420, 740}; /* the AKS table */
    for (int i = 0; i < 7; i++) {
        t = bare("Standard_X", cores[i] * 1000, 64 * GI, 110);
        assert_int_equal(t.kube_reserved[0], want[i]);
    }
}

static void test_none_keeps_capacity(void **st)
{
    (void)st;
    berth_instance_type t = bare("m.small", 2000, 4 * GI, 20);
    assert_int_equal(t.cpu, 2000);
    assert_int_equal(t.memory, 4 * GI);
    assert_int_equal(t.pods, 20);
}

/* ---- from YAML ---- */

typedef struct loaded {
    berth_autoscale m;
    berth_error e;
    int rc;
} loaded;

static void load(loaded *l, const char *spec)
{
    buf b = {.n = 0};
    add(&b, "apiVersion: berth.io/v1\nkind: InstanceType\nmetadata: {name: %s}\nspec:\n%s"
            "  offerings: [{zone: z1, capacityType: on-demand, price: 0.1}]\n",
        strstr(spec, "#aws") ? "m5.large" : strstr(spec, "#azure") ? "Standard_D2s_v3" : "x.y",
        spec);
    memset(l, 0, sizeof *l);
    berth_autoscale_init(&l->m);
    berth_source src;
    l->rc = berth_doc_load_buffer(&l->m.kube.arena, "t.yaml", b.s, b.n, &src, &l->e);
    if (!l->rc)
        l->rc = berth_autoscale_load(&l->m, &src, 0, &l->e);
}

static void test_yaml_fields(void **st)
{
    (void)st;
    loaded l;
    /* AWS with ENIs from the file: as test_aws_m5_large */
    load(&l, "  capacity: {cpu: \"2\", memory: 8Gi}  #aws\n  enis: 3\n  ipv4PerENI: 10\n");
    assert_int_equal(l.rc, 0);
    assert_int_equal(l.m.types[0].cpu, 1930);
    assert_int_equal(l.m.types[0].memory, 6903 * MI);
    assert_int_equal(l.m.types[0].pods, 29);
    assert_int_equal(l.m.types[0].capacity_cpu, 2000);
    berth_autoscale_free(&l.m);
    /* overrides: kubeReserved memory only (cpu stays the provider's 70m),
     * systemReserved, evictionThreshold, maxPods */
    load(&l, "  capacity: {cpu: \"2\", memory: 8Gi}  #aws\n  maxPods: 58\n"
             "  kubeReserved: {memory: 1Gi}\n  systemReserved: {cpu: 100m, memory: 100Mi}\n"
             "  evictionThreshold: {memory: 200Mi}\n");
    assert_int_equal(l.rc, 0);
    /* 2000 - 70 - 100; 8192 - 615 - 1024 - 100 - 200 */
    assert_int_equal(l.m.types[0].cpu, 1830);
    assert_int_equal(l.m.types[0].memory, 6253 * MI);
    assert_int_equal(l.m.types[0].pods, 58);
    berth_autoscale_free(&l.m);
    /* provider: none turns the name's formula off; azure on a plain name */
    load(&l, "  capacity: {cpu: \"2\", memory: 8Gi}  #aws\n  provider: none\n");
    assert_int_equal(l.rc, 0);
    assert_int_equal(l.m.types[0].cpu, 2000);
    assert_int_equal(l.m.types[0].memory, 8 * GI);
    berth_autoscale_free(&l.m);
    load(&l, "  capacity: {cpu: \"2\", memory: 8Gi, pods: 30}\n  provider: azure\n");
    assert_int_equal(l.rc, 0);
    assert_int_equal(l.m.types[0].memory, 7442 * MI);
    assert_int_equal(l.m.types[0].provider, BERTH_PROVIDER_AZURE);
    berth_autoscale_free(&l.m);
    /* reserving more than the node has leaves 0 */
    load(&l, "  capacity: {cpu: \"2\", memory: 8Gi}\n  kubeReserved: {cpu: \"3\"}\n");
    assert_int_equal(l.rc, 0);
    assert_int_equal(l.m.types[0].cpu, 0);
    berth_autoscale_free(&l.m);
}

static void test_yaml_errors(void **st)
{
    (void)st;
    static const struct { const char *spec, *frag; } c[] = {
        {"  capacity: {cpu: \"2\", memory: 8Gi}\n  provider: gcp\n", "spec.provider"},
        {"  capacity: {cpu: \"2\", memory: 8Gi}\n  enis: 3\n", "ipv4PerENI"},
        {"  capacity: {cpu: \"2\", memory: 8Gi}\n  kubeReserved: {cpu: 1, pods: 3}\n",
         "spec.kubeReserved"},
        {"  capacity: {cpu: \"2\", memory: 8Gi}\n  evictionThreshold: {cpu: 1}\n",
         "spec.evictionThreshold"},
        {"  capacity: {cpu: \"2\", memory: 8Gi}\n  systemReserved: {memory: -1Gi}\n",
         "must not be negative"},
        {"  capacity: {cpu: \"2\", memory: 8Gi}\n  maxPods: -1\n", "spec.maxPods"},
        {"  capacity: {cpu: \"2\", memory: 8Gi}\n  kubeletReserved: {cpu: 1}\n",
         "kubeletReserved"},
    };
    for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
        loaded l;
        load(&l, c[i].spec);
        if (l.rc != BERTH_EINVAL || !strstr(l.e.msg, c[i].frag) || !strstr(l.e.msg, "t.yaml:"))
            fail_msg("case %zu: rc %d, message '%s', want '%s'", i, l.rc, l.e.msg, c[i].frag);
        berth_autoscale_free(&l.m);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_provider_of_name),
        cmocka_unit_test(test_aws_m5_large),
        cmocka_unit_test(test_aws_other_sizes),
        cmocka_unit_test(test_aks),
        cmocka_unit_test(test_none_keeps_capacity),
        cmocka_unit_test(test_yaml_fields),
        cmocka_unit_test(test_yaml_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
