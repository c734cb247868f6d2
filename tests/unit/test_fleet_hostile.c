/* tests/unit/test_fleet_hostile.c - the fleet context's policy-identity
 * tables (src/fleet/place.c assign_ids) under placements a hostile client
 * would send: 4,096 PickAll placements alike but for their toleration's
 * key, the keys built to agree in the low 24 bits of FNV-1a 32
 * (tests/hostile_names.h). The tables folded a toleration key's FNV-1a
 * hash into an unkeyed multiply / xor-shift mix, whose low bits depend
 * only on the low bits of what it folds, so all 4,096 placements met in
 * one slot of the 16,384-slot table (probe runs up to 4,095, quadratic in
 * the placements); keyed (berth/hash.h) they spread. Same placements,
 * same answers: each placement still has its own static column. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "../hostile_names.h"
#include "berth/fleet.h"
#include "fleet/state.h"

#define NPL 4096
#define NOW "2024-05-01T12:00:00Z"

static char *fleet_yaml(const char *names)
{
    size_t cap = (size_t)NPL * 320 + 4096, n = 0;
    char *y = malloc(cap);
    if (!y)
        return NULL;
    for (int c = 0; c < 2; c++)
        n += (size_t)snprintf(
            y + n, cap - n,
            "---\napiVersion: cluster.kubernetes-fleet.io/v1beta1\nkind: MemberCluster\n"
            "metadata: {name: m%d, labels: {env: prod}}\n"
            "status:\n  agentStatus:\n  - type: MemberAgent\n"
            "    lastReceivedHeartbeat: \"2024-05-01T11:59:00Z\"\n"
            "    conditions:\n    - {type: Joined, status: \"True\"}\n"
            "    - {type: Healthy, status: \"True\", lastTransitionTime: \"2024-04-01T00:00:00Z\"}\n",
            c);
    for (int i = 0; i < NPL; i++)
        n += (size_t)snprintf(y + n, cap - n,
                              "---\napiVersion: placement.kubernetes-fleet.io/v1beta1\n"
                              "kind: ClusterResourcePlacement\nmetadata: {name: crp-%d}\n"
                              "spec:\n  policy:\n    placementType: PickAll\n"
                              "    tolerations:\n    - {key: %s, operator: Exists}\n",
                              i, names + (size_t)i * 16);
    return y;
}

static void test_colliding_toleration_keys(void **state)
{
    (void)state;
    char *names = hostile_names(NPL, 24);
    assert_non_null(names);
    /* the keys do collide under the old fold's string hash */
    uint32_t low = hostile_fnv1a(names) & 0xffffffu;
    for (int i = 1; i < NPL; i++)
        assert_int_equal(hostile_fnv1a(names + (size_t)i * 16) & 0xffffffu, low);
    char *y = fleet_yaml(names);
    assert_non_null(y);
    berth_fleet f;
    berth_fleet_init(&f);
    berth_error e;
    berth_error_clear(&e);
    berth_source src;
    berth_fleet_options opt = {0};
    assert_int_equal(berth_time_parse(NOW, &opt.now_ms), 0);
    berth_fleet_ctx *ctx = NULL;
    int rc = berth_doc_load_buffer(&f.arena, "hostile.yaml", y, strlen(y), &src, &e);
    if (!rc)
        rc = berth_fleet_load(&f, &src, 0, &e);
    if (!rc)
        rc = berth_fleet_finalize(&f, &e);
    if (!rc)
        rc = berth_fleet_ctx_new(&f, &opt, &ctx, &e);
    if (rc)
        fprintf(stderr, "%s\n", e.msg);
    assert_int_equal(rc, 0);
    assert_int_equal(f.nplacements, NPL);
    /* every placement is its own static column (distinct keys) */
    assert_int_equal(ctx->nstatcols, NPL);
    /* 4,096 entries in 16,384 slots under a random hash: runs of a few
     * dozen at most; the unkeyed fold made one run of 4,095 */
    fprintf(stderr, "longest probe run: %u\n", ctx->id_run_max);
    assert_true(ctx->id_run_max < 200);
    /* and the placements still place: a toleration changes nothing here */
    berth_fleet_outcome o;
    for (uint32_t p = 0; p < f.nplacements; p += 1024) {
        assert_int_equal(berth_fleet_place(ctx, p, &o), 0);
        assert_int_equal(o.nselected, 2);
    }
    berth_fleet_ctx_free(ctx);
    berth_fleet_free(&f);
    free(y);
    free(names);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_colliding_toleration_keys),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
