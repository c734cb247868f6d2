/* capacity/scaleup.c - scale-up (SPEC 5): pending pods that the kube
 * scheduler cannot put on an existing node go to a virtual node group that
 * can host them, and are bin-packed onto new nodes by first-fit
 * decreasing; each new node's instance type, zone and capacity type is
 * chosen in Ocean's purchase order (unused reservations, then spot by
 * berth's market score, then on-demand as fallback), then the kube
 * scheduler confirms every new node's pods; headroom is topped up last.
 * Algorithm and work bound: docs/autoscale.md. */
#include "capacity/state.h"

#include "berth/grow.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ROUNDS 16

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
} packer;

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
static double gain_of(packer *k, uint32_t t, const char *zone, int ct, uint32_t from)
{
    capacity_pass *s = k->s;
    const berth_instance_type *it = &s->m->types[t];
    int64_t freec[4] = {it->cpu, it->memory, it->gpus, it->pods};
    if (k->hr) {
        const int64_t per[3] = {k->hr->cpu, k->hr->memory, k->hr->gpu};
        int64_t u = INT64_MAX;
        for (int r = 0; r < 3; r++)
            if (per[r] > 0) {
                int64_t x = freec[r] / per[r];
                u = x < u ? x : u;
            }
        return u == INT64_MAX ? 0 : (double)u;
    }
    double g = 0;
    for (uint32_t i = from; i < k->n; i++) {
        uint32_t pod = k->order[i];
        if (k->done[i] || !fits_free(s, freec, pod))
            continue;
        if (i != from && !capacity_template_hosts(s, k->g, t, zone, ct, pod, NULL, 0))
            continue;
        take(s, freec, pod);
        g += weight(k, pod);
    }
    return g;
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

static int64_t min_zone_nodes(const capacity_pass *s, const berth_vng *v, int64_t fallback)
{
    int64_t mn = INT64_MAX;
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

/* Best option of tier `tier` (reserved / spot / on-demand) for a new node
 * hosting pod order[from] (pods mode) or headroom units. */
static option pick(packer *k, int tier, uint32_t from)
{
    capacity_pass *s = k->s;
    const berth_autoscale *m = s->m;
    const berth_vng *v = &m->vngs[k->g];
    option best = {0};
    int64_t zmin = tier == BERTH_CT_SPOT ? min_zone_nodes(s, v, 0) : 0;
    for (uint32_t t = 0; t < m->ntypes; t++) {
        const berth_instance_type *it = &m->types[t];
        if (!capacity_vng_allows_type(v, it))
            continue;
        for (uint32_t o = 0; o < it->nofferings; o++) {
            const berth_offering *of = &it->offerings[o];
            if (!of->available || !capacity_vng_allows_zone(v, of->zone))
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
            if (!k->hr && !capacity_template_hosts(s, k->g, t, of->zone, tier, k->order[from],
                                                   NULL, 0))
                continue;
            c.gain = gain_of(k, t, of->zone, tier, from);
            if (c.gain <= 0)
                continue;
            double cost = tier == BERTH_CT_SPOT
                              ? berth_market_score(of, capacity_zone_nodes(s, of->zone), zmin)
                              : c.price;
            /* reservations: zone spread breaks ties between free capacity */
            if (tier == BERTH_CT_RESERVED)
                cost = c.price + 1e-6 * (double)capacity_zone_nodes(s, of->zone);
            c.key = cost / c.gain;
            if (better(&c, &best, m))
                best = c;
        }
    }
    return best;
}

/* The purchase order for one new node of group g. */
static option choose(packer *k, uint32_t from, char *why, size_t size)
{
    capacity_pass *s = k->s;
    const berth_vng *v = &s->m->vngs[k->g];
    option o = pick(k, BERTH_CT_RESERVED, from);
    if (o.ok)
        return o;
    /* spotPercentage over the group's non-reserved nodes, counting this one */
    int64_t spot = 0, total = 0;
    for (uint32_t i = 0; i < s->nn; i++)
        if (!s->n[i].removed && s->n[i].vng == (int)k->g && s->n[i].ct != BERTH_CT_RESERVED) {
            total++;
            spot += s->n[i].ct == BERTH_CT_SPOT;
        }
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
    for (uint32_t i = 0; i < p->nunsched; i++)
        if (p->unsched[i].pod == pod)
            return 0;
    if (berth_grow((void **)&p->unsched, &p->capunsched, p->nunsched + 1, sizeof *p->unsched, 0))
        return BERTH_ENOMEM;
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
static int group_for(capacity_pass *s, uint32_t pod, char *why, size_t size)
{
    const berth_autoscale *m = s->m;
    int best = -1, best_spec = -1;
    char first[200] = "";
    for (uint32_t g = 0; g < m->nvngs; g++) {
        const berth_vng *v = &m->vngs[g];
        int hosts = 0;
        char w[160] = "no allowed instance type has an available offering in an allowed zone";
        for (uint32_t t = 0; !hosts && t < m->ntypes; t++) {
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
        if (!hosts) {
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
    if (best < 0)
        snprintf(why, size, "no virtual node group can host it (%s)",
                 m->nvngs ? first : "no VirtualNodeGroup given");
    return best;
}

static const packer *sort_k;
static const uint32_t *sort_rank;
static int cmp_ffd(const void *a, const void *b)
{
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
        for (uint32_t n = first_new; !placed && n < s->nn; n++) {
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
static void drop_node(capacity_pass *s, uint32_t n)
{
    capacity_node *c = &s->n[n];
    c->removed = 1;
    s->vng_nodes[c->vng]--;
    if (s->node_res[n] >= 0)
        s->res_left[s->node_res[n]] += s->node_res_cost[n];
    s->node_res[n] = -1;
}

static int top_up_headroom(capacity_pass *s, uint32_t g)
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
            char why[200];
            option o = choose(&k, 0, why, sizeof why);
            if (!o.ok)
                break;
            uint32_t n = open_node(&k, &o);
            if (n == BERTH_KUBE_NONE)
                return BERTH_ENOMEM;
            s->n[n].headroom_units = (int64_t)o.gain;
        }
    }
    return 0;
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
    for (uint32_t n = s->nexisting; n < s->nn; n++) {
        const capacity_node *c = &s->n[n];
        if (c->removed)
            continue;
        const char *res = s->node_res[n] >= 0 ? m->res[s->node_res[n]].name : NULL;
        uint32_t u = 0;
        while (u < p->nup && !group_key_eq(&p->up[u], c, res))
            u++;
        if (u == p->nup) {
            if (berth_grow((void **)&p->up, &p->capup, p->nup + 1, sizeof *p->up, 0))
                return BERTH_ENOMEM;
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
        if (!nn)
            return BERTH_ENOMEM;
        x->nodes = nn;
        x->nodes[x->count++] = c->hyp.name;
        x->headroom_units += c->headroom_units;
        for (uint32_t pod = 0; pod < m->kube.npods; pod++)
            if (s->pod_node[pod] == n) {
                uint32_t *q = realloc(x->pods, (x->npods + 1) * sizeof *q);
                if (!q)
                    return BERTH_ENOMEM;
                x->pods = q;
                x->pods[x->npods++] = pod;
            }
    }
    return 0;
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
    int rc = 0;
    if (!pend || !placed || !why || !rank || !grp || !order || !done || !p->on_existing ||
        !p->on_existing_node) {
        rc = BERTH_ENOMEM;
        goto out;
    }
    /* 1. pending pods onto existing nodes through the kube scheduler */
    uint32_t np = 0;
    for (uint32_t i = 0; i < k->npods; i++)
        if (!k->pods[i].node_name && !k->pods[i].terminating)
            pend[np++] = i;
    if ((rc = capacity_schedule(s, pend, np, 0, placed, why)))
        goto out;
    uint32_t nleft = 0;
    for (uint32_t i = 0; i < np; i++) {
        if (placed[i] != BERTH_KUBE_NONE) {
            capacity_place(s, pend[i], placed[i]);
            p->on_existing[p->non_existing] = pend[i];
            p->on_existing_node[p->non_existing++] = placed[i];
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
            grp[i] = group_for(s, pend[i], w, sizeof w);
            if (grp[i] < 0 && (rc = add_unsched(s, pend[i], w)))
                goto out;
        }
        for (uint32_t g = 0; g < m->nvngs; g++) {
            packer pk = {s, g, order, 0, done, {1, 1, 1}, NULL};
            for (uint32_t i = 0; i < nleft; i++)
                if (grp[i] == (int)g)
                    order[pk.n++] = pend[i];
            if (!pk.n)
                continue;
            set_norm(&pk);
            sort_k = &pk;
            sort_rank = rank;
            qsort(order, pk.n, sizeof *order, cmp_ffd);
            memset(done, 0, pk.n);
            if ((rc = pack_group(&pk, first_new)))
                goto out;
        }
        /* confirm node by node: the scheduler places each new node's pods on
         * the existing nodes and the new nodes opened so far */
        uint32_t nnext = 0;
        for (uint32_t n = first_new; n < s->nn; n++) {
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
                drop_node(s, n);
        for (uint32_t i = 0; i < nleft; i++) {
            uint32_t pod = pend[i];
            int given_up = 0;
            for (uint32_t u = 0; u < p->nunsched; u++)
                given_up |= p->unsched[u].pod == pod;
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
        if ((rc = top_up_headroom(s, g)))
            goto out;
    rc = report(s);
out:
    free(pend);
    free(placed);
    free(why);
    free(rank);
    free(grp);
    free(order);
    free(done);
    if (rc)
        rc = berth_error_set(e, rc, "out of memory planning scale-up");
    return rc;
}
