/* io/yaml.c - reads YAML (and JSON, as YAML flow style) into located
 * berth_node trees with libyaml's event parser. Owns: the tree builder,
 * anchors/aliases, depth and size limits, syntax error messages. */
#include "berth/doc.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

typedef struct frame {
    berth_node *node;
    berth_node **kids;   /* seq items, or alternating key/value for maps */
    size_t n, cap;
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
    size_t nanchors, capanchors;
    berth_node **docs;
    size_t ndocs, capdocs;
} builder;

static int push_kid(builder *b, frame *f, berth_node *k)
{
    if (f->n == f->cap) {
        size_t nc = f->cap ? f->cap * 2 : 8;
        berth_node **p = realloc(f->kids, nc * sizeof *p);
        if (!p)
            return berth_error_set(b->e, BERTH_ENOMEM, "%s: out of memory", b->name);
        f->kids = p;
        f->cap = nc;
    }
    f->kids[f->n++] = k;
    return 0;
}

static int add_anchor(builder *b, const char *name, berth_node *n)
{
    if (!name)
        return 0;
    if (b->nanchors == b->capanchors) {
        size_t nc = b->capanchors ? b->capanchors * 2 : 8;
        anchor *p = realloc(b->anchors, nc * sizeof *p);
        if (!p)
            return berth_error_set(b->e, BERTH_ENOMEM, "%s: out of memory", b->name);
        b->anchors = p;
        b->capanchors = nc;
    }
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
static int attach(builder *b, berth_node *n)
{
    if (b->depth == 0) {
        if (b->ndocs == b->capdocs) {
            size_t nc = b->capdocs ? b->capdocs * 2 : 4;
            berth_node **p = realloc(b->docs, nc * sizeof *p);
            if (!p)
                return berth_error_set(b->e, BERTH_ENOMEM, "%s: out of memory", b->name);
            b->docs = p;
            b->capdocs = nc;
        }
        b->docs[b->ndocs++] = n;
        return 0;
    }
    return push_kid(b, &b->stack[b->depth - 1], n);
}

static berth_node *new_node(builder *b, berth_node_type t, const yaml_mark_t *m)
{
    berth_node *n = berth_arena_alloc(b->a, sizeof *n);
    if (!n)
        return NULL;
    n->type = t;
    n->line = (int)m->line + 1;
    n->col = (int)m->column + 1;
    n->str = "";
    return n;
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
        n->entries = berth_arena_alloc(b->a, (n->n ? n->n : 1) * sizeof *n->entries);
        if (!n->entries)
            return berth_error_set(b->e, BERTH_ENOMEM, "%s: out of memory", b->name);
        for (size_t i = 0; i < n->n; i++) {
            berth_node *k = f->kids[2 * i];
            if (k->type != BERTH_NODE_SCALAR)
                return berth_error_set(b->e, BERTH_EINVAL,
                                       "%s:%d:%d: mapping keys must be plain scalars",
                                       b->name, k->line, k->col);
            for (size_t j = 0; j < i; j++)
                if (strcmp(n->entries[j].key->str, k->str) == 0)
                    return berth_error_set(b->e, BERTH_EINVAL, "%s:%d:%d: duplicate key '%s'",
                                           b->name, k->line, k->col, k->str);
            n->entries[i].key = k;
            n->entries[i].value = f->kids[2 * i + 1];
        }
    } else {
        n->n = f->n;
        n->items = berth_arena_alloc(b->a, (n->n ? n->n : 1) * sizeof *n->items);
        if (!n->items)
            return berth_error_set(b->e, BERTH_ENOMEM, "%s: out of memory", b->name);
        if (n->n)   /* f->kids is NULL for an empty sequence */
            memcpy(n->items, f->kids, n->n * sizeof *n->items);
    }
    free(f->kids);
    f->kids = NULL;
    f->n = f->cap = 0;
    b->depth--;
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
                                       m.line + 1, m.column + 1, prob, p->context);
            return berth_error_set(b->e, BERTH_EINVAL, "%s:%zu:%zu: %s", b->name,
                                   m.line + 1, m.column + 1, prob);
        }
        switch (ev.type) {
        case YAML_STREAM_END_EVENT:
            done = 1;
            break;
        case YAML_SCALAR_EVENT: {
            berth_node *n = new_node(b, BERTH_NODE_SCALAR, &ev.start_mark);
            if (!n) {
                rc = berth_error_set(b->e, BERTH_ENOMEM, "%s: out of memory", b->name);
                break;
            }
            n->str = berth_arena_strndup(b->a, (const char *)ev.data.scalar.value,
                                         ev.data.scalar.length);
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
                                     b->name, ev.start_mark.line + 1, ev.start_mark.column + 1,
                                     BERTH_DOC_MAX_DEPTH);
                break;
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
            berth_node *n = find_anchor(b, (const char *)ev.data.alias.anchor);
            if (!n)
                rc = berth_error_set(b->e, BERTH_EINVAL, "%s:%zu:%zu: unknown alias '*%s'",
                                     b->name, ev.start_mark.line + 1, ev.start_mark.column + 1,
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

int berth_doc_load_buffer(berth_arena *a, const char *name, const char *buf, size_t len,
                          berth_source *src, berth_error *e)
{
    builder b;
    memset(&b, 0, sizeof b);
    b.a = a;
    b.e = e;
    b.name = name;
    memset(src, 0, sizeof *src);
    src->path = berth_arena_strdup(a, name);
    if (!src->path)
        return berth_error_set(e, BERTH_ENOMEM, "out of memory");
    b.name = src->path;
    if (len > BERTH_DOC_MAX_BYTES)
        return berth_error_set(e, BERTH_ELIMIT, "%s: larger than %u bytes", name,
                               BERTH_DOC_MAX_BYTES);
    yaml_parser_t p;
    if (!yaml_parser_initialize(&p))
        return berth_error_set(e, BERTH_ENOMEM, "%s: out of memory", name);
    yaml_parser_set_input_string(&p, (const unsigned char *)buf, len);
    int rc = run_parser(&b, &p);
    yaml_parser_delete(&p);
    return finish(&b, src, rc);
}

int berth_doc_load_file(berth_arena *a, const char *path, berth_source *src, berth_error *e)
{
    FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
    if (!f)
        return berth_error_set(e, BERTH_EIO, "%s: cannot open: %s", path, strerror(errno));
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
        rc = berth_doc_load_buffer(a, strcmp(path, "-") == 0 ? "<stdin>" : path, buf, len, src, e);
    free(buf);
    return rc;
}
