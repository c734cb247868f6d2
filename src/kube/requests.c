/* kube/requests.c - a pod's effective requests and QoS class (SPEC 2.1,
 * 2.5 "Pod requests"): the plain request used by filtering and
 * BalancedAllocation, the "non-zero" request used by NodeResourcesFit's
 * scoring (100m cpu / 200Mi memory for a container without the key), and
 * GetPodQOS. A container's request for a resource is its request, or its
 * limit when only the limit is written (the API server's defaulting, so a
 * hand-written manifest is read the way the scheduler would see it). */
#include "berth/kube.h"

#include <string.h>

/* Request of container c for resource r after API defaulting; *has says
 * whether the key (request or limit) is present. */
static int64_t ct_request(const berth_kcontainer *c, uint32_t r, int *has)
{
    uint32_t bit = 1u << r;
    if (c->has_req & bit) {
        *has = 1;
        return c->req[r];
    }
    if (c->has_lim & bit) {
        *has = 1;
        return c->lim[r];
    }
    *has = 0;
    return 0;
}

/* The scoring variant: a missing cpu / memory key counts the defaults. */
static int64_t ct_request_nz(const berth_kcontainer *c, uint32_t r)
{
    int has;
    int64_t v = ct_request(c, r, &has);
    if (has)
        return v;
    if (r == BERTH_KRES_CPU)
        return BERTH_KUBE_DEFAULT_MILLI_CPU;
    if (r == BERTH_KRES_MEMORY)
        return BERTH_KUBE_DEFAULT_MEMORY;
    return 0;
}

static int64_t sat_add(int64_t a, int64_t b)
{
    if (b > 0 && a > INT64_MAX - b)
        return INT64_MAX;
    if (b < 0 && a < INT64_MIN - b)
        return INT64_MIN;
    return a + b;
}

/* podReq = max(sum of regular containers + sidecars, max over init
 * containers of (its request + sidecars declared before it)) + overhead. */
static int64_t pod_request(const berth_kpod *p, uint32_t r, int nz)
{
    int64_t sum = 0, sidecars = 0, init_max = 0;
    for (uint32_t i = 0; i < p->ncontainers; i++) {
        int has;
        int64_t v = nz ? ct_request_nz(&p->containers[i], r)
                       : ct_request(&p->containers[i], r, &has);
        sum = sat_add(sum, v);
    }
    for (uint32_t i = 0; i < p->ninit; i++) {
        const berth_kcontainer *c = &p->init[i];
        int has;
        int64_t v = nz ? ct_request_nz(c, r) : ct_request(c, r, &has);
        int64_t cost;
        if (c->sidecar) {
            sidecars = sat_add(sidecars, v);
            cost = sidecars;
        } else {
            cost = sat_add(v, sidecars);
        }
        if (cost > init_max)
            init_max = cost;
    }
    sum = sat_add(sum, sidecars);
    int64_t req = sum > init_max ? sum : init_max;
    return sat_add(req, p->overhead[r]);
}

/* GetPodQOS over init and regular containers: only non-zero cpu/memory
 * requests and limits count; Guaranteed needs cpu and memory limits on
 * every container and summed requests equal to summed limits. */
static berth_qos pod_qos(const berth_kpod *p)
{
    int64_t req[2] = {0, 0}, lim[2] = {0, 0};
    int has_req[2] = {0, 0}, has_lim[2] = {0, 0};
    int guaranteed = 1;
    for (uint32_t pass = 0; pass < 2; pass++) {
        const berth_kcontainer *cs = pass ? p->containers : p->init;
        uint32_t n = pass ? p->ncontainers : p->ninit;
        for (uint32_t i = 0; i < n; i++) {
            int lim_found[2] = {0, 0};
            for (uint32_t r = 0; r < 2; r++) {
                int has;
                int64_t v = ct_request(&cs[i], r, &has);
                if (has && v != 0) {
                    req[r] = sat_add(req[r], v);
                    has_req[r] = 1;
                }
                if ((cs[i].has_lim & (1u << r)) && cs[i].lim[r] != 0) {
                    lim[r] = sat_add(lim[r], cs[i].lim[r]);
                    has_lim[r] = 1;
                    lim_found[r] = 1;
                }
            }
            if (!lim_found[0] || !lim_found[1])
                guaranteed = 0;
        }
    }
    if (!has_req[0] && !has_req[1] && !has_lim[0] && !has_lim[1])
        return BERTH_QOS_BESTEFFORT;
    if (guaranteed) {
        for (uint32_t r = 0; r < 2; r++)
            if (has_req[r] && (!has_lim[r] || lim[r] != req[r]))
                guaranteed = 0;
        if (guaranteed && has_req[0] + has_req[1] == has_lim[0] + has_lim[1])
            return BERTH_QOS_GUARANTEED;
    }
    return BERTH_QOS_BURSTABLE;
}

void berth_kube_pod_requests(const berth_kcluster *k, berth_kpod *pod)
{
    uint32_t nres = k ? k->nres : BERTH_KUBE_MAX_RES;
    memset(pod->req, 0, sizeof pod->req);
    memset(pod->req_nz, 0, sizeof pod->req_nz);
    for (uint32_t r = 0; r < nres && r < BERTH_KUBE_MAX_RES; r++) {
        pod->req[r] = pod_request(pod, r, 0);
        if (r == BERTH_KRES_CPU || r == BERTH_KRES_MEMORY)
            pod->req_nz[r] = pod_request(pod, r, 1);
    }
    pod->demand[0] = pod->demand[1] = 0;
    pod->has_image = 0;
    for (uint32_t c = 0; c < pod->ncontainers; c++) {
        const berth_kcontainer *ct = &pod->containers[c];
        for (int r = 0; r < 2; r++)
            pod->demand[r] += ct->req[r] > ct->lim[r] ? ct->req[r] : ct->lim[r];
        pod->has_image |= ct->image != NULL;
    }
    for (uint32_t c = 0; c < pod->ninit; c++)
        pod->has_image |= pod->init[c].image != NULL;
    pod->qos = pod_qos(pod);
}
