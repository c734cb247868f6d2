/* autoscale/daemons.c - DaemonSets on the autoscaler's new nodes and
 * DaemonSet pods among the pending pods (docs/autoscale.md "DaemonSets and
 * node overhead").
 *
 * A new node of group g, type t, zone and capacity type ct runs the
 * DaemonSet pods the DaemonSet controller would put there
 * (k8s_daemon_should_run on the template's labels and the group's taints);
 * their requests and pod slots come off the type's allocatable before any
 * pending pod is packed, as cluster-autoscaler's template NodeInfo carries
 * its DaemonSet pods (simulator/node_info_utils.go) and Ocean's virtual
 * nodes reserve room for them. The free room per (g, t, zone, ct) is
 * cached for the pass (scale-up asks for it per option and pod; zones are
 * found by their string's address first, no strcmp per question).
 *
 * Pending DaemonSet pods (a pod the controller pinned to an existing node
 * without room) get no new node: the DaemonSet controller creates its pod
 * for each new node itself (cluster-autoscaler
 * core/podlistprocessor/filter_out_daemon_sets.go; Karpenter
 * pkg/utils/pod IsProvisionable / IsOwnedByDaemonSet). */
#include "autoscale/state.h"

#include "k8s/k8s.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* cached free room of one template, [cpu, memory, gpu, pods] */
typedef struct ds_slot {
    int64_t v[4];
    uint8_t known;
} ds_slot;

struct capacity_daemons {
    int any;                      /* some DaemonSet may run on a new node */
    const char **zones;           /* distinct offering zones */
    uint32_t nz;
    ds_slot *slot;                /* [((g * ntypes + t) * nz + z) * 3 + ct], NULL: uncached */
    /* zone string address -> zone id (open addressing, at most half
     * full): offerings keep their own zone strings, so the questions'
     * zones are found by address, without a strcmp per question */
    const char **zp;
    uint32_t *zid;
    uint32_t zcap, zn;
};

static uint32_t zone_slot(const struct capacity_daemons *d, const char *zone)
{
    uint64_t h = (uint64_t)(uintptr_t)zone * 0x9E3779B97F4A7C15ull;
    uint32_t i = (uint32_t)(h >> 32) & (d->zcap - 1);
    while (d->zp[i] && d->zp[i] != zone)
        i = (i + 1) & (d->zcap - 1);
    return i;
}

/* The id of zone in d->zones (nz when none): by address, else by name
 * (then remembered while the table is at most half full). */
static uint32_t zone_id(struct capacity_daemons *d, const char *zone)
{
    uint32_t i = d->zcap ? zone_slot(d, zone) : 0;
    if (d->zcap && d->zp[i])
        return d->zid[i];
    uint32_t z = 0;
    while (z < d->nz && d->zones[z] != zone && strcmp(d->zones[z], zone))
        z++;
    if (d->zcap && 2 * (d->zn + 1) <= d->zcap) {
        d->zp[i] = zone;
        d->zid[i] = z;
        d->zn++;
    }
    return z;
}

/* too many templates: computed per call (O(DaemonSets)) */
#define DS_CACHE_BYTES (64u << 20)

static struct capacity_daemons *daemons(capacity_pass *s)
{
    if (s->ds)
        return s->ds;
    const berth_autoscale *m = s->m;
    struct capacity_daemons *d = calloc(1, sizeof *d);
    if (!d)
        return NULL;
    for (uint32_t c = 0; c < m->kube.ncontrollers && !d->any; c++)
        d->any = m->kube.controllers[c].type == BERTH_KCTL_DAEMONSET &&
                 !m->kube.controllers[c].terminating;
    if (d->any) {
        uint32_t cap = 0;
        for (uint32_t t = 0; t < m->ntypes; t++)
            cap += m->types[t].nofferings;
        d->zones = malloc((cap + 1) * sizeof *d->zones);
        if (!d->zones) {
            free(d);
            return NULL;
        }
        for (uint32_t t = 0; t < m->ntypes; t++)
            for (uint32_t o = 0; o < m->types[t].nofferings; o++) {
                const char *z = m->types[t].offerings[o].zone;
                uint32_t i = 0;
                while (i < d->nz && strcmp(d->zones[i], z))
                    i++;
                if (i == d->nz)
                    d->zones[d->nz++] = z;
            }
        /* every offering's zone address, and room for a few more */
        d->zcap = 64;
        while (d->zcap < 2 * (cap + 64))
            d->zcap *= 2;
        d->zp = calloc(d->zcap, sizeof *d->zp);
        d->zid = malloc(d->zcap * sizeof *d->zid);
        if (!d->zp || !d->zid) {
            free(d->zp);
            free(d->zid);
            d->zp = NULL;
            d->zid = NULL;
            d->zcap = 0; /* by name only */
        }
        for (uint32_t t = 0; d->zcap && t < m->ntypes; t++)
            for (uint32_t o = 0; o < m->types[t].nofferings; o++)
                zone_id(d, m->types[t].offerings[o].zone);
        size_t n = (size_t)m->nvngs * m->ntypes * (d->nz ? d->nz : 1) * 3;
        if (n * sizeof *d->slot <= DS_CACHE_BYTES)
            d->slot = calloc(n ? n : 1, sizeof *d->slot); /* NULL: uncached */
    }
    s->ds = d;
    return d;
}

void capacity_daemons_free(capacity_pass *s)
{
    if (!s->ds)
        return;
    free(s->ds->zones);
    free(s->ds->slot);
    free(s->ds->zp);
    free(s->ds->zid);
    free(s->ds);
    s->ds = NULL;
}

int capacity_daemons_any(capacity_pass *s)
{
    struct capacity_daemons *d = daemons(s);
    return !d || d->any; /* out of memory: take the careful path */
}

/* The template node of (g, t, zone, ct) for the DaemonSet rule: the
 * group's labels and taints, the type, zone and capacity type labels. */
static void ds_requests(capacity_pass *s, uint32_t g, uint32_t t, const char *zone, int ct,
                        int64_t *req, int64_t *n)
{
    const berth_autoscale *m = s->m;
    berth_knode nd;
    memset(&nd, 0, sizeof nd);
    nd.name = "new-node";
    nd.labels = capacity_template_labels(m, g, t, zone, ct, nd.name, s->lab);
    nd.taints = m->vngs[g].taints;
    nd.ntaints = m->vngs[g].ntaints;
    k8s_daemon_requests(&m->kube, &nd, req, n);
}

void capacity_template_free(capacity_pass *s, uint32_t g, uint32_t t, const char *zone, int ct,
                            int64_t out[4])
{
    const berth_instance_type *it = &s->m->types[t];
    out[0] = it->cpu;
    out[1] = it->memory;
    out[2] = it->gpus;
    out[3] = it->pods;
    struct capacity_daemons *d = daemons(s);
    if (!d || !d->any)
        return;
    ds_slot *x = NULL;
    if (d->slot && zone && ct >= 0 && ct < 3) {
        uint32_t z = zone_id(d, zone);
        if (z < d->nz)
            x = &d->slot[(((size_t)g * s->m->ntypes + t) * d->nz + z) * 3 + (size_t)ct];
    }
    if (x && x->known) {
        memcpy(out, x->v, sizeof x->v);
        return;
    }
    int64_t req[BERTH_KUBE_MAX_RES], n;
    ds_requests(s, g, t, zone, ct, req, &n);
    out[0] -= req[BERTH_KRES_CPU];
    out[1] -= req[BERTH_KRES_MEMORY];
    out[2] -= s->gpu != BERTH_KUBE_NONE ? req[s->gpu] : 0;
    out[3] -= n;
    for (int r = 0; r < 4; r++)
        out[r] = out[r] > 0 ? out[r] : 0;
    if (x) {
        memcpy(x->v, out, sizeof x->v);
        x->known = 1;
    }
}

int capacity_daemon_room(capacity_pass *s, uint32_t g, uint32_t t, const char *zone, int ct,
                         uint32_t pod)
{
    if (s->ds && !s->ds->any)
        return 1;
    int64_t fr[4];
    capacity_template_free(s, g, t, zone, ct, fr);
    const berth_kpod *p = &s->m->kube.pods[pod];
    int64_t gpu = s->gpu != BERTH_KUBE_NONE ? p->req[s->gpu] : 0;
    return p->req[BERTH_KRES_CPU] <= fr[0] && p->req[BERTH_KRES_MEMORY] <= fr[1] &&
           gpu <= fr[2] && fr[3] >= 1;
}

void capacity_daemon_reserve(capacity_pass *s, uint32_t i)
{
    capacity_node *c = &s->n[i];
    struct capacity_daemons *d = daemons(s);
    if (!c->is_new || (d && !d->any))
        return;
    k8s_daemon_reserve(&s->m->kube, c->hyp);
    c->alloc[0] = c->hyp->alloc[BERTH_KRES_CPU];
    c->alloc[1] = c->hyp->alloc[BERTH_KRES_MEMORY];
    c->alloc[2] = s->gpu != BERTH_KUBE_NONE ? c->hyp->alloc[s->gpu] : 0;
    c->alloc_pods = c->hyp->alloc_pods;
}

int capacity_daemon_unplaced(capacity_pass *s, uint32_t pod, int *rc)
{
    const berth_kpod *p = &s->m->kube.pods[pod];
    if (!k8s_pod_is_daemon(p))
        return 0;
    const char *target = k8s_daemon_target(p);
    char why[256];
    snprintf(why, sizeof why,
             "DaemonSet pod%s%s does not fit its node; the autoscaler adds no node for "
             "DaemonSet pods (a new node gets its own)",
             target ? " for node " : "", target ? target : "");
    *rc = capacity_add_unsched(s, pod, why);
    return 1;
}
