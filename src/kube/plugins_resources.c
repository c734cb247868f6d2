/* kube/plugins_resources.c - the resource plugins (SPEC 2.4, 2.5):
 * NodeResourcesFit (filter; score with LeastAllocated, MostAllocated or
 * RequestedToCapacityRatio over the profile's fit_res and shape),
 * NodeResourcesBalancedAllocation, and berth's UsageHeadroom for the
 * usage-aware profile.
 *
 * Loops are candidate-major over each node's values (kube_ncol: the
 * requests, allocatable and pod count of a node share one or two cache
 * lines, kube/state.h); the per-pod set of resources that can matter is
 * worked out once per call, so the inner loops hold no branches on the
 * pod. The integer division of the allocation scores, floor(a * 100 / cap),
 * is a double estimate corrected by one multiply each way (kube/pct.h,
 * exact for all int64 inputs), which is far cheaper than a 64-bit idiv;
 * the default shape (cpu and memory, equal weights, both allocatable)
 * and BalancedAllocation over two resources have loops of their own.
 *
 * usage-aware (prof->usage_aware, SPEC 2.4): admission needs unreserved
 * memory for the pod's reservation (its memory request) plus the node's VM
 * overhead_reserve, each pod already admitted also holding one
 * overhead_reserve (KS_REQ holds plain requests only); the other
 * resources and the pod count are checked as kube does. UsageHeadroom
 * scores the headroom left after placement against observed usage
 * (KS_USAGE, with the pod's configured size as its demand): per resource
 * (cpu, memory) with allocatable > 0, (alloc - usage - demand) / alloc in
 * parts per million (negative when over-committed), averaged; normalised
 * min..max to 0..100 (100 for all when they are equal). */
#include "kube/pct.h"
#include "kube/state.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* ---- NodeResourcesFit filter ---- */

/* Resources the filter checks for this pod: request > 0, not ignored. */
static uint32_t fit_resources(const kube_sched *s, const berth_kpod *p, uint32_t *res)
{
    uint32_t nres = s->k->nres, m = 0;
    uint32_t ignored = s->prof ? s->prof->ignored_res : 0;
    for (uint32_t r = 0; r < nres; r++) {
        if (p->req[r] <= 0)
            continue;
        if (r >= BERTH_KRES_FIRST_EXT && (ignored >> r & 1u))
            continue;
        res[m++] = r;
    }
    return m;
}

static int usage_aware(const kube_sched *s) { return s->prof && s->prof->usage_aware; }

/* Usage-aware memory admission for node c. */
static int admits_memory(const kube_sched *s, const berth_kpod *p, uint32_t c)
{
    int64_t ovh = s->k->nodes[c].overhead_reserve;
    int64_t free_mem = KS_ALLOC_OF(s, BERTH_KRES_MEMORY, c) - KS_REQ_OF(s, BERTH_KRES_MEMORY, c) -
                       KS_NPODS_OF(s, c) * ovh;
    int64_t need = p->req[BERTH_KRES_MEMORY] + ovh;
    return need <= 0 || need <= free_mem;
}

static void f_fit(void *state, const void *req, const uint32_t *cand, uint32_t n, uint8_t *v)
{
    kube_sched *s = state;
    const berth_kpod *p = ((const kube_req *)req)->p;
    uint32_t res[BERTH_KUBE_MAX_RES];
    uint32_t m = fit_resources(s, p, res);
    if (usage_aware(s)) {
        /* memory goes through the usage-aware admission below */
        uint32_t k = 0;
        for (uint32_t j = 0; j < m; j++)
            if (res[j] != BERTH_KRES_MEMORY)
                res[k++] = res[j];
        m = k;
        for (uint32_t i = 0; i < n; i++)
            if (!admits_memory(s, p, cand[i]))
                v[i] = BERTH_UNFIT;
    }
    if (m == 2) {
        /* the common case (cpu and memory), one fused pass */
        const int64_t q0 = p->req[res[0]], q1 = p->req[res[1]];
        const uint32_t a0 = s->ka + res[0], u0 = KS_REQ + res[0];
        const uint32_t a1 = s->ka + res[1], u1 = KS_REQ + res[1], ap = s->ka - 1;
        for (uint32_t i = 0; i < n; i++) {
            const int64_t *nv = kube_ncol(s, cand[i]);
            int bad = (nv[KS_NPODS] + 1 > nv[ap]) | (q0 > nv[a0] - nv[u0]) | (q1 > nv[a1] - nv[u1]);
            if (bad)
                v[i] = BERTH_UNFIT;
        }
        return;
    }
    for (uint32_t i = 0; i < n; i++) {
        uint32_t c = cand[i];
        int bad = KS_NPODS_OF(s, c) + 1 > KS_APODS_OF(s, c);
        for (uint32_t j = 0; j < m; j++)
            bad |= p->req[res[j]] > KS_ALLOC_OF(s, res[j], c) - KS_REQ_OF(s, res[j], c);
        if (bad)
            v[i] = BERTH_UNFIT;
    }
}

static void r_fit(void *state, const void *req, uint32_t c, char *buf, size_t size)
{
    kube_sched *s = state;
    const berth_kpod *p = ((const kube_req *)req)->p;
    size_t off = 0;
    if (size)
        buf[0] = '\0';
#define KUBE_APPEND(...)                                                                   \
    do {                                                                                   \
        if (off < size) {                                                                  \
            int w_ = snprintf(buf + off, size - off, "%s", off ? "; " : "");               \
            off += w_ > 0 ? (size_t)w_ : 0;                                                \
        }                                                                                  \
        if (off < size) {                                                                  \
            int w_ = snprintf(buf + off, size - off, __VA_ARGS__);                         \
            off += w_ > 0 ? (size_t)w_ : 0;                                                \
        }                                                                                  \
    } while (0)
    if (KS_NPODS_OF(s, c) + 1 > KS_APODS_OF(s, c))
        KUBE_APPEND("Too many pods");
    uint32_t res[BERTH_KUBE_MAX_RES];
    uint32_t m = fit_resources(s, p, res);
    int ua = usage_aware(s);
    for (uint32_t j = 0; j < m; j++) {
        uint32_t r = res[j];
        if (ua && r == BERTH_KRES_MEMORY)
            continue;
        if (p->req[r] > KS_ALLOC_OF(s, r, c) - KS_REQ_OF(s, r, c))
            KUBE_APPEND("Insufficient %s", s->k->res_names[r] ? s->k->res_names[r] : "?");
    }
    if (ua && !admits_memory(s, p, c))
        KUBE_APPEND("Insufficient memory");
#undef KUBE_APPEND
}

/* r_fit's text as bits (which of its parts it writes): bit 0 "Too many
 * pods", bit 1 + j the j-th fit resource, bit 1 + BERTH_KUBE_MAX_RES the
 * usage-aware memory admission. Same bits, same text. */
uint32_t kube_fit_reason_code(const kube_sched *s, const kube_req *r, uint32_t c)
{
    const berth_kpod *p = r->p;
    uint32_t code = KS_NPODS_OF(s, c) + 1 > KS_APODS_OF(s, c);
    uint32_t res[BERTH_KUBE_MAX_RES];
    uint32_t m = fit_resources(s, p, res);
    int ua = usage_aware(s);
    for (uint32_t j = 0; j < m; j++) {
        uint32_t q = res[j];
        if (ua && q == BERTH_KRES_MEMORY)
            continue;
        if (p->req[q] > KS_ALLOC_OF(s, q, c) - KS_REQ_OF(s, q, c))
            code |= 2u << j;
    }
    if (ua && !admits_memory(s, p, c))
        code |= 2u << BERTH_KUBE_MAX_RES;
    return code;
}

/* ---- NodeResourcesFit score ---- */

typedef struct fit_term {
    uint32_t alloc, used;        /* where in a node's values (kube_ncol) */
    int64_t q;                   /* pod's request (scoring variant) */
    int64_t w;
} fit_term;

/* The configured resources that score for this pod: an extended resource
 * the pod does not request is skipped (cap = 0 is skipped per node).
 * cpu and memory use the non-zero variant (pod and node). */
static uint32_t score_terms(const kube_sched *s, const berth_kpod *p, const berth_kres_weight *rw,
                            uint32_t nrw, int nonzero, fit_term *t)
{
    uint32_t m = 0;
    for (uint32_t j = 0; j < nrw && m < BERTH_KUBE_MAX_RES; j++) {
        uint32_t r = rw[j].res;
        if (r >= s->k->nres)
            continue;
        int64_t q = nonzero && r <= BERTH_KRES_MEMORY ? p->req_nz[r] : p->req[r];
        if (r >= BERTH_KRES_FIRST_EXT && q == 0)
            continue;
        t[m].alloc = s->ka + r;
        t[m].used = nonzero && r <= BERTH_KRES_MEMORY ? KS_NZ + r : KS_REQ + r;
        t[m].q = q;
        t[m].w = rw[j].weight;
        m++;
    }
    return m;
}

/* Piecewise-linear shape, scores already scaled to 0..100. */
static int64_t shape_eval(const int64_t *u, const int64_t *y, uint32_t np, int64_t p)
{
    for (uint32_t i = 0; i < np; i++) {
        if (p <= u[i]) {
            if (i == 0)
                return y[0];
            return y[i - 1] + (y[i] - y[i - 1]) * (p - u[i - 1]) / (u[i] - u[i - 1]);
        }
    }
    return y[np - 1];
}

/* LeastAllocated / MostAllocated score of one resource, cap > 0. */
static inline int64_t alloc_score(int most, int64_t rq, int64_t cap)
{
    if (rq < 0)
        rq = 0;
    if (most)
        return kube_pct_floor(rq < cap ? rq : cap, cap);
    return rq > cap ? 0 : kube_pct_floor(cap - rq, cap);
}

/* Σ s_i w_i / Σ w_i over the resources with cap > 0 of a node (v: its
 * values). */
static int64_t node_alloc_score(const fit_term *t, uint32_t m, int most, const int64_t *v)
{
    int64_t sum = 0, wsum = 0;
    for (uint32_t j = 0; j < m; j++) {
        int64_t cap = v[t[j].alloc];
        if (cap <= 0)
            continue;
        sum += alloc_score(most, v[t[j].used] + t[j].q, cap) * t[j].w;
        wsum += t[j].w;
    }
    return wsum ? sum / wsum : 0;
}

/* The allocated amount LeastAllocated (most = 0: free, 0 when over) or
 * MostAllocated (most = 1: used, at most cap) scores, rq clamped at 0. */
static inline int64_t scored_amount(int most, int64_t rq, int64_t cap)
{
    rq = rq < 0 ? 0 : rq;
    if (most)
        return rq < cap ? rq : cap;
    return rq > cap ? 0 : cap - rq;
}

/* The default shape: cpu and memory, equal weights; with both caps in
 * (0, KUBE_PCT_DOUBLE_MAX], (s0 w + s1 w) / 2w = (s0 + s1) / 2 in
 * integers, each s the double estimate corrected (kube/pct.h). `most` is a
 * constant at each call, so each strategy gets its own loop. */
static inline __attribute__((always_inline)) void fit_pair(const kube_sched *s,
                                                           const fit_term *t, int most,
                                                           const uint32_t *cand, uint32_t n,
                                                           int64_t *out)
{
    const uint32_t a0 = t[0].alloc, a1 = t[1].alloc, u0 = t[0].used, u1 = t[1].used;
    const int64_t q0 = t[0].q, q1 = t[1].q;
    for (uint32_t i = 0; i < n; i++) {
        const int64_t *v = kube_ncol(s, cand[i]);
        int64_t c0 = v[a0], c1 = v[a1];
        if (c0 > 0 && c1 > 0 && c0 <= KUBE_PCT_DOUBLE_MAX && c1 <= KUBE_PCT_DOUBLE_MAX)
            out[i] = (kube_pct_floor_est(scored_amount(most, v[u0] + q0, c0), c0) +
                      kube_pct_floor_est(scored_amount(most, v[u1] + q1, c1), c1)) /
                     2;
        else
            out[i] = node_alloc_score(t, 2, most, v);
    }
}

static void s_fit(void *state, const void *req, const uint32_t *cand, uint32_t n, int64_t *out)
{
    kube_sched *s = state;
    const berth_kpod *p = ((const kube_req *)req)->p;
    const berth_kprofile *prof = s->prof;
    static const berth_kres_weight defaults[2] = {{BERTH_KRES_CPU, 1}, {BERTH_KRES_MEMORY, 1}};
    const berth_kres_weight *rw = prof && prof->nfit_res ? prof->fit_res : defaults;
    uint32_t nrw = prof && prof->nfit_res ? prof->nfit_res : 2;
    berth_kfit_strategy strat = prof ? prof->fit_strategy : BERTH_FIT_LEAST_ALLOCATED;
    fit_term t[BERTH_KUBE_MAX_RES];
    uint32_t m = score_terms(s, p, rw, nrw, 1, t);
    if (!m) {
        memset(out, 0, (size_t)n * sizeof *out);
        return;
    }
    if (strat == BERTH_FIT_REQUESTED_TO_CAPACITY_RATIO) {
        int64_t u[16], y[16];
        uint32_t np = prof->nshape < 16 ? prof->nshape : 16;
        for (uint32_t k = 0; k < np; k++) {
            u[k] = prof->shape_util[k];
            y[k] = (int64_t)prof->shape_score[k] * 10; /* MaxNodeScore / MaxCustomPriorityScore */
        }
        if (!np) {
            memset(out, 0, (size_t)n * sizeof *out);
            return;
        }
        int64_t full = shape_eval(u, y, np, 100);
        for (uint32_t i = 0; i < n; i++) {
            const int64_t *v = kube_ncol(s, cand[i]);
            int64_t sum = 0, wsum = 0;
            for (uint32_t j = 0; j < m; j++) {
                int64_t cap = v[t[j].alloc];
                if (cap <= 0)
                    continue;
                int64_t rq = v[t[j].used] + t[j].q;
                int64_t sc = rq > cap ? full : shape_eval(u, y, np, kube_pct_floor(rq < 0 ? 0 : rq, cap));
                if (sc > 0) {
                    sum += sc * t[j].w;
                    wsum += t[j].w;
                }
            }
            out[i] = wsum ? (int64_t)round((double)sum / (double)wsum) : 0;
        }
        return;
    }
    const int most = strat == BERTH_FIT_MOST_ALLOCATED;
    if (m == 2 && t[0].w == t[1].w) {
        /* The default shape (cpu, memory, equal weights): with both caps
         * non-zero, (s0 w + s1 w) / 2w = (s0 + s1) / 2 in integers. */
        if (most)
            fit_pair(s, t, 1, cand, n, out);
        else
            fit_pair(s, t, 0, cand, n, out);
        return;
    }
    for (uint32_t i = 0; i < n; i++)
        out[i] = node_alloc_score(t, m, most, kube_ncol(s, cand[i]));
}

/* ---- NodeResourcesBalancedAllocation ---- */

static int64_t balanced_node(const fit_term *t, uint32_t m, const int64_t *v);

static void s_balanced(void *state, const void *req, const uint32_t *cand, uint32_t n,
                       int64_t *out)
{
    kube_sched *s = state;
    const berth_kpod *p = ((const kube_req *)req)->p;
    const berth_kprofile *prof = s->prof;
    static const berth_kres_weight defaults[2] = {{BERTH_KRES_CPU, 1}, {BERTH_KRES_MEMORY, 1}};
    const berth_kres_weight *rw = prof && prof->nbalanced_res ? prof->balanced_res : defaults;
    uint32_t nrw = prof && prof->nbalanced_res ? prof->nbalanced_res : 2;
    /* Best-effort for the configured resources (all plain requests 0): skip. */
    int any = 0;
    for (uint32_t j = 0; j < nrw; j++)
        if (rw[j].res < s->k->nres && p->req[rw[j].res] != 0)
            any = 1;
    fit_term t[BERTH_KUBE_MAX_RES];
    uint32_t m = any ? score_terms(s, p, rw, nrw, 0, t) : 0;
    if (!m) {
        memset(out, 0, (size_t)n * sizeof *out);
        return;
    }
    if (m == 2) {
        /* two resources, both allocatable: std = |f0 - f1| / 2 */
        const uint32_t a0 = t[0].alloc, a1 = t[1].alloc, u0 = t[0].used, u1 = t[1].used;
        const int64_t q0 = t[0].q, q1 = t[1].q;
        for (uint32_t i = 0; i < n; i++) {
            const int64_t *v = kube_ncol(s, cand[i]);
            int64_t c0 = v[a0], c1 = v[a1];
            if (c0 > 0 && c1 > 0) {
                double f0 = (double)(v[u0] + q0) / (double)c0;
                double f1 = (double)(v[u1] + q1) / (double)c1;
                f0 = f0 > 1 ? 1 : f0;
                f1 = f1 > 1 ? 1 : f1;
                double std = fabs((f0 - f1) / 2);
                out[i] = (int64_t)((1 - std) * 100.0);
            } else {
                out[i] = balanced_node(t, m, v);
            }
        }
        return;
    }
    for (uint32_t i = 0; i < n; i++)
        out[i] = balanced_node(t, m, kube_ncol(s, cand[i]));
}

/* BalancedAllocation of a node (v: its values) over the resources with
 * cap > 0 (balanced_allocation.go balancedResourceScorer: fractions capped
 * at 1, their standard deviation, (1 - std) * MaxNodeScore truncated). */
static int64_t balanced_node(const fit_term *t, uint32_t m, const int64_t *v)
{
    double f[BERTH_KUBE_MAX_RES], total = 0;
    uint32_t nf = 0;
    for (uint32_t j = 0; j < m; j++) {
        int64_t cap = v[t[j].alloc];
        if (cap <= 0)
            continue;
        double fr = (double)(v[t[j].used] + t[j].q) / (double)cap;
        if (fr > 1)
            fr = 1;
        total += fr;
        f[nf++] = fr;
    }
    double std = 0;
    if (nf == 2) {
        std = fabs((f[0] - f[1]) / 2);
    } else if (nf > 2) {
        double mean = total / (double)nf, sq = 0;
        for (uint32_t j = 0; j < nf; j++) {
            double d = f[j] - mean;
            sq = sq + d * d;
        }
        std = sqrt(sq / (double)nf);
    }
    double sc = (1 - std) * 100.0;
    return (int64_t)sc;
}

/* ---- UsageHeadroom (usage-aware) ---- */

static void s_headroom(void *state, const void *req, const uint32_t *cand, uint32_t n,
                       int64_t *out)
{
    kube_sched *s = state;
    const berth_kpod *p = ((const kube_req *)req)->p;
    int64_t d[2];
    kube_pod_demand(p, d);
    for (uint32_t i = 0; i < n; i++) {
        uint32_t c = cand[i];
        int64_t sum = 0, cnt = 0;
        for (int r = 0; r < 2; r++) {
            int64_t cap = KS_ALLOC_OF(s, r, c);
            if (cap <= 0)
                continue;
            double h = (double)cap - (double)KS_USAGE_OF(s, r, c) - (double)d[r];
            double ppm = h * 1e6 / (double)cap;
            if (ppm < -1e12)
                ppm = -1e12;
            sum += (int64_t)ppm;
            cnt++;
        }
        out[i] = cnt ? sum / cnt : 0;
    }
}

static void n_headroom(void *state, const void *req, int64_t *scores, uint32_t n)
{
    if (!n)
        return;
    int64_t lo = scores[0], hi = scores[0];
    for (uint32_t i = 1; i < n; i++) {
        if (scores[i] < lo)
            lo = scores[i];
        if (scores[i] > hi)
            hi = scores[i];
    }
    for (uint32_t i = 0; i < n; i++)
        scores[i] = hi == lo ? 100 : 100 * (scores[i] - lo) / (hi - lo);
}

const berth_filter_plugin kube_fit_filter = {BERTH_PLUGIN_VERSION, "NodeResourcesFit", f_fit,
                                             r_fit};
const berth_score_plugin kube_fit_score = {BERTH_PLUGIN_VERSION, "NodeResourcesFit", s_fit, NULL,
                                           1};
const berth_score_plugin kube_balanced_score = {BERTH_PLUGIN_VERSION,
                                                "NodeResourcesBalancedAllocation", s_balanced,
                                                NULL, 1};
const berth_score_plugin kube_headroom_score = {BERTH_PLUGIN_VERSION, "UsageHeadroom", s_headroom,
                                                n_headroom, 1};
