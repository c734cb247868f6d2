/* autoscale/podlists.c - the scale-down's per-node pod lists (sd_lists,
 * scaledown.h): which pods the pass has put on each existing node, as one
 * array per node in a shared pool.
 *
 * Why arrays: a node's list is read whole at each of its questions (its
 * candidates' checks, a worker's replay). Once pods have moved, a list
 * names pods from all over the pod table; read through links (a pod's
 * successor stored at the pod), each one is a cache miss that must end
 * before the next can start. Read from an array, the pods' indices are
 * known at once and their lines are fetched together
 * (docs/autoscale.md "Performance"). */
#include "autoscale/scaledown.h"
#include "berth/error.h"
#include "berth/grow.h"

#include <stdlib.h>
#include <string.h>

int sd_lists_init(sd_lists *l, const capacity_pass *s)
{
    const berth_kcluster *k = &s->m->kube;
    memset(l, 0, sizeof *l);
    l->nnodes = s->nexisting;
    l->node = calloc((size_t)s->nexisting + 1, sizeof *l->node);
    if (!l->node)
        return BERTH_ENOMEM;
    uint32_t total = 0;
    for (uint32_t p = 0; p < k->npods; p++)
        if (s->pod_node[p] < s->nexisting) {
            l->node[s->pod_node[p]].n++;
            total++;
        }
    if (berth_grow((void **)&l->pool, &l->cap, total + 1, sizeof *l->pool, 0)) {
        sd_lists_free(l);
        return BERTH_ENOMEM;
    }
    for (uint32_t n = 0; n < s->nexisting; n++) { /* exact spans, in node order */
        l->node[n].off = l->npool;
        l->node[n].cap = l->node[n].n;
        l->npool += l->node[n].n;
        l->node[n].n = 0;
    }
    for (uint32_t p = 0; p < k->npods; p++) /* each list in pod order */
        if (s->pod_node[p] < s->nexisting) {
            sd_span *sp = &l->node[s->pod_node[p]];
            l->pool[sp->off + sp->n++] = p;
        }
    return 0;
}

int sd_lists_add(sd_lists *l, uint32_t node, uint32_t pod)
{
    if (node >= l->nnodes)
        return BERTH_EINVAL;
    sd_span *sp = &l->node[node];
    if (sp->n == sp->cap) { /* full: the list moves to the pool's end, twice as large */
        uint32_t ncap = sp->cap ? sp->cap * 2 : 4;
        if (ncap <= sp->cap || l->npool > UINT32_MAX / 2 - ncap ||
            berth_grow((void **)&l->pool, &l->cap, l->npool + ncap, sizeof *l->pool, 0))
            return BERTH_ENOMEM;
        memcpy(l->pool + l->npool, l->pool + sp->off, (size_t)sp->n * sizeof *l->pool);
        sp->off = l->npool;
        sp->cap = ncap;
        l->npool += ncap;
    }
    l->pool[sp->off + sp->n++] = pod;
    return 0;
}

void sd_lists_free(sd_lists *l)
{
    free(l->node);
    free(l->pool);
    memset(l, 0, sizeof *l);
}
