/* test_kube_labelcols.c - NodeAffinity's Filter read from per-key label
 * columns (kube/labelcols.c) against the label-search matcher it replaces
 * in the fit index (berth_kube_node_affinity_matches: the pod's
 * nodeSelector, then its required terms ORed).
 *
 * Random nodes carry a random subset of a few keys (so some nodes lack
 * each key; some values are integers, negative ones and non-numbers among
 * them, a few are empty); random pods carry a nodeSelector of 0-2 entries
 * and 0-3 required terms of 0-3 requirements with every operator (In /
 * NotIn with 1-3 values, some absent from every node, Exists,
 * DoesNotExist, Gt / Lt with integer and non-integer values, and invalid
 * or empty terms), some with has_req_affinity and no terms. Every node's
 * verdict must agree, over the whole node list and over a random subset,
 * and each case must see both matching and non-matching nodes across the
 * run (so agreement is not vacuous). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "berth/error.h"
#include "berth/hash.h"
#include "berth/kube.h"
#include "berth/pipeline.h"
#include "berth/random.h"
#include "kube/labelcols.h"

#define NKEYS 14
#define NVALS 9
#define MAXN 300

/* more keys than the column table's first allocation holds (it grows while
 * one pod's requirements are resolved) */
static const char *keys[NKEYS] = {"team", "topology.kubernetes.io/zone", "berth.io/gen",
                                  "berth.io/rank", "k4", "k5", "k6", "k7", "k8", "k9", "k10",
                                  "k11", "k12", "missing.example.com/key"};
/* values: words, integers (signed), a non-number, the empty value */
static const char *vals[NVALS] = {"a", "b", "c", "3", "17", "-4", "+8", "x9", ""};

typedef struct world {
    berth_rng g;
    berth_knode nodes[MAXN];
    berth_label labels[MAXN][NKEYS];
    uint32_t n;
    /* the pod */
    berth_kpod p;
    berth_label sel[2];
    berth_kterm terms[3];
    berth_requirement reqs[3][3];
    const char *rv[3][3][3];
} world;

static uint32_t rnd(world *w, uint32_t n)
{
    return (uint32_t)berth_rng_below(&w->g, n);
}

static void make_nodes(world *w)
{
    w->n = 1 + rnd(w, MAXN);
    for (uint32_t i = 0; i < w->n; i++) {
        berth_knode *nd = &w->nodes[i];
        memset(nd, 0, sizeof *nd);
        nd->name = "n";
        uint32_t m = 0;
        for (uint32_t k = 0; k + 1 < NKEYS; k++) /* the last key: on no node */
            if (rnd(w, 100) < (k < 4 ? 70 : 40))
                w->labels[i][m++] = (berth_label){keys[k], vals[rnd(w, NVALS)]};
        nd->labels = (berth_labels){w->labels[i], m};
        assert_int_equal(berth_labels_sort(&nd->labels), 0);
    }
}

static void make_pod(world *w)
{
    berth_kpod *p = &w->p;
    memset(p, 0, sizeof *p);
    uint32_t ns = rnd(w, 3);
    for (uint32_t i = 0; i < ns; i++)
        w->sel[i] = (berth_label){keys[rnd(w, NKEYS)], vals[rnd(w, NVALS)]};
    p->node_selector = (berth_labels){w->sel, ns};
    if (p->node_selector.n == 2 && !strcmp(w->sel[0].key, w->sel[1].key))
        p->node_selector.n = 1; /* a map: one entry per key */
    p->has_req_affinity = rnd(w, 100) < 70;
    p->nreq_terms = p->has_req_affinity ? rnd(w, 4) : 0;
    p->req_terms = w->terms;
    for (uint32_t t = 0; t < p->nreq_terms; t++) {
        berth_kterm *tm = &w->terms[t];
        memset(tm, 0, sizeof *tm);
        tm->exprs = w->reqs[t];
        tm->nexprs = rnd(w, 4);
        tm->invalid = rnd(w, 100) < 5;
        for (uint32_t i = 0; i < tm->nexprs; i++) {
            berth_requirement *r = &w->reqs[t][i];
            r->key = keys[rnd(w, NKEYS)];
            r->op = (berth_sel_op)rnd(w, 6);
            r->values = w->rv[t][i];
            r->nvalues = 0;
            uint32_t nv = r->op == BERTH_SEL_IN || r->op == BERTH_SEL_NOTIN ? 1 + rnd(w, 3)
                          : r->op == BERTH_SEL_GT || r->op == BERTH_SEL_LT ? 1
                                                                             : 0;
            for (uint32_t v = 0; v < nv; v++) /* "zz": a value no node has */
                w->rv[t][i][r->nvalues++] = rnd(w, 10) ? vals[rnd(w, NVALS)] : "zz";
        }
    }
}

/* the label-search verdicts of nodes list[0..m) */
static void expect(const world *w, const uint32_t *list, uint32_t m, uint8_t *v)
{
    for (uint32_t i = 0; i < m; i++)
        v[i] = berth_kube_node_affinity_matches(&w->p, &w->nodes[list[i]]) ? BERTH_FIT
                                                                            : BERTH_UNRESOLVABLE;
}

static void test_random_against_label_search(void **state)
{
    (void)state;
    static world w;
    berth_rng_seed(&w.g, 18);
    uint32_t list[MAXN];
    uint8_t got[MAXN], want[MAXN];
    uint64_t fit = 0, unfit = 0, by_op[6] = {0};
    for (int round = 0; round < 40; round++) {
        make_nodes(&w);
        kube_labelcols *c;
        berth_hashkey key;
        berth_hashkey_new(&key);
        assert_int_equal(kube_labelcols_open(&c, w.nodes, w.n, &key), 0);
        for (int q = 0; q < 60; q++) {
            make_pod(&w);
            /* the whole list, then a random subset in node order */
            for (int pass = 0; pass < 2; pass++) {
                uint32_t m = 0;
                for (uint32_t i = 0; i < w.n; i++)
                    if (!pass || rnd(&w, 2))
                        list[m++] = i;
                memset(got, BERTH_FIT, m);
                assert_int_equal(kube_labelcols_affinity(c, &w.p, list, m, got), 0);
                expect(&w, list, m, want);
                for (uint32_t i = 0; i < m; i++) {
                    if (got[i] != want[i])
                        fail_msg("round %d pod %d node %u: columns %u, label search %u", round,
                                 q, list[i], got[i], want[i]);
                    fit += want[i] == BERTH_FIT;
                    unfit += want[i] != BERTH_FIT;
                }
            }
            for (uint32_t t = 0; t < w.p.nreq_terms; t++)
                for (uint32_t i = 0; i < w.terms[t].nexprs; i++)
                    by_op[w.reqs[t][i].op]++;
        }
        /* columns are built once per key, only for keys pods named */
        assert_true(kube_labelcols_ncols(c) <= NKEYS);
        kube_labelcols_close(c);
    }
    assert_true(fit > 1000 && unfit > 1000);
    for (int op = 0; op < 6; op++)
        assert_true(by_op[op] > 50);
}

/* A term with matchFields is left to the plugin (1, nothing written);
 * a pod without selector or required affinity rejects nothing. */
static void test_fields_and_skip(void **state)
{
    (void)state;
    static world w;
    berth_rng_seed(&w.g, 7);
    make_nodes(&w);
    kube_labelcols *c;
    berth_hashkey key;
    berth_hashkey_new(&key);
    assert_int_equal(kube_labelcols_open(&c, w.nodes, w.n, &key), 0);
    uint32_t list[MAXN];
    uint8_t v[MAXN];
    for (uint32_t i = 0; i < w.n; i++)
        list[i] = i;
    berth_kpod p;
    memset(&p, 0, sizeof p);
    memset(v, BERTH_FIT, w.n);
    assert_int_equal(kube_labelcols_affinity(c, &p, list, w.n, v), 0);
    for (uint32_t i = 0; i < w.n; i++)
        assert_int_equal(v[i], BERTH_FIT);
    assert_int_equal(kube_labelcols_ncols(c), 0);
    const char *name = "n";
    berth_requirement f = {"metadata.name", BERTH_SEL_IN, &name, 1};
    berth_kterm t = {NULL, 0, &f, 1, 0};
    p.has_req_affinity = 1;
    p.req_terms = &t;
    p.nreq_terms = 1;
    assert_int_equal(kube_labelcols_affinity(c, &p, list, w.n, v), 1);
    for (uint32_t i = 0; i < w.n; i++)
        assert_int_equal(v[i], BERTH_FIT);
    /* required affinity without terms: nothing matches */
    p.nreq_terms = 0;
    assert_int_equal(kube_labelcols_affinity(c, &p, list, w.n, v), 0);
    for (uint32_t i = 0; i < w.n; i++)
        assert_int_equal(v[i], BERTH_UNRESOLVABLE);
    kube_labelcols_close(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_against_label_search),
        cmocka_unit_test(test_fields_and_skip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
