/* kube/vsphere.c - vSphere Pod sizing (SPEC 2.3, seed 002).
 *
 * Per container and per metric (cpu, memory) the size is the default
 * container size (0.5 vCPU, 512 MiB) unless the container's request or
 * limit for that metric is larger, in which case the larger of the two is
 * used ("if a request or limit larger than the default is set, it sizes the
 * container"). The containers that run together count: regular containers
 * and sidecars (init containers with restartPolicy: Always); regular init
 * containers run before them and are not added. Pod size = sum + the
 * lifecycle margin; vCPUs are rounded up to whole vCPUs. The VM's
 * reservation is the sum of the same containers' requests (a request left
 * out defaults to the limit, as the API server does). 512 MB is taken as
 * 512 MiB (536870912 bytes): vSphere sizes VM memory in MiB. */
#include "berth/kube.h"

#include <string.h>

void berth_vsphere_default_opts(berth_vsphere_opts *o)
{
    memset(o, 0, sizeof *o);
    o->default_cpu_milli = 500;
    o->default_memory = 512LL * 1024 * 1024;
    o->margin_cpu_milli = 0;
    o->margin_memory = 0;
}

static int64_t add_sat(int64_t a, int64_t b)
{
    return b > 0 && a > INT64_MAX - b ? INT64_MAX : a + b;
}

static void size_container(const berth_kcontainer *c, const berth_vsphere_opts *o,
                           int64_t size[2], int64_t resv[2])
{
    const int64_t def[2] = {o->default_cpu_milli, o->default_memory};
    for (uint32_t r = 0; r < 2; r++) {
        int64_t s = def[r];
        uint32_t bit = 1u << r;
        if ((c->has_req & bit) && c->req[r] > s)
            s = c->req[r];
        if ((c->has_lim & bit) && c->lim[r] > s)
            s = c->lim[r];
        size[r] = add_sat(size[r], s);
        if (c->has_req & bit)
            resv[r] = add_sat(resv[r], c->req[r]);
        else if (c->has_lim & bit)
            resv[r] = add_sat(resv[r], c->lim[r]);
    }
}

void berth_kube_vsphere_size(const berth_kpod *pod, const berth_vsphere_opts *o,
                             berth_vsphere_size *out)
{
    berth_vsphere_opts def;
    if (!o) {
        berth_vsphere_default_opts(&def);
        o = &def;
    }
    int64_t size[2] = {0, 0}, resv[2] = {0, 0};
    for (uint32_t i = 0; i < pod->ncontainers; i++)
        size_container(&pod->containers[i], o, size, resv);
    for (uint32_t i = 0; i < pod->ninit; i++)
        if (pod->init[i].sidecar)
            size_container(&pod->init[i], o, size, resv);
    size[0] = add_sat(size[0], o->margin_cpu_milli);
    size[1] = add_sat(size[1], o->margin_memory);
    memset(out, 0, sizeof *out);
    out->vcpu = size[0] / 1000 + (size[0] % 1000 > 0);
    out->memory = size[1];
    out->reservation_cpu = resv[0];
    out->reservation_memory = resv[1];
}
