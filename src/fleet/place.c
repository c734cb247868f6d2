/* fleet/place.c - runs placements (SPEC 3.1). The context holds per-run
 * columns built once: eligibility at --now, property values with
 * fleet-wide min/max and each cluster's sorter ratio, label value ids per
 * referenced key, topology domains, and each placement compiled (a policy
 * error - wrong number of values, unparsable quantity, unknown operator or
 * sort order - makes it Invalid). Per placement: static verdicts and
 * affinity scores (the reference: one pass over the clusters; the fast
 * path: columns cached by policy identity, the top-K index built by sorted
 * access over them), held clusters from bindings, then PickAll (one filter
 * pass), PickN (one pick per cycle through the pipeline, re-scoring each
 * time) or PickFixed (no plugins), and the final pass over every cluster.
 * Nothing allocates per placement. */
#include "fleet/state.h"
#include "berth/hash.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define FLEET_AVX2 1
#endif

/* ---- string interning (label values) ---- */

/* id of s (>= 1); insert when asked, else UINT32_MAX when unknown. The
 * values are the input's: the shared keyed name index finds them. */
static uint32_t intern(berth_fleet_ctx *ctx, const char *s, int insert, int *err)
{
    uint32_t h = berth_nameidx_hash_in(&ctx->str_idx, s);
    uint32_t i = berth_nameidx_find_hash(&ctx->str_idx, s, h);
    if (i != BERTH_NAMEIDX_NONE)
        return i + 1;
    if (!insert)
        return UINT32_MAX;
    if (fleet_grow((void **)&ctx->strs, &ctx->capstrs, ctx->nstrs + 1, sizeof *ctx->strs) ||
        berth_nameidx_add_hash(&ctx->str_idx, s, h, ctx->nstrs, NULL) < 0) {
        *err = BERTH_ENOMEM;
        return UINT32_MAX;
    }
    ctx->strs[ctx->nstrs++] = s;
    return ctx->nstrs;
}

/* ---- columns ---- */

static uint32_t label_col(berth_fleet_ctx *ctx, const char *key, int *err)
{
    for (uint32_t i = 0; i < ctx->nlabels; i++)
        if (!strcmp(ctx->labels[i].key, key))
            return i;
    fleet_labelcol *l = realloc(ctx->labels, (ctx->nlabels + 1) * sizeof *l);
    if (!l) {
        *err = BERTH_ENOMEM;
        return 0;
    }
    ctx->labels = l;
    fleet_labelcol *c = &l[ctx->nlabels];
    c->key = key;
    c->val = calloc(ctx->n ? ctx->n : 1, sizeof *c->val);
    if (!c->val) {
        *err = BERTH_ENOMEM;
        return 0;
    }
    ctx->nlabels++;
    for (uint32_t i = 0; i < ctx->n; i++) {
        const char *v = berth_labels_get(&ctx->f->clusters[i].labels, key);
        c->val[i] = v ? intern(ctx, v, 1, err) : 0;
    }
    return ctx->nlabels - 1;
}

static uint32_t prop_col(berth_fleet_ctx *ctx, const char *name, int *err)
{
    for (uint32_t i = 0; i < ctx->nprops; i++)
        if (!strcmp(ctx->props[i].name, name))
            return i;
    fleet_propcol *p = realloc(ctx->props, (ctx->nprops + 1) * sizeof *p);
    if (!p) {
        *err = BERTH_ENOMEM;
        return 0;
    }
    ctx->props = p;
    fleet_propcol *c = &p[ctx->nprops];
    uint32_t n = ctx->n ? ctx->n : 1;
    c->name = name;
    c->has = calloc(n, 1);
    c->q = calloc(n, sizeof *c->q);
    c->ratio = calloc(n, sizeof *c->ratio);
    ctx->nprops++;
    if (!c->has || !c->q || !c->ratio) {
        *err = BERTH_ENOMEM;
        return 0;
    }
    /* min and max over every member cluster known (SPEC 3.1) */
    double mn = 0, mx = 0;
    int any = 0;
    for (uint32_t i = 0; i < ctx->n; i++) {
        const berth_quantity *q = berth_fleet_cluster_prop(ctx->f, i, name);
        if (!q)
            continue;
        c->has[i] = 1;
        c->q[i] = *q;
        double v = berth_quantity_double(*q);
        c->ratio[i] = v;
        if (!any || v < mn)
            mn = v;
        if (!any || v > mx)
            mx = v;
        any = 1;
    }
    c->flat = !any || mx == mn;
    for (uint32_t i = 0; i < ctx->n; i++)
        c->ratio[i] = c->has[i] && !c->flat ? (c->ratio[i] - mn) / (mx - mn) : 0;
    return ctx->nprops - 1;
}

static int compile_sel(berth_fleet_ctx *ctx, const berth_selector *s, fleet_csel *out)
{
    int err = 0;
    out->n = s->n;
    out->r = calloc(s->n ? s->n : 1, sizeof *out->r);
    if (!out->r)
        return BERTH_ENOMEM;
    for (uint32_t i = 0; i < s->n; i++) {
        const berth_requirement *r = &s->reqs[i];
        fleet_creq *c = &out->r[i];
        c->col = label_col(ctx, r->key, &err);
        c->op = r->op;
        c->nids = r->nvalues;
        c->ids = calloc(r->nvalues ? r->nvalues : 1, sizeof *c->ids);
        if (!c->ids || err)
            return BERTH_ENOMEM;
        for (uint32_t j = 0; j < r->nvalues; j++)
            c->ids[j] = intern(ctx, r->values[j], 0, &err);
    }
    return err;
}

int fleet_label_match(const berth_fleet_ctx *ctx, const fleet_csel *s, uint32_t c)
{
    for (uint32_t i = 0; i < s->n; i++) {
        const fleet_creq *r = &s->r[i];
        uint32_t v = ctx->labels[r->col].val[c];
        int in = 0;
        switch (r->op) {
        case BERTH_SEL_EXISTS:
            if (!v)
                return 0;
            break;
        case BERTH_SEL_DOESNOTEXIST:
            if (v)
                return 0;
            break;
        case BERTH_SEL_IN:
        case BERTH_SEL_NOTIN:
            for (uint32_t j = 0; v && j < r->nids; j++)
                in |= r->ids[j] == v;
            if (in != (r->op == BERTH_SEL_IN))
                return 0;
            break;
        default:
            return 0;
        }
    }
    return 1;
}

static int op_parse(const char *s)
{
    static const char *const ops[] = {"Gt", "Ge", "Lt", "Le", "Eq", "Ne"};
    for (int i = 0; i < 6; i++)
        if (!strcmp(s, ops[i]))
            return i;
    return -1;
}

static int op_holds(fleet_op op, int cmp)
{
    switch (op) {
    case FLEET_OP_GT: return cmp > 0;
    case FLEET_OP_GE: return cmp >= 0;
    case FLEET_OP_LT: return cmp < 0;
    case FLEET_OP_LE: return cmp <= 0;
    case FLEET_OP_EQ: return cmp == 0;
    case FLEET_OP_NE: return cmp != 0;
    }
    return 0;
}

static int compile_placement(berth_fleet_ctx *ctx, uint32_t p)
{
    const berth_fleet_placement *pl = &ctx->f->placements[p];
    fleet_cplace *cp = &ctx->cp[p];
    int err = 0, rc;
    cp->terms = calloc(pl->nreq ? pl->nreq : 1, sizeof *cp->terms);
    cp->prefs = calloc(pl->npref ? pl->npref : 1, sizeof *cp->prefs);
    cp->spread_col = calloc(pl->nspread ? pl->nspread : 1, sizeof *cp->spread_col);
    cp->pref_id = calloc(pl->npref ? pl->npref : 1, sizeof *cp->pref_id);
    if (!cp->terms || !cp->prefs || !cp->spread_col || !cp->pref_id)
        return BERTH_ENOMEM;
    cp->nterms = pl->nreq;
    cp->nprefs = pl->npref;
    for (uint32_t t = 0; t < pl->nreq; t++) {
        const berth_fleet_term *term = &pl->req[t];
        fleet_cterm *ct = &cp->terms[t];
        if ((rc = compile_sel(ctx, &term->labels, &ct->sel)))
            return rc;
        ct->e = calloc(term->nexprs ? term->nexprs : 1, sizeof *ct->e);
        if (!ct->e)
            return BERTH_ENOMEM;
        ct->ne = term->nexprs;
        for (uint32_t i = 0; i < term->nexprs; i++) {
            const berth_fleet_prop_expr *x = &term->exprs[i];
            int op = op_parse(x->op);
            const char *why = NULL;
            if (op < 0) {
                snprintf(cp->why, sizeof cp->why,
                         "%s: unknown operator '%s' for property '%s' (Gt, Ge, Lt, Le, Eq, Ne)",
                         x->where, x->op, x->name);
                cp->error = 1;
                return 0;
            }
            if (x->nvalues != 1) {
                snprintf(cp->why, sizeof cp->why,
                         "%s: operator %s on property '%s' needs exactly one value, got %u",
                         x->where, x->op, x->name, x->nvalues);
                cp->error = 1;
                return 0;
            }
            if (berth_quantity_parse(x->values[0], &ct->e[i].v, &why)) {
                snprintf(cp->why, sizeof cp->why,
                         "%s: value '%s' of property '%s' is not a quantity: %s", x->where,
                         x->values[0], x->name, why ? why : "malformed");
                cp->error = 1;
                return 0;
            }
            ct->e[i].op = (fleet_op)op;
            ct->e[i].prop = prop_col(ctx, x->name, &err);
            if (err)
                return err;
        }
    }
    for (uint32_t t = 0; t < pl->npref; t++) {
        const berth_fleet_pref *pr = &pl->pref[t];
        fleet_cpref *c = &cp->prefs[t];
        if ((rc = compile_sel(ctx, &pr->labels, &c->sel)))
            return rc;
        c->weight = pr->weight;
        c->prop = UINT32_MAX;
        if (pr->sorter) {
            if (strcmp(pr->order, "Ascending") && strcmp(pr->order, "Descending")) {
                snprintf(cp->why, sizeof cp->why,
                         "%s: unknown sortOrder '%s' (Ascending, Descending)", pr->where,
                         pr->order);
                cp->error = 1;
                return 0;
            }
            c->descending = !strcmp(pr->order, "Descending");
            c->prop = prop_col(ctx, pr->sorter, &err);
            if (err)
                return err;
        }
    }
    for (uint32_t k = 0; k < pl->nspread; k++) {
        const char *key = pl->spread[k].key;
        uint32_t i;
        for (i = 0; i < ctx->ntopos; i++)
            if (!strcmp(ctx->topos[i].key, key))
                break;
        if (i == ctx->ntopos) {
            uint32_t col = label_col(ctx, key, &err);
            if (err)
                return err;
            fleet_topo *tp = realloc(ctx->topos, (ctx->ntopos + 1) * sizeof *tp);
            if (!tp)
                return BERTH_ENOMEM;
            ctx->topos = tp;
            fleet_topo *t = &tp[ctx->ntopos++];
            t->key = key;
            t->ndom = 0;
            t->bkt8 = NULL; /* counted already: berth_fleet_ctx_free frees it */
            t->dom = malloc((ctx->n ? ctx->n : 1) * sizeof *t->dom);
            t->bkt = malloc((ctx->n ? ctx->n : 1) * sizeof *t->bkt);
            uint32_t *map = calloc(ctx->nstrs + 1, sizeof *map);   /* id -> domain + 1 */
            if (!t->dom || !t->bkt || !map) {
                free(map);
                return BERTH_ENOMEM;
            }
            const uint32_t *val = ctx->labels[col].val;
            for (uint32_t c = 0; c < ctx->n; c++) {
                if (!val[c]) {
                    t->dom[c] = UINT32_MAX;
                    continue;
                }
                if (!map[val[c]])
                    map[val[c]] = ++t->ndom;
                t->dom[c] = map[val[c]] - 1;
            }
            free(map);
            for (uint32_t c = 0; c < ctx->n; c++)
                t->bkt[c] = t->dom[c] == UINT32_MAX ? t->ndom : t->dom[c];
            if (t->ndom < FLEET_VEC_BUCKETS) {
                if (!(t->bkt8 = malloc(ctx->n ? ctx->n : 1)))
                    return BERTH_ENOMEM;
                for (uint32_t c = 0; c < ctx->n; c++)
                    t->bkt8[c] = (uint8_t)t->bkt[c];
            }
            if (t->ndom > ctx->maxdom)
                ctx->maxdom = t->ndom;
        }
        cp->spread_col[k] = i;
    }
    return 0;
}

int64_t fleet_pref_score(const berth_fleet_ctx *ctx, const fleet_cpref *p, uint32_t c, double *ratio)
{
    if (ratio)
        *ratio = NAN;
    if (p->sel.n && !fleet_label_match(ctx, &p->sel, c))
        return 0;
    if (p->prop == UINT32_MAX)
        return p->weight;
    const fleet_propcol *col = &ctx->props[p->prop];
    if (!col->has[c] || col->flat) {
        if (ratio)
            *ratio = 0;
        return 0;
    }
    double r = p->descending ? col->ratio[c] : 1 - col->ratio[c];
    if (ratio)
        *ratio = r;
    /* per term, half away from zero (Go's math.Round) */
    double x = r * (double)p->weight, t = trunc(x);
    if (fabs(x - t) >= 0.5)
        t += x < 0 ? -1 : 1;
    return (int64_t)t;
}

/* ---- reference matching (generic, from the model) ---- */

static int ref_required(const berth_fleet_ctx *ctx, const berth_fleet_placement *pl,
                        const fleet_cplace *cp, uint32_t c)
{
    const berth_member_cluster *m = &ctx->f->clusters[c];
    for (uint32_t t = 0; t < pl->nreq; t++) {
        if (!berth_selector_matches(&pl->req[t].labels, &m->labels))
            continue;
        uint32_t i;
        for (i = 0; i < pl->req[t].nexprs; i++) {
            const berth_quantity *q = berth_fleet_cluster_prop(ctx->f, c, pl->req[t].exprs[i].name);
            const fleet_cexpr *e = &cp->terms[t].e[i];
            if (!q || !op_holds(e->op, berth_quantity_cmp(*q, e->v)))
                break;
        }
        if (i == pl->req[t].nexprs)
            return 1;
    }
    return 0;
}

static int fast_required(const berth_fleet_ctx *ctx, const fleet_cplace *cp, uint32_t c)
{
    for (uint32_t t = 0; t < cp->nterms; t++) {
        const fleet_cterm *ct = &cp->terms[t];
        if (!fleet_label_match(ctx, &ct->sel, c))
            continue;
        uint32_t i;
        for (i = 0; i < ct->ne; i++) {
            const fleet_propcol *col = &ctx->props[ct->e[i].prop];
            if (!col->has[c] || !op_holds(ct->e[i].op, berth_quantity_cmp(col->q[c], ct->e[i].v)))
                break;
        }
        if (i == ct->ne)
            return 1;
    }
    return 0;
}


/* ---- policy identity (fast path caches) ---- */

/* A placement's static part and each preferred term are written out as
 * bytes (every field their columns depend on, strings with their lengths:
 * equal bytes, one column) and hashed under the context's key
 * (berth/hash.h), the bytes then compared (id_find): the fields
 * are the input's (label values, tolerations, weights, numbers), so an
 * unkeyed fold would let a client send placements that all share a slot
 * of assign_ids' tables (toleration keys colliding under FNV-1a did). */
typedef struct fleet_idkey {
    unsigned char *b;
    size_t n, cap;
    int oom;
} fleet_idkey;

static void id_put(fleet_idkey *d, const void *p, size_t n)
{
    if (d->oom || !n)
        return; /* (n == 0: p may be NULL, an empty list's) */
    if (berth_grow_bytes((void **)&d->b, &d->cap, d->n + n, 256)) {
        d->oom = 1;
        return;
    }
    memcpy(d->b + d->n, p, n);
    d->n += n;
}

static void id_u64(fleet_idkey *d, uint64_t v) { id_put(d, &v, sizeof v); }

static void id_str(fleet_idkey *d, const char *s)
{
    if (!s) {
        id_u64(d, UINT64_MAX); /* NULL: no length a string has */
        return;
    }
    size_t n = strlen(s);
    id_u64(d, n);
    id_put(d, s, n);
}

static void key_sel(fleet_idkey *d, const fleet_csel *s)
{
    id_u64(d, s->n);
    for (uint32_t i = 0; i < s->n; i++) {
        const fleet_creq *r = &s->r[i];
        id_u64(d, r->col);
        id_u64(d, (uint64_t)r->op);
        id_u64(d, r->nids);
        id_put(d, r->ids, r->nids * sizeof *r->ids);
    }
}

static void key_pref(fleet_idkey *d, const fleet_cpref *p)
{
    key_sel(d, &p->sel);
    id_u64(d, (uint64_t)p->weight);
    id_u64(d, p->prop);
    id_u64(d, (uint64_t)p->descending);
}

/* What the static verdicts depend on: required terms (when present) and
 * tolerations. */
static void key_stat(fleet_idkey *d, const berth_fleet_placement *pl, const fleet_cplace *cp)
{
    id_u64(d, (uint64_t)pl->has_required);
    if (pl->has_required) {
        id_u64(d, cp->nterms);
        for (uint32_t t = 0; t < cp->nterms; t++) {
            const fleet_cterm *ct = &cp->terms[t];
            key_sel(d, &ct->sel);
            id_u64(d, ct->ne);
            for (uint32_t i = 0; i < ct->ne; i++) {
                unsigned __int128 v = (unsigned __int128)ct->e[i].v.nano;
                id_u64(d, ct->e[i].prop);
                id_u64(d, (uint64_t)ct->e[i].op);
                id_u64(d, (uint64_t)v);
                id_u64(d, (uint64_t)(v >> 64));
            }
        }
    }
    id_u64(d, pl->ntols);
    for (uint32_t i = 0; i < pl->ntols; i++) {
        const berth_toleration *t = &pl->tols[i];
        id_str(d, t->key);
        id_str(d, t->value);
        id_u64(d, (uint64_t)t->op);
        id_u64(d, (uint64_t)t->effect);
        id_u64(d, (uint64_t)t->toleration_seconds);
    }
}

/* Identities by their bytes: tab (ids + 1, cap slots, a power of two),
 * the n ids' bytes back to back in keys, id i's at off[i] to off[i + 1]. */
typedef struct fleet_idtab {
    uint32_t *tab, cap, n;
    size_t *off;
    fleet_idkey keys;
} fleet_idtab;

/* The id of the identity d holds: an equal one's (same bytes), else the
 * next (*created; keys.oom set when its bytes could not be kept). */
static uint32_t id_find(berth_fleet_ctx *ctx, fleet_idtab *t, const fleet_idkey *d, int *created)
{
    uint32_t mask = t->cap - 1, j = (uint32_t)berth_hash_keyed(&ctx->hkey, d->b, d->n) & mask;
    uint32_t run = 0, id = UINT32_MAX;
    for (; t->tab[j]; j = (j + 1) & mask, run++) {
        uint32_t e = t->tab[j] - 1;
        size_t o = t->off[e], len = t->off[e + 1] - o;
        if (len == d->n && (!len || !memcmp(t->keys.b + o, d->b, len))) {
            id = e;
            break;
        }
    }
    ctx->id_run_max = run > ctx->id_run_max ? run : ctx->id_run_max;
    *created = id == UINT32_MAX;
    if (!*created)
        return id;
    id_put(&t->keys, d->b, d->n);
    t->off[t->n + 1] = t->keys.n;
    t->tab[j] = ++t->n;
    return t->n - 1;
}

/* Gives every valid placement a static-column id and every preferred term a
 * contribution-column id, equal structures sharing one; reserves the cache
 * pool. */
static int assign_ids(berth_fleet_ctx *ctx)
{
    const berth_fleet *f = ctx->f;
    uint32_t np = f->nplacements, nterms = 0;
    for (uint32_t p = 0; p < np; p++)
        if (!ctx->cp[p].error)
            nterms += ctx->cp[p].nprefs;
    uint32_t hcap = 16;
    while (hcap < 2 * (np + nterms) + 2)
        hcap *= 2;
    uint32_t *tab = calloc(hcap, sizeof *tab);   /* stat ids + 1 */
    uint32_t *tab2 = calloc(hcap, sizeof *tab2); /* pref ids + 1 */
    ctx->stat_rep = malloc((np ? np : 1) * sizeof *ctx->stat_rep);
    ctx->pref_rep = malloc((nterms ? nterms : 1) * sizeof *ctx->pref_rep);
    if (!tab || !tab2 || !ctx->stat_rep || !ctx->pref_rep) {
        free(tab);
        free(tab2);
        return BERTH_ENOMEM;
    }
    size_t *soff = malloc(((size_t)np + 1) * sizeof *soff);
    size_t *poff = malloc(((size_t)nterms + 1) * sizeof *poff);
    fleet_idtab st = {tab, hcap, 0, soff, {0}}, pt = {tab2, hcap, 0, poff, {0}};
    fleet_idkey d = {0};
    int oom = !soff || !poff;
    if (!oom)
        soff[0] = poff[0] = 0;
    for (uint32_t p = 0; p < np && !oom; p++) {
        fleet_cplace *cp = &ctx->cp[p];
        const berth_fleet_placement *pl = &f->placements[p];
        if (cp->error)
            continue;
        int created;
        d.n = 0;
        key_stat(&d, pl, cp);
        if ((oom = d.oom))
            break;
        cp->stat_id = id_find(ctx, &st, &d, &created);
        if (created)
            ctx->stat_rep[cp->stat_id] = p;
        for (uint32_t t = 0; t < cp->nprefs && !oom; t++) {
            const fleet_cpref *pr = &cp->prefs[t];
            d.n = 0;
            key_pref(&d, pr);
            if ((oom = d.oom))
                break;
            cp->pref_id[t] = id_find(ctx, &pt, &d, &created);
            if (created)
                ctx->pref_rep[cp->pref_id[t]] = pr;
        }
        oom |= st.keys.oom || pt.keys.oom;
    }
    ctx->nstatcols = st.n;
    ctx->nprefcols = pt.n;
    free(d.b);
    free(st.keys.b);
    free(pt.keys.b);
    free(soff);
    free(poff);
    free(tab);
    free(tab2);
    if (oom)
        return BERTH_ENOMEM;
    ctx->statcol = calloc(ctx->nstatcols ? ctx->nstatcols : 1, sizeof *ctx->statcol);
    ctx->prefcol = calloc(ctx->nprefcols ? ctx->nprefcols : 1, sizeof *ctx->prefcol);
    ctx->statbuilt = calloc(ctx->nstatcols + ctx->nprefcols + 1, 1);
    if (!ctx->statcol || !ctx->prefcol || !ctx->statbuilt)
        return BERTH_ENOMEM;
    /* one pool, columns in id order while they fit the budget; the rest
     * are recomputed per placement into scratch */
    size_t n = ctx->n ? ctx->n : 1, want = ((size_t)ctx->nstatcols + ctx->nprefcols) * n;
    size_t size = want < FLEET_CACHE_BYTES ? want : FLEET_CACHE_BYTES;
    ctx->pool = malloc(size ? size : 1);
    if (!ctx->pool)
        return BERTH_ENOMEM;
    size_t off = 0;
    for (uint32_t i = 0; i < ctx->nstatcols && off + n <= size; i++, off += n)
        ctx->statcol[i] = ctx->pool + off;
    for (uint32_t i = 0; i < ctx->nprefcols && off + n <= size; i++, off += n)
        ctx->prefcol[i] = (int8_t *)(ctx->pool + off);
    /* sorted orders of the cached columns, feasible counts per bucket */
    size_t ncols = 0, nslots = 0, nbk = (size_t)ctx->maxdom + 1, ntk = (size_t)ctx->ntopos + 1;
    while (ncols < ctx->nprefcols && ctx->prefcol[ncols] &&
           (ncols + 1) * n * sizeof(uint32_t) <= FLEET_ORDER_BYTES)
        ncols++;
    while (nslots < (size_t)ctx->nstatcols * ntk &&
           (nslots + 1) * nbk * sizeof(uint32_t) <= FLEET_BCOUNT_BYTES)
        nslots++;
    ctx->preford = calloc(ctx->nprefcols + 1, sizeof *ctx->preford);
    ctx->preford_built = calloc(ctx->nprefcols + 1, 1);
    ctx->prefordbuf = malloc((ncols ? ncols * n : 1) * sizeof *ctx->prefordbuf);
    ctx->bcount = calloc((size_t)ctx->nstatcols * ntk + 1, sizeof *ctx->bcount);
    ctx->bcount_built = calloc((size_t)ctx->nstatcols * ntk + 1, 1);
    ctx->bcountbuf = malloc((nslots ? nslots * nbk : 1) * sizeof *ctx->bcountbuf);
    ctx->seen = calloc(n, sizeof *ctx->seen);
    ctx->remain = calloc(nbk, sizeof *ctx->remain);
    if (!ctx->preford || !ctx->preford_built || !ctx->prefordbuf || !ctx->bcount ||
        !ctx->bcount_built || !ctx->bcountbuf || !ctx->seen || !ctx->remain)
        return BERTH_ENOMEM;
    for (size_t i = 0; i < ncols; i++)
        ctx->preford[i] = ctx->prefordbuf + i * n;
    for (size_t i = 0; i < nslots; i++)
        ctx->bcount[i] = ctx->bcountbuf + i * nbk;
    return 0;
}

/* Gives PickN placements with one or two preferred terms and at most one
 * spread constraint a ranking id (equal static column, topology key and
 * term columns share one) and reserves the ranked lists of ids that two
 * placements or more share, within FLEET_RANK_BYTES. */
static int assign_ranks(berth_fleet_ctx *ctx)
{
    const berth_fleet *f = ctx->f;
    uint32_t np = f->nplacements, hcap = 16;
    while (hcap < 2 * np + 2)
        hcap *= 2;
    uint32_t *tab = calloc(hcap, sizeof *tab);           /* rank ids + 1 */
    uint32_t *key = malloc((np ? np : 1) * 4 * sizeof *key);
    uint32_t *uses = calloc(np ? np : 1, sizeof *uses);
    int rc = BERTH_ENOMEM;
    if (!tab || !key || !uses)
        goto out;
    for (uint32_t p = 0; p < np; p++) {
        fleet_cplace *cp = &ctx->cp[p];
        const berth_fleet_placement *pl = &f->placements[p];
        cp->rank_id = UINT32_MAX;
        if (cp->error || pl->type != BERTH_FLEET_PICK_N || pl->nspread > 1 || cp->nprefs == 0 ||
            cp->nprefs > 2)
            continue;
        uint32_t k4[4] = {cp->stat_id, pl->nspread ? cp->spread_col[0] : ctx->ntopos,
                          cp->pref_id[0], cp->nprefs > 1 ? cp->pref_id[1] : UINT32_MAX};
        uint32_t j = (uint32_t)berth_hash_keyed(&ctx->hkey, k4, sizeof k4) & (hcap - 1);
        for (;; j = (j + 1) & (hcap - 1)) {
            if (!tab[j]) {
                memcpy(key + 4 * (size_t)ctx->nranks, k4, sizeof k4);
                tab[j] = ++ctx->nranks;
                break;
            }
            if (!memcmp(key + 4 * (size_t)(tab[j] - 1), k4, sizeof k4))
                break;
        }
        cp->rank_id = tab[j] - 1;
        uses[cp->rank_id]++;
    }
    uint32_t nr = ctx->nranks ? ctx->nranks : 1;
    ctx->rank = calloc(nr, sizeof *ctx->rank);
    ctx->rank_len = calloc(nr, sizeof *ctx->rank_len);
    ctx->rank_built = calloc(nr, 1);
    if (!ctx->rank || !ctx->rank_len || !ctx->rank_built)
        goto out;
    size_t nkeys = 0, nlen = 0, kk = ctx->topk_max;
    for (uint32_t r = 0; r < ctx->nranks; r++) {
        uint32_t tix = key[4 * (size_t)r + 1];
        size_t nb = tix < ctx->ntopos ? (size_t)ctx->topos[tix].ndom + 1 : 1;
        if (uses[r] < 2 || nb > FLEET_TA_BUCKETS || kk == 0 ||
            (nkeys + nb * kk) * sizeof(uint64_t) > FLEET_RANK_BYTES)
            continue;
        nkeys += nb * kk;
        nlen += 2 * nb;
    }
    ctx->rankbuf = malloc((nkeys ? nkeys : 1) * sizeof *ctx->rankbuf);
    ctx->ranklenbuf = malloc(nlen ? nlen : 1);
    if (!ctx->rankbuf || !ctx->ranklenbuf)
        goto out;
    nkeys = nlen = 0;
    for (uint32_t r = 0; r < ctx->nranks; r++) {
        uint32_t tix = key[4 * (size_t)r + 1];
        size_t nb = tix < ctx->ntopos ? (size_t)ctx->topos[tix].ndom + 1 : 1;
        if (uses[r] < 2 || nb > FLEET_TA_BUCKETS || kk == 0 ||
            (nkeys + nb * kk) * sizeof(uint64_t) > FLEET_RANK_BYTES)
            continue;
        ctx->rank[r] = ctx->rankbuf + nkeys;
        ctx->rank_len[r] = ctx->ranklenbuf + nlen;
        nkeys += nb * kk;
        nlen += 2 * nb;
    }
    rc = 0;
out:
    free(tab);
    free(key);
    free(uses);
    return rc;
}

/* ---- context ---- */

int berth_fleet_ctx_new(const berth_fleet *f, const berth_fleet_options *opt,
                        berth_fleet_ctx **out, berth_error *e)
{
    *out = NULL;
    if (!f->finalized)
        return berth_error_set(e, BERTH_EINVAL, "fleet not finalized");
    berth_fleet_ctx *ctx = calloc(1, sizeof *ctx);
    if (!ctx)
        return berth_error_set(e, BERTH_ENOMEM, "out of memory");
    ctx->f = f;
    ctx->opt = *opt;
    berth_hashkey_new(&ctx->hkey); /* the policy identity's tables (assign_ids) */
#ifdef FLEET_AVX2
    ctx->avx2 = __builtin_cpu_supports("avx2");
#endif
    uint32_t n = ctx->n = f->nclusters, na = n ? n : 1;
    int rc = berth_cycle_init(&ctx->cycle, na, 3, 0);
    if (rc)
        goto fail;
    ctx->cycle.explain = 1;
    ctx->eligible = calloc(na, 1);
    ctx->tainted = calloc(na, 1);
    ctx->stat_buf = calloc(na, 1);
    ctx->stat = ctx->stat_buf;
    ctx->pref_scratch = calloc(na, 1);
    ctx->prev = UINT32_MAX;
    ctx->reject = calloc(na, 1);
    ctx->picked = calloc(na, 1);
    ctx->held = calloc(na, 1);
    ctx->heldstate = calloc(na, 1);
    ctx->cstatus = calloc(na, 1);
    ctx->rel = calloc(na, 1);
    ctx->aff = calloc(na, sizeof *ctx->aff);
    ctx->out_aff = calloc(na, sizeof *ctx->out_aff);
    ctx->out_spread = calloc(na, sizeof *ctx->out_spread);
    ctx->sel = calloc(na, sizeof *ctx->sel);
    ctx->order = calloc(na, sizeof *ctx->order);
    ctx->cp = calloc(f->nplacements ? f->nplacements : 1, sizeof *ctx->cp);
    uint32_t maxfixed = 1;
    for (uint32_t p = 0; p < f->nplacements; p++)
        if (f->placements[p].nfixed > maxfixed)
            maxfixed = f->placements[p].nfixed;
    ctx->notfound = calloc(maxfixed, sizeof *ctx->notfound);
    rc = BERTH_ENOMEM;
    if (!ctx->eligible || !ctx->tainted || !ctx->stat_buf || !ctx->pref_scratch || !ctx->reject ||
        !ctx->picked || !ctx->held || !ctx->heldstate || !ctx->cstatus || !ctx->rel || !ctx->aff ||
        !ctx->out_aff || !ctx->out_spread || !ctx->sel || !ctx->order || !ctx->cp ||
        !ctx->notfound)
        goto fail;
    for (uint32_t c = 0; c < n; c++) {
        ctx->eligible[c] = (uint8_t)berth_fleet_eligible(&f->clusters[c], opt->now_ms, NULL, 0);
        ctx->tainted[c] = f->clusters[c].ntaints > 0;
    }
    for (uint32_t p = 0; p < f->nplacements; p++)
        if ((rc = compile_placement(ctx, p)))
            goto fail;
    uint32_t maxspread = 1;
    for (uint32_t p = 0; p < f->nplacements; p++)
        if (f->placements[p].nspread > maxspread)
            maxspread = f->placements[p].nspread;
    if (ctx->maxdom == 0)
        ctx->maxdom = 1;
    ctx->counts = calloc((size_t)maxspread * ctx->maxdom, sizeof *ctx->counts);
    ctx->dchange = calloc((size_t)maxspread * ctx->maxdom, 1);
    ctx->dviol = calloc((size_t)maxspread * ctx->maxdom, 1);
    ctx->snap_change = calloc((size_t)maxspread * ctx->maxdom, 1);
    ctx->snap_viol = calloc((size_t)maxspread * ctx->maxdom, 1);
    /* top-K buckets: at most 32 MB of keys */
    size_t nb = (size_t)ctx->maxdom + 1, kmax = FLEET_TOPK_MAX;
    if (nb * kmax > ((size_t)4 << 20))
        kmax = ((size_t)4 << 20) / nb;
    ctx->topk_max = (uint32_t)kmax;
    ctx->topk = malloc((kmax ? nb * kmax : 1) * sizeof *ctx->topk);
    ctx->topn = calloc(nb, 1);
    ctx->ktail = calloc(nb, sizeof *ctx->ktail);
    ctx->stash_a = calloc(na, sizeof *ctx->stash_a);
    ctx->stash_s = calloc(na, sizeof *ctx->stash_s);
    ctx->fin_r = calloc(nb, 1);
    ctx->fin_s = calloc(nb, sizeof *ctx->fin_s);
    ctx->blist = malloc(nb * sizeof *ctx->blist);
    /* bindings grouped by placement (counting sort keeps input order) */
    ctx->bind_start = calloc((size_t)f->nplacements + 1, sizeof *ctx->bind_start);
    ctx->bind_idx = malloc((f->nbindings ? f->nbindings : 1) * sizeof *ctx->bind_idx);
    if (!ctx->counts || !ctx->dchange || !ctx->dviol || !ctx->snap_change || !ctx->snap_viol ||
        !ctx->topk || !ctx->topn || !ctx->ktail || !ctx->stash_a || !ctx->stash_s || !ctx->fin_r || !ctx->fin_s || !ctx->blist || !ctx->bind_start || !ctx->bind_idx) {
        rc = BERTH_ENOMEM;
        goto fail;
    }
    /* Unscheduled bindings are ignored (their cluster may be gone) */
    for (uint32_t i = 0; i < f->nbindings; i++)
        if (f->bindings[i].state != BERTH_BINDING_UNSCHEDULED)
            ctx->bind_start[f->bindings[i].placement + 1]++;
    for (uint32_t p = 0; p < f->nplacements; p++)
        ctx->bind_start[p + 1] += ctx->bind_start[p];
    {
        uint32_t *pos = calloc((size_t)f->nplacements + 1, sizeof *pos);
        if (!pos) {
            rc = BERTH_ENOMEM;
            goto fail;
        }
        for (uint32_t i = 0; i < f->nbindings; i++) {
            uint32_t p = f->bindings[i].placement;
            if (f->bindings[i].state != BERTH_BINDING_UNSCHEDULED)
                ctx->bind_idx[ctx->bind_start[p] + pos[p]++] = i;
        }
        free(pos);
    }
    if (!opt->reference && ((rc = assign_ids(ctx)) || (rc = assign_ranks(ctx))))
        goto fail;
    *out = ctx;
    return 0;
fail:
    berth_fleet_ctx_free(ctx);
    return berth_error_set(e, rc, "out of memory building the fleet context");
}

static void free_sel(fleet_csel *s)
{
    for (uint32_t i = 0; s->r && i < s->n; i++)
        free(s->r[i].ids);
    free(s->r);
}

void berth_fleet_ctx_free(berth_fleet_ctx *ctx)
{
    if (!ctx)
        return;
    for (uint32_t p = 0; ctx->cp && p < ctx->f->nplacements; p++) {
        fleet_cplace *cp = &ctx->cp[p];
        for (uint32_t t = 0; cp->terms && t < ctx->f->placements[p].nreq; t++) {
            free_sel(&cp->terms[t].sel);
            free(cp->terms[t].e);
        }
        for (uint32_t t = 0; cp->prefs && t < ctx->f->placements[p].npref; t++)
            free_sel(&cp->prefs[t].sel);
        free(cp->terms);
        free(cp->prefs);
        free(cp->spread_col);
        free(cp->pref_id);
    }
    free(ctx->cp);
    free(ctx->stat_buf);
    free(ctx->pref_scratch);
    free(ctx->statcol);
    free(ctx->stat_rep);
    free(ctx->prefcol);
    free(ctx->pref_rep);
    free(ctx->statbuilt);
    free(ctx->pool);
    free(ctx->bind_start);
    free(ctx->bind_idx);
    free(ctx->topk);
    free(ctx->ktail);
    free(ctx->preford);
    free(ctx->preford_built);
    free(ctx->prefordbuf);
    free(ctx->bcount);
    free(ctx->bcount_built);
    free(ctx->bcountbuf);
    free(ctx->seen);
    free(ctx->remain);
    free(ctx->rank);
    free(ctx->rank_len);
    free(ctx->rank_built);
    free(ctx->rankbuf);
    free(ctx->ranklenbuf);
    free(ctx->stash_a);
    free(ctx->stash_s);
    free(ctx->topn);
    free(ctx->fin_r);
    free(ctx->fin_s);
    free(ctx->blist);
    free(ctx->snap_change);
    free(ctx->snap_viol);
    for (uint32_t i = 0; i < ctx->nprops; i++) {
        free(ctx->props[i].has);
        free(ctx->props[i].q);
        free(ctx->props[i].ratio);
    }
    free(ctx->props);
    for (uint32_t i = 0; i < ctx->nlabels; i++)
        free(ctx->labels[i].val);
    free(ctx->labels);
    for (uint32_t i = 0; i < ctx->ntopos; i++) {
        free(ctx->topos[i].dom);
        free(ctx->topos[i].bkt);
        free(ctx->topos[i].bkt8);
    }
    free(ctx->topos);
    free(ctx->strs);
    berth_nameidx_free(&ctx->str_idx);
    free(ctx->eligible);
    free(ctx->tainted);
    free(ctx->reject);
    free(ctx->picked);
    free(ctx->held);
    free(ctx->heldstate);
    free(ctx->cstatus);
    free(ctx->rel);
    free(ctx->aff);
    free(ctx->out_aff);
    free(ctx->out_spread);
    free(ctx->sel);
    free(ctx->order);
    free(ctx->notfound);
    free(ctx->counts);
    free(ctx->dchange);
    free(ctx->dviol);
    berth_cycle_free(&ctx->cycle);
    free(ctx);
}

const berth_cycle *berth_fleet_ctx_cycle(const berth_fleet_ctx *ctx) { return &ctx->cycle; }

/* ---- one placement ---- */

/* Static verdicts (affinity, eligibility, taints) and the affinity score:
 * the reference computes both per placement from the model. */
static void prepare(berth_fleet_ctx *ctx, uint32_t p)
{
    const berth_fleet_placement *pl = &ctx->f->placements[p];
    const fleet_cplace *cp = &ctx->cp[p];
    const berth_member_cluster *cl = ctx->f->clusters;
    const uint8_t *elig = ctx->eligible, *tainted = ctx->tainted, *held = ctx->held;
    uint8_t *stat = ctx->stat_buf;
    int64_t *aff = ctx->aff;
    const int scores = pl->type == BERTH_FLEET_PICK_N;
    const int all = ctx->opt.reference || ctx->opt.explain;
    const int reference = ctx->opt.reference, required = pl->has_required;
    const uint32_t n = ctx->n, nprefs = cp->nprefs;
    for (uint32_t c = 0; c < n; c++) {
        uint8_t s = 0;
        if (required &&
            !(reference ? ref_required(ctx, pl, cp, c) : fast_required(ctx, cp, c)))
            s = FLEET_F_AFFINITY;
        else if (!elig[c])
            s = FLEET_F_ELIGIBILITY;
        else if (tainted[c] && berth_taints_first_untolerated(cl[c].taints, cl[c].ntaints, pl->tols,
                                                              pl->ntols, BERTH_EFFECT_MASK_ANY))
            s = FLEET_F_TAINT;
        stat[c] = s;
        int64_t a = 0;
        if (scores && (s == 0 || all || held[c]))
            for (uint32_t t = 0; t < nprefs; t++)
                a += fleet_pref_score(ctx, &cp->prefs[t], c, NULL);
        aff[c] = a;
    }
    ctx->stat = stat;
    ctx->nacol = 0;
    ctx->aff_ready = 1;
}

/* The fast path reads both from columns shared by every placement with the
 * same required terms and tolerations (static verdicts) or the same
 * preferred term (its rounded contribution), each filled on first use. */
static const uint8_t *stat_column(berth_fleet_ctx *ctx, uint32_t id)
{
    uint8_t *col = ctx->statcol[id];
    if (col && ctx->statbuilt[id])
        return col;
    if (!col)
        col = ctx->stat_buf;
    uint32_t p = ctx->stat_rep[id];
    const berth_fleet_placement *pl = &ctx->f->placements[p];
    const fleet_cplace *cp = &ctx->cp[p];
    const berth_member_cluster *cl = ctx->f->clusters;
    for (uint32_t c = 0; c < ctx->n; c++) {
        uint8_t s = 0;
        if (pl->has_required && !fast_required(ctx, cp, c))
            s = FLEET_F_AFFINITY;
        else if (!ctx->eligible[c])
            s = FLEET_F_ELIGIBILITY;
        else if (ctx->tainted[c] &&
                 berth_taints_first_untolerated(cl[c].taints, cl[c].ntaints, pl->tols, pl->ntols,
                                                BERTH_EFFECT_MASK_ANY))
            s = FLEET_F_TAINT;
        col[c] = s;
    }
    if (col != ctx->stat_buf)
        ctx->statbuilt[id] = 1;
    return col;
}

static const int8_t *pref_column(berth_fleet_ctx *ctx, uint32_t id)
{
    int8_t *col = ctx->prefcol[id];
    if (col && ctx->statbuilt[ctx->nstatcols + id])
        return col;
    if (!col)
        col = ctx->pref_scratch;
    const fleet_cpref *pr = ctx->pref_rep[id];
    for (uint32_t c = 0; c < ctx->n; c++)
        col[c] = (int8_t)fleet_pref_score(ctx, pr, c, NULL);   /* |weight| <= 100 */
    if (col != ctx->pref_scratch)
        ctx->statbuilt[ctx->nstatcols + id] = 1;
    return col;
}

static void prepare_fast(berth_fleet_ctx *ctx, uint32_t p)
{
    const berth_fleet_placement *pl = &ctx->f->placements[p];
    const fleet_cplace *cp = &ctx->cp[p];
    const uint32_t n = ctx->n;
    int64_t *restrict aff = ctx->aff;
    ctx->stat = stat_column(ctx, cp->stat_id);
    ctx->nacol = 0;
    ctx->aff_ready = 1;
    if (pl->type != BERTH_FLEET_PICK_N || cp->nprefs == 0) {
        memset(aff, 0, n * sizeof *aff);
        return;
    }
    if (cp->nprefs <= 2) {
        /* cached columns: summed later, in the pass that reads them all */
        uint32_t t;
        for (t = 0; t < cp->nprefs; t++) {
            ctx->acol[t] = pref_column(ctx, cp->pref_id[t]);
            ctx->acol_id[t] = cp->pref_id[t];
            if ((const void *)ctx->acol[t] == (const void *)ctx->pref_scratch)
                break;
        }
        if (t == cp->nprefs) {
            ctx->nacol = cp->nprefs;
            ctx->aff_ready = 0;
            return;
        }
    }
    /* a scratch column is overwritten by the next: add each as it comes */
    memset(aff, 0, n * sizeof *aff);
    for (uint32_t t = 0; t < cp->nprefs; t++) {
        const int8_t *restrict a = pref_column(ctx, cp->pref_id[t]);
        for (uint32_t c = 0; c < n; c++)
            aff[c] += a[c];
    }
}

/* Sums the cached affinity columns into aff (when no pass did). */
static void aff_fill(berth_fleet_ctx *ctx)
{
    if (ctx->aff_ready)
        return;
    int64_t *restrict aff = ctx->aff;
    const int8_t *restrict a0 = ctx->acol[0];
    if (ctx->nacol == 2) {
        const int8_t *restrict a1 = ctx->acol[1];
        for (uint32_t c = 0; c < ctx->n; c++)
            aff[c] = (int64_t)a0[c] + a1[c];
    } else {
        for (uint32_t c = 0; c < ctx->n; c++)
            aff[c] = a0[c];
    }
    ctx->aff_ready = 1;
}

/* One top-K insertion of key into bucket a (k slots, descending). */
static inline void topk_insert(uint64_t *a, uint32_t k, uint64_t key)
{
    uint32_t j = k - 1;
    while (j > 0 && a[j - 1] < key) {
        a[j] = a[j - 1];
        j--;
    }
    a[j] = key;
}

/* The scan of topk_build for nacol columns (0: aff already filled), and
 * bkt (NULL: one bucket); the affinity is summed into aff on the way. */
static inline __attribute__((always_inline)) void
topk_scan(berth_fleet_ctx *ctx, uint32_t k, const uint32_t *restrict bkt, uint32_t nacol)
{
    const uint8_t *restrict st = ctx->stat, *restrict picked = ctx->picked,
                            *restrict held = ctx->held;
    int64_t *restrict aff = ctx->aff;
    uint64_t *restrict topk = ctx->topk, *restrict tail = ctx->ktail;
    const int8_t *restrict a0 = nacol > 0 ? ctx->acol[0] : NULL;
    const int8_t *restrict a1 = nacol > 1 ? ctx->acol[1] : NULL;
    const uint32_t n = ctx->n;
    for (uint32_t c = 0; c < n; c++) {
        int64_t a;
        if (nacol == 0) {
            a = aff[c];
        } else {
            a = a0[c];
            if (nacol > 1)
                a += a1[c];
            aff[c] = a;
        }
        uint32_t b = bkt ? bkt[c] : 0;
        /* key 0 = empty slot: real keys are >= 2^57; an infeasible or
         * picked cluster is skipped like a key not above the bucket's k-th */
        uint64_t key = ((uint64_t)(a + ((int64_t)1 << 24)) << 33) |
                       ((uint64_t)(held[c] == 2) << 32) | c;
        if ((st[c] | picked[c]) || key <= tail[b])
            continue;
        uint64_t *slot = topk + (size_t)b * k;
        topk_insert(slot, k, key);
        tail[b] = slot[k - 1];
    }
}

/* The clusters by column id's contribution descending, then index
 * descending (a counting sort of the int8 values on first use); NULL when
 * the column has no room for an order. */
static const uint32_t *pref_order(berth_fleet_ctx *ctx, uint32_t id)
{
    uint32_t *o = ctx->preford[id];
    if (!o || ctx->preford_built[id])
        return o;
    const int8_t *col = ctx->prefcol[id];
    uint32_t cnt[256] = {0}, pos = 0;
    for (uint32_t c = 0; c < ctx->n; c++)
        cnt[(uint8_t)(col[c] + 128)]++;
    for (uint32_t v = 256; v-- > 0;) {
        uint32_t x = cnt[v];
        cnt[v] = pos;
        pos += x;
    }
    for (uint32_t c = ctx->n; c-- > 0;)
        o[cnt[(uint8_t)(col[c] + 128)]++] = c;
    ctx->preford_built[id] = 1;
    return o;
}

/* Statically feasible clusters per bucket of (static column sid, topology
 * tix; ntopos = one bucket), counted on first use; NULL without room. */
static const uint32_t *feasible_counts(berth_fleet_ctx *ctx, uint32_t sid, uint32_t tix,
                                       const uint32_t *bkt, uint32_t nb)
{
    size_t slot = (size_t)sid * (ctx->ntopos + 1) + tix;
    uint32_t *bc = ctx->bcount[slot];
    if (!bc || ctx->bcount_built[slot])
        return bc;
    memset(bc, 0, (size_t)nb * sizeof *bc);
    const uint8_t *st = ctx->stat;
    for (uint32_t c = 0; c < ctx->n; c++)
        bc[bkt ? bkt[c] : 0] += st[c] == 0;
    ctx->bcount_built[slot] = 1;
    return bc;
}

/* The top-K index by sorted access (Fagin's threshold algorithm): the
 * clusters are read in the order of each affinity column, alternately;
 * every statically feasible, unpicked cluster read is offered to its
 * bucket. An unread cluster's affinity is at most the sum of the columns'
 * values at the next positions (T), so a bucket is complete once its k-th
 * key is above the largest key an affinity of T could make, or once all its
 * feasible clusters were read. Returns 0 (the caller scans) when a column
 * has no sorted order, there are many buckets, or aff is filled already.
 * Leaves aff unfilled: the final pass sums the columns itself. */
static int topk_ta(berth_fleet_ctx *ctx, uint32_t k, const uint32_t *bkt, uint32_t nb,
                   uint32_t sid, uint32_t tix)
{
    const uint32_t nacol = ctx->nacol, n = ctx->n;
    if (ctx->aff_ready || nacol == 0 || nb > FLEET_TA_BUCKETS || n == 0)
        return 0;
    const uint32_t *oa = pref_order(ctx, ctx->acol_id[0]);
    const uint32_t *ob = nacol > 1 ? pref_order(ctx, ctx->acol_id[1]) : NULL;
    const uint32_t *bc = feasible_counts(ctx, sid, tix, bkt, nb);
    if (!oa || (nacol > 1 && !ob) || !bc)
        return 0;
    const int8_t *A = ctx->acol[0], *B = nacol > 1 ? ctx->acol[1] : NULL;
    const uint8_t *st = ctx->stat, *held = ctx->held;
    uint32_t *seen = ctx->seen, *remain = ctx->remain;
    uint64_t *topk = ctx->topk, *tail = ctx->ktail;
    if (++ctx->epoch == 0) {
        memset(seen, 0, n * sizeof *seen);
        ctx->epoch = 1;
    }
    const uint32_t ep = ctx->epoch;
    memcpy(remain, bc, (size_t)nb * sizeof *remain);
    /* picked clusters (held, released) are no candidates: read already */
    for (uint32_t i = 0; i < ctx->nsel; i++) {
        uint32_t c = ctx->sel[i];
        if (seen[c] != ep) {
            seen[c] = ep;
            remain[bkt ? bkt[c] : 0] -= st[c] == 0;
        }
    }
    for (uint32_t i = ctx->bind_start[ctx->cur]; i < ctx->bind_start[ctx->cur + 1]; i++) {
        uint32_t c = ctx->f->bindings[ctx->bind_idx[i]].cluster;
        if (ctx->picked[c] && seen[c] != ep) {
            seen[c] = ep;
            remain[bkt ? bkt[c] : 0] -= st[c] == 0;
        }
    }
    uint32_t ia = 0, ib = 0;
    for (;;) {
        for (int side = 0; side < (B ? 2 : 1); side++) {
            const uint32_t *o = side ? ob : oa;
            uint32_t *pi = side ? &ib : &ia;
            while (*pi < n && seen[o[*pi]] == ep)
                (*pi)++;
            if (*pi == n)
                continue;
            uint32_t c = o[(*pi)++];
            seen[c] = ep;
            if (st[c])
                continue;
            uint32_t b = bkt ? bkt[c] : 0;
            remain[b]--;
            int64_t a = (int64_t)A[c] + (B ? B[c] : 0);
            uint64_t key = ((uint64_t)(a + ((int64_t)1 << 24)) << 33) |
                           ((uint64_t)(held[c] == 2) << 32) | c;
            if (key > tail[b]) {
                uint64_t *slot = topk + (size_t)b * k;
                topk_insert(slot, k, key);
                tail[b] = slot[k - 1];
            }
        }
        while (ia < n && seen[oa[ia]] == ep)
            ia++;
        if (ia == n)
            break;   /* every cluster read (each is in column A's order) */
        while (B && ib < n && seen[ob[ib]] == ep)
            ib++;
        int64_t T = (int64_t)A[oa[ia]] + (B && ib < n ? B[ob[ib]] : 0);
        uint64_t bound = ((uint64_t)(T + ((int64_t)1 << 24)) << 33) | 0x1FFFFFFFFull;
        uint32_t b = 0;
        while (b < nb && (remain[b] == 0 || tail[b] > bound))
            b++;
        if (b == nb)
            break;
    }
    return 1;
}

/* The ranked lists of ranking id r (see state.h), filled on first use by
 * one pass over the clusters. */
static const uint64_t *rank_lists(berth_fleet_ctx *ctx, uint32_t r, const uint32_t *bkt,
                                  uint32_t nb)
{
    uint64_t *L = ctx->rank[r];
    if (!L || ctx->rank_built[r])
        return L;
    const uint32_t kk = ctx->topk_max, n = ctx->n;
    uint8_t *len = ctx->rank_len[r];
    uint32_t *cnt = ctx->remain;
    memset(L, 0, (size_t)nb * kk * sizeof *L);
    memset(cnt, 0, (size_t)nb * sizeof *cnt);
    uint64_t *tail = ctx->ktail;
    memset(tail, 0, (size_t)nb * sizeof *tail);
    const uint8_t *st = ctx->stat;
    const int8_t *A = ctx->acol[0], *B = ctx->nacol > 1 ? ctx->acol[1] : NULL;
    for (uint32_t c = 0; c < n; c++) {
        if (st[c])
            continue;
        uint32_t b = bkt ? bkt[c] : 0;
        cnt[b]++;
        int64_t a = (int64_t)A[c] + (B ? B[c] : 0);
        uint64_t key = ((uint64_t)(a + ((int64_t)1 << 24)) << 33) | c;
        if (key <= tail[b])
            continue;
        uint64_t *slot = L + (size_t)b * kk;
        topk_insert(slot, kk, key);
        tail[b] = slot[kk - 1];
    }
    for (uint32_t b = 0; b < nb; b++) {
        len[b] = (uint8_t)(cnt[b] < kk ? cnt[b] : kk);
        len[nb + b] = cnt[b] <= kk;
    }
    ctx->rank_built[r] = 1;
    return L;
}

/* The top-K index from the placement's ranked lists: per bucket the first
 * k keys not picked and without a held-before bonus, then the bonus
 * clusters (obsolete bindings of this placement) inserted with theirs: the
 * k best of a bucket are among its list's unpicked clusters and the bonus
 * ones, unless fewer than k of the list are unpicked and the list is not
 * all of the bucket. Returns 0 then (the caller builds otherwise), and
 * without ranked lists. */
static int topk_rank(berth_fleet_ctx *ctx, uint32_t k, const uint32_t *bkt, uint32_t nb)
{
    uint32_t r = ctx->cp[ctx->cur].rank_id;
    if (r == UINT32_MAX || ctx->aff_ready || ctx->nacol == 0 || !ctx->rank[r])
        return 0;
    const uint64_t *L = rank_lists(ctx, r, bkt, nb);
    const uint8_t *len = ctx->rank_len[r], *picked = ctx->picked, *held = ctx->held;
    const uint32_t kk = ctx->topk_max;
    uint64_t *topk = ctx->topk, *tail = ctx->ktail;
    for (uint32_t b = 0; b < nb; b++) {
        const uint64_t *l = L + (size_t)b * kk;
        uint64_t *slot = topk + (size_t)b * k;
        uint32_t got = 0, avail = 0, m = len[b];
        for (uint32_t i = 0; i < m && got < k; i++) {
            uint32_t c = (uint32_t)l[i];
            avail += !picked[c];
            if (!(picked[c] | (held[c] == 2)))
                slot[got++] = l[i];
        }
        if (avail < k && !len[nb + b])
            return 0;
        for (uint32_t i = got; i < k; i++)
            slot[i] = 0;
        tail[b] = slot[k - 1];
    }
    const uint8_t *st = ctx->stat;
    for (uint32_t i = ctx->bind_start[ctx->cur]; i < ctx->bind_start[ctx->cur + 1]; i++) {
        uint32_t c = ctx->f->bindings[ctx->bind_idx[i]].cluster;
        if (held[c] != 2 || picked[c] || st[c])
            continue;
        uint32_t b = bkt ? bkt[c] : 0;
        int64_t a = fleet_aff(ctx, c);
        uint64_t key = ((uint64_t)(a + ((int64_t)1 << 24)) << 33) | ((uint64_t)1 << 32) | c;
        if (key > tail[b]) {
            uint64_t *slot = topk + (size_t)b * k;
            topk_insert(slot, k, key);
            tail[b] = slot[k - 1];
        }
    }
    return 1;
}

/* Builds the top-K index (see state.h): per bucket the k best
 * (affinity, held-before, index) keys among statically feasible, unpicked
 * clusters. Every cycle's best is the best remaining key of some bucket:
 * within a bucket every cluster has the same topology-spread verdict and
 * score, and at most k picks are made. bkt: the constraint's bucket column
 * (nb buckets), NULL for one bucket. One pass over the clusters, which also
 * sums their affinity when it is still pending. */
static void topk_build(berth_fleet_ctx *ctx, uint32_t k, const uint32_t *bkt, uint32_t nb,
                       uint32_t tix)
{
    if (!bkt)
        nb = 1;
    ctx->topk_k = k;
    uint32_t nacol = ctx->aff_ready ? 0 : ctx->nacol;
    int built = topk_rank(ctx, k, bkt, nb);
    if (!built) {
        memset(ctx->topk, 0, (size_t)nb * k * sizeof *ctx->topk);
        memset(ctx->ktail, 0, (size_t)nb * sizeof *ctx->ktail);
        built = topk_ta(ctx, k, bkt, nb, ctx->cp[ctx->cur].stat_id, tix);
    }
    if (built) {
        nacol = UINT32_MAX;   /* aff stays pending */
    } else if (bkt) {
        if (nacol == 2)
            topk_scan(ctx, k, bkt, 2);
        else if (nacol == 1)
            topk_scan(ctx, k, bkt, 1);
        else
            topk_scan(ctx, k, bkt, 0);
    } else {
        if (nacol == 2)
            topk_scan(ctx, k, NULL, 2);
        else if (nacol == 1)
            topk_scan(ctx, k, NULL, 1);
        else
            topk_scan(ctx, k, NULL, 0);
    }
    if (nacol != UINT32_MAX)
        ctx->aff_ready = 1;
    ctx->nblist = 0;
    for (uint32_t b = 0; b < nb; b++) {
        const uint64_t *a = ctx->topk + (size_t)b * k;
        uint32_t m = 0;
        while (m < k && a[m])
            m++;
        ctx->topn[b] = (uint8_t)m;
        if (m)
            ctx->blist[ctx->nblist++] = b;
    }
}

static int run_cycle(berth_fleet_ctx *ctx, int reserve, berth_pick *pk)
{
    berth_cycle *cy = &ctx->cycle;
    const int fast = !ctx->opt.reference;
    if (fast) {
        if (ctx->spread_on) {   /* the domain state this cycle sees, for the final pass */
            size_t m = (size_t)ctx->f->placements[ctx->cur].nspread * ctx->maxdom;
            memcpy(ctx->snap_change, ctx->dchange, m);
            memcpy(ctx->snap_viol, ctx->dviol, m);
        }
    } else {
        memset(cy->first_reject, 0, cy->cap);
    }
    int rc = reserve ? berth_pipeline_place(berth_fleet_profile(), ctx, NULL, cy, ctx->n, 1, pk)
                     : berth_pipeline_pick(berth_fleet_profile(), ctx, NULL, cy, ctx->n, 1, pk);
    if (rc == BERTH_ENOFIT)
        rc = 0;
    if (rc)
        return rc;
    /* the scores of this cycle for every feasible cluster (a picked one
     * keeps them); the fast path records the pick's only and derives the
     * others in the final pass */
    for (uint32_t i = 0; i < pk->nfeasible; i++) {
        uint32_t c = cy->feasible[i];
        if (fast && reserve && c != pk->chosen)
            continue;
        ctx->out_spread[c] = cy->scores[i];
        ctx->out_aff[c] = cy->scores[(size_t)cy->cap + i];
    }
    return 0;
}

static int cmp_release(const void *a, const void *b, void *arg)
{
    const berth_fleet_ctx *ctx = arg;
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    /* Scheduled before Bound, lowest (spread, affinity) first, smaller name first */
    if (ctx->heldstate[x] != ctx->heldstate[y])
        return ctx->heldstate[x] < ctx->heldstate[y] ? -1 : 1;
    if (ctx->out_spread[x] != ctx->out_spread[y])
        return ctx->out_spread[x] < ctx->out_spread[y] ? -1 : 1;
    if (ctx->out_aff[x] != ctx->out_aff[y])
        return ctx->out_aff[x] < ctx->out_aff[y] ? -1 : 1;
    return x < y ? -1 : x > y;
}

static int cmp_pickall(const void *a, const void *b, void *arg)
{
    const berth_fleet_ctx *ctx = arg;
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    int hx = ctx->held[x] == 2, hy = ctx->held[y] == 2;
    if (hx != hy)
        return hx ? -1 : 1;
    return x > y ? -1 : x < y;   /* name descending */
}

/* Resets the per-placement flags the previous placement set (fast path:
 * only the clusters it touched). */
static void reset_scratch(berth_fleet_ctx *ctx)
{
    uint32_t n = ctx->n;
    if (ctx->opt.reference || ctx->prev == UINT32_MAX) {
        memset(ctx->picked, 0, n);
        memset(ctx->held, 0, n);
        memset(ctx->heldstate, 0, n);
        memset(ctx->rel, 0, n);
        memset(ctx->reject, 0, n);
        memset(ctx->out_aff, 0, n * sizeof *ctx->out_aff);
        memset(ctx->out_spread, 0, n * sizeof *ctx->out_spread);
        return;
    }
    /* picked is set only on sel[] members and released (held) clusters;
     * held, heldstate and rel only on the clusters of bindings */
    for (uint32_t i = 0; i < ctx->prev_nsel; i++)
        ctx->picked[ctx->sel[i]] = 0;
    for (uint32_t i = ctx->bind_start[ctx->prev]; i < ctx->bind_start[ctx->prev + 1]; i++) {
        uint32_t c = ctx->f->bindings[ctx->bind_idx[i]].cluster;
        ctx->picked[c] = ctx->held[c] = ctx->heldstate[c] = ctx->rel[c] = 0;
    }
    /* reject, out_aff and out_spread are rewritten by the final pass (the
     * early returns clear them themselves) */
}

/* Final statuses (fast path): the last cycle's verdicts and scores derived
 * per cluster from its static verdict and the domain state that cycle saw
 * (snap_*), as the full scan would have computed them. */
/* The final pass's loop over clusters c0.. (one verdict and score per
 * bucket): nacol 0 reads aff, else sums the cached columns. */
static inline __attribute__((always_inline)) void
finish_scan(berth_fleet_ctx *ctx, int has_bkt, uint32_t nacol, uint32_t c0)
{
    const uint32_t *restrict bkt = has_bkt ? ctx->topos[ctx->cp[ctx->cur].spread_col[0]].bkt : NULL;
    const uint8_t *restrict st = ctx->stat, *restrict br = ctx->fin_r;
    const int64_t *restrict bs = ctx->fin_s, *restrict aff = ctx->aff;
    const int8_t *restrict a0 = nacol > 0 ? ctx->acol[0] : NULL;
    const int8_t *restrict a1 = nacol > 1 ? ctx->acol[1] : NULL;
    uint8_t *restrict reject = ctx->reject, *restrict cstatus = ctx->cstatus;
    int64_t *restrict oa = ctx->out_aff, *restrict os = ctx->out_spread;
    const uint8_t cs_pass = BERTH_FLEET_NOT_SELECTED, cs_fail = BERTH_FLEET_FILTERED;
    const uint32_t n = ctx->n;
    /* branch-free: the verdicts come in no predictable order */
    for (uint32_t c = c0; c < n; c++) {
        uint32_t b = has_bkt ? bkt[c] : 0;
        uint8_t r = st[c];
        if (has_bkt)
            r = (uint8_t)(r | (br[b] & (uint8_t)-(r == 0)));
        int64_t a = nacol == 0 ? aff[c] : nacol == 1 ? a0[c] : (int64_t)a0[c] + a1[c];
        int64_t keep = -(int64_t)(r == 0);
        reject[c] = r;
        cstatus[c] = (uint8_t)(cs_fail ^ ((cs_fail ^ cs_pass) & (uint8_t)keep));
        oa[c] = a & keep;
        os[c] = has_bkt ? bs[b] & keep : 0;
    }
}

/* The same pass 16 clusters at a time with AVX2 (x86-64 with GCC or
 * Clang, chosen at run time: the CPU is asked once per context), for at
 * most FLEET_VEC_BUCKETS buckets given in bytes (bkt8): a bucket's verdict
 * and spread score (|score| <= 1000, as two byte tables) are looked up by
 * byte shuffles, the affinity is summed in 16-bit lanes and sign-extended to
 * the outcome's 64-bit scores at the store. The last n % 16 clusters, and
 * every cluster without AVX2, take finish_scan. */
#ifdef FLEET_AVX2
__attribute__((target("avx2"))) static inline void fv_store16(int64_t *out, __m256i v)
{
    __m128i lo = _mm256_castsi256_si128(v), hi = _mm256_extracti128_si256(v, 1);
    _mm256_storeu_si256((__m256i *)(void *)out, _mm256_cvtepi16_epi64(lo));
    _mm256_storeu_si256((__m256i *)(void *)(out + 4), _mm256_cvtepi16_epi64(_mm_srli_si128(lo, 8)));
    _mm256_storeu_si256((__m256i *)(void *)(out + 8), _mm256_cvtepi16_epi64(hi));
    _mm256_storeu_si256((__m256i *)(void *)(out + 12), _mm256_cvtepi16_epi64(_mm_srli_si128(hi, 8)));
}

__attribute__((target("avx2"))) static inline __attribute__((always_inline)) void
finish_vec(berth_fleet_ctx *ctx, int has_bkt, uint32_t nacol)
{
    const fleet_topo *tp = has_bkt ? &ctx->topos[ctx->cp[ctx->cur].spread_col[0]] : NULL;
    const uint8_t *restrict bkt8 = has_bkt ? tp->bkt8 : NULL;
    const uint32_t nb = has_bkt ? tp->ndom + 1 : 0;
    const uint8_t *restrict st = ctx->stat;
    const int64_t *restrict aff = ctx->aff;
    const int8_t *restrict a0 = nacol > 0 ? ctx->acol[0] : NULL;
    const int8_t *restrict a1 = nacol > 1 ? ctx->acol[1] : NULL;
    uint8_t *restrict reject = ctx->reject, *restrict cstatus = ctx->cstatus;
    int64_t *restrict oa = ctx->out_aff, *restrict os = ctx->out_spread;
    const uint8_t cs_pass = BERTH_FLEET_NOT_SELECTED, cs_fail = BERTH_FLEET_FILTERED;
    uint8_t tr[16] = {0}, tlo[16] = {0}, thi[16] = {0};
    for (uint32_t d = 0; d < nb; d++) {
        uint16_t v = (uint16_t)(int16_t)ctx->fin_s[d];
        tr[d] = ctx->fin_r[d];
        tlo[d] = (uint8_t)v;
        thi[d] = (uint8_t)(v >> 8);
    }
    const __m128i lr = _mm_loadu_si128((const __m128i *)(const void *)tr),
                  llo = _mm_loadu_si128((const __m128i *)(const void *)tlo),
                  lhi = _mm_loadu_si128((const __m128i *)(const void *)thi),
                  zero = _mm_setzero_si128(), vfail = _mm_set1_epi8((char)cs_fail),
                  vflip = _mm_set1_epi8((char)(cs_fail ^ cs_pass));
    const uint32_t n = ctx->n;
    uint32_t c = 0;
    for (; c + 16 <= n; c += 16) {
        __m128i r = _mm_loadu_si128((const __m128i *)(const void *)(st + c));
        __m256i s16 = _mm256_setzero_si256();
        if (has_bkt) {
            __m128i b = _mm_loadu_si128((const __m128i *)(const void *)(bkt8 + c));
            __m128i rb = _mm_shuffle_epi8(lr, b);
            r = _mm_or_si128(r, _mm_and_si128(rb, _mm_cmpeq_epi8(r, zero)));
            __m128i slo = _mm_shuffle_epi8(llo, b), shi = _mm_shuffle_epi8(lhi, b);
            s16 = _mm256_set_m128i(_mm_unpackhi_epi8(slo, shi), _mm_unpacklo_epi8(slo, shi));
        }
        __m128i keep8 = _mm_cmpeq_epi8(r, zero);
        __m256i keep16 = _mm256_cvtepi8_epi16(keep8);
        _mm_storeu_si128((__m128i *)(void *)(reject + c), r);
        _mm_storeu_si128((__m128i *)(void *)(cstatus + c),
                         _mm_xor_si128(vfail, _mm_and_si128(vflip, keep8)));
        if (nacol == 0) {
            __m128i k = keep8;
            for (int q = 0; q < 4; q++, k = _mm_srli_si128(k, 4)) {
                __m256i k64 = _mm256_cvtepi8_epi64(k);
                __m256i v = _mm256_loadu_si256((const __m256i *)(const void *)(aff + c + 4 * q));
                _mm256_storeu_si256((__m256i *)(void *)(oa + c + 4 * q), _mm256_and_si256(v, k64));
            }
        } else {
            __m256i a16 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(const void *)(a0 + c)));
            if (nacol > 1)
                a16 = _mm256_add_epi16(
                    a16, _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(const void *)(a1 + c))));
            fv_store16(oa + c, _mm256_and_si256(a16, keep16));
        }
        fv_store16(os + c, _mm256_and_si256(s16, keep16));
    }
    finish_scan(ctx, has_bkt, nacol, c);
}
#endif

/* the variants (b: one spread constraint with byte buckets; n: none; w:
 * more buckets), each its own small function (registers) */
#ifdef FLEET_AVX2
#define FLEET_VEC(name, bk, na)                                                                    \
    __attribute__((target("avx2"), noinline)) static void name(berth_fleet_ctx *ctx)             \
    {                                                                                              \
        finish_vec(ctx, bk, na);                                                                   \
    }
#else
#define FLEET_VEC(name, bk, na)                                                                    \
    static __attribute__((noinline)) void name(berth_fleet_ctx *ctx) { finish_scan(ctx, bk, na, 0); }
#endif
FLEET_VEC(finish_b2, 1, 2)
FLEET_VEC(finish_b1, 1, 1)
FLEET_VEC(finish_b0, 1, 0)
FLEET_VEC(finish_n2, 0, 2)
FLEET_VEC(finish_n1, 0, 1)
FLEET_VEC(finish_n0, 0, 0)
static __attribute__((noinline)) void finish_s2(berth_fleet_ctx *ctx) { finish_scan(ctx, 1, 2, 0); }
static __attribute__((noinline)) void finish_s1(berth_fleet_ctx *ctx) { finish_scan(ctx, 1, 1, 0); }
static __attribute__((noinline)) void finish_s0(berth_fleet_ctx *ctx) { finish_scan(ctx, 1, 0, 0); }
static __attribute__((noinline)) void finish_t2(berth_fleet_ctx *ctx) { finish_scan(ctx, 0, 2, 0); }
static __attribute__((noinline)) void finish_t1(berth_fleet_ctx *ctx) { finish_scan(ctx, 0, 1, 0); }
static __attribute__((noinline)) void finish_t0(berth_fleet_ctx *ctx) { finish_scan(ctx, 0, 0, 0); }

static void finish_fast(berth_fleet_ctx *ctx)
{
    const berth_fleet_placement *pl = &ctx->f->placements[ctx->cur];
    const uint8_t *st = ctx->stat, *picked = ctx->picked, *rel = ctx->rel;
    const int64_t *aff = ctx->aff;
    uint8_t *reject = ctx->reject, *cstatus = ctx->cstatus;
    int64_t *oa = ctx->out_aff, *os = ctx->out_spread;
    const uint32_t n = ctx->n, nk = ctx->spread_on ? pl->nspread : 0, md = ctx->maxdom;
    if (nk <= 1) {
        /* one verdict and score per domain (bucket nodom: no key) */
        const fleet_topo *tp = nk ? &ctx->topos[ctx->cp[ctx->cur].spread_col[0]] : NULL;
        const uint32_t *restrict bkt = tp ? tp->bkt : NULL;
        const uint32_t nodom = tp ? tp->ndom : 0;
        uint8_t *br = ctx->fin_r;
        int64_t *bs = ctx->fin_s;
        const int anyway = nk && pl->spread[0].schedule_anyway;
        for (uint32_t d = 0; d < nodom; d++) {
            int v = ctx->snap_viol[d];
            br[d] = v && !anyway ? FLEET_F_SPREAD : 0;
            bs[d] = v && anyway ? -1000 : -(int64_t)ctx->snap_change[d];
        }
        br[nodom] = 0;
        bs[nodom] = 0;
        /* the selected clusters (picked, released) keep the scores they
         * have: put aside, one branch-free pass over every cluster, then
         * their statuses and scores restored */
        uint32_t *keep = ctx->order, nkeep = 0;
        for (uint32_t i = 0; i < ctx->nsel; i++)
            keep[nkeep++] = ctx->sel[i];
        for (uint32_t i = ctx->bind_start[ctx->cur]; i < ctx->bind_start[ctx->cur + 1]; i++) {
            uint32_t c = ctx->f->bindings[ctx->bind_idx[i]].cluster;
            if (rel[c] && picked[c] && nkeep < n)
                keep[nkeep++] = c;
        }
        for (uint32_t i = 0; i < nkeep; i++) {
            ctx->stash_a[i] = oa[keep[i]];
            ctx->stash_s[i] = os[keep[i]];
        }
        uint32_t nacol = ctx->aff_ready ? 0 : ctx->nacol;
        if (bkt && tp->bkt8 && ctx->avx2)
            (nacol == 2 ? finish_b2 : nacol == 1 ? finish_b1 : finish_b0)(ctx);
        else if (bkt)
            (nacol == 2 ? finish_s2 : nacol == 1 ? finish_s1 : finish_s0)(ctx);
        else if (ctx->avx2)
            (nacol == 2 ? finish_n2 : nacol == 1 ? finish_n1 : finish_n0)(ctx);
        else
            (nacol == 2 ? finish_t2 : nacol == 1 ? finish_t1 : finish_t0)(ctx);
        for (uint32_t i = 0; i < nkeep; i++) {
            uint32_t c = keep[i];
            reject[c] = 0;
            cstatus[c] = rel[c] ? BERTH_FLEET_NOT_SELECTED : BERTH_FLEET_SELECTED;
            oa[c] = ctx->stash_a[i];
            os[c] = ctx->stash_s[i];
        }
        return;
    }
    aff_fill(ctx);
    for (uint32_t c = 0; c < n; c++) {
        if (picked[c]) {
            reject[c] = 0;
            cstatus[c] = rel[c] ? BERTH_FLEET_NOT_SELECTED : BERTH_FLEET_SELECTED;
            continue;
        }
        uint8_t r = st[c];
        int64_t sc = 0;
        for (uint32_t k = 0; k < nk && !r; k++) {
            uint32_t d = ctx->kdom[k][c];
            if (d == UINT32_MAX)
                continue;
            size_t i = (size_t)k * md + d;
            int anyway = pl->spread[k].schedule_anyway;
            if (ctx->snap_viol[i] && !anyway)
                r = FLEET_F_SPREAD;
            sc += ctx->snap_viol[i] && anyway ? -1000 : -(int64_t)ctx->snap_change[i];
        }
        reject[c] = r;
        if (r) {
            cstatus[c] = BERTH_FLEET_FILTERED;
            oa[c] = os[c] = 0;
        } else {
            cstatus[c] = BERTH_FLEET_NOT_SELECTED;
            oa[c] = aff[c];
            os[c] = sc;
        }
    }
}

int berth_fleet_place(berth_fleet_ctx *ctx, uint32_t p, berth_fleet_outcome *out)
{
    const berth_fleet *f = ctx->f;
    const berth_fleet_placement *pl = &f->placements[p];
    const fleet_cplace *cp = &ctx->cp[p];
    const int fast = !ctx->opt.reference;
    uint32_t n = ctx->n;
    if (ctx->opt.cancel && berth_cancel_expired(ctx->opt.cancel)) {
        memset(out, 0, sizeof *out);
        return BERTH_ETIMEDOUT;
    }
    reset_scratch(ctx);
    ctx->prev = p;
    ctx->cur = p;
    ctx->spread_on = 0;
    ctx->use_topk = 0;
    ctx->nsel = 0;
    ctx->prev_nsel = 0;
    ctx->nnotfound = 0;
    memset(out, 0, sizeof *out);
    out->placement = p;
    out->cstatus = ctx->cstatus;
    out->affinity = ctx->out_aff;
    out->spread = ctx->out_spread;
    out->held = ctx->held;
    out->selected = ctx->sel;
    out->notfound = ctx->notfound;

    if (cp->error || pl->type == BERTH_FLEET_PICK_FIXED) {
        memset(ctx->reject, 0, n);
        memset(ctx->out_aff, 0, n * sizeof *ctx->out_aff);
        memset(ctx->out_spread, 0, n * sizeof *ctx->out_spread);
    }
    if (cp->error) {
        out->status = BERTH_FLEET_POLICY_ERROR;
        snprintf(out->reason, sizeof out->reason, "%s", cp->why);
        memset(ctx->cstatus, BERTH_FLEET_INVALID, n);
        return 0;
    }
    if (pl->type == BERTH_FLEET_PICK_FIXED) {
        uint32_t bad = 0, wanted = 0;
        memset(ctx->cstatus, BERTH_FLEET_NOT_SELECTED, n);
        for (uint32_t i = 0; i < pl->nfixed; i++) {
            const char *nm = pl->fixed[i];
            uint32_t j, c = berth_fleet_find_cluster(f, nm);
            for (j = 0; j < i && strcmp(pl->fixed[j], nm); j++)
                ;
            if (j < i)
                continue;   /* duplicate name */
            wanted++;
            if (c == BERTH_FLEET_NONE) {
                ctx->notfound[ctx->nnotfound++] = nm;
                bad++;
            } else if (!ctx->eligible[c]) {
                ctx->cstatus[c] = BERTH_FLEET_INVALID;
                bad++;
            } else {
                ctx->cstatus[c] = BERTH_FLEET_SELECTED;
                ctx->picked[c] = 1;
                ctx->sel[ctx->nsel++] = c;
            }
        }
        ctx->prev_nsel = ctx->nsel;
        out->wanted = wanted;
        out->nselected = ctx->nsel;
        out->nnotfound = ctx->nnotfound;
        out->status = bad ? BERTH_FLEET_UNFULFILLED : BERTH_FLEET_FULFILLED;
        if (bad)
            snprintf(out->reason, sizeof out->reason,
                     "%u of %u clusterNames could not be placed (%u not found, %u invalid)", bad,
                     wanted, ctx->nnotfound, bad - ctx->nnotfound);
        return 0;
    }

    /* held clusters, from Scheduled / Bound bindings (input order; the
     * group has no Unscheduled ones). An obsolete binding (an older policy
     * snapshot) holds nothing: its cluster is filtered and scored again,
     * does not count toward spread domains, and gets the +1 (KubeFleet's
     * classifyBindings and sameplacementaffinity Score) */
    uint32_t nheld = 0;
    const uint32_t b0 = ctx->bind_start[p], b1 = ctx->bind_start[p + 1];
    for (uint32_t i = b0; i < b1; i++) {
        const berth_fleet_binding *b = &f->bindings[ctx->bind_idx[i]];
        if (b->obsolete) {
            ctx->held[b->cluster] = 2;
            continue;
        }
        ctx->held[b->cluster] = 1;
        ctx->heldstate[b->cluster] = (uint8_t)(b->state + 1);
        ctx->order[nheld++] = b->cluster;
    }
    if (fast)
        prepare_fast(ctx, p);
    else
        prepare(ctx, p);
    ctx->spread_on = pl->type == BERTH_FLEET_PICK_N && pl->nspread > 0;
    for (uint32_t k = 0; k < pl->nspread; k++)
        ctx->kdom[k] = ctx->topos[cp->spread_col[k]].dom;
    if (ctx->spread_on) {
        memset(ctx->counts, 0, (size_t)pl->nspread * ctx->maxdom * sizeof *ctx->counts);
        for (uint32_t k = 0; k < pl->nspread; k++) {
            const fleet_topo *tp = &ctx->topos[cp->spread_col[k]];
            for (uint32_t i = 0; i < nheld; i++) {
                uint32_t d = tp->dom[ctx->order[i]];
                if (d != UINT32_MAX)
                    ctx->counts[(size_t)k * ctx->maxdom + d]++;
            }
        }
    }
    /* held scores: the binding's recorded decision, else the affinity now */
    for (uint32_t i = 0; i < nheld; i++) {
        ctx->out_aff[ctx->order[i]] = fleet_aff(ctx, ctx->order[i]);
        ctx->out_spread[ctx->order[i]] = 0;
    }
    for (uint32_t i = b0; i < b1; i++) {
        const berth_fleet_binding *b = &f->bindings[ctx->bind_idx[i]];
        if (!b->obsolete && b->has_score) {
            ctx->out_aff[b->cluster] = b->affinity_score;
            ctx->out_spread[b->cluster] = b->spread_score;
        }
    }
    if (pl->type == BERTH_FLEET_PICK_N && (int64_t)nheld > pl->n) {
        /* shrink: release Scheduled before Bound, lowest score, smaller name;
         * released clusters are not candidates again in this run */
        uint32_t *tmp = ctx->sel;   /* sel is empty now: use it as scratch */
        memcpy(tmp, ctx->order, nheld * sizeof *tmp);
        qsort_r(tmp, nheld, sizeof *tmp, cmp_release, ctx);
        uint32_t nrel = nheld - (uint32_t)pl->n;
        for (uint32_t i = 0; i < nrel; i++)
            ctx->rel[tmp[i]] = ctx->picked[tmp[i]] = 1;
        if (ctx->spread_on)
            for (uint32_t k = 0; k < pl->nspread; k++) {
                const fleet_topo *tp = &ctx->topos[cp->spread_col[k]];
                for (uint32_t i = 0; i < nrel; i++) {
                    uint32_t d = tp->dom[tmp[i]];
                    if (d != UINT32_MAX)
                        ctx->counts[(size_t)k * ctx->maxdom + d]--;
                }
            }
    }
    for (uint32_t i = 0; i < nheld; i++)
        if (!ctx->rel[ctx->order[i]]) {
            ctx->picked[ctx->order[i]] = 1;
            ctx->sel[ctx->nsel++] = ctx->order[i];
        }
    for (uint32_t k = 0; ctx->spread_on && k < pl->nspread; k++)
        fleet_domain_stats(ctx, k);

    berth_pick pk;
    int rc;
    if (pl->type == BERTH_FLEET_PICK_ALL) {
        rc = run_cycle(ctx, 0, &pk);
        ctx->prev_nsel = ctx->nsel;
        if (rc)
            return rc;
        uint32_t nf = pk.nfeasible, base = ctx->nsel;
        for (uint32_t i = 0; i < nf; i++)
            ctx->sel[base + i] = ctx->cycle.feasible[i];
        qsort_r(ctx->sel + base, nf, sizeof *ctx->sel, cmp_pickall, ctx);
        for (uint32_t i = 0; i < nf; i++)
            ctx->picked[ctx->sel[base + i]] = 1;
        ctx->nsel += nf;
        out->status = BERTH_FLEET_FULFILLED;
    } else {
        uint64_t want = (uint64_t)pl->n;
        out->wanted = (uint32_t)pl->n;
        if (fast && ctx->nsel < want && want - ctx->nsel <= ctx->topk_max && pl->nspread <= 1) {
            uint32_t k = (uint32_t)(want - ctx->nsel);
            if (pl->nspread == 1) {
                const fleet_topo *tp = &ctx->topos[cp->spread_col[0]];
                topk_build(ctx, k, tp->bkt, tp->ndom + 1, cp->spread_col[0]);
            } else {
                topk_build(ctx, k, NULL, 1, ctx->ntopos);
            }
            ctx->use_topk = 1;
        }
        int cycles = 0;
        rc = 0;
        while (ctx->nsel < want) {
            if (berth_cancel_poll(ctx->opt.cancel, &ctx->cancel_tick)) {
                rc = BERTH_ETIMEDOUT;
                break;
            }
            if ((rc = run_cycle(ctx, 1, &pk)))
                break;
            cycles++;
            if (pk.chosen == BERTH_NO_CANDIDATE)
                break;
        }
        ctx->use_topk = 0;
        ctx->prev_nsel = ctx->nsel;
        if (rc)
            return rc;
        if (!cycles) {   /* scores and reasons for the report */
            if (!fast) {
                if ((rc = run_cycle(ctx, 0, &pk)))
                    return rc;
            } else if (ctx->spread_on) {
                size_t m = (size_t)pl->nspread * ctx->maxdom;
                memcpy(ctx->snap_change, ctx->dchange, m);
                memcpy(ctx->snap_viol, ctx->dviol, m);
            }
        }
        if (ctx->nsel < want) {
            out->status = BERTH_FLEET_UNFULFILLED;
            snprintf(out->reason, sizeof out->reason,
                     "numberOfClusters is %" PRId64 " but only %u eligible clusters fit: short by "
                     "%" PRIu64,
                     pl->n, ctx->nsel, want - ctx->nsel);
        } else {
            out->status = BERTH_FLEET_FULFILLED;
        }
    }
    ctx->prev_nsel = ctx->nsel;
    if (fast) {
        finish_fast(ctx);
    } else {
        for (uint32_t c = 0; c < n; c++) {
            if (!ctx->picked[c])   /* the last cycle's verdicts */
                ctx->reject[c] = ctx->stat[c] ? ctx->stat[c] : ctx->cycle.first_reject[c];
            if (ctx->rel[c])
                ctx->cstatus[c] = BERTH_FLEET_NOT_SELECTED;
            else if (ctx->picked[c])
                ctx->cstatus[c] = BERTH_FLEET_SELECTED;
            else if (ctx->reject[c])
                ctx->cstatus[c] = BERTH_FLEET_FILTERED;
            else
                ctx->cstatus[c] = BERTH_FLEET_NOT_SELECTED;
            if (ctx->cstatus[c] == BERTH_FLEET_FILTERED)
                ctx->out_aff[c] = ctx->out_spread[c] = 0;
        }
    }
    out->nselected = ctx->nsel;
    return 0;
}

void berth_fleet_reason(const berth_fleet_ctx *ctx, uint32_t c, char *buf, size_t size)
{
    const berth_fleet_placement *pl = &ctx->f->placements[ctx->cur];
    const fleet_cplace *cp = &ctx->cp[ctx->cur];
    const berth_profile *prof = berth_fleet_profile();
    if (size)
        buf[0] = 0;
    switch ((berth_fleet_cstatus)ctx->cstatus[c]) {
    case BERTH_FLEET_INVALID:
        if (cp->error)
            snprintf(buf, size, "invalid policy: %s", cp->why);
        else {
            char why[300];
            berth_fleet_eligible(&ctx->f->clusters[c], ctx->opt.now_ms, why, sizeof why);
            snprintf(buf, size, "listed in clusterNames but ineligible: %s", why);
        }
        return;
    case BERTH_FLEET_FILTERED:
        if (ctx->reject[c] >= 1 && ctx->reject[c] <= prof->nfilters)
            prof->filters[ctx->reject[c] - 1]->reason((void *)ctx, NULL, c, buf, size);
        return;
    case BERTH_FLEET_SELECTED:
        if (pl->type == BERTH_FLEET_PICK_FIXED)
            snprintf(buf, size, "listed in clusterNames");
        else if (ctx->held[c] == 1)
            snprintf(buf, size, "already holds the placement (binding %s); kept",
                     ctx->heldstate[c] == BERTH_BINDING_BOUND + 1 ? "Bound" : "Scheduled");
        else if (pl->type == BERTH_FLEET_PICK_ALL)
            snprintf(buf, size, "passes every filter (PickAll)");
        else
            snprintf(buf, size, "picked by score%s",
                     ctx->held[c] == 2 ? " (obsolete binding from an older policy snapshot: +1)"
                                       : "");
        return;
    case BERTH_FLEET_NOT_SELECTED:
        if (pl->type == BERTH_FLEET_PICK_FIXED)
            snprintf(buf, size, "not in clusterNames");
        else if (ctx->rel[c])
            snprintf(buf, size,
                     "released: numberOfClusters shrank to %" PRId64
                     " (Scheduled before Bound, lowest score, then smaller name first)",
                     pl->n);
        else if (pl->type == BERTH_FLEET_PICK_N && ctx->held[c] == 2)
            snprintf(buf, size, "feasible, but ranked below the %" PRId64 " picked clusters "
                     "(obsolete binding from an older policy snapshot: not kept)", pl->n);
        else
            snprintf(buf, size, "feasible, but ranked below the %" PRId64 " picked clusters",
                     pl->n);
        return;
    case BERTH_FLEET_NOT_FOUND:
        snprintf(buf, size, "no such member cluster");
        return;
    }
}

int64_t berth_fleet_term_score(const berth_fleet_ctx *ctx, uint32_t t, uint32_t c, double *ratio)
{
    const fleet_cplace *cp = &ctx->cp[ctx->cur];
    if (cp->error || t >= ctx->f->placements[ctx->cur].npref) {
        if (ratio)
            *ratio = NAN;
        return 0;
    }
    return fleet_pref_score(ctx, &cp->prefs[t], c, ratio);
}

const berth_fleet *berth_fleet_ctx_fleet(const berth_fleet_ctx *ctx) { return ctx->f; }
