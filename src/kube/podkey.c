/* kube/podkey.c - the byte keys that group pods into classes (see
 * kube/podkey.h): one writer shared by the fast path's class columns, the
 * fit index and the term counters' pod classes (kube/terms.c), so all read
 * a pod's node constraints the same way. */
#include "kube/podkey.h"

#include <stdlib.h>
#include <string.h>

void kube_podkey_grow_put(kube_podkey *b, const void *p, size_t n)
{
    if (b->oom)
        return;
    if (b->len + n + 1 > *b->cap) {
        size_t nc = *b->cap ? *b->cap * 2 : 1024;
        while (nc < b->len + n + 1)
            nc *= 2;
        char *q = realloc(*b->buf, nc);
        if (!q) {
            b->oom = 1;
            return;
        }
        *b->buf = q;
        *b->cap = nc;
    }
    memcpy(*b->buf + b->len, p, n);
    b->len += n;
}

void kube_podkey_str(kube_podkey *b, const char *s)
{
    if (!s)
        s = "\x01";
    kube_podkey_put(b, s, strlen(s) + 1);
}

void kube_podkey_requests(kube_podkey *b, const berth_kpod *p, uint32_t nres)
{
    if (nres > BERTH_KUBE_MAX_RES)
        nres = BERTH_KUBE_MAX_RES;
    kube_podkey_put(b, p->req, nres * sizeof *p->req);
    kube_podkey_put(b, p->req_nz, sizeof p->req_nz);
}

void kube_podkey_reqs(kube_podkey *b, const berth_requirement *r, uint32_t n)
{
    kube_podkey_put(b, &n, sizeof n);
    for (uint32_t i = 0; i < n; i++) {
        kube_podkey_str(b, r[i].key);
        kube_podkey_put(b, &r[i].op, sizeof r[i].op);
        kube_podkey_put(b, &r[i].nvalues, sizeof r[i].nvalues);
        for (uint32_t j = 0; j < r[i].nvalues; j++)
            kube_podkey_str(b, r[i].values[j]);
    }
}

static void put_term(kube_podkey *b, const berth_kterm *t)
{
    kube_podkey_reqs(b, t->exprs, t->nexprs);
    kube_podkey_reqs(b, t->fields, t->nfields);
    kube_podkey_put(b, &t->invalid, sizeof t->invalid);
}

void kube_podkey_required_rules(kube_podkey *b, const berth_kpod *p)
{
    kube_podkey_put(b, &p->ntols, sizeof p->ntols);
    for (uint32_t i = 0; i < p->ntols; i++) {
        kube_podkey_str(b, p->tols[i].key);
        kube_podkey_str(b, p->tols[i].value);
        kube_podkey_put(b, &p->tols[i].op, sizeof p->tols[i].op);
        kube_podkey_put(b, &p->tols[i].effect, sizeof p->tols[i].effect);
    }
    kube_podkey_required_affinity(b, p);
}

void kube_podkey_required_affinity(kube_podkey *b, const berth_kpod *p)
{
    kube_podkey_put(b, &p->node_selector.n, sizeof p->node_selector.n);
    for (uint32_t i = 0; i < p->node_selector.n; i++) {
        kube_podkey_str(b, p->node_selector.items[i].key);
        kube_podkey_str(b, p->node_selector.items[i].value);
    }
    kube_podkey_put(b, &p->has_req_affinity, sizeof p->has_req_affinity);
    kube_podkey_put(b, &p->nreq_terms, sizeof p->nreq_terms);
    for (uint32_t i = 0; i < p->nreq_terms; i++)
        put_term(b, &p->req_terms[i]);
}

void kube_podkey_node_constraints(kube_podkey *b, const berth_kpod *p, const char *node_name)
{
    kube_podkey_str(b, node_name);
    kube_podkey_required_rules(b, p);
    kube_podkey_put(b, &p->npref_terms, sizeof p->npref_terms);
    for (uint32_t i = 0; i < p->npref_terms; i++) {
        kube_podkey_put(b, &p->pref_terms[i].weight, sizeof p->pref_terms[i].weight);
        put_term(b, &p->pref_terms[i].term);
    }
}
