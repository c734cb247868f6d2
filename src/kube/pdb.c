/* kube/pdb.c - PodDisruptionBudgets: which pods a budget selects and how
 * many disruptions it allows (policy/v1's disruption controller), for the
 * disruption and autoscaling planners. What counts as a healthy pod is the
 * caller's: the disruption planner counts Ready pods, the autoscaler takes
 * every pod as healthy. */
#include "berth/kube.h"

#include <string.h>

int berth_kpdb_matches(const berth_kpdb *b, const berth_kpod *p)
{
    return !strcmp(b->ns, p->ns) && berth_selector_matches(&b->selector, &p->labels);
}

int64_t berth_kpdb_desired(const berth_kpdb *b, int64_t expected)
{
    int64_t desired = 0;
    if (b->has_min_available)
        desired = b->min_pct ? (b->min_available * expected + 99) / 100 : b->min_available;
    else if (b->has_max_unavailable)
        desired = expected - (b->max_pct ? (b->max_unavailable * expected + 99) / 100
                                         : b->max_unavailable);
    return desired;
}

int64_t berth_kpdb_allowed(const berth_kpdb *b, int64_t expected, int64_t healthy)
{
    if (b->has_disruptions_allowed)
        return b->disruptions_allowed;
    int64_t a = healthy - berth_kpdb_desired(b, expected);
    return a > 0 ? a : 0;
}

int64_t berth_kpdb_count_allowed(const berth_kcluster *k, const berth_kpdb *b,
                                 int (*healthy)(const void *ctx, uint32_t pod), const void *ctx)
{
    if (b->has_disruptions_allowed)
        return b->disruptions_allowed;
    int64_t expected = 0, nhealthy = 0;
    for (uint32_t i = 0; i < k->npods; i++) {
        const berth_kpod *p = &k->pods[i];
        if (p->terminating || !berth_kpdb_matches(b, p))
            continue;
        expected++;
        nhealthy += healthy ? healthy(ctx, i) != 0 : 1;
    }
    return berth_kpdb_allowed(b, expected, nhealthy);
}
