/* autoscale/plan.c - one autoscaler pass (SPEC 5): the working state
 * (existing nodes with their groups, capacity types, zones and requested
 * columns; pods per node; reservations left after the nodes that use
 * them; new nodes), the what-if scheduling view over the kube scheduler,
 * the static template check for new nodes, headroom accounting, the
 * market score, and the entry point (scale-up, then scale-down). */
#include "autoscale/state.h"

#include "berth/grow.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

double berth_market_score(const berth_offering *o, int64_t zone_nodes, int64_t min_zone_nodes)
{
    int64_t skew = zone_nodes > min_zone_nodes ? zone_nodes - min_zone_nodes : 0;
    return o->price * (1.0 + o->interruption_rate) * (1.0 + 0.1 * (double)skew);
}

static int taint_present(const berth_knode *n, const berth_taint *t)
{
    for (uint32_t i = 0; i < n->ntaints; i++)
        if (!strcmp(n->taints[i].key, t->key) && n->taints[i].effect == t->effect &&
            !strcmp(n->taints[i].value ? n->taints[i].value : "", t->value ? t->value : ""))
            return 1;
    return 0;
}

int berth_autoscale_node_vng(const berth_autoscale *m, uint32_t node)
{
    const berth_knode *n = &m->kube.nodes[node];
    const char *v = berth_labels_get(&n->labels, BERTH_VNG_LABEL);
    int best = -1;
    for (uint32_t g = 0; g < m->nvngs; g++) {
        const berth_vng *x = &m->vngs[g];
        if (v) {
            if (!strcmp(x->name, v))
                return (int)g;
            continue;
        }
        int ok = 1;
        for (uint32_t i = 0; ok && i < x->labels.n; i++) {
            const char *nv = berth_labels_get(&n->labels, x->labels.items[i].key);
            ok = nv && !strcmp(nv, x->labels.items[i].value);
        }
        for (uint32_t i = 0; ok && i < x->ntaints; i++)
            ok = taint_present(n, &x->taints[i]);
        if (ok && (best < 0 || strcmp(x->name, m->vngs[best].name) < 0))
            best = (int)g;
    }
    return best;
}

static int node_capacity_type(const berth_knode *n)
{
    const char *c = berth_labels_get(&n->labels, "karpenter.sh/capacity-type");
    if (c)
        return berth_capacity_type_parse(c);
    c = berth_labels_get(&n->labels, "spotinst.io/node-lifecycle");
    if (c && !strcmp(c, "spot"))
        return BERTH_CT_SPOT;
    if (c && !strcmp(c, "od"))
        return BERTH_CT_ON_DEMAND;
    return -1;
}

static int res_matches_type(const berth_reservation *r, const berth_instance_type *t)
{
    return r->instance_type ? !strcmp(r->instance_type, t->name) : !strcmp(r->family, t->family);
}

static int grow_nodes(capacity_pass *s, uint32_t need)
{
    uint32_t cap = s->capn, cap2 = s->capn, cap3 = s->capn;
    if (berth_grow((void **)&s->n, &cap, need, sizeof *s->n, 1u << 24) ||
        berth_grow((void **)&s->node_res, &cap2, need, sizeof *s->node_res, 1u << 24) ||
        berth_grow((void **)&s->node_res_cost, &cap3, need, sizeof *s->node_res_cost, 1u << 24))
        return BERTH_ENOMEM;
    s->capn = cap;
    return 0;
}

void capacity_place(capacity_pass *s, uint32_t pod, uint32_t n)
{
    const berth_kpod *p = &s->m->kube.pods[pod];
    capacity_node *c = &s->n[n];
    c->req[0] += p->req[BERTH_KRES_CPU];
    c->req[1] += p->req[BERTH_KRES_MEMORY];
    if (s->gpu != BERTH_KUBE_NONE)
        c->req[2] += p->req[s->gpu];
    c->npods++;
    s->pod_node[pod] = n;
}

void capacity_unplace(capacity_pass *s, uint32_t pod)
{
    uint32_t n = s->pod_node[pod];
    if (n == BERTH_KUBE_NONE)
        return;
    const berth_kpod *p = &s->m->kube.pods[pod];
    capacity_node *c = &s->n[n];
    c->req[0] -= p->req[BERTH_KRES_CPU];
    c->req[1] -= p->req[BERTH_KRES_MEMORY];
    if (s->gpu != BERTH_KUBE_NONE)
        c->req[2] -= p->req[s->gpu];
    c->npods--;
    s->pod_node[pod] = BERTH_KUBE_NONE;
}

int capacity_vng_allows_type(const berth_vng *v, const berth_instance_type *t)
{
    if (!v->ntypes)
        return 1;
    for (uint32_t i = 0; i < v->ntypes; i++)
        if (!strcmp(v->types[i], t->name))
            return 1;
    return 0;
}

int capacity_vng_allows_zone(const berth_vng *v, const char *zone)
{
    if (!v->nzones)
        return 1;
    for (uint32_t i = 0; i < v->nzones; i++)
        if (!strcmp(v->zones[i], zone))
            return 1;
    return 0;
}

int64_t capacity_zone_nodes(const capacity_pass *s, const char *zone)
{
    if (s->cnt) {
        uint32_t z = berth_nameidx_find(&s->cnt->zones, zone);
        if (z != BERTH_NAMEIDX_NONE)
            return s->cnt->zone_nodes[z];
    }
    int64_t c = 0;
    for (uint32_t i = 0; i < s->nn; i++)
        c += !s->n[i].removed && s->n[i].zone && !strcmp(s->n[i].zone, zone);
    return c;
}

void capacity_group_counts(const capacity_pass *s, uint32_t g, int64_t *spot, int64_t *nonres)
{
    if (s->cnt) {
        *spot = s->cnt->spot[g];
        *nonres = s->cnt->nonres[g];
        return;
    }
    *spot = *nonres = 0;
    for (uint32_t i = 0; i < s->nn; i++)
        if (!s->n[i].removed && s->n[i].vng == (int)g && s->n[i].ct != BERTH_CT_RESERVED) {
            (*nonres)++;
            *spot += s->n[i].ct == BERTH_CT_SPOT;
        }
}

/* Zone `zone` in c (added at 0 when new): 0 or BERTH_ENOMEM. */
static int counts_zone(capacity_counts *c, const char *zone)
{
    uint32_t n = c->zones.n;
    if (!zone)
        return 0;
    int r = berth_nameidx_add(&c->zones, zone, n, NULL);
    if (r < 0 || (!r && berth_grow((void **)&c->zone_nodes, &c->capzones, n + 1,
                                   sizeof *c->zone_nodes, 0)))
        return BERTH_ENOMEM;
    return 0;
}

/* Node x joins (d = 1) or leaves (d = -1) the counts c. */
static void counts_add(capacity_counts *c, const capacity_node *x, int d)
{
    uint32_t z = x->zone ? berth_nameidx_find(&c->zones, x->zone) : BERTH_NAMEIDX_NONE;
    if (z != BERTH_NAMEIDX_NONE)
        c->zone_nodes[z] += d;
    if (x->vng >= 0 && x->ct != BERTH_CT_RESERVED) {
        c->nonres[x->vng] += d;
        c->spot[x->vng] += x->ct == BERTH_CT_SPOT ? d : 0;
    }
}

int capacity_counts_build(const capacity_pass *s, capacity_counts *c)
{
    const berth_autoscale *m = s->m;
    memset(c, 0, sizeof *c);
    c->spot = calloc(m->nvngs + 1, sizeof *c->spot);
    c->nonres = calloc(m->nvngs + 1, sizeof *c->nonres);
    if (!c->spot || !c->nonres)
        return BERTH_ENOMEM;
    /* the zones: the offerings' (new nodes take theirs), then the nodes' */
    for (uint32_t t = 0; t < m->ntypes; t++)
        for (uint32_t o = 0; o < m->types[t].nofferings; o++)
            if (counts_zone(c, m->types[t].offerings[o].zone))
                return BERTH_ENOMEM;
    for (uint32_t i = 0; i < s->nn; i++) {
        if (s->n[i].removed)
            continue;
        if (counts_zone(c, s->n[i].zone))
            return BERTH_ENOMEM;
        counts_add(c, &s->n[i], 1);
    }
    return 0;
}

void capacity_counts_free(capacity_counts *c)
{
    berth_nameidx_free(&c->zones);
    free(c->zone_nodes);
    free(c->spot);
    free(c->nonres);
    memset(c, 0, sizeof *c);
}

void capacity_counts_add(capacity_pass *s, uint32_t n, int d)
{
    if (s->cnt)
        counts_add(s->cnt, &s->n[n], d);
}

/* Labels of a node of group g, type t, zone, ct, named name, into buf
 * (sorted; room for capacity_template_label_cap labels). */
static berth_labels template_labels(const berth_autoscale *m, uint32_t g, uint32_t t,
                                    const char *zone, int ct, const char *name, berth_label *buf)
{
    const berth_vng *v = &m->vngs[g];
    uint32_t n = 0;
    const char *keys[6] = {BERTH_VNG_LABEL, "node.kubernetes.io/instance-type",
                           "topology.kubernetes.io/zone", "karpenter.sh/capacity-type",
                           "kubernetes.io/hostname", "spotinst.io/node-lifecycle"};
    const char *vals[6] = {v->name, m->types[t].name, zone,
                           berth_capacity_type_name((berth_capacity_type)ct), name,
                           ct == BERTH_CT_SPOT ? "spot" : "od"};
    for (int i = 0; i < 6; i++)
        buf[n++] = (berth_label){keys[i], vals[i]};
    for (uint32_t i = 0; i < v->labels.n; i++) {
        int dup = 0;
        for (int j = 0; j < 6; j++)
            dup |= !strcmp(keys[j], v->labels.items[i].key);
        if (!dup)
            buf[n++] = v->labels.items[i];
    }
    /* then the instance type's labels (spec.labels and the ones derived
     * from its name, berth/instance.h) on keys not set yet */
    const berth_labels *tl = &m->types[t].labels;
    for (uint32_t i = 0; i < tl->n; i++) {
        int dup = 0;
        for (uint32_t j = 0; j < n && !dup; j++)
            dup = !strcmp(buf[j].key, tl->items[i].key);
        if (!dup)
            buf[n++] = tl->items[i];
    }
    berth_labels l = {buf, n};
    berth_labels_sort(&l);
    return l;
}

uint32_t capacity_template_label_cap(const berth_autoscale *m, uint32_t g, uint32_t t)
{
    return m->vngs[g].labels.n + 6 + m->types[t].labels.n;
}

berth_labels capacity_template_labels(const berth_autoscale *m, uint32_t g, uint32_t t,
                                      const char *zone, int ct, const char *name, berth_label *buf)
{
    return template_labels(m, g, t, zone, ct, name, buf);
}

static int pod_affinity_matches(const berth_kpod *p, const berth_labels *l)
{
    for (uint32_t i = 0; i < p->node_selector.n; i++) {
        const char *v = berth_labels_get(l, p->node_selector.items[i].key);
        if (!v || strcmp(v, p->node_selector.items[i].value))
            return 0;
    }
    if (!p->has_req_affinity)
        return 1;
    for (uint32_t t = 0; t < p->nreq_terms; t++) {
        const berth_kterm *term = &p->req_terms[t];
        /* empty, on the name of a node not yet made, or not parsing (matches nothing) */
        if (!term->nexprs || term->nfields || term->invalid)
            continue;
        int ok = 1;
        for (uint32_t e = 0; ok && e < term->nexprs; e++)
            ok = berth_requirement_matches(&term->exprs[e], l);
        if (ok)
            return 1;
    }
    return 0;
}

int capacity_template_match(capacity_pass *s, uint32_t g, uint32_t t, const char *zone, int ct,
                            uint32_t pod, char *why, size_t size)
{
    const berth_autoscale *m = s->m;
    const berth_vng *v = &m->vngs[g];
    const berth_kpod *p = &m->kube.pods[pod];
    const berth_taint *bad = berth_taints_first_untolerated(v->taints, v->ntaints, p->tols,
                                                            p->ntols, BERTH_EFFECT_MASK_HARD);
    if (bad) {
        if (why)
            snprintf(why, size, "untolerated taint {%s: %s}", bad->key, bad->value ? bad->value : "");
        return 0;
    }
    berth_labels l = template_labels(m, g, t, zone, ct, "new-node", s->lab);
    if (!pod_affinity_matches(p, &l)) {
        if (why)
            snprintf(why, size, "nodeSelector or required node affinity does not match its labels");
        return 0;
    }
    /* PersistentVolume zones (VolumeZone on the new node's labels: its zone
     * is the offering's; region constraints count only when the group's
     * labels set a region) */
    if ((p->vol_error || p->nvol_zones) &&
        !berth_kube_volume_zone_fits(p, &l, 1, why, why ? size : 0))
        return 0;
    return 1;
}

int capacity_template_hosts(capacity_pass *s, uint32_t g, uint32_t t, const char *zone, int ct,
                            uint32_t pod, char *why, size_t size)
{
    if (!capacity_template_match(s, g, t, zone, ct, pod, why, size))
        return 0;
    const berth_autoscale *m = s->m;
    int64_t fr[4]; /* the type's allocatable less its DaemonSet pods (daemons.c) */
    capacity_template_free(s, g, t, zone, ct, fr);
    const berth_kpod *p = &m->kube.pods[pod];
    int64_t gpu = s->gpu != BERTH_KUBE_NONE ? p->req[s->gpu] : 0;
    const char *short_of = p->req[BERTH_KRES_CPU] > fr[0] ? "cpu"
                           : p->req[BERTH_KRES_MEMORY] > fr[1] ? "memory"
                           : gpu > fr[2] ? "nvidia.com/gpu"
                           : fr[3] < 1 ? "pods" : NULL;
    for (uint32_t r = BERTH_KRES_FIRST_EXT; !short_of && r < m->kube.nres; r++)
        if (r != s->gpu && p->req[r] > 0)
            short_of = m->kube.res_names[r];
    if (short_of) {
        if (why)
            snprintf(why, size, "requests more %s than an instance type offers", short_of);
        return 0;
    }
    return 1;
}

uint32_t capacity_new_node(capacity_pass *s, uint32_t g, uint32_t t, const char *zone, int ct)
{
    const berth_autoscale *m = s->m;
    if (grow_nodes(s, s->nn + 1))
        return BERTH_KUBE_NONE;
    char name[160];
    snprintf(name, sizeof name, "%s-new-%llu", m->vngs[g].name,
             (unsigned long long)++s->new_serial);
    const char *nm = berth_arena_strdup(s->arena, name);
    berth_label *buf = berth_arena_alloc(s->arena, capacity_template_label_cap(m, g, t) * sizeof *buf);
    berth_knode *hyp = berth_arena_alloc(s->arena, sizeof *hyp);
    if (!nm || !buf || !hyp)
        return BERTH_KUBE_NONE;
    uint32_t i = s->nn++;
    capacity_node *c = &s->n[i];
    memset(c, 0, sizeof *c);
    c->hyp = hyp;
    s->node_res[i] = -1;
    s->node_res_cost[i] = 0;
    const berth_instance_type *it = &m->types[t];
    c->hyp->name = nm;
    c->hyp->labels = template_labels(m, g, t, zone, ct, nm, buf);
    c->hyp->taints = m->vngs[g].taints;
    c->hyp->ntaints = m->vngs[g].ntaints;
    c->hyp->alloc[BERTH_KRES_CPU] = it->cpu;
    c->hyp->alloc[BERTH_KRES_MEMORY] = it->memory;
    c->hyp->alloc[BERTH_KRES_EPHEMERAL] = INT64_MAX / 4;
    if (s->gpu != BERTH_KUBE_NONE)
        c->hyp->alloc[s->gpu] = it->gpus;
    c->hyp->alloc_pods = it->pods;
    c->hyp->any_region = 1; /* VolumeZone: in the cluster's region (docs/autoscale.md) */
    c->is_new = 1;
    c->vng = (int)g;
    c->ct = ct;
    c->zone = zone;
    c->type = (int)t;
    c->alloc[0] = it->cpu;
    c->alloc[1] = it->memory;
    c->alloc[2] = it->gpus;
    c->alloc_pods = it->pods;
    capacity_daemon_reserve(s, i);
    s->vng_nodes[g]++;
    capacity_counts_add(s, i, 1);
    return i;
}

static int cmp_type_name(const void *a, const void *b, void *ctx)
{
    const berth_autoscale *sort_m = ctx;
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    int c = strcmp(sort_m->types[x].name, sort_m->types[y].name);
    return c ? c : (x > y) - (x < y); /* equal names: the first as a scan finds it */
}

/* berth_instance_type_find through tidx (the types in name order) */
static int type_by_name(const berth_autoscale *m, const uint32_t *tidx, const char *name)
{
    uint32_t lo = 0, hi = m->ntypes;
    if (!name)
        return -1;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (strcmp(m->types[tidx[mid]].name, name) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < m->ntypes && !strcmp(m->types[tidx[lo]].name, name) ? (int)tidx[lo] : -1;
}

int capacity_pass_init(capacity_pass *s, const berth_autoscale *m, berth_aplan *plan)
{
    memset(s, 0, sizeof *s);
    s->m = m;
    s->plan = plan;
    s->arena = &plan->arena;
    const berth_kcluster *k = &m->kube;
    s->gpu = berth_kube_resource((berth_kcluster *)k, "nvidia.com/gpu", 0);
    uint32_t maxlab = 0, maxtl = 0;
    for (uint32_t g = 0; g < m->nvngs; g++)
        maxlab = m->vngs[g].labels.n > maxlab ? m->vngs[g].labels.n : maxlab;
    for (uint32_t t = 0; t < m->ntypes; t++)
        maxtl = m->types[t].labels.n > maxtl ? m->types[t].labels.n : maxtl;
    s->caplab = maxlab + 6 + maxtl;
    s->lab = malloc(s->caplab * sizeof *s->lab);
    s->pod_node = malloc((k->npods + 1) * sizeof *s->pod_node);
    s->pod_flags = malloc(k->npods + 1);
    s->res_left = calloc(m->nres + 1, sizeof *s->res_left);
    s->vng_nodes = calloc(m->nvngs + 1, sizeof *s->vng_nodes);
    if (!s->lab || !s->pod_node || !s->pod_flags || !s->res_left || !s->vng_nodes ||
        grow_nodes(s, k->nnodes + 1))
        return BERTH_ENOMEM;
    for (uint32_t r = 0; r < m->nres; r++)
        s->res_left[r] = m->res[r].count ? (double)m->res[r].count : m->res[r].hourly_commitment;
    s->nexisting = s->nn = k->nnodes;
    /* instance types by name, for one binary search per node instead of a
     * scan */
    uint32_t *tidx = malloc((m->ntypes + 1) * sizeof *tidx);
    if (!tidx)
        return BERTH_ENOMEM;
    for (uint32_t t = 0; t < m->ntypes; t++)
        tidx[t] = t;
    qsort_r(tidx, m->ntypes, sizeof *tidx, cmp_type_name, (void *)m);
    for (uint32_t i = 0; i < k->nnodes; i++) {
        capacity_node *c = &s->n[i];
        const berth_knode *kn = &k->nodes[i];
        memset(c, 0, sizeof *c);
        c->k = kn;
        c->vng = berth_autoscale_node_vng(m, i);
        c->ct = node_capacity_type(kn);
        c->zone = berth_labels_get(&kn->labels, "topology.kubernetes.io/zone");
        c->type = type_by_name(m, tidx, berth_labels_get(&kn->labels,
                                                         "node.kubernetes.io/instance-type"));
        c->alloc[0] = kn->alloc[BERTH_KRES_CPU];
        c->alloc[1] = kn->alloc[BERTH_KRES_MEMORY];
        c->alloc[2] = s->gpu != BERTH_KUBE_NONE ? kn->alloc[s->gpu] : 0;
        c->alloc_pods = kn->alloc_pods;
        if (c->vng >= 0)
            s->vng_nodes[c->vng]++;
        /* reservations: reserved and on-demand nodes use matching ones, in order */
        s->node_res[i] = -1;
        s->node_res_cost[i] = 0;
        if (c->type >= 0 && (c->ct == BERTH_CT_RESERVED || c->ct == BERTH_CT_ON_DEMAND))
            for (uint32_t r = 0; r < m->nres && s->node_res[i] < 0; r++) {
                const berth_reservation *rv = &m->res[r];
                if (!res_matches_type(rv, &m->types[c->type]) ||
                    (rv->zone && (!c->zone || strcmp(rv->zone, c->zone))))
                    continue;
                const berth_offering *od =
                    c->zone ? berth_instance_offering(&m->types[c->type], c->zone, BERTH_CT_ON_DEMAND)
                            : NULL;
                double cost = rv->count ? 1.0 : od ? od->price : 0;
                if (s->res_left[r] + 1e-9 >= cost && cost > 0) {
                    s->res_left[r] -= cost;
                    s->node_res[i] = (int)r;
                    s->node_res_cost[i] = cost;
                }
            }
    }
    free(tidx);
    /* bound pods and node_by_name: existing nodes by name through a keyed
     * index (the first of equal names, as a scan finds it): linear, where
     * a sort and a binary search per node read names at random */
    if (berth_nameidx_reserve(&s->node_idx, k->nnodes))
        return BERTH_ENOMEM;
    for (uint32_t i = 0; i < k->nnodes; i++)
        if (berth_nameidx_add(&s->node_idx, k->nodes[i].name, i, NULL) < 0)
            return BERTH_ENOMEM;
    uint32_t last = BERTH_KUBE_NONE; /* pods come grouped by node: the previous pod's node first */
    for (uint32_t p = 0; p < k->npods; p++) {
        s->pod_node[p] = BERTH_KUBE_NONE;
        const berth_apod *ap = &m->pod_info[p];
        s->pod_flags[p] = (uint8_t)((capacity_movable(m, p) ? CAPACITY_POD_MOVABLE : 0) |
                                    (ap->restrict_scale_down ? CAPACITY_POD_RESTRICT : 0) |
                                    (ap->safe_to_evict == 0 ? CAPACITY_POD_NOT_SAFE : 0));
        const char *nn = k->pods[p].node_name;
        if (!nn && !k->pods[p].terminating) {
            if (berth_grow((void **)&s->pending, &s->cappending, s->npending + 1,
                           sizeof *s->pending, 0))
                return BERTH_ENOMEM;
            s->pending[s->npending++] = p;
        }
        if (!nn || k->pods[p].terminating)
            continue;
        /* the loader shares the node's name string with its pods (kube/load.c) */
        if (last != BERTH_KUBE_NONE &&
            (k->nodes[last].name == nn || !strcmp(k->nodes[last].name, nn))) {
            capacity_place(s, p, last);
            continue;
        }
        uint32_t n = berth_nameidx_find(&s->node_idx, nn);
        if (n < k->nnodes)
            capacity_place(s, p, last = n);
    }
    return 0;
}

void capacity_pass_free(capacity_pass *s)
{
    capacity_daemons_free(s);
    berth_nameidx_free(&s->node_idx);
    free(s->n);
    free(s->node_res);
    free(s->node_res_cost);
    free(s->pod_node);
    free(s->pod_flags);
    free(s->pending);
    free(s->res_left);
    free(s->vng_nodes);
    free(s->lab);
    memset(s, 0, sizeof *s);
}

/* name -> capacity node index among the view's nodes (linear over new
 * nodes, which are few; existing nodes through the pass's name index) */
static uint32_t node_by_name(const capacity_pass *s, const char *name, uint32_t new_end)
{
    for (uint32_t i = s->nexisting; i < new_end; i++)
        if (s->n[i].hyp->name == name || !strcmp(s->n[i].hyp->name, name))
            return i;
    uint32_t n = berth_nameidx_find(&s->node_idx, name);
    return n < s->nexisting ? n : BERTH_KUBE_NONE;
}

int capacity_schedule(capacity_pass *s, const uint32_t *pending, uint32_t npending,
                      uint32_t new_limit, uint32_t *placed, const char **why)
{
    const berth_kcluster *k = &s->m->kube;
    uint32_t new_end = s->nexisting + new_limit;
    if (new_end > s->nn)
        new_end = s->nn;
    uint8_t *excl = calloc(k->nnodes + 1, 1);
    uint32_t *pn = malloc((k->npods + 1) * sizeof *pn);
    berth_knode *extra = malloc((s->nn - s->nexisting + 1) * sizeof *extra);
    uint32_t *pend = malloc((npending + k->npods + 1) * sizeof *pend);
    const char **bind = calloc(npending + k->npods + 1, sizeof *bind);
    const char **names = calloc(npending + k->npods + 1, sizeof *names);
    const char **whys = why ? calloc(npending + k->npods + 1, sizeof *whys) : NULL;
    int rc = 0;
    if (!excl || !pn || !extra || !pend || !bind || !names || (why && !whys)) {
        rc = BERTH_ENOMEM;
        goto out;
    }
    for (uint32_t i = 0; i < s->nexisting; i++)
        excl[i] = (uint8_t)s->n[i].removed;
    uint32_t nextra = 0, np = 0;
    for (uint32_t i = s->nexisting; i < new_end; i++)
        if (!s->n[i].removed)
            extra[nextra++] = *s->n[i].hyp;
    for (uint32_t i = 0; i < npending; i++)
        pend[np++] = pending[i];
    for (uint32_t p = 0; p < k->npods; p++) {
        uint32_t n = s->pod_node[p];
        pn[p] = n != BERTH_KUBE_NONE && n < s->nexisting ? n : BERTH_KUBE_NONE;
        if (n != BERTH_KUBE_NONE && n >= s->nexisting && n < new_end && !s->n[n].removed) {
            bind[np] = s->n[n].hyp->name;
            pend[np++] = p;
        }
    }
    if (!np)
        goto out; /* nothing to schedule: no view to build (the cluster's
                   * whole kube state, O(nodes + pods)) */
    /* new nodes lose exact ties to existing ones, as in the fast paths'
     * what-if sessions (their spare slots come after the real nodes) */
    berth_kview v = {excl, pn, extra, nextra, pend, np, bind, NULL, s->cancel, 1};
    berth_error e;
    rc = berth_kube_schedule_view(k, &v, names, whys, s->arena, &e);
    for (uint32_t i = 0; !rc && i < npending; i++) {
        placed[i] = names[i] ? node_by_name(s, names[i], new_end) : BERTH_KUBE_NONE;
        if (why)
            why[i] = whys[i];
    }
out:
    free(excl);
    free(pn);
    free(extra);
    free(pend);
    free(bind);
    free(names);
    free(whys);
    return rc;
}

int64_t capacity_headroom_gap(const capacity_pass *s, uint32_t g, uint32_t spec, int64_t *held)
{
    const berth_headroom *h = &s->m->vngs[g].headroom[spec];
    int64_t units = 0;
    for (uint32_t i = 0; i < s->nn; i++) {
        const capacity_node *c = &s->n[i];
        if (c->removed || c->vng != (int)g)
            continue;
        int64_t u = INT64_MAX;
        const int64_t per[3] = {h->cpu, h->memory, h->gpu};
        for (int r = 0; r < 3; r++)
            if (per[r] > 0) {
                int64_t f = c->alloc[r] - c->req[r];
                int64_t x = f > 0 ? f / per[r] : 0;
                u = x < u ? x : u;
            }
        units += u == INT64_MAX ? 0 : u;
    }
    if (held)
        *held = units;
    return units - h->units;
}

void berth_aplan_free(berth_aplan *p)
{
    capacity_free_plan_extras(p); /* replace.c: replacements, evicted pods */
    for (uint32_t i = 0; i < p->nup; i++) {
        free(p->up[i].pods);
        free(p->up[i].nodes);
    }
    for (uint32_t i = 0; i < p->ndown; i++)
        free(p->down[i].moves);
    free(p->up);
    free(p->down);
    free(p->unsched);
    free(p->blocked);
    free(p->on_existing);
    free(p->on_existing_node);
    berth_arena_free(&p->arena);
    memset(p, 0, sizeof *p);
}

int berth_autoscale_plan(const berth_autoscale *m, const berth_aplan_options *opt,
                         berth_aplan *out, berth_error *e)
{
    memset(out, 0, sizeof *out);
    berth_arena_init(&out->arena, 0);
    out->at = opt->now;
    capacity_pass s;
    int rc = capacity_pass_init(&s, m, out);
    if (rc)
        rc = berth_error_set(e, rc, "out of memory");
    s.reference = opt->reference;
    s.cancel = opt->cancel;
    s.threads = opt->threads;
    int ca = opt->policy == BERTH_POLICY_CLUSTER_AUTOSCALER; /* ca.c; else Ocean */
    if (!rc && !berth_cancel_expired(opt->cancel))
        rc = ca ? capacity_ca_scale_up(&s, opt, e) : capacity_scale_up(&s, e);
    if (!rc && !berth_cancel_expired(opt->cancel))
        rc = ca ? capacity_ca_scale_down(&s, opt, e) : capacity_scale_down(&s, e);
    if (!rc && !ca && !berth_cancel_expired(opt->cancel))
        rc = capacity_replace(&s, opt, e);
    if (!rc && (rc = capacity_scaleup_bound(m, out)))
        rc = berth_error_set(e, rc, "out of memory");
    /* past the deadline nothing is kept, whatever a part made of the
     * stopped scheduling (bad options stay bad options) */
    if (rc != BERTH_EINVAL && berth_cancel_expired(opt->cancel))
        rc = berth_error_set(e, BERTH_ETIMEDOUT, "stopped at the deadline");
    capacity_pass_free(&s);
    if (rc)
        berth_aplan_free(out);
    return rc;
}
