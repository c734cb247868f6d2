/* tests/unit/test_instance_labels.c - the labels derived from an
 * InstanceType's name and capacity (docs/disrupt.md "Instance type
 * labels"): Azure VM sizes split as skewer's GetVMSize (its own test cases:
 * subfamilies, constrained vCPUs, accelerators with and without "xl_",
 * NDR_, _cc_, _Promo, no version, a size that does not parse), AWS names
 * as the AWS provider's instanceTypeScheme (u-6tb1, m7i-flex, Graviton),
 * the derived table for Standard_D8s_v3, Standard_B2s, m6i.2xlarge and
 * c5.large, spec.labels overriding a derived label, and the keys a type
 * defines as absent. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "berth/instance.h"

#define GiB (1024LL * 1024 * 1024)

static void az(const char *size, const char *family, const char *sub, const char *cpus,
               const char *constrained, const char *features, const char *acc,
               const char *version, const char *series)
{
    berth_azure_vmsize z;
    if (berth_azure_vmsize_parse(size, &z))
        fail_msg("%s does not parse", size);
    assert_string_equal(z.family, family);
    assert_string_equal(z.subfamily, sub);
    assert_string_equal(z.cpus, cpus);
    assert_string_equal(z.constrained, constrained);
    assert_string_equal(z.features, features);
    assert_string_equal(z.accelerator, acc);
    assert_string_equal(z.version, version);
    assert_string_equal(z.series, series);
}

static void test_azure_vmsize(void **st)
{
    (void)st;
    /* skewer vmsize_test.go testCases */
    az("NV16as_v4", "N", "V", "16", "", "as", "", "v4", "NVas_v4");
    az("M16ms_v2", "M", "", "16", "", "ms", "", "v2", "Mms_v2");
    az("NC4as_T4_v3", "N", "C", "4", "", "as", "T4", "v3", "NCas_v3");
    az("ND96isr_MI300X_v5", "N", "D", "96", "", "isr", "MI300X", "v5", "NDisr_v5");
    az("NC24ads_A100_v4", "N", "C", "24", "", "ads", "A100", "v4", "NCads_v4");
    az("ND96amsr_A100_v4", "N", "D", "96", "", "amsr", "A100", "v4", "NDamsr_v4");
    az("ND96isr_H100_v5", "N", "D", "96", "", "isr", "H100", "v5", "NDisr_v5");
    az("NV36ads_A10_v5", "N", "V", "36", "", "ads", "A10", "v5", "NVads_v5");
    az("M8-2ms_v2", "M", "", "8", "2", "ms", "", "v2", "Mms_v2");
    az("A4_v2", "A", "", "4", "", "", "", "v2", "A_v2");
    az("EC48as_cc_v5", "E", "C", "48", "", "as", "", "v5", "ECas_v5");
    az("NV24", "N", "V", "24", "", "", "", "", "NV");
    az("D3_v2_Promo", "D", "", "3", "", "", "", "v2", "D_v2");
    az("L12aos_v4", "L", "", "12", "", "aos", "", "v4", "Laos_v4");
    az("D4fs_v6", "D", "", "4", "", "fs", "", "v6", "Dfs_v6");
    az("ND128isr_GB300_v6", "N", "D", "128", "", "isr", "GB300", "v6", "NDisr_v6");
    az("NC288ds_xl_RTXPRO6000BSE_v6", "N", "C", "288", "", "ds", "RTXPRO6000BSE", "v6",
       "NCds_v6");
    az("ND128isr_NDR_GB200_v6", "N", "D", "128", "", "isr", "GB200", "v6", "NDisr_v6");
    az("M416s_8_v2", "M", "", "416", "", "s", "", "v2", "Ms_v2"); /* unParsableVMSizes */
    /* the sizes */
    az("D8s_v3", "D", "", "8", "", "s", "", "v3", "Ds_v3");
    az("B2s", "B", "", "2", "", "s", "", "", "Bs");
    az("D4pls_v5", "D", "", "4", "", "pls", "", "v5", "Dpls_v5");
    berth_azure_vmsize z;
    assert_int_equal(berth_azure_vmsize_parse("inValid", &z), -1);
    assert_int_equal(berth_azure_vmsize_parse("", &z), -1);
    assert_int_equal(berth_azure_vmsize_parse("D8s_v3_extra", &z), -1);
    berth_azure_vmsize_parse("D3_v2_Promo", &z);
    assert_true(z.promo);
    berth_azure_vmsize_parse("EC48as_cc_v5", &z);
    assert_true(z.confidential_child);
}

static void aws(const char *name, int has_cat, const char *cat, const char *gen,
                const char *family, const char *size)
{
    berth_aws_instance w;
    assert_int_equal(berth_aws_instance_parse(name, &w), 0);
    assert_int_equal(w.has_category, has_cat);
    if (has_cat) {
        assert_string_equal(w.category, cat);
        assert_string_equal(w.generation, gen);
    }
    assert_int_equal(w.has_family, family != NULL);
    if (family) {
        assert_string_equal(w.family, family);
        assert_string_equal(w.size, size);
    }
}

static void test_aws_names(void **st)
{
    (void)st;
    aws("m6i.2xlarge", 1, "m", "6", "m6i", "2xlarge");
    aws("c5.large", 1, "c", "5", "c5", "large");
    aws("u-6tb1.metal", 1, "u", "1", "u-6tb1", "metal");
    aws("m7i-flex.large", 1, "m", "7", "m7i-flex", "large");
    aws("trn1n.32xlarge", 1, "trn", "1", "trn1n", "32xlarge");
    aws("im4gn.large", 1, "im", "4", "im4gn", "large");
    aws("mac2-m2.metal", 1, "mac", "2", "mac2-m2", "metal");
    aws("noseparator", 0, NULL, NULL, NULL, NULL);
    assert_int_equal(berth_instance_provider_of("m6i.2xlarge"), BERTH_PROVIDER_AWS);
    assert_int_equal(berth_instance_provider_of("Standard_D8s_v3"), BERTH_PROVIDER_AZURE);
    assert_int_equal(berth_instance_provider_of("Basic_A1"), BERTH_PROVIDER_AZURE);
    assert_int_equal(berth_instance_provider_of("D4"), BERTH_PROVIDER_GENERIC);
    assert_int_equal(berth_instance_provider_of("a.b.c"), BERTH_PROVIDER_GENERIC);
    assert_int_equal(berth_instance_provider_of("M5.large"), BERTH_PROVIDER_GENERIC);
}

static berth_instance_type mk(berth_arena *a, const char *name, int64_t cpu, int64_t mem,
                              int64_t gpus, berth_label *ex, uint32_t nex)
{
    berth_instance_type t;
    memset(&t, 0, sizeof t);
    t.name = name;
    t.cpu = cpu;
    t.memory = mem;
    t.gpus = gpus;
    t.labels.items = ex;
    t.labels.n = nex;
    berth_labels_sort(&t.labels);
    assert_int_equal(berth_instance_type_derive_labels(a, &t), 0);
    return t;
}

static void expect(const berth_instance_type *t, const char *key, const char *value)
{
    const char *v = berth_labels_get(&t->labels, key);
    if (!value) {
        if (v)
            fail_msg("%s: %s=%s, expected no label", t->name, key, v);
        return;
    }
    if (!v || strcmp(v, value))
        fail_msg("%s: %s=%s, expected %s", t->name, key, v ? v : "(absent)", value);
}

static void test_derived_table(void **st)
{
    (void)st;
    berth_arena a;
    berth_arena_init(&a, 0);
    berth_instance_type d8 = mk(&a, "Standard_D8s_v3", 8000, 32 * GiB, 0, NULL, 0);
    expect(&d8, "node.kubernetes.io/instance-type", "Standard_D8s_v3");
    expect(&d8, "kubernetes.io/os", "linux");
    expect(&d8, "kubernetes.io/arch", "amd64");
    expect(&d8, "karpenter.azure.com/sku-name", "Standard_D8s_v3");
    expect(&d8, "karpenter.azure.com/sku-family", "D");
    expect(&d8, "karpenter.azure.com/sku-series", "Ds_v3");
    expect(&d8, "karpenter.azure.com/sku-version", "3");
    expect(&d8, "karpenter.azure.com/sku-cpu", "8");
    expect(&d8, "karpenter.azure.com/sku-memory", "32768");
    expect(&d8, "kubernetes.azure.com/sku-cpu", "8");
    expect(&d8, "karpenter.azure.com/sku-gpu-count", "0");
    expect(&d8, "karpenter.azure.com/sku-gpu-name", NULL);
    expect(&d8, "karpenter.k8s.aws/instance-category", NULL);
    assert_true(berth_instance_type_defines(&d8, "karpenter.azure.com/sku-gpu-name"));
    assert_false(berth_instance_type_defines(&d8, "karpenter.k8s.aws/instance-category"));
    assert_int_equal(d8.naming, BERTH_PROVIDER_AZURE);
    berth_instance_type b2 = mk(&a, "Standard_B2s", 2000, 4 * GiB, 0, NULL, 0);
    expect(&b2, "karpenter.azure.com/sku-family", "B");
    expect(&b2, "karpenter.azure.com/sku-version", "1"); /* backfilled */
    expect(&b2, "karpenter.azure.com/sku-series", "Bs");
    expect(&b2, "karpenter.azure.com/sku-memory", "4096");
    berth_instance_type arm = mk(&a, "Standard_D4ps_v5", 4000, 16 * GiB, 0, NULL, 0);
    expect(&arm, "kubernetes.io/arch", "arm64");
    berth_instance_type gpu = mk(&a, "Standard_NC24ads_A100_v4", 24000, 220 * GiB, 1, NULL, 0);
    expect(&gpu, "karpenter.azure.com/sku-gpu-count", "1");
    expect(&gpu, "karpenter.azure.com/sku-gpu-name", "A100");
    expect(&gpu, "karpenter.azure.com/sku-gpu-manufacturer", "nvidia");
    berth_instance_type odd = mk(&a, "Standard_whatever", 2000, 4 * GiB, 0, NULL, 0);
    expect(&odd, "karpenter.azure.com/sku-family", NULL);
    assert_true(berth_instance_type_defines(&odd, "karpenter.azure.com/sku-family"));
    expect(&odd, "karpenter.azure.com/sku-name", "Standard_whatever");

    berth_instance_type m6 = mk(&a, "m6i.2xlarge", 8000, 32 * GiB, 0, NULL, 0);
    static const char *const pre[2] = {"karpenter.k8s.aws/", "eks.amazonaws.com/"};
    for (int i = 0; i < 2; i++) {
        char k[80];
        static const char *const keys[6] = {"instance-category", "instance-family",
                                            "instance-generation", "instance-size",
                                            "instance-cpu", "instance-memory"};
        static const char *const vals[6] = {"m", "m6i", "6", "2xlarge", "8", "32768"};
        for (int j = 0; j < 6; j++) {
            snprintf(k, sizeof k, "%s%s", pre[i], keys[j]);
            expect(&m6, k, vals[j]);
        }
        snprintf(k, sizeof k, "%sinstance-gpu-count", pre[i]);
        expect(&m6, k, NULL);
        assert_true(berth_instance_type_defines(&m6, k));
    }
    expect(&m6, "kubernetes.io/arch", "amd64");
    expect(&m6, "karpenter.azure.com/sku-family", NULL);
    berth_instance_type c5 = mk(&a, "c5.large", 2000, 4 * GiB, 0, NULL, 0);
    expect(&c5, "karpenter.k8s.aws/instance-category", "c");
    expect(&c5, "karpenter.k8s.aws/instance-generation", "5");
    berth_instance_type grav = mk(&a, "m7gd.xlarge", 4000, 16 * GiB, 0, NULL, 0);
    expect(&grav, "kubernetes.io/arch", "arm64");
    berth_instance_type g5 = mk(&a, "g5.xlarge", 4000, 16 * GiB, 1, NULL, 0);
    expect(&g5, "kubernetes.io/arch", "amd64");
    expect(&g5, "karpenter.k8s.aws/instance-gpu-count", "1");

    /* spec.labels win over derived ones; generic names get the generic keys */
    berth_label ex[2] = {{"kubernetes.io/arch", "arm64"}, {"team", "a"}};
    berth_instance_type own = mk(&a, "D4", 4000, 16 * GiB, 0, ex, 2);
    expect(&own, "kubernetes.io/arch", "arm64");
    expect(&own, "team", "a");
    expect(&own, "node.kubernetes.io/instance-type", "D4");
    expect(&own, "kubernetes.io/os", "linux");
    assert_int_equal(own.naming, BERTH_PROVIDER_GENERIC);
    assert_int_equal(own.nabsent, 0);
    berth_label fam[1] = {{"karpenter.azure.com/sku-family", "D"}};
    berth_instance_type forced = mk(&a, "Standard_whatever", 2000, 4 * GiB, 0, fam, 1);
    expect(&forced, "karpenter.azure.com/sku-family", "D");
    for (uint32_t i = 0; i < forced.nabsent; i++)
        assert_string_not_equal(forced.absent[i], "karpenter.azure.com/sku-family");

    /* offering labels */
    berth_offering of = {"eastus-1", BERTH_CT_SPOT, 0.1, 1, 0};
    berth_label ol[BERTH_OFFERING_LABELS];
    assert_int_equal(berth_offering_labels(&d8, &of, ol), 3);
    assert_string_equal(ol[2].key, "kubernetes.azure.com/scalesetpriority");
    assert_string_equal(ol[2].value, "spot");
    assert_int_equal(berth_offering_labels(&m6, &of, ol), 2);
    berth_arena_free(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_azure_vmsize),
        cmocka_unit_test(test_aws_names),
        cmocka_unit_test(test_derived_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
