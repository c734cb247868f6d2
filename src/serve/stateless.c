/* serve/stateless.c - the stateless endpoints of `berth serve`: kube pod
 * scheduling, Fleet placement, disruption and autoscaling plans (each the
 * SPEC 6.3 JSON of the matching command, with the kinds the body's load
 * skipped in `warnings`), each over a model built from the request body
 * and freed before the reply; http.c runs them on the planner pool. Each
 * first checks the request's budget (serve_budget: objects in the body,
 * nodes x pods) so that one request cannot take minutes or gigabytes, and
 * gives the planner a deadline (berth/cancel.h, --max-request-seconds)
 * counted from the start of the request's work: a planner stopped by it
 * leaves nothing and the request gets 422 over_budget. */
#include "serve/serve.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "berth/fleet.h"
#include "berth/kube.h"
#include "berth/kube_report.h"
#include "berth/plan_report.h"
#include "berth/report.h"

/* Objects in the parsed body: a List's items one each, any other document
 * one. */
static uint64_t count_objects(const berth_source *src)
{
    uint64_t n = 0;
    for (size_t i = 0; i < src->ndocs; i++) {
        const berth_node *d = src->docs[i];
        const berth_node *items = d->type == BERTH_NODE_MAP ? berth_node_get(d, "items") : NULL;
        n += items && items->type == BERTH_NODE_SEQ ? items->n : 1;
    }
    return n;
}

/* 413 when the body holds more objects than the budget allows. */
static int over_objects(const berth_source *src, const serve_budget *b, serve_reply *r)
{
    uint64_t n = count_objects(src);
    if (!b || !b->max_objects || n <= b->max_objects)
        return 0;
    char msg[300];
    snprintf(msg, sizeof msg,
             "body: %llu objects exceed this server's limit of %llu per request (raise it with "
             "berth serve --max-objects N)",
             (unsigned long long)n, (unsigned long long)b->max_objects);
    serve_reply_error(r, 413, "payload_too_large", msg);
    return -1;
}

/* 422 over_budget when a x b pairs exceed the budget. */
static int over_pairs(const char *what_a, uint64_t a, const char *what_b, uint64_t n_b,
                      const serve_budget *b, serve_reply *r)
{
    if (!b || !b->max_pairs || !a || !n_b || a <= b->max_pairs / n_b)
        return 0;
    char msg[400];
    snprintf(msg, sizeof msg,
             "body: %llu %s x %llu %s = %llu pairs exceed this server's limit of %llu per "
             "request (raise it with berth serve --max-pairs N, or split the request)",
             (unsigned long long)a, what_a, (unsigned long long)n_b, what_b,
             (unsigned long long)(a * n_b), (unsigned long long)b->max_pairs);
    serve_reply_error(r, 422, "over_budget", msg);
    return -1;
}

/* The request's deadline in c, from now: NULL when the budget has none. */
static const berth_cancel *start_clock(const serve_budget *b, berth_cancel *c)
{
    if (!b || !(b->max_seconds > 0))
        return NULL;
    berth_cancel_init(c, b->max_seconds);
    return c;
}

/* 422 over_budget for a planner stopped at the deadline. */
static void over_time(const serve_budget *b, serve_reply *r)
{
    char msg[300];
    snprintf(msg, sizeof msg,
             "request stopped after %g s of planning (this server's limit; raise it with berth "
             "serve --max-request-seconds N, or split the request)",
             b->max_seconds);
    serve_reply_error(r, 422, "over_budget", msg);
    r->stopped = 1;
}

/* 200 with j (taken) as compact JSON: berth_report_json_text, so that a
 * failed allocation is a 500, never a reply missing a key (jansson's
 * json_dumps, which serve_reply_json uses, can drop one) */
static void reply_doc(serve_reply *r, json_t *j)
{
    char *t = berth_report_json_text(j, JSON_COMPACT | BERTH_JSON_REAL);
    json_decref(j);
    if (!t) {
        serve_reply_error(r, 500, "internal", "out of memory rendering the reply");
        return;
    }
    free(r->body);
    r->body = t;
    r->status = 200;
}

void serve_kube_schedule(const char *body, size_t len, const char *profile, const char *preempt,
                         const char *detail, const serve_budget *b, serve_reply *r)
{
    *r = (serve_reply){0};
    if (preempt && strcmp(preempt, "true") && strcmp(preempt, "false")) {
        serve_reply_error(r, 400, "bad_input", "preempt: expected true or false");
        return;
    }
    if (detail && strcmp(detail, "all") && strcmp(detail, "default")) {
        serve_reply_error(r, 400, "bad_input", "detail: expected all or default");
        return;
    }
    int all = detail && !strcmp(detail, "all");
    berth_cancel cancel;
    const berth_cancel *cn = start_clock(b, &cancel);
    berth_kcluster k;
    berth_kube_init(&k);
    berth_error e;
    berth_error_clear(&e);
    berth_source src;
    int rc = berth_doc_load_buffer(&k.arena, "body", body, len, &src, &e);
    if (!rc && over_objects(&src, b, r)) {
        berth_kube_free(&k);
        return;
    }
    if (!rc)
        rc = berth_kube_load(&k, &src, 0, &e);
    if (!rc)
        rc = berth_kube_expand(&k, &e);
    if (rc) {
        serve_reply_failed(r, rc, e.msg);
        berth_kube_free(&k);
        return;
    }
    if (over_pairs("nodes", k.nnodes, "pods", k.npods, b, r)) {
        berth_kube_free(&k);
        return;
    }
    berth_kprofile forced;
    const berth_kprofile *prof = NULL;
    if (profile) {
        prof = berth_kube_find_profile(&k, profile);
        if (!prof && !strcmp(profile, "default-scheduler")) {
            berth_kube_default_profile(&k, &forced);
            prof = &forced;
        } else if (!prof && !strcmp(profile, "usage-aware")) {
            berth_kube_usage_aware_profile(&k, &forced);
            prof = &forced;
        }
        if (!prof) {
            char msg[800];
            snprintf(msg, sizeof msg,
                     "profile: no profile named '%.200s' (use default-scheduler, usage-aware or "
                     "a schedulerName from a KubeSchedulerConfiguration in the body)",
                     profile);
            serve_reply_error(r, 400, "bad_input", msg);
            berth_kube_free(&k);
            return;
        }
    }
    /* the reply is written pod by pod as the scheduler decides (no JSON
     * tree of the whole answer) */
    char *text = NULL;
    size_t tlen = 0;
    FILE *out = open_memstream(&text, &tlen);
    berth_kube_report *rep = out ? berth_kube_report_new(all) : NULL;
    if (!rep || berth_kube_report_stream(rep, out, JSON_COMPACT | JSON_PRESERVE_ORDER)) {
        serve_reply_error(r, 500, "internal", "out of memory");
        berth_kube_report_free(rep);
        if (out)
            fclose(out);
        free(text);
        berth_kube_free(&k);
        return;
    }
    berth_kube_options opt = {.profile = prof, .tiebreak = BERTH_TIE_FIRST, .detail = all,
                              .reasons = 1, .on_decision = berth_kube_report_decision, .ctx = rep,
                              .preempt = !preempt || !strcmp(preempt, "true"), .cancel = cn};
    rc = berth_kube_schedule(&k, &opt, &e);
    if (rc == BERTH_ETIMEDOUT) {
        /* the decisions streamed so far are dropped with the text */
        berth_kube_report_free(rep);
        fclose(out);
        free(text);
        berth_kube_free(&k);
        over_time(b, r);
        return;
    }
    json_t *tail = json_object();
    int bad = (rc && rc != BERTH_ENOFIT) || berth_kube_report_status(rep) || !tail ||
              berth_report_set_warnings(tail, &k.skipped) || berth_kube_report_stream_end(rep, tail);
    json_decref(tail);
    bad |= fclose(out) != 0;
    if (bad) {
        serve_reply_error(r, 500, "internal", rc && rc != BERTH_ENOFIT ? e.msg : "out of memory");
        free(text);
    } else {
        r->status = 200;
        r->body = text;
    }
    berth_kube_report_free(rep);
    berth_kube_free(&k);
}

void serve_fleet_place(const char *body, size_t len, const char *now, const char *detail,
                       const serve_budget *b, serve_reply *r)
{
    *r = (serve_reply){0};
    berth_fleet_options opt = {0};
    if (detail && strcmp(detail, "all") && strcmp(detail, "default")) {
        serve_reply_error(r, 400, "bad_input", "detail: expected all or default");
        return;
    }
    int all = detail && !strcmp(detail, "all");
    berth_cancel cancel;
    opt.cancel = start_clock(b, &cancel);
    if (now) {
        if (berth_time_parse(now, &opt.now_ms)) {
            serve_reply_error(r, 400, "bad_input",
                              "now: expected an RFC 3339 time such as 2024-05-01T12:00:00Z");
            return;
        }
    } else {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        opt.now_ms = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
    }
    berth_fleet fl;
    berth_fleet_init(&fl);
    berth_error e;
    berth_error_clear(&e);
    berth_source src;
    int rc = berth_doc_load_buffer(&fl.arena, "body", body, len, &src, &e);
    if (!rc && over_objects(&src, b, r)) {
        berth_fleet_free(&fl);
        return;
    }
    if (!rc)
        rc = berth_fleet_load(&fl, &src, 0, &e);
    if (!rc)
        rc = berth_fleet_finalize(&fl, &e);
    if (!rc && over_pairs("member clusters", fl.nclusters, "placements", fl.nplacements, b, r)) {
        berth_fleet_free(&fl);
        return;
    }
    berth_fleet_ctx *ctx = NULL;
    if (!rc)
        rc = berth_fleet_ctx_new(&fl, &opt, &ctx, &e);
    if (rc) {
        serve_reply_failed(r, rc, e.msg);
        berth_fleet_free(&fl);
        return;
    }
    json_t *root = json_object(), *arr = json_array();
    int bad = !root || !arr || json_object_set(root, "placements", arr) ||
              berth_report_set_warnings(root, &fl.skipped);
    int stopped = 0;
    for (uint32_t p = 0; !bad && p < fl.nplacements; p++) {
        berth_fleet_outcome o;
        int prc = berth_fleet_place(ctx, p, &o);
        if (prc) {
            stopped = prc == BERTH_ETIMEDOUT;
            bad = 1;
            break;
        }
        json_t *j = berth_report_fleet_json_detail(ctx, &o, 0, all);
        bad = !j || json_array_append_new(arr, j);
    }
    json_decref(arr);
    if (bad) {
        json_decref(root);
        if (stopped)
            over_time(b, r);
        else
            serve_reply_error(r, 500, "internal", "fleet placement failed");
    } else {
        reply_doc(r, root);
    }
    berth_fleet_ctx_free(ctx);
    berth_fleet_free(&fl);
}

/* "at" query argument (RFC 3339) -> seconds; the current time when absent. */
static int plan_time(const char *at, int64_t *now, serve_reply *r)
{
    if (!at) {
        *now = (int64_t)time(NULL);
        return 0;
    }
    int64_t ms;
    if (berth_time_parse(at, &ms)) {
        serve_reply_error(r, 400, "bad_input",
                          "at: expected an RFC 3339 time such as 2024-05-01T12:00:00Z");
        return -1;
    }
    *now = ms >= 0 ? ms / 1000 : -((-ms + 999) / 1000);
    return 0;
}

/* One planner request (SPEC 6.3 `disrupt plan` or `autoscale plan`): its
 * model and plan. Both endpoints take the same steps (plan_request); the
 * steps that name a planner's calls pick them by autoscale. */
typedef struct {
    int autoscale; /* 0: disruption (berth_disrupt), 1: autoscaling */
    union {
        berth_disrupt d;
        berth_autoscale a;
    } m;
    union {
        berth_dplan d;
        berth_aplan a;
    } p;
} plan_job;

/* The body's documents loaded into j's model, which is then finalised. */
static int plan_load(plan_job *j, const berth_source *src, berth_error *e)
{
    int rc = j->autoscale ? berth_autoscale_load(&j->m.a, src, 0, e)
                          : berth_disrupt_load(&j->m.d, src, 0, e);
    if (!rc)
        rc = j->autoscale ? berth_autoscale_finalize(&j->m.a, e) : berth_disrupt_finalize(&j->m.d, e);
    return rc;
}

static int plan_make(plan_job *j, int64_t now, const berth_cancel *cancel, berth_error *e)
{
    if (j->autoscale) {
        berth_aplan_options opt = {.now = now, .cancel = cancel};
        return berth_autoscale_plan(&j->m.a, &opt, &j->p.a, e);
    }
    berth_dplan_options opt = {.now = now, .cancel = cancel};
    return berth_disrupt_plan(&j->m.d, &opt, &j->p.d, e);
}

static void plan_free(plan_job *j)
{
    if (j->autoscale) {
        berth_aplan_free(&j->p.a);
        berth_autoscale_free(&j->m.a);
    } else {
        berth_dplan_free(&j->p.d);
        berth_disrupt_free(&j->m.d);
    }
}

/* The shared endpoint: time, budget, load, plan, reply. */
static void plan_request(int autoscale, const char *body, size_t len, const char *at,
                         const serve_budget *b, serve_reply *r)
{
    *r = (serve_reply){0};
    berth_cancel cancel;
    const berth_cancel *cn = start_clock(b, &cancel);
    int64_t now;
    if (plan_time(at, &now, r))
        return;
    plan_job j;
    memset(&j, 0, sizeof j);
    j.autoscale = autoscale;
    if (autoscale)
        berth_autoscale_init(&j.m.a);
    else
        berth_disrupt_init(&j.m.d);
    berth_kcluster *kube = autoscale ? &j.m.a.kube : &j.m.d.kube;
    berth_error e;
    berth_error_clear(&e);
    berth_source src;
    int rc = berth_doc_load_buffer(&kube->arena, "body", body, len, &src, &e);
    if (!rc && over_objects(&src, b, r)) {
        plan_free(&j);
        return;
    }
    if (!rc)
        rc = plan_load(&j, &src, &e);
    if (!rc && over_pairs("nodes", kube->nnodes, "pods", kube->npods, b, r)) {
        plan_free(&j);
        return;
    }
    if (!rc)
        rc = plan_make(&j, now, cn, &e);
    if (rc == BERTH_ETIMEDOUT)
        over_time(b, r);
    else if (rc)
        serve_reply_failed(r, rc, e.msg);
    else
        reply_doc(r, autoscale ? berth_report_autoscale_json(&j.m.a, &j.p.a)
                               : berth_report_disrupt_json(&j.m.d, &j.p.d));
    plan_free(&j);
}

void serve_disrupt_plan(const char *body, size_t len, const char *at, const serve_budget *b,
                        serve_reply *r)
{
    plan_request(0, body, len, at, b, r);
}

void serve_autoscale_plan(const char *body, size_t len, const char *at, const serve_budget *b,
                          serve_reply *r)
{
    plan_request(1, body, len, at, b, r);
}
