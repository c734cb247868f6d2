/* autoscale/scaleup.c - scale-up (SPEC 5): pending pods that the kube
 * scheduler cannot put on an existing node go to a virtual node group that
 * can host them, and are bin-packed onto new nodes by first-fit
 * decreasing; each new node's instance type, zone and capacity type is
 * chosen in Ocean's purchase order (unused reservations, then spot by
 * berth's market score, then on-demand as fallback); consolidation then
 * replaces sets of the round's new nodes by cheaper nodes of one or two
 * options; the kube scheduler confirms every new node's pods; headroom is
 * topped up last, then packed jointly with the pods (headroom_repack: a
 * node bought for units alone goes when another split of the pods over
 * the nodes bought anyway, or one of them on another type, holds them).
 * Two paths give the same plan: the plain algorithm (reference) and the
 * fast path (template-class caches, interned zones, live node lists, run
 * lookaheads with a bound on the option key, confirmation through one
 * what-if session per round), compared by tests/unit/test_autoscale_fast.c.
 * Algorithm and work bound: docs/autoscale.md. */
#include "autoscale/state.h"

#include "berth/grow.h"
#include "berth/random.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ROUNDS 16
/* template-match cache bytes at most (classes past it are checked uncached) */
#define CACHE_BYTES (64u << 20)

/* The fast path's indexes for one scale-up (none in reference mode): zones
 * interned with per-zone node counts kept as nodes open and drop, allowed
 * types and zones per group, and the pending pods' template classes (equal
 * tolerations, nodeSelector and required node affinity) with a lazily
 * filled cache of capacity_template_match per (class, group, type, zone,
 * capacity type). They only answer the plain algorithm's questions faster:
 * decisions are the same. */
typedef struct upfast {
    uint32_t nz;
    const char **zones;           /* distinct zone strings */
    int64_t *zone_count;          /* per zone: nodes not removed */
    uint32_t *off_base;           /* per type: its first offering's slot in off_zone */
    uint32_t *off_zone;           /* per offering slot: zone id */
    uint8_t *vtype;               /* [g * ntypes + t]: group g allows type t */
    uint32_t *gtypes, *gtypes_off;/* per group: its allowed types, ascending */
    uint8_t *vzone;               /* [g * nz + z]: group g allows zone z */
    uint32_t *pod_cls;            /* per pod: template class or NONE (uncached) */
    uint8_t *pod_ext;             /* per pod: requests an extended resource no type offers */
    uint32_t ncls;
    uint32_t *cls_pod;            /* per class: a pod of it */
    uint8_t **cache;              /* per class: [((g * ntypes + t) * nz + z) * 3 + ct] 0/1/2 */
    uint8_t **gok;                /* per class: [g * ntypes + t] 0 unknown, 1 no, 2 an
                                   * available allowed offering's template matches; with
                                   * DaemonSets 2 / 3: and gfree holds the 1 / 2 distinct
                                   * free rooms of the matching offerings, 4: more (not
                                   * cached) */
    int64_t **gfree;              /* per class: [(g * ntypes + t) * 2 + i][4] (DaemonSets) */
    size_t cache_bytes;
} upfast;

typedef struct option {
    int ok;
    uint32_t type;
    const char *zone;
    int ct;
    int res;                      /* reservation, -1 none */
    double price, key, gain;
} option;

typedef struct packer {
    capacity_pass *s;
    uint32_t g;
    uint32_t *order;              /* pods of the group, FFD order */
    uint32_t n;
    uint8_t *done;                /* per order slot: placed or given up */
    double norm[3];               /* largest allowed capacity per resource */
    const berth_headroom *hr;     /* headroom mode */
    upfast *f;                    /* NULL: reference mode */
    int64_t *smin;                /* fast: [i * 3 + r] min request r over order[i..n) */
    uint32_t *live;               /* fast: this round's nodes of the group that can
                                   * still take a remaining pod, in opening order */
    int *live_z;                  /* fast: their zone ids */
    uint32_t *run_end;            /* fast: per order slot, the end of its run of pods
                                   * with equal requests and template class */
    double *wpre;                 /* fast: prefix sums of the pods' weights in order */
    struct cand { option o; double cost, lb; uint32_t idx; } *cand; /* fast: pick's candidates */
    uint32_t ncand, capcand;
    uint32_t nlive;
    uint32_t *gcls;               /* fast: distinct classes of the group's pods */
    uint32_t ngcls;               /* > 64 or an uncached pod: no gain memo */
    struct memo { uint64_t sig; uint32_t t; double gain; int64_t free[4]; } *memo;
    uint32_t nmemo, capmemo;
    int oom;                      /* a memo or cache allocation failed */
    int need_all;                 /* replacements: an option must host order[from..n) */
    uint64_t *imp_left;           /* improvement steps left for the whole scale-up (NULL:
                                   * no improvement) */
    int64_t hr_need;              /* headroom mode: units still missing (a node's gain
                                   * counts no more than these; 0: uncapped) */
} packer;

static int fast_zone(const upfast *f, const char *zone)
{
    for (uint32_t z = 0; zone && z < f->nz; z++)
        if (f->zones[z] == zone || !strcmp(f->zones[z], zone))
            return (int)z;
    return -1;
}

/* Whether pod's requests fit an empty node of type t (the request part of
 * capacity_template_hosts). */
static int fast_res_ok(const capacity_pass *s, const upfast *f, uint32_t t, uint32_t pod)
{
    const berth_instance_type *it = &s->m->types[t];
    const berth_kpod *p = &s->m->kube.pods[pod];
    int64_t gpu = s->gpu != BERTH_KUBE_NONE ? p->req[s->gpu] : 0;
    return p->req[BERTH_KRES_CPU] <= it->cpu && p->req[BERTH_KRES_MEMORY] <= it->memory &&
           gpu <= it->gpus && it->pods >= 1 && !f->pod_ext[pod];
}

/* capacity_template_match for class c through the cache (-1: out of memory). */
static int fast_match(capacity_pass *s, upfast *f, uint32_t c, uint32_t g, uint32_t t, uint32_t z,
                      int ct)
{
    const berth_autoscale *m = s->m;
    size_t per = (size_t)m->nvngs * m->ntypes * f->nz * 3;
    if (!f->cache[c]) {
        if (f->cache_bytes + per > CACHE_BYTES)
            return capacity_template_match(s, g, t, f->zones[z], ct, f->cls_pod[c], NULL, 0);
        f->cache[c] = calloc(per, 1);
        if (!f->cache[c])
            return -1;
        f->cache_bytes += per;
    }
    uint8_t *x = &f->cache[c][(((size_t)g * m->ntypes + t) * f->nz + z) * 3 + (size_t)ct];
    if (!*x)
        *x = (uint8_t)(1 + capacity_template_match(s, g, t, f->zones[z], ct, f->cls_pod[c], NULL, 0));
    return *x - 1;
}

/* hosts() without its DaemonSet room test, for a caller that has checked
 * the pod against room no larger than the template's free room. */
static int hosts_matched(capacity_pass *s, upfast *f, uint32_t g, uint32_t t, const char *zone,
                         int z, int ct, uint32_t pod);

/* capacity_template_hosts(s, g, t, zone, ct, pod, NULL, 0), fast when f;
 * z: zone's id when known, else -1. */
static int hosts(capacity_pass *s, upfast *f, uint32_t g, uint32_t t, const char *zone, int z,
                 int ct, uint32_t pod)
{
    if (!f)
        return capacity_template_hosts(s, g, t, zone, ct, pod, NULL, 0);
    if (!fast_res_ok(s, f, t, pod) || !capacity_daemon_room(s, g, t, zone, ct, pod))
        return 0;
    return hosts_matched(s, f, g, t, zone, z, ct, pod);
}

static int hosts_matched(capacity_pass *s, upfast *f, uint32_t g, uint32_t t, const char *zone,
                         int z, int ct, uint32_t pod)
{
    if (!f)
        return capacity_template_hosts(s, g, t, zone, ct, pod, NULL, 0);
    if (!fast_res_ok(s, f, t, pod))
        return 0;
    if (z < 0)
        z = fast_zone(f, zone);
    if (z < 0 || f->pod_cls[pod] == BERTH_KUBE_NONE)
        return capacity_template_match(s, g, t, zone, ct, pod, NULL, 0);
    return fast_match(s, f, f->pod_cls[pod], g, t, (uint32_t)z, ct) > 0;
}

static int64_t zone_nodes(const capacity_pass *s, const upfast *f, const char *zone)
{
    int z = f ? fast_zone(f, zone) : -1;
    return z >= 0 ? f->zone_count[z] : capacity_zone_nodes(s, zone);
}

static double weight(const packer *k, uint32_t pod)
{
    const berth_kpod *p = &k->s->m->kube.pods[pod];
    double w = (double)p->req[BERTH_KRES_CPU] / k->norm[0] +
               (double)p->req[BERTH_KRES_MEMORY] / k->norm[1];
    if (k->s->gpu != BERTH_KUBE_NONE)
        w += (double)p->req[k->s->gpu] / k->norm[2];
    return w > 0 ? w : 1e-9;
}

static int fits_free(const capacity_pass *s, const int64_t freec[4], uint32_t pod)
{
    const berth_kpod *p = &s->m->kube.pods[pod];
    int64_t gpu = s->gpu != BERTH_KUBE_NONE ? p->req[s->gpu] : 0;
    return p->req[BERTH_KRES_CPU] <= freec[0] && p->req[BERTH_KRES_MEMORY] <= freec[1] &&
           gpu <= freec[2] && freec[3] >= 1;
}

static void take(const capacity_pass *s, int64_t freec[4], uint32_t pod)
{
    const berth_kpod *p = &s->m->kube.pods[pod];
    freec[0] -= p->req[BERTH_KRES_CPU];
    freec[1] -= p->req[BERTH_KRES_MEMORY];
    freec[2] -= s->gpu != BERTH_KUBE_NONE ? p->req[s->gpu] : 0;
    freec[3] -= 1;
}

/* What one empty node of (t, zone, ct) would take: pods mode, the weight
 * of the remaining pods from slot `from` that first-fit it in order;
 * headroom mode, the units it holds. */
static double gain_of(packer *k, uint32_t t, const char *zone, int z, int ct, uint32_t from)
{
    capacity_pass *s = k->s;
    int64_t freec[4]; /* allocatable less the DaemonSet pods (daemons.c) */
    capacity_template_free(s, k->g, t, zone, ct, freec);
    if (k->hr) {
        const int64_t per[3] = {k->hr->cpu, k->hr->memory, k->hr->gpu};
        int64_t u = INT64_MAX;
        for (int r = 0; r < 3; r++)
            if (per[r] > 0) {
                int64_t x = freec[r] / per[r];
                u = x < u ? x : u;
            }
        if (u != INT64_MAX && k->hr_need > 0 && u > k->hr_need)
            u = k->hr_need; /* units past the need buy nothing: the cheapest node that
                             * covers it wins over a larger one (cost / gain) */
        return u == INT64_MAX ? 0 : (double)u;
    }
    double g = 0;
    uint32_t took = 0;
    if (k->f && k->run_end && !k->need_all) {
        /* fast: the same scan a run at a time. Pods after `from` are not
         * done yet (packing goes in order); a run's pods have equal
         * requests and template class, so the scan takes the first ones
         * that fit and none of the rest; weights add pod by pod as in the
         * plain loop. */
        uint32_t i = from;
        while (i < k->n) {
            if (freec[3] < 1 || freec[0] < k->smin[i * 3] || freec[1] < k->smin[i * 3 + 1] ||
                freec[2] < k->smin[i * 3 + 2])
                break;
            uint32_t pod = k->order[i], end = i == from ? from + 1 : k->run_end[i];
            if (k->done[i] || !fits_free(s, freec, pod) ||
                (i != from && !hosts_matched(s, k->f, k->g, t, zone, z, ct, pod))) {
                i = end;
                continue;
            }
            const berth_kpod *p = &s->m->kube.pods[pod];
            const int64_t req[3] = {p->req[BERTH_KRES_CPU], p->req[BERTH_KRES_MEMORY],
                                    s->gpu != BERTH_KUBE_NONE ? p->req[s->gpu] : 0};
            int64_t cnt = (int64_t)(end - i);
            for (int r = 0; r < 3; r++)
                if (req[r] > 0 && freec[r] / req[r] < cnt)
                    cnt = freec[r] / req[r];
            cnt = freec[3] < cnt ? freec[3] : cnt;
            double w = weight(k, pod);
            for (int64_t c = 0; c < cnt; c++) {
                take(s, freec, pod);
                g += w;
            }
            took += (uint32_t)cnt;
            i = end;
        }
        return g;
    }
    for (uint32_t i = from; i < k->n; i++) {
        /* fast: no pod from i on fits what is left */
        if (k->f && (freec[3] < 1 || freec[0] < k->smin[i * 3] || freec[1] < k->smin[i * 3 + 1] ||
                     freec[2] < k->smin[i * 3 + 2]))
            break;
        uint32_t pod = k->order[i];
        if (k->done[i] || !fits_free(s, freec, pod))
            continue;
        /* freec is at most the template's free room and the pod fits it:
         * the DaemonSet room test of hosts() holds */
        if (i != from && !hosts_matched(s, k->f, k->g, t, zone, z, ct, pod))
            continue;
        take(s, freec, pod);
        g += weight(k, pod);
        took++;
    }
    if (k->need_all && took < k->n - from)
        return 0;
    return g;
}

/* gain_of with a memo (fast path): offerings of one type whose template
 * answers agree for every class of the group's pods scan alike. */
static int memo_gain(packer *k, uint32_t t, const char *zone, int ct, uint32_t from, double *out)
{
    upfast *f = k->f;
    int z = f ? fast_zone(f, zone) : -1;
    if (z < 0 || k->hr || k->ngcls > 64) {
        *out = gain_of(k, t, zone, z, ct, from);
        return 0;
    }
    /* the scan starts from the template's free room (DaemonSets taken off,
     * which may differ between offerings of one type): part of the key */
    int64_t fr[4];
    capacity_template_free(k->s, k->g, t, zone, ct, fr);
    uint64_t sig = 0;
    for (uint32_t c = 0; c < k->ngcls; c++) {
        int r = fast_match(k->s, f, k->gcls[c], k->g, t, (uint32_t)z, ct);
        if (r < 0)
            return BERTH_ENOMEM;
        sig |= (uint64_t)r << c;
    }
    for (uint32_t i = 0; i < k->nmemo; i++)
        if (k->memo[i].t == t && k->memo[i].sig == sig && !memcmp(k->memo[i].free, fr, sizeof fr)) {
            *out = k->memo[i].gain;
            return 0;
        }
    *out = gain_of(k, t, zone, z, ct, from);
    if (berth_grow((void **)&k->memo, &k->capmemo, k->nmemo + 1, sizeof *k->memo, 0))
        return BERTH_ENOMEM;
    k->memo[k->nmemo] = (struct memo){sig, t, *out, {fr[0], fr[1], fr[2], fr[3]}};
    k->nmemo++;
    return 0;
}

/* Fast: an upper bound of gain_of(k, t, zone, ., from) in pods mode: the
 * pods an empty node of (t, zone, ct) takes fit its free room (the type's
 * allocatable less its DaemonSet pods: what gain_of starts from), and are
 * at most its pod count of the remaining pods, whose weights descend; a
 * margin covers rounding. */
static double gain_bound(const packer *k, uint32_t t, const char *zone, int ct, uint32_t from)
{
    int64_t fr[4];
    capacity_template_free(k->s, k->g, t, zone, ct, fr);
    double u = (double)fr[0] / k->norm[0] + (double)fr[1] / k->norm[1] +
               (k->s->gpu != BERTH_KUBE_NONE ? (double)fr[2] / k->norm[2] : 0) +
               (double)fr[3] * 1e-9;
    uint64_t to = (uint64_t)from + (uint64_t)fr[3];
    double w = k->wpre[to < k->n ? to : k->n] - k->wpre[from];
    double b = w < u ? w : u;
    return b * (1 + 1e-9) + 1e-9 * (k->wpre[k->n] + 1.0);
}

static int cmp_cand(const void *a, const void *b)
{
    const struct cand *x = a, *y = b;
    if (x->lb != y->lb)
        return x->lb < y->lb ? -1 : 1;
    return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static int better(const option *a, const option *b, const berth_autoscale *m)
{
    if (!b->ok)
        return 1;
    if (a->key != b->key)
        return a->key < b->key;
    if (a->gain != b->gain)
        return a->gain > b->gain;
    if (a->price != b->price)
        return a->price < b->price;
    int c = strcmp(m->types[a->type].name, m->types[b->type].name);
    if (c)
        return c < 0;
    return strcmp(a->zone, b->zone) < 0;
}

static int64_t min_zone_nodes(const capacity_pass *s, const upfast *f, uint32_t g,
                              int64_t fallback)
{
    const berth_vng *v = &s->m->vngs[g];
    int64_t mn = INT64_MAX;
    if (f) {
        /* the zones of the group's allowed types' offerings it allows */
        for (uint32_t i = f->gtypes_off[g]; i < f->gtypes_off[g + 1]; i++) {
            uint32_t t = f->gtypes[i];
            for (uint32_t o = 0; o < s->m->types[t].nofferings; o++) {
                uint32_t z = f->off_zone[f->off_base[t] + o];
                if (f->vzone[g * f->nz + z] && f->zone_count[z] < mn)
                    mn = f->zone_count[z];
            }
        }
        return mn == INT64_MAX ? fallback : mn;
    }
    for (uint32_t t = 0; t < s->m->ntypes; t++) {
        const berth_instance_type *it = &s->m->types[t];
        if (!capacity_vng_allows_type(v, it))
            continue;
        for (uint32_t o = 0; o < it->nofferings; o++)
            if (capacity_vng_allows_zone(v, it->offerings[o].zone)) {
                int64_t z = capacity_zone_nodes(s, it->offerings[o].zone);
                mn = z < mn ? z : mn;
            }
    }
    return mn == INT64_MAX ? fallback : mn;
}

/* Whether offering o of type t is available and in a zone group g may use
 * (the fast path's zone table when there is one, else the group's rules). */
static int offer_in_group(const upfast *f, const berth_vng *v, uint32_t g, uint32_t t, uint32_t o,
                          const berth_offering *of)
{
    if (!of->available)
        return 0;
    return f ? f->vzone[g * f->nz + f->off_zone[f->off_base[t] + o]]
             : capacity_vng_allows_zone(v, of->zone);
}

/* The offerings group g may buy, type by type: the available ones in its
 * zones of its allowed types (the fast path's per-group type list when f
 * is set, else every type checked against the group's rules). After each
 * offers_next that returns 1: type t (it), its offering o (of). */
typedef struct offer_walk {
    const upfast *f;
    const berth_autoscale *m;
    const berth_vng *v;
    uint32_t g, ti, tend; /* the next type position and the end */
    uint32_t t, o;
    const berth_instance_type *it; /* NULL: between types */
    const berth_offering *of;
} offer_walk;

static offer_walk offers_of(const upfast *f, const berth_autoscale *m, uint32_t g)
{
    offer_walk w = {f, m, &m->vngs[g], g, f ? f->gtypes_off[g] : 0,
                    f ? f->gtypes_off[g + 1] : m->ntypes, 0, 0, NULL, NULL};
    return w;
}

static inline int offers_next(offer_walk *w)
{
    uint32_t o = w->o + 1;
    while (1) {
        if (!w->it) {
            if (w->ti >= w->tend)
                return 0;
            w->t = w->f ? w->f->gtypes[w->ti] : w->ti;
            w->ti++;
            w->it = &w->m->types[w->t];
            o = 0;
            if (!w->f && !capacity_vng_allows_type(w->v, w->it)) {
                w->it = NULL;
                continue;
            }
        }
        for (; o < w->it->nofferings; o++) {
            const berth_offering *of = &w->it->offerings[o];
            if (offer_in_group(w->f, w->v, w->g, w->t, o, of)) {
                w->o = o;
                w->of = of;
                return 1;
            }
        }
        w->it = NULL;
    }
}

/* Best option of tier `tier` (reserved / spot / on-demand) for a new node
 * hosting pod order[from] (pods mode) or headroom units. */
static option pick(packer *k, int tier, uint32_t from)
{
    capacity_pass *s = k->s;
    const berth_autoscale *m = s->m;
    const berth_vng *v = &m->vngs[k->g];
    upfast *f = k->f;
    option best = {0};
    if (tier == BERTH_CT_RESERVED && !m->nres)
        return best;
    int64_t zmin = tier == BERTH_CT_SPOT ? min_zone_nodes(s, f, k->g, 0) : 0;
    int defer = f && !k->hr && !k->need_all && k->wpre;
    k->ncand = 0;
    for (offer_walk w = offers_of(f, m, k->g); offers_next(&w);) {
        uint32_t t = w.t, o = w.o;
        const berth_instance_type *it = w.it;
        const berth_offering *of = w.of;
        if (tier != BERTH_CT_RESERVED && (int)of->capacity_type != tier)
            continue;
        option c = {1, t, of->zone, tier, -1, of->price, 0, 0};
        if (tier == BERTH_CT_RESERVED) {
            /* a reservation covers on-demand capacity (or a reserved offering) */
            if (of->capacity_type == BERTH_CT_SPOT)
                continue;
            if (of->capacity_type == BERTH_CT_RESERVED)
                c.price = of->price;
            else if (berth_instance_offering(it, of->zone, BERTH_CT_RESERVED))
                continue; /* counted through the reserved offering */
            else
                c.price = 0;
            for (uint32_t r = 0; r < m->nres && c.res < 0; r++) {
                const berth_reservation *rv = &m->res[r];
                int type_ok = rv->instance_type ? !strcmp(rv->instance_type, it->name)
                                                : !strcmp(rv->family, it->family);
                if (!type_ok || (rv->zone && strcmp(rv->zone, of->zone)))
                    continue;
                if (rv->count && (!v->utilize_reserved || s->res_left[r] < 1.0 - 1e-9))
                    continue;
                if (!rv->count) {
                    const berth_offering *od =
                        berth_instance_offering(it, of->zone, BERTH_CT_ON_DEMAND);
                    if (!v->utilize_commitments || !od ||
                        s->res_left[r] + 1e-9 < od->price)
                        continue;
                }
                c.res = (int)r;
            }
            if (c.res < 0)
                continue;
        } else if ((int)of->capacity_type != tier) {
            continue;
        }
        if (!k->hr && !hosts(s, f, k->g, t, of->zone,
                             f ? (int)f->off_zone[f->off_base[t] + o] : -1, tier,
                             k->order[from]))
            continue;
        double cost = tier == BERTH_CT_SPOT
                          ? berth_market_score(of, zone_nodes(s, f, of->zone), zmin)
                          : c.price;
        /* reservations: zone spread breaks ties between free capacity */
        if (tier == BERTH_CT_RESERVED)
            cost = c.price + 1e-6 * (double)zone_nodes(s, f, of->zone);
        if (defer) {
            if (berth_grow((void **)&k->cand, &k->capcand, k->ncand + 1, sizeof *k->cand, 0)) {
                k->oom = 1;
                return best;
            }
            k->cand[k->ncand++] = (struct cand){c, cost, cost / gain_bound(k, t, of->zone, tier, from),
                                                k->ncand};
            continue;
        }
        if (memo_gain(k, t, of->zone, tier, from, &c.gain)) {
            k->oom = 1;
            return best;
        }
        if (c.gain <= 0)
            continue;
        c.key = cost / c.gain;
        if (better(&c, &best, m))
            best = c;
    }
    if (!defer)
        return best;
    /* fast: candidates by lower bound of their key; the first whose bound
     * exceeds the best key found ends the search (no later one can win:
     * better() compares keys first) */
    if (k->ncand)
        qsort(k->cand, k->ncand, sizeof *k->cand, cmp_cand);
    for (uint32_t i = 0; i < k->ncand; i++) {
        if (best.ok && k->cand[i].lb > best.key)
            break;
        option c = k->cand[i].o;
        if (memo_gain(k, c.type, c.zone, tier, from, &c.gain)) {
            k->oom = 1;
            return best;
        }
        if (c.gain <= 0)
            continue;
        c.key = k->cand[i].cost / c.gain;
        if (better(&c, &best, m))
            best = c;
    }
    return best;
}

/* The purchase order for one new node of group g. */
static option choose(packer *k, uint32_t from, char *why, size_t size)
{
    capacity_pass *s = k->s;
    const berth_vng *v = &s->m->vngs[k->g];
    k->nmemo = 0;
    option o = pick(k, BERTH_CT_RESERVED, from);
    if (o.ok)
        return o;
    /* spotPercentage over the group's non-reserved nodes, counting this one */
    int64_t spot, total;
    capacity_group_counts(s, k->g, &spot, &total);
    int want_spot = spot < (v->spot_percentage * (total + 1) + 99) / 100;
    if (want_spot) {
        o = pick(k, BERTH_CT_SPOT, from);
        if (o.ok)
            return o;
        if (!v->fallback_to_od) {
            snprintf(why, size, "no spot offering of group %s can host it and fallbackToOd is false",
                     v->name);
            return o;
        }
        o = pick(k, BERTH_CT_ON_DEMAND, from);
    } else {
        o = pick(k, BERTH_CT_ON_DEMAND, from);
        if (!o.ok)
            o = pick(k, BERTH_CT_SPOT, from);
    }
    if (!o.ok)
        snprintf(why, size, "no available offering of group %s's instance types and zones can "
                            "host it", v->name);
    return o;
}

static uint32_t open_node(packer *k, const option *o)
{
    capacity_pass *s = k->s;
    uint32_t n = capacity_new_node(s, k->g, o->type, o->zone, o->ct);
    if (n == BERTH_KUBE_NONE)
        return n;
    s->n[n].ct = o->ct;
    if (k->f) {
        int z = fast_zone(k->f, o->zone);
        if (z >= 0)
            k->f->zone_count[z]++;
        if (k->live) {
            k->live_z[k->nlive] = z;
            k->live[k->nlive++] = n;
        }
    }
    if (o->res >= 0) {
        const berth_reservation *rv = &s->m->res[o->res];
        const berth_offering *od =
            berth_instance_offering(&s->m->types[o->type], o->zone, BERTH_CT_ON_DEMAND);
        double cost = rv->count ? 1.0 : od ? od->price : 0;
        s->res_left[o->res] -= cost;
        s->node_res[n] = o->res;
        s->node_res_cost[n] = cost;
    }
    return n;
}

static int add_unsched(capacity_pass *s, uint32_t pod, const char *why)
{
    berth_aplan *p = s->plan;
    if (s->pod_flags[pod] & CAPACITY_POD_UNSCHED) /* listed already (a flag, not a scan) */
        return 0;
    if (berth_grow((void **)&p->unsched, &p->capunsched, p->nunsched + 1, sizeof *p->unsched, 0))
        return BERTH_ENOMEM;
    s->pod_flags[pod] |= CAPACITY_POD_UNSCHED;
    p->unsched[p->nunsched].pod = pod;
    snprintf(p->unsched[p->nunsched].reason, sizeof p->unsched[p->nunsched].reason, "%s", why);
    p->nunsched++;
    return 0;
}

/* specificity of group g for pod: selector / affinity keys it defines plus
 * taints the pod tolerates (a pod that asks for a group's labels or
 * tolerates its taints is meant for it) */
static int specificity(const capacity_pass *s, uint32_t g, const berth_kpod *p)
{
    const berth_vng *v = &s->m->vngs[g];
    int n = 0;
    for (uint32_t i = 0; i < p->node_selector.n; i++)
        n += berth_labels_get(&v->labels, p->node_selector.items[i].key) != NULL;
    for (uint32_t t = 0; t < p->nreq_terms; t++)
        for (uint32_t e = 0; e < p->req_terms[t].nexprs; e++)
            n += berth_labels_get(&v->labels, p->req_terms[t].exprs[e].key) != NULL;
    for (uint32_t i = 0; i < v->ntaints; i++)
        n += berth_tolerations_tolerate(p->tols, p->ntols, &v->taints[i]);
    return n;
}

/* The group for pod: among the groups with an allowed (type, zone,
 * available offering) whose template hosts it, the most specific; ties:
 * the most general (fewest labels and taints: Ocean's default group), then
 * by name. -1 with a reason when none. */
/* Fast: whether group g hosts pod (the boolean of group_for's search).
 * Per (class, group, type) the template answer is cached; with DaemonSets
 * the pod must also fit the free room (allocatable less DaemonSet pods) of
 * a matching offering, so the one or two distinct free rooms of the
 * matching offerings are cached with it. */
static int fast_group_hosts(capacity_pass *s, upfast *f, uint32_t g, uint32_t pod)
{
    const berth_autoscale *m = s->m;
    uint32_t c = f->pod_cls[pod];
    uint8_t *gok = NULL;
    int64_t *gfree = NULL;
    int ds = capacity_daemons_any(s);
    if (c != BERTH_KUBE_NONE) {
        /* per (class, group, type): whether an available allowed offering's
         * template matches (the request part is the pod's own) */
        size_t cells = (size_t)m->nvngs * m->ntypes;
        if (!f->gok[c] && f->cache_bytes + cells <= CACHE_BYTES) {
            f->gok[c] = calloc(cells, 1);
            f->cache_bytes += f->gok[c] ? cells : 0;
        }
        if (ds && f->gok[c] && !f->gfree[c] &&
            f->cache_bytes + cells * 8 * sizeof(int64_t) <= CACHE_BYTES) {
            f->gfree[c] = malloc(cells * 8 * sizeof(int64_t));
            f->cache_bytes += f->gfree[c] ? cells * 8 * sizeof(int64_t) : 0;
        }
        if (f->gok[c] && (!ds || f->gfree[c])) {
            gok = f->gok[c] + (size_t)g * m->ntypes;
            gfree = ds ? f->gfree[c] + (size_t)g * m->ntypes * 8 : NULL;
        }
    }
    for (uint32_t i = f->gtypes_off[g]; i < f->gtypes_off[g + 1]; i++) {
        uint32_t t = f->gtypes[i];
        if (!fast_res_ok(s, f, t, pod))
            continue;
        if (gok && gok[t] && gok[t] < 4) {
            if (gok[t] == 1)
                continue;
            if (!ds)
                return 1;
            for (uint32_t v = 0; v + 1 < gok[t]; v++)
                if (fits_free(s, gfree + (size_t)t * 8 + v * 4, pod))
                    return 1;
            continue;
        }
        if (gok && !gok[t] && ds) {
            /* the matching offerings' distinct free rooms (at most two kept) */
            int64_t *keep = gfree + (size_t)t * 8;
            uint32_t nkeep = 0, more = 0;
            for (uint32_t o = 0; o < m->types[t].nofferings; o++) {
                const berth_offering *of = &m->types[t].offerings[o];
                uint32_t z = f->off_zone[f->off_base[t] + o];
                if (!of->available || !f->vzone[g * f->nz + z])
                    continue;
                int r = fast_match(s, f, c, g, t, z, (int)of->capacity_type);
                if (r < 0) { /* out of memory: the uncached search */
                    more = 1;
                    break;
                }
                if (!r)
                    continue;
                int64_t fr[4];
                capacity_template_free(s, g, t, of->zone, (int)of->capacity_type, fr);
                uint32_t v = 0;
                while (v < nkeep && memcmp(keep + v * 4, fr, sizeof fr))
                    v++;
                if (v < nkeep)
                    continue;
                if (nkeep == 2) {
                    more = 1;
                    break;
                }
                memcpy(keep + nkeep * 4, fr, sizeof fr);
                nkeep++;
            }
            gok[t] = (uint8_t)(more ? 4 : 1 + nkeep);
            if (!more) {
                for (uint32_t v = 0; v < nkeep; v++)
                    if (fits_free(s, keep + v * 4, pod))
                        return 1;
                continue;
            }
        }
        int any = 0;
        for (uint32_t o = 0; !any && o < m->types[t].nofferings; o++) {
            const berth_offering *of = &m->types[t].offerings[o];
            uint32_t z = f->off_zone[f->off_base[t] + o];
            if (of->available && f->vzone[g * f->nz + z] &&
                hosts(s, f, g, t, of->zone, (int)z, (int)of->capacity_type, pod))
                any = 1;
        }
        if (gok && !ds)
            gok[t] = (uint8_t)(1 + any);
        if (any)
            return 1;
    }
    return 0;
}

static int group_for(capacity_pass *s, upfast *f, uint32_t pod, char *why, size_t size)
{
    const berth_autoscale *m = s->m;
    int best = -1, best_spec = -1;
    char first[200] = "";
    for (uint32_t g = 0; g < m->nvngs; g++) {
        const berth_vng *v = &m->vngs[g];
        int hosts = 0;
        char w[160] = "no allowed instance type has an available offering in an allowed zone";
        if (f && !fast_group_hosts(s, f, g, pod))
            continue; /* without a hosting group the plain search below gives the reasons */
        for (uint32_t t = 0; !f && !hosts && t < m->ntypes; t++) {
            if (!capacity_vng_allows_type(v, &m->types[t]))
                continue;
            for (uint32_t o = 0; !hosts && o < m->types[t].nofferings; o++) {
                const berth_offering *of = &m->types[t].offerings[o];
                if (!of->available || !capacity_vng_allows_zone(v, of->zone))
                    continue;
                int ct = of->capacity_type;
                hosts = capacity_template_hosts(s, g, t, of->zone, ct, pod, w, sizeof w);
            }
        }
        if (!f && !hosts) {
            size_t l = strlen(first);
            snprintf(first + l, sizeof first - l, "%s%s: %s", l ? "; " : "", v->name, w);
            continue;
        }
        int sp = specificity(s, g, &m->kube.pods[pod]);
        uint32_t gen = v->labels.n + v->ntaints;
        uint32_t bgen = best >= 0 ? m->vngs[best].labels.n + m->vngs[best].ntaints : 0;
        if (sp > best_spec ||
            (sp == best_spec && (gen < bgen ||
                                 (gen == bgen && strcmp(v->name, m->vngs[best].name) < 0)))) {
            best = (int)g;
            best_spec = sp;
        }
    }
    if (best < 0 && f)
        return group_for(s, NULL, pod, why, size);
    if (best < 0)
        snprintf(why, size, "no virtual node group can host it (%s)",
                 m->nvngs ? first : "no VirtualNodeGroup given");
    return best;
}

/* comparator context: the packer and each pod's rank */
typedef struct {
    const packer *k;
    const uint32_t *rank;
} ffd_order;

static int cmp_ffd(const void *a, const void *b, void *ctx)
{
    const ffd_order *o = ctx;
    const packer *sort_k = o->k;
    const uint32_t *sort_rank = o->rank;
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    double wx = weight(sort_k, x), wy = weight(sort_k, y);
    if (wx != wy)
        return wx > wy ? -1 : 1;
    return sort_rank[x] < sort_rank[y] ? -1 : sort_rank[x] > sort_rank[y];
}

static void set_norm(packer *k)
{
    const berth_autoscale *m = k->s->m;
    const berth_vng *v = &m->vngs[k->g];
    k->norm[0] = k->norm[1] = k->norm[2] = 1;
    for (uint32_t t = 0; t < m->ntypes; t++)
        if (capacity_vng_allows_type(v, &m->types[t])) {
            k->norm[0] = fmax(k->norm[0], (double)m->types[t].cpu);
            k->norm[1] = fmax(k->norm[1], (double)m->types[t].memory);
            k->norm[2] = fmax(k->norm[2], (double)m->types[t].gpus);
        }
}

/* First-fit decreasing of the group's pods (pods mode). New nodes opened
 * in this round start at index first_new. */
static int pack_group(packer *k, uint32_t first_new)
{
    capacity_pass *s = k->s;
    const berth_vng *v = &s->m->vngs[k->g];
    for (uint32_t i = 0; i < k->n; i++) {
        uint32_t pod = k->order[i];
        int placed = 0;
        if (k->f) {
            /* first fit over the live nodes; a node that no pod from i on
             * fits leaves the list for good (the suffix minima only grow) */
            uint32_t w = 0;
            for (uint32_t j = 0; j < k->nlive; j++) {
                uint32_t n = k->live[j];
                capacity_node *c = &s->n[n];
                int64_t freec[4] = {c->alloc[0] - c->req[0], c->alloc[1] - c->req[1],
                                    c->alloc[2] - c->req[2], c->alloc_pods - c->npods};
                if (freec[3] < 1 || freec[0] < k->smin[i * 3] || freec[1] < k->smin[i * 3 + 1] ||
                    freec[2] < k->smin[i * 3 + 2])
                    continue;
                int z = k->live_z[j];
                k->live_z[w] = z;
                k->live[w++] = n;
                if (fits_free(s, freec, pod) &&
                    hosts(s, k->f, k->g, (uint32_t)c->type, c->zone, z, c->ct, pod)) {
                    capacity_place(s, pod, n);
                    placed = 1;
                    while (++j < k->nlive) {
                        k->live_z[w] = k->live_z[j];
                        k->live[w++] = k->live[j];
                    }
                }
            }
            k->nlive = w;
        }
        for (uint32_t n = first_new; !k->f && !placed && n < s->nn; n++) {
            capacity_node *c = &s->n[n];
            if (c->removed || c->vng != (int)k->g)
                continue;
            int64_t freec[4] = {c->alloc[0] - c->req[0], c->alloc[1] - c->req[1],
                                c->alloc[2] - c->req[2], c->alloc_pods - c->npods};
            if (fits_free(s, freec, pod) &&
                capacity_template_hosts(s, k->g, (uint32_t)c->type, c->zone, c->ct, pod, NULL, 0)) {
                capacity_place(s, pod, n);
                placed = 1;
            }
        }
        if (placed) {
            k->done[i] = 1;
            continue;
        }
        char why[256] = "";
        if (s->vng_nodes[k->g] >= v->max_nodes) {
            snprintf(why, sizeof why, "virtual node group %s reached maxNodes %lld", v->name,
                     (long long)v->max_nodes);
            k->done[i] = 1;
            if (add_unsched(s, pod, why))
                return BERTH_ENOMEM;
            continue;
        }
        option o = choose(k, i, why, sizeof why);
        if (k->oom)
            return BERTH_ENOMEM;
        if (!o.ok) {
            k->done[i] = 1;
            if (add_unsched(s, pod, why))
                return BERTH_ENOMEM;
            continue;
        }
        uint32_t n = open_node(k, &o);
        if (n == BERTH_KUBE_NONE)
            return BERTH_ENOMEM;
        capacity_place(s, pod, n);
        k->done[i] = 1;
    }
    return 0;
}

/* Drops new node n (no pods, no headroom) and gives back its reservation. */
static void drop_node(capacity_pass *s, upfast *f, uint32_t n)
{
    capacity_node *c = &s->n[n];
    c->removed = 1;
    int z = f ? fast_zone(f, c->zone) : -1;
    if (z >= 0)
        f->zone_count[z]--;
    s->vng_nodes[c->vng]--;
    if (s->node_res[n] >= 0)
        s->res_left[s->node_res[n]] += s->node_res_cost[n];
    s->node_res[n] = -1;
}

static int top_up_headroom(capacity_pass *s, upfast *f, uint32_t g)
{
    const berth_vng *v = &s->m->vngs[g];
    for (uint32_t h = 0; h < v->nheadroom; h++) {
        for (;;) {
            int64_t held = 0;
            if (capacity_headroom_gap(s, g, h, &held) >= 0)
                break;
            if (s->vng_nodes[g] >= v->max_nodes)
                break;
            packer k = {s, g, NULL, 0, NULL, {1, 1, 1}, &v->headroom[h]};
            k.f = f;
            k.hr_need = v->headroom[h].units - held;
            char why[200];
            option o = choose(&k, 0, why, sizeof why);
            free(k.memo);
            if (!o.ok)
                break;
            k.hr_need = 0; /* the units the node holds */
            double units = gain_of(&k, o.type, o.zone, f ? fast_zone(f, o.zone) : -1, o.ct, 0);
            uint32_t n = open_node(&k, &o);
            if (n == BERTH_KUBE_NONE)
                return BERTH_ENOMEM;
            s->n[n].headroom_units = (int64_t)units;
        }
    }
    return 0;
}

/* ---- headroom repack: pods and headroom units packed jointly ----
 *
 * Headroom is topped up after the packing (top_up_headroom), so a node may
 * be bought for units that another split of the pods over the nodes bought
 * anyway would leave free (tiers #11 of bench/quality/autoscale_scaleup.py:
 * a third 2-cpu spot node for memory units that the reserved node holds
 * once its cpu-heavy pods move to the spot nodes). So, per group, after
 * the top-up: for each node opened for headroom alone (dearest first), the
 * pods of the group's new nodes (reserved ones included) are repacked onto
 * those same nodes without it, with the units still missing as pseudo-pods
 * of the unit's size: 8 + HR_SHUFFLE packings (units first or last; best
 * fit, first fit in opening order, first fit smallest node first; then
 * random pod orders from a fixed seed), and the node is dropped when every
 * pod is placed and every headroom spec of the group is still met
 * (capacity_headroom_gap: SPEC 5's count, exact); nodes the repack empties
 * are dropped too when the headroom stays met, else kept as headroom
 * nodes. Failing that, hr_retype replaces the headroom node and one pod
 * node (not reserved) by one node of another type (same capacity type and
 * zone, priced below the two) holding its pods and the missing units. Tiers stay: a pod moves only onto a reserved node or a
 * node of its own node's capacity type (a reserved node's pods: reserved
 * or spot), each move template checked (hosts: labels, taints, zone,
 * PersistentVolume zones, DaemonSet room). Pods with required pod
 * (anti-)affinity, topology spread constraints or host ports, and every
 * pod of their nodes, stay where the kube scheduler confirmed them.
 * Work bound: per group, at most HR_TRIES headroom nodes tried, each with
 * 8 + HR_SHUFFLE packings of at most HR_PODS pods (and the missing units)
 * onto at most HR_NODES nodes (O((pods + units) x nodes) fit tests and at
 * most pods x nodes template checks each), one O(nodes) headroom count per
 * spec and packing, and the retype's O(nodes x types x pods) template
 * checks; groups with more new pods or nodes are left as they are, groups
 * without headroom return at once. */
#define HR_TRIES 4
#define HR_PODS 512
#define HR_NODES 64
#define HR_SHUFFLE 32

static int hr_free_pod(const berth_kpod *p)
{
    return !p->nspread && !p->naff_req && !p->nanti_req && !p->nports;
}

static int64_t hr_units(const berth_vng *v, const int64_t fr[3])
{
    int64_t total = 0;
    for (uint32_t h = 0; h < v->nheadroom; h++) {
        const berth_headroom *x = &v->headroom[h];
        const int64_t per[3] = {x->cpu, x->memory, x->gpu};
        int64_t u = INT64_MAX;
        for (int r = 0; r < 3; r++)
            if (per[r] > 0) {
                int64_t q = fr[r] > 0 ? fr[r] / per[r] : 0;
                u = q < u ? q : u;
            }
        total += u == INT64_MAX ? 0 : u;
    }
    return total;
}

static int hr_gaps_met(const capacity_pass *s, uint32_t g)
{
    const berth_vng *v = &s->m->vngs[g];
    for (uint32_t h = 0; h < v->nheadroom; h++)
        if (capacity_headroom_gap(s, g, h, NULL) < 0)
            return 0;
    return 1;
}

static int tier_of(const capacity_pass *s, uint32_t n)
{
    return s->node_res[n] >= 0 ? BERTH_CT_RESERVED : s->n[n].ct;
}

typedef struct hrsort {
    const capacity_pass *s;
    double norm[2];               /* the largest repacked node's cpu and memory */
} hrsort;

static int cmp_hr_pod(const void *a, const void *b, void *ctx)
{
    const hrsort *h = ctx;
    const berth_kpod *x = &h->s->m->kube.pods[*(const uint32_t *)a];
    const berth_kpod *y = &h->s->m->kube.pods[*(const uint32_t *)b];
    double wx = (double)x->req[BERTH_KRES_CPU] / h->norm[0] +
                (double)x->req[BERTH_KRES_MEMORY] / h->norm[1];
    double wy = (double)y->req[BERTH_KRES_CPU] / h->norm[0] +
                (double)y->req[BERTH_KRES_MEMORY] / h->norm[1];
    if (wx != wy)
        return wx > wy ? -1 : 1;
    uint32_t pa = *(const uint32_t *)a, pb = *(const uint32_t *)b;
    return pa < pb ? -1 : pa > pb;
}

/* The second move: node hn (opened for headroom alone) and one of nodes[]
 * (not reserved) are replaced by one node of another type of that node's
 * capacity type and zone that holds its pods (each template checked) and
 * enough units that every headroom spec stays met, priced below the two;
 * the cheapest such. 1 applied, 0 none, BERTH_ENOMEM. */
static int hr_retype(capacity_pass *s, upfast *f, uint32_t g, uint32_t hn, const uint32_t *nodes,
                     uint32_t nnodes, uint32_t *pods)
{
    const berth_autoscale *m = s->m;
    const berth_vng *v = &m->vngs[g];
    const capacity_node *h = &s->n[hn];
    const berth_offering *ho = berth_instance_offering(&m->types[h->type], h->zone,
                                                       (berth_capacity_type)h->ct);
    if (!ho)
        return 0;
    uint32_t bx = BERTH_KUBE_NONE, bt = 0;
    double bp = INFINITY;
    const berth_offering *bof = NULL;
    for (uint32_t q = 0; q < nnodes; q++) {
        uint32_t x = nodes[q];
        const capacity_node *c = &s->n[x];
        if (s->node_res[x] >= 0)
            continue;
        const berth_offering *xo = berth_instance_offering(&m->types[c->type], c->zone,
                                                           (berth_capacity_type)c->ct);
        if (!xo)
            continue;
        double have = xo->price + ho->price;
        /* the units the replacement must hold: the group's without x and hn */
        int64_t need[8] = {0};
        uint32_t nspec = v->nheadroom < 8 ? v->nheadroom : 8;
        s->n[x].removed = s->n[hn].removed = 1;
        for (uint32_t sp = 0; sp < nspec; sp++) {
            int64_t gap = capacity_headroom_gap(s, g, sp, NULL);
            need[sp] = gap < 0 ? -gap : 0;
        }
        s->n[x].removed = s->n[hn].removed = 0;
        uint32_t np = 0;
        for (uint32_t p = 0; p < m->kube.npods && np < HR_PODS; p++)
            if (s->pod_node[p] == x)
                pods[np++] = p;
        for (uint32_t t = 0; t < m->ntypes; t++) {
            const berth_instance_type *it = &m->types[t];
            if ((int)t == c->type || !capacity_vng_allows_type(v, it))
                continue;
            const berth_offering *of = berth_instance_offering(it, c->zone, (berth_capacity_type)c->ct);
            if (!of || !of->available || of->price >= have - 1e-9 || of->price >= bp)
                continue;
            int64_t fr[4];
            capacity_template_free(s, g, t, c->zone, c->ct, fr);
            int64_t left[3] = {fr[0] - c->req[0], fr[1] - c->req[1], fr[2] - c->req[2]};
            if (left[0] < 0 || left[1] < 0 || left[2] < 0 || fr[3] < c->npods)
                continue;
            int ok = 1;
            for (uint32_t sp = 0; sp < nspec && ok; sp++) {
                const berth_headroom *u = &v->headroom[sp];
                const int64_t per[3] = {u->cpu, u->memory, u->gpu};
                int64_t units = INT64_MAX;
                for (int r = 0; r < 3; r++)
                    if (per[r] > 0) {
                        int64_t qq = left[r] / per[r];
                        units = qq < units ? qq : units;
                    }
                ok = (units == INT64_MAX ? 0 : units) >= need[sp];
            }
            for (uint32_t i = 0; i < np && ok; i++)
                ok = hosts(s, f, g, t, c->zone, -1, c->ct, pods[i]);
            if (!ok)
                continue;
            bp = of->price;
            bx = x;
            bt = t;
            bof = of;
        }
    }
    if (bx == BERTH_KUBE_NONE)
        return 0;
    packer k = {s, g, NULL, 0, NULL, {1, 1, 1}, NULL};
    k.f = f;
    option o = {1, bt, s->n[bx].zone, s->n[bx].ct, -1, bof->price, 0, 0};
    uint32_t np = 0;
    for (uint32_t p = 0; p < m->kube.npods && np < HR_PODS; p++)
        if (s->pod_node[p] == bx)
            pods[np++] = p;
    uint32_t n = open_node(&k, &o);
    if (n == BERTH_KUBE_NONE)
        return BERTH_ENOMEM;
    for (uint32_t i = 0; i < np; i++) {
        capacity_unplace(s, pods[i]);
        capacity_place(s, pods[i], n);
    }
    drop_node(s, f, bx);
    drop_node(s, f, hn);
    if (!hr_gaps_met(s, g))
        return BERTH_EINTERNAL;
    return 1;
}

/* ---- headroom repack's exact step: a search over count vectors ----
 *
 * When the packings above fail, the pods and the missing units are
 * distributed over the nodes by a depth-first search over count vectors
 * of classes of interchangeable items (pods: equal requests and equal
 * nodes that may take them, by the tier rule and the template, so the
 * search is the same with or without the fast path; units: one class per
 * spec): class by class (largest first), how many of the class each node
 * takes (the nodes smallest first, each as many as fit first), pruned by
 * the free room left against the classes still to place. It finds a
 * split where a pod-by-pod order finds none (tiers #9 of
 * bench/quality/autoscale_scaleup.py: a reserved node's pods in the one
 * cpu split that leaves three units' room).
 * Work bound: per headroom node tried, pods x nodes template checks (at
 * most HR_PODS x HR_NODES), at most HR_CLS classes (more: not searched)
 * and HR_DFS search steps of O(nodes) each. */
#define HR_CLS 48
#define HR_DFS (1u << 15)

typedef struct hrdfs {
    uint32_t ncls, nb;
    int64_t req[HR_CLS][4];       /* cpu, memory, gpu, pod slots per item */
    uint64_t allow[HR_CLS];       /* bit b: node b may take the class */
    uint32_t cnt[HR_CLS];
    int64_t rest[HR_CLS + 1][4];  /* the demand of classes c.. */
    int64_t fr[HR_NODES][4];
    uint32_t amt[HR_CLS][HR_NODES];
    uint64_t work;
} hrdfs;

static int64_t hr_most(const hrdfs *d, uint32_t c, uint32_t b, int64_t left)
{
    int64_t mx = left;
    for (int r = 0; r < 4; r++)
        if (d->req[c][r] > 0) {
            int64_t q = d->fr[b][r] > 0 ? d->fr[b][r] / d->req[c][r] : 0;
            mx = q < mx ? q : mx;
        }
    return mx;
}

/* 1 found (amt holds it), 0 none, -1 out of steps */
static int hr_dfs(hrdfs *d, uint32_t c, uint32_t b, int64_t left)
{
    if (++d->work > HR_DFS)
        return -1;
    if (!left) {
        for (uint32_t q = b; q < d->nb; q++)
            d->amt[c][q] = 0;
        if (++c == d->ncls)
            return 1;
        int64_t tot[4] = {0, 0, 0, 0};
        for (uint32_t q = 0; q < d->nb; q++)
            for (int r = 0; r < 4; r++)
                tot[r] += d->fr[q][r];
        for (int r = 0; r < 4; r++)
            if (tot[r] < d->rest[c][r])
                return 0;
        memset(d->amt[c], 0, sizeof d->amt[c]);
        return hr_dfs(d, c, 0, d->cnt[c]);
    }
    while (b < d->nb && !(d->allow[c] >> b & 1))
        b++;
    if (b == d->nb)
        return 0;
    int64_t later = 0;
    for (uint32_t q = b + 1; q < d->nb && later < left; q++)
        if (d->allow[c] >> q & 1)
            later += hr_most(d, c, q, left);
    int64_t mx = hr_most(d, c, b, left), lo = left - later > 0 ? left - later : 0;
    for (int64_t a = mx; a >= lo; a--) {
        for (int r = 0; r < 4; r++)
            d->fr[b][r] -= a * d->req[c][r];
        d->amt[c][b] = (uint32_t)a;
        int rc = hr_dfs(d, c, b + 1, left - a);
        for (int r = 0; r < 4; r++)
            d->fr[b][r] += a * d->req[c][r];
        if (rc)
            return rc;
    }
    return 0;
}

/* The exact step for pods[0..np) (unplaced; home: their nodes) and the
 * units need[0..nspec) onto nodes[0..nnodes) (asc: smallest first): 1 when
 * every pod is placed and the group's headroom is met, 0 otherwise (the
 * pods unplaced again), BERTH_ENOMEM. */
static int hr_exact(capacity_pass *s, upfast *f, uint32_t g, const uint32_t *pods,
                    const uint32_t *home, uint32_t np, const int64_t *need, uint32_t nspec,
                    const uint32_t *nodes, const uint32_t *asc, uint32_t nnodes)
{
    const berth_autoscale *m = s->m;
    const berth_vng *v = &m->vngs[g];
    hrdfs *d = malloc(sizeof *d);
    uint32_t *cls = malloc(((size_t)np + 1) * sizeof *cls);
    int rc = 0;
    if (!d || !cls) {
        free(d);
        free(cls);
        return BERTH_ENOMEM;
    }
    memset(d, 0, sizeof *d);
    d->nb = nnodes;
    /* the nodes smallest first */
    for (uint32_t b = 0; b < nnodes; b++) {
        const capacity_node *x = &s->n[nodes[asc[b]]];
        d->fr[b][0] = x->alloc[0] - x->req[0];
        d->fr[b][1] = x->alloc[1] - x->req[1];
        d->fr[b][2] = x->alloc[2] - x->req[2];
        d->fr[b][3] = x->alloc_pods - x->npods;
    }
    /* the pods' classes: equal requests and equal nodes that may take
     * them (the pod's tier rule and its template, as the packings above) */
    for (uint32_t i = 0; i < np && d->ncls <= HR_CLS; i++) {
        const berth_kpod *p = &m->kube.pods[pods[i]];
        int64_t gpu = s->gpu != BERTH_KUBE_NONE ? p->req[s->gpu] : 0;
        int pt = tier_of(s, home[i]);
        uint64_t allow = 0;
        for (uint32_t b = 0; b < nnodes; b++) {
            uint32_t n = nodes[asc[b]];
            const capacity_node *x = &s->n[n];
            int nt = tier_of(s, n);
            if (nt != pt && nt != BERTH_CT_RESERVED &&
                !(pt == BERTH_CT_RESERVED && nt == BERTH_CT_SPOT))
                continue;
            if (n != home[i] && !hosts(s, f, g, (uint32_t)x->type, x->zone, -1, x->ct, pods[i]))
                continue;
            allow |= (uint64_t)1 << b;
        }
        uint32_t c = 0;
        while (c < d->ncls &&
               !(d->allow[c] == allow && d->req[c][0] == p->req[BERTH_KRES_CPU] &&
                 d->req[c][1] == p->req[BERTH_KRES_MEMORY] && d->req[c][2] == gpu))
            c++;
        if (c == d->ncls) {
            if (d->ncls == HR_CLS) {
                d->ncls = HR_CLS + 1; /* too many: not searched */
                break;
            }
            d->allow[c] = allow;
            d->req[c][0] = p->req[BERTH_KRES_CPU];
            d->req[c][1] = p->req[BERTH_KRES_MEMORY];
            d->req[c][2] = gpu;
            d->req[c][3] = 1;
            d->ncls++;
        }
        d->cnt[c]++;
        cls[i] = c;
    }
    for (uint32_t h = 0; h < nspec && d->ncls <= HR_CLS; h++) {
        if (need[h] <= 0)
            continue;
        if (d->ncls == HR_CLS) {
            d->ncls = HR_CLS + 1;
            break;
        }
        const berth_headroom *x = &v->headroom[h];
        d->allow[d->ncls] = nnodes >= 64 ? UINT64_MAX : ((uint64_t)1 << nnodes) - 1;
        d->req[d->ncls][0] = x->cpu;
        d->req[d->ncls][1] = x->memory;
        d->req[d->ncls][2] = x->gpu;
        d->req[d->ncls][3] = 0;
        d->cnt[d->ncls++] = (uint32_t)need[h];
    }
    if (d->ncls > HR_CLS || !d->ncls)
        goto out;
    /* classes largest first (cpu and memory shares of the largest node) */
    {
        double norm[2] = {1, 1};
        for (uint32_t b = 0; b < nnodes; b++)
            for (int r = 0; r < 2; r++)
                norm[r] = fmax(norm[r], (double)s->n[nodes[b]].alloc[r]);
        uint32_t ord[HR_CLS];
        double w[HR_CLS];
        for (uint32_t c = 0; c < d->ncls; c++) {
            w[c] = (double)d->req[c][0] / norm[0] + (double)d->req[c][1] / norm[1];
            uint32_t y = c;
            for (; y > 0 && w[ord[y - 1]] < w[c]; y--)
                ord[y] = ord[y - 1];
            ord[y] = c;
        }
        hrdfs *e = malloc(sizeof *e);
        if (!e) {
            rc = BERTH_ENOMEM;
            goto out;
        }
        memcpy(e, d, sizeof *e);
        uint32_t back[HR_CLS];
        for (uint32_t c = 0; c < d->ncls; c++) {
            memcpy(d->req[c], e->req[ord[c]], sizeof d->req[c]);
            d->allow[c] = e->allow[ord[c]];
            d->cnt[c] = e->cnt[ord[c]];
            back[ord[c]] = c;
        }
        free(e);
        for (uint32_t i = 0; i < np; i++)
            cls[i] = back[cls[i]];
        for (uint32_t c = d->ncls; c-- > 0;)
            for (int r = 0; r < 4; r++)
                d->rest[c][r] = d->rest[c + 1][r] + (int64_t)d->cnt[c] * d->req[c][r];
    }
    for (int r = 0; r < 4; r++) {
        int64_t tot = 0;
        for (uint32_t b = 0; b < nnodes; b++)
            tot += d->fr[b][r];
        if (tot < d->rest[0][r])
            goto out;
    }
    memset(d->amt[0], 0, sizeof d->amt[0]);
    if (hr_dfs(d, 0, 0, d->cnt[0]) != 1)
        goto out;
    /* place the pods as the counts say */
    uint32_t placed = 0;
    for (uint32_t i = 0; i < np; i++) {
        uint32_t c = cls[i], b = 0;
        while (b < nnodes && !d->amt[c][b])
            b++;
        if (b == nnodes)
            break;
        d->amt[c][b]--;
        capacity_place(s, pods[i], nodes[asc[b]]);
        placed++;
    }
    rc = placed == np && hr_gaps_met(s, g);
    if (!rc)
        for (uint32_t i = 0; i < placed; i++)
            capacity_unplace(s, pods[i]);
out:
    free(d);
    free(cls);
    return rc;
}

static int headroom_repack(capacity_pass *s, upfast *f, uint32_t g)
{
    const berth_autoscale *m = s->m;
    const berth_vng *v = &m->vngs[g];
    if (!v->nheadroom || !hr_gaps_met(s, g))
        return 0;
    uint32_t nodes[HR_NODES], nnodes = 0, tried = 0;
    uint8_t *fixed = NULL;
    uint32_t *pods = NULL, *home = NULL;
    int rc = 0;
    for (;;) {
        /* the dearest node opened for headroom alone not tried yet */
        uint32_t hn = BERTH_KUBE_NONE;
        double hp = -1;
        for (uint32_t n = s->nexisting; n < s->nn; n++) {
            const capacity_node *x = &s->n[n];
            if (x->removed || x->vng != (int)g || x->npods || !x->headroom_units ||
                s->node_res[n] >= 0 || x->type < 0)
                continue;
            const berth_offering *of = berth_instance_offering(&m->types[x->type], x->zone,
                                                               (berth_capacity_type)x->ct);
            double pr = of ? of->price : 0;
            if (pr > hp && !(fixed && fixed[n - s->nexisting] == 2))
                hp = pr, hn = n;
        }
        if (hn == BERTH_KUBE_NONE || tried++ >= HR_TRIES)
            break;
        if (!fixed) {
            fixed = calloc((size_t)(s->nn - s->nexisting) + 1, 1);
            if (!fixed)
                return BERTH_ENOMEM;
        }
        fixed[hn - s->nexisting] = 2; /* tried */
        /* the group's new nodes with pods, none constrained */
        nnodes = 0;
        uint32_t np = 0;
        int too_many = 0;
        for (uint32_t p = 0; p < m->kube.npods; p++) {
            uint32_t n = s->pod_node[p];
            if (n == BERTH_KUBE_NONE || n < s->nexisting || s->n[n].removed ||
                s->n[n].vng != (int)g)
                continue;
            if (!hr_free_pod(&m->kube.pods[p]))
                fixed[n - s->nexisting] |= 1;
        }
        for (uint32_t n = s->nexisting; n < s->nn; n++) {
            const capacity_node *x = &s->n[n];
            if (x->removed || x->vng != (int)g || !x->npods || (fixed[n - s->nexisting] & 1) ||
                x->type < 0)
                continue;
            if (nnodes == HR_NODES) {
                too_many = 1;
                break;
            }
            nodes[nnodes++] = n;
            np += (uint32_t)x->npods;
        }
        if (too_many || np > HR_PODS || !nnodes)
            break;
        if (!pods) {
            pods = malloc(HR_PODS * sizeof *pods);
            home = malloc(HR_PODS * sizeof *home);
            if (!pods || !home) {
                rc = BERTH_ENOMEM;
                break;
            }
        }
        np = 0;
        for (uint32_t p = 0; p < m->kube.npods; p++) {
            uint32_t n = s->pod_node[p];
            if (n == BERTH_KUBE_NONE || n < s->nexisting)
                continue;
            for (uint32_t q = 0; q < nnodes; q++)
                if (nodes[q] == n) {
                    pods[np] = p;
                    home[np++] = n;
                    break;
                }
        }
        hrsort hs = {s, {1, 1}};
        for (uint32_t q = 0; q < nnodes; q++)
            for (int r = 0; r < 2; r++)
                hs.norm[r] = fmax(hs.norm[r], (double)s->n[nodes[q]].alloc[r]);
        qsort_r(pods, np, sizeof *pods, cmp_hr_pod, &hs);
        /* home follows the pods' order: look each up again */
        for (uint32_t i = 0; i < np; i++)
            home[i] = s->pod_node[pods[i]];
        for (uint32_t i = 0; i < np; i++)
            capacity_unplace(s, pods[i]);
        s->n[hn].removed = 1;
        /* the units the repacked nodes must hold: each spec's need less
         * what the group's other nodes hold (pseudo-pods of the unit's
         * size, packed with the pods) */
        int64_t need[8] = {0};
        uint32_t nspec = v->nheadroom < 8 ? v->nheadroom : 8;
        for (uint32_t q = 0; q < nnodes; q++)
            s->n[nodes[q]].removed = 1;
        for (uint32_t h = 0; h < nspec; h++) {
            int64_t gap = capacity_headroom_gap(s, g, h, NULL);
            need[h] = gap < 0 ? -gap : 0;
        }
        for (uint32_t q = 0; q < nnodes; q++)
            s->n[nodes[q]].removed = 0;
        int ok = 0;
        berth_rng rng;
        berth_rng_seed(&rng, 0x9e3779b97f4a7c15ull ^ hn);
        /* the nodes smallest first (first fit there leaves the large
         * nodes' room whole) */
        uint32_t asc[HR_NODES];
        for (uint32_t q = 0; q < nnodes; q++) {
            uint32_t y = q;
            const capacity_node *xq = &s->n[nodes[q]];
            for (; y > 0 && s->n[nodes[asc[y - 1]]].alloc[0] > xq->alloc[0]; y--)
                asc[y] = asc[y - 1];
            asc[y] = q;
        }
        for (int way = 0; way < 8 + HR_SHUFFLE && !ok; way++) {
            /* way / 2: units first, pods first, units last; way % 2: best
             * fit, first fit onto the nodes in order; ways 6, 7: first fit
             * onto the nodes smallest first, units last / first; from way
             * 8 on: the pods in a random order (fixed seed), units first
             * or last */
            int small = way == 6 || way == 7;
            if (way >= 8)
                for (uint32_t i = np; i > 1; i--) {
                    uint32_t r = (uint32_t)berth_rng_below(&rng, i), t = pods[i - 1];
                    pods[i - 1] = pods[r];
                    pods[r] = t;
                    t = home[i - 1];
                    home[i - 1] = home[r];
                    home[r] = t;
                }
            int64_t ex[HR_NODES][3];
            memset(ex, 0, sizeof ex);
            uint32_t placed = 0;
            int fail = 0;
            for (int phase = 0; phase < 2 && !fail; phase++) {
                int units_now = way >= 6 ? (way % 2 == (way >= 8 ? 0 : 1)) == (phase == 0)
                                         : (way / 2 == 0) == (phase == 0);
                if (units_now) {
                    for (uint32_t h = 0; h < nspec && !fail; h++) {
                        const berth_headroom *x = &v->headroom[h];
                        const int64_t per[3] = {x->cpu, x->memory, x->gpu};
                        for (int64_t u = 0; u < need[h] && !fail; u++) {
                            uint32_t best = UINT32_MAX;
                            double bs = INFINITY;
                            for (uint32_t qq = 0; qq < nnodes; qq++) {
                                uint32_t q = small ? asc[qq] : qq;
                                const capacity_node *y = &s->n[nodes[q]];
                                int fit = 1;
                                double left = 0;
                                for (int r = 0; r < 3; r++) {
                                    int64_t fr = y->alloc[r] - y->req[r] - ex[q][r] - per[r];
                                    fit &= fr >= 0;
                                    if (r < 2)
                                        left += (double)fr / (double)(y->alloc[r] > 0 ? y->alloc[r] : 1);
                                }
                                if (fit && left < bs) {
                                    bs = left;
                                    best = q;
                                    if (way % 2 || small)
                                        break;
                                }
                            }
                            if (best == UINT32_MAX) {
                                fail = 1;
                                break;
                            }
                            for (int r = 0; r < 3; r++)
                                ex[best][r] += per[r];
                        }
                    }
                    continue;
                }
                for (; placed < np; placed++) {
                    uint32_t pod = pods[placed];
                    int pt = tier_of(s, home[placed]);
                    uint32_t best = BERTH_KUBE_NONE;
                    double bs = INFINITY;
                    for (uint32_t qq = 0; qq < nnodes; qq++) {
                        uint32_t q = small ? asc[qq] : qq;
                        uint32_t n = nodes[q];
                        const capacity_node *x = &s->n[n];
                        int nt = tier_of(s, n);
                        if (nt != pt && nt != BERTH_CT_RESERVED &&
                            !(pt == BERTH_CT_RESERVED && nt == BERTH_CT_SPOT))
                            continue;
                        int64_t fr[4] = {x->alloc[0] - x->req[0] - ex[q][0],
                                         x->alloc[1] - x->req[1] - ex[q][1],
                                         x->alloc[2] - x->req[2] - ex[q][2],
                                         x->alloc_pods - x->npods};
                        if (!fits_free(s, fr, pod))
                            continue;
                        double left = (double)fr[0] / (double)(x->alloc[0] > 0 ? x->alloc[0] : 1) +
                                      (double)fr[1] / (double)(x->alloc[1] > 0 ? x->alloc[1] : 1);
                        if (left >= bs)
                            continue;
                        if (n != home[placed] &&
                            !hosts(s, f, g, (uint32_t)x->type, x->zone, -1, x->ct, pod))
                            continue;
                        bs = left;
                        best = n;
                        if (way % 2 || small)
                            break;
                    }
                    if (best == BERTH_KUBE_NONE) {
                        fail = 1;
                        break;
                    }
                    capacity_place(s, pod, best);
                }
            }
            ok = !fail && placed == np && hr_gaps_met(s, g);
            if (!ok)
                for (uint32_t i = 0; i < placed; i++)
                    capacity_unplace(s, pods[i]);
        }
        int xr = 0;
        if (!ok && (xr = hr_exact(s, f, g, pods, home, np, need, nspec, nodes, asc, nnodes)) > 0)
            ok = 1;
        s->n[hn].removed = 0;
        if (!ok) {
            for (uint32_t i = 0; i < np; i++)
                capacity_place(s, pods[i], home[i]);
            if (xr < 0) {
                rc = xr;
                break;
            }
            int r = hr_retype(s, f, g, hn, nodes, nnodes, pods);
            if (r < 0) {
                rc = r;
                break;
            }
            if (r) { /* a node opened: the tried marks grow with it */
                uint8_t *nf = realloc(fixed, (size_t)(s->nn - s->nexisting) + 1);
                if (!nf) {
                    rc = BERTH_ENOMEM;
                    break;
                }
                fixed = nf;
                fixed[s->nn - 1 - s->nexisting] = 0;
            }
            continue;
        }
        drop_node(s, f, hn);
        /* nodes the repack emptied: dropped when the headroom stays met,
         * else headroom nodes */
        for (uint32_t q = 0; q < nnodes; q++) {
            capacity_node *x = &s->n[nodes[q]];
            if (x->npods)
                continue;
            x->removed = 1;
            int met = hr_gaps_met(s, g);
            x->removed = 0;
            if (met) {
                drop_node(s, f, nodes[q]);
            } else {
                int64_t fr[3] = {x->alloc[0] - x->req[0], x->alloc[1] - x->req[1],
                                 x->alloc[2] - x->req[2]};
                x->headroom_units = hr_units(v, fr);
            }
        }
    }
    free(fixed);
    free(pods);
    free(home);
    return rc;
}

/* ---- consolidation: the packing with the instance sizes in view ----
 *
 * First-fit decreasing with a per-node option key is myopic: a small type
 * that a lookahead fills well wins each node, and the round's last nodes
 * are left half empty. After a group is packed in a round, sets of its new
 * nodes (not reserved, not for headroom) of one capacity type are replaced
 * by nodes of one option of that capacity type (1 or more: up to 32, as
 * many more than the set as maxNodes leaves room for) when that costs less: the set's pods first-fit in
 * FFD order onto empty nodes of the option, each pod's template checked.
 * Cost of a node: its price, spot its market score with the zone counts
 * as the nodes open one after the other (the set's own, or the
 * replacement's, from the counts without the set); a move must lower both
 * that cost and the price (so moves never cycle through zone counts); ties: fewer nodes, then the type
 * and zone names. Sets tried per
 * capacity type: prefixes of 1..8, 12, 16, 24, 32 nodes and all of them
 * (at most 32) of two orders, least filled first and most expensive per unit of packed work
 * first. The best saving is applied and the search repeats.
 * Work bound: CONS_MOVES moves per group and round, each after an
 * O(group pods + round nodes log) rebuild; the fit tests of all moves'
 * first-fits stop at CONS_WORK + 64 x the group's pods (the search then
 * keeps the moves made); options whose bin lower bound (each resource's total
 * over the option's free room) already costs more than the set are not
 * packed. */
#define CONS_MOVES 64
#define CONS_SET 32

typedef struct cons {
    packer *k;
    uint32_t first_new;
    int64_t zmin;
    uint32_t *slot;               /* per pod of the group (by order slot): node position or NONE */
    uint32_t *pos;                /* per node - first_new: its position in nodes, or NONE */
    uint32_t npos;
    uint32_t *nodes, nnodes;      /* candidate nodes of one capacity type */
    double *cost, *fill, *eff;    /* per position */
    uint32_t *phead, *plist;      /* per position: its pods' order slots, ascending */
    uint8_t *inset;               /* per position: in the set being tried */
    uint32_t *ord;                /* an order of positions */
    uint32_t *set;                /* the set's nodes (positions) */
    uint32_t *spods;              /* the set's pods, FFD order */
    uint32_t *bin, *best_bin;     /* per set pod: its bin */
    int64_t *bfree;               /* per bin: free cpu, memory, gpu, pods */
    /* two-option moves: the set's best CONS_PAIR options and which pods each hosts */
    struct copt { option o; double cost, rank; int64_t fr[4]; } *top;
    uint32_t ntop;
    uint8_t *hostable;            /* [option * (group pods + 1) + set pod] */
    uint64_t work, budget;        /* fit tests made, and allowed (CONS_WORK) */
} cons;

/* fit tests per consolidation of a group and round: this base plus 64 per
 * pod of the group (the search stops there, keeping the moves made) */
#define CONS_WORK (1u << 20)

/* two-option moves: sets of at most CONS_PAIR_SET nodes, the CONS_PAIR
 * options that cover the set's demand at the least cost per covered share */
#define CONS_PAIR 8
#define CONS_PAIR_SET 4

/* An option's rank for a set of pods (lower is better): its cost per share
 * of the set's cpu and memory (sum) that one empty node of it (free room
 * fr) covers; INFINITY when it covers none. Consolidation's pairs and the
 * improvement's options are ranked by it. */
static double cover_rank(double cost, const int64_t fr[4], const int64_t sum[4])
{
    double share = 0;
    for (int r = 0; r < 2; r++)
        share += sum[r] > 0 ? fmin(1.0, (double)fr[r] / (double)sum[r]) : 0.5;
    return share > 0 ? cost / share : INFINITY;
}

/* A node's cost for consolidation: its price, spot its market score at
 * the zone counts of the pass without the set being replaced. */
static double cons_cost(const capacity_pass *s, const upfast *f, const berth_offering *of,
                        int64_t zmin)
{
    if (of->capacity_type != BERTH_CT_SPOT)
        return of->price;
    return berth_market_score(of, zone_nodes(s, f, of->zone), zmin);
}

/* The group's zones (as min_zone_nodes enumerates them, at most 64) with
 * their node counts, and nodes added to them while a move is scored. */
typedef struct zlist {
    const char *z[64];
    int64_t cnt[64], add[64];
    uint32_t n;
} zlist;

static void cons_zones(const capacity_pass *s, const upfast *f, uint32_t g, zlist *zl)
{
    zl->n = 0;
    for (uint32_t t = 0; t < s->m->ntypes; t++) {
        const berth_instance_type *it = &s->m->types[t];
        if (f ? !f->vtype[(size_t)g * s->m->ntypes + t] : !capacity_vng_allows_type(&s->m->vngs[g], it))
            continue;
        for (uint32_t o = 0; o < it->nofferings; o++) {
            const char *zn = it->offerings[o].zone;
            if (!capacity_vng_allows_zone(&s->m->vngs[g], zn))
                continue;
            uint32_t q = 0;
            while (q < zl->n && strcmp(zl->z[q], zn))
                q++;
            if (q < zl->n || zl->n == 64)
                continue;
            zl->z[zl->n] = zn;
            zl->cnt[zl->n] = zone_nodes(s, f, zn);
            zl->add[zl->n++] = 0;
        }
    }
}

/* The cost of n nodes of offering `of` opened one after the other onto
 * the zone counts zl (added to as they open): spot's market score with
 * its zone's count and the emptiest zone's, as the purchase order scores
 * each node it opens; others their price. */
static double cons_cost_n(const capacity_pass *s, const upfast *f, const berth_offering *of,
                          zlist *zl, uint32_t n)
{
    if (of->capacity_type != BERTH_CT_SPOT)
        return (double)n * of->price;
    uint32_t zi = 0;
    while (zi < zl->n && strcmp(zl->z[zi], of->zone))
        zi++;
    double sum = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (zi == zl->n) { /* a zone the group's list lacks: as the plain score */
            sum += berth_market_score(of, zone_nodes(s, f, of->zone), 0);
            continue;
        }
        int64_t zmin = INT64_MAX;
        for (uint32_t q = 0; q < zl->n; q++)
            zmin = zl->cnt[q] + zl->add[q] < zmin ? zl->cnt[q] + zl->add[q] : zmin;
        sum += berth_market_score(of, zl->cnt[zi] + zl->add[zi], zmin);
        zl->add[zi]++;
    }
    return sum;
}

static void cons_zreset(zlist *zl)
{
    memset(zl->add, 0, zl->n * sizeof *zl->add);
}

/* Takes node n out of (away 1) or back into (away 0) the zone counts. */
static void cons_away(capacity_pass *s, upfast *f, uint32_t n, int away)
{
    s->n[n].removed = away;
    int z = f ? fast_zone(f, s->n[n].zone) : -1;
    if (z >= 0)
        f->zone_count[z] += away ? -1 : 1;
}

static int cmp_u32_asc(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* The cost and the price of the nodes set[0..n) (n <= 64), scored in
 * opening order (node index) with the set's earlier nodes added to the
 * zone counts zl (reset first), as the purchase order scored them. */
static void cons_set_cost(const capacity_pass *s, const upfast *f, const uint32_t *set,
                          uint32_t n, zlist *zl, double *cost, double *price)
{
    uint32_t ord[64];
    memcpy(ord, set, n * sizeof *ord);
    qsort(ord, n, sizeof *ord, cmp_u32_asc);
    cons_zreset(zl);
    for (uint32_t q = 0; q < n; q++) {
        const capacity_node *x = &s->n[ord[q]];
        const berth_offering *xo = berth_instance_offering(&s->m->types[x->type], x->zone,
                                                           (berth_capacity_type)x->ct);
        *cost += cons_cost_n(s, f, xo, zl, 1);
        *price += xo->price;
    }
}

static const uint32_t cons_sizes[] = {1, 2, 3, 4, 5, 6, 7, 8, 12, 16, 24, 32};

/* comparator context: the values to order positions by, ascending (desc: descending) */
typedef struct {
    const double *v;
    int desc;
} cons_order;

static int cmp_cons(const void *a, const void *b, void *ctx)
{
    const cons_order *o = ctx;
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    if (o->v[x] != o->v[y])
        return (o->v[x] < o->v[y]) != o->desc ? -1 : 1;
    return x < y ? -1 : x > y;
}

/* First-fit of the set's pods (FFD order) onto at most maxb empty nodes
 * with free room fr; bin[] gets each pod's bin. Returns the bins used, or
 * 0 when a pod fits no empty node or more than maxb are needed. */
static uint32_t cons_ffd(cons *c, uint32_t np, const int64_t fr[4], uint32_t maxb)
{
    const capacity_pass *s = c->k->s;
    uint32_t nb = 0;
    for (uint32_t i = 0; i < np; i++) {
        uint32_t pod = c->spods[i], b = 0;
        while (b < nb && !fits_free(s, c->bfree + (size_t)b * 4, pod))
            b++;
        c->work += b + 1;
        if (b == nb) {
            if (nb == maxb)
                return 0;
            memcpy(c->bfree + (size_t)nb * 4, fr, 4 * sizeof *fr);
            if (!fits_free(s, c->bfree + (size_t)nb * 4, pod))
                return 0;
            nb++;
        }
        take(s, c->bfree + (size_t)b * 4, pod);
        c->bin[i] = b;
    }
    return nb;
}

/* Two options a (first) and b: the pods only a hosts go first-fit onto a's
 * nodes, then k1 - (those nodes) more empty a nodes are added, the pods
 * both host first-fit onto a's nodes (no new one), and the rest first-fit
 * onto b's nodes. Returns the bins (a's are 0..*k1), 0 when it fails or
 * needs more than maxb nodes. */
static uint32_t cons_pair_ffd(cons *c, uint32_t np, uint32_t a, uint32_t b, uint32_t extra,
                              uint32_t maxb, uint32_t *k1)
{
    const capacity_pass *s = c->k->s;
    size_t stride = (size_t)c->k->n + 1;
    const uint8_t *ha = c->hostable + a * stride, *hb = c->hostable + b * stride;
    const int64_t *fa = c->top[a].fr, *fb = c->top[b].fr;
    uint32_t nb = 0;
    for (uint32_t i = 0; i < np; i++) {
        c->bin[i] = UINT32_MAX;
        if (!ha[i] && !hb[i])
            return 0;
    }
    for (int pass = 0; pass < 3; pass++) {
        if (pass == 1) { /* a's nodes are fixed now: the must-a ones plus extra */
            for (uint32_t x = 0; x < extra || !nb; x++) {
                if (nb == maxb)
                    return 0;
                memcpy(c->bfree + (size_t)nb * 4, fa, 4 * sizeof *fa);
                nb++;
            }
            *k1 = nb;
        }
        for (uint32_t i = 0; i < np; i++) {
            uint32_t pod = c->spods[i];
            if (c->bin[i] != UINT32_MAX)
                continue;
            if (pass == 0 && !(ha[i] && !hb[i]))
                continue;
            if (pass == 1 && !(ha[i] && hb[i]))
                continue;
            uint32_t lo = pass == 2 ? *k1 : 0, hi = pass == 1 ? *k1 : nb, x = lo;
            while (x < hi && !fits_free(s, c->bfree + (size_t)x * 4, pod))
                x++;
            c->work += x - lo + 1;
            if (x == hi) {
                if (pass == 1)
                    continue; /* to b's nodes */
                if (nb == maxb)
                    return 0;
                memcpy(c->bfree + (size_t)nb * 4, pass == 0 ? fa : fb, 4 * sizeof *fa);
                nb++;
            }
            take(s, c->bfree + (size_t)x * 4, pod);
            c->bin[i] = x;
        }
    }
    return nb;
}

/* One move: the best replacement of a set of candidate nodes (capacity
 * type ct). 1 applied, 0 none, BERTH_ENOMEM. */
/* The best consolidation move found so far: k1 new nodes of option a,
 * nb - k1 of option b, replacing the nset nodes of the set kept at
 * c->set + CONS_SET (its np pods' bins in c->best_bin), saving save $/h;
 * a.ok: one was found. */
typedef struct cons_best {
    option a, b;
    double save;
    uint32_t k1, np, nb, nset;
} cons_best;

/* The current set c->set[0..nset) and bins c->bin[0..np) become the best. */
static void keep_best(cons *c, cons_best *best, option a, option b, uint32_t k1, double save,
                      uint32_t np, uint32_t nb, uint32_t nset)
{
    *best = (cons_best){a, b, save, k1, np, nb, nset};
    memcpy(c->set + CONS_SET, c->set, nset * sizeof *c->set);
    memcpy(c->best_bin, c->bin, np * sizeof *c->bin);
}

static int cons_move(cons *c, int ct)
{
    packer *k = c->k;
    capacity_pass *s = k->s;
    const berth_autoscale *m = s->m;
    const berth_vng *v = &m->vngs[k->g];
    upfast *f = k->f;
    /* candidates and their pods (FFD order) */
    c->nnodes = 0;
    for (uint32_t n = c->first_new; n < s->nn; n++) {
        const capacity_node *x = &s->n[n];
        c->pos[n - c->first_new] = BERTH_KUBE_NONE;
        if (x->removed || x->vng != (int)k->g || x->ct != ct || s->node_res[n] >= 0 ||
            x->headroom_units || !x->npods)
            continue;
        const berth_offering *of = berth_instance_offering(&m->types[x->type], x->zone,
                                                           (berth_capacity_type)x->ct);
        if (!of)
            continue;
        uint32_t p = c->nnodes++;
        c->pos[n - c->first_new] = p;
        c->nodes[p] = n;
        c->cost[p] = of->price; /* orders only; the set's cost is taken without it */
        c->fill[p] = fmax((double)x->req[0] / (double)(x->alloc[0] > 0 ? x->alloc[0] : 1),
                          (double)x->req[1] / (double)(x->alloc[1] > 0 ? x->alloc[1] : 1));
        c->eff[p] = 0;
        c->phead[p] = 0;
    }
    if (!c->nnodes)
        return 0;
    for (uint32_t i = 0; i < k->n; i++) {
        uint32_t n = s->pod_node[k->order[i]];
        uint32_t p = n != BERTH_KUBE_NONE && n >= c->first_new && n - c->first_new < c->npos
                         ? c->pos[n - c->first_new] : BERTH_KUBE_NONE;
        c->slot[i] = p;
        if (p != BERTH_KUBE_NONE) {
            c->phead[p]++;
            c->eff[p] += weight(k, k->order[i]);
        }
    }
    for (uint32_t p = 0, acc = 0; p <= c->nnodes; p++) { /* counts -> starts */
        uint32_t cnt = p < c->nnodes ? c->phead[p] : 0;
        c->phead[p] = acc;
        acc += cnt;
    }
    for (uint32_t p = 0; p < c->nnodes; p++)
        c->eff[p] = c->cost[p] / (c->eff[p] > 0 ? c->eff[p] : 1e-9);
    {
        uint32_t *fillp = c->ord; /* scratch: fill pointers */
        for (uint32_t p = 0; p < c->nnodes; p++)
            fillp[p] = c->phead[p];
        for (uint32_t i = 0; i < k->n; i++)
            if (c->slot[i] != BERTH_KUBE_NONE)
                c->plist[fillp[c->slot[i]]++] = i;
    }
    /* the best move over both orders and every prefix size */
    cons_best best = {0};
    const uint32_t *best_set = c->set + CONS_SET;
    for (int order = 0; order < 2; order++) {
        for (uint32_t p = 0; p < c->nnodes; p++)
            c->ord[p] = p;
        cons_order co = {order ? c->eff : c->fill, order};
        qsort_r(c->ord, c->nnodes, sizeof *c->ord, cmp_cons, &co);
        const uint32_t nsizes = sizeof cons_sizes / sizeof *cons_sizes;
        for (uint32_t si = 0; si <= nsizes; si++) {
            /* the sizes above, then every candidate when at most CONS_SET */
            if (c->work > c->budget)
                break; /* the work bound: keep the best move found so far */
            uint32_t j = si < nsizes ? cons_sizes[si] : c->nnodes;
            if (si < nsizes && j >= c->nnodes && c->nnodes <= CONS_SET)
                j = c->nnodes, si = nsizes;
            else if (j > c->nnodes || j > CONS_SET)
                break;
            /* the set: the first j positions; its pods in FFD order */
            double have = 0;
            uint32_t hz_last = 0;
            int64_t sum[4] = {0, 0, 0, 0};
            uint32_t np = 0;
            for (uint32_t i = 0; i < j; i++) {
                c->set[i] = c->ord[i];
                cons_away(s, f, c->nodes[c->ord[i]], 1);
            }
            int64_t zmin = ct == BERTH_CT_SPOT ? min_zone_nodes(s, f, k->g, 0) : 0;
            zlist zl;
            zl.n = 0;
            if (ct == BERTH_CT_SPOT)
                cons_zones(s, f, k->g, &zl);
            /* nodes the replacement may open: the set's, and maxNodes' room */
            int64_t room = v->max_nodes - s->vng_nodes[k->g];
            uint32_t maxb = room >= (int64_t)(CONS_SET - j) ? CONS_SET : j + (uint32_t)(room > 0 ? room : 0);
            double have_price = 0; /* a move must lower the price too: no cycles */
            cons_zreset(&zl);
            for (uint32_t i = 0; i < j; i++) {
                /* in opening order (node index), each scored with the set's
                 * nodes before it added */
                uint32_t lo = UINT32_MAX;
                for (uint32_t q = 0; q < j; q++)
                    if (c->nodes[c->ord[q]] < lo && (i == 0 || c->nodes[c->ord[q]] > hz_last))
                        lo = c->nodes[c->ord[q]];
                hz_last = lo;
                const capacity_node *x = &s->n[lo];
                const berth_offering *xo = berth_instance_offering(&m->types[x->type], x->zone,
                                                                   (berth_capacity_type)x->ct);
                have += cons_cost_n(s, f, xo, &zl, 1);
                have_price += xo->price;
            }
            for (uint32_t x = 0; x < j; x++)
                for (uint32_t q = c->phead[c->set[x]]; q < c->phead[c->set[x] + 1]; q++)
                    c->bin[np++] = c->plist[q];
            qsort(c->bin, np, sizeof *c->bin, cmp_u32_asc); /* FFD order: slot order */
            for (uint32_t i = 0; i < np; i++) {
                uint32_t pod = k->order[c->bin[i]];
                const berth_kpod *kp = &m->kube.pods[pod];
                sum[0] += kp->req[BERTH_KRES_CPU];
                sum[1] += kp->req[BERTH_KRES_MEMORY];
                sum[2] += s->gpu != BERTH_KUBE_NONE ? kp->req[s->gpu] : 0;
                sum[3]++;
                c->spods[i] = pod;
            }
            c->ntop = 0;
            for (offer_walk w = offers_of(f, m, k->g); offers_next(&w);) {
                uint32_t t = w.t, o = w.o;
                const berth_instance_type *it = w.it;
                const berth_offering *of = w.of;
                if ((int)of->capacity_type != ct)
                    continue;
                int z = f ? (int)f->off_zone[f->off_base[t] + o] : -1;
                double cost = cons_cost(s, f, of, zmin);
                int64_t fr[4];
                capacity_template_free(s, k->g, t, of->zone, ct, fr);
                if (j <= CONS_PAIR_SET) {
                    /* rank for two-option moves: cost per share of the set's
                     * cpu and memory an empty node covers */
                    double rank = cover_rank(cost, fr, sum);
                    uint32_t at = c->ntop;
                    while (at > 0 && c->top[at - 1].rank > rank)
                        at--;
                    if (at < CONS_PAIR && rank < INFINITY) {
                        uint32_t last = c->ntop < CONS_PAIR ? c->ntop : CONS_PAIR - 1;
                        memmove(c->top + at + 1, c->top + at, (last - at) * sizeof *c->top);
                        c->top[at] = (struct copt){{1, t, of->zone, ct, -1, of->price, 0, 0},
                                                   cost, rank, {fr[0], fr[1], fr[2], fr[3]}};
                        c->ntop = c->ntop < CONS_PAIR ? c->ntop + 1 : CONS_PAIR;
                    }
                }
                uint64_t lb = 1;
                for (int r = 0; r < 4; r++) {
                    if (!sum[r])
                        continue;
                    if (fr[r] <= 0) {
                        lb = UINT64_MAX;
                        break;
                    }
                    uint64_t x = (uint64_t)((sum[r] + fr[r] - 1) / fr[r]);
                    lb = x > lb ? x : lb;
                }
                if (lb > maxb || have - (double)lb * cost < best.save - 1e-12 ||
                    have - (double)lb * cost <= 1e-9)
                    continue;
                /* more nodes than this cost the set's price or more: stop there */
                double afford = (have - best.save + 1e-9) / cost;
                uint32_t lim = afford < (double)maxb ? (uint32_t)afford : maxb;
                if ((uint64_t)lim < lb)
                    continue;
                int ok = 1;
                for (uint32_t i = 0; i < np && ok; i++)
                    ok = hosts_matched(s, f, k->g, t, of->zone, z, ct, c->spods[i]);
                if (!ok)
                    continue;
                uint32_t nb = cons_ffd(c, np, fr, lim);
                if (!nb)
                    continue;
                cons_zreset(&zl);
                double save = have - cons_cost_n(s, f, of, &zl, nb);
                if (save <= 1e-9 || have_price - (double)nb * of->price <= 1e-9)
                    continue;
                option cand = {1, t, of->zone, ct, -1, of->price, 0, 0};
                int win = !best.a.ok || save > best.save + 1e-9;
                if (!win && save >= best.save - 1e-9) { /* equal savings */
                    if (nb != best.nb)
                        win = nb < best.nb;
                    else {
                        int cmp = strcmp(it->name, m->types[best.a.type].name);
                        win = cmp < 0 || (!cmp && strcmp(of->zone, best.a.zone) < 0);
                    }
                }
                if (!win)
                    continue;
                keep_best(c, &best, cand, cand, nb, save, np, nb, j);
            }
            /* two options: a (first) for the pods it alone hosts and as many
             * others as fit, b for the rest */
            size_t stride = (size_t)k->n + 1;
            uint8_t hv[CONS_PAIR] = {0}; /* hostable filled (lazily) */
            for (uint32_t a = 0; j <= CONS_PAIR_SET && a < c->ntop; a++)
                for (uint32_t b2 = 0; b2 < c->ntop; b2++) {
                    if (a == b2 || have - c->top[a].cost - c->top[b2].cost <= best.save + 1e-9)
                        continue;
                    /* the pair's fractional cover of the set's cpu and memory */
                    double pc[2] = {c->top[a].cost, c->top[b2].cost};
                    double p0[2] = {(double)c->top[a].fr[0], (double)c->top[b2].fr[0]};
                    double p1[2] = {(double)c->top[a].fr[1], (double)c->top[b2].fr[1]};
                    double pi[2];
                    if (have - capacity_lp_cover2(pc, p0, p1, 2, (double)sum[0], (double)sum[1], pi) <=
                        best.save + 1e-9)
                        continue;
                    for (uint32_t h = 0; h < 2; h++) {
                        uint32_t x = h ? b2 : a;
                        if (hv[x])
                            continue;
                        hv[x] = 1;
                        const option *ox = &c->top[x].o;
                        for (uint32_t i = 0; i < np; i++) {
                            int64_t one[4];
                            memcpy(one, c->top[x].fr, sizeof one);
                            c->hostable[x * stride + i] =
                                (uint8_t)(fits_free(s, one, c->spods[i]) &&
                                          hosts_matched(s, f, k->g, ox->type, ox->zone,
                                                        f ? fast_zone(f, ox->zone) : -1, ct,
                                                        c->spods[i]));
                        }
                    }
                    for (uint32_t extra = 0; extra < 2; extra++) {
                        uint32_t k1 = 0, nb = cons_pair_ffd(c, np, a, b2, extra, maxb, &k1);
                        if (!nb || nb == k1)
                            continue; /* b unused: a single-option move */
                        const option *oa = &c->top[a].o, *ob = &c->top[b2].o;
                        const berth_offering *ofa = berth_instance_offering(
                            &m->types[oa->type], oa->zone, (berth_capacity_type)ct);
                        const berth_offering *ofb = berth_instance_offering(
                            &m->types[ob->type], ob->zone, (berth_capacity_type)ct);
                        cons_zreset(&zl);
                        double save = have - cons_cost_n(s, f, ofa, &zl, k1);
                        save -= cons_cost_n(s, f, ofb, &zl, nb - k1);
                        if (save <= best.save + 1e-9 ||
                            have_price - (double)k1 * c->top[a].o.price -
                                    (double)(nb - k1) * c->top[b2].o.price <= 1e-9)
                            continue;
                        keep_best(c, &best, c->top[a].o, c->top[b2].o, k1, save, np, nb, j);
                    }
                }
            for (uint32_t i = 0; i < j; i++)
                cons_away(s, f, c->nodes[c->set[i]], 0);
        }
    }
    if (!best.a.ok)
        return 0;
    /* apply: the set's pods (FFD order, as packed) leave, its nodes go,
     * the option's nodes open and take them */
    uint32_t np = 0;
    for (uint32_t x = 0; x < best.nset; x++)
        c->inset[best_set[x]] = 1;
    for (uint32_t i = 0; i < k->n; i++)
        if (c->slot[i] != BERTH_KUBE_NONE && c->inset[c->slot[i]])
            c->spods[np++] = k->order[i];
    for (uint32_t x = 0; x < best.nset; x++)
        c->inset[best_set[x]] = 0;
    if (np != best.np)
        return BERTH_EINTERNAL;
    for (uint32_t i = 0; i < np; i++)
        capacity_unplace(s, c->spods[i]);
    for (uint32_t x = 0; x < best.nset; x++)
        drop_node(s, f, c->nodes[best_set[x]]);
    uint32_t opened[CONS_SET];
    for (uint32_t b = 0; b < best.nb; b++) {
        opened[b] = open_node(k, b < best.k1 ? &best.a : &best.b);
        if (opened[b] == BERTH_KUBE_NONE)
            return BERTH_ENOMEM;
    }
    for (uint32_t i = 0; i < np; i++)
        capacity_place(s, c->spods[i], opened[c->best_bin[i]]);
    return 1;
}

static int improve(packer *k, uint32_t first_new);

/* Consolidates group k->g's new nodes of this round (from first_new), then
 * improves them (improve, below). */
static int consolidate(packer *k, uint32_t first_new)
{
    capacity_pass *s = k->s;
    uint32_t round_nodes = s->nn - first_new;
    if (round_nodes < 1 || k->hr)
        return 0;
    cons c;
    memset(&c, 0, sizeof c);
    c.k = k;
    c.first_new = first_new;
    c.budget = CONS_WORK + 64 * (uint64_t)k->n;
    c.npos = round_nodes + 2 * CONS_MOVES * CONS_SET + 1;
    c.slot = malloc(((size_t)k->n + 1) * sizeof *c.slot);
    c.pos = malloc((size_t)c.npos * sizeof *c.pos);
    c.nodes = malloc((size_t)c.npos * sizeof *c.nodes);
    c.cost = malloc((size_t)c.npos * sizeof *c.cost);
    c.fill = malloc((size_t)c.npos * sizeof *c.fill);
    c.eff = malloc((size_t)c.npos * sizeof *c.eff);
    c.phead = malloc(((size_t)c.npos + 1) * sizeof *c.phead);
    c.ord = malloc(((size_t)c.npos + 1) * sizeof *c.ord);
    c.plist = malloc(((size_t)k->n + 1) * sizeof *c.plist);
    c.set = malloc(2 * CONS_SET * sizeof *c.set);
    c.spods = malloc(((size_t)k->n + 1) * sizeof *c.spods);
    c.bin = malloc(((size_t)k->n + 1) * sizeof *c.bin);
    c.best_bin = malloc(((size_t)k->n + 1) * sizeof *c.best_bin);
    c.bfree = malloc(CONS_SET * 4 * sizeof *c.bfree);
    c.inset = calloc((size_t)c.npos + 1, 1);
    c.top = malloc(CONS_PAIR * sizeof *c.top);
    c.hostable = malloc(CONS_PAIR * ((size_t)k->n + 1));
    int rc = c.slot && c.pos && c.nodes && c.cost && c.fill && c.eff && c.phead && c.ord &&
                     c.plist && c.set && c.spods && c.bin && c.best_bin && c.bfree && c.inset && c.top && c.hostable
                 ? 0 : BERTH_ENOMEM;
    /* opened nodes must not join the packer's live list (pack_group is done) */
    uint32_t *live = k->live;
    k->live = NULL;
    for (int ct = BERTH_CT_SPOT; !rc && ct <= BERTH_CT_ON_DEMAND; ct++) {
        if (ct == BERTH_CT_RESERVED)
            continue;
        for (uint32_t moves = 0; moves < CONS_MOVES; moves++) {
            int r = cons_move(&c, ct);
            if (r <= 0) {
                rc = r;
                break;
            }
        }
    }
    if (!rc)
        rc = improve(k, first_new);
    k->live = live;
    free(c.slot);
    free(c.pos);
    free(c.nodes);
    free(c.cost);
    free(c.fill);
    free(c.eff);
    free(c.phead);
    free(c.ord);
    free(c.plist);
    free(c.set);
    free(c.spods);
    free(c.bin);
    free(c.best_bin);
    free(c.bfree);
    free(c.inset);
    free(c.top);
    free(c.hostable);
    return rc;
}

/* ---- improvement: small sets of nodes onto options of any types ----
 *
 * Consolidation's moves replace a set by nodes of one or two options, and
 * their first-fits keep FFD's split of the pods, so a set whose cheapest
 * replacement needs three types, or another split of its pods, stays (on
 * tiny instances: 18.5 % above the optimum). After the moves, sets of
 * 1..IMP_SET of the round's new nodes of the group (one capacity type, not
 * reserved, not for headroom: as consolidation) among the IMP_CAND least
 * filled, and all IMP_CAND of them when they hold at most IMP_EXACT pods,
 * are replaced when that costs less by:
 * - a set of at most IMP_EXACT pods: the cheapest partition of its pods
 *   into nodes, each part on the cheapest option that hosts it (exact: a
 *   dynamic programme over the subsets of the set's pods, 2^pods x options
 *   + 3^pods steps, any number of parts up to what maxNodes leaves);
 * - a larger set: the cheapest multiset of 1..IMP_NODES options (one node:
 *   at most two) among the IMP_OPTS that cover its demand at the least
 *   cost per covered share, in cost order (cut where a multiset costs the
 *   set's price less the best saving), each after an O(1) capacity bound
 *   packed up to four ways: first-fit in FFD order onto the nodes smallest
 *   first, largest first, each pod to the node whose free room best
 *   matches its requests, and for two nodes an exact split (imp_two).
 * A set may take one of the round's reserved nodes of the group along: it
 * stays (a reservation is not traded for price), its pods are repacked
 * with the set's (bin IMP_TOP). A set is skipped when the options'
 * fractional cover of its cpu and memory (capacity_lp_cover2) leaves no
 * saving above the best move's. Options: the group's allowed types and
 * zones with an available offering of the set's capacity type, each pod's
 * template checked (as consolidation). Costs, and the rule that a move
 * lowers both the tier's cost (spot: market score with the zone counts as
 * nodes open) and the price, are consolidation's; with spotPercentage
 * below 100 a spot set is never replaced by more spot nodes. So
 * reservations, spot before on-demand, VNG rules and headroom (topped up
 * after) are kept.
 * A reserved node not open yet (imp_vres: a count reservation with nodes
 * left, price 0) is one of the IMP_RES nodes a set may take along, and an
 * option of the multisets (at most its nodes left; not in the exact
 * partition), so free capacity the packing left unused is weighed too.
 * Work bound: at most IMP_MOVES moves per capacity type, group and round
 * (each also O(types x offerings x reservations) for imp_vres);
 * per move at most sum_{j<=5} C(IMP_CAND, j) = 637 sets (x 3 with reserved
 * nodes), each O(pods) to merge, O(options) to rank and bound, then the DP
 * (<= 2^10 x 24 + 3^10 steps) or at most 2,924 multisets with packings of
 * O(pods x 3) each (two nodes: + IMP_DFS search steps) and O(options x
 * pods) template checks; all
 * of it, over every group and round of one scale-up, stops after IMP_WORK
 * + IMP_WORK_POD x pending pods steps (fit tests, DP steps, multisets,
 * template checks; the moves made are kept). */
#define IMP_NODES 3
#define IMP_SET 5
#define IMP_CAND 10
_Static_assert(IMP_CAND <= 64, "cons_set_cost takes sets of at most 64 nodes");
#define IMP_EXACT 10
#define IMP_OPTS 24
#define IMP_TOP 24
#define IMP_MOVES 16
#define IMP_WORK (1u << 19)
#define IMP_WORK_POD 16
#define IMP_RES 2
#define IMP_VRES (UINT32_MAX - 1) /* cand: a reserved node not open yet */

typedef struct impopt {
    option o;
    const berth_offering *of;
    double cost, rank, cap;       /* cap: cpu/C + memory/M of its free room (bin order) */
    int64_t fr[4];
    uint32_t mask;                /* exact: the set's pods it hosts (bits) */
} impopt;

typedef struct imp {
    packer *k;
    uint32_t first_new;
    uint32_t *cand, ncand;        /* candidate nodes, least filled first */
    double *fill;
    uint32_t *spods, np;          /* the set's pods (FFD order) */
    uint32_t *plist;              /* the candidates' pods (order slots) */
    uint32_t phead[IMP_CAND + IMP_RES + 1], fillp[IMP_CAND + IMP_RES]; /* per candidate: its
                                   * pods in plist */
    uint32_t nres;                /* reserved nodes after the candidates in cand (the
                                   * last may be IMP_VRES: a reserved node not open yet) */
    option vres;                  /* IMP_VRES's option (a count reservation's, price 0) */
    int64_t vfr[4];               /* its free room */
    uint32_t vleft;               /* nodes its reservation has left (0: none) */
    uint8_t *host;                /* [option * (group pods + 1) + set pod] */
    uint8_t hdone[IMP_TOP + 1];   /* host row filled (this set) */
    uint32_t *bin, *best_bin;     /* per set pod: its bin */
    impopt top[IMP_TOP + 1];      /* [IMP_TOP]: the set's reserved node, kept */
    uint32_t ntop;
    int64_t (*rc)[4];             /* exact: per subset, its requests */
    double *c1, *best;            /* exact: per subset, cheapest single node / partition */
    uint8_t *arg, *parts;         /* exact: c1's option; best's parts */
    uint16_t *choice;             /* exact: best's first part */
    uint64_t work, budget;
} imp;

/* Fills the host rows of options use[0..nb) not filled yet for this set:
 * which of the set's pods an empty node of the option hosts. */
static void imp_rows(imp *c, const uint32_t *use, uint32_t nb)
{
    packer *k = c->k;
    capacity_pass *s = k->s;
    size_t stride = (size_t)k->n + 1;
    for (uint32_t q = 0; q < nb; q++) {
        uint32_t o = use[q];
        if (c->hdone[o])
            continue;
        c->hdone[o] = 1;
        const impopt *x = &c->top[o];
        int z = k->f ? fast_zone(k->f, x->o.zone) : -1;
        for (uint32_t i = 0; i < c->np; i++) {
            int64_t one[4];
            memcpy(one, x->fr, sizeof one);
            c->host[o * stride + i] =
                (uint8_t)(fits_free(s, one, c->spods[i]) &&
                          hosts_matched(s, k->f, k->g, x->o.type, x->o.zone, z, x->o.ct,
                                        c->spods[i]));
        }
        c->work += c->np;
    }
}

/* comparator context for ordering candidates by fill, then node index */
static int cmp_fill(const void *a, const void *b, void *ctx)
{
    const double *fill = ctx;
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    if (fill[x] != fill[y])
        return fill[x] < fill[y] ? -1 : 1;
    return x < y ? -1 : x > y;
}

/* Pods of bins bin[0..np) first-fit onto the option bins of `use` (nb
 * options, in that order): 1 when all fit. */
static int imp_ffd(imp *c, const uint32_t *use, uint32_t nb, int64_t bf[][4])
{
    const capacity_pass *s = c->k->s;
    size_t stride = (size_t)c->k->n + 1;
    imp_rows(c, use, nb);
    for (uint32_t b = 0; b < nb; b++)
        memcpy(bf[b], c->top[use[b]].fr, sizeof bf[b]);
    for (uint32_t i = 0; i < c->np; i++) {
        uint32_t b = 0;
        while (b < nb && !(c->host[use[b] * stride + i] && fits_free(s, bf[b], c->spods[i])))
            b++;
        c->work += b + 1;
        if (b == nb)
            return 0;
        take(s, bf[b], c->spods[i]);
        c->bin[i] = b;
    }
    return 1;
}

/* Pods of the set onto the option bins of `use` (nb options), each to the
 * bin whose free room best matches its requests (largest sum over cpu and
 * memory of request share times free share of the bin's room): balances
 * cpu-heavy and memory-heavy pods where first-fit fills one resource.
 * 1 when all fit. */
static int imp_dot(imp *c, const uint32_t *use, uint32_t nb, int64_t bf[][4])
{
    const capacity_pass *s = c->k->s;
    size_t stride = (size_t)c->k->n + 1;
    imp_rows(c, use, nb);
    for (uint32_t b = 0; b < nb; b++)
        memcpy(bf[b], c->top[use[b]].fr, sizeof bf[b]);
    for (uint32_t i = 0; i < c->np; i++) {
        const berth_kpod *p = &s->m->kube.pods[c->spods[i]];
        uint32_t best = nb;
        double bv = -1;
        for (uint32_t b = 0; b < nb; b++) {
            if (!c->host[use[b] * stride + i] || !fits_free(s, bf[b], c->spods[i]))
                continue;
            const int64_t *fr = c->top[use[b]].fr;
            double v = 0;
            for (int r = 0; r < 2; r++)
                if (fr[r] > 0)
                    v += (double)p->req[r ? BERTH_KRES_MEMORY : BERTH_KRES_CPU] / (double)fr[r] *
                         ((double)bf[b][r] / (double)fr[r]);
            if (v > bv + 1e-12) {
                bv = v;
                best = b;
            }
        }
        c->work += nb;
        if (best == nb)
            return 0;
        take(s, bf[best], c->spods[i]);
        c->bin[i] = best;
    }
    return 1;
}

/* Two nodes (use[0], use[1]) exactly: the set's pods in classes (runs of
 * equal requests and equal host answers, at most IMP_CLS), a depth-first
 * search over how many of each class the first node takes, the most
 * first, cut where the classes left exceed both nodes' room; at most
 * IMP_DFS steps. Finds the tight splits of cpu-heavy and memory-heavy
 * pods that the greedy packings miss. 1 when all fit (c->bin set). */
#define IMP_CLS 16
#define IMP_DFS 4096

typedef struct impdfs {
    uint32_t ncls, start[IMP_CLS + 1], cnt[IMP_CLS], take[IMP_CLS];
    int64_t req[IMP_CLS][4], rem[IMP_CLS + 1][4];
    uint8_t ha[IMP_CLS], hb[IMP_CLS];
    uint32_t steps;
} impdfs;

static int imp_dfs(impdfs *d, uint32_t cl, int64_t fa[4], int64_t fb[4])
{
    if (cl == d->ncls)
        return 1;
    if (++d->steps > IMP_DFS)
        return 0;
    for (int r = 0; r < 4; r++)
        if (d->rem[cl][r] > fa[r] + fb[r])
            return 0;
    int64_t hi = d->ha[cl] ? d->cnt[cl] : 0, lo = d->hb[cl] ? 0 : d->cnt[cl];
    for (int r = 0; r < 4; r++)
        if (d->req[cl][r] > 0) {
            int64_t ina = fa[r] / d->req[cl][r], inb = fb[r] / d->req[cl][r];
            hi = ina < hi ? ina : hi;
            lo = (int64_t)d->cnt[cl] - inb > lo ? (int64_t)d->cnt[cl] - inb : lo;
        }
    for (int64_t n = hi; n >= lo; n--) {
        int64_t na[4], nb[4];
        for (int r = 0; r < 4; r++) {
            na[r] = fa[r] - n * d->req[cl][r];
            nb[r] = fb[r] - ((int64_t)d->cnt[cl] - n) * d->req[cl][r];
        }
        d->take[cl] = (uint32_t)n;
        if (imp_dfs(d, cl + 1, na, nb))
            return 1;
        if (d->steps > IMP_DFS)
            return 0;
    }
    return 0;
}

static int imp_two(imp *c, const uint32_t *use)
{
    const capacity_pass *s = c->k->s;
    size_t stride = (size_t)c->k->n + 1;
    imp_rows(c, use, 2);
    const uint8_t *ha = c->host + use[0] * stride, *hb = c->host + use[1] * stride;
    impdfs d;
    d.ncls = 0;
    d.steps = 0;
    for (uint32_t i = 0; i < c->np; i++) {
        const berth_kpod *p = &s->m->kube.pods[c->spods[i]];
        int64_t rq[4] = {p->req[BERTH_KRES_CPU], p->req[BERTH_KRES_MEMORY],
                         s->gpu != BERTH_KUBE_NONE ? p->req[s->gpu] : 0, 1};
        if (!ha[i] && !hb[i])
            return 0;
        uint32_t k = d.ncls;
        if (k && !memcmp(d.req[k - 1], rq, sizeof rq) && d.ha[k - 1] == ha[i] &&
            d.hb[k - 1] == hb[i]) {
            d.cnt[k - 1]++;
            continue;
        }
        if (k == IMP_CLS)
            return 0;
        memcpy(d.req[k], rq, sizeof rq);
        d.ha[k] = ha[i];
        d.hb[k] = hb[i];
        d.cnt[k] = 1;
        d.start[k] = i;
        d.ncls++;
    }
    memset(d.rem[d.ncls], 0, sizeof d.rem[d.ncls]);
    for (uint32_t k = d.ncls; k-- > 0;)
        for (int r = 0; r < 4; r++)
            d.rem[k][r] = d.rem[k + 1][r] + (int64_t)d.cnt[k] * d.req[k][r];
    int64_t fa[4], fb[4];
    memcpy(fa, c->top[use[0]].fr, sizeof fa);
    memcpy(fb, c->top[use[1]].fr, sizeof fb);
    int ok = imp_dfs(&d, 0, fa, fb);
    c->work += d.steps + c->np;
    if (!ok)
        return 0;
    for (uint32_t k = 0; k < d.ncls; k++)
        for (uint32_t x = 0; x < d.cnt[k]; x++)
            c->bin[d.start[k] + x] = x < d.take[k] ? 0 : 1;
    return 1;
}

/* Exact: the cheapest partition of the set's pods (np <= IMP_EXACT) into
 * nodes of the options; bins in c->bin, their options in use[]. Returns
 * the parts, 0 when none (or more than maxb). */
static uint32_t imp_exact(imp *c, uint32_t maxb, uint32_t *use)
{
    const capacity_pass *s = c->k->s;
    const berth_autoscale *m = s->m;
    uint32_t full = (1u << c->np) - 1;
    size_t stride = (size_t)c->k->n + 1;
    for (uint32_t o = 0; o < c->ntop; o++) {
        imp_rows(c, &o, 1);
        c->top[o].mask = 0;
        for (uint32_t i = 0; i < c->np; i++)
            if (c->host[o * stride + i])
                c->top[o].mask |= 1u << i;
    }
    memset(c->rc[0], 0, sizeof c->rc[0]);
    c->c1[0] = 0;
    for (uint32_t mask = 1; mask <= full; mask++) {
        uint32_t low = (uint32_t)__builtin_ctz(mask);
        const berth_kpod *p = &m->kube.pods[c->spods[low]];
        const int64_t *pr = c->rc[mask & (mask - 1)];
        c->rc[mask][0] = pr[0] + p->req[BERTH_KRES_CPU];
        c->rc[mask][1] = pr[1] + p->req[BERTH_KRES_MEMORY];
        c->rc[mask][2] = pr[2] + (s->gpu != BERTH_KUBE_NONE ? p->req[s->gpu] : 0);
        c->rc[mask][3] = pr[3] + 1;
        c->c1[mask] = INFINITY;
        c->arg[mask] = 0;
        for (uint32_t o = 0; o < c->ntop; o++) {
            const impopt *x = &c->top[o];
            if ((x->mask & mask) != mask || x->cost >= c->c1[mask] || !x->of)
                continue; /* (not the reserved option: its count is bounded) */
            int ok = 1;
            for (int r = 0; r < 4 && ok; r++)
                ok = c->rc[mask][r] <= x->fr[r];
            if (ok) {
                c->c1[mask] = x->cost;
                c->arg[mask] = (uint8_t)o;
            }
        }
        c->work += c->ntop;
    }
    c->best[0] = 0;
    c->parts[0] = 0;
    for (uint32_t mask = 1; mask <= full; mask++) {
        uint32_t low = mask & (~mask + 1), rest = mask ^ low;
        double bv = INFINITY;
        uint32_t bp = 0, bc = 0;
        for (uint32_t sub = rest;; sub = (sub - 1) & rest) {
            uint32_t a = low | sub;
            double v = c->c1[a] + c->best[mask ^ a];
            uint32_t pv = 1u + c->parts[mask ^ a];
            if (v < bv - 1e-12 || (v <= bv + 1e-12 && v < INFINITY && pv < bp)) {
                bv = v;
                bp = pv;
                bc = a;
            }
            c->work++;
            if (!sub)
                break;
        }
        c->best[mask] = bv;
        c->parts[mask] = (uint8_t)(bp > 255 ? 255 : bp);
        c->choice[mask] = (uint16_t)bc;
    }
    if (c->best[full] == INFINITY || c->parts[full] > maxb)
        return 0;
    uint32_t nb = 0;
    for (uint32_t mask = full; mask; mask ^= c->choice[mask]) {
        uint32_t a = c->choice[mask];
        use[nb] = c->arg[a];
        for (uint32_t i = 0; i < c->np; i++)
            if (a >> i & 1)
                c->bin[i] = nb;
        nb++;
    }
    return nb;
}

/* the best replacement found in a move */
typedef struct impbest {
    double save;
    uint32_t set[IMP_CAND], nset, nb, np;
    uint32_t fixed;               /* the reserved node kept, or UINT32_MAX */
    option opt[64];
    uint8_t isfix[64];            /* per bin: the kept reserved node */
} impbest;

/* Scores the replacement of set (j nodes, cost have, price have_price) by
 * nb nodes of options use[] holding the set's pods as c->bin says, with
 * the zone counts as the nodes open; kept in st when it saves most. */
static void imp_score(imp *c, impbest *st, const uint32_t *set, uint32_t j, uint32_t fixed,
                      const uint32_t *use, uint32_t nb, double have, double have_price, zlist *zl)
{
    const capacity_pass *s = c->k->s;
    for (uint32_t q = 0; q < nb; q++)
        if (use[q] == IMP_TOP) { /* the kept reserved node must keep pods (else it would
                                  * be dropped and its reservation given back) */
            uint32_t i = 0;
            while (i < c->np && c->bin[i] != q)
                i++;
            if (i == c->np)
                return;
        }
    cons_zreset(zl);
    double cost = 0, price = 0;
    for (uint32_t q = 0; q < nb; q++) {
        if (use[q] == IMP_TOP || !c->top[use[q]].of)
            continue; /* a reserved node: paid either way */
        cost += cons_cost_n(s, c->k->f, c->top[use[q]].of, zl, 1);
        price += c->top[use[q]].o.price;
    }
    double save = have - cost;
    if (save <= st->save + 1e-9 || have_price - price <= 1e-9)
        return;
    st->save = save;
    st->nset = j;
    memcpy(st->set, set, j * sizeof *set);
    st->nb = nb;
    st->np = c->np;
    st->fixed = fixed;
    for (uint32_t q = 0; q < nb; q++) {
        st->opt[q] = c->top[use[q]].o;
        st->isfix[q] = use[q] == IMP_TOP;
    }
    memcpy(c->best_bin, c->bin, c->np * sizeof *c->bin);
}

/* A reserved node of group k->g not open yet (cand's IMP_VRES): the first
 * allowed (type, zone) that a count reservation with a node left covers,
 * as pick() finds them (utilizeReservedInstances; price 0); 1 found. */
static int imp_vres(imp *c)
{
    packer *k = c->k;
    capacity_pass *s = k->s;
    const berth_autoscale *m = s->m;
    const berth_vng *v = &m->vngs[k->g];
    upfast *f = k->f;
    if (!m->nres || !v->utilize_reserved)
        return 0;
    for (offer_walk w = offers_of(f, m, k->g); offers_next(&w);) {
        uint32_t t = w.t;
        const berth_instance_type *it = w.it;
        const berth_offering *of = w.of;
        if (of->capacity_type != BERTH_CT_ON_DEMAND ||
            berth_instance_offering(it, of->zone, BERTH_CT_RESERVED))
            continue;
        for (uint32_t r = 0; r < m->nres; r++) {
            const berth_reservation *rv = &m->res[r];
            int type_ok = rv->instance_type ? !strcmp(rv->instance_type, it->name)
                                            : !strcmp(rv->family, it->family);
            if (!type_ok || (rv->zone && strcmp(rv->zone, of->zone)) || !rv->count ||
                s->res_left[r] < 1.0 - 1e-9)
                continue;
            c->vres = (option){1, t, of->zone, BERTH_CT_RESERVED, (int)r, 0, 0, 0};
            c->vleft = (uint32_t)fmin(floor(s->res_left[r] + 1e-9), 64);
            capacity_template_free(s, k->g, t, of->zone, BERTH_CT_RESERVED, c->vfr);
            return 1;
        }
    }
    return 0;
}

/* One move over capacity type ct: 1 applied, 0 none, BERTH_ENOMEM. */
static int imp_move(imp *c, int ct)
{
    packer *k = c->k;
    capacity_pass *s = k->s;
    const berth_autoscale *m = s->m;
    const berth_vng *v = &m->vngs[k->g];
    upfast *f = k->f;
    /* candidates: the IMP_CAND least filled */
    uint32_t nall = 0;
    for (uint32_t n = c->first_new; n < s->nn; n++) {
        const capacity_node *x = &s->n[n];
        if (x->removed || x->vng != (int)k->g || x->ct != ct || s->node_res[n] >= 0 ||
            x->headroom_units || !x->npods)
            continue;
        if (!berth_instance_offering(&m->types[x->type], x->zone, (berth_capacity_type)x->ct))
            continue;
        c->fill[n - c->first_new] =
            fmax((double)x->req[0] / (double)(x->alloc[0] > 0 ? x->alloc[0] : 1),
                 (double)x->req[1] / (double)(x->alloc[1] > 0 ? x->alloc[1] : 1));
        c->cand[nall++] = n - c->first_new;
    }
    if (!nall)
        return 0;
    qsort_r(c->cand, nall, sizeof *c->cand, cmp_fill, c->fill);
    c->ncand = nall < IMP_CAND ? nall : IMP_CAND;
    for (uint32_t i = 0; i < c->ncand; i++)
        c->cand[i] += c->first_new;
    /* the round's reserved nodes of the group (the first IMP_RES): a set may
     * take one along, kept as it is, its pods repacked with the set's */
    c->nres = 0;
    for (uint32_t n = c->first_new; n < s->nn && c->nres < IMP_RES; n++) {
        const capacity_node *x = &s->n[n];
        if (!x->removed && x->vng == (int)k->g && s->node_res[n] >= 0 && !x->headroom_units &&
            x->npods && x->type >= 0)
            c->cand[c->ncand + c->nres++] = n;
    }
    /* and a reserved node not open yet: free capacity the packing left
     * unused where the pods fitted the nodes it had opened */
    c->vleft = 0;
    if (v->max_nodes - s->vng_nodes[k->g] >= 1 && imp_vres(c) && c->nres < IMP_RES)
        c->cand[c->ncand + c->nres++] = IMP_VRES;
    uint32_t nlist = c->ncand + c->nres;
    /* the candidates' pods (order slots, ascending): one scan of the group's pods */
    memset(c->phead, 0, (IMP_CAND + IMP_RES + 1) * sizeof *c->phead);
    for (uint32_t pass = 0; pass < 2; pass++) {
        for (uint32_t i = 0; i < k->n; i++) {
            uint32_t n = s->pod_node[k->order[i]], q = 0;
            while (q < nlist && c->cand[q] != n)
                q++;
            if (q == nlist)
                continue;
            if (!pass)
                c->phead[q + 1]++;
            else
                c->plist[c->fillp[q]++] = i;
        }
        if (!pass) {
            for (uint32_t q = 0; q < nlist; q++)
                c->phead[q + 1] += c->phead[q];
            memcpy(c->fillp, c->phead, nlist * sizeof *c->fillp);
        }
    }
    impbest st;
    memset(&st, 0, sizeof st);
    uint32_t use[64];
    zlist zbase; /* the group's zones and node counts (cons_zones), once per move */
    zbase.n = 0;
    if (ct == BERTH_CT_SPOT)
        cons_zones(s, f, k->g, &zbase);
    int64_t bf[IMP_NODES + 1][4];
    uint32_t idx[IMP_CAND];
    /* sets of 1..IMP_SET candidates, then all of them when they hold at
     * most IMP_EXACT pods (the exact partition of the whole round) */
    for (uint32_t j = 1; j <= c->ncand; j = j < IMP_SET ? j + 1 : (j < c->ncand ? c->ncand : j + 1)) {
        if (j > IMP_SET && c->phead[c->ncand] > IMP_EXACT)
            break;
        for (uint32_t q = 0; q < j; q++)
            idx[q] = q;
        for (;;) {
          for (uint32_t rr = 0; rr <= (j > IMP_SET ? 0 : c->nres); rr++) {
            if (c->work > c->budget)
                goto done;
            uint32_t set[IMP_CAND];
            for (uint32_t q = 0; q < j; q++)
                set[q] = c->cand[idx[q]];
            /* a reserved node taken along: bin IMP_TOP, kept */
            uint32_t fixed = rr ? c->cand[c->ncand + rr - 1] : UINT32_MAX, nfix = rr ? 1 : 0;
            uint32_t lists[IMP_CAND + 1], nl = j;
            memcpy(lists, idx, j * sizeof *idx);
            if (rr)
                lists[nl++] = c->ncand + rr - 1;
            /* the set's pods, FFD order: a merge of its nodes' lists */
            c->np = 0;
            int64_t sum[4] = {0, 0, 0, 0};
            uint32_t cur[IMP_CAND + 1];
            for (uint32_t q = 0; q < nl; q++)
                cur[q] = c->phead[lists[q]];
            for (;;) {
                uint32_t bq = nl, bs = UINT32_MAX;
                for (uint32_t q = 0; q < nl; q++)
                    if (cur[q] < c->phead[lists[q] + 1] && c->plist[cur[q]] < bs)
                        bs = c->plist[cur[q]], bq = q;
                if (bq == nl)
                    break;
                cur[bq]++;
                uint32_t pod = k->order[bs];
                const berth_kpod *kp = &m->kube.pods[pod];
                sum[0] += kp->req[BERTH_KRES_CPU];
                sum[1] += kp->req[BERTH_KRES_MEMORY];
                sum[2] += s->gpu != BERTH_KUBE_NONE ? kp->req[s->gpu] : 0;
                sum[3]++;
                c->spods[c->np++] = pod;
            }
            c->work += c->np + 1;
            for (uint32_t q = 0; q < j; q++)
                cons_away(s, f, set[q], 1);
            int64_t zmin = ct == BERTH_CT_SPOT ? min_zone_nodes(s, f, k->g, 0) : 0;
            /* the group's zones with the set away: the move's list less the set's nodes */
            zlist zl = zbase;
            for (uint32_t q = 0; q < j && zl.n; q++) {
                uint32_t zi = 0;
                while (zi < zl.n && zl.z[zi] != s->n[set[q]].zone &&
                       strcmp(zl.z[zi], s->n[set[q]].zone))
                    zi++;
                if (zi < zl.n)
                    zl.cnt[zi]--;
            }
            int64_t room = v->max_nodes - s->vng_nodes[k->g];
            uint32_t maxb = j + (uint32_t)(room > 0 ? (room > 64 ? 64 : room) : 0);
            maxb = maxb > 64 ? 64 : maxb;
            if (ct == BERTH_CT_SPOT && v->spot_percentage < 100)
                maxb = j; /* the spot share must not grow */
            if (fixed == IMP_VRES && maxb + 1 > j + (uint32_t)(room > 0 ? room : 0))
                maxb--; /* the reserved node opens too */
            /* the set's cost, its nodes in opening order */
            double have = 0, have_price = 0;
            cons_set_cost(s, f, set, j, &zl, &have, &have_price);
            /* the options: the IMP_TOP best per covered share that host at least one pod */
            c->ntop = 0;
            for (offer_walk w = offers_of(f, m, k->g); offers_next(&w);) {
                uint32_t t = w.t;
                const berth_offering *of = w.of;
                if ((int)of->capacity_type != ct)
                    continue;
                double cost = cons_cost(s, f, of, zmin);
                if (cost >= have - st.save - 1e-9)
                    continue; /* one such node already costs the set */
                int64_t fr[4];
                capacity_template_free(s, k->g, t, of->zone, ct, fr);
                double rank = cover_rank(cost, fr, sum);
                uint32_t at = c->ntop;
                while (at > 0 && c->top[at - 1].rank > rank)
                    at--;
                if (at >= IMP_TOP || rank == INFINITY)
                    continue;
                uint32_t last = c->ntop < IMP_TOP ? c->ntop : IMP_TOP - 1;
                memmove(c->top + at + 1, c->top + at, (last - at) * sizeof *c->top);
                impopt *x = &c->top[at];
                x->o = (option){1, t, of->zone, ct, -1, of->price, 0, 0};
                x->of = of;
                x->cost = cost;
                x->rank = rank;
                memcpy(x->fr, fr, sizeof fr);
                x->cap = (double)fr[0] / k->norm[0] + (double)fr[1] / k->norm[1];
                c->ntop = c->ntop < IMP_TOP ? c->ntop + 1 : IMP_TOP;
            }
            /* a reserved node not open yet is an option too (price 0, at
             * most the nodes its reservation has left: vmax per multiset) */
            uint32_t vmax = c->vleft > (fixed == IMP_VRES) ? c->vleft - (fixed == IMP_VRES) : 0;
            if (vmax) {
                uint32_t last = c->ntop < IMP_TOP ? c->ntop : IMP_TOP - 1;
                memmove(c->top + 1, c->top, last * sizeof *c->top);
                impopt *x = &c->top[0];
                x->o = c->vres;
                x->of = NULL;
                x->cost = 0;
                x->rank = 0;
                memcpy(x->fr, c->vfr, sizeof x->fr);
                x->cap = (double)x->fr[0] / k->norm[0] + (double)x->fr[1] / k->norm[1];
                c->ntop = c->ntop < IMP_TOP ? c->ntop + 1 : IMP_TOP;
            }
            if (rr && fixed == IMP_VRES) {
                impopt *y = &c->top[IMP_TOP];
                y->o = c->vres;
                y->of = NULL;
                y->cost = 0;
                y->rank = 0;
                memcpy(y->fr, c->vfr, sizeof y->fr);
                y->cap = (double)y->fr[0] / k->norm[0] + (double)y->fr[1] / k->norm[1];
            } else if (rr) {
                const capacity_node *x = &s->n[fixed];
                impopt *y = &c->top[IMP_TOP];
                y->o = (option){1, (uint32_t)x->type, x->zone, x->ct, s->node_res[fixed], 0, 0, 0};
                y->of = NULL;
                y->cost = 0;
                y->rank = 0;
                y->fr[0] = x->alloc[0], y->fr[1] = x->alloc[1], y->fr[2] = x->alloc[2];
                y->fr[3] = x->alloc_pods;
                y->cap = (double)y->fr[0] / k->norm[0] + (double)y->fr[1] / k->norm[1];
            }
            memset(c->hdone, 0, sizeof c->hdone); /* host rows: filled when first used */
            {
                /* no replacement from these options costs less than their
                 * fractional cover of the set's cpu and memory (less the
                 * kept reserved node's room): skip a set that cannot beat
                 * the best move */
                double pc[IMP_TOP], p0[IMP_TOP], p1[IMP_TOP], pi[2];
                for (uint32_t o = 0; o < c->ntop; o++) {
                    pc[o] = c->top[o].cost;
                    p0[o] = (double)c->top[o].fr[0];
                    p1[o] = (double)c->top[o].fr[1];
                }
                double d0 = (double)sum[0] - (rr ? (double)c->top[IMP_TOP].fr[0] : 0);
                double d1 = (double)sum[1] - (rr ? (double)c->top[IMP_TOP].fr[1] : 0);
                uint32_t o0 = vmax ? 1 : 0; /* the reserved option (first): its
                                             * nodes' room off the demand */
                d0 -= (double)vmax * (double)c->vfr[0];
                d1 -= (double)vmax * (double)c->vfr[1];
                d0 = d0 > 0 ? d0 : 0;
                d1 = d1 > 0 ? d1 : 0;
                double lp = c->ntop > o0 && (d0 > 0 || d1 > 0)
                                ? capacity_lp_cover2(pc + o0, p0 + o0, p1 + o0, c->ntop - o0, d0,
                                                     d1, pi)
                                : 0;
                c->work += c->ntop;
                if (c->ntop <= o0 && !rr && (d0 > 0 || d1 > 0 || !vmax))
                    lp = INFINITY; /* no option can take the set's pods */
                if (have - lp <= st.save + 1e-9)
                    goto next_set;
            }
            /* candidate replacements: each scored exactly, the best kept */
            uint32_t nopt = c->ntop < IMP_OPTS ? c->ntop : IMP_OPTS;
            if (c->np <= IMP_EXACT && !rr) {
                uint32_t nb = imp_exact(c, maxb, use);
                if (nb)
                    imp_score(c, &st, set, j, fixed, use, nb, have, have_price, &zl);
            } else {
                /* the options by cost: multisets in cost order, cut where
                 * they cost the set's price less the best saving; the kept
                 * reserved node (use[0]) first */
                uint32_t byc[IMP_TOP];
                for (uint32_t x = 0; x < nopt; x++) {
                    uint32_t y = x;
                    for (; y > 0 && c->top[byc[y - 1]].cost > c->top[x].cost; y--)
                        byc[y] = byc[y - 1];
                    byc[y] = x;
                }
                /* one node: at most two; consolidation tried one option */
                uint32_t kmax = j == 1 ? 2 : IMP_NODES; /* (j > IMP_SET: exact only) */
                use[0] = IMP_TOP;
                for (uint32_t kind = rr ? 0 : 1; kind <= kmax && kind <= maxb; kind++)
                    for (uint32_t a = 0; a < (kind ? nopt : 1); a++) {
                        double ca = kind ? c->top[byc[a]].cost : 0;
                        if (kind && ca * kind >= have - st.save - 1e-9)
                            break;
                        for (uint32_t b = kind >= 2 ? a : 0; b < (kind >= 2 ? nopt : 1); b++) {
                            double cb = kind >= 2 ? c->top[byc[b]].cost : 0;
                            if (kind && ca + cb * (kind - 1) >= have - st.save - 1e-9)
                                break;
                            for (uint32_t d = kind >= 3 ? b : 0; d < (kind >= 3 ? nopt : 1); d++) {
                                uint32_t nb = kind + nfix, *u = use + nfix;
                                u[0] = byc[a], u[1] = byc[b], u[2] = byc[d];
                                if (vmax) { /* the reserved option: vmax nodes at most */
                                    uint32_t nv = 0;
                                    for (uint32_t q = 0; q < kind; q++)
                                        nv += u[q] == 0;
                                    if (nv > vmax)
                                        continue;
                                }
                                double cost = 0;
                                int64_t cap[4] = {0, 0, 0, 0};
                                for (uint32_t q = 0; q < nb; q++) {
                                    cost += c->top[use[q]].cost;
                                    for (int r = 0; r < 4; r++)
                                        cap[r] += c->top[use[q]].fr[r];
                                }
                                c->work++;
                                if (cost >= have - st.save - 1e-9)
                                    break;
                                int ok = 1;
                                for (int r = 0; r < 4 && ok; r++)
                                    ok = cap[r] >= sum[r];
                                if (!ok)
                                    continue;
                                /* smallest first, then largest first */
                                for (uint32_t x = 1; x < kind; x++)
                                    for (uint32_t y = x; y > 0 && c->top[u[y - 1]].cap >
                                                                      c->top[u[y]].cap; y--) {
                                        uint32_t tmp = u[y];
                                        u[y] = u[y - 1];
                                        u[y - 1] = tmp;
                                    }
                                for (int order = 0; order < 4; order++) {
                                    if (order && nb == 1)
                                        break;
                                    if (order == 3 && nb != 2)
                                        break;
                                    if (order == 1 && kind > 1) {
                                        uint32_t tmp = u[0];
                                        u[0] = u[kind - 1];
                                        u[kind - 1] = tmp;
                                    }
                                    if (order < 2   ? imp_ffd(c, use, nb, bf)
                                        : order < 3 ? imp_dot(c, use, nb, bf)
                                                    : imp_two(c, use)) {
                                        imp_score(c, &st, set, j, fixed, use, nb, have, have_price,
                                                  &zl);
                                        break; /* the cost is the multiset's */
                                    }
                                }
                            }
                        }
                    }
            }
        next_set:
            for (uint32_t q = 0; q < j; q++)
                cons_away(s, f, set[q], 0);
          }
            /* next set of j candidates */
            int q = (int)j - 1;
            while (q >= 0 && idx[q] == c->ncand - j + (uint32_t)q)
                q--;
            if (q < 0)
                break;
            idx[q]++;
            for (uint32_t r = (uint32_t)q + 1; r < j; r++)
                idx[r] = idx[r - 1] + 1;
        }
    }
done:
    if (!st.nset)
        return 0;
    /* apply: the set's pods (FFD order) leave, its nodes go, the bins open */
    c->np = 0;
    for (uint32_t i = 0; i < k->n; i++) {
        uint32_t pod = k->order[i], n = s->pod_node[pod];
        int in = st.fixed != UINT32_MAX && n == st.fixed;
        for (uint32_t q = 0; q < st.nset; q++)
            in |= n == st.set[q];
        if (in)
            c->spods[c->np++] = pod;
    }
    if (c->np != st.np)
        return BERTH_EINTERNAL;
    for (uint32_t i = 0; i < c->np; i++)
        capacity_unplace(s, c->spods[i]);
    for (uint32_t q = 0; q < st.nset; q++)
        drop_node(s, f, st.set[q]);
    uint32_t opened[64];
    for (uint32_t b = 0; b < st.nb; b++) {
        if (st.isfix[b] && st.fixed != IMP_VRES) {
            opened[b] = st.fixed;
            continue;
        }
        opened[b] = open_node(k, &st.opt[b]);
        if (opened[b] == BERTH_KUBE_NONE)
            return BERTH_ENOMEM;
    }
    for (uint32_t i = 0; i < c->np; i++)
        capacity_place(s, c->spods[i], opened[c->best_bin[i]]);
    return 1;
}

/* Improves group k->g's new nodes of this round (from first_new). */
static int improve(packer *k, uint32_t first_new)
{
    capacity_pass *s = k->s;
    uint32_t round_nodes = s->nn - first_new;
    if (round_nodes < 1 || k->hr)
        return 0;
    imp c;
    memset(&c, 0, sizeof c);
    c.k = k;
    c.first_new = first_new;
    if (!k->imp_left || !*k->imp_left)
        return 0;
    c.budget = *k->imp_left;
    size_t nodes = (size_t)round_nodes + (size_t)IMP_MOVES * 64 + 1;
    size_t sub = (size_t)1 << IMP_EXACT;
    c.cand = malloc(nodes * sizeof *c.cand);
    c.fill = malloc(nodes * sizeof *c.fill);
    c.spods = malloc(((size_t)k->n + 1) * sizeof *c.spods);
    c.plist = malloc(((size_t)k->n + 1) * sizeof *c.plist);
    c.bin = malloc(((size_t)k->n + 1) * sizeof *c.bin);
    c.best_bin = malloc(((size_t)k->n + 1) * sizeof *c.best_bin);
    c.host = malloc((IMP_TOP + 1) * ((size_t)k->n + 1));
    c.rc = malloc(sub * sizeof *c.rc);
    c.c1 = malloc(sub * sizeof *c.c1);
    c.best = malloc(sub * sizeof *c.best);
    c.arg = malloc(sub);
    c.parts = malloc(sub);
    c.choice = malloc(sub * sizeof *c.choice);
    int rc = c.cand && c.fill && c.spods && c.plist && c.bin && c.best_bin && c.host && c.rc && c.c1 &&
                     c.best && c.arg && c.parts && c.choice
                 ? 0 : BERTH_ENOMEM;
    for (int ct = BERTH_CT_SPOT; !rc && ct <= BERTH_CT_ON_DEMAND; ct++) {
        if (ct == BERTH_CT_RESERVED)
            continue;
        for (uint32_t moves = 0; moves < IMP_MOVES && c.work <= c.budget; moves++) {
            int r = imp_move(&c, ct);
            if (r <= 0) {
                rc = r;
                break;
            }
        }
    }
    *k->imp_left = c.work < c.budget ? c.budget - c.work : 0;
    free(c.cand);
    free(c.fill);
    free(c.spods);
    free(c.plist);
    free(c.bin);
    free(c.best_bin);
    free(c.host);
    free(c.rc);
    free(c.c1);
    free(c.best);
    free(c.arg);
    free(c.parts);
    free(c.choice);
    return rc;
}

/* ---- joint exact repack: a small set of nodes re-bought with the units ----
 *
 * The repack above keeps the nodes' types (but one retype), so an optimum
 * that buys other types for the units (a larger node whose spare room
 * holds them instead of a node for headroom alone) stays out of its reach
 * (packing test: 24.7 % / 26.5 % above the brute force's optimum at worst).
 * So, per group with one headroom spec and per capacity type (spot, then
 * on-demand), after the repack: the set of the group's new nodes of that
 * capacity type opened for headroom alone, plus its nodes with pods (not
 * reserved, no pod with required pod (anti-)affinity, spread constraints
 * or host ports) least filled first while they hold at most HRX_PODS pods,
 * is re-bought exactly: a dynamic programme over the subsets of the set's
 * pods and the units the set must hold (the group's need less what its
 * other nodes hold, at most HRX_UNITS), each part on the cheapest option
 * that hosts it (each pod template checked) with that many units of free
 * room, parts of no pod for units alone. The set is replaced when that
 * lowers both its cost (spot: market score with the zone counts as nodes
 * open, as consolidation) and its price, within maxNodes, and with
 * spotPercentage below 100 never by more spot nodes; reservations are not
 * touched, and SPEC 5's headroom count is checked after (if it fell short,
 * the top-up runs again).
 * A set with no node for headroom alone whose other nodes hold every unit
 * is left (the improvement step partitioned its pods already).
 * Work bound: per group and capacity type O(pods + new nodes) to choose the
 * set, at most HRX_OPTS options x HRX_PODS pods template checks,
 * 2^HRX_PODS x (options + HRX_UNITS) steps for the single parts and
 * 3^HRX_PODS x (HRX_UNITS + 1)^2 for the partitions. */
#define HRX_PODS 10
#define HRX_UNITS 8
#define HRX_OPTS 64
#define HRX_NODES 16
_Static_assert(HRX_NODES <= 64, "cons_set_cost takes sets of at most 64 nodes");

typedef struct hrxopt {
    option o;
    const berth_offering *of;
    double cost;
    int64_t fr[4];
    uint32_t mask;                /* the set's pods it hosts */
} hrxopt;

static int hr_joint(capacity_pass *s, upfast *f, uint32_t g, int ct)
{
    const berth_autoscale *m = s->m;
    const berth_vng *v = &m->vngs[g];
    if (v->nheadroom != 1)
        return 0;
    const berth_headroom *hs = &v->headroom[0];
    uint32_t nnew = s->nn - s->nexisting;
    if (!nnew)
        return 0;
    enum { U = HRX_UNITS + 1, SUB = 1u << HRX_PODS };
    uint32_t *cnt = calloc((size_t)nnew + 1, sizeof *cnt);
    uint32_t *cand = malloc(((size_t)nnew + 1) * sizeof *cand);
    double *fill = malloc(((size_t)nnew + 1) * sizeof *fill);
    hrxopt *opt = malloc(HRX_OPTS * sizeof *opt);
    int64_t (*rc4)[4] = malloc(SUB * sizeof *rc4);
    double *c1 = malloc((size_t)SUB * U * sizeof *c1);
    uint8_t *arg = malloc((size_t)SUB * U);
    double *best = malloc((size_t)SUB * U * sizeof *best);
    uint16_t *cho = malloc((size_t)SUB * U * sizeof *cho);
    uint8_t *chu = malloc((size_t)SUB * U);
    uint8_t *parts = malloc((size_t)SUB * U);
    int rc = 0;
    if (!cnt || !cand || !fill || !opt || !rc4 || !c1 || !arg || !best || !cho || !chu || !parts) {
        rc = BERTH_ENOMEM;
        goto out;
    }
    /* per new node: its pods; UINT32_MAX when one of them is constrained */
    for (uint32_t p = 0; p < m->kube.npods; p++) {
        uint32_t n = s->pod_node[p];
        if (n == BERTH_KUBE_NONE || n < s->nexisting)
            continue;
        uint32_t *x = &cnt[n - s->nexisting];
        if (!hr_free_pod(&m->kube.pods[p]))
            *x = UINT32_MAX;
        else if (*x != UINT32_MAX)
            (*x)++;
    }
    /* the set: headroom-only nodes, then nodes with pods least filled first */
    uint32_t set[HRX_NODES], nset = 0, ncand = 0, npods = 0, nhr = 0;
    for (uint32_t n = s->nexisting; n < s->nn; n++) {
        const capacity_node *x = &s->n[n];
        if (x->removed || x->vng != (int)g || x->type < 0 || s->node_res[n] >= 0 || x->ct != ct ||
            cnt[n - s->nexisting] == UINT32_MAX ||
            !berth_instance_offering(&m->types[x->type], x->zone, (berth_capacity_type)x->ct))
            continue;
        if (!x->npods) {
            if (nset < HRX_NODES)
                set[nset++] = n, nhr++;
            continue;
        }
        fill[n - s->nexisting] =
            fmax((double)x->req[0] / (double)(x->alloc[0] > 0 ? x->alloc[0] : 1),
                 (double)x->req[1] / (double)(x->alloc[1] > 0 ? x->alloc[1] : 1));
        cand[ncand++] = n - s->nexisting;
    }
    qsort_r(cand, ncand, sizeof *cand, cmp_fill, fill);
    for (uint32_t i = 0; i < ncand && nset < HRX_NODES; i++) {
        uint32_t n = cand[i] + s->nexisting;
        if (npods + (uint32_t)s->n[n].npods > HRX_PODS)
            break;
        npods += (uint32_t)s->n[n].npods;
        set[nset++] = n;
    }
    if (!nset)
        goto out;
    uint32_t sp[HRX_PODS], np = 0;
    for (uint32_t p = 0; p < m->kube.npods && np < HRX_PODS; p++) {
        uint32_t n = s->pod_node[p];
        for (uint32_t q = 0; n != BERTH_KUBE_NONE && q < nset; q++)
            if (set[q] == n) {
                sp[np++] = p;
                break;
            }
    }
    if (np != npods)
        goto out;
    /* the units the set must hold; its cost with its nodes away */
    for (uint32_t q = 0; q < nset; q++)
        cons_away(s, f, set[q], 1);
    int64_t gap = capacity_headroom_gap(s, g, 0, NULL);
    int64_t need = gap < 0 ? -gap : 0;
    /* no unit at stake (no node for headroom alone, the other nodes hold
     * every unit): the improvement step partitioned these pods already */
    int search = need <= HRX_UNITS && (need || nhr);
    zlist zl;
    zl.n = 0;
    if (ct == BERTH_CT_SPOT)
        cons_zones(s, f, g, &zl);
    int64_t zmin = ct == BERTH_CT_SPOT ? min_zone_nodes(s, f, g, 0) : 0;
    double have = 0, have_price = 0;
    cons_set_cost(s, f, set, nset, &zl, &have, &have_price);
    /* the options: the group's allowed offerings of this capacity type */
    uint32_t nopt = 0;
    for (offer_walk w = offers_of(f, m, g); search && nopt < HRX_OPTS && offers_next(&w);) {
        uint32_t t = w.t;
        const berth_offering *of = w.of;
        if ((int)of->capacity_type != ct)
            continue;
        hrxopt *x = &opt[nopt];
        x->o = (option){1, t, of->zone, ct, -1, of->price, 0, 0};
        x->of = of;
        x->cost = cons_cost(s, f, of, zmin);
        capacity_template_free(s, g, t, of->zone, ct, x->fr);
        x->mask = 0;
        for (uint32_t i = 0; i < np; i++) {
            int64_t one[4];
            memcpy(one, x->fr, sizeof one);
            if (fits_free(s, one, sp[i]) && hosts(s, f, g, t, of->zone, -1, ct, sp[i]))
                x->mask |= 1u << i;
        }
        nopt++;
    }
    uint32_t full = (1u << np) - 1, nparts = 0;
    double total = INFINITY;
    if (search && nopt) {
        /* c1[mask][u]: the cheapest option hosting the pods of mask with at
         * least u units of free room */
        const int64_t per[3] = {hs->cpu, hs->memory, hs->gpu};
        memset(rc4[0], 0, sizeof rc4[0]);
        for (uint32_t mask = 0; mask <= full; mask++) {
            if (mask) {
                uint32_t low = (uint32_t)__builtin_ctz(mask);
                const berth_kpod *p = &m->kube.pods[sp[low]];
                const int64_t *pr = rc4[mask & (mask - 1)];
                rc4[mask][0] = pr[0] + p->req[BERTH_KRES_CPU];
                rc4[mask][1] = pr[1] + p->req[BERTH_KRES_MEMORY];
                rc4[mask][2] = pr[2] + (s->gpu != BERTH_KUBE_NONE ? p->req[s->gpu] : 0);
                rc4[mask][3] = pr[3] + 1;
            }
            double *c = &c1[(size_t)mask * U];
            uint8_t *a = &arg[(size_t)mask * U];
            for (uint32_t u = 0; u < U; u++)
                c[u] = INFINITY, a[u] = 0;
            for (uint32_t o = 0; o < nopt; o++) {
                const hrxopt *x = &opt[o];
                if ((x->mask & mask) != mask)
                    continue;
                int64_t fr[3], units = INT64_MAX;
                int ok = x->fr[3] >= rc4[mask][3];
                for (int r = 0; r < 3; r++) {
                    fr[r] = x->fr[r] - rc4[mask][r];
                    ok &= fr[r] >= 0;
                    if (per[r] > 0) {
                        int64_t qq = fr[r] > 0 ? fr[r] / per[r] : 0;
                        units = qq < units ? qq : units;
                    }
                }
                if (!ok)
                    continue;
                units = units == INT64_MAX ? 0 : units > HRX_UNITS ? HRX_UNITS : units;
                if (!mask && !units)
                    continue; /* a node of no pod and no unit */
                if (x->cost < c[units])
                    c[units] = x->cost, a[units] = (uint8_t)o;
            }
            for (uint32_t u = U - 1; u-- > 0;) /* at least u units */
                if (c[u + 1] < c[u])
                    c[u] = c[u + 1], a[u] = a[u + 1];
        }
        /* best[mask][d]: the cheapest parts for the pods of mask holding at
         * least d units; a part: the lowest pod with a subset of the rest
         * (no pod: units alone) */
        for (uint32_t mask = 0; mask <= full; mask++) {
            uint32_t low = mask & (~mask + 1), rest = mask ^ low;
            for (uint32_t d = 0; d <= (uint32_t)need; d++) {
                size_t at = (size_t)mask * U + d;
                double bv = INFINITY;
                uint32_t bp = 0, bc = 0, bu = 0;
                if (!mask && !d) {
                    best[at] = 0, parts[at] = 0, cho[at] = 0, chu[at] = 0;
                    continue;
                }
                for (uint32_t sub = rest;; sub = (sub - 1) & rest) {
                    uint32_t a = low | sub;
                    /* c1 and best grow with the units: their values at 0
                     * bound every split of d */
                    if (mask && c1[(size_t)a * U] + best[(size_t)(mask ^ a) * U] >= bv + 1e-12) {
                        if (!sub)
                            break;
                        continue;
                    }
                    for (uint32_t u = mask ? 0 : 1; u <= d; u++) {
                        double cv = c1[(size_t)a * U + u];
                        size_t r = (size_t)(mask ^ a) * U + (d - u);
                        if (cv == INFINITY || best[r] == INFINITY)
                            continue;
                        double val = cv + best[r];
                        uint32_t pv = 1u + parts[r];
                        if (val < bv - 1e-12 || (val <= bv + 1e-12 && pv < bp))
                            bv = val, bp = pv, bc = a, bu = u;
                    }
                    if (!sub)
                        break;
                }
                best[at] = bv;
                parts[at] = (uint8_t)(bp > 255 ? 255 : bp);
                cho[at] = (uint16_t)bc;
                chu[at] = (uint8_t)bu;
            }
        }
        total = best[(size_t)full * U + (size_t)need];
        nparts = parts[(size_t)full * U + (size_t)need];
    }
    int64_t room = v->max_nodes - s->vng_nodes[g];
    int take = total < INFINITY && nparts <= nset + (uint32_t)(room > 0 ? (room > 64 ? 64 : room) : 0) &&
               !(ct == BERTH_CT_SPOT && v->spot_percentage < 100 && nparts > nset);
    /* the parts, their cost and price as they open */
    uint32_t pmask[2 * HRX_PODS + HRX_UNITS + 2], popt[2 * HRX_PODS + HRX_UNITS + 2], nb = 0;
    double cost = 0, price = 0;
    if (take) {
        uint32_t mask = full, d = (uint32_t)need;
        while ((mask || d) && nb < 2 * HRX_PODS + HRX_UNITS + 2) {
            size_t at = (size_t)mask * U + d;
            uint32_t a = mask ? cho[at] : 0, u = chu[at];
            pmask[nb] = a;
            popt[nb++] = arg[(size_t)a * U + u];
            mask ^= a;
            d -= u;
        }
        take = !mask && !d;
        cons_zreset(&zl);
        for (uint32_t b = 0; b < nb && take; b++) {
            cost += cons_cost_n(s, f, opt[popt[b]].of, &zl, 1);
            price += opt[popt[b]].o.price;
        }
        take = take && cost < have - 1e-9 && price < have_price - 1e-9;
    }
    for (uint32_t q = 0; q < nset; q++)
        cons_away(s, f, set[q], 0);
    if (!take)
        goto out;
    /* apply: the set's pods leave, its nodes go, the parts open */
    packer k = {s, g, NULL, 0, NULL, {1, 1, 1}, NULL};
    k.f = f;
    for (uint32_t i = 0; i < np; i++)
        capacity_unplace(s, sp[i]);
    for (uint32_t q = 0; q < nset; q++)
        drop_node(s, f, set[q]);
    for (uint32_t b = 0; b < nb; b++) {
        uint32_t n = open_node(&k, &opt[popt[b]].o);
        if (n == BERTH_KUBE_NONE) {
            rc = BERTH_ENOMEM;
            goto out;
        }
        for (uint32_t i = 0; i < np; i++)
            if (pmask[b] >> i & 1)
                capacity_place(s, sp[i], n);
        if (!pmask[b]) {
            capacity_node *x = &s->n[n];
            int64_t fr[3] = {x->alloc[0] - x->req[0], x->alloc[1] - x->req[1],
                             x->alloc[2] - x->req[2]};
            x->headroom_units = hr_units(v, fr);
        }
    }
    if (!hr_gaps_met(s, g))
        rc = top_up_headroom(s, f, g);
out:
    free(cnt);
    free(cand);
    free(fill);
    free(opt);
    free(rc4);
    free(c1);
    free(arg);
    free(best);
    free(cho);
    free(chu);
    free(parts);
    return rc;
}

static int group_key_eq(const berth_ascaleup *u, const capacity_node *c, const char *res)
{
    return u->vng == (uint32_t)c->vng && u->type == (uint32_t)c->type &&
           (int)u->capacity_type == c->ct && !strcmp(u->zone, c->zone) &&
           ((!u->reservation && !res) || (u->reservation && res && !strcmp(u->reservation, res)));
}

/* Scale-up groups from the surviving new nodes. */
static int report(capacity_pass *s)
{
    const berth_autoscale *m = s->m;
    berth_aplan *p = s->plan;
    /* the pods of each new node in pod order: a counting sort */
    uint32_t nnew = s->nn - s->nexisting;
    uint32_t *head = calloc((size_t)nnew + 2, sizeof *head);
    uint32_t *bucket = malloc(((size_t)m->kube.npods + 1) * sizeof *bucket);
    if (!head || !bucket) {
        free(head);
        free(bucket);
        return BERTH_ENOMEM;
    }
    for (uint32_t pod = 0; pod < m->kube.npods; pod++)
        if (s->pod_node[pod] != BERTH_KUBE_NONE && s->pod_node[pod] >= s->nexisting)
            head[s->pod_node[pod] - s->nexisting + 2]++;
    for (uint32_t i = 2; i < nnew + 2; i++)
        head[i] += head[i - 1];
    for (uint32_t pod = 0; pod < m->kube.npods; pod++)
        if (s->pod_node[pod] != BERTH_KUBE_NONE && s->pod_node[pod] >= s->nexisting)
            bucket[head[s->pod_node[pod] - s->nexisting + 1]++] = pod;
    int rc = 0;
    for (uint32_t n = s->nexisting; !rc && n < s->nn; n++) {
        const capacity_node *c = &s->n[n];
        if (c->removed)
            continue;
        const char *res = s->node_res[n] >= 0 ? m->res[s->node_res[n]].name : NULL;
        uint32_t u = 0;
        while (u < p->nup && !group_key_eq(&p->up[u], c, res))
            u++;
        if (u == p->nup) {
            if (berth_grow((void **)&p->up, &p->capup, p->nup + 1, sizeof *p->up, 0)) {
                rc = BERTH_ENOMEM;
                break;
            }
            berth_ascaleup *x = &p->up[p->nup++];
            x->vng = (uint32_t)c->vng;
            x->type = (uint32_t)c->type;
            x->capacity_type = (berth_capacity_type)c->ct;
            x->zone = c->zone;
            x->reservation = res;
            const berth_offering *of =
                berth_instance_offering(&m->types[c->type], c->zone, (berth_capacity_type)c->ct);
            x->price = of ? of->price : 0;
            if (c->ct == BERTH_CT_RESERVED) {
                const berth_offering *ro =
                    berth_instance_offering(&m->types[c->type], c->zone, BERTH_CT_RESERVED);
                x->price = ro ? ro->price : 0;
            }
        }
        berth_ascaleup *x = &p->up[u];
        const char **nn = realloc(x->nodes, (x->count + 1) * sizeof *nn);
        if (!nn) {
            rc = BERTH_ENOMEM;
            break;
        }
        x->nodes = nn;
        x->nodes[x->count++] = c->hyp->name;
        x->headroom_units += c->headroom_units;
        x->headroom_nodes += c->headroom_units > 0;
        uint32_t b0 = head[n - s->nexisting], b1 = head[n - s->nexisting + 1];
        if (b1 > b0) {
            uint32_t *q = realloc(x->pods, (x->npods + (b1 - b0)) * sizeof *q);
            if (!q) {
                rc = BERTH_ENOMEM;
                break;
            }
            x->pods = q;
            for (uint32_t b = b0; b < b1; b++)
                x->pods[x->npods++] = bucket[b];
        }
    }
    free(head);
    free(bucket);
    return rc;
}

static int cmp_new_name(const void *a, const void *b, void *ctx)
{
    const capacity_pass *sort_pass = ctx;
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return strcmp(sort_pass->n[x].hyp->name, sort_pass->n[y].hyp->name);
}

/* Fast confirmation (the same questions as capacity_schedule per new node,
 * through one incremental what-if session for the round): the session
 * holds the existing nodes not removed with their pods, earlier rounds'
 * new nodes with theirs, then this round's nodes one by one, each placing
 * its packed pods (pods of node n: head[n - first_new] ..). Spare slots
 * follow the nodes' names, so ties among new nodes break by name as in a
 * view. */
static int confirm_session(capacity_pass *s, uint32_t first_new, const uint32_t *head,
                           const uint32_t *bucket, uint32_t *order, uint32_t *placed,
                           berth_error *e)
{
    const berth_kcluster *k = &s->m->kube;
    uint32_t nk = k->nnodes, nnew = s->nn - s->nexisting;
    uint32_t *pn = malloc(((size_t)k->npods + 1) * sizeof *pn);
    uint32_t *slot_of = malloc(((size_t)nnew + 1) * sizeof *slot_of);
    uint32_t *node_of_slot = malloc(((size_t)nnew + 1) * sizeof *node_of_slot);
    berth_ksession *ks = NULL;
    int rc = pn && slot_of && node_of_slot ? 0 : BERTH_ENOMEM;
    uint32_t nsp = 0;
    for (uint32_t n = s->nexisting; !rc && n < s->nn; n++)
        if (!s->n[n].removed)
            node_of_slot[nsp++] = n;
    if (!rc) {
        qsort_r(node_of_slot, nsp, sizeof *node_of_slot, cmp_new_name, s);
        for (uint32_t i = 0; i < nsp; i++)
            slot_of[node_of_slot[i] - s->nexisting] = i;
        for (uint32_t q = 0; q < k->npods; q++) {
            uint32_t n = s->pod_node[q];
            pn[q] = n != BERTH_KUBE_NONE && n < s->nexisting && !s->n[n].removed ? n
                                                                                : BERTH_KUBE_NONE;
        }
        rc = berth_ksession_open(&ks, k, pn, nsp, NULL, e);
        if (!rc)
            berth_ksession_set_cancel(ks, s->cancel);
        /* the per-node loops on the plan's threads (docs/autoscale.md
         * "Threads"; no worker started: the calling thread, same answers) */
        if (!rc && berth_ksession_set_threads(ks, s->threads) == BERTH_ENOMEM)
            rc = berth_error_set(e, BERTH_ENOMEM, "out of memory");
    }
    for (uint32_t n = 0; !rc && n < s->nexisting; n++)
        if (s->n[n].removed)
            berth_ksession_exclude(ks, n, 1);
    uint32_t sn;
    for (uint32_t n = s->nexisting; !rc && n < first_new; n++)
        if (!s->n[n].removed)
            rc = berth_ksession_spare(ks, slot_of[n - s->nexisting], s->n[n].hyp, &sn);
    for (uint32_t q = 0; !rc && q < k->npods; q++) {
        uint32_t n = s->pod_node[q];
        if (n != BERTH_KUBE_NONE && n >= s->nexisting && n < first_new && !s->n[n].removed)
            rc = berth_ksession_bind(ks, q, nk + slot_of[n - s->nexisting]);
    }
    for (uint32_t n = first_new; !rc && n < s->nn; n++) {
        if (s->n[n].removed) /* consolidation replaced it */
            continue;
        if ((rc = berth_ksession_spare(ks, slot_of[n - s->nexisting], s->n[n].hyp, &sn)))
            break;
        uint32_t cnt = 0;
        for (uint32_t b = head[n - first_new]; b < head[n - first_new + 1]; b++)
            order[cnt++] = bucket[b];
        for (uint32_t i = 0; i < cnt; i++)
            capacity_unplace(s, order[i]);
        rc = berth_ksession_place(ks, order, cnt, placed, NULL, NULL, e);
        if (rc == BERTH_ENOFIT)
            rc = 0;
        for (uint32_t i = 0; !rc && i < cnt; i++)
            if (placed[i] != BERTH_KUBE_NONE)
                capacity_place(s, order[i], placed[i] < nk ? placed[i]
                                                           : node_of_slot[placed[i] - nk]);
    }
    if (rc && rc != BERTH_ENOMEM && !e->msg[0])
        rc = berth_error_set(e, BERTH_EINTERNAL, "what-if session refused a step (%d)", rc);
    berth_ksession_close(ks);
    free(pn);
    free(slot_of);
    free(node_of_slot);
    return rc;
}

static void upfast_free(upfast *f)
{
    for (uint32_t c = 0; c < f->ncls; c++) {
        free(f->cache[c]);
        free(f->gok[c]);
        if (f->gfree)
            free(f->gfree[c]);
    }
    free(f->cache);
    free(f->gok);
    free(f->gfree);
    free(f->cls_pod);
    free(f->zones);
    free(f->zone_count);
    free(f->off_base);
    free(f->off_zone);
    free(f->vtype);
    free(f->gtypes);
    free(f->gtypes_off);
    free(f->vzone);
    free(f->pod_cls);
    free(f->pod_ext);
    memset(f, 0, sizeof *f);
}

static int intern_zone(upfast *f, const char *zone, uint32_t cap)
{
    int z = fast_zone(f, zone);
    if (z >= 0 || !zone)
        return z;
    if (f->nz >= cap)
        return -1;
    f->zones[f->nz] = zone;
    return (int)f->nz++;
}

/* A pod's template signature: tolerations, nodeSelector, required node
 * affinity, PersistentVolume zones (every string length-prefixed). */
static int sig_put(char **b, size_t *n, size_t *cap, const char *x)
{
    size_t l = x ? strlen(x) : 0;
    if (berth_grow_bytes((void **)b, cap, *n + l + 24, 256))
        return BERTH_ENOMEM;
    *n += (size_t)sprintf(*b + *n, "%c%zu:", x ? 's' : 'n', l);
    if (l)
        memcpy(*b + *n, x, l);
    *n += l;
    return 0;
}

static int pod_sig(const berth_kpod *p, char **b, size_t *n, size_t *cap)
{
    char num[48];
    int rc = 0;
    *n = 0;
    snprintf(num, sizeof num, "%u.%u.%u.%d", p->ntols, p->node_selector.n, p->nreq_terms,
             p->has_req_affinity);
    rc |= sig_put(b, n, cap, num);
    for (uint32_t i = 0; i < p->ntols; i++) {
        snprintf(num, sizeof num, "%d.%d", (int)p->tols[i].op, (int)p->tols[i].effect);
        rc |= sig_put(b, n, cap, p->tols[i].key);
        rc |= sig_put(b, n, cap, p->tols[i].value);
        rc |= sig_put(b, n, cap, num);
    }
    for (uint32_t i = 0; i < p->node_selector.n; i++) {
        rc |= sig_put(b, n, cap, p->node_selector.items[i].key);
        rc |= sig_put(b, n, cap, p->node_selector.items[i].value);
    }
    for (uint32_t t = 0; t < p->nreq_terms; t++) {
        const berth_kterm *term = &p->req_terms[t];
        snprintf(num, sizeof num, "%u.%u", term->nexprs, term->nfields);
        rc |= sig_put(b, n, cap, num);
        for (uint32_t e = 0; e < term->nexprs; e++) {
            snprintf(num, sizeof num, "%d.%u", (int)term->exprs[e].op, term->exprs[e].nvalues);
            rc |= sig_put(b, n, cap, term->exprs[e].key);
            rc |= sig_put(b, n, cap, num);
            for (uint32_t v = 0; v < term->exprs[e].nvalues; v++)
                rc |= sig_put(b, n, cap, term->exprs[e].values[v]);
        }
    }
    /* PersistentVolume zones (the template check reads them) */
    if (p->vol_error || p->nvol_zones) {
        snprintf(num, sizeof num, "v%u", p->nvol_zones);
        rc |= sig_put(b, n, cap, num);
        rc |= sig_put(b, n, cap, p->vol_error);
        for (uint32_t i = 0; i < p->nvol_zones; i++) {
            snprintf(num, sizeof num, "%u", p->vol_zones[i].nvalues);
            rc |= sig_put(b, n, cap, p->vol_zones[i].key);
            rc |= sig_put(b, n, cap, num);
            for (uint32_t v = 0; v < p->vol_zones[i].nvalues; v++)
                rc |= sig_put(b, n, cap, p->vol_zones[i].values[v]);
        }
    }
    return rc ? BERTH_ENOMEM : 0;
}

/* comparator context: signature bytes and offsets */
typedef struct {
    const char *sigs;
    const size_t *off;
} sig_order;

static int cmp_sig(const void *a, const void *b, void *ctx)
{
    const sig_order *o = ctx;
    const char *sort_sigs = o->sigs;
    const size_t *sort_sig_off = o->off;
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    size_t lx = sort_sig_off[x + 1] - sort_sig_off[x], ly = sort_sig_off[y + 1] - sort_sig_off[y];
    int c = memcmp(sort_sigs + sort_sig_off[x], sort_sigs + sort_sig_off[y], lx < ly ? lx : ly);
    if (c)
        return c;
    if (lx != ly)
        return lx < ly ? -1 : 1;
    return x < y ? -1 : x > y;
}

/* Builds the fast path's indexes over the pending pods pend[0..np). */
static int upfast_init(upfast *f, const capacity_pass *s, const uint32_t *pend, uint32_t np)
{
    const berth_autoscale *m = s->m;
    const berth_kcluster *k = &m->kube;
    memset(f, 0, sizeof *f);
    uint32_t noff = 0;
    for (uint32_t t = 0; t < m->ntypes; t++)
        noff += m->types[t].nofferings;
    uint32_t zcap = noff + s->nexisting + 1;
    f->zones = malloc(zcap * sizeof *f->zones);
    f->off_base = malloc((m->ntypes + 1) * sizeof *f->off_base);
    f->off_zone = malloc((noff + 1) * sizeof *f->off_zone);
    f->vtype = calloc((size_t)m->nvngs * m->ntypes + 1, 1);
    f->gtypes = malloc(((size_t)m->nvngs * m->ntypes + 1) * sizeof *f->gtypes);
    f->gtypes_off = malloc((m->nvngs + 1) * sizeof *f->gtypes_off);
    f->pod_cls = malloc((k->npods + 1) * sizeof *f->pod_cls);
    f->pod_ext = calloc(k->npods + 1, 1);
    if (!f->zones || !f->off_base || !f->off_zone || !f->vtype || !f->gtypes || !f->gtypes_off ||
        !f->pod_cls || !f->pod_ext)
        return BERTH_ENOMEM;
    noff = 0;
    for (uint32_t t = 0; t < m->ntypes; t++) {
        f->off_base[t] = noff;
        for (uint32_t o = 0; o < m->types[t].nofferings; o++)
            f->off_zone[noff++] = (uint32_t)intern_zone(f, m->types[t].offerings[o].zone, zcap);
    }
    for (uint32_t i = 0; i < s->nexisting; i++)
        intern_zone(f, s->n[i].zone, zcap);
    f->zone_count = calloc(f->nz + 1, sizeof *f->zone_count);
    f->vzone = calloc((size_t)m->nvngs * f->nz + 1, 1);
    if (!f->zone_count || !f->vzone)
        return BERTH_ENOMEM;
    for (uint32_t i = 0; i < s->nn; i++) {
        int z = s->n[i].removed ? -1 : fast_zone(f, s->n[i].zone);
        if (z >= 0)
            f->zone_count[z]++;
    }
    uint32_t ng = 0;
    for (uint32_t g = 0; g < m->nvngs; g++) {
        f->gtypes_off[g] = ng;
        for (uint32_t t = 0; t < m->ntypes; t++)
            if (capacity_vng_allows_type(&m->vngs[g], &m->types[t])) {
                f->vtype[(size_t)g * m->ntypes + t] = 1;
                f->gtypes[ng++] = t;
            }
        for (uint32_t z = 0; z < f->nz; z++)
            f->vzone[(size_t)g * f->nz + z] = (uint8_t)capacity_vng_allows_zone(&m->vngs[g],
                                                                                 f->zones[z]);
    }
    f->gtypes_off[m->nvngs] = ng;
    /* pods: extended resources no type offers, template classes */
    for (uint32_t i = 0; i < k->npods; i++) {
        f->pod_cls[i] = BERTH_KUBE_NONE;
        for (uint32_t r = BERTH_KRES_FIRST_EXT; r < k->nres; r++)
            if (r != s->gpu && k->pods[i].req[r] > 0)
                f->pod_ext[i] = 1;
    }
    char *sigs = NULL, *one = NULL;
    size_t nsigs = 0, capsigs = 0, none = 0, capone = 0;
    size_t *off = malloc(((size_t)np + 1) * sizeof *off);
    uint32_t *idx = malloc(((size_t)np + 1) * sizeof *idx);
    int rc = off && idx ? 0 : BERTH_ENOMEM;
    for (uint32_t i = 0; !rc && i < np; i++) {
        off[i] = nsigs;
        idx[i] = i;
        rc = pod_sig(&k->pods[pend[i]], &one, &none, &capone);
        if (!rc && berth_grow_bytes((void **)&sigs, &capsigs, nsigs + none + 1, 4096))
            rc = BERTH_ENOMEM;
        if (!rc) {
            memcpy(sigs + nsigs, one, none);
            nsigs += none;
        }
    }
    if (!rc && np) {
        off[np] = nsigs;
        sig_order so = {sigs, off};
        qsort_r(idx, np, sizeof *idx, cmp_sig, &so);
        f->cls_pod = malloc((size_t)np * sizeof *f->cls_pod);
        f->cache = calloc(np, sizeof *f->cache);
        f->gok = calloc(np, sizeof *f->gok);
        f->gfree = calloc(np, sizeof *f->gfree);
        if (!f->cls_pod || !f->cache || !f->gok || !f->gfree)
            rc = BERTH_ENOMEM;
        for (uint32_t i = 0; !rc && i < np; i++) {
            uint32_t x = idx[i];
            if (i == 0 || off[idx[i - 1] + 1] - off[idx[i - 1]] != off[x + 1] - off[x] ||
                memcmp(sigs + off[idx[i - 1]], sigs + off[x], off[x + 1] - off[x]))
                f->cls_pod[f->ncls++] = pend[x];
            f->pod_cls[pend[x]] = f->ncls - 1;
        }
    }
    free(sigs);
    free(one);
    free(off);
    free(idx);
    return rc;
}

int capacity_scale_up(capacity_pass *s, berth_error *e)
{
    const berth_autoscale *m = s->m;
    const berth_kcluster *k = &m->kube;
    berth_aplan *p = s->plan;
    uint32_t *pend = malloc((k->npods + 1) * sizeof *pend);
    uint32_t *placed = malloc((k->npods + 1) * sizeof *placed);
    const char **why = calloc(k->npods + 1, sizeof *why);
    uint32_t *rank = calloc(k->npods + 1, sizeof *rank);
    int *grp = malloc((k->npods + 1) * sizeof *grp);
    uint32_t *order = malloc((k->npods + 1) * sizeof *order);
    uint8_t *done = calloc(k->npods + 1, 1);
    p->on_existing = malloc((k->npods + 1) * sizeof *p->on_existing);
    p->on_existing_node = malloc((k->npods + 1) * sizeof *p->on_existing_node);
    upfast fast, *f = NULL;
    memset(&fast, 0, sizeof fast);
    int64_t *smin = NULL;
    uint32_t *live = NULL, *gcls = NULL, *head = NULL, *bucket = NULL;
    size_t head_extra = 0; /* head holds npods + 2 + head_extra entries */
    int *live_z = NULL;
    uint32_t *run_end = NULL;
    double *wpre = NULL;
    uint8_t *seen = NULL;
    packer pk;
    memset(&pk, 0, sizeof pk);
    /* the improvement step's work for the whole scale-up (all groups and rounds) */
    uint64_t imp_left = IMP_WORK + IMP_WORK_POD * (uint64_t)k->npods;
    int rc = 0, keep_msg = 0;
    if (!pend || !placed || !why || !rank || !grp || !order || !done || !p->on_existing ||
        !p->on_existing_node) {
        rc = BERTH_ENOMEM;
        goto out;
    }
    /* 1. pending pods onto existing nodes through the kube scheduler */
    uint32_t np = s->npending; /* found by capacity_pass_init, in pod order */
    if (np)
        memcpy(pend, s->pending, np * sizeof *pend);
    /* (the reasons of this step are not used: the rounds give their own) */
    if (s->reference) {
        if ((rc = capacity_schedule(s, pend, np, 0, placed, why)))
            goto out;
    } else {
        /* fast: a pod requesting more cpu or memory than any existing node
         * has free (or with no pod slot anywhere) fits none, and an
         * unplaced pod changes nothing for the others: it skips the
         * scheduler. order / rank serve as scratch here. */
        int64_t mx[3] = {-1, -1, -1};
        for (uint32_t n = 0; n < s->nexisting; n++) {
            const capacity_node *c = &s->n[n];
            if (c->removed || c->alloc_pods - c->npods < 1)
                continue;
            for (int r = 0; r < 2; r++)
                mx[r] = c->alloc[r] - c->req[r] > mx[r] ? c->alloc[r] - c->req[r] : mx[r];
        }
        uint32_t n1 = 0;
        for (uint32_t i = 0; i < np; i++) {
            const berth_kpod *kp = &k->pods[pend[i]];
            placed[i] = BERTH_KUBE_NONE;
            if (kp->req[BERTH_KRES_CPU] <= mx[0] && kp->req[BERTH_KRES_MEMORY] <= mx[1]) {
                rank[n1] = i;
                order[n1++] = pend[i];
            }
        }
        uint32_t *pl1 = malloc(((size_t)n1 + 1) * sizeof *pl1);
        if (!pl1 || (rc = capacity_schedule(s, order, n1, 0, pl1, NULL))) {
            free(pl1);
            rc = rc ? rc : BERTH_ENOMEM;
            goto out;
        }
        for (uint32_t i = 0; i < n1; i++)
            placed[rank[i]] = pl1[i];
        free(pl1);
    }
    if (!s->reference) {
        f = &fast;
        smin = malloc(((size_t)k->npods + 1) * 3 * sizeof *smin);
        live = malloc(((size_t)k->npods + 1) * sizeof *live);
        live_z = malloc(((size_t)k->npods + 1) * sizeof *live_z);
        run_end = malloc(((size_t)k->npods + 1) * sizeof *run_end);
        wpre = malloc(((size_t)k->npods + 2) * sizeof *wpre);
        head = malloc(((size_t)k->npods + 2) * sizeof *head);
        bucket = malloc(((size_t)k->npods + 1) * sizeof *bucket);
        if (!smin || !live || !live_z || !run_end || !wpre || !head || !bucket || (rc = upfast_init(f, s, pend, np))) {
            rc = BERTH_ENOMEM;
            goto out;
        }
        gcls = malloc(((size_t)f->ncls + 1) * sizeof *gcls);
        seen = calloc((size_t)f->ncls + 1, 1);
        if (!gcls || !seen) {
            rc = BERTH_ENOMEM;
            goto out;
        }
    }
    uint32_t nleft = 0;
    for (uint32_t i = 0; i < np; i++) {
        if (placed[i] != BERTH_KUBE_NONE) {
            capacity_place(s, pend[i], placed[i]);
            p->on_existing[p->non_existing] = pend[i];
            p->on_existing_node[p->non_existing++] = placed[i];
        } else if (capacity_daemon_unplaced(s, pend[i], &rc)) {
            if (rc)
                goto out;
        } else {
            rank[pend[i]] = nleft;
            pend[nleft++] = pend[i];
        }
    }
    /* 2. rounds: group, pack, confirm with the scheduler */
    for (uint32_t round = 0; round < MAX_ROUNDS && nleft; round++) {
        uint32_t first_new = s->nn;
        for (uint32_t i = 0; i < nleft; i++) {
            char w[256];
            grp[i] = group_for(s, f, pend[i], w, sizeof w);
            if (grp[i] < 0 && (rc = add_unsched(s, pend[i], w)))
                goto out;
        }
        for (uint32_t g = 0; g < m->nvngs; g++) {
            struct memo *memo = pk.memo;
            uint32_t capmemo = pk.capmemo, capcand = pk.capcand;
            struct cand *cand = pk.cand;
            memset(&pk, 0, sizeof pk);
            pk = (packer){s, g, order, 0, done, {1, 1, 1}, NULL};
            pk.memo = memo;
            pk.capmemo = capmemo;
            pk.cand = cand;
            pk.capcand = capcand;
            pk.imp_left = &imp_left;
            for (uint32_t i = 0; i < nleft; i++)
                if (grp[i] == (int)g)
                    order[pk.n++] = pend[i];
            if (!pk.n)
                continue;
            set_norm(&pk);
            ffd_order fo = {&pk, rank};
            qsort_r(order, pk.n, sizeof *order, cmp_ffd, &fo);
            memset(done, 0, pk.n);
            if (f) {
                pk.f = f;
                pk.smin = smin;
                pk.live = live;
                pk.live_z = live_z;
                pk.gcls = gcls;
                for (uint32_t i = pk.n; i-- > 0;) {
                    const berth_kpod *kp = &k->pods[order[i]];
                    int64_t r[3] = {kp->req[BERTH_KRES_CPU], kp->req[BERTH_KRES_MEMORY],
                                    s->gpu != BERTH_KUBE_NONE ? kp->req[s->gpu] : 0};
                    for (int x = 0; x < 3; x++)
                        smin[i * 3 + x] = i + 1 < pk.n && smin[(i + 1) * 3 + x] < r[x]
                                              ? smin[(i + 1) * 3 + x] : r[x];
                    uint32_t c = f->pod_cls[order[i]];
                    if (c == BERTH_KUBE_NONE)
                        pk.ngcls = 65; /* no memo */
                    else if (!seen[c] && pk.ngcls <= 64) {
                        seen[c] = 1;
                        gcls[pk.ngcls++] = c;
                    }
                }
                pk.run_end = run_end;
                pk.wpre = wpre;
                wpre[0] = 0;
                for (uint32_t i = 0; i < pk.n; i++)
                    wpre[i + 1] = wpre[i] + weight(&pk, order[i]);
                for (uint32_t i = pk.n; i-- > 0;) {
                    const berth_kpod *a = &k->pods[order[i]];
                    const berth_kpod *b = i + 1 < pk.n ? &k->pods[order[i + 1]] : NULL;
                    uint32_t ca = f->pod_cls[order[i]];
                    int same = b && ca != BERTH_KUBE_NONE && ca == f->pod_cls[order[i + 1]] &&
                               f->pod_ext[order[i]] == f->pod_ext[order[i + 1]] &&
                               a->req[BERTH_KRES_CPU] == b->req[BERTH_KRES_CPU] &&
                               a->req[BERTH_KRES_MEMORY] == b->req[BERTH_KRES_MEMORY] &&
                               (s->gpu == BERTH_KUBE_NONE || a->req[s->gpu] == b->req[s->gpu]);
                    run_end[i] = same ? run_end[i + 1] : i + 1;
                }
                for (uint32_t i = 0; i < pk.ngcls && i <= 64 && pk.ngcls <= 64; i++)
                    seen[gcls[i]] = 0;
                if (pk.ngcls > 64)
                    memset(seen, 0, f->ncls);
            }
            if ((rc = pack_group(&pk, first_new)) || (rc = consolidate(&pk, first_new)))
                goto out;
        }
        /* confirm node by node: the scheduler places each new node's pods on
         * the existing nodes and the new nodes opened so far (fast: the
         * pods packed on each node, bucketed once; a node's pods only move
         * to nodes before it, so the buckets stay what the plain scan finds) */
        uint32_t nnext = 0;
        uint32_t nround = s->nn - first_new;
        if (f && (size_t)nround + 2 > (size_t)k->npods + 2 + head_extra) {
            /* consolidation's replaced nodes count too: more nodes than pods */
            uint32_t *nh = realloc(head, ((size_t)nround + 2) * sizeof *head);
            if (!nh) {
                rc = BERTH_ENOMEM;
                goto out;
            }
            head = nh;
            head_extra = (size_t)nround - k->npods;
        }
        if (f) {
            memset(head, 0, ((size_t)nround + 2) * sizeof *head);
            for (uint32_t i = 0; i < nleft; i++) {
                uint32_t n = s->pod_node[pend[i]];
                if (n != BERTH_KUBE_NONE && n >= first_new)
                    head[n - first_new + 2]++;
            }
            for (uint32_t i = 2; i < nround + 2; i++)
                head[i] += head[i - 1];
            for (uint32_t i = 0; i < nleft; i++) {
                uint32_t n = s->pod_node[pend[i]];
                if (n != BERTH_KUBE_NONE && n >= first_new)
                    bucket[head[n - first_new + 1]++] = pend[i];
            }
        }
        if (f && (rc = confirm_session(s, first_new, head, bucket, order, placed, e))) {
            keep_msg = rc != BERTH_ENOMEM;
            goto out;
        }
        for (uint32_t n = first_new; !f && n < s->nn; n++) {
            uint32_t cnt = 0;
            for (uint32_t i = 0; i < nleft; i++)
                if (s->pod_node[pend[i]] == n)
                    order[cnt++] = pend[i];
            for (uint32_t i = 0; i < cnt; i++)
                capacity_unplace(s, order[i]);
            if ((rc = capacity_schedule(s, order, cnt, n - s->nexisting + 1, placed, why)))
                goto out;
            for (uint32_t i = 0; i < cnt; i++) {
                if (placed[i] != BERTH_KUBE_NONE)
                    capacity_place(s, order[i], placed[i]);
            }
        }
        for (uint32_t n = first_new; n < s->nn; n++)
            if (!s->n[n].removed && !s->n[n].npods)
                drop_node(s, f, n);
        for (uint32_t i = 0; i < nleft; i++) {
            uint32_t pod = pend[i];
            int given_up = (s->pod_flags[pod] & CAPACITY_POD_UNSCHED) != 0;
            if (s->pod_node[pod] == BERTH_KUBE_NONE && !given_up)
                pend[nnext++] = pod;
        }
        if (nnext == nleft && round + 1 < MAX_ROUNDS) {
            /* no progress: the scheduler rejects them on fresh nodes too */
            if ((rc = capacity_schedule(s, pend, nnext, s->nn, placed, why)))
                goto out;
            for (uint32_t i = 0; i < nnext; i++)
                if ((rc = add_unsched(s, pend[i], why[i] ? why[i] : "no node fits")))
                    goto out;
            nnext = 0;
        }
        nleft = nnext;
    }
    for (uint32_t i = 0; i < nleft; i++)
        if ((rc = add_unsched(s, pend[i], "still pending after the scale-up rounds")))
            goto out;
    /* 3. headroom */
    for (uint32_t g = 0; g < m->nvngs; g++)
        if ((rc = top_up_headroom(s, f, g)) || (rc = headroom_repack(s, f, g)) ||
            (rc = hr_joint(s, f, g, BERTH_CT_SPOT)) || (rc = hr_joint(s, f, g, BERTH_CT_ON_DEMAND)))
            goto out;
    rc = report(s);
out:
    free(pk.memo);
    if (f)
        upfast_free(f);
    free(smin);
    free(live);
    free(live_z);
    free(run_end);
    free(wpre);
    free(pk.cand);
    free(gcls);
    free(seen);
    free(head);
    free(bucket);
    free(pend);
    free(placed);
    free(why);
    free(rank);
    free(grp);
    free(order);
    free(done);
    if (rc && !keep_msg)
        rc = berth_error_set(e, rc, "out of memory planning scale-up");
    return rc;
}

/* ---- exported for replacements and cluster-autoscaler mode (state.h) ---- */

int capacity_open_hosting(capacity_pass *s, uint32_t g, uint32_t *pods, uint32_t npods, int tier,
                          uint32_t *node, char *why, size_t size)
{
    static const berth_headroom per_cpu = {1, 0, 0, 1}; /* empty node: cost per millicore */
    packer k = {s, g, pods, npods, NULL, {1, 1, 1}, npods ? NULL : &per_cpu};
    k.need_all = 1;
    uint8_t *done = calloc(npods + 1, 1);
    if (!done)
        return BERTH_ENOMEM;
    k.done = done;
    set_norm(&k);
    for (uint32_t i = 1; i < npods; i++) { /* first-fit decreasing order, stable */
        uint32_t x = pods[i], j = i;
        while (j && weight(&k, pods[j - 1]) < weight(&k, x)) {
            pods[j] = pods[j - 1];
            j--;
        }
        pods[j] = x;
    }
    *why = 0;
    option o = tier < 0 ? choose(&k, 0, why, size) : pick(&k, tier, 0);
    free(done);
    free(k.memo);
    if (!o.ok) {
        if (tier >= 0 || !*why)
            snprintf(why, size, "no available %s%soffering of group %s can host its pods together",
                     tier >= 0 ? berth_capacity_type_name((berth_capacity_type)tier) : "",
                     tier >= 0 ? " " : "", s->m->vngs[g].name);
        return BERTH_ENOFIT;
    }
    *node = open_node(&k, &o);
    return *node == BERTH_KUBE_NONE ? BERTH_ENOMEM : 0;
}

int capacity_add_unsched(capacity_pass *s, uint32_t pod, const char *why)
{
    return add_unsched(s, pod, why);
}

int capacity_report_new_nodes(capacity_pass *s)
{
    return report(s);
}
