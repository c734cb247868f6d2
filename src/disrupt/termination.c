/* disrupt/termination.c - the termination flow of one tainted node, one
 * round per simulation step (SPEC 4.1 "Termination"): the pods waiting
 * for eviction (bound, not terminating, not mirror pods, not tolerating
 * karpenter.sh/disrupted:NoSchedule) are evicted in groups (non-critical
 * non-DaemonSet, non-critical DaemonSet, critical non-DaemonSet, critical
 * DaemonSet), a group only once every earlier group is gone; an eviction
 * needs its PodDisruptionBudget's allowance for the step (a pod matched by
 * two PDBs is never evicted; AlwaysAllow lets an unready pod go), and a
 * pod with an active do-not-disrupt is not evicted; both hold the drain.
 * At deletion + the NodeClaim's terminationGracePeriod the remaining
 * pods are deleted regardless. Work: O(pods on the node). */
#include "disrupt/timeline.h"

#include <stdio.h>
#include <string.h>

static const char *const group_names[4] = {"non-critical", "non-critical DaemonSet", "critical",
                                           "critical DaemonSet"};

static int is_daemonset(const berth_kpod *p)
{
    return p->owner_kind && !strcmp(p->owner_kind, "DaemonSet");
}

static int group_of(const berth_kpod *p)
{
    return (p->priority >= BERTH_DSIM_CRITICAL_PRIORITY ? 2 : 0) + is_daemonset(p);
}

/* Upstream's IsWaitingEviction: the pods a drain waits for. */
static int waiting(const disrupt_tl *t, uint32_t pod)
{
    const berth_kpod *p = &t->m->kube.pods[pod];
    static const berth_taint disrupted = {"karpenter.sh/disrupted", "", BERTH_EFFECT_NOSCHEDULE};
    return t->pod_state[pod] == DTL_POD_BOUND && !p->terminating && !t->m->pod_info[pod].mirror &&
           !berth_tolerations_tolerate(p->tols, p->ntols, &disrupted);
}

static int dnd_active(const disrupt_tl *t, uint32_t pod)
{
    const berth_dpod *x = &t->m->pod_info[pod];
    return berth_dpod_dnd_active(x, t->now);
}

/* Whether pod may be evicted now; consumes the PDB allowance. why (when
 * not NULL) gets the hold otherwise. */
static int may_evict(disrupt_tl *t, uint32_t pod, char *why, size_t size)
{
    const berth_kcluster *k = &t->m->kube;
    const berth_kpod *p = &k->pods[pod];
    if (dnd_active(t, pod)) {
        if (why)
            snprintf(why, size, "pod %s/%s has annotation karpenter.sh/do-not-disrupt", p->ns,
                     p->name);
        return 0;
    }
    int32_t b = t->pod_pdb[pod];
    if (b == -2) {
        if (why)
            snprintf(why, size, "pod %s/%s is matched by more than one PodDisruptionBudget",
                     p->ns, p->name);
        return 0;
    }
    if (b < 0)
        return 1;
    if (k->pdbs[b].always_allow && !t->m->pod_info[pod].ready)
        return 1; /* an unhealthy pod does not use the allowance */
    if (t->pdb_allow[b] <= 0) {
        if (why)
            snprintf(why, size, "PodDisruptionBudget %s/%s allows no more disruptions (pod %s)",
                     k->pdbs[b].ns, k->pdbs[b].name, p->name);
        return 0;
    }
    t->pdb_allow[b]--;
    return 1;
}

int disrupt_tl_drain(disrupt_tl *t, disrupt_tl_node *n, const uint32_t *pods, uint32_t npods,
                     int *empty)
{
    const berth_kcluster *k = &t->m->kube;
    const char *rname = n->reason >= 0 ? berth_dreason_name((berth_dreason)n->reason) : "Deleting";
    n->last_round = t->now;
    *empty = 0;
    int rc = 0;
    if (n->grace >= 0 && t->now >= n->deleted_at + n->grace) {
        const char *why = NULL;
        for (uint32_t i = 0; !rc && i < npods; i++) {
            uint32_t p = pods[i];
            if (!waiting(t, p))
                continue;
            if (!why && !(why = disrupt_tl_str(t, "%s: terminationGracePeriod of %llds elapsed, "
                                                  "pod deleted", rname, (long long)n->grace)))
                return BERTH_ENOMEM;
            if (!(rc = disrupt_tl_event(t, BERTH_DEV_EVICT, n->name, &k->pods[p], why)))
                rc = disrupt_tl_unbind(t, p, is_daemonset(&k->pods[p]));
        }
        n->held = NULL;
        *empty = 1;
        return rc;
    }
    int g = 4;
    for (uint32_t i = 0; i < npods; i++)
        if (waiting(t, pods[i]) && group_of(&k->pods[pods[i]]) < g)
            g = group_of(&k->pods[pods[i]]);
    if (g == 4) {
        n->held = NULL;
        *empty = 1;
        return 0;
    }
    const char *why = NULL;
    char hold[240] = "";
    uint32_t left = 0;
    for (uint32_t i = 0; !rc && i < npods; i++) {
        uint32_t p = pods[i];
        if (!waiting(t, p))
            continue;
        char w[200];
        if (group_of(&k->pods[p]) != g || !may_evict(t, p, hold[0] ? NULL : w, sizeof w)) {
            if (group_of(&k->pods[p]) == g && !hold[0])
                snprintf(hold, sizeof hold, "drain held: %s", w);
            left++;
            continue;
        }
        if (!why && !(why = disrupt_tl_str(t, "%s: eviction group %d (%s)", rname, g + 1,
                                           group_names[g])))
            return BERTH_ENOMEM;
        if (!(rc = disrupt_tl_event(t, BERTH_DEV_EVICT, n->name, &k->pods[p], why)))
            rc = disrupt_tl_unbind(t, p, is_daemonset(&k->pods[p]));
    }
    if (rc)
        return rc;
    *empty = left == 0;
    if (!hold[0]) {
        n->held = NULL;
        return 0;
    }
    char full[400];
    if (n->grace >= 0) {
        snprintf(full, sizeof full, "%s; its pods are deleted %llds after the node's deletion",
                 hold, (long long)n->grace);
    } else {
        snprintf(full, sizeof full, "%s; the NodeClaim has no terminationGracePeriod", hold);
    }
    if (!n->held || strcmp(n->held, full))
        if (!(n->held = disrupt_tl_str(t, "%s", full)))
            return BERTH_ENOMEM;
    return 0;
}
