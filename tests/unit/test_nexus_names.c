/* tests/unit/test_nexus_names.c - cluster names along the timeline (SPEC
 * 1.3): a KubernetesCluster whose name is live (created earlier and not
 * deleted since) is bad input, located at the second document, also across
 * files and after a creation that failed to provision; a name freed by
 * delete-cluster may be created again, and the run then holds one live
 * cluster of that name. The cluster-name index keeps its probe runs short
 * under 4,096 names built to share one slot of the FNV-1a hash it had. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "../hostile_names.h"
#include "berth/doc.h"
#include "berth/nexus.h"
#include "nexus/state.h"

#define SITE                                                                                 \
    "apiVersion: berth.io/v1\nkind: Site\nmetadata: {name: lab}\n"                           \
    "spec:\n  racks: 2\n  machinesPerRack: 2\n"                                              \
    "  machine: {numaCells: 2, cell: {cpu: 48, memory: 224Gi}}\n"

static void cluster(char *out, size_t size, const char *name, int cp)
{
    snprintf(out, size,
             "---\napiVersion: networkcloud.azure.com/v1\nkind: KubernetesCluster\n"
             "metadata: {name: %s, resourceGroup: rg}\n"
             "properties:\n  controlPlaneNodeConfiguration: {count: %d, vmSkuName: NC_G2_8_v1}\n"
             "  initialAgentPoolConfigurations:\n"
             "  - {name: p1, count: 1, vmSkuName: NC_G2_8_v1, mode: System}\n"
             "  kubernetesVersion: 1.29.4\n",
             name, cp);
}

static void del(char *out, size_t size, const char *name)
{
    snprintf(out, size,
             "---\napiVersion: berth.io/v1\nkind: Operation\nmetadata: {name: drop-%s}\n"
             "spec: {action: delete-cluster, cluster: %s}\n",
             name, name);
}

/* Loads the files (name, text) in order and validates. */
static int load(berth_nexus *nx, const char *const *files, size_t n, berth_error *e)
{
    berth_nexus_init(nx);
    berth_error_clear(e);
    for (size_t i = 0; i < n; i++) {
        berth_source src;
        int rc = berth_doc_load_buffer(&nx->arena, files[2 * i], files[2 * i + 1],
                                       strlen(files[2 * i + 1]), &src, e);
        if (!rc)
            rc = berth_nexus_load(nx, &src, 0, e);
        if (rc)
            return rc;
    }
    return berth_nexus_validate(nx, e);
}

static void test_second_live_cluster_is_bad_input(void **st)
{
    (void)st;
    char a[600], b[600], a2[600], text[4000];
    cluster(a, sizeof a, "alpha", 1);
    cluster(b, sizeof b, "beta", 1);
    cluster(a2, sizeof a2, "alpha", 3);
    snprintf(text, sizeof text, "%s%s%s%s", SITE, a, b, a2);
    const char *files[] = {"t.yaml", text};
    berth_nexus nx;
    berth_error e;
    assert_int_equal(load(&nx, files, 1, &e), BERTH_EINVAL);
    /* the third KubernetesCluster document starts on line 27 */
    assert_non_null(strstr(e.msg, "t.yaml:27:1: metadata.name: cluster 'alpha' already exists"));
    assert_non_null(strstr(e.msg, "created at t.yaml:9:1"));
    berth_nexus_free(&nx);

    /* across files: the location is the second file's */
    char site_a[2000];
    snprintf(site_a, sizeof site_a, "%s%s", SITE, a);
    const char *two[] = {"one.yaml", site_a, "two.yaml", a2 + 4 /* no leading "---\n" */};
    assert_int_equal(load(&nx, two, 2, &e), BERTH_EINVAL);
    assert_non_null(strstr(e.msg, "two.yaml:1:1: metadata.name: cluster 'alpha'"));
    assert_non_null(strstr(e.msg, "one.yaml:9:1"));
    berth_nexus_free(&nx);
}

static void test_deleted_name_can_be_created_again(void **st)
{
    (void)st;
    char a[600], d[400], a2[600], b[600], text[4000];
    cluster(a, sizeof a, "alpha", 1);
    del(d, sizeof d, "alpha");
    cluster(a2, sizeof a2, "alpha", 3);
    cluster(b, sizeof b, "beta", 1);
    snprintf(text, sizeof text, "%s%s%s%s%s", SITE, a, b, d, a2);
    const char *files[] = {"t.yaml", text};
    berth_nexus nx;
    berth_error e;
    int rc = load(&nx, files, 1, &e);
    if (rc)
        fail_msg("validate: %s", e.msg);
    berth_nexus_options opt = {.use_index = 1, .tiebreak = BERTH_TIE_FIRST};
    rc = berth_nexus_run(&nx, &opt, &e);
    if (rc)
        fail_msg("run: %d %s", rc, e.msg);
    /* one live alpha (the second, 3 control-plane VMs), the first deleted */
    uint32_t c = berth_nexus_find_cluster(&nx, "alpha");
    assert_int_not_equal(c, BERTH_NEXUS_NONE);
    assert_int_equal(nx.pools[nx.clusters[c].pools[0]].nvms, 3);
    uint32_t live = 0, deleted = 0;
    for (uint32_t i = 0; i < nx.nclusters; i++)
        if (!strcmp(nx.clusters[i].name, "alpha")) {
            live += nx.clusters[i].status != BERTH_CLUSTER_DELETED;
            deleted += nx.clusters[i].status == BERTH_CLUSTER_DELETED;
        }
    assert_int_equal(live, 1);
    assert_int_equal(deleted, 1);
    berth_nexus_free(&nx);

    /* deleted, created, created again: the third is bad input */
    char text2[5000];
    snprintf(text2, sizeof text2, "%s%s%s%s%s", SITE, a, d, a2, a2);
    const char *files2[] = {"u.yaml", text2};
    assert_int_equal(load(&nx, files2, 1, &e), BERTH_EINVAL);
    assert_non_null(strstr(e.msg, "cluster 'alpha' already exists"));
    berth_nexus_free(&nx);
}

static void test_failed_cluster_is_still_live(void **st)
{
    (void)st;
    /* 300 control-plane VMs of NC_G2_8_v1 cannot be placed on 4 machines
     * (224 at most): the cluster fails to provision but its name stays
     * taken until deleted */
    char big[600], a[600], text[4000];
    cluster(big, sizeof big, "alpha", 300);
    cluster(a, sizeof a, "alpha", 1);
    snprintf(text, sizeof text, "%s%s%s", SITE, big, a);
    const char *files[] = {"t.yaml", text};
    berth_nexus nx;
    berth_error e;
    assert_int_equal(load(&nx, files, 1, &e), BERTH_EINVAL);
    assert_non_null(strstr(e.msg, "already exists"));
    berth_nexus_free(&nx);
    /* without validation the run agrees: the first creation fails, the
     * second step fails on the name, with its location */
    snprintf(text, sizeof text, "%s%s%s", SITE, big, a);
    berth_nexus_init(&nx);
    berth_source src;
    berth_error_clear(&e);
    assert_int_equal(berth_doc_load_buffer(&nx.arena, "v.yaml", text, strlen(text), &src, &e), 0);
    assert_int_equal(berth_nexus_load(&nx, &src, 0, &e), 0);
    berth_nexus_options opt = {.use_index = 1, .tiebreak = BERTH_TIE_FIRST};
    berth_nexus_run(&nx, &opt, &e);
    assert_true(nx.steps[0].failed);
    assert_null(strstr(nx.steps[0].reason, "already exists"));
    assert_true(nx.steps[1].failed);
    assert_non_null(strstr(nx.steps[1].reason, "v.yaml:18:1: metadata.name: cluster 'alpha' "
                                               "already exists"));
    berth_nexus_free(&nx);
}

/* the longest run of used slots in the cluster-name index */
static uint32_t longest_run(const berth_nexus *nx)
{
    uint32_t best = 0, run = 0, cap = nx->cluster_index_cap;
    for (uint32_t i = 0; i < 2 * cap; i++) { /* twice round: a run may wrap */
        run = nx->cluster_index[i % cap] ? run + 1 : 0;
        best = run > best ? run : best;
    }
    return best < cap ? best : cap;
}

static void test_cluster_index_hostile_names(void **st)
{
    (void)st;
    enum { N = 4096 };
    char *names = hostile_names(N, 16); /* FNV-1a agrees in the low 16 bits */
    assert_non_null(names);
    berth_nexus nx;
    berth_nexus_init(&nx);
    nx.clusters = calloc(N, sizeof *nx.clusters);
    assert_non_null(nx.clusters);
    nx.capclusters = N;
    for (uint32_t i = 0; i < N; i++) {
        nx.clusters[i].name = names + (size_t)i * 16;
        nx.clusters[i].reason = "";
        nx.nclusters = i + 1;
        assert_int_equal(nexus_index_cluster(&nx, i), 0);
    }
    /* every name found; 4,096 names in 16,384 slots under a keyed hash
     * leave runs of a few dozen (FNV-1a: one run of 4,096) */
    for (uint32_t i = 0; i < N; i++)
        assert_int_equal(berth_nexus_find_cluster(&nx, names + (size_t)i * 16), i);
    assert_int_equal(berth_nexus_find_cluster(&nx, "absent"), BERTH_NEXUS_NONE);
    uint32_t run = longest_run(&nx);
    fprintf(stderr, "cluster index: %u slots, longest run %u\n", nx.cluster_index_cap, run);
    assert_true(run < 200);
    berth_nexus_free(&nx);
    free(names);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_second_live_cluster_is_bad_input),
        cmocka_unit_test(test_deleted_name_can_be_created_again),
        cmocka_unit_test(test_failed_cluster_is_still_live),
        cmocka_unit_test(test_cluster_index_hostile_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
