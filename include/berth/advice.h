/* berth/advice.h - Operator Nexus capacity advice (SPEC 1.7): the largest
 * count of each SKU that fits now, and warnings for the best practices:
 * avoid availabilityZones on agent pools, create larger clusters and pools
 * first (above all extra-large SKUs), reduce a pool's count before its SKU
 * on a capacity failure, and no control-plane majority in one rack.
 *
 * Threads: advice only reads the berth_nexus it is given; calls on distinct
 * models, or read-only calls on one model, may run concurrently. */
#ifndef BERTH_ADVICE_H
#define BERTH_ADVICE_H

#include <jansson.h>
#include <stdio.h>

#include "berth/nexus.h"

typedef enum berth_advice_kind {
    BERTH_ADVICE_POOL_ZONES,          /* agent pool pinned with availabilityZones */
    BERTH_ADVICE_CLUSTER_ORDER,       /* larger cluster created after a smaller one */
    BERTH_ADVICE_POOL_ORDER,          /* larger pool after a smaller one in a cluster */
    BERTH_ADVICE_CONTROL_PLANE_RACK,  /* control-plane majority in one rack */
    BERTH_ADVICE_REDUCE_COUNT,        /* failed pool: a smaller count fits */
} berth_advice_kind;

typedef struct berth_advice {
    berth_advice_kind kind;
    const char *code;       /* stable identifier, e.g. "PoolAvailabilityZones" */
    uint32_t cluster;       /* cluster id, BERTH_NEXUS_NONE when not about one */
    uint32_t pool;          /* pool id or BERTH_NEXUS_NONE */
    const char *message;    /* one line for humans */
} berth_advice;

/* Computes the advice for the model's current state (after berth_nexus_run).
 * *out is allocated in nx's arena. Returns 0 or BERTH_ENOMEM. */
int berth_nexus_advise(berth_nexus *nx, berth_advice **out, uint32_t *n);

/* Report: table / JSON of max-fit counts for the given SKUs plus advice. */
int berth_report_nexus_advice_table(FILE *out, const berth_nexus *nx, const uint32_t *skus,
                                    uint32_t nskus, const berth_advice *adv, uint32_t nadv);
json_t *berth_report_nexus_advice_json(const berth_nexus *nx, const uint32_t *skus, uint32_t nskus,
                                       const berth_advice *adv, uint32_t nadv);

#endif
