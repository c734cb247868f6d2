/* nexus/place.c - NKS cluster placement over the shared pipeline: the
 * all-or-nothing cluster create (control plane first, then agent pools in
 * order), scale, add pool, delete, cordon, failure reasons, per-step table
 * rows, --explain output, and the timeline runner. */
#include "nexus/state.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define GiB (1024.0 * 1024 * 1024)

int berth_nexus_prepare(berth_nexus *nx, const berth_nexus_options *opt, berth_error *e)
{
    if (nx->state)
        return 0;
    if (!nx->have_site || nx->nmachines == 0)
        return berth_error_set(e, BERTH_EINVAL, "no Site: the input needs a Site document");
    nx->state = calloc(1, sizeof *nx->state);
    if (!nx->state)
        return berth_error_set(e, BERTH_ENOMEM, "out of memory");
    berth_nexus_state *st = nx->state;
    st->use_index = opt ? opt->use_index : 1;
    st->tiebreak = opt ? opt->tiebreak : BERTH_TIE_FIRST;
    int rc = berth_cycle_init(&st->cycle, nx->nmachines, 8, opt ? opt->seed : 0);
    if (!rc)
        rc = nexus_index_init(nx);
    if (rc) {
        nexus_state_free(nx);
        return berth_error_set(e, rc, "out of memory preparing %u machines", nx->nmachines);
    }
    return 0;
}

static berth_profile profile_for(const berth_nexus *nx)
{
    berth_profile p = *berth_nexus_profile();
    p.tiebreak = nx->state->tiebreak;
    return p;
}

uint32_t berth_nexus_rack_util_ppm(const berth_nexus *nx, uint32_t rack)
{
    if (nx->state)
        return nx->state->rack[rack].util;
    int64_t cap = 0, used = 0;
    const berth_rack *r = &nx->racks[rack];
    for (uint32_t m = r->first_machine; m < r->first_machine + r->nmachines; m++)
        for (uint32_t c = 0; c < nx->machines[m].ncells; c++) {
            cap += nx->cells[nx->machines[m].first_cell + c].cpu;
            used += nx->cells[nx->machines[m].first_cell + c].used_cpu;
        }
    return cap > 0 ? (uint32_t)((uint64_t)used * 1000000u / (uint64_t)cap) : 0;
}

/* ---- VM records ---- */

static int pool_push_vm(berth_pool *p, uint32_t vm)
{
    if (p->nvms >= p->capvms && nexus_grow((void **)&p->vms, &p->capvms, p->nvms + 1, sizeof *p->vms))
        return BERTH_ENOMEM;
    p->vms[p->nvms++] = vm;
    return 0;
}

/* Releases a placed VM: frees its cells and updates every counter. */
static void release_vm(berth_nexus *nx, uint32_t vm)
{
    berth_nexus_state *st = nx->state;
    berth_vm *v = &nx->vms[vm];
    if (v->machine == BERTH_NEXUS_NONE)
        return;
    berth_pool *p = &nx->pools[v->pool];
    nexus_req rq;
    nexus_req_for_pool(nx, v->pool, &rq);
    nexus_ctx_count(nx, vm, -1, 0);
    uint32_t m = v->machine;
    const berth_machine *mm = &nx->machines[m];
    for (uint32_t i = 0; i < mm->ncells; i++)
        if (v->cells_mask & (1u << i)) {
            nx->cells[mm->first_cell + i].used_cpu -= rq.cell_cpu;
            nx->cells[mm->first_cell + i].used_memory -= rq.cell_mem;
        }
    st->rack[mm->rack].used_cpu -= (int64_t)rq.cell_cpu * rq.ncells;
    if (rq.xl)
        st->mach[m].xl_cnt--;
    v->machine = BERTH_NEXUS_NONE;
    for (uint32_t i = p->nvms; i-- > 0;)
        if (p->vms[i] == vm) {
            memmove(p->vms + i, p->vms + i + 1, (p->nvms - i - 1) * sizeof *p->vms);
            p->nvms--;
            break;
        }
    nexus_machine_changed(nx, m);
}

static void print_explain(berth_nexus *nx, const char *vmname, nexus_req *rq)
{
    berth_nexus_state *st = nx->state;
    FILE *out = st->explain_out ? st->explain_out : stdout;
    const berth_profile *prof = berth_nexus_profile();
    berth_cycle *c = &st->cycle;
    berth_pick pk;
    berth_profile p = profile_for(nx);
    c->explain = 1;
    berth_pipeline_pick(&p, nx, rq, c, nx->nmachines, 0, &pk);
    c->explain = 0;
    const berth_pool *pool = &nx->pools[rq->pool];
    const berth_sku *sku = &nx->skus[rq->sku];
    fprintf(out, "explain %s (%s, %d host vCPU and %.0fGi in %s):\n", vmname, sku->name,
            sku->host_vcpu, (double)sku->memory / GiB,
            rq->ncells > 1 ? "two NUMA cells" : "one NUMA cell");
    fprintf(out, "  %u machines, %u feasible\n", nx->nmachines, pk.nfeasible);
    char buf[512];
    for (uint32_t f = 0; f < prof->nfilters; f++) {
        if (!c->reject_count[f])
            continue;
        uint32_t sample = BERTH_NEXUS_NONE;
        for (uint32_t m = 0; m < nx->nmachines; m++)
            if (c->first_reject[m] == f + 1) {
                sample = m;
                break;
            }
        buf[0] = 0;
        if (sample != BERTH_NEXUS_NONE)
            prof->filters[f]->reason(nx, rq, sample, buf, sizeof buf);
        fprintf(out, "  filter %-12s rejected %u machines (e.g. %s)\n", prof->filters[f]->name,
                c->reject_count[f], buf);
    }
    if (pk.chosen == BERTH_NO_CANDIDATE) {
        fprintf(out, "  no machine fits: the VM is not placed\n");
        return;
    }
    /* rank the feasible ones: show the winner and up to 4 runners-up */
    uint32_t n = pk.nfeasible, ns = prof->nscores;
    uint32_t shown[5];
    uint32_t nshown = 0;
    uint8_t *used = calloc(n, 1);
    if (!used)
        return;
    for (; nshown < 5 && nshown < n; nshown++) {
        uint32_t best = BERTH_NEXUS_NONE;
        for (uint32_t i = 0; i < n; i++) {
            if (used[i])
                continue;
            if (best == BERTH_NEXUS_NONE) {
                best = i;
                continue;
            }
            int cmp = 0;
            for (uint32_t j = 0; j < ns && !cmp; j++) {
                int64_t a = c->scores[(size_t)j * c->cap + i],
                        b = c->scores[(size_t)j * c->cap + best];
                cmp = a > b ? 1 : a < b ? -1 : 0;
            }
            if (cmp > 0)
                best = i;
        }
        used[best] = 1;
        shown[nshown] = best;
    }
    free(used);
    fprintf(out, "  ranking (higher wins, compared left to right; ties: lowest rack, machine):\n");
    fprintf(out, "    %-24s %-6s", "machine", "rack");
    for (uint32_t j = 0; j < ns; j++)
        fprintf(out, " %15s", prof->scores[j]->name);
    fprintf(out, "\n");
    for (uint32_t k = 0; k < nshown; k++) {
        uint32_t i = shown[k], m = c->feasible[i];
        fprintf(out, "  %s %-24s %-6s", k == 0 ? "*" : " ", nx->machines[m].name,
                nx->racks[nx->machines[m].rack].name);
        for (uint32_t j = 0; j < ns; j++)
            fprintf(out, " %15" PRId64, c->scores[(size_t)j * c->cap + i]);
        fprintf(out, "\n");
    }
    if (nshown > 1) {
        uint32_t a = shown[0], b = shown[1];
        const char *why = "the stable order (rack, then machine)";
        for (uint32_t j = 0; j < ns; j++)
            if (c->scores[(size_t)j * c->cap + a] != c->scores[(size_t)j * c->cap + b]) {
                why = prof->scores[j]->name;
                break;
            }
        fprintf(out, "  decided against %s by %s\n", nx->machines[c->feasible[b]].name, why);
    }
    fprintf(out, "  rules: RackSpread = -(VMs of pool %s in the rack); MachineSpread = -(VMs of "
                 "cluster %s on the machine); PackExtraLarge = 1 when an extra-large SKU meets "
                 "another cluster's extra-large VM; RackUtilisation = -(rack host vCPU used, ppm)\n",
            pool->name, nx->clusters[pool->cluster].name);
}

/* Places one more VM of pool; rq is the pool's request (nexus_req_for_pool)
 * and prof its profile, both made once per run of VMs. Returns 0,
 * BERTH_ENOFIT, or an error. */
static int place_vm(berth_nexus *nx, uint32_t pool, nexus_req *rqp, const berth_profile *prof,
                    uint32_t *vm_out)
{
    berth_nexus_state *st = nx->state;
    berth_pool *p = &nx->pools[pool];
    nexus_req rq = *rqp;
    if (st->explain_vm) {
        char name[256];
        snprintf(name, sizeof name, "%s-%s-%u", nx->clusters[p->cluster].name, p->name,
                 p->next_ordinal);
        if (strcmp(name, st->explain_vm) == 0) {
            print_explain(nx, name, &rq);
            if (st->explain_found)
                *st->explain_found = 1;
        }
    }
    berth_pick pk;
    int rc = berth_pipeline_place(prof, nx, &rq, &st->cycle, nx->nmachines, st->use_index, &pk);
    if (rc)
        return rc;
    if (nx->nvms >= nx->capvms &&
        nexus_grow((void **)&nx->vms, &nx->capvms, nx->nvms + 1, sizeof *nx->vms))
        return BERTH_ENOMEM;
    uint32_t vm = nx->nvms++;
    berth_vm *v = &nx->vms[vm];
    v->pool = pool;
    v->machine = pk.chosen;
    v->cell = rq.chosen_cell;
    v->cells_mask = rq.chosen_mask;
    v->ordinal = p->next_ordinal++;
    if (pool_push_vm(p, vm))
        return BERTH_ENOMEM;
    nexus_ctx_count(nx, vm, +1, 0);
    nexus_machine_changed(nx, pk.chosen);
    if (vm_out)
        *vm_out = vm;
    return 0;
}

/* Why the next VM of pool cannot be placed, from a full scan's counters. */
static const char *nofit_reason(berth_nexus *nx, uint32_t pool, uint32_t placed, uint32_t wanted)
{
    berth_nexus_state *st = nx->state;
    const berth_pool *p = &nx->pools[pool];
    const berth_sku *sku = &nx->skus[p->sku];
    nexus_req rq;
    nexus_req_for_pool(nx, pool, &rq);
    berth_profile prof = profile_for(nx);
    berth_pick pk;
    berth_pipeline_pick(&prof, nx, &rq, &st->cycle, nx->nmachines, 0, &pk);
    char zones[256];
    berth_nexus_format_zones(nx, p->zones, p->nzones, zones, sizeof zones);
    uint32_t inzone = nx->nmachines - st->cycle.reject_count[2];
    char buf[1024];
    snprintf(buf, sizeof buf,
             "pool %s: placed %u of %u %s VMs; no machine%s%s%s has a NUMA cell with %d host "
             "vCPU and %.0fGi free (%u machines %s: %u cordoned or down, %u without room)",
             p->name, placed, wanted, sku->name, p->nzones ? " in availabilityZones [" : "",
             zones, p->nzones ? "]" : "", rq.cell_cpu, (double)rq.cell_mem / GiB,
             p->nzones ? inzone : nx->nmachines, p->nzones ? "in those racks" : "in the site",
             st->cycle.reject_count[0], st->cycle.reject_count[1]);
    if (p->nzones) {
        /* filters run in order sched, numa, zones: recount within zones */
        uint32_t down = 0, full = 0;
        for (uint32_t m = 0; m < nx->nmachines; m++) {
            if (!rq.allowed[nx->machines[m].rack])
                continue;
            if (!st->mach[m].sched)
                down++;
            else if (!nexus_machine_fits(nx, m, &rq))
                full++;
        }
        snprintf(buf, sizeof buf,
                 "pool %s: placed %u of %u %s VMs; no machine in availabilityZones [%s] has a "
                 "NUMA cell with %d host vCPU and %.0fGi free (%u machines in those racks: %u "
                 "cordoned or down, %u without room)",
                 p->name, placed, wanted, sku->name, zones, rq.cell_cpu,
                 (double)rq.cell_mem / GiB, down + full, down, full);
    }
    return berth_arena_strdup(&nx->arena, buf);
}

/* Places `add` more VMs of pool in context. On failure *reason is set. */
static int place_many(berth_nexus *nx, uint32_t pool, uint32_t add, uint32_t **placed,
                      uint32_t *nplaced, uint32_t *capplaced, const char **reason)
{
    nexus_req rq;
    nexus_req_for_pool(nx, pool, &rq);
    berth_profile prof = profile_for(nx);
    if (add && nexus_sku_activate(nx, rq.sku))
        return BERTH_ENOMEM;
    /* room for the run up front (up to 64 k VMs: a library caller may ask
     * for more than any estate holds): nothing grows per VM */
    berth_pool *p = &nx->pools[pool];
    uint32_t pre = add < 65536 ? add : 65536;
    if (pre > UINT32_MAX - nx->nvms || pre > UINT32_MAX - *nplaced || pre > UINT32_MAX - p->nvms)
        return BERTH_ELIMIT;
    if (pre && (nexus_grow((void **)&nx->vms, &nx->capvms, nx->nvms + pre, sizeof *nx->vms) ||
                nexus_grow((void **)&p->vms, &p->capvms, p->nvms + pre, sizeof *p->vms) ||
                nexus_grow((void **)placed, capplaced, *nplaced + pre, sizeof **placed)))
        return BERTH_ENOMEM;
    for (uint32_t i = 0; i < add; i++) {
        uint32_t vm;
        int rc = place_vm(nx, pool, &rq, &prof, &vm);
        if (rc == BERTH_ENOFIT) {
            *reason = nofit_reason(nx, pool, i, add);
            return rc;
        }
        if (rc)
            return rc;
        if (*nplaced >= *capplaced &&
            nexus_grow((void **)placed, capplaced, *nplaced + 1, sizeof **placed))
            return BERTH_ENOMEM;
        (*placed)[(*nplaced)++] = vm;
    }
    return 0;
}

static int resolve_zones(berth_nexus *nx, const berth_pool_spec *ps, berth_pool *p, berth_error *e)
{
    if (!ps->nzones)
        return 0;
    p->zones = calloc(ps->nzones, sizeof *p->zones);
    if (!p->zones)
        return berth_error_set(e, BERTH_ENOMEM, "out of memory");
    for (uint32_t i = 0; i < ps->nzones; i++) {
        uint32_t r = berth_nexus_find_rack(nx, ps->zones[i]);
        if (r == BERTH_NEXUS_NONE)
            return berth_error_set(e, BERTH_EINVAL,
                                   "%s: availabilityZones: no rack (zone) named '%s' in the site",
                                   ps->where ? ps->where : ps->name, ps->zones[i]);
        p->zones[p->nzones++] = r;
    }
    return 0;
}

static int new_pool(berth_nexus *nx, uint32_t cluster, const berth_pool_spec *ps,
                    uint32_t *pool_out, berth_error *e)
{
    uint32_t sku = berth_nexus_find_sku(nx, ps->sku);
    if (sku == BERTH_NEXUS_NONE)
        return berth_error_set(e, BERTH_EINVAL, "%s: vmSkuName: unknown SKU '%s'",
                               ps->where ? ps->where : ps->name, ps->sku);
    if (nexus_grow((void **)&nx->pools, &nx->cappools, nx->npools + 1, sizeof *nx->pools))
        return berth_error_set(e, BERTH_ENOMEM, "out of memory");
    berth_cluster *c = &nx->clusters[cluster];
    if (nexus_grow((void **)&c->pools, &c->cappools, c->npools + 1, sizeof *c->pools))
        return berth_error_set(e, BERTH_ENOMEM, "out of memory");
    uint32_t id = nx->npools++;
    berth_pool *p = &nx->pools[id];
    memset(p, 0, sizeof *p);
    p->name = ps->name;
    p->cluster = cluster;
    p->role = ps->role;
    p->sku = sku;
    p->count = (int32_t)ps->count;
    p->next_ordinal = 1;
    c->pools[c->npools++] = id;
    *pool_out = id;
    return resolve_zones(nx, ps, p, e);
}

int berth_nexus_create_cluster(berth_nexus *nx, const berth_cluster_spec *spec,
                               const berth_nexus_options *opt, uint32_t *cluster_out,
                               berth_error *e)
{
    int rc = berth_nexus_prepare(nx, opt, e);
    if (rc)
        return rc;
    if (berth_nexus_find_cluster(nx, spec->name) != BERTH_NEXUS_NONE)
        return berth_error_set(e, BERTH_EINVAL, "%s%scluster '%s' already exists",
                               spec->where ? spec->where : "", spec->where ? ": metadata.name: " : "",
                               spec->name);
    /* validate every SKU and zone before touching the estate */
    for (uint32_t i = 0; i < spec->npools; i++) {
        if (berth_nexus_find_sku(nx, spec->pools[i].sku) == BERTH_NEXUS_NONE)
            return berth_error_set(e, BERTH_EINVAL, "%s: vmSkuName: unknown SKU '%s'",
                                   spec->pools[i].where ? spec->pools[i].where : spec->name,
                                   spec->pools[i].sku);
        for (uint32_t z = 0; z < spec->pools[i].nzones; z++)
            if (berth_nexus_find_rack(nx, spec->pools[i].zones[z]) == BERTH_NEXUS_NONE)
                return berth_error_set(
                    e, BERTH_EINVAL,
                    "%s: availabilityZones: no rack (zone) named '%s' in the site",
                    spec->pools[i].where ? spec->pools[i].where : spec->name,
                    spec->pools[i].zones[z]);
    }
    if (nexus_grow((void **)&nx->clusters, &nx->capclusters, nx->nclusters + 1,
                   sizeof *nx->clusters))
        return berth_error_set(e, BERTH_ENOMEM, "out of memory");
    uint32_t cid = nx->nclusters++;
    berth_cluster *c = &nx->clusters[cid];
    memset(c, 0, sizeof *c);
    c->name = spec->name;
    c->status = BERTH_CLUSTER_PENDING;
    c->reason = "";
    if (nexus_index_cluster(nx, cid))
        return berth_error_set(e, BERTH_ENOMEM, "out of memory");
    if (cluster_out)
        *cluster_out = cid;
    for (uint32_t i = 0; i < spec->npools; i++) {
        uint32_t pid;
        rc = new_pool(nx, cid, &spec->pools[i], &pid, e);
        if (rc)
            return rc;
    }
    /* the VMs placed so far, in the state's scratch list (kept across calls) */
    berth_nexus_state *st = nx->state;
    uint32_t nplaced = 0;
    const char *reason = NULL;
    int fit = 0;
    for (uint32_t i = 0; i < nx->clusters[cid].npools && !rc; i++) {
        uint32_t pid = nx->clusters[cid].pools[i];
        nexus_ctx_set(nx, cid, pid);
        rc = place_many(nx, pid, (uint32_t)nx->pools[pid].count, &st->placed, &nplaced,
                        &st->capplaced, &reason);
        if (rc == BERTH_ENOFIT && opt && opt->partial) {
            fit = BERTH_ENOFIT;
            rc = 0;
            if (!nx->clusters[cid].reason[0])
                nx->clusters[cid].reason = reason;
        }
    }
    c = &nx->clusters[cid];
    if (rc == BERTH_ENOFIT) {
        for (uint32_t i = nplaced; i-- > 0;)
            release_vm(nx, st->placed[i]);
        c->status = BERTH_CLUSTER_FAILED;
        c->reason = berth_arena_strdup(&nx->arena, reason ? reason : "does not fit");
        berth_error_set(e, BERTH_ENOFIT, "cluster %s: %s", c->name, c->reason);
    } else if (rc == 0) {
        c->status = fit ? BERTH_CLUSTER_FAILED : BERTH_CLUSTER_SUCCEEDED;
        rc = fit;
        if (fit)
            berth_error_set(e, BERTH_ENOFIT, "cluster %s: %s", c->name, c->reason);
    } else {
        berth_error_set(e, rc, "cluster %s: %s", c->name, berth_strerror(rc));
    }
    nexus_ctx_clear(nx);
    return rc;
}

int berth_nexus_delete_cluster(berth_nexus *nx, uint32_t cluster, berth_error *e)
{
    if (!nx->state)
        return berth_error_set(e, BERTH_EINVAL, "no placement state");
    berth_cluster *c = &nx->clusters[cluster];
    for (uint32_t i = 0; i < c->npools; i++) {
        berth_pool *p = &nx->pools[c->pools[i]];
        while (p->nvms)
            release_vm(nx, p->vms[p->nvms - 1]);
    }
    c->status = BERTH_CLUSTER_DELETED;
    return 0;
}

int berth_nexus_scale_pool(berth_nexus *nx, uint32_t pool, int64_t count,
                           const berth_nexus_options *opt, berth_error *e)
{
    berth_pool *p = &nx->pools[pool];
    if (count < 0 || count > 100000)
        return berth_error_set(e, BERTH_EINVAL, "pool %s: count %" PRId64 " out of range", p->name,
                               count);
    int rc = 0;
    uint32_t old_ordinal = p->next_ordinal;
    int32_t old_count = p->count;
    p->count = (int32_t)count;
    if ((uint32_t)count <= p->nvms) {
        while (p->nvms > (uint32_t)count)
            release_vm(nx, p->vms[p->nvms - 1]);
        return 0;
    }
    berth_nexus_state *st = nx->state;
    uint32_t nplaced = 0;
    const char *reason = NULL;
    nexus_ctx_set(nx, p->cluster, pool);
    rc = place_many(nx, pool, (uint32_t)count - p->nvms, &st->placed, &nplaced, &st->capplaced,
                    &reason);
    if (rc == BERTH_ENOFIT) {
        if (!(opt && opt->partial)) {
            /* all or nothing: no VM kept and no name used up (the pool's
             * count stays the desired one, as the failed request asked) */
            for (uint32_t i = nplaced; i-- > 0;)
                release_vm(nx, st->placed[i]);
            p = &nx->pools[pool];
            p->next_ordinal = old_ordinal;
        }
        berth_error_set(e, BERTH_ENOFIT, "cluster %s: %s", nx->clusters[p->cluster].name, reason);
    } else if (rc) {
        /* out of memory (or a limit): the pool as before the call, with a
         * message (a caller that prefixes it printed an empty one: found by
         * `make torture`, examples/nexus/timeline.yaml N = 117) */
        for (uint32_t i = nplaced; i-- > 0;)
            release_vm(nx, st->placed[i]);
        p = &nx->pools[pool];
        p->next_ordinal = old_ordinal;
        p->count = old_count;
        berth_error_set(e, rc, "cluster %s: pool %s: %s", nx->clusters[p->cluster].name, p->name,
                        berth_strerror(rc));
    }
    nexus_ctx_clear(nx);
    return rc;
}

int berth_nexus_add_pool(berth_nexus *nx, uint32_t cluster, const berth_pool_spec *ps,
                         const berth_nexus_options *opt, uint32_t *pool_out, berth_error *e)
{
    if (berth_nexus_find_pool(nx, cluster, ps->name) != BERTH_NEXUS_NONE)
        return berth_error_set(e, BERTH_EINVAL, "cluster %s already has a pool named '%s'",
                               nx->clusters[cluster].name, ps->name);
    uint32_t pid;
    int rc = new_pool(nx, cluster, ps, &pid, e);
    if (rc)
        return rc;
    if (pool_out)
        *pool_out = pid;
    int32_t want = nx->pools[pid].count;
    nx->pools[pid].count = 0;
    return berth_nexus_scale_pool(nx, pid, want, opt, e);
}

int berth_nexus_place_at(berth_nexus *nx, uint32_t pool, uint32_t machine, uint32_t cells_mask,
                         uint32_t ordinal, berth_error *e)
{
    int rc = berth_nexus_prepare(nx, NULL, e);
    if (rc)
        return rc;
    if (pool >= nx->npools || machine >= nx->nmachines)
        return berth_error_set(e, BERTH_EINVAL, "placement names no pool or machine");
    berth_pool *p = &nx->pools[pool];
    const berth_machine *mm = &nx->machines[machine];
    nexus_req rq;
    nexus_req_for_pool(nx, pool, &rq);
    char name[300];
    snprintf(name, sizeof name, "%s-%s-%u", nx->clusters[p->cluster].name, p->name, ordinal);
    if (ordinal < p->next_ordinal)
        return berth_error_set(e, BERTH_EINVAL, "VM %s: the name was already used", name);
    uint32_t n = 0, first = BERTH_NEXUS_NONE;
    for (uint32_t i = 0; i < 32; i++)
        if (cells_mask & (1u << i)) {
            if (i >= mm->ncells)
                return berth_error_set(e, BERTH_EINVAL, "VM %s: machine %s has no NUMA cell %u",
                                       name, mm->name, i);
            if (first == BERTH_NEXUS_NONE)
                first = i;
            n++;
        }
    if (n != rq.ncells)
        return berth_error_set(e, BERTH_EINVAL, "VM %s: %u NUMA cells given, the SKU spans %u",
                               name, n, rq.ncells);
    if (!nx->state->mach[machine].sched)
        return berth_error_set(e, BERTH_ENOFIT, "VM %s: machine %s is cordoned or down", name,
                               mm->name);
    if (rq.allowed && !rq.allowed[mm->rack])
        return berth_error_set(e, BERTH_ENOFIT, "VM %s: rack %s is not in the pool's zones",
                               name, nx->racks[mm->rack].name);
    berth_cell *cl = &nx->cells[mm->first_cell];
    for (uint32_t i = 0; i < mm->ncells; i++)
        if ((cells_mask & (1u << i)) &&
            (cl[i].cpu - cl[i].used_cpu < rq.cell_cpu ||
             cl[i].memory - cl[i].used_memory < rq.cell_mem))
            return berth_error_set(e, BERTH_ENOFIT,
                                   "VM %s: NUMA cell %u of machine %s no longer has %d host vCPU "
                                   "and %.0fGi free",
                                   name, i, mm->name, rq.cell_cpu, (double)rq.cell_mem / GiB);
    if (nexus_grow((void **)&nx->vms, &nx->capvms, nx->nvms + 1, sizeof *nx->vms) ||
        nexus_grow((void **)&p->vms, &p->capvms, p->nvms + 1, sizeof *p->vms))
        return berth_error_set(e, BERTH_ENOMEM, "out of memory");
    for (uint32_t i = 0; i < mm->ncells; i++)
        if (cells_mask & (1u << i)) {
            cl[i].used_cpu += rq.cell_cpu;
            cl[i].used_memory += rq.cell_mem;
        }
    nx->state->rack[mm->rack].used_cpu += (int64_t)rq.cell_cpu * rq.ncells;
    if (rq.xl)
        nx->state->mach[machine].xl_cnt++;
    uint32_t vm = nx->nvms++;
    berth_vm *v = &nx->vms[vm];
    v->pool = pool;
    v->machine = machine;
    v->cell = first;
    v->cells_mask = cells_mask;
    v->ordinal = ordinal;
    p->next_ordinal = ordinal + 1;
    p->vms[p->nvms++] = vm;
    nexus_ctx_count(nx, vm, +1, 1);
    nexus_machine_changed(nx, machine);
    return 0;
}

int berth_nexus_set_cordon(berth_nexus *nx, uint32_t machine, int cordoned, berth_error *e)
{
    if (!nx->state)
        return berth_error_set(e, BERTH_EINVAL, "no placement state");
    nx->machines[machine].cordoned = cordoned;
    nx->state->mach[machine].sched =
        (uint32_t)(!nx->machines[machine].cordoned && !nx->machines[machine].down);
    nexus_machine_changed(nx, machine);
    return 0;
}

uint64_t berth_nexus_max_fit(const berth_nexus *nx, uint32_t sku, uint64_t *per_rack)
{
    const berth_sku *k = &nx->skus[sku];
    uint32_t nc = k->numa_cells > 1 ? (uint32_t)k->numa_cells : 1;
    int64_t ccpu = (k->host_vcpu + (int64_t)nc - 1) / nc, cmem = (k->memory + (int64_t)nc - 1) / nc;
    uint64_t total = 0;
    if (per_rack)
        memset(per_rack, 0, nx->nracks * sizeof *per_rack);
    for (uint32_t m = 0; m < nx->nmachines; m++) {
        const berth_machine *mm = &nx->machines[m];
        if (mm->cordoned || mm->down)
            continue;
        uint64_t slots = 0, cs[BERTH_NEXUS_MAX_CELLS];
        for (uint32_t c = 0; c < mm->ncells; c++) {
            const berth_cell *cl = &nx->cells[mm->first_cell + c];
            int64_t a = ccpu > 0 ? (cl->cpu - cl->used_cpu) / ccpu : INT64_MAX;
            int64_t b = cmem > 0 ? (cl->memory - cl->used_memory) / cmem : INT64_MAX;
            int64_t s = a < b ? a : b;
            cs[c] = s > 0 ? (uint64_t)s : 0;
            slots += cs[c];
        }
        /* a VM spanning nc cells needs a slot in nc distinct cells: the
         * largest t with sum(min(slots_i, t)) >= nc * t */
        uint64_t fit = slots;
        if (nc > 1) {
            uint64_t lo = 0, hi = mm->ncells >= nc ? slots / nc : 0;
            while (lo < hi) {
                uint64_t mid = lo + (hi - lo + 1) / 2, sum = 0;
                for (uint32_t c = 0; c < mm->ncells; c++)
                    sum += cs[c] < mid ? cs[c] : mid;
                if (sum >= nc * mid)
                    lo = mid;
                else
                    hi = mid - 1;
            }
            fit = lo;
        }
        total += fit;
        if (per_rack)
            per_rack[mm->rack] += fit;
    }
    return total;
}

/* ---- timeline ---- */

static int snapshot_pool(berth_nexus *nx, berth_step *st, uint32_t pool)
{
    berth_step_row *rows = berth_arena_alloc(&nx->arena, (st->nrows + 1) * sizeof *rows);
    if (!rows)
        return BERTH_ENOMEM;
    if (st->nrows)
        memcpy(rows, st->rows, st->nrows * sizeof *rows);
    berth_step_row *r = &rows[st->nrows];
    const berth_pool *p = &nx->pools[pool];
    r->pool = pool;
    r->count = p->count;
    r->placed = p->nvms;
    r->per_rack = berth_arena_alloc(&nx->arena, (nx->nracks ? nx->nracks : 1) * sizeof(uint32_t));
    if (!r->per_rack)
        return BERTH_ENOMEM;
    for (uint32_t i = 0; i < p->nvms; i++) {
        uint32_t rk = nx->machines[nx->vms[p->vms[i]].machine].rack;
        if (r->per_rack[rk]++ == 0)
            r->racks_used++;
    }
    st->rows = rows;
    st->nrows++;
    return 0;
}

static int step_fail(berth_nexus *nx, berth_step *st, const char *msg)
{
    st->failed = 1;
    st->reason = berth_arena_strdup(&nx->arena, msg);
    return BERTH_ENOFIT;
}

static int run_step(berth_nexus *nx, berth_step *st, const berth_nexus_options *opt,
                    berth_error *e)
{
    berth_error le;
    berth_error_clear(&le);
    int rc = 0;
    uint32_t cid = BERTH_NEXUS_NONE, pid = BERTH_NEXUS_NONE;
    if (st->kind != BERTH_STEP_CREATE_CLUSTER && st->cluster) {
        cid = berth_nexus_find_cluster(nx, st->cluster);
        if (cid == BERTH_NEXUS_NONE) {
            char m[300];
            snprintf(m, sizeof m, "no cluster named '%s' exists at this step", st->cluster);
            return step_fail(nx, st, m);
        }
        if (nx->clusters[cid].status == BERTH_CLUSTER_FAILED &&
            (st->kind == BERTH_STEP_SCALE_POOL || st->kind == BERTH_STEP_ADD_POOL)) {
            char m[300];
            snprintf(m, sizeof m,
                     "cluster '%s' failed to provision; delete and re-create it before changing "
                     "its pools",
                     st->cluster);
            return step_fail(nx, st, m);
        }
        if (st->pool && st->kind != BERTH_STEP_ADD_POOL) {
            pid = berth_nexus_find_pool(nx, cid, st->pool);
            if (pid == BERTH_NEXUS_NONE) {
                char m[300];
                snprintf(m, sizeof m, "cluster '%s' has no pool named '%s'", st->cluster,
                         st->pool);
                return step_fail(nx, st, m);
            }
        }
    }
    switch (st->kind) {
    case BERTH_STEP_CREATE_CLUSTER: {
        const berth_cluster_spec *spec = &nx->specs[st->spec_doc];
        rc = berth_nexus_create_cluster(nx, spec, opt, &cid, &le);
        if (rc == BERTH_EINVAL && cid == BERTH_NEXUS_NONE)
            return step_fail(nx, st, le.msg);
        if (rc && rc != BERTH_ENOFIT && cid == BERTH_NEXUS_NONE)
            return berth_error_set(e, rc, "%s", le.msg);
        if (cid != BERTH_NEXUS_NONE && cid < nx->nclusters)
            for (uint32_t i = 0; i < nx->clusters[cid].npools; i++)
                if (snapshot_pool(nx, st, nx->clusters[cid].pools[i]))
                    return berth_error_set(e, BERTH_ENOMEM, "out of memory");
        if (rc == BERTH_ENOFIT)
            return step_fail(nx, st, nx->clusters[cid].reason);
        if (rc)
            return berth_error_set(e, rc, "%s", le.msg);
        return 0;
    }
    case BERTH_STEP_DELETE_CLUSTER:
        return berth_nexus_delete_cluster(nx, cid, e);
    case BERTH_STEP_SCALE_POOL:
        rc = berth_nexus_scale_pool(nx, pid, st->count, opt, &le);
        if (snapshot_pool(nx, st, pid))
            return berth_error_set(e, BERTH_ENOMEM, "out of memory");
        if (rc == BERTH_ENOFIT)
            return step_fail(nx, st, le.msg);
        if (rc)
            return berth_error_set(e, rc, "%s: %s", st->source, le.msg);
        return 0;
    case BERTH_STEP_ADD_POOL: {
        berth_pool_spec ps = {.name = st->pool, .role = BERTH_ROLE_WORKER, .sku = st->sku,
                              .count = st->count, .zones = st->zones, .nzones = st->nzones,
                              .where = st->source};
        rc = berth_nexus_add_pool(nx, cid, &ps, opt, &pid, &le);
        if (pid != BERTH_NEXUS_NONE && snapshot_pool(nx, st, pid))
            return berth_error_set(e, BERTH_ENOMEM, "out of memory");
        if (rc == BERTH_ENOFIT)
            return step_fail(nx, st, le.msg);
        if (rc == BERTH_EINVAL)
            return step_fail(nx, st, le.msg);
        if (rc)
            return berth_error_set(e, rc, "%s: %s", st->source, le.msg);
        return 0;
    }
    case BERTH_STEP_CORDON:
    case BERTH_STEP_UNCORDON: {
        uint32_t m = berth_nexus_find_machine(nx, st->machine);
        if (m == BERTH_NEXUS_NONE) {
            char msg[300];
            snprintf(msg, sizeof msg, "no machine named '%s'", st->machine);
            return step_fail(nx, st, msg);
        }
        return berth_nexus_set_cordon(nx, m, st->kind == BERTH_STEP_CORDON, e);
    }
    case BERTH_STEP_RUNTIME_UPGRADE:
        return berth_nexus_runtime_upgrade(nx, st, e);
    }
    return berth_error_set(e, BERTH_EINTERNAL, "unknown step kind");
}

int berth_nexus_run(berth_nexus *nx, const berth_nexus_options *opt, berth_error *e)
{
    int rc = berth_nexus_prepare(nx, opt, e);
    if (rc)
        return rc;
    nx->state->explain_vm = opt ? opt->explain_vm : NULL;
    nx->state->explain_out = opt ? opt->explain_out : NULL;
    nx->state->explain_found = opt ? opt->explain_found : NULL;
    int any_fail = 0;
    for (uint32_t i = 0; i < nx->nsteps; i++) {
        rc = run_step(nx, &nx->steps[i], opt, e);
        if (rc && rc != BERTH_ENOFIT)
            return rc;
        if (rc == BERTH_ENOFIT)
            any_fail = 1;
        if (opt && opt->on_step) {
            /* the hook's own error, never the step's (a failed step's
             * message is in e), and never empty: a hook that fails without
             * one (out of memory deep in the cross-layer what-if) says what
             * failed (found by failure injection: `berth: ` and nothing) */
            berth_error he;
            berth_error_clear(&he);
            if ((rc = opt->on_step(opt->step_ctx, nx, i, &he))) {
                if (!he.msg[0])
                    berth_error_set(&he, rc, "%s: %s", nx->steps[i].source,
                                    berth_strerror(rc));
                if (e)
                    *e = he;
                return rc;
            }
        }
    }
    return any_fail ? BERTH_ENOFIT : 0;
}
