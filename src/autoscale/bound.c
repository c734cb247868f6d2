/* autoscale/bound.c - the lower bound of scale-up's cost (docs/autoscale.md,
 * "Scale-up lower bound"): per virtual node group, the cheapest fractional
 * cover of the requests of the pods the plan put on the group's new nodes
 * by the group's instance types (cpu and memory together, a two-row linear
 * program solved exactly at its vertices; pods and GPUs each alone), less
 * what the group's reservations could hold for free. No plan of new nodes
 * for those pods in those groups costs less; the plan prints how far it is
 * above it. */
#include "autoscale/state.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

double capacity_lp_cover2(const double *c, const double *a0, const double *a1, uint32_t nt,
                          double d0, double d1, double pi[2])
{
    double best = INFINITY;
    pi[0] = pi[1] = 0;
    if (d0 <= 0 && d1 <= 0)
        return 0;
    /* vertices with one type: x_t = max(d0 / a0, d1 / a1) */
    for (uint32_t t = 0; t < nt; t++) {
        if ((d0 > 0 && a0[t] <= 0) || (d1 > 0 && a1[t] <= 0))
            continue;
        double x0 = d0 > 0 ? d0 / a0[t] : 0, x1 = d1 > 0 ? d1 / a1[t] : 0;
        double v = c[t] * (x0 > x1 ? x0 : x1);
        if (v < best) {
            best = v;
            pi[0] = x0 >= x1 ? c[t] / a0[t] : 0;
            pi[1] = x0 >= x1 ? 0 : c[t] / a1[t];
        }
    }
    /* vertices with two types, both rows tight */
    for (uint32_t t = 0; t < nt; t++)
        for (uint32_t u = t + 1; u < nt; u++) {
            double det = a0[t] * a1[u] - a0[u] * a1[t];
            if (fabs(det) < 1e-12 * (fabs(a0[t] * a1[u]) + fabs(a0[u] * a1[t]) + 1e-300))
                continue;
            double xt = (d0 * a1[u] - d1 * a0[u]) / det;
            double xu = (a0[t] * d1 - a1[t] * d0) / det;
            if (xt < 0 || xu < 0)
                continue;
            double v = c[t] * xt + c[u] * xu;
            if (v < best) {
                best = v;
                /* the dual: pi . a_t = c_t, pi . a_u = c_u */
                pi[0] = (c[t] * a1[u] - c[u] * a1[t]) / det;
                pi[1] = (a0[t] * c[u] - a0[u] * c[t]) / det;
            }
        }
    return best == INFINITY ? 0 : best;
}

/* Whether reservation r covers type t (by name or family). */
static int res_covers(const berth_reservation *r, const berth_instance_type *t)
{
    return r->instance_type ? !strcmp(r->instance_type, t->name) : !strcmp(r->family, t->family);
}

int capacity_scaleup_bound(const berth_autoscale *m, berth_aplan *p)
{
    p->up_cost = p->up_pods_cost = 0;
    for (uint32_t u = 0; u < p->nup; u++) {
        p->up_cost += (double)p->up[u].count * p->up[u].price;
        p->up_pods_cost += (double)(p->up[u].count - p->up[u].headroom_nodes) * p->up[u].price;
    }
    p->up_bound = 0;
    p->has_up_bound = 1;
    if (!p->nup)
        return 0;
    uint32_t gpu = BERTH_KUBE_NONE;
    for (uint32_t r = BERTH_KRES_FIRST_EXT; r < m->kube.nres; r++)
        if (!strcmp(m->kube.res_names[r], "nvidia.com/gpu"))
            gpu = r;
    double *c = malloc(((size_t)m->ntypes + 1) * 3 * sizeof *c);
    if (!c)
        return BERTH_ENOMEM;
    double *a0 = c + m->ntypes + 1, *a1 = a0 + m->ntypes + 1;
    for (uint32_t g = 0; g < m->nvngs; g++) {
        const berth_vng *v = &m->vngs[g];
        double d[4] = {0, 0, 0, 0}; /* cpu, memory, gpu, pods */
        int any = 0;
        for (uint32_t u = 0; u < p->nup; u++) {
            if (p->up[u].vng != g)
                continue;
            for (uint32_t i = 0; i < p->up[u].npods; i++) {
                const berth_kpod *kp = &m->kube.pods[p->up[u].pods[i]];
                d[0] += (double)kp->req[BERTH_KRES_CPU];
                d[1] += (double)kp->req[BERTH_KRES_MEMORY];
                d[2] += gpu != BERTH_KUBE_NONE ? (double)kp->req[gpu] : 0;
                d[3] += 1;
                any = 1;
            }
        }
        if (!any)
            continue;
        /* the group's types at their cheapest available allowed offering,
         * and the room its reservations could give for nothing */
        uint32_t nt = 0;
        double pods_per = INFINITY, gpu_per = INFINITY;
        for (uint32_t t = 0; t < m->ntypes; t++) {
            const berth_instance_type *it = &m->types[t];
            if (!capacity_vng_allows_type(v, it))
                continue;
            double price = INFINITY;
            for (uint32_t o = 0; o < it->nofferings; o++) {
                const berth_offering *of = &it->offerings[o];
                if (of->available && capacity_vng_allows_zone(v, of->zone) && of->price < price)
                    price = of->price;
            }
            if (price == INFINITY)
                continue;
            price = price > 0 ? price : 0;
            c[nt] = price;
            a0[nt] = (double)it->cpu;
            a1[nt] = (double)it->memory;
            nt++;
            if (it->pods > 0 && price / (double)it->pods < pods_per)
                pods_per = price / (double)it->pods;
            if (it->gpus > 0 && price / (double)it->gpus < gpu_per)
                gpu_per = price / (double)it->gpus;
        }
        for (uint32_t r = 0; r < m->nres; r++) {
            const berth_reservation *rv = &m->res[r];
            double units = 0, mx[4] = {0, 0, 0, 0}, od = INFINITY;
            for (uint32_t t = 0; t < m->ntypes; t++) {
                const berth_instance_type *it = &m->types[t];
                if (!capacity_vng_allows_type(v, it) || !res_covers(rv, it))
                    continue;
                mx[0] = fmax(mx[0], (double)it->cpu);
                mx[1] = fmax(mx[1], (double)it->memory);
                mx[2] = fmax(mx[2], (double)it->gpus);
                mx[3] = fmax(mx[3], (double)it->pods);
                const berth_offering *o = NULL;
                for (uint32_t x = 0; x < it->nofferings; x++)
                    if (it->offerings[x].capacity_type == BERTH_CT_ON_DEMAND &&
                        (!o || it->offerings[x].price < o->price))
                        o = &it->offerings[x];
                if (o && o->price < od)
                    od = o->price;
            }
            if (rv->count && v->utilize_reserved)
                units = (double)rv->count;
            else if (!rv->count && v->utilize_commitments)
                units = od > 0 && od < INFINITY ? rv->hourly_commitment / od : INFINITY;
            if (units == INFINITY) {
                d[0] = d[1] = d[2] = d[3] = 0;
                break;
            }
            for (int x = 0; x < 4; x++)
                d[x] = d[x] - units * mx[x] > 0 ? d[x] - units * mx[x] : 0;
        }
        double pi[2];
        double b = capacity_lp_cover2(c, a0, a1, nt, d[0], d[1], pi);
        if (d[3] > 0 && pods_per < INFINITY && d[3] * pods_per > b)
            b = d[3] * pods_per;
        if (d[2] > 0 && gpu_per < INFINITY && d[2] * gpu_per > b)
            b = d[2] * gpu_per;
        p->up_bound += b;
    }
    free(c);
    /* rounding: never above the plan it bounds */
    p->up_bound *= 1 - 1e-12;
    return 0;
}

int berth_aplan_above_bound(const berth_aplan *p, double *gap)
{
    *gap = 0;
    if (p->up_bound <= 0)
        return p->up_pods_cost <= 0;
    *gap = p->up_pods_cost > p->up_bound ? p->up_pods_cost / p->up_bound - 1 : 0;
    return 1;
}
