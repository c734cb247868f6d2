/* tests/unit/disrupt_fixture.h - what the disruption unit tests share: the
 * YAML buffer (yaml_buf.h) and loading it into a model. Include after
 * cmocka.h (and after defining YAML_BUF_SIZE for a larger buffer). */
#ifndef BERTH_TEST_DISRUPT_FIXTURE_H
#define BERTH_TEST_DISRUPT_FIXTURE_H

#include "berth/disrupt.h"
#include "yaml_buf.h"

static void same_str(const char *a, const char *b)
{
    if (a || b) {
        assert_non_null(a);
        assert_non_null(b);
        assert_string_equal(a, b);
    }
}

static void same_annotations(const berth_node *a, const berth_node *b)
{
    assert_int_equal(a == NULL, b == NULL);
    if (!a)
        return;
    assert_int_equal(a->n, b->n);
    for (uint32_t i = 0; i < a->n; i++) {
        assert_string_equal(a->entries[i].key->str, b->entries[i].key->str);
        assert_string_equal(a->entries[i].value->str, b->entries[i].value->str);
    }
}

/* What the planners read of two models loaded from one input: the whole
 * tree (a) and streamed (b). */
static void same_model(const berth_disrupt *a, const berth_disrupt *b)
{
    assert_int_equal(a->npools, b->npools);
    assert_int_equal(a->nclaims, b->nclaims);
    assert_int_equal(a->ntypes, b->ntypes);
    assert_int_equal(a->nclasses, b->nclasses);
    assert_int_equal(a->kube.nnodes, b->kube.nnodes);
    assert_int_equal(a->kube.npods, b->kube.npods);
    assert_int_equal(berth_skips_total(&a->kube.skipped), berth_skips_total(&b->kube.skipped));
    for (uint32_t i = 0; i < a->npools; i++) {
        assert_string_equal(a->pools[i].name, b->pools[i].name);
        assert_string_equal(a->pools[i].hash, b->pools[i].hash);
        assert_int_equal(a->pools[i].nbudgets, b->pools[i].nbudgets);
    }
    for (uint32_t i = 0; i < a->nclaims; i++) {
        assert_string_equal(a->claims[i].name, b->claims[i].name);
        same_str(a->claims[i].node_name, b->claims[i].node_name);
        same_str(a->claims[i].hash, b->claims[i].hash);
        assert_int_equal(a->claims[i].created, b->claims[i].created);
        assert_int_equal(a->claims[i].drifted, b->claims[i].drifted);
    }
    for (uint32_t i = 0; i < a->kube.nnodes; i++) {
        const berth_knode *x = &a->kube.nodes[i], *y = &b->kube.nodes[i];
        assert_string_equal(x->name, y->name);
        assert_int_equal(x->labels.n, y->labels.n);
        same_annotations(x->annotations, y->annotations);
        assert_int_equal(a->node_info[i].ready, b->node_info[i].ready);
        assert_int_equal(a->node_info[i].do_not_disrupt, b->node_info[i].do_not_disrupt);
        assert_int_equal(a->node_info[i].deleting, b->node_info[i].deleting);
        assert_int_equal(a->node_info[i].ncapacity, b->node_info[i].ncapacity);
    }
    for (uint32_t i = 0; i < a->kube.npods; i++) {
        const berth_kpod *x = &a->kube.pods[i], *y = &b->kube.pods[i];
        assert_string_equal(x->name, y->name);
        assert_string_equal(x->ns, y->ns);
        same_str(x->node_name, y->node_name);
        assert_int_equal(x->line, y->line);
        assert_int_equal(x->col, y->col);
        same_annotations(x->annotations, y->annotations);
        const berth_dpod *p = &a->pod_info[i], *q = &b->pod_info[i];
        assert_int_equal(p->deletion_cost, q->deletion_cost);
        assert_int_equal(p->dnd, q->dnd);
        assert_int_equal(p->dnd_ns, q->dnd_ns);
        assert_int_equal(p->started, q->started);
        assert_int_equal(p->ready, q->ready);
        assert_int_equal(p->mirror, q->mirror);
        same_str(p->nominated, q->nominated);
    }
}

/* Initialises m, loads b into it (strict, as "t.yaml") and finalises it:
 * 0, or the error code with e set. m is to be freed either way. The same
 * buffer is also loaded streamed (berth_disrupt_load_buffer, the way
 * `berth disrupt plan` reads its files), which must end alike: the same
 * error, or the same model (same_model). */
static int load_model(berth_disrupt *m, const buf *b, berth_error *e)
{
    berth_disrupt_init(m);
    berth_error_clear(e);
    berth_source src;
    int rc = berth_doc_load_buffer(&m->kube.arena, "t.yaml", b->s, b->n, &src, e);
    if (!rc)
        rc = berth_disrupt_load(m, &src, 1, e);
    if (!rc)
        rc = berth_disrupt_finalize(m, e);
    berth_disrupt s;
    berth_error se;
    berth_disrupt_init(&s);
    berth_error_clear(&se);
    int src_rc = berth_disrupt_load_buffer(&s, "t.yaml", b->s, b->n, 1, &se);
    if (!src_rc)
        src_rc = berth_disrupt_finalize(&s, &se);
    if (src_rc == BERTH_EINVAL && strstr(se.msg, "t.yaml: no input documents")) {
        /* streamed, a buffer without documents is an error */
        assert_int_equal(rc, 0);
        assert_int_equal(m->npools + m->nclaims + m->kube.nnodes + m->kube.npods, 0);
    } else {
        assert_int_equal(src_rc, rc);
        assert_string_equal(se.msg, e->msg);
        if (!rc)
            same_model(m, &s);
    }
    berth_disrupt_free(&s);
    return rc;
}

#endif
