/* fleet/state.h - internal: the fleet scheduling context. Per-run columns
 * (eligibility, property values with fleet-wide min/max, label value ids,
 * topology domains) and per-placement scratch (static verdicts, affinity
 * scores, domain counts, selection) read by the plugins in plugins.c. */
#ifndef BERTH_FLEET_STATE_H
#define BERTH_FLEET_STATE_H

#include "berth/fleet.h"
#include "berth/grow.h"
#include "berth/hash.h"
#include "berth/nameidx.h"

#define FLEET_TOPK_MAX 16u
#define FLEET_CACHE_BYTES ((size_t)64 << 20)
#define FLEET_ORDER_BYTES ((size_t)64 << 20)   /* sorted orders of cached columns */
#define FLEET_BCOUNT_BYTES ((size_t)16 << 20)  /* feasible counts per bucket */
#define FLEET_TA_BUCKETS 64u                   /* top-K by sorted access up to this */
#define FLEET_VEC_BUCKETS 16u                  /* vector final pass up to this many buckets */
#define FLEET_RANK_BYTES ((size_t)16 << 20)    /* ranked lists of shared policies */

/* Filter slots, in the profile's order (SPEC 3.1). */
enum { FLEET_F_AFFINITY = 1, FLEET_F_ELIGIBILITY, FLEET_F_TAINT, FLEET_F_SPREAD };

typedef struct fleet_propcol {      /* one property over every cluster */
    const char *name;
    uint8_t *has;
    berth_quantity *q;
    double *ratio;                  /* (v - min) / (max - min); 0 when min = max */
    int flat;                       /* min == max (or no cluster has it) */
} fleet_propcol;

typedef struct fleet_labelcol {     /* one label key: value id per cluster, 0 absent */
    const char *key;
    uint32_t *val;
} fleet_labelcol;

typedef struct fleet_creq {         /* a compiled label requirement */
    uint32_t col;
    berth_sel_op op;
    uint32_t *ids;                  /* value ids (UINT32_MAX: value nobody has) */
    uint32_t nids;
} fleet_creq;

typedef struct fleet_csel { fleet_creq *r; uint32_t n; } fleet_csel;

typedef enum { FLEET_OP_GT, FLEET_OP_GE, FLEET_OP_LT, FLEET_OP_LE, FLEET_OP_EQ, FLEET_OP_NE } fleet_op;

typedef struct fleet_cexpr { uint32_t prop; fleet_op op; berth_quantity v; } fleet_cexpr;

typedef struct fleet_cterm { fleet_csel sel; fleet_cexpr *e; uint32_t ne; } fleet_cterm;
typedef struct fleet_cpref { fleet_csel sel; int64_t weight; uint32_t prop; int descending; } fleet_cpref;

typedef struct fleet_cplace {       /* a placement compiled against the run's columns */
    int error;                      /* policy error */
    char why[400];
    fleet_cterm *terms;
    uint32_t nterms;
    fleet_cpref *prefs;
    uint32_t nprefs;
    uint32_t *spread_col;           /* per constraint: topology column index */
    uint32_t stat_id;               /* static-verdict column shared by equal policies */
    uint32_t *pref_id;              /* per preferred term: contribution column id */
    uint32_t rank_id;               /* ranking id (fast path), UINT32_MAX none */
} fleet_cplace;

typedef struct fleet_topo {         /* domains of one topology key */
    const char *key;
    uint32_t *dom;                  /* per cluster, UINT32_MAX without the key */
    uint32_t *bkt;                  /* per cluster: dom, or ndom without the key */
    uint8_t *bkt8;                  /* bkt in a byte when ndom < FLEET_VEC_BUCKETS, else NULL */
    uint32_t ndom;
} fleet_topo;

struct berth_fleet_ctx {
    const berth_fleet *f;
    berth_fleet_options opt;
    uint32_t cancel_tick;           /* PickN cycles since the last look at opt.cancel */
    int avx2;                       /* the CPU has AVX2 (the final pass uses it) */
    uint32_t n;                     /* clusters */
    berth_cycle cycle;
    /* run columns */
    uint8_t *eligible;
    uint8_t *tainted;               /* has spec.taints */
    fleet_propcol *props;
    uint32_t nprops;
    fleet_labelcol *labels;
    uint32_t nlabels;
    const char **strs;              /* interned label values; id = index + 1 */
    uint32_t nstrs, capstrs;
    berth_nameidx str_idx;          /* value -> index in strs (keyed) */
    berth_hashkey hkey;             /* the policy identity's tables (assign_ids, assign_ranks) */
    uint32_t id_run_max;            /* longest probe run those tables met (tests read it) */
    fleet_topo *topos;
    uint32_t ntopos;
    fleet_cplace *cp;               /* per placement */
    uint32_t maxdom;
    /* per-placement scratch */
    uint32_t cur;                   /* placement being placed */
    int spread_on;                  /* PickN with constraints */
    const uint8_t *stat;            /* static first reject (FLEET_F_*), 0 = passes */
    uint8_t *stat_buf;              /* stat when computed per placement */
    /* fast path (not --reference): columns cached by policy identity.
     * statcol[id]: static first reject per cluster for every placement with
     * equal required terms and tolerations (stat_rep[id] is the first);
     * prefcol[id]: one preferred term's rounded contribution per cluster
     * (|value| <= 100) for every equal term (pref_rep[id]). Built on first
     * use within FLEET_CACHE_BYTES, else computed into scratch. */
    uint8_t **statcol;
    uint32_t *stat_rep, nstatcols;
    int8_t **prefcol;
    const fleet_cpref **pref_rep;
    uint32_t nprefcols;
    int8_t *pref_scratch;
    uint8_t *statbuilt;             /* per stat id, then per pref id: column filled */
    uint8_t *pool;                  /* the cached columns */
    /* bindings grouped by placement, input order within */
    uint32_t *bind_start, *bind_idx;
    uint32_t prev;                  /* last placed placement, UINT32_MAX none */
    uint32_t prev_nsel;
    /* the top-K index behind narrow (fast path, PickN with at most one spread
     * constraint): bucket = topology domain of constraint 0 (tp->ndom for
     * clusters without the key; one bucket without constraints); per bucket
     * the K best keys (affinity, held-before, index) of statically feasible
     * unpicked clusters, descending, K = picks still to make. */
    int use_topk;
    uint32_t topk_k, topk_max;
    uint64_t *topk;                 /* (maxdom + 1) x FLEET_TOPK_MAX */
    uint64_t *ktail;                /* per bucket: its k-th best key (0: fewer) */
    /* affinity of the fast path: the placement's preferred-term columns
     * (acol, nacol <= 2, all cached), summed into aff by the pass that
     * first needs every cluster's (topk_build, or aff_fill); aff_ready once
     * aff holds them. With more terms, or a column beyond the cache, aff is
     * filled when the placement is prepared. */
    const int8_t *acol[2];
    uint32_t acol_id[2];            /* their preferred-term column ids */
    uint32_t nacol;
    int aff_ready;
    /* sorted access for the top-K build (threshold algorithm): per cached
     * preferred-term column, the clusters by contribution descending, then
     * index descending (prefordbuf, filled on first use, NULL beyond
     * FLEET_ORDER_BYTES); per (static column, topology key or none), the
     * statically feasible clusters per bucket (bcount, bcount_built, NULL
     * beyond FLEET_BCOUNT_BYTES); seen: per cluster the epoch it was last
     * read in. */
    uint32_t **preford;
    uint8_t *preford_built;
    uint32_t *prefordbuf;
    uint32_t **bcount;
    uint8_t *bcount_built;
    uint32_t *bcountbuf;
    uint32_t *seen, epoch;
    uint32_t *remain;               /* per bucket: feasible clusters not read yet */
    /* ranked lists: PickN placements with one or two cached preferred-term
     * columns and at most one spread constraint share a ranking id when
     * their static column, topology key and term columns are equal (and
     * two placements at least have it). rank[id]: per bucket the topk_max
     * best keys (affinity, index; no held-before bonus) of every statically
     * feasible cluster, descending, 0-padded (NULL beyond FLEET_RANK_BYTES);
     * rank_len[id]: per bucket the keys kept, then 1 when they are all of
     * the bucket's feasible clusters. Filled on first use. */
    uint64_t **rank;
    uint8_t **rank_len;
    uint8_t *rank_built;
    uint32_t nranks;
    uint64_t *rankbuf;
    uint8_t *ranklenbuf;
    int64_t *stash_a, *stash_s;     /* final pass: scores of selected clusters */
    uint8_t *topn;                  /* per bucket */
    uint32_t *blist, nblist;        /* non-empty buckets */
    uint8_t *fin_r;                 /* final pass: per bucket spread reject */
    int64_t *fin_s;                 /* and spread score */
    /* domain changes / violations as the last cycle saw them (final pass) */
    int8_t *snap_change;
    uint8_t *snap_viol;
    uint8_t *reject;                /* final first reject per cluster */
    uint8_t *picked;                /* selected (held or picked) */
    uint8_t *held;                  /* 1 Scheduled/Bound (current), 2 obsolete binding */
    uint8_t *heldstate;             /* berth_fleet_bstate + 1 of the binding */
    uint8_t *cstatus;
    int64_t *aff;                   /* prepared affinity score */
    int64_t *out_aff, *out_spread;  /* reported */
    uint32_t *sel;
    uint32_t nsel;
    uint32_t *counts;               /* nspread x maxdom */
    int8_t *dchange;                /* nspread x maxdom: skew change of a pick there */
    uint8_t *dviol;                 /* nspread x maxdom: the pick violates maxSkew */
    const uint32_t *kdom[BERTH_FLEET_MAX_TERMS];   /* domain column per constraint */
    int64_t smallest[BERTH_FLEET_MAX_TERMS], second[BERTH_FLEET_MAX_TERMS],
        largest[BERTH_FLEET_MAX_TERMS];
    uint32_t *order;                /* scratch */
    const char **notfound;
    uint32_t nnotfound;
    uint32_t *released;             /* released by shrink: 1 */
    uint8_t *rel;
    char spread_why[BERTH_FLEET_MAX_TERMS];
};

/* The affinity score of cluster c for the placement being placed. */
static inline int64_t fleet_aff(const berth_fleet_ctx *ctx, uint32_t c)
{
    if (ctx->aff_ready)
        return ctx->aff[c];
    int64_t a = 0;
    for (uint32_t t = 0; t < ctx->nacol; t++)
        a += ctx->acol[t][c];
    return a;
}

/* plugins.c */
int fleet_narrow(void *state, const void *req, uint32_t *cand, uint32_t cap);
/* The skew change and violation of placing cluster c for constraint k. */
int64_t fleet_skew_change(const berth_fleet_ctx *ctx, uint32_t k, uint32_t c, int *violates);
/* Recomputes smallest / second smallest / largest for constraint k. */
void fleet_domain_stats(berth_fleet_ctx *ctx, uint32_t k);
/* place.c */
int fleet_label_match(const berth_fleet_ctx *ctx, const fleet_csel *s, uint32_t c);
int64_t fleet_pref_score(const berth_fleet_ctx *ctx, const fleet_cpref *p, uint32_t c, double *ratio);
/* model.c */
#define fleet_grow(p, cap, need, elem) berth_grow(p, cap, need, elem, 0)

#endif
