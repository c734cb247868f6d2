/* io/walk.c - the one kind-dispatch walk every loader uses (kube, fleet,
 * nexus, disrupt, autoscale and its events): a document's kind, Lists and
 * typed lists (berth_dec_list), the apiVersion check ("kind K needs
 * apiVersion ..."), the strict top-level field check, the handler from the
 * loader's table, and for other kinds the loader's fallback or the skip
 * (berth_dec_skip) with the "<input> input has ..." hint built from the
 * table. The tables are the loaders' (src/kube/load.c, src/fleet/load.c,
 * src/nexus/load.c, src/disrupt/load.c, src/autoscale/load.c and events.c).
 * Also the streamed walk (berth_dec_walk_file / _buffer): each document and
 * List item walked as the parser hands it over (docs/disrupt.md "Streaming
 * the input"). */
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

static int is_list(const berth_walker *w, const char *kind)
{
    return (w->flags & BERTH_WALK_PLAIN_LISTS) ? !strcmp(kind, "List") : berth_kind_is_list(kind);
}

/* berth_dec_walk of doc, whose first `first` List items were walked
 * already (streamed). */
static int walk_from(berth_dec *d, const berth_node *doc, int depth, const berth_walker *w,
                     void *ctx, size_t first)
{
    const char *kind = NULL;
    int rc = berth_dec_kind(d, doc, &kind);
    if (rc)
        return rc;
    int list = is_list(w, kind);
    if (first && !list)
        return berth_dec_fail_field(d, doc, "kind",
                                    "kind %s is no List, but its items were read as a List's "
                                    "objects (they came before kind, each with its own kind)",
                                    kind);
    const berth_kind_handler *h = list ? NULL : find(w, kind);
    if (w->check_api && (rc = w->check_api(d, doc, kind, h)))
        return rc;
    if (list) {
        if (w->list_fields && d->strict && (rc = berth_dec_known_fields(d, doc, w->list_fields)))
            return rc;
        walk_ctx c = {w, ctx};
        return berth_dec_list_from(d, doc, depth, first, walk_item, &c);
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

int berth_dec_walk(berth_dec *d, const berth_node *doc, int depth, const berth_walker *w,
                   void *ctx)
{
    return walk_from(d, doc, depth, w, ctx, 0);
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

/* ---- streaming (berth_dec_walk_file) ---- */

typedef struct stream_walk {
    berth_dec *d;
    const berth_walker *w;
    void *ctx;
    berth_arena scratch;      /* typed items' copies, emptied after each item */
    const char *list_kind;    /* the List whose items are read, and */
    const char *item_kind;    /* its items' kind (typed lists), in d->arena */
    int keep;                 /* this List keeps its remaining items */
} stream_walk;

static int has_scalar(const berth_node *m, const char *key)
{
    const berth_node *v = berth_node_get(m, key);
    return v && v->type == BERTH_NODE_SCALAR;
}

static int sw_item(void *vc, const char *list_kind, const char *list_api, size_t index,
                   const berth_node *item)
{
    stream_walk *s = vc;
    berth_dec *d = s->d;
    if (index == 0) {
        s->keep = 0;
        s->list_kind = list_kind;
        s->item_kind = NULL;
        if (list_kind && is_list(s->w, list_kind) && strcmp(list_kind, "List")) {
            s->item_kind = berth_arena_strndup(d->arena, list_kind, strlen(list_kind) - 4);
            if (!s->item_kind)
                return berth_error_set(d->err, BERTH_ENOMEM, "%s: out of memory", d->file);
        }
    }
    /* walked now when its List is known to be one, or (kind after items)
     * when the item names its own kind and apiVersion, as kubectl writes
     * a List; anything else waits for its document */
    if (s->keep || list_kind != s->list_kind ||
        (list_kind ? !is_list(s->w, list_kind)
                   : (s->w->flags & BERTH_WALK_PLAIN_LISTS) || item->type != BERTH_NODE_MAP ||
                         !has_scalar(item, "kind") || !has_scalar(item, "apiVersion"))) {
        s->keep = 1;
        return 0;
    }
    d->plen = 0;
    d->path[0] = '\0';
    berth_dec_push(d, "items");
    berth_dec_push_index(d, index);
    const berth_node *it = item;
    int rc = 0;
    if (s->item_kind)
        rc = berth_dec_typed_item(d, &s->scratch, item, s->item_kind, list_api, &it);
    if (!rc)
        rc = berth_dec_walk(d, it, 1, s->w, s->ctx);
    berth_arena_reset(&s->scratch);
    d->plen = 0;
    d->path[0] = '\0';
    return rc ? rc : 1;
}

static int sw_doc(void *vc, const berth_node *doc, size_t streamed)
{
    stream_walk *s = vc;
    s->keep = 0;
    s->list_kind = NULL;
    s->d->plen = 0;
    s->d->path[0] = '\0';
    return walk_from(s->d, doc, 0, s->w, s->ctx, streamed);
}

/* path set: the file; else buf[0, len) */
static int walk_stream(berth_dec *d, const char *path, const char *buf, size_t len,
                       const berth_walker *w, void *ctx, size_t *ndocs)
{
    stream_walk s = {d, w, ctx, {0}, NULL, NULL, 0};
    berth_arena_init(&s.scratch, 0);
    berth_doc_stream st = {sw_item, sw_doc, &s};
    int rc = path ? berth_doc_stream_file(d->arena, path, &st, ndocs, d->err)
                  : berth_doc_stream_buffer(d->arena, d->file, buf, len, &st, ndocs, d->err);
    berth_arena_free(&s.scratch);
    d->plen = 0;
    d->path[0] = '\0';
    return rc;
}

int berth_dec_walk_file(berth_dec *d, const char *path, const berth_walker *w, void *ctx,
                        size_t *ndocs)
{
    return walk_stream(d, path, NULL, 0, w, ctx, ndocs);
}

int berth_dec_walk_buffer(berth_dec *d, const char *buf, size_t len, const berth_walker *w,
                          void *ctx, size_t *ndocs)
{
    return walk_stream(d, NULL, buf, len, w, ctx, ndocs);
}
