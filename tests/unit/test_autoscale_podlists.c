/* tests/unit/test_autoscale_podlists.c - the scale-down's per-node pod
 * lists (src/autoscale/podlists.c, sd_lists in autoscale/scaledown.h):
 * against a plain model (an array per node), a list holds the node's pods
 * of the pass in pod order, then the pods moved to it in the order they
 * came, through every relocation of a full list to the pool's end; the
 * other lists are untouched; pods on no existing node (unbound, on a new
 * node) are on no list; a node that is not an existing one is refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "autoscale/scaledown.h"
#include "berth/random.h"

#define NN 40
#define NP 600
#define MAXL (NP + 4000)

typedef struct model {
    uint32_t v[NN][MAXL];
    uint32_t n[NN];
} model;

static void same(const sd_lists *l, const model *m)
{
    for (uint32_t n = 0; n < NN; n++) {
        const sd_span *sp = &l->node[n];
        assert_int_equal(sp->n, m->n[n]);
        assert_true(sp->n <= sp->cap);
        assert_true((uint64_t)sp->off + sp->cap <= l->npool);
        for (uint32_t i = 0; i < sp->n; i++)
            assert_int_equal(l->pool[sp->off + i], m->v[n][i]);
    }
}

static void test_lists_follow_model(void **state)
{
    (void)state;
    berth_autoscale *a = calloc(1, sizeof *a);
    model *m = calloc(1, sizeof *m);
    uint32_t *pod_node = malloc(NP * sizeof *pod_node);
    assert_non_null(a);
    assert_non_null(m);
    assert_non_null(pod_node);
    for (uint64_t seed = 1; seed <= 20; seed++) {
        berth_rng r;
        berth_rng_seed(&r, seed);
        memset(m, 0, sizeof *m);
        a->kube.npods = NP;
        capacity_pass s = {0};
        s.m = a;
        s.nexisting = NN;
        s.pod_node = pod_node;
        for (uint32_t p = 0; p < NP; p++) {
            uint32_t k = (uint32_t)berth_rng_below(&r, NN + 6);
            /* beyond the existing nodes: a new node's index, or none */
            pod_node[p] = k < NN ? k : k < NN + 3 ? NN + k : BERTH_KUBE_NONE;
            if (pod_node[p] < NN)
                m->v[pod_node[p]][m->n[pod_node[p]]++] = p;
        }
        sd_lists l;
        assert_int_equal(sd_lists_init(&l, &s), 0);
        assert_int_equal(l.nnodes, NN);
        same(&l, m);
        /* moves: to a few nodes in long runs (relocated many times) and to
         * any node */
        for (uint32_t i = 0; i < 3000; i++) {
            uint32_t n = berth_rng_below(&r, 3) ? (uint32_t)berth_rng_below(&r, 3)
                                                : (uint32_t)berth_rng_below(&r, NN);
            uint32_t p = (uint32_t)berth_rng_below(&r, NP);
            assert_int_equal(sd_lists_add(&l, n, p), 0);
            m->v[n][m->n[n]++] = p;
            if (i % 97 == 0)
                same(&l, m);
        }
        same(&l, m);
        assert_int_equal(sd_lists_add(&l, NN, 0), BERTH_EINVAL);
        assert_int_equal(sd_lists_add(&l, BERTH_KUBE_NONE, 0), BERTH_EINVAL);
        same(&l, m);
        sd_lists_free(&l);
        assert_null(l.node);
        assert_null(l.pool);
    }
    free(pod_node);
    free(m);
    free(a);
}

/* An estate without pods: every list empty, and the first move starts one. */
static void test_lists_empty(void **state)
{
    (void)state;
    berth_autoscale *a = calloc(1, sizeof *a);
    assert_non_null(a);
    capacity_pass s = {0};
    s.m = a;
    s.nexisting = 3;
    sd_lists l;
    assert_int_equal(sd_lists_init(&l, &s), 0);
    for (uint32_t n = 0; n < 3; n++)
        assert_int_equal(l.node[n].n, 0);
    assert_int_equal(sd_lists_add(&l, 2, 7), 0);
    assert_int_equal(l.node[2].n, 1);
    assert_int_equal(l.pool[l.node[2].off], 7);
    assert_int_equal(l.node[0].n + l.node[1].n, 0);
    sd_lists_free(&l);
    free(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lists_follow_model),
        cmocka_unit_test(test_lists_empty),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
