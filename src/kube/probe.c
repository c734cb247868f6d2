/* kube/probe.c - the warm one-pod scheduler (berth_kprobe, berth/kprobe.h):
 * one kube_loop over a cluster whose tail pods are slots; a question copies
 * its pod into the next slot, runs kube_loop_pod and un-assumes the pod
 * again (kube_unassume, the inverse the what-if session uses), so columns
 * and counters are back to the state built at open. */
#include "berth/kprobe.h"
#include "kube/state.h"

#include <stdlib.h>
#include <string.h>

struct berth_kprobe {
    berth_kcluster *k;
    berth_kube_options opt;
    kube_loop L;
    uint32_t first, next, end; /* slots first..end-1, next unused */
    const char *ns;
};

int berth_kprobe_open(berth_kprobe **out, berth_kcluster *k, const berth_kube_options *opt,
                      const berth_kpod *like, uint32_t nslots, berth_error *e)
{
    *out = NULL;
    berth_kprobe *p = calloc(1, sizeof *p);
    if (!p)
        return berth_error_set(e, BERTH_ENOMEM, "out of memory");
    uint64_t want = (uint64_t)k->npods + nslots;
    if (want > UINT32_MAX / 2) {
        free(p);
        return berth_error_set(e, BERTH_ELIMIT, "too many pods");
    }
    if (want > k->cappods) {
        berth_kpod *np = realloc(k->pods, (size_t)want * sizeof *np);
        if (!np) {
            free(p);
            return berth_error_set(e, BERTH_ENOMEM, "out of memory");
        }
        k->pods = np;
        k->cappods = (uint32_t)want;
    }
    berth_kpod slot = *like; /* copied first: like may point into k->pods */
    slot.node_name = NULL;
    slot.assumed = 0;
    p->first = p->next = k->npods;
    for (uint32_t i = 0; i < nslots; i++)
        k->pods[k->npods++] = slot;
    p->end = k->npods;
    p->k = k;
    p->ns = like->ns;
    p->opt = *opt;
    p->opt.preempt = 0;
    p->opt.threads = 0;
    p->opt.cancel = NULL;
    int rc = kube_loop_init(&p->L, k, &p->opt, 0, 0, e);
    if (rc) {
        k->npods = p->first;
        free(p);
        return rc;
    }
    *out = p;
    return 0;
}

uint32_t berth_kprobe_left(const berth_kprobe *p)
{
    return p->end - p->next;
}

static int same_ns(const char *a, const char *b)
{
    return !strcmp(a ? a : "", b ? b : "");
}

int berth_kprobe_run(berth_kprobe *p, const berth_kpod *pod, void *ctx, uint32_t *slot_out,
                     berth_error *e)
{
    if (p->next == p->end || pod->node_name || pod->terminating || !same_ns(pod->ns, p->ns))
        return berth_error_set(e, BERTH_EINVAL, "the probe cannot take this pod");
    uint32_t slot = p->next++;
    berth_kpod *sp = &p->k->pods[slot];
    *sp = *pod;
    sp->assumed = 0;
    sp->order = slot;
    *slot_out = slot;
    p->opt.ctx = ctx;
    uint32_t placed = BERTH_KUBE_NONE;
    int rc = kube_loop_pod(&p->L, slot, &placed, e);
    if (placed != BERTH_KUBE_NONE) {
        /* the question's answer only: the state goes back to the open's */
        int urc = kube_unassume(&p->L.s, slot, placed, 0);
        if (urc && !rc)
            rc = berth_error_set(e, urc, "out of memory");
    }
    sp->node_name = NULL;
    sp->assumed = 0;
    if (rc)
        p->next = p->end; /* a state after a failed cycle is not trusted */
    return rc;
}

void berth_kprobe_close(berth_kprobe *p)
{
    if (!p)
        return;
    kube_loop_free(&p->L);
    p->k->npods = p->first;
    free(p);
}
