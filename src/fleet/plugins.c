/* fleet/plugins.c - the Fleet scheduler as a pipeline profile (SPEC 3.1):
 * filters ClusterAffinity (required terms), ClusterEligibility,
 * TaintToleration, TopologySpreadConstraints, in that order (the first
 * failure is the reported reason); lexicographic scores TopologySpread,
 * Affinity, Held (+1 for a cluster with an obsolete binding: it held the
 * placement under an older policy snapshot) with
 * BERTH_TIE_LAST over name-sorted clusters: the larger name wins a full
 * tie. narrow() proposes the clusters not yet selected (and, outside
 * reference mode, only those passing the per-placement static filters, or
 * with the top-K index only each topology domain's best remaining one);
 * reserve() counts a pick into the topology domain counters. */
#include "fleet/state.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static void f_static(const berth_fleet_ctx *ctx, const uint32_t *cand, uint32_t n, uint8_t *v,
                     uint8_t slot, uint8_t verdict)
{
    const uint8_t *st = ctx->stat;
    for (uint32_t i = 0; i < n; i++)
        if (st[cand[i]] == slot)
            v[i] = verdict;
}

static void f_affinity(void *state, const void *req, const uint32_t *cand, uint32_t n, uint8_t *v)
{
    f_static(state, cand, n, v, FLEET_F_AFFINITY, BERTH_UNRESOLVABLE);
}

static void r_affinity(void *state, const void *req, uint32_t c, char *buf, size_t size)
{
    const berth_fleet_ctx *ctx = state;
    snprintf(buf, size, "ClusterAffinity: cluster %s matches none of the %u required "
                        "clusterSelectorTerms",
             ctx->f->clusters[c].name, ctx->f->placements[ctx->cur].nreq);
}

static void f_eligibility(void *state, const void *req, const uint32_t *cand, uint32_t n,
                          uint8_t *v)
{
    f_static(state, cand, n, v, FLEET_F_ELIGIBILITY, BERTH_UNFIT);
}

static void r_eligibility(void *state, const void *req, uint32_t c, char *buf, size_t size)
{
    const berth_fleet_ctx *ctx = state;
    char why[300];
    berth_fleet_eligible(&ctx->f->clusters[c], ctx->opt.now_ms, why, sizeof why);
    snprintf(buf, size, "ClusterEligibility: %s", why);
}

static void f_taint(void *state, const void *req, const uint32_t *cand, uint32_t n, uint8_t *v)
{
    f_static(state, cand, n, v, FLEET_F_TAINT, BERTH_UNRESOLVABLE);
}

static void r_taint(void *state, const void *req, uint32_t c, char *buf, size_t size)
{
    const berth_fleet_ctx *ctx = state;
    const berth_member_cluster *m = &ctx->f->clusters[c];
    const berth_fleet_placement *pl = &ctx->f->placements[ctx->cur];
    const berth_taint *t = berth_taints_first_untolerated(m->taints, m->ntaints, pl->tols,
                                                          pl->ntols, BERTH_EFFECT_MASK_ANY);
    if (t)
        snprintf(buf, size, "TaintToleration: taint %s%s%s:NoSchedule is not tolerated", t->key,
                 t->value && *t->value ? "=" : "", t->value ? t->value : "");
    else
        snprintf(buf, size, "TaintToleration: untolerated taint");
}

int64_t fleet_skew_change(const berth_fleet_ctx *ctx, uint32_t k, uint32_t c, int *violates)
{
    uint32_t d = ctx->kdom[k][c];
    if (d == UINT32_MAX) {
        *violates = 0;
        return 0;   /* not part of the spread (upstream: no key, no violation) */
    }
    size_t i = (size_t)k * ctx->maxdom + d;
    *violates = ctx->dviol[i];
    return ctx->dchange[i];
}

/* Smallest, second smallest (the second entry in sorted order) and largest
 * domain counts of constraint k, and from them each domain's skew change
 * and violation (SPEC 3.1), so a candidate costs one lookup. */
void fleet_domain_stats(berth_fleet_ctx *ctx, uint32_t k)
{
    const fleet_topo *tp = &ctx->topos[ctx->cp[ctx->cur].spread_col[k]];
    const uint32_t *cnt = ctx->counts + (size_t)k * ctx->maxdom;
    int64_t a = INT64_MAX, b = INT64_MAX, lg = 0;
    for (uint32_t d = 0; d < tp->ndom; d++) {
        int64_t x = cnt[d];
        if (x < a) {
            b = a;
            a = x;
        } else if (x < b) {
            b = x;
        }
        if (x > lg)
            lg = x;
    }
    if (tp->ndom == 0)
        a = 0;
    if (b == INT64_MAX)
        b = a;
    ctx->smallest[k] = a;
    ctx->second[k] = b;
    ctx->largest[k] = lg;
    int64_t skew = ctx->f->placements[ctx->cur].spread[k].max_skew;
    for (uint32_t d = 0; d < tp->ndom; d++) {
        int64_t x = cnt[d], change;
        if (lg == a)
            change = 1;
        else if (x == a && a != b)
            change = -1;
        else if (x == lg)
            change = 1;
        else
            change = 0;
        ctx->dchange[(size_t)k * ctx->maxdom + d] = (int8_t)change;
        ctx->dviol[(size_t)k * ctx->maxdom + d] = (lg - a) + change > skew;
    }
}

static void f_spread(void *state, const void *req, const uint32_t *cand, uint32_t n, uint8_t *v)
{
    const berth_fleet_ctx *ctx = state;
    if (!ctx->spread_on)
        return;
    const berth_fleet_placement *pl = &ctx->f->placements[ctx->cur];
    for (uint32_t k = 0; k < pl->nspread; k++) {
        if (pl->spread[k].schedule_anyway)
            continue;
        for (uint32_t i = 0; i < n; i++) {
            int viol;
            fleet_skew_change(ctx, k, cand[i], &viol);
            if (viol)
                v[i] = BERTH_UNFIT;
        }
    }
}

static void r_spread(void *state, const void *req, uint32_t c, char *buf, size_t size)
{
    const berth_fleet_ctx *ctx = state;
    const berth_fleet_placement *pl = &ctx->f->placements[ctx->cur];
    for (uint32_t k = 0; k < pl->nspread; k++) {
        int viol;
        int64_t ch = fleet_skew_change(ctx, k, c, &viol);
        if (viol && !pl->spread[k].schedule_anyway) {
            snprintf(buf, size,
                     "TopologySpreadConstraints: topologySpreadConstraints[%u] (topologyKey %s, "
                     "maxSkew %" PRId64 "): placing here makes the skew %" PRId64,
                     k, pl->spread[k].key, pl->spread[k].max_skew,
                     ctx->largest[k] - ctx->smallest[k] + ch);
            return;
        }
    }
    snprintf(buf, size, "TopologySpreadConstraints: skew would exceed maxSkew");
}

static void s_spread(void *state, const void *req, const uint32_t *cand, uint32_t n, int64_t *out)
{
    const berth_fleet_ctx *ctx = state;
    memset(out, 0, n * sizeof *out);
    if (!ctx->spread_on)
        return;
    const berth_fleet_placement *pl = &ctx->f->placements[ctx->cur];
    for (uint32_t k = 0; k < pl->nspread; k++)
        for (uint32_t i = 0; i < n; i++) {
            int viol;
            int64_t ch = fleet_skew_change(ctx, k, cand[i], &viol);
            out[i] += viol && pl->spread[k].schedule_anyway ? -1000 : -ch;
        }
}

static void s_affinity(void *state, const void *req, const uint32_t *cand, uint32_t n, int64_t *out)
{
    const berth_fleet_ctx *ctx = state;
    for (uint32_t i = 0; i < n; i++)
        out[i] = fleet_aff(ctx, cand[i]);
}

static void s_held(void *state, const void *req, const uint32_t *cand, uint32_t n, int64_t *out)
{
    const berth_fleet_ctx *ctx = state;
    const uint8_t *h = ctx->held;
    for (uint32_t i = 0; i < n; i++)
        out[i] = h[cand[i]] == 2;
}

int fleet_narrow(void *state, const void *req, uint32_t *cand, uint32_t cap)
{
    const berth_fleet_ctx *ctx = state;
    const uint8_t *picked = ctx->picked, *st = ctx->stat;
    uint32_t k = 0, n = ctx->n < cap ? ctx->n : cap;
    if (ctx->use_topk) {
        /* each bucket's best key not picked yet (see topk_build in place.c) */
        const uint32_t kk = ctx->topk_k;
        for (uint32_t i = 0; i < ctx->nblist && k < cap; i++) {
            uint32_t b = ctx->blist[i];
            const uint64_t *a = ctx->topk + (size_t)b * kk;
            for (uint32_t j = 0; j < ctx->topn[b]; j++)
                if (!picked[(uint32_t)a[j]]) {
                    cand[k++] = (uint32_t)a[j];
                    break;
                }
        }
        return (int)k;
    }
    if (ctx->opt.reference) {
        for (uint32_t c = 0; c < n; c++)
            if (!picked[c])
                cand[k++] = c;
    } else {
        for (uint32_t c = 0; c < n; c++)
            if (!(picked[c] | st[c]))
                cand[k++] = c;
    }
    return (int)k;
}

static int reserve(void *state, const void *req, uint32_t c)
{
    berth_fleet_ctx *ctx = state;
    if (ctx->picked[c])
        return BERTH_EINTERNAL;
    ctx->picked[c] = 1;
    ctx->sel[ctx->nsel++] = c;
    if (!ctx->spread_on)
        return 0;
    const fleet_cplace *cp = &ctx->cp[ctx->cur];
    const berth_fleet_placement *pl = &ctx->f->placements[ctx->cur];
    for (uint32_t k = 0; k < pl->nspread; k++) {
        uint32_t d = ctx->topos[cp->spread_col[k]].dom[c];
        if (d != UINT32_MAX) {
            ctx->counts[(size_t)k * ctx->maxdom + d]++;
            fleet_domain_stats(ctx, k);
        }
    }
    return 0;
}

static const berth_filter_plugin affinity_plugin = {BERTH_PLUGIN_VERSION, "ClusterAffinity",
                                                    f_affinity, r_affinity};
static const berth_filter_plugin eligibility_plugin = {BERTH_PLUGIN_VERSION, "ClusterEligibility",
                                                       f_eligibility, r_eligibility};
static const berth_filter_plugin taint_plugin = {BERTH_PLUGIN_VERSION, "TaintToleration", f_taint,
                                                 r_taint};
static const berth_filter_plugin spread_plugin = {BERTH_PLUGIN_VERSION,
                                                  "TopologySpreadConstraints", f_spread, r_spread};
static const berth_score_plugin spread_score = {BERTH_PLUGIN_VERSION, "TopologySpread", s_spread,
                                                NULL};
static const berth_score_plugin affinity_score = {BERTH_PLUGIN_VERSION, "Affinity", s_affinity,
                                                  NULL};
static const berth_score_plugin held_score = {BERTH_PLUGIN_VERSION, "Held", s_held, NULL};

static const berth_filter_plugin *const filters[] = {&affinity_plugin, &eligibility_plugin,
                                                     &taint_plugin, &spread_plugin};
static const berth_score_plugin *const scores[] = {&spread_score, &affinity_score, &held_score};

static const berth_profile profile = {
    .version = BERTH_PLUGIN_VERSION,
    .name = "fleet",
    .filters = filters,
    .nfilters = 4,
    .scores = scores,
    .weights = NULL,
    .nscores = 3,
    .combine = BERTH_COMBINE_LEXICOGRAPHIC,
    .tiebreak = BERTH_TIE_LAST,
    .narrow = fleet_narrow,
    .reserve = reserve,
    .unreserve = NULL,
};

const berth_profile *berth_fleet_profile(void) { return &profile; }
