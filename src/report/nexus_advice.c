/* report/nexus_advice.c - the `berth advise` table and JSON: max-fit
 * counts per SKU (overall, per rack, per zone set used in the input) and
 * the best-practice advice lines. */
#include "berth/advice.h"

#include <stdlib.h>
#include <string.h>

/* Zone sets used by pools in the input, as rack-index lists (deduplicated). */
typedef struct zoneset {
    const uint32_t *zones;
    uint32_t n;
} zoneset;

static uint32_t collect_zonesets(const berth_nexus *nx, zoneset *out, uint32_t cap)
{
    uint32_t n = 0;
    for (uint32_t p = 0; p < nx->npools; p++) {
        const berth_pool *pl = &nx->pools[p];
        if (!pl->nzones)
            continue;
        int dup = 0;
        for (uint32_t i = 0; i < n && !dup; i++)
            dup = out[i].n == pl->nzones &&
                  memcmp(out[i].zones, pl->zones, pl->nzones * sizeof *pl->zones) == 0;
        if (!dup && n < cap)
            out[n++] = (zoneset){pl->zones, pl->nzones};
    }
    return n;
}

/* The max-fit count of zone set z (the sum of its racks' counts in per)
 * and its name (its zones, berth_nexus_format_zones, in brackets) in buf. */
static uint64_t zoneset_fit(const berth_nexus *nx, const zoneset *z, const uint64_t *per,
                            char *buf, size_t size)
{
    uint64_t t = 0;
    for (uint32_t k = 0; k < z->n; k++)
        t += per[z->zones[k]];
    char inner[240];
    berth_nexus_format_zones(nx, z->zones, z->n, inner, sizeof inner);
    snprintf(buf, size, "[%s]", inner);
    return t;
}

static const char *kind_name(berth_advice_kind k)
{
    switch (k) {
    case BERTH_ADVICE_POOL_ZONES: return "PoolAvailabilityZones";
    case BERTH_ADVICE_CLUSTER_ORDER: return "ClusterOrder";
    case BERTH_ADVICE_POOL_ORDER: return "PoolOrder";
    case BERTH_ADVICE_CONTROL_PLANE_RACK: return "ControlPlaneRackMajority";
    case BERTH_ADVICE_REDUCE_COUNT: return "ReduceCountBeforeSku";
    }
    return "Advice";
}

int berth_report_nexus_advice_table(FILE *out, const berth_nexus *nx, const uint32_t *skus,
                                    uint32_t nskus, const berth_advice *adv, uint32_t nadv)
{
    zoneset zs[16];
    uint32_t nzs = collect_zonesets(nx, zs, 16);
    uint64_t *per = calloc(nx->nracks ? nx->nracks : 1, sizeof *per);
    if (!per)
        return BERTH_ENOMEM;
    fprintf(out, "Largest count of each SKU that fits now (site %s, %u racks, %u machines)\n",
            nx->site_name ? nx->site_name : "", nx->nracks, nx->nmachines);
    fprintf(out, "%-16s %8s  %-9s %s\n", "SKU", "fits", "best rack", "per zone set");
    for (uint32_t i = 0; i < nskus; i++) {
        uint32_t s = skus[i];
        uint64_t total = berth_nexus_max_fit(nx, s, per);
        uint32_t best = 0;
        for (uint32_t r = 1; r < nx->nracks; r++)
            if (per[r] > per[best])
                best = r;
        char bestbuf[64];
        snprintf(bestbuf, sizeof bestbuf, "%s:%llu", nx->nracks ? nx->racks[best].name : "-",
                 (unsigned long long)(nx->nracks ? per[best] : 0));
        fprintf(out, "%-16s %8llu  %-9s", nx->skus[s].name, (unsigned long long)total, bestbuf);
        for (uint32_t z = 0; z < nzs; z++) {
            char name[256];
            uint64_t t = zoneset_fit(nx, &zs[z], per, name, sizeof name);
            fprintf(out, " %s=%llu", name, (unsigned long long)t);
        }
        fprintf(out, "\n");
    }
    free(per);
    if (nadv) {
        fprintf(out, "\nAdvice (%u):\n", nadv);
        for (uint32_t i = 0; i < nadv; i++)
            fprintf(out, "  [%s] %s\n", kind_name(adv[i].kind), adv[i].message);
    } else {
        fprintf(out, "\nNo best-practice warnings.\n");
    }
    return 0;
}

json_t *berth_report_nexus_advice_json(const berth_nexus *nx, const uint32_t *skus, uint32_t nskus,
                                       const berth_advice *adv, uint32_t nadv)
{
    zoneset zs[16];
    uint32_t nzs = collect_zonesets(nx, zs, 16);
    uint64_t *per = calloc(nx->nracks ? nx->nracks : 1, sizeof *per);
    json_t *root = json_object(), *fits = json_array(), *advice = json_array();
    if (!per || !root || !fits || !advice) {
        free(per);
        json_decref(root);
        json_decref(fits);
        json_decref(advice);
        return NULL;
    }
    for (uint32_t i = 0; i < nskus; i++) {
        uint32_t s = skus[i];
        uint64_t total = berth_nexus_max_fit(nx, s, per);
        json_t *o = json_object(), *pr = json_object(), *pz = json_object();
        for (uint32_t r = 0; r < nx->nracks; r++)
            json_object_set_new(pr, nx->racks[r].name, json_integer((json_int_t)per[r]));
        for (uint32_t z = 0; z < nzs; z++) {
            char name[256];
            uint64_t t = zoneset_fit(nx, &zs[z], per, name, sizeof name);
            json_object_set_new(pz, name, json_integer((json_int_t)t));
        }
        json_object_set_new(o, "vmSkuName", json_string(nx->skus[s].name));
        json_object_set_new(o, "fits", json_integer((json_int_t)total));
        json_object_set_new(o, "perRack", pr);
        json_object_set_new(o, "perZoneSet", pz);
        json_array_append_new(fits, o);
    }
    for (uint32_t i = 0; i < nadv; i++) {
        json_t *o = json_object();
        json_object_set_new(o, "code", json_string(kind_name(adv[i].kind)));
        json_object_set_new(o, "cluster", adv[i].cluster == BERTH_NEXUS_NONE
                                              ? json_null()
                                              : json_string(nx->clusters[adv[i].cluster].name));
        json_object_set_new(o, "pool", adv[i].pool == BERTH_NEXUS_NONE
                                           ? json_null()
                                           : json_string(nx->pools[adv[i].pool].name));
        json_object_set_new(o, "message", json_string(adv[i].message));
        json_array_append_new(advice, o);
    }
    free(per);
    json_object_set_new(root, "maxFit", fits);
    json_object_set_new(root, "advice", advice);
    return root;
}
