/* io/yaml.c - reads YAML (and JSON, as YAML flow style) into located
 * berth_node trees with libyaml's event parser. Owns: the tree builder,
 * anchors/aliases, depth and size limits, syntax error messages, and JSON
 * streams (values back to back, `kubectl cluster-info dump` log sections
 * skipped), each value parsed at its own line and column of the file.
 * The tree is packed: nodes and scalar texts in chunks of the arena, each
 * mapping key's text once per parse (docs/disrupt.md "A smaller document
 * tree"); a regular file is mapped, not copied. Streamed (berth_doc_stream_*),
 * each top-level document and List item is handed over once complete and
 * its nodes released (docs/disrupt.md "Streaming the input"). Duplicate
 * keys are found in O(n log n). */
#include "berth/doc.h"
#include "berth/grow.h"
#include "berth/nameidx.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <yaml.h>

typedef struct frame {
    berth_node *node;
    berth_node **kids;   /* seq items, or alternating key/value for maps */
    size_t n;
    uint32_t cap;
} frame;

typedef struct anchor {
    char *name;
    berth_node *node;
} anchor;

typedef struct builder {
    berth_arena *a;
    const char *name;
    berth_error *e;
    frame stack[BERTH_DOC_MAX_DEPTH + 1];
    int depth;
    anchor *anchors;
    size_t nanchors;
    uint32_t capanchors;
    berth_node **docs;
    size_t ndocs;
    uint32_t capdocs;
    /* the mapping keys met so far, each text once (intern_key): a kubectl
     * dump repeats a few hundred keys millions of times, and each key node
     * points at one copy (8 % of the tree's bytes at 10k nodes) */
    berth_nameidx keys;  /* key text -> its index in keytext */
    const char **keytext;
    uint32_t nkeytext, capkeytext;
    /* nodes and scalar texts are carved from chunks of the arena at their
     * own size and alignment (the arena rounds each allocation up to 16
     * bytes: a 40-byte node took 48 before berth_node became 32, a 6-byte
     * text 16) */
    berth_node *nodes;
    size_t nodes_left;
    char *text;
    size_t text_left;
    /* where the text given to libyaml starts in the file (JSON streams):
     * added to its marks (the column only on the text's first line) */
    size_t line_off, col_off;
    /* streaming (berth_doc_stream_file): each top-level document is built
     * in doc_nodes and each item of its List in item_nodes, handed to the
     * stream and released; texts stay in a. na is where nodes, entries and
     * items go: a when the whole tree is kept. */
    const berth_doc_stream *stream;
    berth_arena *na;
    berth_arena doc_nodes, item_nodes;
    berth_node *doc_chunk;       /* doc_nodes' node chunk while an item is built */
    size_t doc_chunk_left;
    int in_item;                 /* building a List item (in item_nodes) */
    int keep_items;              /* this List keeps its items (the stream said so) */
    size_t item_index;           /* position of the next item */
    const char *list_kind, *list_api; /* the mapping's kind and apiVersion when its
                                       * items began (NULL: not before them) */
    size_t streamed;             /* items of this document the stream took */
    size_t doc_anchors, item_anchors; /* nanchors when the document / item began */
    size_t ndocs_streamed;       /* documents handed to the stream */
} builder;

static size_t mark_line(const builder *b, const yaml_mark_t *m)
{
    return m->line + b->line_off + 1;
}

static size_t mark_col(const builder *b, const yaml_mark_t *m)
{
    return m->column + (m->line == 0 ? b->col_off : 0) + 1;
}

static int push_kid(builder *b, frame *f, berth_node *k)
{
    if (f->n == f->cap &&
        berth_grow((void **)&f->kids, &f->cap, (uint32_t)f->n + 1, sizeof *f->kids, 0))
        return berth_error_set(b->e, BERTH_ENOMEM, "%s: out of memory", b->name);
    f->kids[f->n++] = k;
    return 0;
}

static int add_anchor(builder *b, const char *name, berth_node *n)
{
    if (!name)
        return 0;
    if (b->nanchors == b->capanchors &&
        berth_grow((void **)&b->anchors, &b->capanchors, (uint32_t)b->nanchors + 1,
                   sizeof *b->anchors, 0))
        return berth_error_set(b->e, BERTH_ENOMEM, "%s: out of memory", b->name);
    b->anchors[b->nanchors].name = strdup(name);
    if (!b->anchors[b->nanchors].name)
        return berth_error_set(b->e, BERTH_ENOMEM, "%s: out of memory", b->name);
    b->anchors[b->nanchors++].node = n;
    return 0;
}

static berth_node *find_anchor(builder *b, const char *name)
{
    for (size_t i = b->nanchors; i-- > 0;)
        if (strcmp(b->anchors[i].name, name) == 0)
            return b->anchors[i].node;
    return NULL;
}

/* Attaches a finished node to the container on top of the stack, or makes
 * it a document. */
static int stream_doc(builder *b, berth_node *n);

static int attach(builder *b, berth_node *n)
{
    if (b->depth == 0 && b->stream)
        return stream_doc(b, n);
    if (b->depth == 0) {
        if (b->ndocs == b->capdocs &&
            berth_grow((void **)&b->docs, &b->capdocs, (uint32_t)b->ndocs + 1, sizeof *b->docs, 0))
            return berth_error_set(b->e, BERTH_ENOMEM, "%s: out of memory", b->name);
        b->docs[b->ndocs++] = n;
        return 0;
    }
    frame *f = &b->stack[b->depth - 1];
    /* checked as each key arrives, not when its mapping closes: the
     * streamed read looks up the top mapping's keys (top_scalar) and hands
     * over its items before it closes */
    if (f->node->type == BERTH_NODE_MAP && f->n % 2 == 0 && n->type != BERTH_NODE_SCALAR)
        return berth_error_set(b->e, BERTH_EINVAL, "%s:%d:%d: mapping keys must be plain scalars",
                               b->name, n->line, n->col);
    return push_kid(b, f, n);
}

#define NODE_CHUNK 256u         /* nodes per arena allocation */
#define TEXT_CHUNK (16u * 1024u) /* bytes of scalar text per arena allocation */
#define TEXT_OWN 512u            /* a longer text gets an allocation of its own */

/* A copy of s[0, len) and a NUL, packed with the other texts. */
static char *copy_text(builder *b, const char *s, size_t len)
{
    if (len >= TEXT_OWN)
        return berth_arena_strndup(b->a, s, len);
    if (b->text_left < len + 1) {
        if (!(b->text = berth_arena_alloc(b->a, TEXT_CHUNK)))
            return NULL;
        b->text_left = TEXT_CHUNK;
    }
    char *c = b->text;
    memcpy(c, s, len);
    c[len] = '\0';
    b->text += len + 1;
    b->text_left -= len + 1;
    return c;
}

#define KEY_MAX 256u /* longer keys are not looked up: each its own copy */

/* The arena copy of a mapping key's text s[0, len): the one made for the
 * first equal key of this parse, else a new one. A key holding a NUL (the
 * index compares C strings) or of KEY_MAX bytes or more gets its own.
 * NULL: out of memory. */
static const char *intern_key(builder *b, const char *s, size_t len)
{
    char name[KEY_MAX];
    if (len >= KEY_MAX || memchr(s, '\0', len))
        return copy_text(b, s, len);
    memcpy(name, s, len);
    name[len] = '\0';
    uint32_t h = berth_nameidx_hash_in(&b->keys, name); /* once, for the lookup and the add */
    uint32_t id = berth_nameidx_find_hash(&b->keys, name, h);
    if (id != BERTH_NAMEIDX_NONE)
        return b->keytext[id];
    char *c = copy_text(b, s, len);
    if (!c ||
        berth_grow((void **)&b->keytext, &b->capkeytext, b->nkeytext + 1, sizeof *b->keytext, 0) ||
        berth_nameidx_add_hash(&b->keys, c, h, b->nkeytext, NULL))
        return NULL;
    b->keytext[b->nkeytext++] = c;
    return c;
}

static berth_node *new_node(builder *b, berth_node_type t, const yaml_mark_t *m)
{
    if (!b->nodes_left) {
        if (!(b->nodes = berth_arena_alloc(b->na, NODE_CHUNK * sizeof *b->nodes)))
            return NULL; /* zeroed */
        b->nodes_left = NODE_CHUNK;
    }
    berth_node *n = b->nodes++;
    b->nodes_left--;
    n->type = t;
    n->line = (int)mark_line(b, m);
    n->col = (int)mark_col(b, m);
    n->str = "";
    return n;
}

/* ---- streaming: a List's items handed over one by one ---- */

/* The top-level mapping's value being built is the one of key "items". */
static int items_key_open(const builder *b)
{
    const frame *top = &b->stack[0];
    if (b->depth < 1 || top->node->type != BERTH_NODE_MAP || top->n % 2 == 0)
        return 0;
    const berth_node *key = top->kids[top->n - 1];
    return key->type == BERTH_NODE_SCALAR && !strcmp(key->str, "items");
}

/* The node about to start is an item of that `items` sequence. */
static int at_list_item(const builder *b)
{
    return b->depth == 2 && items_key_open(b) && b->stack[1].node->type == BERTH_NODE_SEQ;
}

/* The top-level mapping's scalar value at key, among the entries parsed so
 * far; NULL when it has none (yet). */
static const char *top_scalar(const builder *b, const char *key)
{
    const frame *top = &b->stack[0];
    for (size_t i = 0; i + 1 < top->n; i += 2)
        if (!strcmp(top->kids[i]->str, key))
            return top->kids[i + 1]->type == BERTH_NODE_SCALAR ? top->kids[i + 1]->str : NULL;
    return NULL;
}

/* A List item starts: its nodes go to item_nodes. */
static void item_begin(builder *b)
{
    b->doc_chunk = b->nodes;
    b->doc_chunk_left = b->nodes_left;
    b->nodes = NULL;
    b->nodes_left = 0;
    b->na = &b->item_nodes;
    b->in_item = 1;
    b->item_anchors = b->nanchors;
}

/* A List item n is complete: the stream takes it (its nodes are released,
 * unless it defined an anchor a later alias may name: then they move to
 * a) or keeps it, and then this List's later items too. */
static int stream_item(builder *b, berth_node *n)
{
    b->in_item = 0;
    b->na = &b->doc_nodes;
    b->nodes = b->doc_chunk;
    b->nodes_left = b->doc_chunk_left;
    int rc = b->stream->item(b->stream->ctx, b->list_kind, b->list_api, b->item_index++, n);
    if (rc < 0)
        return rc;
    if (rc == 0) {
        b->keep_items = 1;
        berth_arena_adopt(&b->doc_nodes, &b->item_nodes);
        return push_kid(b, &b->stack[b->depth - 1], n);
    }
    b->streamed++;
    if (b->nanchors > b->item_anchors)
        berth_arena_adopt(b->a, &b->item_nodes);
    else
        berth_arena_reset(&b->item_nodes);
    return 0;
}

/* A top-level document n is complete: handed to the stream (unless null),
 * then its nodes are released (or moved to a, when it defined an anchor). */
static int stream_doc(builder *b, berth_node *n)
{
    int rc = 0;
    if (!berth_node_is_null(n)) {
        b->ndocs_streamed++;
        rc = b->stream->doc(b->stream->ctx, n, b->streamed);
    }
    if (b->nanchors > b->doc_anchors)
        berth_arena_adopt(b->a, &b->doc_nodes);
    else
        berth_arena_reset(&b->doc_nodes);
    b->nodes = NULL;
    b->nodes_left = 0;
    b->streamed = 0;
    b->keep_items = 0;
    b->item_index = 0;
    b->doc_anchors = b->nanchors;
    return rc;
}

#define DUP_SCAN 16u /* maps of up to this many keys compare every pair */

typedef struct keyref {
    const char *key;
    uint32_t at;
} keyref;

static int keyref_cmp(const void *x, const void *y)
{
    const keyref *a = x, *b = y;
    int c = strcmp(a->key, b->key);
    return c ? c : (a->at > b->at) - (a->at < b->at);
}

/* The first entry (in document order) whose key equals an earlier one's,
 * n when none, SIZE_MAX out of memory. Keys compare as C strings. Small
 * maps compare every pair; larger ones sort (key, position) pairs, so a
 * hostile map of a million keys costs O(n log n), not O(n^2): each run of
 * equal keys names its second entry, and the earliest of those wins. */
static size_t first_duplicate(const berth_map_entry *e, size_t n)
{
    if (n <= DUP_SCAN) {
        for (size_t i = 1; i < n; i++)
            for (size_t j = 0; j < i; j++)
                if (strcmp(e[j].key->str, e[i].key->str) == 0)
                    return i;
        return n;
    }
    keyref *r = malloc(n * sizeof *r);
    if (!r)
        return SIZE_MAX;
    for (size_t i = 0; i < n; i++)
        r[i] = (keyref){e[i].key->str, (uint32_t)i};
    qsort(r, n, sizeof *r, keyref_cmp);
    size_t first = n;
    for (size_t i = 1; i < n; i++)
        if (r[i].at < first && strcmp(r[i - 1].key, r[i].key) == 0)
            first = r[i].at; /* r[i-1] is earlier: sorted by position among equals */
    free(r);
    return first;
}

static int close_container(builder *b)
{
    frame *f = &b->stack[b->depth - 1];
    berth_node *n = f->node;
    if (n->type == BERTH_NODE_MAP) {
        if (f->n % 2)
            return berth_error_set(b->e, BERTH_EINVAL, "%s:%d:%d: mapping key without value",
                                   b->name, n->line, n->col);
        n->n = f->n / 2;
        n->entries = berth_arena_alloc(b->na, (n->n ? n->n : 1) * sizeof *n->entries);
        if (!n->entries)
            return berth_error_set(b->e, BERTH_ENOMEM, "%s: out of memory", b->name);
        for (size_t i = 0; i < n->n; i++) { /* (each key a scalar: attach) */
            n->entries[i].key = f->kids[2 * i];
            n->entries[i].value = f->kids[2 * i + 1];
        }
        size_t dup = first_duplicate(n->entries, n->n);
        if (dup == SIZE_MAX)
            return berth_error_set(b->e, BERTH_ENOMEM, "%s: out of memory", b->name);
        if (dup < n->n) {
            const berth_node *k = n->entries[dup].key;
            return berth_error_set(b->e, BERTH_EINVAL, "%s:%d:%d: duplicate key '%s'", b->name,
                                   k->line, k->col, k->str);
        }
    } else {
        n->n = f->n;
        n->items = berth_arena_alloc(b->na, (n->n ? n->n : 1) * sizeof *n->items);
        if (!n->items)
            return berth_error_set(b->e, BERTH_ENOMEM, "%s: out of memory", b->name);
        if (n->n)   /* f->kids is NULL for an empty sequence */
            memcpy(n->items, f->kids, n->n * sizeof *n->items);
    }
    free(f->kids);
    f->kids = NULL;
    f->n = f->cap = 0;
    b->depth--;
    if (b->in_item && b->depth == 2)
        return stream_item(b, n);
    return attach(b, n);
}

static int run_parser(builder *b, yaml_parser_t *p)
{
    yaml_event_t ev;
    int rc = 0, done = 0;
    while (!done && rc == 0) {
        if (!yaml_parser_parse(p, &ev)) {
            const char *prob = p->problem ? p->problem : "syntax error";
            yaml_mark_t m = p->problem_mark;
            if (p->context)
                return berth_error_set(b->e, BERTH_EINVAL, "%s:%zu:%zu: %s %s", b->name,
                                       mark_line(b, &m), mark_col(b, &m), prob, p->context);
            return berth_error_set(b->e, BERTH_EINVAL, "%s:%zu:%zu: %s", b->name,
                                   mark_line(b, &m), mark_col(b, &m), prob);
        }
        switch (ev.type) {
        case YAML_STREAM_END_EVENT:
            done = 1;
            break;
        case YAML_SCALAR_EVENT: {
            if (b->stream && at_list_item(b))
                b->keep_items = 1; /* not a mapping: kept, with the items after it */
            berth_node *n = new_node(b, BERTH_NODE_SCALAR, &ev.start_mark);
            if (!n) {
                rc = berth_error_set(b->e, BERTH_ENOMEM, "%s: out of memory", b->name);
                break;
            }
            /* a mapping's key (an even position in the innermost open
             * mapping) shares its text with the equal keys before it */
            const frame *top = b->depth ? &b->stack[b->depth - 1] : NULL;
            if (top && top->node->type == BERTH_NODE_MAP && top->n % 2 == 0)
                n->str = intern_key(b, (const char *)ev.data.scalar.value, ev.data.scalar.length);
            else
                n->str = copy_text(b, (const char *)ev.data.scalar.value, ev.data.scalar.length);
            if (!n->str) {
                rc = berth_error_set(b->e, BERTH_ENOMEM, "%s: out of memory", b->name);
                break;
            }
            n->quoted = ev.data.scalar.style != YAML_PLAIN_SCALAR_STYLE;
            rc = add_anchor(b, (const char *)ev.data.scalar.anchor, n);
            if (!rc)
                rc = attach(b, n);
            break;
        }
        case YAML_SEQUENCE_START_EVENT:
        case YAML_MAPPING_START_EVENT: {
            if (b->depth >= BERTH_DOC_MAX_DEPTH) {
                rc = berth_error_set(b->e, BERTH_ELIMIT, "%s:%zu:%zu: nesting deeper than %d levels",
                                     b->name, mark_line(b, &ev.start_mark),
                                     mark_col(b, &ev.start_mark), BERTH_DOC_MAX_DEPTH);
                break;
            }
            if (b->stream && b->depth == 1 && items_key_open(b)) {
                /* a List's items begin: the kind and apiVersion before them
                 * are looked up once, not per item (a hostile mapping may
                 * have a million keys before its items) */
                b->item_index = 0;
                b->keep_items = 0;
                b->list_kind = top_scalar(b, "kind");
                b->list_api = top_scalar(b, "apiVersion");
            } else if (b->stream && at_list_item(b)) {
                if (ev.type == YAML_MAPPING_START_EVENT && !b->keep_items)
                    item_begin(b);
                else
                    b->keep_items = 1;
            }
            berth_node *n = new_node(b, ev.type == YAML_MAPPING_START_EVENT ? BERTH_NODE_MAP
                                                                            : BERTH_NODE_SEQ,
                                     &ev.start_mark);
            if (!n) {
                rc = berth_error_set(b->e, BERTH_ENOMEM, "%s: out of memory", b->name);
                break;
            }
            const char *anc = (const char *)(ev.type == YAML_MAPPING_START_EVENT
                                                 ? ev.data.mapping_start.anchor
                                                 : ev.data.sequence_start.anchor);
            rc = add_anchor(b, anc, n);
            b->stack[b->depth].node = n;
            b->stack[b->depth].kids = NULL;
            b->stack[b->depth].n = b->stack[b->depth].cap = 0;
            b->depth++;
            break;
        }
        case YAML_SEQUENCE_END_EVENT:
        case YAML_MAPPING_END_EVENT:
            rc = close_container(b);
            break;
        case YAML_ALIAS_EVENT: {
            if (b->stream && at_list_item(b))
                b->keep_items = 1;
            berth_node *n = find_anchor(b, (const char *)ev.data.alias.anchor);
            if (!n)
                rc = berth_error_set(b->e, BERTH_EINVAL, "%s:%zu:%zu: unknown alias '*%s'",
                                     b->name, mark_line(b, &ev.start_mark),
                                     mark_col(b, &ev.start_mark),
                                     (const char *)ev.data.alias.anchor);
            else
                rc = attach(b, n);
            break;
        }
        default:
            break;
        }
        yaml_event_delete(&ev);
    }
    return rc;
}

static void builder_free(builder *b)
{
    berth_arena_free(&b->doc_nodes);
    berth_arena_free(&b->item_nodes);
    berth_nameidx_free(&b->keys);
    free(b->keytext);
    for (int i = 0; i < b->depth; i++)
        free(b->stack[i].kids);
    for (size_t i = 0; i < b->nanchors; i++)
        free(b->anchors[i].name);
    free(b->anchors);
    free(b->docs);
}

static int finish(builder *b, berth_source *src, int rc)
{
    if (rc == 0) {
        size_t keep = 0;
        for (size_t i = 0; i < b->ndocs; i++)
            if (!berth_node_is_null(b->docs[i]))
                keep++;
        src->docs = berth_arena_alloc(b->a, (keep ? keep : 1) * sizeof *src->docs);
        if (!src->docs)
            rc = berth_error_set(b->e, BERTH_ENOMEM, "%s: out of memory", b->name);
        else {
            src->ndocs = 0;
            for (size_t i = 0; i < b->ndocs; i++)
                if (!berth_node_is_null(b->docs[i]))
                    src->docs[src->ndocs++] = b->docs[i];
        }
    }
    builder_free(b);
    return rc;
}

/* Parses buf[0, len) with libyaml into b's documents; its text starts at
 * line_off (0-based) and, on that line, column col_off of the file. */
static int parse_text(builder *b, const char *buf, size_t len, size_t line_off, size_t col_off)
{
    yaml_parser_t p;
    if (!yaml_parser_initialize(&p))
        return berth_error_set(b->e, BERTH_ENOMEM, "%s: out of memory", b->name);
    b->line_off = line_off;
    b->col_off = col_off;
    yaml_parser_set_input_string(&p, (const unsigned char *)buf, len);
    int rc = run_parser(b, &p);
    yaml_parser_delete(&p);
    /* anchors are per document stream */
    for (size_t i = 0; i < b->nanchors; i++)
        free(b->anchors[i].name);
    b->nanchors = 0;
    b->doc_anchors = 0;
    return rc;
}

/* ---- JSON streams ---- */

typedef struct jspan {
    size_t start, end;       /* a top-level value: buf[start, end) */
} jspan;

typedef struct jscan {
    const char *buf;
    size_t len, pos;
} jscan;

/* Skips blanks and `#` comment lines between values. */
static void js_blank(jscan *s)
{
    while (s->pos < s->len) {
        char c = s->buf[s->pos];
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r')
            s->pos++;
        else if (c == '#' && (s->pos == 0 || s->buf[s->pos - 1] == '\n')) {
            const char *nl = memchr(s->buf + s->pos, '\n', s->len - s->pos);
            s->pos = nl ? (size_t)(nl - s->buf) + 1 : s->len;
        } else
            break;
    }
}

static const char log_start[] = "==== START logs for container ";
static const char log_end[] = "==== END logs for container ";

/* At a `==== START logs for container C of pod NS/NAME ====` line (kubectl
 * cluster-info dump, clusterinfo_dump.go): skips through the matching END
 * marker's line. The log text may lack a final newline, so the END marker
 * can follow it on the same line. 1 skipped, 0 not a log section, -1 a
 * START without its END. O(length of the section). */
static int js_log(jscan *s)
{
    size_t ls = sizeof log_start - 1;
    if (s->len - s->pos < ls || memcmp(s->buf + s->pos, log_start, ls))
        return 0;
    const char *nl = memchr(s->buf + s->pos, '\n', s->len - s->pos);
    size_t eol = nl ? (size_t)(nl - s->buf) : s->len;
    size_t tail = eol - (s->pos + ls); /* "C of pod NS/NAME ====" (maybe with \r) */
    const char *rest = s->buf + s->pos + ls;
    if (tail && rest[tail - 1] == '\r')
        tail--;
    if (tail < 5 || memcmp(rest + tail - 5, " ====", 5))
        return 0;
    /* the END marker: log_end then the same "C of pod NS/NAME ====" */
    size_t le = sizeof log_end - 1, from = eol;
    const char *hit = NULL;
    while (from < s->len) {
        const char *h = memmem(s->buf + from, s->len - from, log_end, le);
        if (!h)
            break;
        size_t at = (size_t)(h - s->buf) + le;
        if (s->len - at >= tail && !memcmp(s->buf + at, rest, tail)) {
            hit = h;
            break;
        }
        from = at;
    }
    if (!hit)
        return -1;
    const char *nl2 = memchr(hit, '\n', (size_t)(s->buf + s->len - hit));
    s->pos = nl2 ? (size_t)(nl2 - s->buf) + 1 : s->len;
    return 1;
}

/* One top-level JSON value at s->pos (`{...}` or `[...]`, strings and
 * escapes respected): 1 with *sp set, 0 when it is not closed before the
 * end of the buffer (sp runs to the end). */
static int js_value(jscan *s, jspan *sp)
{
    sp->start = s->pos;
    int depth = 0;
    while (s->pos < s->len) {
        char c = s->buf[s->pos++];
        if (c == '"' || c == '\'') {
            /* JSON strings; single-quoted ones are YAML flow text */
            while (s->pos < s->len) {
                char d = s->buf[s->pos++];
                if (c == '"' && d == '\\' && s->pos < s->len)
                    s->pos++;
                else if (d == c)
                    break;
            }
        } else if (c == '{' || c == '[')
            depth++;
        else if (c == '}' || c == ']') {
            if (--depth == 0) {
                sp->end = s->pos;
                return 1;
            }
        }
    }
    sp->end = s->len;
    return 0;
}

/* Splits buf into values: 1 with spans (malloc'd) when buf is a JSON
 * stream, 0 when it is not (parse it as YAML), -1 out of memory, -2 a log
 * section without END (*bad_at = its offset). */
static int js_split(const char *buf, size_t len, jspan **out, size_t *nout, size_t *bad_at)
{
    jscan s = {buf, len, 0};
    *out = NULL;
    *nout = 0;
    if (len >= 3 && !memcmp(buf, "\xef\xbb\xbf", 3))
        s.pos = 3;
    js_blank(&s);
    if (s.pos >= len || buf[s.pos] != '{')
        return 0;
    uint32_t cap = 0;
    while (1) {
        js_blank(&s);
        if (s.pos >= len)
            return 1;
        char c = buf[s.pos];
        if (c == '{' || c == '[') {
            if (*nout == cap &&
                berth_grow((void **)out, &cap, (uint32_t)*nout + 1, sizeof **out, 0))
                return -1;
            int closed = js_value(&s, &(*out)[*nout]);
            ++*nout;
            if (!closed)
                return 1; /* libyaml reports the unterminated value */
            continue;
        }
        size_t at = s.pos;
        int lg = js_log(&s);
        if (lg == 1)
            continue;
        if (lg == -1) {
            *bad_at = at;
            return -2;
        }
        /* anything else: not a JSON stream (YAML flow text, `---`, ...) */
        free(*out);
        *out = NULL;
        *nout = 0;
        return 0;
    }
}

/* Line (0-based) and column (0-based, in characters) of buf[off], counting
 * from (*line, *col) at buf[*from]; advances *from to off. O(off - from). */
static void js_advance(const char *buf, size_t *from, size_t off, size_t *line, size_t *col)
{
    for (size_t i = *from; i < off; i++) {
        if (buf[i] == '\n') {
            ++*line;
            *col = 0;
        } else if (((unsigned char)buf[i] & 0xC0) != 0x80)
            ++*col;
    }
    *from = off;
}

/* Parses buf into src's documents, or (st set) hands each document and
 * List item to st and counts the documents in *ndocs. */
static int load_buffer(berth_arena *a, const char *name, const char *buf, size_t len,
                       berth_source *src, const berth_doc_stream *st, size_t *ndocs,
                       berth_error *e)
{
    builder b;
    memset(&b, 0, sizeof b);
    b.a = a;
    b.e = e;
    b.name = name;
    b.stream = st;
    b.na = st ? &b.doc_nodes : a;
    berth_arena_init(&b.doc_nodes, a->cap);
    berth_arena_init(&b.item_nodes, a->cap);
    memset(src, 0, sizeof *src);
    src->path = berth_arena_strdup(a, name);
    if (!src->path)
        return berth_error_set(e, BERTH_ENOMEM, "out of memory");
    b.name = src->path;
    if (len > BERTH_DOC_MAX_BYTES)
        return berth_error_set(e, BERTH_ELIMIT, "%s: larger than %u bytes", name,
                               BERTH_DOC_MAX_BYTES);
    jspan *spans = NULL;
    size_t nspans = 0, bad_at = 0;
    int js = js_split(buf, len, &spans, &nspans, &bad_at);
    int rc = 0;
    if (js == -1) {
        rc = berth_error_set(e, BERTH_ENOMEM, "%s: out of memory", name);
    } else if (js == -2) {
        size_t from = 0, line = 0, col = 0;
        js_advance(buf, &from, bad_at, &line, &col);
        rc = berth_error_set(e, BERTH_EINVAL,
                             "%s:%zu:%zu: container log section without its '==== END logs for "
                             "container ...' line",
                             b.name, line + 1, col + 1);
    } else if (js == 1) {
        size_t from = 0, line = 0, col = 0;
        for (size_t i = 0; i < nspans && !rc; i++) {
            js_advance(buf, &from, spans[i].start, &line, &col);
            rc = parse_text(&b, buf + spans[i].start, spans[i].end - spans[i].start, line, col);
        }
    } else {
        rc = parse_text(&b, buf, len, 0, 0);
    }
    free(spans);
    rc = finish(&b, src, rc);
    if (ndocs)
        *ndocs = b.ndocs_streamed;
    return rc;
}

int berth_doc_load_buffer(berth_arena *a, const char *name, const char *buf, size_t len,
                          berth_source *src, berth_error *e)
{
    return load_buffer(a, name, buf, len, src, NULL, NULL, e);
}

/* A regular file is mapped rather than copied: its pages are the page
 * cache's, so a 120 MB kubectl dump costs no memory of berth's own and no
 * first-touch faults (docs/disrupt.md "A smaller document tree"). 1: not
 * mapped (stdin, a pipe, an empty file, mmap refused), read it instead;
 * 0: parsed; else the error. A file truncated by another program while it
 * is parsed ends the process with SIGBUS. */
static int load_mapped(berth_arena *a, const char *path, FILE *f, berth_source *src,
                       const berth_doc_stream *st, size_t *ndocs, berth_error *e)
{
    struct stat fs;
    if (fstat(fileno(f), &fs) || !S_ISREG(fs.st_mode) || fs.st_size <= 0)
        return 1;
    if ((uint64_t)fs.st_size >= BERTH_DOC_MAX_BYTES)
        return berth_error_set(e, BERTH_ELIMIT, "%s: larger than %u bytes", path,
                               BERTH_DOC_MAX_BYTES);
    int flags = MAP_PRIVATE;
#ifdef MAP_POPULATE
    flags |= MAP_POPULATE; /* map every page now: one fault instead of one per 4 KB */
#endif
    size_t len = (size_t)fs.st_size;
    void *buf = mmap(NULL, len, PROT_READ, flags, fileno(f), 0);
    if (buf == MAP_FAILED)
        return 1;
    int rc = load_buffer(a, path, buf, len, src, st, ndocs, e);
    munmap(buf, len);
    return rc;
}

static int load_file(berth_arena *a, const char *path, berth_source *src,
                     const berth_doc_stream *st, size_t *ndocs, berth_error *e)
{
    FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
    if (!f)
        return berth_error_set(e, BERTH_EIO, "%s: cannot open: %s", path, strerror(errno));
    if (f != stdin) {
        int rc = load_mapped(a, path, f, src, st, ndocs, e);
        if (rc != 1) {
            fclose(f);
            return rc;
        }
    }
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    int rc = 0;
    while (buf) {
        size_t got = fread(buf + len, 1, cap - len, f);
        len += got;
        if (got == 0)
            break;
        if (len == cap) {
            if (cap >= BERTH_DOC_MAX_BYTES) {
                rc = berth_error_set(e, BERTH_ELIMIT, "%s: larger than %u bytes", path,
                                     BERTH_DOC_MAX_BYTES);
                break;
            }
            char *nb = realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
            cap *= 2;
        }
    }
    if (!buf)
        rc = berth_error_set(e, BERTH_ENOMEM, "%s: out of memory", path);
    else if (rc == 0 && ferror(f))
        rc = berth_error_set(e, BERTH_EIO, "%s: read error: %s", path, strerror(errno));
    if (f != stdin)
        fclose(f);
    if (rc == 0)
        rc = load_buffer(a, strcmp(path, "-") == 0 ? "<stdin>" : path, buf, len, src, st, ndocs,
                         e);
    free(buf);
    return rc;
}

int berth_doc_load_file(berth_arena *a, const char *path, berth_source *src, berth_error *e)
{
    return load_file(a, path, src, NULL, NULL, e);
}

int berth_doc_stream_file(berth_arena *a, const char *path, const berth_doc_stream *st,
                          size_t *ndocs, berth_error *e)
{
    berth_source src;
    *ndocs = 0;
    return load_file(a, path, &src, st, ndocs, e);
}

int berth_doc_stream_buffer(berth_arena *a, const char *name, const char *buf, size_t len,
                            const berth_doc_stream *st, size_t *ndocs, berth_error *e)
{
    berth_source src;
    *ndocs = 0;
    return load_buffer(a, name, buf, len, &src, st, ndocs, e);
}
