/* io/walk.c - the one kind-dispatch walk every loader uses (kube, fleet,
 * nexus, disrupt, autoscale and its events): a document's kind, Lists and
 * typed lists (berth_dec_list), the apiVersion check ("kind K needs
 * apiVersion ..."), the strict top-level field check, the handler from the
 * loader's table, and for other kinds the loader's fallback or the skip
 * (berth_dec_skip) with the "<input> input has ..." hint built from the
 * table. The tables are the loaders' (src/kube/load.c, src/fleet/load.c,
 * src/nexus/load.c, src/disrupt/load.c, src/autoscale/load.c and events.c). */
#include "berth/doc.h"

#include <stdio.h>
#include <string.h>

int berth_dec_api_in(berth_dec *d, const berth_node *doc, const char *kind,
                     const char *const *api, const char *want_text)
{
    const char *got = NULL;
    int rc = berth_dec_str(d, doc, "apiVersion", 1, &got);
    if (rc)
        return rc;
    for (size_t i = 0; api[i]; i++)
        if (!strcmp(got, api[i]))
            return 0;
    char want[256];
    size_t off = 0;
    want[0] = 0;
    if (want_text)
        snprintf(want, sizeof want, "%s", want_text);
    for (size_t i = 0; !want_text && api[i] && off < sizeof want; i++) {
        int w = snprintf(want + off, sizeof want - off, "%s%s", i ? " or " : "", api[i]);
        if (w > 0)
            off += (size_t)w;
    }
    rc = berth_dec_fail_field(d, doc, "apiVersion",
                              "kind %s needs apiVersion %s, got '%s'", kind, want, got);
    return rc;
}

void berth_walker_hint(const berth_walker *w, char *buf, size_t len)
{
    if (!len)
        return;
    size_t off = 0;
    int n = snprintf(buf, len, "%s input has ", w->input ? w->input : "this");
    if (n > 0)
        off = (size_t)n;
    for (size_t i = 0; i < w->nkinds && off < len; i++) {
        if (!w->kinds[i].load)
            continue;
        n = snprintf(buf + off, len - off, "%s, ", w->kinds[i].kind);
        if (n > 0)
            off += (size_t)n;
    }
    if (off < len)
        snprintf(buf + off, len - off, "List");
}

static int skip(berth_dec *d, const berth_node *doc, const char *kind, const char *note,
                const berth_walker *w)
{
    char hint[512] = "";
    if (d->strict || !d->skips) /* only the error shows the hint */
        berth_walker_hint(w, hint, sizeof hint);
    return berth_dec_skip(d, doc, kind, note, hint);
}

typedef struct walk_ctx {
    const berth_walker *w;
    void *ctx;
} walk_ctx;

static int walk_item(void *vc, berth_dec *d, const berth_node *item, int depth)
{
    const walk_ctx *c = vc;
    return berth_dec_walk(d, item, depth, c->w, c->ctx);
}

static const berth_kind_handler *find(const berth_walker *w, const char *kind)
{
    for (size_t i = 0; i < w->nkinds; i++)
        if (!strcmp(w->kinds[i].kind, kind))
            return &w->kinds[i];
    return NULL;
}

int berth_dec_walk(berth_dec *d, const berth_node *doc, int depth, const berth_walker *w,
                   void *ctx)
{
    const char *kind = NULL;
    int rc = berth_dec_kind(d, doc, &kind);
    if (rc)
        return rc;
    int list = (w->flags & BERTH_WALK_PLAIN_LISTS) ? !strcmp(kind, "List")
                                                    : berth_kind_is_list(kind);
    const berth_kind_handler *h = list ? NULL : find(w, kind);
    if (w->check_api && (rc = w->check_api(d, doc, kind, h)))
        return rc;
    if (list) {
        if (w->list_fields && d->strict && (rc = berth_dec_known_fields(d, doc, w->list_fields)))
            return rc;
        walk_ctx c = {w, ctx};
        return berth_dec_list(d, doc, depth, walk_item, &c);
    }
    if (!h)
        return w->other ? w->other(ctx, d, doc, kind) : skip(d, doc, kind, NULL, w);
    if (!h->load)
        return skip(d, doc, kind, h->note, w);
    if (!w->check_api && h->api && (rc = berth_dec_api_in(d, doc, kind, h->api, h->api_text)))
        return rc;
    if (h->fields && (d->strict || (h->flags & BERTH_KIND_STRICT)) &&
        (rc = berth_dec_known_fields(d, doc, h->fields)))
        return rc;
    return h->load(ctx, d, doc, h);
}

int berth_dec_walk_source(berth_dec *d, const berth_source *src, const berth_walker *w,
                          void *ctx)
{
    int rc = 0;
    for (size_t i = 0; i < src->ndocs && !rc; i++) {
        d->plen = 0;
        d->path[0] = 0;
        rc = berth_dec_walk(d, src->docs[i], 0, w, ctx);
    }
    return rc;
}
