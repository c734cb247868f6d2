/* autoscale/events.c - the inputs of `berth autoscale simulate`: berth.io/v1
 * AutoscaleEvent documents (strict; PodArrive, PodLeave, SpotInterruption,
 * PriceChange; a List of them or several documents; both walks go through
 * berth_dec_walk) and the pods' terminationGracePeriodSeconds read from the
 * estate's Pod documents.
 * PodArrive pods are loaded into the model here, marked as arriving later. */
#include "autoscale/state.h"

#include "berth/time.h"
#include "berth/grow.h"
#include "berth/nameidx.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_EVENTS (1u << 20)
#define MAX_COPIES 100000
#define DEFAULT_GRACE 30

static const char *const type_names[] = {"PodArrive", "PodLeave", "SpotInterruption",
                                         "PriceChange", NULL};

const char *berth_aevent_type_name(berth_aevent_type t)
{
    return (unsigned)t < 4 ? type_names[t] : "?";
}

void berth_atimeline_init(berth_atimeline *t)
{
    memset(t, 0, sizeof *t);
}

void berth_atimeline_free(berth_atimeline *t)
{
    free(t->ev);
    free(t->grace);
    free(t->later);
    memset(t, 0, sizeof *t);
}

/* Grows the per-pod tables to m's pods: grace default, later = flag. */
static int sync_pods(berth_atimeline *t, const berth_autoscale *m, uint8_t later)
{
    uint32_t n = m->kube.npods;
    if (berth_grow((void **)&t->grace, &t->capgrace, n + 1, sizeof *t->grace, 0) ||
        berth_grow((void **)&t->later, &t->caplater, n + 1, sizeof *t->later, 0))
        return BERTH_ENOMEM;
    for (; t->ngrace < n; t->ngrace++)
        t->grace[t->ngrace] = DEFAULT_GRACE;
    for (; t->nlater < n; t->nlater++)
        t->later[t->nlater] = later;
    return 0;
}

/* ---- terminationGracePeriodSeconds ---- */

typedef struct scan {
    berth_atimeline *t;
    const berth_autoscale *m;
    uint32_t from;                /* first pod of this source */
    /* the source's pods by namespace and name, the first of equal ones
     * kept (a dump gives every pod a grace period: a scan of the earlier
     * pods per document was quadratic), keyed by capacity_pod_key's text: the
     * keys back to back in `text`, the document's key built in `q` */
    berth_nameidx pods;
    char *text, *q;
    size_t capq;
} scan;

size_t capacity_pod_key_len(const char *ns, const char *name)
{
    return 21 + strlen(ns) + strlen(name);
}

char *capacity_pod_key(char *out, const char *ns, const char *name)
{
    size_t a = strlen(ns), b = strlen(name);
    out += snprintf(out, 22, "%zu:", a);
    memcpy(out, ns, a);
    memcpy(out + a, name, b + 1);
    return out + a + b;
}

/* The index of pods [from, npods). 0 or BERTH_ENOMEM. */
static int index_pods(scan *c)
{
    const berth_kpod *pods = c->m->kube.pods;
    uint32_t n = c->m->kube.npods - c->from;
    size_t total = 1;
    for (uint32_t i = 0; i < n; i++)
        total += capacity_pod_key_len(pods[c->from + i].ns, pods[c->from + i].name) + 1;
    if (!(c->text = malloc(total)) || berth_nameidx_reserve(&c->pods, n))
        return BERTH_ENOMEM;
    char *at = c->text;
    for (uint32_t i = 0; i < n; i++) {
        const char *key = at;
        at = capacity_pod_key(at, pods[c->from + i].ns, pods[c->from + i].name) + 1;
        if (berth_nameidx_add(&c->pods, key, c->from + i, NULL) < 0)
            return BERTH_ENOMEM;
    }
    return 0;
}

/* The first of this source's pods with that namespace and name
 * (BERTH_KUBE_NONE: none); BERTH_ENOMEM in *rc when the key's room could
 * not be had. */
static uint32_t find_pod(scan *c, const char *ns, const char *name, int *rc)
{
    if (berth_grow_bytes((void **)&c->q, &c->capq, capacity_pod_key_len(ns, name) + 1, 256)) {
        *rc = BERTH_ENOMEM;
        return BERTH_KUBE_NONE;
    }
    capacity_pod_key(c->q, ns, name);
    uint32_t i = berth_nameidx_find(&c->pods, c->q);
    return i == BERTH_NAMEIDX_NONE ? BERTH_KUBE_NONE : i;
}

/* A Pod document: its spec.terminationGracePeriodSeconds for the pod of
 * that namespace and name among this source's pods (finished pods are not
 * among them). */
static int scan_pod(void *vc, berth_dec *d, const berth_node *doc, const berth_kind_handler *h)
{
    scan *c = vc;
    const berth_node *meta = berth_node_get(doc, "metadata"), *spec = berth_node_get(doc, "spec");
    const berth_node *nm = meta ? berth_node_get(meta, "name") : NULL;
    const berth_node *ns = meta ? berth_node_get(meta, "namespace") : NULL;
    const berth_node *g = spec ? berth_node_get(spec, "terminationGracePeriodSeconds") : NULL;
    if (!g || !nm || nm->type != BERTH_NODE_SCALAR)
        return 0;
    int64_t v = 0;
    size_t p = berth_dec_push(d, "spec.terminationGracePeriodSeconds");
    int rc = berth_dec_node_int(d, g, 0, 365LL * 86400, &v);
    berth_dec_pop(d, p);
    if (rc)
        return rc;
    uint32_t i = find_pod(c, ns && ns->type == BERTH_NODE_SCALAR ? ns->str : "default", nm->str,
                          &rc);
    if (rc)
        return berth_error_set(d->err, rc, "out of memory");
    if (i != BERTH_KUBE_NONE)
        c->t->grace[i] = v;
    return 0;
}

static int scan_other(void *vc, berth_dec *d, const berth_node *doc, const char *kind)
{
    return 0;
}

/* Pods in the documents (and Lists) the autoscale loader has read */
static const berth_kind_handler scan_kinds[] = {
    {"Pod", NULL, NULL, NULL, 0, scan_pod, NULL, 0},
};
static const berth_walker scan_walker = {
    "estate", scan_kinds, 1, 0, NULL, scan_other, NULL,
};

static int scan_source(berth_atimeline *t, const berth_autoscale *m, const berth_source *src,
                       uint32_t from, berth_error *e, const berth_node *const *docs, size_t ndocs)
{
    berth_dec d;
    berth_dec_init(&d, (berth_arena *)&m->kube.arena, src->path, e);
    scan c = {t, m, from, {0}, NULL, NULL, 0};
    int rc = index_pods(&c) ? berth_error_set(e, BERTH_ENOMEM, "out of memory") : 0;
    for (size_t i = 0; i < ndocs && !rc; i++) {
        d.plen = 0;
        d.path[0] = 0;
        rc = berth_dec_walk(&d, docs[i], 0, &scan_walker, &c);
    }
    berth_nameidx_free(&c.pods);
    free(c.text);
    free(c.q);
    return rc;
}

int berth_atimeline_scan_pods(berth_atimeline *t, const berth_autoscale *m, const berth_source *src,
                              berth_error *e)
{
    uint32_t from = t->ngrace;
    if (sync_pods(t, m, 0))
        return berth_error_set(e, BERTH_ENOMEM, "out of memory");
    return scan_source(t, m, src, from, e, (const berth_node *const *)src->docs, src->ndocs);
}

/* ---- AutoscaleEvent ---- */

typedef struct evctx {
    berth_atimeline *t;
    berth_autoscale *m;
    const berth_source *src;
} evctx;

static int fail_at(berth_dec *d, const berth_node *parent, const char *key, const char *fmt,
                   const char *a)
{
    size_t p = berth_dec_push(d, key);
    int rc = berth_dec_fail(d, berth_node_get(parent, key), fmt, a);
    berth_dec_pop(d, p);
    return rc;
}

/* Loads the Pod documents docs[0..n) into m, marked as arriving later; a
 * copy count > 1 clones the one template under name-1 .. name-count. */
static int load_pods(evctx *c, berth_dec *d, const berth_node *spec, berth_node **docs, uint32_t n,
                     int64_t copies, berth_aevent *ev)
{
    berth_autoscale *m = c->m;
    uint32_t first = m->kube.npods;
    for (uint32_t i = 0; i < n; i++) {
        const berth_node *k = berth_node_get(docs[i], "kind");
        if (!k || k->type != BERTH_NODE_SCALAR || strcmp(k->str, "Pod")) {
            size_t p = copies ? berth_dec_push(d, "kind") : berth_dec_push_index(d, i);
            int rc = berth_dec_fail(d, k ? k : docs[i], "expected a Pod object (kind: Pod)");
            berth_dec_pop(d, p);
            return rc;
        }
    }
    berth_source ps = {c->src->path, n, docs};
    int rc = berth_autoscale_load(m, &ps, d->strict, d->err);
    if (rc)
        return rc;
    for (uint32_t i = first; i < m->kube.npods; i++)
        if (m->kube.pods[i].node_name)
            return fail_at(d, spec, copies ? "template" : "pods",
                           "an arriving pod must not set spec.nodeName (pod %s)",
                           m->kube.pods[i].name);
    if (m->kube.npods - first != n)
        return fail_at(d, spec, copies ? "template" : "pods",
                       "expected Pod objects that run (%s)", "no finished phase");
    if (sync_pods(c->t, m, 1))
        return berth_error_set(d->err, BERTH_ENOMEM, "out of memory");
    rc = scan_source(c->t, m, c->src, first, d->err, (const berth_node *const *)docs, n);
    if (rc)
        return rc;
    if (copies > 1) {
        berth_kpod tpl = m->kube.pods[first];
        berth_apod tinfo = m->pod_info[first];
        int64_t grace = c->t->grace[first];
        if (berth_grow((void **)&m->kube.pods, &m->kube.cappods, first + (uint32_t)copies,
                       sizeof *m->kube.pods, 0) ||
            berth_grow((void **)&m->pod_info, &m->cappod_info, first + (uint32_t)copies,
                       sizeof *m->pod_info, 0))
            return berth_error_set(d->err, BERTH_ENOMEM, "out of memory");
        for (int64_t k = 0; k < copies; k++) {
            char name[300];
            snprintf(name, sizeof name, "%s-%lld", tpl.name, (long long)k + 1);
            berth_kpod p = tpl;
            p.name = berth_arena_strdup(&m->kube.arena, name);
            if (!p.name)
                return berth_error_set(d->err, BERTH_ENOMEM, "out of memory");
            p.order = first + (uint32_t)k;
            m->kube.pods[first + (uint32_t)k] = p;
            m->pod_info[first + (uint32_t)k] = tinfo;
        }
        m->kube.npods = m->npod_info = first + (uint32_t)copies;
        if (sync_pods(c->t, m, 1))
            return berth_error_set(d->err, BERTH_ENOMEM, "out of memory");
        for (uint32_t i = first; i < m->kube.npods; i++)
            c->t->grace[i] = grace;
    }
    ev->first_pod = first;
    ev->npods = m->kube.npods - first;
    for (uint32_t i = first; i < m->kube.npods; i++)
        m->kube.pods[i].terminating = 1; /* invisible until the event */
    char what[256];
    const berth_kpod *p0 = &m->kube.pods[first];
    if (ev->npods == 1)
        snprintf(what, sizeof what, "%s/%s", p0->ns, p0->name);
    else
        snprintf(what, sizeof what, "%u pods (%s/%s ...)", ev->npods, p0->ns, p0->name);
    ev->what = berth_arena_strdup(&m->kube.arena, what);
    return ev->what ? 0 : berth_error_set(d->err, BERTH_ENOMEM, "out of memory");
}

static int dec_event(evctx *c, berth_dec *d, const berth_node *doc)
{
    static const char *const specf[] = {"at", "type", "pods", "count", "template", "pod", "node",
                                        "instanceType", "zone", "capacityType", "price", "available",
                                        NULL};
    berth_autoscale *m = c->m;
    berth_aevent ev;
    memset(&ev, 0, sizeof ev);
    int rc = 0;
    if (berth_node_get(doc, "metadata")) {
        const char *name = NULL;
        if ((rc = berth_dec_meta_named(d, &m->kube.arena, doc, 1, &name, NULL, NULL)))
            return rc;
    }
    berth_node *spec = NULL;
    if ((rc = berth_dec_map(d, doc, "spec", 1, &spec)))
        return rc;
    size_t p0 = berth_dec_push(d, "spec");
    if ((rc = berth_dec_known_fields(d, spec, specf)))
        goto out;
    const char *at = NULL;
    if ((rc = berth_dec_str(d, spec, "at", 1, &at)))
        goto out;
    int64_t ms = 0;
    if (berth_time_parse(at, &ms)) {
        rc = fail_at(d, spec, "at", "expected an RFC 3339 time such as 2024-05-01T12:00:00Z, got "
                                    "'%s'", at);
        goto out;
    }
    ev.at = ms >= 0 ? ms / 1000 : -((-ms + 999) / 1000);
    int type = 0;
    if ((rc = berth_dec_enum(d, spec, "type", 1, type_names, &type)))
        goto out;
    ev.type = (berth_aevent_type)type;
    /* the fields each type takes */
    static const char *const by_type[4][6] = {
        {"pods", "count", "template", NULL},
        {"pod", NULL},
        {"node", NULL},
        {"instanceType", "zone", "capacityType", "price", "available", NULL},
    };
    for (const char *const *f = specf + 2; *f; f++) {
        int ok = 0;
        for (int i = 0; by_type[type][i]; i++)
            ok |= !strcmp(by_type[type][i], *f);
        if (!ok && berth_node_get(spec, *f)) {
            rc = fail_at(d, spec, *f, "not a field of a %s event", type_names[type]);
            goto out;
        }
    }
    if (ev.type == BERTH_AEV_POD_ARRIVE) {
        berth_node *pods = berth_node_get(spec, "pods"), *tpl = berth_node_get(spec, "template");
        if (!!pods == !!tpl) {
            rc = berth_dec_fail(d, spec, "a PodArrive event needs exactly one of pods (a list of "
                                         "Pod objects) and count with template");
            goto out;
        }
        if (pods) {
            if ((rc = berth_dec_seq(d, spec, "pods", 1, &pods)))
                goto out;
            if (!pods->n) {
                rc = fail_at(d, spec, "pods", "expected at least one Pod%s", "");
                goto out;
            }
            size_t p1 = berth_dec_push(d, "pods");
            rc = load_pods(c, d, spec, pods->items, (uint32_t)pods->n, 0, &ev);
            berth_dec_pop(d, p1);
        } else {
            int64_t count = 0;
            if ((rc = berth_dec_int(d, spec, "count", 1, 1, MAX_COPIES, &count)))
                goto out;
            if ((rc = berth_dec_map(d, spec, "template", 1, &tpl)))
                goto out;
            size_t p1 = berth_dec_push(d, "template");
            rc = load_pods(c, d, spec, &tpl, 1, count, &ev);
            berth_dec_pop(d, p1);
        }
    } else if (ev.type == BERTH_AEV_POD_LEAVE) {
        const char *pod = NULL;
        if ((rc = berth_dec_str(d, spec, "pod", 1, &pod)))
            goto out;
        const char *slash = strchr(pod, '/');
        if (!slash || slash == pod || !slash[1]) {
            rc = fail_at(d, spec, "pod", "expected namespace/name, got '%s'", pod);
            goto out;
        }
        char *ns = berth_arena_strdup(&m->kube.arena, pod);
        if (!ns) {
            rc = berth_error_set(d->err, BERTH_ENOMEM, "out of memory");
            goto out;
        }
        ns[slash - pod] = 0;
        ev.pod_ns = ns;
        ev.pod_name = ns + (slash - pod) + 1;
        ev.what = pod;
    } else if (ev.type == BERTH_AEV_SPOT_INTERRUPTION) {
        if ((rc = berth_dec_str(d, spec, "node", 1, &ev.node)))
            goto out;
        ev.what = ev.node;
    } else {
        const char *it = NULL;
        static const char *const cts[] = {"reserved", "spot", "on-demand", NULL};
        int ct = 0;
        if ((rc = berth_dec_str(d, spec, "instanceType", 1, &it)) ||
            (rc = berth_dec_str(d, spec, "zone", 1, &ev.zone)) ||
            (rc = berth_dec_enum(d, spec, "capacityType", 1, cts, &ct)))
            goto out;
        ev.ct = (berth_capacity_type)ct;
        if (!berth_node_get(spec, "price")) {
            rc = berth_dec_fail(d, spec, "missing required field price");
            goto out;
        }
        ev.price = -1;
        if ((rc = berth_dec_number(d, spec, "price", &ev.price)))
            goto out;
        ev.available = -1; /* unchanged */
        if (berth_node_get(spec, "available") &&
            (rc = berth_dec_bool(d, spec, "available", 1, &ev.available)))
            goto out;
        int ti = berth_instance_type_find(m->types, m->ntypes, it);
        if (ti < 0) {
            rc = fail_at(d, spec, "instanceType", "no InstanceType named '%s'", it);
            goto out;
        }
        ev.itype = (uint32_t)ti;
        if (!berth_instance_offering(&m->types[ti], ev.zone, ev.ct)) {
            rc = fail_at(d, spec, "zone", "InstanceType has no offering in zone '%s' with this "
                                          "capacityType", ev.zone);
            goto out;
        }
        char what[256];
        snprintf(what, sizeof what, "%s %s %s %.4f/h%s", it, ev.zone, cts[ct], ev.price,
                 ev.available < 0 ? "" : ev.available ? " available" : " unavailable");
        ev.what = berth_arena_strdup(&m->kube.arena, what);
        if (!ev.what) {
            rc = berth_error_set(d->err, BERTH_ENOMEM, "out of memory");
            goto out;
        }
    }
    if (!rc) {
        berth_atimeline *t = c->t;
        if ((rc = berth_grow((void **)&t->ev, &t->capev, t->nev + 1, sizeof *t->ev, MAX_EVENTS))) {
            /* a failed allocation is not bad input (the CLI's failure
             * injection once read "too many events" at N = 106) */
            rc = berth_dec_grow_fail(d, doc, rc, "events");
            goto out;
        }
        t->ev[t->nev++] = ev;
    }
out:
    berth_dec_pop(d, p0);
    return rc;
}

/* ---- dispatch: AutoscaleEvent and `kind: List` for berth_dec_walk ---- */

static int ld_event(void *c, berth_dec *d, const berth_node *doc, const berth_kind_handler *h)
{
    return dec_event(c, d, doc);
}

static int not_event(void *c, berth_dec *d, const berth_node *doc, const char *kind)
{
    return fail_at(d, doc, "kind",
                   "an events file holds AutoscaleEvent documents (or a List of them), not %s",
                   kind);
}

static const char *const event_api[] = {"berth.io/v1", NULL};
static const char *const event_top[] = {"apiVersion", "kind", "metadata", "spec", NULL};
static const berth_kind_handler event_kinds[] = {
    {"AutoscaleEvent", event_api, NULL, event_top, BERTH_KIND_STRICT, ld_event, NULL, 0},
};
static const berth_walker event_walker = {
    "events", event_kinds, 1, BERTH_WALK_PLAIN_LISTS, NULL, not_event, NULL,
};

int berth_atimeline_load_events(berth_atimeline *t, berth_autoscale *m, const berth_source *src,
                                berth_error *e)
{
    if (sync_pods(t, m, 0))
        return berth_error_set(e, BERTH_ENOMEM, "out of memory");
    berth_dec d;
    berth_dec_init(&d, &m->kube.arena, src->path, e);
    d.strict = 1;
    evctx c = {t, m, src};
    return berth_dec_walk_source(&d, src, &event_walker, &c);
}

void berth_atimeline_finish(berth_atimeline *t)
{
    /* stable insertion sort by time (events are few) */
    for (uint32_t i = 1; i < t->nev; i++) {
        berth_aevent x = t->ev[i];
        uint32_t j = i;
        while (j && t->ev[j - 1].at > x.at) {
            t->ev[j] = t->ev[j - 1];
            j--;
        }
        t->ev[j] = x;
    }
}
