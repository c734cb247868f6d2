/* nexus/upgrade.c - the rack-by-rack runtime upgrade report (SPEC 1.5):
 * racks in alphanumeric order, machines of a rack re-imaged in batches of
 * maxUnavailable, per batch the machines and VMs down per cluster and pool,
 * control planes that lose quorum and pools that drop to zero. VMs are not
 * moved: they stop with their machine and start again on it, so the estate
 * is the same after the upgrade. */
#include "nexus/state.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* Natural order: digit runs compare as numbers ("2" < "10"). */
static int natural_cmp(const char *a, const char *b)
{
    while (*a && *b) {
        if (isdigit((unsigned char)*a) && isdigit((unsigned char)*b)) {
            while (*a == '0')
                a++;
            while (*b == '0')
                b++;
            size_t la = 0, lb = 0;
            while (isdigit((unsigned char)a[la]))
                la++;
            while (isdigit((unsigned char)b[lb]))
                lb++;
            if (la != lb)
                return la < lb ? -1 : 1;
            int c = strncmp(a, b, la);
            if (c)
                return c;
            a += la;
            b += lb;
            continue;
        }
        if (*a != *b)
            return (unsigned char)*a < (unsigned char)*b ? -1 : 1;
        a++;
        b++;
    }
    return *a ? 1 : *b ? -1 : 0;
}

static int rack_order(const void *x, const void *y, void *ctx)
{
    const berth_nexus *sort_nx = ctx;
    uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    int c = natural_cmp(sort_nx->racks[a].name, sort_nx->racks[b].name);
    return c ? c : (a < b ? -1 : a > b);
}

int berth_nexus_runtime_upgrade(berth_nexus *nx, berth_step *step, berth_error *e)
{
    const berth_update_strategy *us = &step->strategy;
    uint32_t *order = malloc((nx->nracks ? nx->nracks : 1) * sizeof *order);
    uint32_t *down_per_pool = calloc(nx->npools ? nx->npools : 1, sizeof *down_per_pool);
    uint32_t *live_per_pool = calloc(nx->npools ? nx->npools : 1, sizeof *live_per_pool);
    uint32_t *touched = malloc((nx->npools ? nx->npools : 1) * sizeof *touched);
    if (!order || !down_per_pool || !live_per_pool || !touched) {
        free(order);
        free(down_per_pool);
        free(live_per_pool);
        free(touched);
        return berth_error_set(e, BERTH_ENOMEM, "out of memory");
    }
    for (uint32_t r = 0; r < nx->nracks; r++)
        order[r] = r;
    qsort_r(order, nx->nracks, sizeof *order, rack_order, nx);
    for (uint32_t p = 0; p < nx->npools; p++)
        live_per_pool[p] = nx->pools[p].nvms;

    /* VMs per machine (CSR): mstart[m]..mstart[m+1] in mvms */
    uint32_t *mstart = calloc((size_t)nx->nmachines + 1, sizeof *mstart);
    uint32_t *mvms = malloc((nx->nvms ? nx->nvms : 1) * sizeof *mvms);
    if (!mstart || !mvms) {
        free(mstart);
        free(mvms);
        free(order);
        free(down_per_pool);
        free(live_per_pool);
        free(touched);
        return berth_error_set(e, BERTH_ENOMEM, "out of memory");
    }
    for (uint32_t v = 0; v < nx->nvms; v++)
        if (nx->vms[v].machine != BERTH_NEXUS_NONE)
            mstart[nx->vms[v].machine + 1]++;
    for (uint32_t m = 0; m < nx->nmachines; m++)
        mstart[m + 1] += mstart[m];
    for (uint32_t v = 0; v < nx->nvms; v++) {
        uint32_t m = nx->vms[v].machine;
        if (m != BERTH_NEXUS_NONE)
            mvms[mstart[m]++] = v;
    }
    for (uint32_t m = nx->nmachines; m > 0; m--)
        mstart[m] = mstart[m - 1];
    mstart[0] = 0;
    int64_t per_batch = us->max_unavailable > 0 ? us->max_unavailable : 32767;
    int64_t minute = 0;
    uint32_t cap = 0;
    for (uint32_t k = 0; k < nx->nracks; k++)
        cap += (uint32_t)((nx->racks[order[k]].nmachines + per_batch - 1) / per_batch);
    step->batches = berth_arena_alloc(&nx->arena, (cap ? cap : 1) * sizeof *step->batches);
    if (!step->batches) {
        free(order);
        free(down_per_pool);
        free(live_per_pool);
        free(touched);
        return berth_error_set(e, BERTH_ENOMEM, "out of memory");
    }
    step->nbatches = 0;
    int rc = 0;
    for (uint32_t k = 0; k < nx->nracks && !rc; k++) {
        const berth_rack *rk = &nx->racks[order[k]];
        uint32_t nb = (uint32_t)((rk->nmachines + per_batch - 1) / per_batch);
        for (uint32_t b = 0; b < nb; b++) {
            berth_upgrade_batch *bt = &step->batches[step->nbatches++];
            memset(bt, 0, sizeof *bt);
            bt->rack = order[k];
            bt->batch = b + 1;
            bt->nbatches = nb;
            if (b == 0)
                minute += us->wait_time_minutes; /* waitTimeMinutes before each rack */
            bt->start_minute = minute;
            uint32_t first = rk->first_machine + (uint32_t)(b * per_batch);
            uint32_t last = first + (uint32_t)per_batch;
            if (last > rk->first_machine + rk->nmachines)
                last = rk->first_machine + rk->nmachines;
            bt->machines_down = last - first;
            bt->first_machine = first;
            uint32_t ntouched = 0;
            for (uint32_t j = mstart[first]; j < mstart[last]; j++) {
                uint32_t v = mvms[j];
                uint32_t p = nx->vms[v].pool;
                if (down_per_pool[p]++ == 0)
                    touched[ntouched++] = p;
                bt->vms_down++;
            }
            if (us->count_success)
                bt->threshold_machines = (uint32_t)(us->threshold_value < (int64_t)bt->machines_down
                                                        ? us->threshold_value
                                                        : (int64_t)bt->machines_down);
            else
                bt->threshold_machines =
                    (uint32_t)((bt->machines_down * us->threshold_value + 99) / 100);
            bt->pool_down = berth_arena_alloc(&nx->arena, (ntouched ? ntouched : 1) * 3 * sizeof(uint32_t));
            bt->quorum_lost = berth_arena_alloc(&nx->arena, (ntouched ? ntouched : 1) * sizeof(uint32_t));
            bt->pools_zero = berth_arena_alloc(&nx->arena, (ntouched ? ntouched : 1) * sizeof(uint32_t));
            if (!bt->pool_down || !bt->quorum_lost || !bt->pools_zero) {
                rc = berth_error_set(e, BERTH_ENOMEM, "out of memory");
                break;
            }
            /* pools in id order for a stable report */
            for (uint32_t i = 1; i < ntouched; i++)
                for (uint32_t j = i; j > 0 && touched[j - 1] > touched[j]; j--) {
                    uint32_t t = touched[j];
                    touched[j] = touched[j - 1];
                    touched[j - 1] = t;
                }
            for (uint32_t i = 0; i < ntouched; i++) {
                uint32_t p = touched[i];
                const berth_pool *pl = &nx->pools[p];
                bt->pool_down[3 * bt->npool_down] = p;
                bt->pool_down[3 * bt->npool_down + 1] = down_per_pool[p];
                bt->pool_down[3 * bt->npool_down + 2] = live_per_pool[p];
                bt->npool_down++;
                if (pl->role == BERTH_ROLE_CONTROL_PLANE && 2 * down_per_pool[p] > live_per_pool[p])
                    bt->quorum_lost[bt->nquorum_lost++] = pl->cluster;
                if (down_per_pool[p] == live_per_pool[p])
                    bt->pools_zero[bt->npools_zero++] = p;
                down_per_pool[p] = 0;
            }
            if (bt->vms_down)
                minute += 10; /* cordon and drain: at most 10 minutes per node */
            minute += us->reimage_minutes;
        }
    }
    free(mstart);
    free(mvms);
    free(order);
    free(down_per_pool);
    free(live_per_pool);
    free(touched);
    if (rc)
        return rc;
    for (uint32_t i = 0; i < step->nbatches; i++)
        if (step->batches[i].nquorum_lost || step->batches[i].npools_zero)
            return 0; /* impact is reported, not a failure of the run */
    return 0;
}
