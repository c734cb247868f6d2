/* tests/unit/autoscale_fixture.h - helpers shared by the autoscaler unit
 * tests: the YAML buffer (yaml_buf.h), one plan over it with given
 * options, and lookups in the plan by pod and node name. Include after
 * cmocka.h. */
#ifndef BERTH_TEST_AUTOSCALE_FIXTURE_H
#define BERTH_TEST_AUTOSCALE_FIXTURE_H

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "berth/autoscale.h"
#include "berth/plan_report.h"
#include "yaml_buf.h"

#define AT 1714564800 /* 2024-05-01T12:00:00Z */


typedef struct run {
    berth_autoscale m;
    berth_aplan p;
    berth_error e;
    int rc;
} run;

/* Loads b and plans with o (o->now defaults to AT). */
static __attribute__((unused)) void plan_opt(run *r, buf *b, berth_aplan_options o)
{
    memset(r, 0, sizeof *r);
    berth_autoscale_init(&r->m);
    berth_source src;
    r->rc = berth_doc_load_buffer(&r->m.kube.arena, "t.yaml", b->s, b->n, &src, &r->e);
    if (!r->rc)
        r->rc = berth_autoscale_load(&r->m, &src, 0, &r->e);
    if (!r->rc)
        r->rc = berth_autoscale_finalize(&r->m, &r->e);
    if (!o.now)
        o.now = AT;
    if (!r->rc)
        r->rc = berth_autoscale_plan(&r->m, &o, &r->p, &r->e);
}

static __attribute__((unused)) void done(run *r)
{
    berth_aplan_free(&r->p);
    berth_autoscale_free(&r->m);
}

/* Plans b with o: the report's JSON (keys sorted; the caller frees it),
 * NULL with *rc set when loading or planning failed (the message on
 * stderr); *plan, when given, gets the plan's counts (its arrays freed). */
static __attribute__((unused)) char *plan_json_opt(buf *b, berth_aplan_options o, int *rc,
                                                  berth_aplan *plan)
{
    static run r;
    plan_opt(&r, b, o);
    *rc = r.rc;
    char *out = NULL;
    if (r.rc) {
        fprintf(stderr, "%s\n", r.e.msg);
    } else {
        json_t *j = berth_report_autoscale_json(&r.m, &r.p);
        out = json_dumps(j, JSON_SORT_KEYS);
        json_decref(j);
        if (plan)
            *plan = r.p;
    }
    done(&r);
    return out;
}

static __attribute__((unused)) const char *node_name(const run *r, uint32_t n)
{
    return r->m.kube.nodes[n].name;
}

static __attribute__((unused)) const char *blocked_of(const run *r, const char *node)
{
    for (uint32_t i = 0; i < r->p.nblocked; i++)
        if (!strcmp(node_name(r, r->p.blocked[i].node), node))
            return r->p.blocked[i].reason;
    return NULL;
}

static __attribute__((unused)) const berth_ascaledown *down_of(const run *r, const char *node)
{
    for (uint32_t i = 0; i < r->p.ndown; i++)
        if (!strcmp(node_name(r, r->p.down[i].node), node))
            return &r->p.down[i];
    return NULL;
}

static __attribute__((unused)) const berth_areplace *rep_of(const run *r, const char *node)
{
    for (uint32_t i = 0; i < r->p.nrep; i++)
        if (!strcmp(node_name(r, r->p.rep[i].node), node))
            return &r->p.rep[i];
    return NULL;
}

static __attribute__((unused)) const char *unsched_of(const run *r, const char *pod)
{
    for (uint32_t i = 0; i < r->p.nunsched; i++)
        if (!strcmp(r->m.kube.pods[r->p.unsched[i].pod].name, pod))
            return r->p.unsched[i].reason;
    return NULL;
}

/* The move of pod in replacement x, or NULL. */
static __attribute__((unused)) const berth_arepmove *rep_move(const run *r,
                                                             const berth_areplace *x,
                                                             const char *pod)
{
    for (uint32_t i = 0; x && i < x->nmoves; i++)
        if (!strcmp(r->m.kube.pods[x->moves[i].pod].name, pod))
            return &x->moves[i];
    return NULL;
}

#endif
