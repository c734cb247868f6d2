/* kube/labelcols.c - per-key node label columns and NodeAffinity's Filter
 * read from them (kube/labelcols.h): a column per label key named by a
 * pod's nodeSelector or required node affinity (one value id per node,
 * values interned by text), and per requirement a table over the key's
 * value ids filled by berth_requirement_matches itself, so a node's
 * verdict costs a column read and a table read per requirement instead of
 * a binary search over the node's label strings. Both tables hash under the
 * opener's key (berth/hash.h): keys and values are the input's. */
#include "kube/labelcols.h"
#include "berth/grow.h"
#include "berth/error.h"
#include "berth/hash.h"
#include "berth/labels.h"
#include "berth/pipeline.h"

#include <stdlib.h>
#include <string.h>

typedef struct lc_col {
    char *key;            /* the label key (NULL keys read as "") */
    uint64_t hash;
    uint32_t *ids;        /* per node: value id, 0 when the label is absent */
    const char **vals;    /* id -> value text (borrowed from the nodes); [0] unused */
    uint32_t nvals;       /* ids 1..nvals */
} lc_col;

/* one requirement of the pod: its column and its table over value ids */
typedef struct lc_check {
    const uint32_t *ids;
    const uint8_t *tab;
} lc_check;

struct kube_labelcols {
    berth_hashkey hkey; /* the opener's: column keys and values hash under it */
    const berth_knode *nodes;
    uint32_t N;
    lc_col *cols;
    uint32_t ncols, capcols;
    uint32_t *ctab, ccap; /* open addressing over cols: index + 1 */
    /* scratch of kube_labelcols_affinity (kept between calls) */
    uint32_t *vtab, vcap; /* value interning while a column is built */
    lc_check *chk;
    uint32_t capchk;
    uint32_t *tend;       /* per term: end of its checks in chk */
    uint32_t captend;
    uint8_t *tabs;
    size_t captabs;
};

static const char *str(const char *s)
{
    return s ? s : "";
}

int kube_labelcols_open(kube_labelcols **out, const berth_knode *nodes, uint32_t nnodes,
                        const berth_hashkey *key)
{
    *out = calloc(1, sizeof **out);
    if (!*out)
        return BERTH_ENOMEM;
    (*out)->hkey = *key;
    (*out)->nodes = nodes;
    (*out)->N = nnodes;
    return 0;
}

void kube_labelcols_close(kube_labelcols *c)
{
    if (!c)
        return;
    for (uint32_t i = 0; i < c->ncols; i++) {
        free(c->cols[i].key);
        free(c->cols[i].ids);
        free(c->cols[i].vals);
    }
    free(c->cols);
    free(c->ctab);
    free(c->vtab);
    free(c->chk);
    free(c->tend);
    free(c->tabs);
    free(c);
}

uint32_t kube_labelcols_ncols(const kube_labelcols *c)
{
    return c ? c->ncols : 0;
}

uint32_t kube_labelcols_longest_run(const kube_labelcols *c)
{
    return c ? berth_slots_longest_run(c->ctab, c->ccap) : 0;
}

/* Builds key's column: one label lookup per node, values interned. */
static int build(kube_labelcols *c, lc_col *col)
{
    uint32_t N = c->N;
    col->ids = malloc((N ? N : 1) * sizeof *col->ids);
    /* at most min(N, 2^k) distinct values: the table starts small, doubles */
    uint32_t capvals = 16;
    col->vals = malloc(capvals * sizeof *col->vals);
    if (!col->ids || !col->vals)
        return BERTH_ENOMEM;
    col->vals[0] = NULL;
    col->nvals = 0;
    uint32_t tcap = 32;
    if (berth_grow((void **)&c->vtab, &c->vcap, tcap, sizeof *c->vtab, 0))
        return BERTH_ENOMEM;
    memset(c->vtab, 0, tcap * sizeof *c->vtab);
    for (uint32_t n = 0; n < N; n++) {
        const char *v = berth_labels_get(&c->nodes[n].labels, col->key);
        if (!v) {
            col->ids[n] = 0;
            continue;
        }
        size_t len = strlen(v);
        uint64_t h = berth_hash_keyed(&c->hkey, v, len);
        uint32_t i = (uint32_t)h & (tcap - 1), id;
        while ((id = c->vtab[i]) && strcmp(col->vals[id], v))
            i = (i + 1) & (tcap - 1);
        if (!id) {
            if (col->nvals + 1 == capvals) {
                const char **q = realloc(col->vals, 2 * capvals * sizeof *q);
                if (!q)
                    return BERTH_ENOMEM;
                col->vals = q;
                capvals *= 2;
            }
            id = ++col->nvals;
            col->vals[id] = v;
            c->vtab[i] = id;
            if (col->nvals * 2 > tcap) { /* rehash at half full */
                tcap *= 2;
                if (berth_grow((void **)&c->vtab, &c->vcap, tcap, sizeof *c->vtab, 0))
                    return BERTH_ENOMEM;
                memset(c->vtab, 0, tcap * sizeof *c->vtab);
                for (uint32_t u = 1; u <= col->nvals; u++) {
                    const char *s = col->vals[u];
                    uint32_t j = (uint32_t)berth_hash_keyed(&c->hkey, s, strlen(s)) & (tcap - 1);
                    while (c->vtab[j])
                        j = (j + 1) & (tcap - 1);
                    c->vtab[j] = u;
                }
            }
        }
        col->ids[n] = id;
    }
    return 0;
}

/* key's column (built on first use): its index in c->cols (which may move
 * when a later column is added: callers keep indices, not pointers), or
 * UINT32_MAX on ENOMEM */
static uint32_t column(kube_labelcols *c, const char *key)
{
    key = str(key);
    size_t len = strlen(key);
    uint64_t h = berth_hash_keyed(&c->hkey, key, len);
    if (c->ccap) {
        for (uint32_t i = (uint32_t)h & (c->ccap - 1), e; (e = c->ctab[i]);
             i = (i + 1) & (c->ccap - 1))
            if (c->cols[e - 1].hash == h && !strcmp(c->cols[e - 1].key, key))
                return e - 1;
    }
    if ((c->ncols + 1) * 2 > c->ccap &&
        berth_slots_rebuild(&c->ctab, &c->ccap, c->ccap ? c->ccap * 2 : 16, c->cols,
                            sizeof *c->cols, offsetof(lc_col, hash), sizeof c->cols->hash,
                            c->ncols))
        return UINT32_MAX;
    if (berth_grow((void **)&c->cols, &c->capcols, c->ncols + 1, sizeof *c->cols, 0))
        return UINT32_MAX;
    lc_col *col = &c->cols[c->ncols];
    memset(col, 0, sizeof *col);
    if (!(col->key = malloc(len + 1)))
        return UINT32_MAX;
    memcpy(col->key, key, len + 1);
    col->hash = h;
    if (build(c, col)) {
        free(col->key);
        free(col->ids);
        free(col->vals);
        return UINT32_MAX;
    }
    c->ncols++;
    uint32_t j = (uint32_t)h & (c->ccap - 1);
    while (c->ctab[j])
        j = (j + 1) & (c->ccap - 1);
    c->ctab[j] = c->ncols;
    return c->ncols - 1;
}

int kube_labelcols_affinity(kube_labelcols *c, const berth_kpod *p, const uint32_t *list,
                            uint32_t n, uint8_t *v)
{
    int req = p->has_req_affinity;
    if (!p->node_selector.n && !req)
        return 0; /* upstream PreFilter: Skip */
    uint32_t nchk = p->node_selector.n, nterms = 0;
    for (uint32_t t = 0; req && t < p->nreq_terms; t++) {
        const berth_kterm *tm = &p->req_terms[t];
        if (tm->nfields)
            return 1;
        nchk += tm->nexprs;
    }
    if (berth_grow((void **)&c->chk, &c->capchk, nchk + 1, sizeof *c->chk, 0) ||
        berth_grow((void **)&c->tend, &c->captend, (req ? p->nreq_terms : 0) + 1,
                   sizeof *c->tend, 0))
        return BERTH_ENOMEM;
    /* the columns first (a table's size is its column's value count) */
    uint32_t cols[64], *colp = cols, *heap = NULL;
    if (nchk > 64) {
        if (!(heap = malloc(nchk * sizeof *heap)))
            return BERTH_ENOMEM;
        colp = heap;
    }
    size_t need = 0;
    uint32_t k = 0;
    int rc = 0;
    for (uint32_t i = 0; i < p->node_selector.n && !rc; i++, k++)
        if ((colp[k] = column(c, p->node_selector.items[i].key)) == UINT32_MAX)
            rc = BERTH_ENOMEM;
    for (uint32_t t = 0; req && t < p->nreq_terms && !rc; t++)
        for (uint32_t i = 0; i < p->req_terms[t].nexprs && !rc; i++, k++)
            if ((colp[k] = column(c, p->req_terms[t].exprs[i].key)) == UINT32_MAX)
                rc = BERTH_ENOMEM;
    for (uint32_t i = 0; i < k && !rc; i++) /* every column exists now: c->cols stays put */
        need += c->cols[colp[i]].nvals + 1;
    if (!rc && need > c->captabs) {
        uint8_t *q = realloc(c->tabs, need);
        if (!q)
            rc = BERTH_ENOMEM;
        else {
            c->tabs = q;
            c->captabs = need;
        }
    }
    if (rc) {
        free(heap);
        return rc;
    }
    /* the tables: nodeSelector entries (the label present with that exact
     * value), then each term's requirements through the label code's
     * matcher on a one-label set per distinct value (id 0: no label) */
    uint8_t *tab = c->tabs;
    uint32_t ci = 0; /* colp's index; k: chk's (dead terms' checks dropped) */
    k = 0;
    for (uint32_t i = 0; i < p->node_selector.n; i++, k++) {
        const lc_col *col = &c->cols[colp[ci++]];
        const char *want = str(p->node_selector.items[i].value);
        tab[0] = 0;
        for (uint32_t id = 1; id <= col->nvals; id++)
            tab[id] = strcmp(col->vals[id], want) == 0;
        c->chk[k] = (lc_check){col->ids, tab};
        tab += col->nvals + 1;
    }
    uint32_t nsel = k;
    for (uint32_t t = 0; req && t < p->nreq_terms; t++) {
        const berth_kterm *tm = &p->req_terms[t];
        for (uint32_t i = 0; i < tm->nexprs; i++, k++) {
            const lc_col *col = &c->cols[colp[ci++]];
            const berth_requirement *r = &tm->exprs[i];
            berth_labels none = {NULL, 0};
            tab[0] = (uint8_t)berth_requirement_matches(r, &none);
            for (uint32_t id = 1; id <= col->nvals; id++) {
                berth_label one = {r->key, col->vals[id]};
                berth_labels l = {&one, 1};
                tab[id] = (uint8_t)berth_requirement_matches(r, &l);
            }
            c->chk[k] = (lc_check){col->ids, tab};
            tab += col->nvals + 1;
        }
        /* an empty or unparsable term matches nothing: no end recorded */
        if ((tm->nexprs || tm->nfields) && !tm->invalid)
            c->tend[nterms++] = k;
        else
            k -= tm->nexprs;
    }
    free(heap);
    /* the verdicts: every selector entry, then any term's requirements */
    const lc_check *chk = c->chk;
    const uint32_t *tend = c->tend;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t nd = list[i], j = 0;
        while (j < nsel && chk[j].tab[chk[j].ids[nd]])
            j++;
        int ok = j == nsel;
        if (ok && req) {
            ok = 0;
            for (uint32_t t = 0, b = nsel; t < nterms && !ok; b = tend[t++]) {
                uint32_t e = tend[t];
                j = b;
                while (j < e && chk[j].tab[chk[j].ids[nd]])
                    j++;
                ok = j == e;
            }
        }
        if (!ok)
            v[i] = BERTH_UNRESOLVABLE;
    }
    return 0;
}
