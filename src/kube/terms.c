/* kube/terms.c - PodTopologySpread and InterPodAffinity (SPEC 2.5) over
 * incremental counters: topology keys interned with per-node value ids,
 * counted term signatures (MATCH: pods matching a conjunction of selector +
 * namespace-set clauses; CARRIER: pods carrying an (anti-)affinity term of
 * a role) with per-node counts updated by kube_terms_assume (a list of
 * (node, count) until a signature counts on more than KUBE_SPARSE_MAX
 * nodes, then a dense array from the count slabs), an anchor
 * index so an assumed pod only tests the signatures it may match, per pod
 * class (kube_pclass) what its pods' constraints and terms resolve to and
 * what their assume counts, and per pod O(nodes) aggregation per topology
 * value into domain arrays. Its string maps and pod-class table hash
 * under one key drawn at init (kube_terms.hkey, berth/hash.h).
 *
 * With s->reference set no signature is kept: every count is recomputed
 * for each pod by walking all pods on all nodes (the plain reference the
 * randomized test compares against). Both paths share the formulas. */
#include "berth/hash.h"
#include "berth/grow.h"
#include "kube/podkey.h"
#include "kube/terms.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define HOSTNAME_KEY "kubernetes.io/hostname"
#define ZONE_KEY "topology.kubernetes.io/zone"
#define NS_NAME_LABEL "kubernetes.io/metadata.name"
#define NAFF_CACHE_MAX 256

/* ---- small helpers ---- */

#define grow(p, cap, need, elem) berth_grow(p, cap, need, elem, 0)

static void pclass_clear(kube_terms *t);
static void pclass_free(kube_terms *t);

static void smap_free(kube_smap *m)
{
    for (uint32_t i = 0; i < m->cap; i++)
        if (m->slots[i].key != m->slots[i].inl)
            free(m->slots[i].key);
    free(m->slots);
    memset(m, 0, sizeof *m);
}

/* 1 and *out when the n bytes at k (hash h under the map owner's key,
 * kube_terms.hkey) are a key. A slot is one cache line
 * holding the hash, the length and (short keys) the text: a lookup reads
 * one line, and another only for a long key. */
static int smap_get_h(const kube_smap *m, const char *k, size_t n, uint64_t h, uint32_t *out)
{
    if (!m->cap)
        return 0;
    uint32_t mask = m->cap - 1;
    for (uint32_t i = (uint32_t)h & mask;; i = (i + 1) & mask) {
        const kube_sslot *sl = &m->slots[i];
        if (!sl->key)
            return 0;
        if (sl->hash == h && sl->len == n && !memcmp(sl->key, k, n)) {
            *out = sl->val;
            return 1;
        }
    }
}

/* The same with the key's hash under hk worked out here (the map must be
 * one of hk's owner's). */
static int smap_get_n(const berth_hashkey *hk, const kube_smap *m, const char *k, size_t n,
                      uint32_t *out)
{
    return m->cap && smap_get_h(m, k, n, berth_hash_keyed(hk, k, n), out);
}

static int smap_get(const berth_hashkey *hk, const kube_smap *m, const char *k, uint32_t *out)
{
    return smap_get_n(hk, m, k, strlen(k), out);
}

static kube_sslot *smap_slots(uint32_t cap)
{
    kube_sslot *sl = aligned_alloc(sizeof(kube_sslot), (size_t)cap * sizeof *sl);
    if (sl)
        memset(sl, 0, (size_t)cap * sizeof *sl);
    return sl;
}

/* Adds k (absent) -> v; h is k's hash under the owner's key. */
static int smap_put_h(kube_smap *m, const char *k, uint64_t h, uint32_t v)
{
    if (2 * (m->n + 1) > m->cap) {
        uint32_t nc = m->cap ? m->cap * 2 : 16;
        kube_sslot *ns = smap_slots(nc);
        if (!ns)
            return BERTH_ENOMEM;
        for (uint32_t i = 0; i < m->cap; i++) {
            kube_sslot *o = &m->slots[i];
            if (!o->key)
                continue;
            uint32_t j = (uint32_t)o->hash & (nc - 1);
            while (ns[j].key)
                j = (j + 1) & (nc - 1);
            ns[j] = *o;
            if (o->key == o->inl)
                ns[j].key = ns[j].inl;
        }
        free(m->slots);
        m->slots = ns;
        m->cap = nc;
    }
    size_t n = strlen(k);
    uint32_t i = (uint32_t)h & (m->cap - 1);
    while (m->slots[i].key)
        i = (i + 1) & (m->cap - 1);
    kube_sslot *sl = &m->slots[i];
    if (n < sizeof sl->inl) {
        sl->key = sl->inl;
        memcpy(sl->inl, k, n + 1);
    } else if (!(sl->key = strdup(k))) {
        return BERTH_ENOMEM;
    }
    sl->hash = h;
    sl->len = (uint32_t)n;
    sl->val = v;
    m->n++;
    return 0;
}

static int smap_put(const berth_hashkey *hk, kube_smap *m, const char *k, uint32_t v)
{
    return smap_put_h(m, k, berth_hash_keyed(hk, k, strlen(k)), v);
}

/* canonical text buffer */
static int tx_put(kube_terms *t, const char *s)
{
    size_t n = strlen(s ? s : "");
    if (t->tlen + n + 1 > t->tcap) {
        size_t nc = t->tcap ? t->tcap : 256;
        while (nc < t->tlen + n + 1)
            nc *= 2;
        char *q = realloc(t->text, nc);
        if (!q)
            return BERTH_ENOMEM;
        t->text = q;
        t->tcap = nc;
    }
    memcpy(t->text + t->tlen, s ? s : "", n);
    t->tlen += n;
    t->text[t->tlen] = 0;
    return 0;
}

/* v in decimal (what "%lld" prints), without the printf machinery: the
 * text is built for every signature lookup */
static int tx_int(kube_terms *t, long long v)
{
    char b[32];
    char *e = b + sizeof b - 1, *q = e;
    unsigned long long u = v < 0 ? 0ull - (unsigned long long)v : (unsigned long long)v;
    *q = 0;
    do {
        *--q = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0)
        *--q = '-';
    return tx_put(t, q);
}

static void tx_reset(kube_terms *t)
{
    t->tlen = 0;
    if (t->text)
        t->text[0] = 0;
}


/* ---- namespaces ---- */

static uint32_t ns_intern(kube_terms *t, const char *name, const berth_labels *labels, int *rc)
{
    uint32_t id;
    if (!name)
        name = "";
    if (smap_get(&t->hkey, &t->ns_map, name, &id))
        return id;
    id = t->nns;
    if (grow((void **)&t->ns_labels, &t->capns, t->nns + 1, sizeof *t->ns_labels) ||
        smap_put(&t->hkey, &t->ns_map, name, id)) {
        *rc = BERTH_ENOMEM;
        return 0;
    }
    memset(&t->ns_labels[id], 0, sizeof t->ns_labels[id]);
    t->nns++;
    /* labels: the object's, plus kubernetes.io/metadata.name = name as the
     * API server sets it when absent */
    uint32_t n = labels ? labels->n : 0;
    int has_name = labels && berth_labels_get(labels, NS_NAME_LABEL) != NULL;
    berth_label *items = calloc(n + 1, sizeof *items);
    if (!items) {
        *rc = BERTH_ENOMEM;
        return 0;
    }
    for (uint32_t i = 0; i < n; i++)
        items[i] = labels->items[i];
    if (!has_name)
        items[n++] = (berth_label){NS_NAME_LABEL, name};
    free(t->ns_labels[id].items);
    t->ns_labels[id].items = items;
    t->ns_labels[id].n = n;
    berth_labels_sort(&t->ns_labels[id]);
    return id;
}

/* ---- topology keys ---- */

static uint32_t key_intern(kube_sched *s, const char *name, int *rc)
{
    kube_terms *t = s->terms;
    uint32_t id;
    if (!name)
        name = "";
    /* the hostname and the zone, the usual keys (and the system default
     * spreading's): no hashing */
    if (t->host_key1 && !strcmp(name, HOSTNAME_KEY))
        return t->host_key1 - 1;
    if (t->zone_key1 && !strcmp(name, ZONE_KEY))
        return t->zone_key1 - 1;
    if (smap_get(&t->hkey, &t->key_map, name, &id))
        return id;
    if (grow((void **)&t->keys, &t->capkeys, t->nkeys + 1, sizeof *t->keys)) {
        *rc = BERTH_ENOMEM;
        return 0;
    }
    kube_tkey *k = &t->keys[t->nkeys];
    memset(k, 0, sizeof *k);
    k->name = strdup(name);
    k->val = malloc((t->nnodes ? t->nnodes : 1) * sizeof *k->val);
    kube_smap vm = {0};
    if (!k->name || !k->val) {
        free(k->name);
        free(k->val);
        *rc = BERTH_ENOMEM;
        return 0;
    }
    k->hostname = !strcmp(name, HOSTNAME_KEY);
    k->empty_id = KUBE_NOVAL;
    uint32_t nv = 0;
    for (uint32_t n = 0; n < t->nnodes; n++) {
        const char *v = berth_labels_get(&s->k->nodes[n].labels, name);
        if (!v) {
            k->val[n] = KUBE_NOVAL;
            continue;
        }
        uint32_t vid;
        if (!smap_get(&t->hkey, &vm, v, &vid)) {
            vid = nv++;
            if (smap_put(&t->hkey, &vm, v, vid)) {
                smap_free(&vm);
                free(k->name);
                free(k->val);
                *rc = BERTH_ENOMEM;
                return 0;
            }
            if (!*v)
                k->empty_id = vid;
        }
        k->val[n] = vid;
    }
    k->vmap = vm;
    k->nreal = nv;
    if (k->empty_id == KUBE_NOVAL)
        k->empty_id = nv++;
    k->nvals = nv;
    if (smap_put(&t->hkey, &t->key_map, name, t->nkeys)) {
        smap_free(&k->vmap);
        free(k->name);
        free(k->val);
        *rc = BERTH_ENOMEM;
        return 0;
    }
    if (k->hostname)
        t->host_key1 = t->nkeys + 1;
    else if (!strcmp(name, ZONE_KEY))
        t->zone_key1 = t->nkeys + 1;
    return t->nkeys++;
}

/* ---- clauses and signatures ---- */

static int pod_terminating(const kube_terms *t, const berth_kpod *p)
{
    return !t->pending_view && p->terminating;
}

static int clause_matches(const kube_terms *t, const kube_clause *c, uint32_t pod,
                          const berth_kpod *p)
{
    return c->ns_ok[t->pod_ns[pod]] && berth_selector_matches(&c->sel, &p->labels);
}

static int sig_matches(const kube_terms *t, const kube_sig *g, uint32_t pod, const berth_kpod *p)
{
    if (g->spread) {
        if (pod_terminating(t, p))
            return 0;
        if (g->cl[0].sel.n == 0 && !g->cl[0].sel.nothing)
            return 0;
    }
    for (uint32_t i = 0; i < g->ncl; i++)
        if (!clause_matches(t, &g->cl[i], pod, p))
            return 0;
    return 1;
}

/* sig_matches for a pod that index_visit found g for: through its anchor
 * bucket (anchored) the pod carries key=value for one of the In values, so
 * a one-requirement selector matches and only the namespace set (and the
 * spread rule on terminating pods) is left to check */
static int sig_matches_at(const kube_terms *t, const kube_sig *g, uint32_t pod,
                          const berth_kpod *p, int anchored)
{
    if (anchored && g->anchor1)
        return (g->ns1 != KUBE_NOVAL ? t->pod_ns[pod] == g->ns1 : g->cl[0].ns_ok[t->pod_ns[pod]]) &&
               !(g->spread && pod_terminating(t, p));
    return sig_matches(t, g, pod, p);
}

/* the namespace set of an affinity term declared by a pod of namespace
 * decl_ns, as a per-namespace-id flag array (owned by the caller) */
/* fills ok (nns entries, or 1 when there is none) */
static void term_ns_fill(kube_terms *t, uint8_t *ok, const berth_kaffinity_term *term,
                         uint32_t decl_ns)
{
    memset(ok, 0, t->nns ? t->nns : 1);
    if (!term->nnamespaces && !term->has_ns_selector) {
        ok[decl_ns] = 1;
        return;
    }
    for (uint32_t i = 0; i < term->nnamespaces; i++) {
        uint32_t id;
        if (smap_get(&t->hkey, &t->ns_map, term->namespaces[i] ? term->namespaces[i] : "", &id))
            ok[id] = 1;
    }
    if (term->has_ns_selector)
        for (uint32_t id = 0; id < t->nns; id++)
            if (berth_selector_matches(&term->ns_selector, &t->ns_labels[id]))
                ok[id] = 1;
}

static uint8_t *term_ns_ok(kube_terms *t, const berth_kaffinity_term *term, uint32_t decl_ns)
{
    uint8_t *ok = calloc(t->nns ? t->nns : 1, 1);
    if (!ok)
        return NULL;
    if (!term->nnamespaces && !term->has_ns_selector) {
        ok[decl_ns] = 1;
        return ok;
    }
    for (uint32_t i = 0; i < term->nnamespaces; i++) {
        uint32_t id;
        if (smap_get(&t->hkey, &t->ns_map, term->namespaces[i] ? term->namespaces[i] : "", &id))
            ok[id] = 1;
    }
    if (term->has_ns_selector)
        for (uint32_t id = 0; id < t->nns; id++)
            if (berth_selector_matches(&term->ns_selector, &t->ns_labels[id]))
                ok[id] = 1;
    return ok;
}

static int tx_selector(kube_terms *t, const berth_selector *sel)
{
    int rc = 0;
    if (sel->nothing)
        return tx_put(t, "<nothing>");
    for (uint32_t i = 0; i < sel->n && !rc; i++) {
        const berth_requirement *r = &sel->reqs[i];
        rc |= tx_put(t, r->key);
        rc |= tx_put(t, "\x1f");
        rc |= tx_int(t, r->op);
        for (uint32_t j = 0; j < r->nvalues; j++) {
            rc |= tx_put(t, "\x1f");
            rc |= tx_put(t, r->values[j]);
        }
        rc |= tx_put(t, "\x1e");
    }
    return rc;
}

static int tx_clause(kube_terms *t, const berth_selector *sel, const uint8_t *ns_ok)
{
    int rc = tx_selector(t, sel);
    rc |= tx_put(t, "\x1d");
    /* the namespace set, one digit each, written in place */
    if (!rc && t->nns) {
        size_t at = t->tlen;
        for (uint32_t i = 0; i < t->nns && !rc; i += 64)
            rc |= tx_put(t, "0000000000000000000000000000000000000000000000000000000000000000");
        if (!rc) {
            for (uint32_t i = 0; i < t->nns; i++)
                t->text[at + i] = ns_ok[i] ? '1' : '0';
            t->tlen = at + t->nns;
            t->text[t->tlen] = 0;
        }
    }
    return rc | tx_put(t, "\x1c");
}

static void sig_free(kube_sig *g)
{
    for (uint32_t i = 0; i < g->ncl; i++) {
        free(g->cl[i].sel.reqs);
        free(g->cl[i].ns_ok);
    }
    free(g->cl);
    free(g->extra_vals);
    /* g->cnt and g->win live in the count slabs (cnt_alloc) */
    free(g->nzc);
    free(g->nz);
    free(g->innz);
    free(g->dtot);
}

/* The signature owning a count array (incremental mode only: there every
 * count array is a signature's dense counts or its window). */
static const kube_sig *sig_of(const kube_terms *t, const int32_t *cnt)
{
    return &t->sigs[((const uint32_t *)cnt)[-1]];
}

/* the count of g's j-th listed node */
static inline int32_t sig_at(const kube_sig *g, uint32_t j)
{
    return g->cnt ? g->cnt[g->nz[j]] : g->nzc[j];
}

/* sparse g: the position of node n in nz, else g->nnz (at most
 * KUBE_SPARSE_MAX compares) */
static uint32_t sig_find(const kube_sig *g, uint32_t n)
{
    uint32_t j = 0;
    while (j < g->nnz && g->nz[j] != n)
        j++;
    return j;
}

static int32_t *cnt_alloc(kube_terms *t);

/* Sparse g lists one node more than t->sparse_max: its counts become a
 * dense array (and innz, when a count went back to 0, as the dense path
 * would have built it). A window lent stays lent and kept. */
static int sig_promote(kube_terms *t, kube_sig *g, uint32_t id)
{
    int32_t *base = cnt_alloc(t);
    if (!base)
        return BERTH_ENOMEM;
    if (g->hadzero) {
        g->innz = calloc(t->nnodes ? t->nnodes : 1, 1);
        if (!g->innz)
            return BERTH_ENOMEM;
        for (uint32_t j = 0; j < g->nnz; j++)
            g->innz[g->nz[j]] = 1;
    }
    ((uint32_t *)base)[1] = id;
    g->cnt = base + 2;
    for (uint32_t j = 0; j < g->nnz; j++)
        g->cnt[g->nz[j]] = g->nzc[j];
    free(g->nzc);
    g->nzc = NULL;
    return 0;
}

/* Room for one more entry in g's list of non-zero nodes (and, while g is
 * sparse, in its counts beside it). 0 or BERTH_ENOMEM. */
static int nz_room(kube_sig *g)
{
    if (g->nnz < g->capnz)
        return 0;
    uint32_t nc = g->capnz ? g->capnz * 2 : 16;
    uint32_t *q = realloc(g->nz, nc * sizeof *q);
    if (!q)
        return BERTH_ENOMEM;
    g->nz = q;
    if (!g->cnt) {
        int32_t *c = realloc(g->nzc, nc * sizeof *c);
        if (!c)
            return BERTH_ENOMEM;
        g->nzc = c;
    }
    g->capnz = nc;
    return 0;
}

/* Adds d to g's count at node n, keeping the list of non-zero nodes. */
static int sig_bump(kube_terms *t, kube_sig *g, uint32_t n, int32_t d)
{
    if (!g->cnt) {
        uint32_t j = sig_find(g, n);
        if (j == g->nnz && d && g->nnz >= t->sparse_max &&
            sig_promote(t, g, (uint32_t)(g - t->sigs)))
            return BERTH_ENOMEM;
        if (!g->cnt) {
            if (j == g->nnz) {
                if (!d)
                    return 0;
                if (nz_room(g))
                    return BERTH_ENOMEM;
                g->nz[g->nnz] = n;
                g->nzc[g->nnz++] = 0;
            }
            g->nzc[j] += d;
        }
    }
    if (g->cnt) {
        if (!g->cnt[n] && d && !(g->innz && g->innz[n])) {
            if (nz_room(g))
                return BERTH_ENOMEM;
            if (g->innz)
                g->innz[n] = 1;
            g->nz[g->nnz++] = n;
        }
        g->cnt[n] += d;
    }
    if (g->win)
        g->win[n] += d;
    if (g->dtot && g->dval[n] != KUBE_NOVAL)
        g->dtot[g->dval[n]] += d;
    return 0;
}

/* Subtracts d from g's count at node n. A node back at 0 stays in nz (its
 * entry adds nothing); innz then records which nodes nz lists, so a later
 * bump does not list a node twice (sparse: nz itself says it, hadzero
 * that the list is no longer exact). */
static int sig_drop(kube_terms *t, kube_sig *g, uint32_t n, int32_t d)
{
    if (!g->cnt) {
        uint32_t j = sig_find(g, n);
        if (j == g->nnz) /* never counted there: as the dense path, counted below 0 */
            return d ? sig_bump(t, g, n, -d) : 0;
        g->nzc[j] -= d;
        if (g->win)
            g->win[n] -= d;
        if (g->dtot && g->dval[n] != KUBE_NOVAL)
            g->dtot[g->dval[n]] -= d;
        if (!g->nzc[j] && d)
            g->hadzero = 1;
        return 0;
    }
    g->cnt[n] -= d;
    if (g->win)
        g->win[n] -= d;
    if (g->dtot && g->dval[n] != KUBE_NOVAL)
        g->dtot[g->dval[n]] -= d;
    if (g->cnt[n] || g->innz || !d)
        return 0;
    g->innz = calloc(t->nnodes ? t->nnodes : 1, 1);
    if (!g->innz)
        return BERTH_ENOMEM;
    for (uint32_t j = 0; j < g->nnz; j++)
        g->innz[g->nz[j]] = 1;
    return 0;
}

/* ---- named lists (anchor buckets, posting lists, workload buckets) ---- */

/* Lists of uint32 by name: map (name -> list), per list its items, count
 * and capacity (nlists made, room for caplists). The list named name,
 * made empty when new; KUBE_NOVAL on ENOMEM. */
static uint32_t named_list(kube_smap *map, const char *name, uint64_t h, uint32_t ***items,
                           uint32_t **n, uint32_t **cap, uint32_t *nlists, uint32_t *caplists)
{
    uint32_t b;
    if (smap_get_h(map, name, strlen(name), h, &b))
        return b;
    b = *nlists;
    uint32_t c1 = *caplists, c2 = *caplists, c3 = *caplists;
    if (grow((void **)items, &c1, b + 1, sizeof **items) ||
        grow((void **)n, &c2, b + 1, sizeof **n) || grow((void **)cap, &c3, b + 1, sizeof **cap))
        return KUBE_NOVAL;
    /* the three grew in step (same start, same need) */
    *caplists = c1;
    (*items)[b] = NULL;
    (*n)[b] = (*cap)[b] = 0;
    if (smap_put_h(map, name, h, b))
        return KUBE_NOVAL;
    (*nlists)++;
    return b;
}

/* appends v to a named list (its items, count and capacity) */
static int list_push(uint32_t **items, uint32_t *n, uint32_t *cap, uint32_t v)
{
    if (grow((void **)items, cap, *n + 1, sizeof **items))
        return BERTH_ENOMEM;
    (*items)[(*n)++] = v;
    return 0;
}

static int index_add(kube_terms *t, kube_index *x, kube_sig *g, uint32_t id)
{
    x->total++;
    /* never matches: not indexed */
    for (uint32_t c = 0; c < g->ncl; c++)
        if (g->cl[c].sel.nothing)
            return 0;
    if (g->spread && g->cl[0].sel.n == 0)
        return 0;
    for (uint32_t c = 0; c < g->ncl; c++) {
        const berth_selector *sel = &g->cl[c].sel;
        for (uint32_t i = 0; i < sel->n; i++) {
            const berth_requirement *r = &sel->reqs[i];
            if (r->op != BERTH_SEL_IN || !r->nvalues)
                continue;
            for (uint32_t v = 0; v < r->nvalues; v++) {
                tx_reset(t);
                if (tx_put(t, r->key) || tx_put(t, "\x1f") || tx_put(t, r->values[v]))
                    return BERTH_ENOMEM;
                uint32_t b = named_list(&x->map, t->text,
                                        berth_hash_keyed(&t->hkey, t->text, t->tlen),
                                        &x->bucket, &x->bn, &x->bcap, &x->nbuckets,
                                        &x->capbuckets);
                if (b == KUBE_NOVAL || list_push(&x->bucket[b], &x->bn[b], &x->bcap[b], id))
                    return BERTH_ENOMEM;
            }
            g->anchor1 = g->ncl == 1 && sel->n == 1;
            /* the namespace set's one member, read without its array */
            uint32_t members = 0, one = KUBE_NOVAL;
            for (uint32_t n = 0; g->anchor1 && n < t->nns; n++)
                if (g->cl[0].ns_ok[n]) {
                    members++;
                    one = n;
                }
            g->ns1 = members == 1 ? one : KUBE_NOVAL;
            return 0;
        }
    }
    if (grow((void **)&x->general, &x->capgeneral, x->ngeneral + 1, sizeof *x->general))
        return BERTH_ENOMEM;
    x->general[x->ngeneral++] = id;
    return 0;
}

static void index_free(kube_index *x)
{
    smap_free(&x->map);
    for (uint32_t b = 0; b < x->nbuckets; b++)
        free(x->bucket[b]);
    free(x->bucket);
    free(x->bn);
    free(x->bcap);
    free(x->general);
    memset(x, 0, sizeof *x);
}

/* The hashes under t->hkey of pod's labels as "key\x1fvalue" texts: the
 * anchor buckets, the posting lists and the workloads' anchors are maps of
 * such texts under the one key, so a pod's labels are hashed once, not once
 * per map and pass (kept for the last pod asked about). NULL on ENOMEM. */
static const uint64_t *label_hashes(kube_terms *t, const berth_kpod *p, uint32_t pod)
{
    if (t->lh_pod == pod + 1 && t->lh_items == p->labels.items)
        return t->lh;
    if (grow((void **)&t->lh, &t->caplh, p->labels.n ? p->labels.n : 1, sizeof *t->lh))
        return NULL;
    char buf[256];
    for (uint32_t l = 0; l < p->labels.n; l++) {
        const char *k = p->labels.items[l].key ? p->labels.items[l].key : "";
        const char *v = p->labels.items[l].value ? p->labels.items[l].value : "";
        size_t kl = strlen(k), vl = strlen(v), n = kl + 1 + vl;
        char *b = n <= sizeof buf ? buf : malloc(n);
        if (!b)
            return NULL;
        memcpy(b, k, kl);
        b[kl] = '\x1f';
        memcpy(b + kl + 1, v, vl);
        t->lh[l] = berth_hash_keyed(&t->hkey, b, n);
        if (b != buf)
            free(b);
    }
    t->lh_pod = pod + 1;
    t->lh_items = p->labels.items;
    return t->lh;
}

/* calls fn for every signature of x pod may match (each at most once);
 * anchored: found through the bucket of one of pod's labels (not the
 * general list) */
typedef int (*sig_visit)(kube_sched *s, uint32_t sig, int anchored, void *ctx);
static int index_visit(kube_sched *s, kube_index *x, uint32_t pod, sig_visit fn, void *ctx)
{
    kube_terms *t = s->terms;
    const berth_kpod *p = &s->k->pods[pod];
    int rc;
    if (!x->total)
        return 0;
    for (uint32_t i = 0; i < x->ngeneral; i++)
        if ((rc = fn(s, x->general[i], 0, ctx)))
            return rc;
    if (!x->nbuckets)
        return 0;
    const uint64_t *lh = label_hashes(t, p, pod);
    if (!lh)
        return BERTH_ENOMEM;
    for (uint32_t l = 0; l < p->labels.n; l++) {
        tx_reset(t);
        if (tx_put(t, p->labels.items[l].key) || tx_put(t, "\x1f") ||
            tx_put(t, p->labels.items[l].value))
            return BERTH_ENOMEM;
        uint32_t b;
        if (!smap_get_h(&x->map, t->text, t->tlen, lh[l], &b))
            continue;
        for (uint32_t i = 0; i < x->bn[b]; i++)
            if ((rc = fn(s, x->bucket[b][i], 1, ctx)))
                return rc;
    }
    return 0;
}

/* ---- posting lists (label -> pods counted on nodes) ---- */

static int post_key(char *buf, size_t cap, const char *key, const char *value)
{
    size_t kl = strlen(key), vl = strlen(value);
    if (kl + vl + 2 > cap)
        return 0;
    memcpy(buf, key, kl);
    buf[kl] = '\x1f';
    memcpy(buf + kl + 1, value, vl + 1);
    return 1;
}

/* the posting list of label l (its label_hashes hash h; made when new),
 * KUBE_NOVAL when the label is longer than any valid one (never an
 * anchor) or on ENOMEM (*rc) */
static uint32_t post_list(kube_terms *t, const berth_label *l, uint64_t h, int *rc)
{
    char buf[640];
    if (!post_key(buf, sizeof buf, l->key, l->value))
        return KUBE_NOVAL;
    uint32_t b =
        named_list(&t->post_map, buf, h, &t->post, &t->postn, &t->postcap, &t->npost,
                   &t->cappost);
    if (b == KUBE_NOVAL)
        *rc = BERTH_ENOMEM;
    return b;
}

/* lists pod in posting list b (it is being counted on a node) */
static int post_push(kube_terms *t, uint32_t b, uint32_t pod)
{
    return list_push(&t->post[b], &t->postn[b], &t->postcap[b], pod);
}

/* lists pod under each of its labels */
static int post_add(kube_terms *t, uint32_t pod, const berth_kpod *p)
{
    int rc = 0;
    const uint64_t *lh = p->labels.n ? label_hashes(t, p, pod) : NULL;
    if (p->labels.n && !lh)
        return BERTH_ENOMEM;
    for (uint32_t i = 0; i < p->labels.n && !rc; i++) {
        uint32_t b = post_list(t, &p->labels.items[i], lh[i], &rc);
        if (b != KUBE_NOVAL)
            rc = post_push(t, b, pod);
    }
    return rc;
}

/* The anchor of signature g: its first In requirement with values (every
 * pod it matches carries key=value for one of them), or NULL. */
static const berth_requirement *sig_anchor(const kube_sig *g)
{
    for (uint32_t c = 0; c < g->ncl; c++) {
        const berth_selector *sel = &g->cl[c].sel;
        for (uint32_t i = 0; i < sel->n; i++)
            if (sel->reqs[i].op == BERTH_SEL_IN && sel->reqs[i].nvalues)
                return &sel->reqs[i];
    }
    return NULL;
}

/* Initial counts of a new MATCH signature from the pods counted on nodes:
 * through the anchor's posting lists, else every pod on every node. */
static int sig_init_counts(kube_sched *s, kube_sig *g)
{
    kube_terms *t = s->terms;
    const berth_requirement *a = sig_anchor(g);
    if (!a) {
        for (uint32_t n = 0; n < t->nnodes; n++)
            for (uint32_t i = 0; i < s->plist[n].n; i++) {
                uint32_t q = s->plist[n].pods[i];
                if (sig_matches(t, g, q, &s->k->pods[q]) && sig_bump(t, g, n, 1))
                    return BERTH_ENOMEM;
            }
        return 0;
    }
    if (!t->posting) {
        /* the first signature that reads them: the lists of the pods
         * counted now, in node order (counts do not depend on the order);
         * kept from here on only once whole (a failed build is done again,
         * stamp[] dropping the pods it listed twice) */
        for (uint32_t n = 0; n < t->nnodes; n++)
            for (uint32_t i = 0; i < s->plist[n].n; i++) {
                uint32_t q = s->plist[n].pods[i];
                int rc = t->on[q] ? post_add(t, q, &s->k->pods[q]) : 0;
                if (rc)
                    return rc;
            }
        t->posting = 1;
    }
    if (++t->serial == 0) { /* wrapped: forget every stamp */
        memset(t->stamp, 0, (t->npods ? t->npods : 1) * sizeof *t->stamp);
        t->serial = 1;
    }
    char buf[640];
    for (uint32_t v = 0; v < a->nvalues; v++) {
        uint32_t b;
        if (!post_key(buf, sizeof buf, a->key, a->values[v]) ||
            !smap_get(&t->hkey, &t->post_map, buf, &b))
            continue;
        for (uint32_t i = 0; i < t->postn[b]; i++) {
            uint32_t q = t->post[b][i];
            if (t->stamp[q] == t->serial || !t->on[q])
                continue;
            t->stamp[q] = t->serial;
            if (sig_matches(t, g, q, &s->k->pods[q]) && sig_bump(t, g, t->on[q] - 1, 1))
                return BERTH_ENOMEM;
        }
    }
    return 0;
}

#define CSLAB_HUGE ((size_t)2 << 20)

/* Under AddressSanitizer a slab is poisoned but for the arrays handed out,
 * each followed by a redzone of at least 16 int32s, so an overrun of a
 * count array is still reported. */
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define CSLAB_REDZONE 16
#define CSLAB_POISON(p, n) ASAN_POISON_MEMORY_REGION(p, n)
#define CSLAB_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION(p, n)
#else
#define CSLAB_REDZONE 0
#define CSLAB_POISON(p, n) ((void)(p), (void)(n))
#define CSLAB_UNPOISON(p, n) ((void)(p), (void)(n))
#endif

/* A zeroed count array of nnodes + 2 int32s (64-byte aligned) from the
 * count slabs (a dense signature's counts or a window), NULL on ENOMEM.
 * A new signature's array used to be a calloc
 * of its own: at 5k nodes 20 KB, five page faults each allocating and
 * clearing a 4 KB page (1,500 signatures on a 10k-pod affinity run, ~7 %
 * of it in the kernel's page allocator). Slabs double from 4 arrays; once
 * a slab reaches 2 MB it is 2 MB-aligned and advised for transparent huge
 * pages, so one fault brings about 100 zeroed arrays (the kernel falls back
 * to 4 KB pages when no huge page is free). Small slabs are mapped with
 * their pages populated in the one call. */
static int32_t *cnt_alloc(kube_terms *t)
{
    size_t used = (size_t)(t->nnodes ? t->nnodes : 1) + 2;
    size_t need = ((used + CSLAB_REDZONE + 15) / 16) * 16;
    if (t->cleft < need) {
        size_t per = (size_t)4 << (t->ncslab < 10 ? t->ncslab : 10);
        size_t len = need * per * sizeof(int32_t);
        int huge = len >= CSLAB_HUGE;
        if (huge)
            len = (len + CSLAB_HUGE - 1) / CSLAB_HUGE * CSLAB_HUGE;
        if (grow((void **)&t->cslab, &t->capcslab, t->ncslab + 1, sizeof *t->cslab))
            return NULL;
        size_t *nl = realloc(t->cslab_len, t->capcslab * sizeof *nl);
        if (!nl)
            return NULL;
        t->cslab_len = nl;
        size_t maplen = huge ? len + CSLAB_HUGE : len;
        char *m = mmap(NULL, maplen, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | (huge ? 0 : MAP_POPULATE), -1, 0);
        if (m == MAP_FAILED)
            return NULL;
        if (huge) { /* keep the 2 MB-aligned len bytes inside */
            size_t head = (CSLAB_HUGE - (uintptr_t)m % CSLAB_HUGE) % CSLAB_HUGE;
            if (head)
                munmap(m, head);
            if (CSLAB_HUGE - head)
                munmap(m + head + len, CSLAB_HUGE - head);
            m += head;
#ifdef MADV_HUGEPAGE
            madvise(m, len, MADV_HUGEPAGE);
#endif
        }
        CSLAB_POISON(m, len);
        t->cslab[t->ncslab] = m;
        t->cslab_len[t->ncslab++] = len;
        t->cfree = (int32_t *)(void *)m;
        t->cleft = len / sizeof(int32_t);
    }
    int32_t *c = t->cfree;
    CSLAB_UNPOISON(c, used * sizeof *c);
    t->cfree += need;
    t->cleft -= need;
    return c;
}

/* Finds or creates the signature whose canonical text is in t->text. For
 * a new one, cl (ncl clauses, ownership taken) and the fields are used and
 * MATCH counts are initialised from the pods on nodes. Returns the id or
 * KUBE_NOVAL (ENOMEM; cl freed). */
static uint32_t sig_get(kube_sched *s, kube_clause *cl, uint32_t ncl, int kind, int role,
                        int spread, uint32_t key, const char **extra_vals)
{
    kube_terms *t = s->terms;
    uint32_t id;
    kube_sig g = {.kind = kind, .role = role, .spread = spread, .key = key, .cl = cl,
                  .ncl = ncl, .extra_vals = extra_vals};
    if (smap_get_n(&t->hkey, &t->sig_map, t->text, t->tlen, &id)) {
        sig_free(&g);
        return id;
    }
    /* counts start sparse (sig_bump makes them dense past KUBE_SPARSE_MAX nodes) */
    if (grow((void **)&t->sigs, &t->capsigs, t->nsigs + 1, sizeof *t->sigs) ||
        smap_put(&t->hkey, &t->sig_map, t->text, t->nsigs)) {
        sig_free(&g);
        return KUBE_NOVAL;
    }
    id = t->nsigs++;
    t->sigs[id] = g;
    if (!t->sparse_max && sig_promote(t, &t->sigs[id], id))
        return KUBE_NOVAL;
    if (kind == KUBE_SIG_MATCH && sig_init_counts(s, &t->sigs[id]))
        return KUBE_NOVAL;
    if (index_add(t, &t->idx[kind], &t->sigs[id], id))
        return KUBE_NOVAL;
    return id;
}

/* Signature id's counts per node for request q: the dense array, or for a
 * sparse signature its window, lent on first use (the counts scattered
 * into a zeroed array: O(listed nodes)) and held by q until
 * req_unhold. NULL on ENOMEM. */
static const int32_t *sig_read(kube_terms *t, kube_terms_req *q, uint32_t id)
{
    kube_sig *g = &t->sigs[id];
    if (g->cnt)
        return g->cnt;
    if (grow((void **)&q->held, &q->capheld, q->nheld + 1, sizeof *q->held))
        return NULL;
    if (!g->win) {
        int32_t *w;
        if (t->nwfree) {
            w = t->wfree[--t->nwfree];
        } else {
            /* room in wfree for every window made, so giving one back
             * cannot fail */
            if (grow((void **)&t->wfree, &t->capwfree, t->nwin + 1, sizeof *t->wfree))
                return NULL;
            int32_t *base = cnt_alloc(t);
            if (!base)
                return NULL;
            t->nwin++;
            w = base + 2;
        }
        ((uint32_t *)w)[-1] = id;
        for (uint32_t j = 0; j < g->nnz; j++)
            w[g->nz[j]] = g->nzc[j];
        g->win = w;
    }
    g->wref++;
    q->held[q->nheld++] = id;
    return g->win;
}

/* Gives back the windows q holds: one cleared at the nodes its signature
 * lists (every node it ever counted) once no request holds it. */
static void req_unhold(kube_terms *t, kube_terms_req *q)
{
    for (uint32_t i = 0; i < q->nheld; i++) {
        kube_sig *g = &t->sigs[q->held[i]];
        if (--g->wref)
            continue;
        for (uint32_t j = 0; j < g->nnz; j++)
            g->win[g->nz[j]] = 0;
        /* wfree has room for every window (sig_read) */
        t->wfree[t->nwfree++] = g->win;
        g->win = NULL;
    }
    q->nheld = 0;
}

static int clause_copy(kube_clause *c, const berth_selector *sel, uint32_t extra,
                       const uint8_t *ns_ok, uint32_t nns)
{
    memset(c, 0, sizeof *c);
    c->sel.nothing = sel->nothing;
    c->sel.n = sel->n;
    c->sel.reqs = calloc(sel->n + extra + 1, sizeof *c->sel.reqs);
    c->ns_ok = malloc(nns ? nns : 1);
    if (!c->sel.reqs || !c->ns_ok) {
        free(c->sel.reqs);
        free(c->ns_ok);
        return BERTH_ENOMEM;
    }
    if (sel->n)
        memcpy(c->sel.reqs, sel->reqs, sel->n * sizeof *sel->reqs);
    memcpy(c->ns_ok, ns_ok, nns ? nns : 1);
    return 0;
}

/* ---- init / free ---- */

int kube_terms_init(kube_sched *s)
{
    kube_terms *t = calloc(1, sizeof *t);
    if (!t)
        return BERTH_ENOMEM;
    s->terms = t;
    berth_hashkey_new(&t->hkey);
    berth_kcluster *k = s->k;
    t->nnodes = k->nnodes;
    t->npods = k->npods;
    t->sparse_max = KUBE_SPARSE_MAX;
    t->pending_view = s->pending_view;
    int rc = 0;
    for (uint32_t i = 0; i < k->nnamespaces && !rc; i++)
        ns_intern(t, k->namespaces[i].name, &k->namespaces[i].labels, &rc);
    t->pod_ns = malloc((k->npods ? k->npods : 1) * sizeof *t->pod_ns);
    t->on = calloc(k->npods ? k->npods : 1, sizeof *t->on);
    t->stamp = calloc(k->npods ? k->npods : 1, sizeof *t->stamp);
    if (!t->pod_ns || !t->on || !t->stamp)
        rc = BERTH_ENOMEM;
    /* the loader gives a file's pods one copy of each namespace name
     * (kube/load.c): a pod in the previous one's namespace costs a pointer
     * test, not a hash of its text */
    const char *last = NULL;
    uint32_t last_id = 0;
    for (uint32_t p = 0; p < k->npods && !rc; p++) {
        const char *ns = k->pods[p].ns;
        if (!ns || ns != last) {
            last_id = ns_intern(t, ns, NULL, &rc);
            last = ns;
        }
        t->pod_ns[p] = last_id;
    }
    if (rc) {
        kube_terms_free(s);
        return rc;
    }
    return 0;
}

static void req_free_all(kube_terms_req *q)
{
    for (uint32_t i = 0; i < q->nowned; i++)
        free(q->owned[i]);
    free(q->owned);
    free(q->pf);
    free(q->ps);
    free(q->defreqs);
    free(q->tol_ok);
    free(q->aff);
    free(q->anti);
    free(q->isc);
    free(q->carr);
    free(q->held);
    free(q->aslot);
    free(q->xslot);
    free(q->eslot);
    free(q->sslot);
    free(q->pool);
    free(q->zpool);
    free(q->ztouch);
    memset(q, 0, sizeof *q);
}

/* Clears the zero pool's touched entries (between pods). */
static void zpool_clear(kube_terms_req *q)
{
    for (size_t i = 0; i < q->ntouch; i++)
        q->zpool[q->ztouch[i]] = 0;
    q->ntouch = 0;
    q->zused = 0;
}

void kube_terms_free(kube_sched *s)
{
    kube_terms *t = s->terms;
    if (!t)
        return;
    for (uint32_t i = 0; i < t->nkeys; i++) {
        free(t->keys[i].name);
        free(t->keys[i].val);
        smap_free(&t->keys[i].vmap);
    }
    free(t->keys);
    smap_free(&t->key_map);
    smap_free(&t->ns_map);
    for (uint32_t i = 0; i < t->nns; i++)
        free(t->ns_labels[i].items);
    free(t->ns_labels);
    free(t->pod_ns);
    for (uint32_t i = 0; i < t->nsigs; i++)
        sig_free(&t->sigs[i]);
    free(t->sigs);
    for (uint32_t i = 0; i < t->ncslab; i++) {
        CSLAB_UNPOISON(t->cslab[i], t->cslab_len[i]);
        munmap(t->cslab[i], t->cslab_len[i]);
    }
    free(t->cslab);
    free(t->cslab_len);
    free(t->wfree);
    smap_free(&t->sig_map);
    free(t->sig_last);
    free(t->lh);
    index_free(&t->idx[0]);
    index_free(&t->idx[1]);
    smap_free(&t->naff.map);
    for (uint32_t i = 0; i < t->naff.n; i++)
        free(t->naff.vec[i]);
    free(t->naff.vec);
    free(t->tmp_aff);
    free(t->text);
    free(t->ns_scratch);
    free(t->sreq);
    free(t->sval);
    req_free_all(&t->req0);
    smap_free(&t->post_map);
    for (uint32_t i = 0; i < t->npost; i++)
        free(t->post[i]);
    free(t->post);
    free(t->postn);
    free(t->postcap);
    free(t->on);
    free(t->stamp);
    smap_free(&t->wl_map);
    for (uint32_t i = 0; i < t->wl_nb; i++)
        free(t->wl_bucket[i]);
    free(t->wl_bucket);
    free(t->wl_bn);
    free(t->wl_bcap);
    free(t->wl_general);
    free(t->wl_cand);
    pclass_free(t);
    free(t);
    s->terms = NULL;
}

/* ---- assume ---- */

static int visit_assume(kube_sched *s, uint32_t sig, int anchored, void *ctx)
{
    const uint32_t *pn = ctx;
    kube_terms *t = s->terms;
    if (sig_matches_at(t, &t->sigs[sig], pn[0], &s->k->pods[pn[0]], anchored))
        return sig_bump(t, &t->sigs[sig], pn[1], 1);
    return 0;
}

static const berth_kaffinity_term *role_terms(const berth_kpod *p, int role, uint32_t *n)
{
    switch (role) {
    case KUBE_ROLE_ANTI_REQ: *n = p->nanti_req; return p->anti_req;
    case KUBE_ROLE_AFF_REQ: *n = p->naff_req; return p->aff_req;
    case KUBE_ROLE_AFF_PREF: *n = p->naff_pref; return p->aff_pref;
    default: *n = p->nanti_pref; return p->anti_pref;
    }
}

/* the carrier signature of term (role) declared by a pod of namespace ns */
static uint32_t carrier_sig(kube_sched *s, int role, const berth_kaffinity_term *term,
                            uint32_t ns)
{
    kube_terms *t = s->terms;
    int rc = 0;
    uint32_t key = key_intern(s, term->topology_key, &rc);
    uint32_t nb = t->nns ? t->nns : 1, id;
    if (rc || grow((void **)&t->ns_scratch, &t->capns_scratch, nb, 1))
        return KUBE_NOVAL;
    uint8_t *ok = t->ns_scratch;
    term_ns_fill(t, ok, term, ns);
    tx_reset(t);
    rc |= tx_put(t, "C");
    rc |= tx_int(t, role);
    rc |= tx_put(t, "\x1b");
    rc |= tx_put(t, term->topology_key);
    rc |= tx_put(t, "\x1b");
    rc |= tx_clause(t, &term->selector, ok);
    if (rc)
        return KUBE_NOVAL;
    /* the usual case, an existing signature: nothing is allocated */
    if (smap_get_n(&t->hkey, &t->sig_map, t->text, t->tlen, &id))
        return id;
    kube_clause *cl = calloc(1, sizeof *cl);
    if (!cl || clause_copy(cl, &term->selector, 0, ok, t->nns)) {
        free(cl);
        return KUBE_NOVAL;
    }
    return sig_get(s, cl, 1, KUBE_SIG_CARRIER, role, 0, key, NULL);
}

static int visit_unassume(kube_sched *s, uint32_t sig, int anchored, void *ctx)
{
    const uint32_t *pn = ctx;
    kube_terms *t = s->terms;
    if (sig_matches_at(t, &t->sigs[sig], pn[0], &s->k->pods[pn[0]], anchored))
        return sig_drop(t, &t->sigs[sig], pn[1], 1);
    return 0;
}

/* the carrier signature of pod's own term of role, and in *d what the pod
 * counts there (a preferred term's weight, else 1) */
static uint32_t own_carrier(kube_sched *s, uint32_t pod, int role,
                            const berth_kaffinity_term *term, int32_t *d)
{
    *d = (role == KUBE_ROLE_AFF_PREF || role == KUBE_ROLE_ANTI_PREF) ? term->weight : 1;
    return carrier_sig(s, role, term, s->terms->pod_ns[pod]);
}

/* index_visit's walk listing the signatures pod matches (list, n, cap) */
typedef struct sig_walk {
    uint32_t pod;
    uint32_t **list, *n, *cap;
} sig_walk;

static int visit_collect(kube_sched *s, uint32_t sig, int anchored, void *ctx)
{
    sig_walk *w = ctx;
    kube_terms *t = s->terms;
    if (!sig_matches_at(t, &t->sigs[sig], w->pod, &s->k->pods[w->pod], anchored))
        return 0;
    return list_push(w->list, w->n, w->cap, sig);
}

/* count_pod for a pod of class c: what the walks below find, kept in c
 * (the MATCH signatures looked up again once the index grew) */
static int count_class_pod(kube_sched *s, kube_pclass *c, uint32_t pod, uint32_t node, int add)
{
    kube_terms *t = s->terms;
    const berth_kpod *p = &s->k->pods[pod];
    int rc = 0, term = pod_terminating(t, p);
    if (c->match_gen != t->idx[KUBE_SIG_MATCH].total || c->match_term != term) {
        sig_walk w = {pod, &c->match, &c->nmatch, &c->capmatch};
        c->nmatch = 0;
        c->match_gen = UINT32_MAX;
        if ((rc = index_visit(s, &t->idx[KUBE_SIG_MATCH], pod, visit_collect, &w)))
            return rc;
        c->match_gen = t->idx[KUBE_SIG_MATCH].total;
        c->match_term = term;
    }
    if (!c->own_ready) {
        uint32_t n = p->labels.n, m = 0;
        for (int role = 0; role < KUBE_NROLES; role++) {
            uint32_t nt;
            role_terms(p, role, &nt);
            m += nt;
        }
        free(c->post);
        free(c->own);
        free(c->ownd);
        c->post = malloc((n ? n : 1) * sizeof *c->post);
        c->own = malloc((m ? m : 1) * sizeof *c->own);
        c->ownd = malloc((m ? m : 1) * sizeof *c->ownd);
        if (!c->post || !c->own || !c->ownd)
            return BERTH_ENOMEM;
        c->npost = c->nown = 0;
        const uint64_t *lh = n ? label_hashes(t, p, pod) : NULL;
        if (n && !lh)
            return BERTH_ENOMEM;
        for (uint32_t i = 0; i < n; i++) {
            uint32_t b = post_list(t, &p->labels.items[i], lh[i], &rc);
            if (rc)
                return rc;
            if (b != KUBE_NOVAL)
                c->post[c->npost++] = b;
        }
        for (int role = 0; role < KUBE_NROLES; role++) {
            uint32_t nt;
            const berth_kaffinity_term *terms = role_terms(p, role, &nt);
            for (uint32_t i = 0; i < nt; i++) {
                uint32_t g = own_carrier(s, pod, role, &terms[i], &c->ownd[c->nown]);
                if (g == KUBE_NOVAL)
                    return BERTH_ENOMEM;
                c->own[c->nown++] = g;
            }
        }
        c->own_ready = 1;
    }
    for (uint32_t i = 0; i < c->nmatch; i++)
        if (add ? sig_bump(t, &t->sigs[c->match[i]], node, 1)
                : sig_drop(t, &t->sigs[c->match[i]], node, 1))
            return BERTH_ENOMEM;
    t->on[pod] = add ? node + 1 : 0;
    for (uint32_t i = 0; add && t->posting && i < c->npost; i++)
        if (post_push(t, c->post[i], pod))
            return BERTH_ENOMEM;
    for (uint32_t i = 0; i < c->nown; i++)
        if (add ? sig_bump(t, &t->sigs[c->own[i]], node, c->ownd[i])
                : sig_drop(t, &t->sigs[c->own[i]], node, c->ownd[i]))
            return BERTH_ENOMEM;
    return 0;
}

/* Counts pod on node into (add) or out of every signature it matches and
 * the carrier signatures of its own terms (weight for preferred ones). */
static int count_pod(kube_sched *s, uint32_t pod, uint32_t node, int add)
{
    kube_terms *t = s->terms;
    if (!t || s->reference || node >= t->nnodes || pod >= t->npods)
        return 0;
    if (t->pod_class && t->pod_class[pod])
        return count_class_pod(s, &t->pcl[t->pod_class[pod] - 1], pod, node, add);
    const berth_kpod *p = &s->k->pods[pod];
    uint32_t pn[2] = {pod, node};
    int rc = index_visit(s, &t->idx[KUBE_SIG_MATCH], pod, add ? visit_assume : visit_unassume,
                         pn);
    if (rc)
        return rc;
    t->on[pod] = add ? node + 1 : 0;
    if (add && t->posting && (rc = post_add(t, pod, p)))
        return rc;
    for (int role = 0; role < KUBE_NROLES; role++) {
        uint32_t nt;
        const berth_kaffinity_term *terms = role_terms(p, role, &nt);
        for (uint32_t i = 0; i < nt; i++) {
            int32_t d;
            uint32_t g = own_carrier(s, pod, role, &terms[i], &d);
            if (g == KUBE_NOVAL)
                return BERTH_ENOMEM;
            if (add ? sig_bump(t, &t->sigs[g], node, d) : sig_drop(t, &t->sigs[g], node, d))
                return BERTH_ENOMEM;
        }
    }
    return 0;
}

void kube_terms_prefetch(const kube_sched *s, uint32_t pod)
{
    const kube_terms *t = s->terms;
    if (!t || s->reference || pod >= t->npods)
        return; /* (the reference counts nothing per pod) */
    if (t->pod_class)
        __builtin_prefetch(&t->pod_class[pod]);
    __builtin_prefetch(&t->on[pod], 1);
}

int kube_terms_assume(kube_sched *s, uint32_t pod, uint32_t node)
{
    return count_pod(s, pod, node, 1);
}

/* The inverse of kube_terms_assume: every signature counting pod now
 * either existed when it was assumed or was initialised from the pods on
 * nodes (this one included), so it is counted out of exactly those. */
int kube_terms_unassume(kube_sched *s, uint32_t pod, uint32_t node)
{
    return count_pod(s, pod, node, 0);
}

/* Node n's labels changed: its value id per key (a new value gets a new id
 * after the existing ones), and the cached node-affinity columns. */
int kube_terms_node_changed(kube_sched *s, uint32_t n)
{
    kube_terms *t = s->terms;
    if (!t || n >= t->nnodes)
        return 0;
    for (uint32_t i = 0; i < t->nkeys; i++) {
        kube_tkey *k = &t->keys[i];
        const char *v = berth_labels_get(&s->k->nodes[n].labels, k->name);
        if (!v) {
            k->val[n] = KUBE_NOVAL;
            continue;
        }
        uint32_t vid;
        if (!smap_get(&t->hkey, &k->vmap, v, &vid)) {
            /* "" may already have its (unused) id */
            vid = !*v ? k->empty_id : k->nvals++;
            if (smap_put(&t->hkey, &k->vmap, v, vid))
                return BERTH_ENOMEM;
            k->nreal++;
        }
        k->val[n] = vid;
    }
    /* values moved: the per-domain totals are built again when asked */
    for (uint32_t i = 0; i < t->nsigs; i++) {
        free(t->sigs[i].dtot);
        t->sigs[i].dtot = NULL;
    }
    smap_free(&t->naff.map);
    for (uint32_t i = 0; i < t->naff.n; i++)
        free(t->naff.vec[i]);
    free(t->naff.vec);
    t->naff.vec = NULL;
    t->naff.n = 0;
    /* the classes' node-affinity columns were those vectors (nothing else a
     * class keeps depends on node labels) */
    for (uint32_t i = 0; i < t->npcl; i++) {
        t->pcl[i].aff_known = 0;
        t->pcl[i].aff_ok = NULL;
    }
    return 0;
}

/* ---- node inclusion (PodTopologySpread policies) ---- */

/* per-node match of p's required node affinity (entry nnodes: 1 when every
 * node matches); NULL when p has none */
static const uint8_t *node_affinity_vec(kube_sched *s, const berth_kpod *p, int *rc)
{
    kube_terms *t = s->terms;
    if (!p->node_selector.n && !p->has_req_affinity)
        return NULL;
    tx_reset(t);
    for (uint32_t i = 0; i < p->node_selector.n; i++) {
        *rc |= tx_put(t, p->node_selector.items[i].key);
        *rc |= tx_put(t, "=");
        *rc |= tx_put(t, p->node_selector.items[i].value);
        *rc |= tx_put(t, "\x1e");
    }
    *rc |= tx_put(t, p->has_req_affinity ? "A" : "-");
    for (uint32_t i = 0; i < p->nreq_terms; i++) {
        berth_selector e = {p->req_terms[i].exprs, p->req_terms[i].nexprs, 0};
        berth_selector f = {p->req_terms[i].fields, p->req_terms[i].nfields, 0};
        *rc |= tx_put(t, "\x1b");
        *rc |= tx_selector(t, &e);
        *rc |= tx_put(t, "\x1a");
        *rc |= tx_selector(t, &f);
    }
    if (*rc)
        return NULL;
    uint32_t id;
    if (smap_get_n(&t->hkey, &t->naff.map, t->text, t->tlen, &id))
        return t->naff.vec[id];
    uint8_t *v;
    int cache = t->naff.n < NAFF_CACHE_MAX;
    if (cache) {
        uint32_t cap = t->naff.n;
        if (grow((void **)&t->naff.vec, &cap, t->naff.n + 1, sizeof *t->naff.vec)) {
            *rc = BERTH_ENOMEM;
            return NULL;
        }
        v = malloc(t->nnodes + 1);
        if (!v || smap_put(&t->hkey, &t->naff.map, t->text, t->naff.n)) {
            free(v);
            *rc = BERTH_ENOMEM;
            return NULL;
        }
        t->naff.vec[t->naff.n++] = v;
    } else {
        if (!t->tmp_aff)
            t->tmp_aff = malloc(t->nnodes + 1);
        if (!t->tmp_aff) {
            *rc = BERTH_ENOMEM;
            return NULL;
        }
        v = t->tmp_aff;
    }
    /* GetRequiredNodeAffinity(pod).Match(node): NodeAffinity's own matcher */
    for (uint32_t n = 0; n < t->nnodes; n++)
        v[n] = (uint8_t)berth_kube_node_affinity_matches(p, &s->k->nodes[n]);
    /* past the nodes: every node matches (read by pts_totals per pod) */
    v[t->nnodes] = !memchr(v, 0, t->nnodes);
    return v;
}

/* ---- per-pod context ---- */

static int own(kube_terms_req *q, int32_t *a)
{
    if (grow((void **)&q->owned, &q->capowned, q->nowned + 1, sizeof *q->owned)) {
        free(a);
        return BERTH_ENOMEM;
    }
    q->owned[q->nowned++] = a;
    return 0;
}

/* reference: per-node count of pods matching all clauses, by walking pods */
static const int32_t *ref_counts(kube_sched *s, kube_terms_req *q, const kube_sig *g)
{
    kube_terms *t = s->terms;
    int32_t *c = calloc(t->nnodes ? t->nnodes : 1, sizeof *c);
    if (!c || own(q, c))
        return NULL;
    for (uint32_t n = 0; n < t->nnodes; n++)
        for (uint32_t i = 0; i < s->plist[n].n; i++) {
            uint32_t pod = s->plist[n].pods[i];
            if (sig_matches(t, g, pod, &s->k->pods[pod]))
                c[n]++;
        }
    return c;
}

/* per-node counts of the MATCH signature described by cl (ownership
 * taken): the interned signature's counters, or (reference) a fresh walk */
static const int32_t *match_counts(kube_sched *s, kube_terms_req *q, kube_clause *cl,
                                   uint32_t ncl, int spread, const char **extra, uint32_t *sig)
{
    kube_terms *t = s->terms;
    int rc = 0;
    *sig = KUBE_NOVAL;
    if (s->reference) {
        kube_sig g = {.kind = KUBE_SIG_MATCH, .spread = spread, .cl = cl, .ncl = ncl,
                      .extra_vals = extra};
        const int32_t *c = ref_counts(s, q, &g);
        sig_free(&g);
        return c;
    }
    tx_reset(t);
    rc |= tx_put(t, spread ? "MS" : "MA");
    for (uint32_t i = 0; i < ncl; i++)
        rc |= tx_clause(t, &cl[i].sel, cl[i].ns_ok);
    if (rc) {
        kube_sig g = {.cl = cl, .ncl = ncl, .extra_vals = extra};
        sig_free(&g);
        return NULL;
    }
    uint32_t id = sig_get(s, cl, ncl, KUBE_SIG_MATCH, 0, spread, 0, extra);
    *sig = id;
    return id == KUBE_NOVAL ? NULL : sig_read(t, q, id);
}

/* adds spread constraint c of pod (selector sel: the constraint's or the
 * merged workload selector) to the filter or score list */
static int spread_push(kube_terms_req *q, const berth_kspread *c, const kube_pts_c *pc)
{
    if (c->do_not_schedule) {
        if (grow((void **)&q->pf, &q->cappf, q->npf + 1, sizeof *q->pf))
            return BERTH_ENOMEM;
        q->pf[q->npf++] = *pc;
    } else {
        if (grow((void **)&q->ps, &q->capps, q->nps + 1, sizeof *q->ps))
            return BERTH_ENOMEM;
        q->ps[q->nps++] = *pc;
    }
    return 0;
}

static int add_spread(kube_sched *s, kube_terms_req *q, uint32_t pod, const berth_kspread *c,
                      const berth_selector *sel)
{
    kube_terms *t = s->terms;
    const berth_kpod *p = &s->k->pods[pod];
    int rc = 0;
    kube_pts_c pc;
    memset(&pc, 0, sizeof pc);
    pc.key = key_intern(s, c->topology_key, &rc);
    if (rc)
        return rc;
    pc.max_skew = c->max_skew;
    pc.min_domains = c->min_domains;
    pc.honor_aff = c->honor_node_affinity;
    pc.honor_taint = c->honor_node_taints;
    /* the selector ANDed with the pod's own values for matchLabelKeys */
    uint32_t extra = 0;
    for (uint32_t i = 0; i < c->nmatch_label_keys; i++)
        if (berth_labels_get(&p->labels, c->match_label_keys[i]))
            extra++;
    if (!s->reference) {
        /* the usual case, an interned signature: its text (match_counts')
         * from scratch copies, nothing allocated */
        uint32_t nb = t->nns ? t->nns : 1, nr = sel->n + extra, id;
        if (grow((void **)&t->ns_scratch, &t->capns_scratch, nb, 1) ||
            grow((void **)&t->sreq, &t->capsreq, nr ? nr : 1, sizeof *t->sreq) ||
            grow((void **)&t->sval, &t->capsval, extra ? extra : 1, sizeof *t->sval))
            return BERTH_ENOMEM;
        memset(t->ns_scratch, 0, nb);
        t->ns_scratch[t->pod_ns[pod]] = 1;
        berth_selector ss = {t->sreq, sel->n, sel->nothing};
        if (sel->n)
            memcpy(t->sreq, sel->reqs, sel->n * sizeof *sel->reqs);
        uint32_t e = 0;
        for (uint32_t i = 0; i < c->nmatch_label_keys; i++) {
            const char *v = berth_labels_get(&p->labels, c->match_label_keys[i]);
            if (!v)
                continue;
            t->sval[e] = v;
            t->sreq[ss.n++] = (berth_requirement){c->match_label_keys[i], BERTH_SEL_IN,
                                                  &t->sval[e], 1};
            e++;
        }
        tx_reset(t);
        rc |= tx_put(t, "MS");
        rc |= tx_clause(t, &ss, t->ns_scratch);
        if (rc)
            return BERTH_ENOMEM;
        /* the text of the signature found last (constraints on two keys
         * with one selector, the system defaults', and the next replica's
         * have one text): a compare, not a hash */
        int hit = t->sig_lastlen == t->tlen + 1 && !memcmp(t->sig_last, t->text, t->tlen);
        if (hit) {
            id = t->sig_lastid;
        } else if (smap_get_n(&t->hkey, &t->sig_map, t->text, t->tlen, &id)) {
            hit = 1;
            if (t->tlen < UINT32_MAX &&
                !grow((void **)&t->sig_last, &t->capsig_last, (uint32_t)t->tlen + 1, 1)) {
                memcpy(t->sig_last, t->text, t->tlen);
                t->sig_lastlen = (uint32_t)t->tlen + 1;
                t->sig_lastid = id;
            }
        }
        if (hit) {
            pc.self = berth_selector_matches(&ss, &p->labels);
            pc.cnt = sig_read(t, q, id);
            pc.sig = id;
            if (!pc.cnt)
                return BERTH_ENOMEM;
            return spread_push(q, c, &pc);
        }
    }
    kube_clause *cl = calloc(1, sizeof *cl);
    uint8_t *ok = calloc(t->nns ? t->nns : 1, 1);
    const char **ev = extra ? calloc(extra, sizeof *ev) : NULL;
    if (!cl || !ok || (extra && !ev) || clause_copy(cl, sel, extra, ok, t->nns)) {
        free(cl);
        free(ok);
        free(ev);
        return BERTH_ENOMEM;
    }
    free(ok);
    cl->ns_ok[t->pod_ns[pod]] = 1;
    uint32_t e = 0;
    for (uint32_t i = 0; i < c->nmatch_label_keys; i++) {
        const char *v = berth_labels_get(&p->labels, c->match_label_keys[i]);
        if (!v)
            continue;
        ev[e] = v;
        cl->sel.reqs[cl->sel.n++] =
            (berth_requirement){c->match_label_keys[i], BERTH_SEL_IN, &ev[e], 1};
        e++;
    }
    pc.self = berth_selector_matches(&cl->sel, &p->labels);
    pc.cnt = match_counts(s, q, cl, 1, 1, ev, &pc.sig);
    if (!pc.cnt)
        return BERTH_ENOMEM;
    return spread_push(q, c, &pc);
}

static int is_default_workload(const char *kind)
{
    return kind && (!strcmp(kind, "Service") || !strcmp(kind, "ReplicaSet") ||
                    !strcmp(kind, "StatefulSet") || !strcmp(kind, "ReplicationController"));
}

/* the workloads indexed by their selector's anchor (their kinds are read
 * at use: only selectors may not change while the state lives) */
static int wl_index(const kube_sched *s, kube_terms *t)
{
    const berth_kcluster *k = s->k;
    char buf[640];
    for (uint32_t w = 0; w < k->nworkloads; w++) {
        const berth_kworkload *wl = &k->workloads[w];
        if (wl->selector.nothing)
            continue;
        const berth_requirement *a = NULL;
        for (uint32_t i = 0; i < wl->selector.n && !a; i++)
            if (wl->selector.reqs[i].op == BERTH_SEL_IN && wl->selector.reqs[i].nvalues)
                a = &wl->selector.reqs[i];
        if (!a) {
            if (grow((void **)&t->wl_general, &t->wl_capgeneral, t->wl_ngeneral + 1,
                     sizeof *t->wl_general))
                return BERTH_ENOMEM;
            t->wl_general[t->wl_ngeneral++] = w;
            continue;
        }
        for (uint32_t v = 0; v < a->nvalues; v++) {
            if (!post_key(buf, sizeof buf, a->key, a->values[v]))
                continue; /* no valid label has it: the workload selects no pod */
            uint64_t h = berth_hash_keyed(&t->hkey, buf, strlen(buf));
            uint32_t b = named_list(&t->wl_map, buf, h, &t->wl_bucket, &t->wl_bn, &t->wl_bcap,
                                    &t->wl_nb, &t->wl_capb);
            if (b == KUBE_NOVAL || list_push(&t->wl_bucket[b], &t->wl_bn[b], &t->wl_bcap[b], w))
                return BERTH_ENOMEM;
        }
    }
    t->wl_ready = 1;
    return 0;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* the workloads that may select p (a superset, in workload order, no
 * repeats) into t->wl_cand; their count, or -1 on ENOMEM */
static int64_t wl_candidates(const kube_sched *s, kube_terms *t, uint32_t pod)
{
    const berth_kpod *p = &s->k->pods[pod];
    if (!t->wl_ready && wl_index(s, t))
        return -1;
    if (!t->wl_ngeneral && !t->wl_nb)
        return 0; /* no workload selects a pod: its labels need no look-up */
    const uint64_t *lh = p->labels.n ? label_hashes(t, p, pod) : NULL;
    if (p->labels.n && !lh)
        return -1;
    uint32_t n = 0;
    char buf[640];
    for (uint32_t pass = 0; pass < 2; pass++) {
        for (uint32_t i = 0; i <= p->labels.n; i++) {
            const uint32_t *list;
            uint32_t m, b;
            if (i == p->labels.n) {
                list = t->wl_general;
                m = t->wl_ngeneral;
            } else if (post_key(buf, sizeof buf, p->labels.items[i].key,
                                p->labels.items[i].value) &&
                       smap_get_h(&t->wl_map, buf, strlen(buf), lh[i], &b)) {
                list = t->wl_bucket[b];
                m = t->wl_bn[b];
            } else
                continue;
            if (pass == 1 && m)
                memcpy(t->wl_cand + n, list, m * sizeof *list);
            n += m;
        }
        if (pass == 0) {
            if (grow((void **)&t->wl_cand, &t->wl_capcand, n + 1, sizeof *t->wl_cand))
                return -1;
            n = 0;
        }
    }
    qsort(t->wl_cand, n, sizeof *t->wl_cand, cmp_u32);
    uint32_t u = 0;
    for (uint32_t i = 0; i < n; i++)
        if (!u || t->wl_cand[u - 1] != t->wl_cand[i])
            t->wl_cand[u++] = t->wl_cand[i];
    return u;
}

static int prepare_spread(kube_sched *s, kube_terms_req *q, uint32_t pod)
{
    const berth_kpod *p = &s->k->pods[pod];
    int rc = 0;
    if (p->nspread) {
        q->require_all = 1;
        for (uint32_t i = 0; i < p->nspread && !rc; i++)
            rc = add_spread(s, q, pod, &p->spread[i], &p->spread[i].selector);
        return rc;
    }
    const berth_kprofile *prof = s->prof;
    if (!prof || (!prof->spread_system_defaults && !prof->ndefault_spread))
        return 0;
    /* the default selector: every selecting workload's selector, merged */
    const berth_kcluster *k = s->k;
    q->ndefreqs = 0;
    int any = 0;
    int64_t ncand = wl_candidates(s, s->terms, pod);
    if (ncand < 0)
        return BERTH_ENOMEM;
    for (int64_t c = 0; c < ncand; c++) {
        const berth_kworkload *wl = &k->workloads[s->terms->wl_cand[c]];
        if (!is_default_workload(wl->kind) || strcmp(wl->ns ? wl->ns : "", p->ns ? p->ns : ""))
            continue;
        if (!berth_selector_matches(&wl->selector, &p->labels))
            continue;
        any = 1;
        if (grow((void **)&q->defreqs, &q->capdefreqs, q->ndefreqs + wl->selector.n + 1,
                 sizeof *q->defreqs))
            return BERTH_ENOMEM;
        for (uint32_t i = 0; i < wl->selector.n; i++)
            q->defreqs[q->ndefreqs++] = wl->selector.reqs[i];
    }
    if (!any || !q->ndefreqs)
        return 0;
    berth_selector sel = {q->defreqs, q->ndefreqs, 0};
    if (prof->spread_system_defaults) {
        q->require_all = 0;
        berth_kspread d[2];
        memset(d, 0, sizeof d);
        d[0].max_skew = 3;
        d[0].topology_key = HOSTNAME_KEY;
        d[1].max_skew = 5;
        d[1].topology_key = ZONE_KEY;
        for (int i = 0; i < 2 && !rc; i++) {
            d[i].min_domains = 1;
            d[i].honor_node_affinity = 1;
            rc = add_spread(s, q, pod, &d[i], &sel);
        }
        return rc;
    }
    q->require_all = 1;
    for (uint32_t i = 0; i < prof->ndefault_spread && !rc; i++)
        rc = add_spread(s, q, pod, &prof->default_spread[i], &sel);
    return rc;
}

static int add_term_ref(kube_term_ref **a, uint32_t *n, uint32_t *cap, uint32_t key,
                        int64_t mult, const int32_t *cnt, uint32_t sig)
{
    if (grow((void **)a, cap, *n + 1, sizeof **a))
        return BERTH_ENOMEM;
    (*a)[(*n)++] = (kube_term_ref){key, mult, cnt, sig};
    return 0;
}

/* one own affinity term -> a clause (ns resolved for the pod) */
static int term_clause(kube_terms *t, kube_clause *cl, const berth_kaffinity_term *term,
                       uint32_t ns)
{
    uint8_t *ok = term_ns_ok(t, term, ns);
    if (!ok)
        return BERTH_ENOMEM;
    int rc = clause_copy(cl, &term->selector, 0, ok, t->nns);
    free(ok);
    return rc;
}

static int64_t role_mult(const kube_sched *s, int role)
{
    switch (role) {
    case KUBE_ROLE_AFF_REQ: return s->prof ? s->prof->hard_pod_affinity_weight : 1;
    case KUBE_ROLE_AFF_PREF: return 1;
    case KUBE_ROLE_ANTI_PREF: return -1;
    default: return 0;
    }
}

/* reference: carriers' contributions by walking every pod's terms; each
 * (pod, term) matching the incoming pod becomes a one-node count array */
static int ref_carriers(kube_sched *s, kube_terms_req *q, uint32_t pod)
{
    kube_terms *t = s->terms;
    const berth_kpod *p = &s->k->pods[pod];
    for (uint32_t n = 0; n < t->nnodes; n++)
        for (uint32_t i = 0; i < s->plist[n].n; i++) {
            uint32_t e = s->plist[n].pods[i];
            const berth_kpod *ep = &s->k->pods[e];
            for (int role = 0; role < KUBE_NROLES; role++) {
                uint32_t nt;
                const berth_kaffinity_term *terms = role_terms(ep, role, &nt);
                for (uint32_t j = 0; j < nt; j++) {
                    uint8_t *ok = term_ns_ok(t, &terms[j], t->pod_ns[e]);
                    if (!ok)
                        return BERTH_ENOMEM;
                    int m = ok[t->pod_ns[pod]] &&
                            berth_selector_matches(&terms[j].selector, &p->labels);
                    free(ok);
                    if (!m)
                        continue;
                    int rc = 0;
                    uint32_t key = key_intern(s, terms[j].topology_key, &rc);
                    if (rc)
                        return rc;
                    int32_t *c = calloc(t->nnodes, sizeof *c);
                    if (!c || own(q, c))
                        return BERTH_ENOMEM;
                    c[n] = 1;
                    if (role == KUBE_ROLE_ANTI_REQ) {
                        q->has_exist = 1;
                        if (add_term_ref(&q->anti, &q->nanti, &q->capanti, key, -1, c, KUBE_NOVAL))
                            return BERTH_ENOMEM;
                        continue;
                    }
                    int64_t mult = role_mult(s, role);
                    if (role != KUBE_ROLE_AFF_REQ)
                        mult *= terms[j].weight;
                    if (mult && add_term_ref(&q->isc, &q->nisc, &q->capisc, key, mult, c,
                                              KUBE_NOVAL))
                        return BERTH_ENOMEM;
                }
            }
        }
    return 0;
}

static int prepare_ipa(kube_sched *s, kube_terms_req *q, uint32_t pod)
{
    kube_terms *t = s->terms;
    const berth_kpod *p = &s->k->pods[pod];
    uint32_t ns = t->pod_ns[pod];
    int rc = 0;
    /* required affinity: one signature for "matches all terms" */
    if (p->naff_req) {
        kube_clause *cl = calloc(p->naff_req, sizeof *cl);
        if (!cl)
            return BERTH_ENOMEM;
        uint32_t made = 0;
        for (; made < p->naff_req && !rc; made++)
            rc = term_clause(t, &cl[made], &p->aff_req[made], ns);
        if (rc) {
            kube_sig g = {.cl = cl, .ncl = made ? made - 1 : 0};
            sig_free(&g);
            return rc;
        }
        q->aff_self = 1;
        for (uint32_t i = 0; i < p->naff_req; i++)
            if (!clause_matches(t, &cl[i], pod, p))
                q->aff_self = 0;
        uint32_t sig;
        const int32_t *cnt = match_counts(s, q, cl, p->naff_req, 0, NULL, &sig);
        if (!cnt)
            return BERTH_ENOMEM;
        for (uint32_t i = 0; i < p->naff_req && !rc; i++) {
            uint32_t key = key_intern(s, p->aff_req[i].topology_key, &rc);
            if (!rc)
                rc = add_term_ref(&q->aff, &q->naff, &q->capaff, key, 1, cnt, sig);
        }
        if (rc)
            return rc;
    }
    /* own terms counted one by one */
    for (int role = 0; role < KUBE_NROLES; role++) {
        if (role == KUBE_ROLE_AFF_REQ)
            continue;
        uint32_t nt;
        const berth_kaffinity_term *terms = role_terms(p, role, &nt);
        for (uint32_t i = 0; i < nt; i++) {
            uint32_t key = key_intern(s, terms[i].topology_key, &rc);
            if (rc)
                return rc;
            const int32_t *cnt = NULL;
            uint32_t sig = KUBE_NOVAL;
            if (!s->reference) {
                /* the usual case, an interned signature: found by its
                 * text (match_counts') with nothing allocated */
                uint32_t nb = t->nns ? t->nns : 1, id;
                if (grow((void **)&t->ns_scratch, &t->capns_scratch, nb, 1))
                    return BERTH_ENOMEM;
                term_ns_fill(t, t->ns_scratch, &terms[i], ns);
                tx_reset(t);
                rc |= tx_put(t, "MA");
                rc |= tx_clause(t, &terms[i].selector, t->ns_scratch);
                if (rc)
                    return BERTH_ENOMEM;
                if (smap_get_n(&t->hkey, &t->sig_map, t->text, t->tlen, &id)) {
                    if (!(cnt = sig_read(t, q, id)))
                        return BERTH_ENOMEM;
                    sig = id;
                }
            }
            if (!cnt) {
                kube_clause *cl = calloc(1, sizeof *cl);
                if (!cl || term_clause(t, cl, &terms[i], ns)) {
                    free(cl);
                    return BERTH_ENOMEM;
                }
                cnt = match_counts(s, q, cl, 1, 0, NULL, &sig);
            }
            if (!cnt)
                return BERTH_ENOMEM;
            if (role == KUBE_ROLE_ANTI_REQ)
                rc = add_term_ref(&q->anti, &q->nanti, &q->capanti, key, 1, cnt, sig);
            else
                rc = add_term_ref(&q->isc, &q->nisc, &q->capisc, key,
                                  role == KUBE_ROLE_AFF_PREF ? terms[i].weight : -terms[i].weight,
                                  cnt, sig);
            if (rc)
                return rc;
        }
    }
    return 0;
}

/* the existing pods' terms matching the pod: the carrier signatures in
 * q->carr (incremental mode: filled by the caller) as term references */
static int carrier_refs(kube_sched *s, kube_terms_req *q)
{
    kube_terms *t = s->terms;
    int rc = 0;
    for (uint32_t i = 0; i < q->ncarr; i++) {
        const kube_sig *g = &t->sigs[q->carr[i]];
        if (g->role != KUBE_ROLE_ANTI_REQ && !role_mult(s, g->role))
            continue;
        const int32_t *cnt = sig_read(t, q, q->carr[i]);
        if (!cnt)
            return BERTH_ENOMEM;
        if (g->role == KUBE_ROLE_ANTI_REQ) {
            q->has_exist = 1;
            rc = add_term_ref(&q->anti, &q->nanti, &q->capanti, g->key, -1, cnt, q->carr[i]);
        } else {
            rc = add_term_ref(&q->isc, &q->nisc, &q->capisc, g->key, role_mult(s, g->role),
                              cnt, q->carr[i]);
        }
        if (rc)
            return rc;
    }
    return 0;
}

/* ---- pod classes (kube_pclass) ---- */

static void pclass_put_sel(kube_podkey *b, const berth_selector *sel)
{
    kube_podkey_put(b, &sel->nothing, sizeof sel->nothing);
    kube_podkey_reqs(b, sel->reqs, sel->n);
}

/* pod's class key into t->kbuf (its length, 0 when out of memory): all
 * that kube_terms_prepare reads of the pod and keeps in the class (the
 * profile and the workloads are read again at each use) */
static size_t pclass_key(const kube_sched *s, kube_terms *t, uint32_t pod)
{
    const berth_kpod *p = &s->k->pods[pod];
    kube_podkey b = kube_podkey_start(&t->kbuf, &t->kcap);
    kube_podkey_put(&b, &t->pod_ns[pod], sizeof t->pod_ns[pod]);
    kube_podkey_put(&b, &p->labels.n, sizeof p->labels.n);
    for (uint32_t i = 0; i < p->labels.n; i++) {
        kube_podkey_str(&b, p->labels.items[i].key);
        kube_podkey_str(&b, p->labels.items[i].value);
    }
    kube_podkey_put(&b, &p->nspread, sizeof p->nspread);
    for (uint32_t i = 0; i < p->nspread; i++) {
        const berth_kspread *c = &p->spread[i];
        int32_t f[6] = {c->max_skew, c->do_not_schedule, c->min_domains, c->honor_node_affinity,
                        c->honor_node_taints, (int32_t)c->nmatch_label_keys};
        kube_podkey_str(&b, c->topology_key);
        kube_podkey_put(&b, f, sizeof f);
        pclass_put_sel(&b, &c->selector);
        for (uint32_t j = 0; j < c->nmatch_label_keys; j++)
            kube_podkey_str(&b, c->match_label_keys[j]);
    }
    for (int role = 0; role < KUBE_NROLES; role++) {
        uint32_t nt;
        const berth_kaffinity_term *terms = role_terms(p, role, &nt);
        kube_podkey_put(&b, &nt, sizeof nt);
        for (uint32_t i = 0; i < nt; i++) {
            const berth_kaffinity_term *a = &terms[i];
            int32_t f[3] = {a->weight, a->has_ns_selector, (int32_t)a->nnamespaces};
            kube_podkey_str(&b, a->topology_key);
            kube_podkey_put(&b, f, sizeof f);
            pclass_put_sel(&b, &a->selector);
            for (uint32_t j = 0; j < a->nnamespaces; j++)
                kube_podkey_str(&b, a->namespaces[j]);
            if (a->has_ns_selector)
                pclass_put_sel(&b, &a->ns_selector);
        }
    }
    kube_podkey_required_affinity(&b, p);
    return b.oom ? 0 : b.len;
}

/* the class whose key (n bytes, hash h) is in t->kbuf, else KUBE_NOVAL */
static uint32_t pclass_find(const kube_terms *t, uint64_t h, size_t n)
{
    if (!t->cappslot)
        return KUBE_NOVAL;
    uint32_t mask = t->cappslot - 1;
    for (uint32_t i = (uint32_t)h & mask; t->pslot[i]; i = (i + 1) & mask) {
        const kube_pclass *c = &t->pcl[t->pslot[i] - 1];
        if (c->hash == h && c->klen == n && !memcmp(t->ckey + c->koff, t->kbuf, n))
            return t->pslot[i] - 1;
    }
    return KUBE_NOVAL;
}

/* drops every class (node labels changed, or the cache is full) */
static void pclass_clear(kube_terms *t)
{
    for (uint32_t i = 0; i < t->npcl; i++) {
        kube_pclass *c = &t->pcl[i];
        free(c->carr);
        free(c->match);
        free(c->own);
        free(c->ownd);
        free(c->post);
    }
    if (t->pod_class && t->npcl)
        memset(t->pod_class, 0, (size_t)t->npods * sizeof *t->pod_class);
    t->npcl = t->nckey = t->ncpts = t->ncrefs = 0;
    t->pclass_last = 0;
    if (t->pslot)
        memset(t->pslot, 0, (size_t)t->cappslot * sizeof *t->pslot);
}

static void pclass_free(kube_terms *t)
{
    pclass_clear(t);
    free(t->pcl);
    free(t->pslot);
    free(t->ckey);
    free(t->cpts);
    free(t->crefs);
    free(t->kbuf);
    free(t->pod_class);
}

/* the class's carrier signatures into q->carr: the kept list while no
 * carrier signature was made since, else found again and kept */
/* The carrier signatures whose terms select pod `pod` into q->carr
 * (appended). */
static int collect_carriers(kube_sched *s, kube_terms_req *q, uint32_t pod)
{
    sig_walk w = {pod, &q->carr, &q->ncarr, &q->capcarr};
    return index_visit(s, &s->terms->idx[KUBE_SIG_CARRIER], pod, visit_collect, &w);
}

static int pclass_carriers(kube_sched *s, kube_terms_req *q, kube_pclass *c)
{
    kube_terms *t = s->terms;
    const kube_index *x = &t->idx[KUBE_SIG_CARRIER];
    if (c->carr_gen == x->total) {
        if (grow((void **)&q->carr, &q->capcarr, c->ncarr + 1, sizeof *q->carr))
            return BERTH_ENOMEM;
        if (c->ncarr)
            memcpy(q->carr, c->carr, c->ncarr * sizeof *q->carr);
        q->ncarr = c->ncarr;
        return 0;
    }
    q->ncarr = 0;
    int rc = collect_carriers(s, q, q->pod);
    if (rc || grow((void **)&c->carr, &c->capcarr, q->ncarr + 1, sizeof *c->carr))
        return rc ? rc : BERTH_ENOMEM;
    if (q->ncarr)
        memcpy(c->carr, q->carr, q->ncarr * sizeof *c->carr);
    c->ncarr = q->ncarr;
    c->carr_gen = x->total;
    return 0;
}

/* Keeps what q resolved (the own terms: naff, nanti, nisc of q's lists;
 * the carriers not yet listed) as the class of the key in t->kbuf (n
 * bytes, hash h); KUBE_NOVAL on ENOMEM. */
static uint32_t pclass_add(const kube_sched *s, const kube_terms_req *q, uint64_t h, size_t n)
{
    kube_terms *t = s->terms;
    if (t->npcl >= KUBE_PCLASS_MAX || n > UINT32_MAX / 4 || t->nckey > UINT32_MAX / 4 - n)
        pclass_clear(t);
    uint32_t nref = q->naff + q->nanti + q->nisc;
    if (2 * (t->npcl + 1) > t->cappslot &&
        berth_slots_rebuild(&t->pslot, &t->cappslot, t->cappslot ? 2 * t->cappslot : 64, t->pcl,
                            sizeof *t->pcl, offsetof(kube_pclass, hash), sizeof t->pcl->hash,
                            t->npcl))
        return KUBE_NOVAL;
    if (grow((void **)&t->pcl, &t->cappcl, t->npcl + 1, sizeof *t->pcl) ||
        grow((void **)&t->ckey, &t->capckey, t->nckey + (uint32_t)n, 1) ||
        grow((void **)&t->cpts, &t->capcpts, t->ncpts + q->npf + q->nps + 1, sizeof *t->cpts) ||
        grow((void **)&t->crefs, &t->capcrefs, t->ncrefs + nref + 1, sizeof *t->crefs))
        return KUBE_NOVAL;
    uint32_t id = t->npcl++;
    kube_pclass *c = &t->pcl[id];
    memset(c, 0, sizeof *c);
    c->hash = h;
    c->koff = t->nckey;
    c->klen = (uint32_t)n;
    memcpy(t->ckey + t->nckey, t->kbuf, n);
    t->nckey += (uint32_t)n;
    c->pts = t->ncpts;
    /* the default spreading is not kept (pclass_replay) */
    int own = s->k->pods[q->pod].nspread != 0;
    c->npf = own ? q->npf : 0;
    c->nps = own ? q->nps : 0;
    for (uint32_t i = 0; i < c->npf + c->nps; i++) {
        kube_pts_c pc = i < c->npf ? q->pf[i] : q->ps[i - c->npf];
        pc.cnt = NULL;
        t->cpts[t->ncpts++] = pc;
    }
    c->refs = t->ncrefs;
    c->naff = q->naff;
    c->nanti = q->nanti;
    c->nisc = q->nisc;
    for (uint32_t i = 0; i < nref; i++) {
        kube_term_ref tr = i < q->naff             ? q->aff[i]
                           : i < q->naff + q->nanti ? q->anti[i - q->naff]
                                                    : q->isc[i - q->naff - q->nanti];
        tr.cnt = NULL;
        t->crefs[t->ncrefs++] = tr;
    }
    c->require_all = q->require_all;
    c->aff_self = q->aff_self;
    c->carr_gen = UINT32_MAX; /* found on first use (pclass_carriers) */
    c->match_gen = UINT32_MAX; /* and count_class_pod */
    uint32_t j = (uint32_t)h & (t->cappslot - 1);
    while (t->pslot[j])
        j = (j + 1) & (t->cappslot - 1);
    t->pslot[j] = id + 1;
    t->pclass_made++;
    return id;
}

/* q's spread constraints and own terms from class c: the same signatures
 * read in the same order as the resolution that made c */
static int pclass_replay(kube_sched *s, kube_terms_req *q, const kube_pclass *c)
{
    kube_terms *t = s->terms;
    /* no constraints of its own: the default spreading (the profile's, on
     * the selecting workloads, whose kinds are read at use) resolved again */
    int rc = s->k->pods[q->pod].nspread ? 0 : prepare_spread(s, q, q->pod);
    if (rc)
        return rc;
    if (grow((void **)&q->pf, &q->cappf, c->npf + 1, sizeof *q->pf) ||
        grow((void **)&q->ps, &q->capps, c->nps + 1, sizeof *q->ps))
        return BERTH_ENOMEM;
    for (uint32_t i = 0; i < c->npf + c->nps; i++) {
        kube_pts_c pc = t->cpts[c->pts + i];
        if (!(pc.cnt = sig_read(t, q, pc.sig)))
            return BERTH_ENOMEM;
        if (i < c->npf)
            q->pf[q->npf++] = pc;
        else
            q->ps[q->nps++] = pc;
    }
    if (s->k->pods[q->pod].nspread)
        q->require_all = c->require_all;
    q->aff_self = c->aff_self;
    const int32_t *aff = NULL;
    for (uint32_t i = 0; i < c->naff + c->nanti + c->nisc; i++) {
        kube_term_ref tr = t->crefs[c->refs + i];
        /* the required terms share one signature, read once */
        if (i >= c->naff || !aff)
            tr.cnt = sig_read(t, q, tr.sig);
        else
            tr.cnt = aff;
        if (!tr.cnt)
            return BERTH_ENOMEM;
        if (i < c->naff) {
            aff = tr.cnt;
            rc = add_term_ref(&q->aff, &q->naff, &q->capaff, tr.key, tr.mult, tr.cnt, tr.sig);
        } else if (i < c->naff + c->nanti) {
            rc = add_term_ref(&q->anti, &q->nanti, &q->capanti, tr.key, tr.mult, tr.cnt, tr.sig);
        } else {
            rc = add_term_ref(&q->isc, &q->nisc, &q->capisc, tr.key, tr.mult, tr.cnt, tr.sig);
        }
        if (rc)
            return rc;
    }
    return 0;
}

/* The pod's spread and affinity context: replayed from its class, or
 * resolved (and its class made); in reference mode resolved by walking. */
static int prepare_pod(kube_sched *s, kube_terms_req *q, uint32_t pod, kube_pclass **cls)
{
    kube_terms *t = s->terms;
    *cls = NULL;
    int rc;
    if (s->reference) {
        rc = prepare_spread(s, q, pod);
        if (!rc)
            rc = prepare_ipa(s, q, pod);
        return rc ? rc : ref_carriers(s, q, pod);
    }
    const berth_kpod *p = &s->k->pods[pod];
    if (!p->nspread && !p->naff_req && !p->nanti_req && !p->naff_pref && !p->nanti_pref) {
        /* no constraints or terms of its own: little to resolve, no class */
        rc = prepare_spread(s, q, pod);
        if (!rc)
            rc = collect_carriers(s, q, pod);
        return rc ? rc : carrier_refs(s, q);
    }
    size_t n = pclass_key(s, t, pod);
    if (!n)
        return BERTH_ENOMEM;
    /* a pod of the class before (replicas queue together): a compare */
    uint32_t id = KUBE_NOVAL;
    uint64_t h = 0;
    if (t->pclass_last) {
        const kube_pclass *c = &t->pcl[t->pclass_last - 1];
        if (c->klen == n && !memcmp(t->ckey + c->koff, t->kbuf, n))
            id = t->pclass_last - 1;
    }
    if (id == KUBE_NOVAL)
        id = pclass_find(t, h = berth_hash_keyed(&t->hkey, t->kbuf, n), n);
    if (id != KUBE_NOVAL) {
        t->pclass_hits++;
        rc = pclass_replay(s, q, &t->pcl[id]);
    } else {
        rc = prepare_spread(s, q, pod);
        if (!rc)
            rc = prepare_ipa(s, q, pod);
        if (!rc && (id = pclass_add(s, q, h, n)) == KUBE_NOVAL)
            rc = BERTH_ENOMEM;
    }
    if (rc)
        return rc;
    *cls = &t->pcl[id];
    t->pclass_last = id + 1;
    if (!t->pod_class && !(t->pod_class = calloc(t->npods ? t->npods : 1, sizeof *t->pod_class)))
        return BERTH_ENOMEM;
    t->pod_class[pod] = id + 1;
    if ((rc = pclass_carriers(s, q, *cls)))
        return rc;
    return carrier_refs(s, q);
}

int kube_terms_prepare(kube_sched *s, kube_req *r)
{
    kube_terms *t = s->terms;
    r->terms = NULL;
    if (!t)
        return 0;
    kube_terms_req *q = &t->req0;
    if (q->busy) {
        q = calloc(1, sizeof *q);
        if (!q)
            return BERTH_ENOMEM;
    }
    /* reset, keeping the buffers */
    req_unhold(t, q);
    for (uint32_t i = 0; i < q->nowned; i++)
        free(q->owned[i]);
    q->nowned = 0;
    q->busy = 1;
    q->pod = r->pod;
    q->npf = q->nps = q->naff = q->nanti = q->nisc = q->ncarr = 0;
    q->naslot = q->nxslot = q->neslot = q->nsslot = 0;
    q->require_all = q->pts_filter_ready = q->ipa_filter_ready = q->score_oom = 0;
    q->aff_self = q->aff_any = q->has_exist = 0;
    q->aff_ok = NULL;
    q->need_tol = 0;
    q->pool_used = 0;
    zpool_clear(q);
    r->terms = q;
    if (r->pod >= t->npods)
        return 0;
    kube_pclass *cls;
    int rc = prepare_pod(s, q, r->pod, &cls);
    if (!rc && (q->npf || q->nps)) {
        const berth_kpod *p = &s->k->pods[r->pod];
        int honor_aff = 0;
        for (uint32_t i = 0; i < q->npf; i++) {
            honor_aff |= q->pf[i].honor_aff;
            q->need_tol |= q->pf[i].honor_taint;
        }
        for (uint32_t i = 0; i < q->nps; i++) {
            honor_aff |= q->ps[i].honor_aff;
            q->need_tol |= q->ps[i].honor_taint;
        }
        if (honor_aff && cls && cls->aff_known) {
            q->aff_ok = cls->aff_ok;
        } else if (honor_aff) {
            q->aff_ok = node_affinity_vec(s, p, &rc);
            /* a column of the node-affinity cache lives until node labels
             * change (then the classes go too); the spare one does not */
            if (!rc && cls && (!q->aff_ok || q->aff_ok != t->tmp_aff)) {
                cls->aff_ok = q->aff_ok;
                cls->aff_known = 1;
            }
        }
        if (!rc && q->need_tol) {
            if (!q->tol_ok)
                q->tol_ok = malloc(t->nnodes ? t->nnodes : 1);
            if (!q->tol_ok)
                rc = BERTH_ENOMEM;
            for (uint32_t n = 0; n < t->nnodes && !rc; n++) {
                const berth_knode *nd = &s->k->nodes[n];
                q->tol_ok[n] = !s->has_hard_taint ||
                               !s->has_hard_taint[n] ||
                               !berth_taints_first_untolerated(nd->taints, nd->ntaints, p->tols,
                                                               p->ntols, BERTH_EFFECT_MASK_HARD);
            }
        }
    }
    if (rc) {
        kube_terms_release(s, r);
        return rc;
    }
    return 0;
}

void kube_terms_release(kube_sched *s, kube_req *r)
{
    kube_terms *t = s->terms;
    kube_terms_req *q = r->terms;
    if (!t || !q)
        return;
    req_unhold(t, q);
    if (q == &t->req0) {
        for (uint32_t i = 0; i < q->nowned; i++)
            free(q->owned[i]);
        q->nowned = 0;
        q->busy = 0;
    } else {
        req_free_all(q);
        free(q);
    }
    r->terms = NULL;
}

/* ---- domain arrays ---- */

static int pool_reserve(kube_terms_req *q, size_t n, int64_t fill, size_t *off)
{
    if (q->pool_used + n > q->pool_cap) {
        size_t nc = q->pool_cap ? q->pool_cap : 1024;
        while (nc < q->pool_used + n)
            nc *= 2;
        int64_t *np = realloc(q->pool, nc * sizeof *np);
        if (!np)
            return BERTH_ENOMEM;
        q->pool = np;
        q->pool_cap = nc;
    }
    *off = q->pool_used;
    for (size_t i = 0; i < n; i++)
        q->pool[q->pool_used + i] = fill;
    q->pool_used += n;
    return 0;
}

/* n zero entries of the zero pool (no fill: it is kept clear) */
static int zpool_reserve(kube_terms_req *q, size_t n, size_t *off)
{
    if (q->zused + n > q->zcap) {
        size_t nc = q->zcap ? q->zcap : 1024;
        while (nc < q->zused + n)
            nc *= 2;
        int64_t *np = realloc(q->zpool, nc * sizeof *np);
        if (!np)
            return BERTH_ENOMEM;
        memset(np + q->zcap, 0, (nc - q->zcap) * sizeof *np);
        q->zpool = np;
        q->zcap = nc;
    }
    *off = q->zused;
    q->zused += n;
    return 0;
}

static int ztouch(kube_terms_req *q, size_t idx)
{
    if (q->ntouch == q->captouch) {
        size_t nc = q->captouch ? q->captouch * 2 : 256;
        size_t *np = realloc(q->ztouch, nc * sizeof *np);
        if (!np)
            return BERTH_ENOMEM;
        q->ztouch = np;
        q->captouch = nc;
    }
    q->ztouch[q->ntouch++] = idx;
    return 0;
}

/* sums mult x cnt over nodes having the key, per topology value, into the
 * slot of that key in slots[] (added when missing) */
static int slot_add(kube_sched *s, kube_terms_req *q, kube_slot **slots, uint32_t *ns,
                    const kube_term_ref *tr)
{
    kube_terms *t = s->terms;
    const kube_tkey *k = &t->keys[tr->key];
    uint32_t i = 0;
    while (i < *ns && (*slots)[i].key != tr->key)
        i++;
    if (i == *ns) {
        uint32_t cap = *ns;
        size_t off;
        if (grow((void **)slots, &cap, *ns + 1, sizeof **slots) ||
            zpool_reserve(q, k->nvals, &off))
            return BERTH_ENOMEM;
        (*slots)[i] = (kube_slot){tr->key, off};
        (*ns)++;
    }
    size_t base = (*slots)[i].off;
    int64_t *dom = q->zpool + base;
    const uint32_t *val = k->val;
    const int32_t *cnt = tr->cnt;
    int64_t m = tr->mult;
    if (!s->reference) {
        /* only the nodes where the signature counts something */
        const kube_sig *g = &t->sigs[tr->sig];
        if (q->ntouch + g->nnz > q->captouch) {
            size_t nc = q->captouch ? q->captouch : 256;
            while (nc < q->ntouch + g->nnz)
                nc *= 2;
            size_t *np = realloc(q->ztouch, nc * sizeof *np);
            if (!np)
                return BERTH_ENOMEM;
            q->ztouch = np;
            q->captouch = nc;
        }
        size_t *touch = q->ztouch + q->ntouch, nt = 0;
        for (uint32_t j = 0; j < g->nnz; j++) {
            uint32_t n = g->nz[j];
            if (val[n] != KUBE_NOVAL) {
                dom[val[n]] += m * cnt[n];
                touch[nt++] = base + val[n];
            }
        }
        q->ntouch += nt;
        return 0;
    }
    for (uint32_t n = 0; n < t->nnodes; n++)
        if (cnt[n] && val[n] != KUBE_NOVAL) {
            dom[val[n]] += m * cnt[n];
            if (ztouch(q, base + val[n]))
                return BERTH_ENOMEM;
        }
    return 0;
}

static int64_t slot_at(const kube_terms *t, const kube_terms_req *q, const kube_slot *sl,
                       uint32_t node, int *has)
{
    uint32_t v = t->keys[sl->key].val[node];
    *has = v != KUBE_NOVAL;
    return *has ? q->zpool[sl->off + v] : 0;
}

/* ---- PodTopologySpread ---- */

static int node_has_keys(const kube_terms *t, const kube_pts_c *c, uint32_t nc, uint32_t n)
{
    for (uint32_t i = 0; i < nc; i++)
        if (t->keys[c[i].key].val[n] == KUBE_NOVAL)
            return 0;
    return 1;
}

static int policies_ok(const kube_terms_req *q, const kube_pts_c *c, uint32_t n)
{
    if (c->honor_aff && q->aff_ok && !q->aff_ok[n])
        return 0;
    if (c->honor_taint && q->tol_ok && !q->tol_ok[n])
        return 0;
    return 1;
}

/* 1 when constraint c's per-domain count is its signature's per-domain
 * total: no node off, every constraint on c's key (a node has the keys iff
 * it has c's), the inclusion policies pass every node; the totals built
 * then (once: O(non-zero nodes); kept by sig_bump / sig_drop). 0 to count
 * node by node (also when memory is short: same result). */
static int pts_totals(kube_sched *s, kube_terms_req *q, const kube_pts_c *c)
{
    kube_terms *t = s->terms;
    uint32_t N = t->nnodes;
    if (s->off)
        return 0;
    for (uint32_t i = 0; i < q->npf; i++)
        if (q->pf[i].key != c->key)
            return 0;
    if (c->honor_aff && q->aff_ok && !q->aff_ok[N])
        return 0;
    if (c->honor_taint && q->tol_ok && memchr(q->tol_ok, 0, N))
        return 0;
    kube_sig *g = &t->sigs[c->sig];
    const kube_tkey *k = &t->keys[c->key];
    if (g->dtot && (g->dkey != c->key || g->dn != k->nvals)) {
        free(g->dtot);
        g->dtot = NULL;
    }
    if (!g->dtot) {
        if (k->nvals > 4096 || !(g->dtot = calloc(k->nvals ? k->nvals : 1, sizeof *g->dtot)))
            return 0;
        g->dkey = c->key;
        g->dn = k->nvals;
        g->dval = k->val;
        for (uint32_t j = 0; j < g->nnz; j++) {
            uint32_t n = g->nz[j];
            if (k->val[n] != KUBE_NOVAL)
                g->dtot[k->val[n]] += sig_at(g, j);
        }
    }
    return 1;
}

static int pts_filter_ready(kube_sched *s, kube_terms_req *q)
{
    kube_terms *t = s->terms;
    if (q->pts_filter_ready)
        return 0;
    for (uint32_t i = 0; i < q->npf; i++) {
        kube_pts_c *c = &q->pf[i];
        if (pool_reserve(q, t->keys[c->key].nvals, -1, &c->off))
            return BERTH_ENOMEM;
    }
    for (uint32_t i = 0; i < q->npf; i++) {
        kube_pts_c *c = &q->pf[i];
        int64_t *dom = q->pool + c->off;
        const uint32_t *val = t->keys[c->key].val;
        /* every counted node adds its domain (even at 0), then the counts;
         * the scan stops once every value present is marked */
        /* nodes that are off (a what-if session's excluded nodes, spare
         * slots) make no domain; pods on them count in domains others make */
        const uint8_t *off = s->off;
        uint32_t marked = 0, present = t->keys[c->key].nreal;
        for (uint32_t n = 0; n < t->nnodes && marked < present; n++) {
            if (val[n] == KUBE_NOVAL || dom[val[n]] >= 0 || (off && off[n]) ||
                !node_has_keys(t, q->pf, q->npf, n) || !policies_ok(q, c, n))
                continue;
            dom[val[n]] = 0;
            marked++;
        }
        if (!s->reference && pts_totals(s, q, c)) {
            /* every node counts: the signature's per-domain totals */
            kube_sig *g = &t->sigs[c->sig];
            for (uint32_t v = 0; v < g->dn; v++)
                dom[v] += g->dtot[v];
        } else if (!s->reference) {
            const kube_sig *g = &t->sigs[c->sig];
            for (uint32_t j = 0; j < g->nnz; j++) {
                uint32_t n = g->nz[j];
                if (val[n] == KUBE_NOVAL || (off && off[n] && dom[val[n]] < 0) ||
                    !node_has_keys(t, q->pf, q->npf, n) || !policies_ok(q, c, n))
                    continue;
                dom[val[n]] += c->cnt[n];
            }
        } else {
            for (uint32_t n = 0; n < t->nnodes; n++) {
                if (val[n] == KUBE_NOVAL || (off && off[n] && dom[val[n]] < 0) ||
                    !node_has_keys(t, q->pf, q->npf, n) || !policies_ok(q, c, n))
                    continue;
                dom[val[n]] += c->cnt[n];
            }
        }
        c->ndom = 0;
        c->min = 0;
        for (uint32_t v = 0; v < t->keys[c->key].nvals; v++) {
            if (dom[v] < 0)
                continue;
            if (!c->ndom || dom[v] < c->min)
                c->min = dom[v];
            c->ndom++;
        }
        if (c->ndom < (uint32_t)(c->min_domains > 0 ? c->min_domains : 0) || !c->ndom)
            c->min = 0;
    }
    q->pts_filter_ready = 1;
    return 0;
}

/* 0 fits, 1 missing label, 2 skew */
static int pts_eval(const kube_terms *t, const kube_terms_req *q, uint32_t node)
{
    for (uint32_t i = 0; i < q->npf; i++) {
        const kube_pts_c *c = &q->pf[i];
        uint32_t v = t->keys[c->key].val[node];
        if (v == KUBE_NOVAL)
            return 1;
        int64_t m = q->pool[c->off + v];
        if (m < 0)
            m = 0;
        if (m + c->self - c->min > c->max_skew)
            return 2;
    }
    return 0;
}

static void pts_filter(void *state, const void *req, const uint32_t *cand, uint32_t n,
                       uint8_t *verdict)
{
    kube_sched *s = state;
    const kube_req *r = req;
    kube_terms_req *q = r->terms;
    if (!q || !q->npf)
        return;
    if (pts_filter_ready(s, q)) {
        /* out of memory: the decision fails (kube_terms_failed), not "fits
         * nowhere" (found by failure injection: a pod left pending made the
         * cross-layer autoscaler buy a node) */
        __atomic_store_n(&q->score_oom, 1, __ATOMIC_RELAXED);
        for (uint32_t i = 0; i < n; i++)
            verdict[i] = BERTH_UNFIT;
        return;
    }
    /* constraint-major, in order: a node keeps its first failure */
    const kube_terms *t = s->terms;
    for (uint32_t j = 0; j < q->npf; j++) {
        const kube_pts_c *c = &q->pf[j];
        const uint32_t *val = t->keys[c->key].val;
        const int64_t *dom = q->pool + c->off;
        int64_t lim = (int64_t)c->max_skew + c->min - c->self;
        for (uint32_t i = 0; i < n; i++) {
            if (verdict[i])
                continue;
            uint32_t v = val[cand[i]];
            if (v == KUBE_NOVAL) {
                verdict[i] = BERTH_UNRESOLVABLE;
                continue;
            }
            int64_t m = dom[v] < 0 ? 0 : dom[v];
            if (m > lim)
                verdict[i] = BERTH_UNFIT;
        }
    }
}

static void pts_reason(void *state, const void *req, uint32_t c, char *buf, size_t size)
{
    kube_sched *s = state;
    const kube_req *r = req;
    kube_terms_req *q = r->terms;
    int e = 0;
    if (q && q->npf && !pts_filter_ready(s, q))
        e = pts_eval(s->terms, q, c);
    snprintf(buf, size, "%s",
             e == 1 ? "node(s) didn't match pod topology spread constraints (missing required label)"
             : e == 2 ? "node(s) didn't match pod topology spread constraints" : "");
}

/* The raw score of node nd (the weights and domain totals set): one
 * function for every path, so the same operations in the same order. */
static inline int64_t pts_raw(const kube_terms *t, const kube_terms_req *q, uint32_t nd)
{
    double sc = 0;
    for (uint32_t j = 0; j < q->nps; j++) {
        const kube_pts_c *c = &q->ps[j];
        const kube_tkey *k = &t->keys[c->key];
        uint32_t v = k->val[nd];
        if (v == KUBE_NOVAL)
            continue;
        int64_t cnt = k->hostname ? c->cnt[nd] : q->pool[c->off + v];
        sc += (double)cnt * c->w + (double)(c->max_skew - 1);
    }
    return (int64_t)round(sc);
}

static void pts_score(void *state, const void *req, const uint32_t *cand, uint32_t n,
                      int64_t *out)
{
    kube_sched *s = state;
    const kube_req *r = req;
    kube_terms_req *q = r->terms;
    kube_terms *t = s->terms;
    if (!q || !q->nps || !n) {
        for (uint32_t i = 0; i < n; i++)
            out[i] = 0;
        return;
    }
    size_t mark = q->pool_used;
    /* ignored candidates: lacking a key when the constraints require all
     * (INT64_MIN); every other entry is written by the score loop below */
    uint32_t nign = 0;
    if (q->require_all)
        for (uint32_t i = 0; i < n; i++) {
            int ign = !node_has_keys(t, q->ps, q->nps, cand[i]);
            out[i] = ign ? INT64_MIN : 0;
            nign += (uint32_t)ign;
        }
    /* without requireAll no candidate is ignored: IGNORED(i) reads out[]
     * only when some may be */
#define IGNORED(i) (nign && out[(i)] == INT64_MIN)
    for (uint32_t j = 0; j < q->nps; j++) {
        kube_pts_c *c = &q->ps[j];
        const kube_tkey *k = &t->keys[c->key];
        if (k->hostname) {
            c->w = log((double)(n - nign) + 2.0);
            continue;
        }
        if (pool_reserve(q, k->nvals, -1, &c->off))
            goto oom;
        int64_t *dom = q->pool + c->off;
        uint32_t size = 0;
        for (uint32_t i = 0; i < n; i++) {
            if (IGNORED(i))
                continue;
            uint32_t v = k->val[cand[i]];
            if (v == KUBE_NOVAL)
                v = k->empty_id;
            if (dom[v] < 0) {
                dom[v] = 0;
                size++;
            }
        }
        c->w = log((double)size + 2.0);
        /* only nodes where the signature counts something add to a
         * domain: its non-zero list when the counts are a signature's
         * (the reference path's fresh counts: every node) */
        const kube_sig *g = s->reference ? NULL : sig_of(t, c->cnt);
        uint32_t nn = g ? g->nnz : t->nnodes;
        for (uint32_t j2 = 0; j2 < nn; j2++) {
            uint32_t nd = g ? g->nz[j2] : j2;
            if (!c->cnt[nd])
                continue;
            if (q->require_all && !node_has_keys(t, q->ps, q->nps, nd))
                continue;
            if (!policies_ok(q, c, nd))
                continue;
            uint32_t v = k->val[nd];
            if (v == KUBE_NOVAL)
                v = k->empty_id;
            if (dom[v] >= 0)
                dom[v] += c->cnt[nd];
        }
    }
    /* With one non-hostname constraint, a candidate whose hostname counts
     * are all 0 scores by its domain alone: that rounded score is computed
     * once per domain value (same operations in the same order, so the
     * same number) instead of once per node. */
    uint32_t dkey = KUBE_NOVAL, ndk = 0;
    for (uint32_t j = 0; j < q->nps; j++)
        if (!t->keys[q->ps[j].key].hostname) {
            dkey = j;
            ndk++;
        }
    int64_t *dcache = NULL;
    size_t dmark = 0;
    uint32_t dvals = 0;
    if (ndk == 1) {
        dvals = t->keys[q->ps[dkey].key].nvals + 1; /* the last slot: node lacks the key */
        if (pool_reserve(q, dvals, INT64_MIN, &dmark))
            goto oom;
        dcache = q->pool + dmark;
    }
    /* the hostname constraints' count arrays and the hostname key's values
     * (at most 4 hostname constraints take the cached path) */
    const int32_t *hcnt[4];
    const uint32_t *hval = NULL, *dval = dcache ? t->keys[q->ps[dkey].key].val : NULL;
    uint32_t nh = 0;
    for (uint32_t j = 0; dcache && j < q->nps; j++)
        if (t->keys[q->ps[j].key].hostname) {
            if (nh == 4) {
                dcache = NULL;
                break;
            }
            hcnt[nh++] = q->ps[j].cnt;
            hval = t->keys[q->ps[j].key].val;
        }
    int64_t mn = INT64_MAX, mx = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (IGNORED(i))
            continue;
        uint32_t slot = 0;
        if (dcache) {
            /* every hostname constraint applies (the node has the label)
             * and counts 0 there */
            uint32_t nd = cand[i];
            int host0;
            if (nh == 1)
                host0 = hval[nd] != KUBE_NOVAL && hcnt[0][nd] == 0;
            else {
                host0 = !hval || hval[nd] != KUBE_NOVAL;
                for (uint32_t h = 0; h < nh && host0; h++)
                    host0 = hcnt[h][nd] == 0;
            }
            if (host0) {
                uint32_t v = dval[nd];
                slot = v == KUBE_NOVAL ? dvals - 1 : v;
                if (dcache[slot] != INT64_MIN) {
                    out[i] = dcache[slot];
                    goto have;
                }
            } else
                slot = UINT32_MAX;
        }
        out[i] = pts_raw(t, q, cand[i]);
        if (dcache && slot != UINT32_MAX)
            dcache[slot] = out[i];
    have:
        if (out[i] < mn)
            mn = out[i];
        if (out[i] > mx)
            mx = out[i];
    }
    /* NormalizeScore; raw scores repeat (a few per domain), so each
     * division is memoised in a small direct-mapped table */
    int64_t memo_in[8], memo_out[8];
    for (uint32_t h = 0; h < 8; h++)
        memo_in[h] = INT64_MIN;
    for (uint32_t i = 0; i < n; i++) {
        int64_t x = out[i];
        if (IGNORED(i))
            out[i] = 0;
        else if (mx == 0)
            out[i] = 100;
        else {
            uint32_t h = (uint32_t)((uint64_t)x & 7u);
            if (memo_in[h] != x) {
                memo_in[h] = x;
                memo_out[h] = 100 * (mx + mn - x) / mx;
            }
            out[i] = memo_out[h];
        }
    }
    q->pool_used = mark;
    return;
oom:
    q->pool_used = mark;
    __atomic_store_n(&q->score_oom, 1, __ATOMIC_RELAXED);
    for (uint32_t i = 0; i < n; i++)
        out[i] = 0;
#undef IGNORED
}

/* pts_raw of a candidate whose hostname count is 0 (label present) and
 * whose value of the other key is v (KUBE_NOVAL: no label), for the
 * two-constraint shape of kube_pts_pick_hz: the same terms in the same
 * order, so the same number */
static int64_t pts_raw_host0(const kube_terms *t, const kube_terms_req *q, uint32_t v)
{
    double sc = 0;
    for (uint32_t j = 0; j < q->nps; j++) {
        const kube_pts_c *c = &q->ps[j];
        int64_t cnt = 0;
        if (!t->keys[c->key].hostname) {
            if (v == KUBE_NOVAL)
                continue;
            cnt = q->pool[c->off + v];
        }
        sc += (double)cnt * c->w + (double)(c->max_skew - 1);
    }
    return (int64_t)round(sc);
}

/* PodTopologySpread as the only dynamic score, fused with the argmax (see
 * terms.h). The candidates are the nodes where part is not INT32_MIN; the
 * numbers are pts_score's: weights from the candidate count and the
 * distinct domains among candidates, domain totals over the signature's
 * non-zero nodes, raw scores, min/max over the candidates, NormalizeScore.
 * A candidate whose hostname count is 0 scores by its domain value alone,
 * so its weighted score is computed once per value present; the others
 * (the hostname signature's non-zero nodes, at most its pods' count) one
 * by one. Two passes over the nodes: the candidates per value, then the
 * totals with the argmax. */
int kube_pts_pick_hz(kube_sched *s, const kube_req *r, const int32_t *part, uint32_t N,
                     int64_t weight, int tiebreak, berth_rng *rng, uint32_t *ties,
                     kube_pts_pick *out)
{
    kube_terms_req *q = r->terms;
    kube_terms *t = s->terms;
    if (!q || q->nps != 2 || q->require_all || s->reference || !t || t->nnodes != N)
        return 0;
    kube_pts_c *ch = &q->ps[0], *cz = &q->ps[1];
    if (!t->keys[ch->key].hostname) {
        ch = &q->ps[1];
        cz = &q->ps[0];
    }
    if (!t->keys[ch->key].hostname || t->keys[cz->key].hostname)
        return 0;
    const kube_tkey *kh = &t->keys[ch->key], *kz = &t->keys[cz->key];
    const uint32_t *hval = kh->val, *zval = kz->val;
    const int32_t *hcnt = ch->cnt;
    size_t mark = q->pool_used, cmark, wmark;
    uint32_t dvals = kz->nvals + 1, nov = dvals - 1; /* the last slot: node lacks the key */
    if (pool_reserve(q, kz->nvals, -1, &cz->off) || pool_reserve(q, dvals, 0, &cmark) ||
        pool_reserve(q, dvals, 0, &wmark)) {
        q->pool_used = mark;
        return BERTH_ENOMEM;
    }
    int64_t *dom = q->pool + cz->off, *fcnt = q->pool + cmark, *wsc = q->pool + wmark;
    /* pass 1: candidates per value; whether a candidate lacks the hostname
     * label (then the generic path) */
    uint32_t nohost = 0;
    for (uint32_t nd = 0; nd < N; nd++) {
        uint32_t f = part[nd] != INT32_MIN, v = zval[nd];
        fcnt[v == KUBE_NOVAL ? nov : v] += f;
        nohost |= f & (hval[nd] == KUBE_NOVAL);
    }
    uint32_t n = 0, size = 0, empty = kz->empty_id;
    for (uint32_t v = 0; v < dvals; v++)
        n += (uint32_t)fcnt[v];
    if (nohost || !n) {
        q->pool_used = mark;
        return nohost ? 0 : 2;
    }
    /* the domains: every value a candidate has ("" for those lacking it) */
    for (uint32_t v = 0; v < kz->nvals; v++)
        if (fcnt[v] || (v == empty && fcnt[nov])) {
            dom[v] = 0;
            size++;
        }
    ch->w = log((double)n + 2.0);
    cz->w = log((double)size + 2.0);
    const kube_sig *g = sig_of(t, cz->cnt);
    for (uint32_t j = 0; j < g->nnz; j++) {
        uint32_t nd = g->nz[j];
        if (!cz->cnt[nd] || !policies_ok(q, cz, nd))
            continue;
        uint32_t v = zval[nd];
        if (v == KUBE_NOVAL)
            v = empty;
        if (dom[v] >= 0)
            dom[v] += cz->cnt[nd];
    }
    /* min/max over the candidates: the hostname signature's non-zero
     * candidates one by one (out of their value's count), then each value
     * some hostname-0 candidate has */
    int64_t mn = INT64_MAX, mx = 0;
    const kube_sig *gh = sig_of(t, hcnt);
    for (uint32_t j = 0; j < gh->nnz; j++) {
        uint32_t nd = gh->nz[j];
        if (!hcnt[nd] || part[nd] == INT32_MIN)
            continue;
        uint32_t v = zval[nd];
        fcnt[v == KUBE_NOVAL ? nov : v]--;
        int64_t x = pts_raw(t, q, nd);
        mn = x < mn ? x : mn;
        mx = x > mx ? x : mx;
    }
    for (uint32_t v = 0; v < dvals; v++) {
        if (!fcnt[v])
            continue;
        int64_t x = pts_raw_host0(t, q, v == nov ? KUBE_NOVAL : v);
        wsc[v] = x;
        mn = x < mn ? x : mn;
        mx = x > mx ? x : mx;
    }
    /* NormalizeScore, weighted */
    for (uint32_t v = 0; v < dvals; v++)
        if (fcnt[v])
            wsc[v] = weight * (mx == 0 ? 100 : 100 * (mx + mn - wsc[v]) / mx);
    /* pass 2: the totals, the best and its ties in node order */
    int64_t best = INT64_MIN;
    uint32_t nties = 0;
    for (uint32_t nd = 0; nd < N; nd++) {
        int32_t p = part[nd];
        if (p == INT32_MIN)
            continue;
        uint32_t v = zval[nd];
        int64_t sc = wsc[v == KUBE_NOVAL ? nov : v];
        if (hcnt[nd]) {
            int64_t x = pts_raw(t, q, nd);
            sc = weight * (mx == 0 ? 100 : 100 * (mx + mn - x) / mx);
        }
        int64_t tot = p + sc;
        if (tot > best) {
            best = tot;
            nties = 0;
        }
        if (tot == best)
            ties[nties++] = nd;
    }
    uint32_t chosen = 0;
    if (tiebreak == BERTH_TIE_RANDOM && nties > 1)
        chosen = (uint32_t)berth_rng_below(rng, nties);
    else if (tiebreak == BERTH_TIE_LAST)
        chosen = nties - 1;
    out->node = ties[chosen];
    out->nfeasible = n;
    out->total = best;
    q->pool_used = mark;
    return 1;
}

/* ---- InterPodAffinity ---- */

static int ipa_filter_ready(kube_sched *s, kube_terms_req *q)
{
    kube_terms *t = s->terms;
    if (q->ipa_filter_ready)
        return 0;
    q->naslot = q->nxslot = q->neslot = 0;
    for (uint32_t i = 0; i < q->naff; i++)
        if (slot_add(s, q, &q->aslot, &q->naslot, &q->aff[i]))
            return BERTH_ENOMEM;
    q->aff_any = 0;
    if (q->naff)
        for (uint32_t n = 0; n < t->nnodes && !q->aff_any; n++) {
            if (!q->aff[0].cnt[n])
                continue;
            for (uint32_t i = 0; i < q->naff; i++)
                if (t->keys[q->aff[i].key].val[n] != KUBE_NOVAL)
                    q->aff_any = 1;
        }
    for (uint32_t i = 0; i < q->nanti; i++) {
        kube_term_ref tr = q->anti[i];
        if (tr.mult < 0) { /* existing pods' required anti-affinity */
            tr.mult = 1;
            if (slot_add(s, q, &q->eslot, &q->neslot, &tr))
                return BERTH_ENOMEM;
        } else if (slot_add(s, q, &q->xslot, &q->nxslot, &tr)) {
            return BERTH_ENOMEM;
        }
    }
    q->ipa_filter_ready = 1;
    return 0;
}

/* 1 when the required affinity terms reject node */
static int ipa_eval_affinity(const kube_terms *t, const kube_terms_req *q, uint32_t node)
{
    int exist = 1;
    for (uint32_t i = 0; i < q->naff; i++) {
        uint32_t v = t->keys[q->aff[i].key].val[node];
        if (v == KUBE_NOVAL)
            return 1;
        uint32_t j = 0;
        while (q->aslot[j].key != q->aff[i].key)
            j++;
        if (q->zpool[q->aslot[j].off + v] <= 0)
            exist = 0;
    }
    return !exist && !(!q->aff_any && q->aff_self);
}

/* 0 fits, 1 affinity, 2 anti-affinity, 3 existing pods' anti-affinity */
static int ipa_eval(const kube_terms *t, const kube_terms_req *q, uint32_t node)
{
    int has;
    if (q->naff && ipa_eval_affinity(t, q, node))
        return 1;
    for (uint32_t i = 0; i < q->nxslot; i++)
        if (slot_at(t, q, &q->xslot[i], node, &has) > 0)
            return 2;
    for (uint32_t i = 0; i < q->neslot; i++)
        if (slot_at(t, q, &q->eslot[i], node, &has) > 0)
            return 3;
    return 0;
}

static void ipa_filter(void *state, const void *req, const uint32_t *cand, uint32_t n,
                       uint8_t *verdict)
{
    kube_sched *s = state;
    const kube_req *r = req;
    kube_terms_req *q = r->terms;
    if (!q || (!q->naff && !q->nanti))
        return;
    if (ipa_filter_ready(s, q)) {
        __atomic_store_n(&q->score_oom, 1, __ATOMIC_RELAXED); /* as in pts_filter */
        for (uint32_t i = 0; i < n; i++)
            verdict[i] = BERTH_UNFIT;
        return;
    }
    const kube_terms *t = s->terms;
    if (q->naff)
        for (uint32_t i = 0; i < n; i++)
            if (ipa_eval_affinity(t, q, cand[i]))
                verdict[i] = BERTH_UNRESOLVABLE;
    /* then anti-affinity, then existing pods' anti-affinity, slot-major */
    for (int pass = 0; pass < 2; pass++) {
        const kube_slot *sl = pass ? q->eslot : q->xslot;
        uint32_t ns = pass ? q->neslot : q->nxslot;
        for (uint32_t j = 0; j < ns; j++) {
            const uint32_t *val = t->keys[sl[j].key].val;
            const int64_t *dom = q->zpool + sl[j].off;
            for (uint32_t i = 0; i < n; i++) {
                if (verdict[i])
                    continue;
                uint32_t v = val[cand[i]];
                if (v != KUBE_NOVAL && dom[v] > 0)
                    verdict[i] = BERTH_UNFIT;
            }
        }
    }
}

static void ipa_reason(void *state, const void *req, uint32_t c, char *buf, size_t size)
{
    kube_sched *s = state;
    const kube_req *r = req;
    kube_terms_req *q = r->terms;
    int e = 0;
    if (q && (q->naff || q->nanti) && !ipa_filter_ready(s, q))
        e = ipa_eval(s->terms, q, c);
    snprintf(buf, size, "%s",
             e == 1   ? "node(s) didn't match pod affinity rules"
             : e == 2 ? "node(s) didn't match pod anti-affinity rules"
             : e == 3 ? "node(s) didn't satisfy existing pods anti-affinity rules"
                      : "");
}

static void ipa_score(void *state, const void *req, const uint32_t *cand, uint32_t n,
                      int64_t *out)
{
    kube_sched *s = state;
    const kube_req *r = req;
    kube_terms_req *q = r->terms;
    kube_terms *t = s->terms;
    for (uint32_t i = 0; i < n; i++)
        out[i] = 0;
    if (!q || !q->nisc || !n)
        return;
    size_t mark = q->pool_used;
    q->nsslot = 0;
    for (uint32_t i = 0; i < q->nisc; i++)
        if (slot_add(s, q, &q->sslot, &q->nsslot, &q->isc[i])) {
            q->pool_used = mark;
            __atomic_store_n(&q->score_oom, 1, __ATOMIC_RELAXED);
            return;
        }
    int64_t mn = INT64_MAX, mx = INT64_MIN;
    for (uint32_t i = 0; i < n; i++) {
        int64_t sc = 0;
        int has;
        for (uint32_t j = 0; j < q->nsslot; j++)
            sc += slot_at(t, q, &q->sslot[j], cand[i], &has);
        out[i] = sc;
        if (sc < mn)
            mn = sc;
        if (sc > mx)
            mx = sc;
    }
    int64_t diff = mx - mn;
    for (uint32_t i = 0; i < n; i++) {
        double f = 0;
        if (diff > 0)
            f = 100.0 * ((double)(out[i] - mn) / (double)diff);
        out[i] = (int64_t)f;
    }
    q->pool_used = mark;
}

/* The fast path's per-domain index (kube/fastpath.c pick_indexed). */
uint32_t kube_terms_nz(const kube_sched *s, const kube_term_ref *tr, const uint32_t **nz,
                       int *exact)
{
    const kube_sig *g = &s->terms->sigs[tr->sig];
    *nz = g->nz;
    *exact = !g->innz && !g->hadzero; /* no count went back to 0 */
    return g->nnz;
}

int kube_terms_pts_prepare(kube_sched *s, const kube_req *r)
{
    kube_terms_req *q = r->terms;
    if (!q || !s->terms || !q->npf)
        return 0;
    return pts_filter_ready(s, q) ? BERTH_ENOMEM : 0;
}

int kube_terms_failed(const kube_req *r)
{
    return r->terms && __atomic_load_n(&r->terms->score_oom, __ATOMIC_RELAXED);
}

/* Before r's batch is filtered in parallel chunks (berth_profile.prepare):
 * the domain totals both filters build on their first call, built here on
 * the calling thread so that the chunks only read them. */
int kube_terms_par_prepare(kube_sched *s, const kube_req *r)
{
    kube_terms_req *q = r->terms;
    if (!q || !s->terms)
        return 0;
    if (q->npf && pts_filter_ready(s, q))
        return BERTH_ENOMEM;
    if ((q->naff || q->nanti) && ipa_filter_ready(s, q))
        return BERTH_ENOMEM;
    return 0;
}

const berth_filter_plugin kube_pts_filter = {BERTH_PLUGIN_VERSION, "PodTopologySpread",
                                             pts_filter, pts_reason};
const berth_score_plugin kube_pts_score = {BERTH_PLUGIN_VERSION, "PodTopologySpread", pts_score,
                                           NULL};
const berth_filter_plugin kube_ipa_filter = {BERTH_PLUGIN_VERSION, "InterPodAffinity",
                                             ipa_filter, ipa_reason};
const berth_score_plugin kube_ipa_score = {BERTH_PLUGIN_VERSION, "InterPodAffinity", ipa_score,
                                           NULL};
