/* io/decode.c - typed, located field access over berth_node trees: the
 * path stack ("spec.pools[1].count"), type checks, and the error text that
 * names file:line:column, the field and what was expected; Lists (typed
 * lists' items take the list's kind) and the skipped-kind counts. */
#include "berth/doc.h"
#include "berth/grow.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void berth_dec_init(berth_dec *d, berth_arena *a, const char *file, berth_error *e)
{
    memset(d, 0, sizeof *d);
    d->file = file;
    d->err = e;
    d->arena = a;
}

/* Appends s[0, n) to the field path, cut at its size (as snprintf would:
 * a loader pushes a field for every value it reads, and snprintf was a
 * tenth of a large load). */
static void path_add(berth_dec *d, const char *s, size_t n)
{
    size_t room = sizeof d->path - 1 - d->plen;
    if (n > room)
        n = room;
    memcpy(d->path + d->plen, s, n);
    d->plen += n;
    d->path[d->plen] = '\0';
}

size_t berth_dec_push(berth_dec *d, const char *field)
{
    size_t prev = d->plen;
    if (d->plen)
        path_add(d, ".", 1);
    path_add(d, field, strlen(field));
    return prev;
}

size_t berth_dec_push_index(berth_dec *d, size_t i)
{
    size_t prev = d->plen;
    char buf[24];
    size_t at = sizeof buf;
    buf[--at] = ']';
    do
        buf[--at] = (char)('0' + i % 10);
    while ((i /= 10) > 0);
    buf[--at] = '[';
    path_add(d, buf + at, sizeof buf - at);
    return prev;
}

void berth_dec_pop(berth_dec *d, size_t prev)
{
    d->plen = prev;
    d->path[prev] = '\0';
}

static int dec_vfail(berth_dec *d, const berth_node *n, const char *fmt, va_list ap)
{
    char msg[600];
    vsnprintf(msg, sizeof msg, fmt, ap);
    if (n)
        return berth_error_set(d->err, BERTH_EINVAL, "%s:%d:%d: %s: %s", d->file, n->line, n->col,
                               d->plen ? d->path : "(document)", msg);
    return berth_error_set(d->err, BERTH_EINVAL, "%s: %s: %s", d->file,
                           d->plen ? d->path : "(document)", msg);
}

int berth_dec_fail(berth_dec *d, const berth_node *n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = dec_vfail(d, n, fmt, ap);
    va_end(ap);
    return rc;
}

int berth_dec_grow_fail(berth_dec *d, const berth_node *n, int rc, const char *what)
{
    if (rc == BERTH_ENOMEM)
        return berth_error_set(d->err, BERTH_ENOMEM, "out of memory");
    return berth_dec_fail(d, n, "too many %s", what);
}

int berth_dec_fail_field(berth_dec *d, const berth_node *m, const char *key, const char *fmt, ...)
{
    size_t p = berth_dec_push(d, key);
    va_list ap;
    va_start(ap, fmt);
    const berth_node *n = berth_node_get(m, key);
    int rc = dec_vfail(d, n ? n : m, fmt, ap);
    va_end(ap);
    berth_dec_pop(d, p);
    return rc;
}

int berth_node_is_null(const berth_node *n)
{
    if (!n)
        return 1;
    if (n->type != BERTH_NODE_SCALAR || n->quoted)
        return 0;
    const char *s = n->str;
    return !*s || !strcmp(s, "~") || !strcmp(s, "null") || !strcmp(s, "Null") ||
           !strcmp(s, "NULL");
}

static berth_node *copy_at(berth_arena *a, const berth_node *n, int depth)
{
    if (!n || depth > BERTH_DOC_MAX_DEPTH) /* an alias of an open container loops */
        return NULL;
    berth_node *c = berth_arena_alloc(a, sizeof *c);
    if (!c)
        return NULL;
    *c = *n;
    if (n->type == BERTH_NODE_MAP) {
        c->entries = berth_arena_alloc(a, (n->n ? n->n : 1) * sizeof *c->entries);
        if (!c->entries)
            return NULL;
        for (uint32_t i = 0; i < n->n; i++)
            if (!(c->entries[i].key = copy_at(a, n->entries[i].key, depth + 1)) ||
                !(c->entries[i].value = copy_at(a, n->entries[i].value, depth + 1)))
                return NULL;
    } else if (n->type == BERTH_NODE_SEQ) {
        c->items = berth_arena_alloc(a, (n->n ? n->n : 1) * sizeof *c->items);
        if (!c->items)
            return NULL;
        for (uint32_t i = 0; i < n->n; i++)
            if (!(c->items[i] = copy_at(a, n->items[i], depth + 1)))
                return NULL;
    }
    return c;
}

berth_node *berth_node_copy(berth_arena *a, const berth_node *n)
{
    return copy_at(a, n, 0);
}

berth_node *berth_node_get(const berth_node *m, const char *key)
{
    if (!m || m->type != BERTH_NODE_MAP)
        return NULL;
    for (size_t i = 0; i < m->n; i++)
        if (strcmp(m->entries[i].key->str, key) == 0)
            return berth_node_is_null(m->entries[i].value) ? NULL : m->entries[i].value;
    return NULL;
}

size_t berth_edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 64 || lb > 64)
        return 99;
    size_t row[65];
    for (size_t j = 0; j <= lb; j++)
        row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t up = row[j];
            size_t c = diag + (a[i - 1] != b[j - 1]);
            if (row[j] + 1 < c)
                c = row[j] + 1;
            if (row[j - 1] + 1 < c)
                c = row[j - 1] + 1;
            row[j] = c;
            diag = up;
        }
    }
    return row[lb];
}

int berth_dec_known_fields(berth_dec *d, const berth_node *m, const char *const *allowed)
{
    if (!m || m->type != BERTH_NODE_MAP)
        return 0;
    for (size_t i = 0; i < m->n; i++) {
        const char *k = m->entries[i].key->str;
        const char *best = NULL;
        size_t bestd = 99;
        int ok = 0;
        for (const char *const *a = allowed; *a; a++) {
            if (strcmp(*a, k) == 0) {
                ok = 1;
                break;
            }
            size_t dist = berth_edit_distance(k, *a);
            if (dist < bestd) {
                bestd = dist;
                best = *a;
            }
        }
        if (!ok) {
            size_t prev = berth_dec_push(d, k);
            int rc = best && bestd <= 3
                         ? berth_dec_fail(d, m->entries[i].key,
                                          "unknown field '%s' (did you mean '%s'?)", k, best)
                         : berth_dec_fail(d, m->entries[i].key, "unknown field '%s'", k);
            berth_dec_pop(d, prev);
            return rc;
        }
    }
    return 0;
}

static const char *type_name(const berth_node *n)
{
    switch (n->type) {
    case BERTH_NODE_MAP: return "a mapping";
    case BERTH_NODE_SEQ: return "a list";
    default: return "a scalar";
    }
}

/* A field's node decoder for dec_field: arg is the accessor's own (a
 * range, a wanted node type), out its result. */
typedef int (*field_fn)(berth_dec *d, const berth_node *n, const void *arg, void *out);

/* Field key of m through fn when present, key on the field path meanwhile;
 * a located "required field is missing" when it is absent and required. */
static int dec_field(berth_dec *d, const berth_node *m, const char *key, int required,
                     field_fn fn, const void *arg, void *out)
{
    const berth_node *n = berth_node_get(m, key);
    size_t prev = berth_dec_push(d, key);
    int rc = 0;
    if (n)
        rc = fn(d, n, arg, out);
    else if (required)
        rc = berth_dec_fail(d, m, "required field is missing");
    berth_dec_pop(d, prev);
    return rc;
}

/* arg: the wanted berth_node_type (a mapping or a list) */
static int node_of_type(berth_dec *d, const berth_node *n, const void *arg, void *out)
{
    berth_node_type t = *(const berth_node_type *)arg;
    if (n->type != t)
        return berth_dec_fail(d, n, "expected %s, got %s",
                              t == BERTH_NODE_MAP ? "a mapping" : "a list", type_name(n));
    *(berth_node **)out = (berth_node *)n;
    return 0;
}

int berth_dec_map(berth_dec *d, const berth_node *m, const char *key, int required, berth_node **out)
{
    const berth_node_type t = BERTH_NODE_MAP;
    return dec_field(d, m, key, required, node_of_type, &t, out);
}

int berth_dec_seq(berth_dec *d, const berth_node *m, const char *key, int required, berth_node **out)
{
    const berth_node_type t = BERTH_NODE_SEQ;
    return dec_field(d, m, key, required, node_of_type, &t, out);
}

int berth_dec_node_str(berth_dec *d, const berth_node *n, const char **out)
{
    if (n->type != BERTH_NODE_SCALAR)
        return berth_dec_fail(d, n, "expected a string, got %s", type_name(n));
    *out = n->str;
    return 0;
}

int berth_dec_node_int(berth_dec *d, const berth_node *n, int64_t min, int64_t max, int64_t *out)
{
    if (n->type != BERTH_NODE_SCALAR)
        return berth_dec_fail(d, n, "expected an integer, got %s", type_name(n));
    const char *s = n->str;
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (!*s || *end || errno)
        return berth_dec_fail(d, n, "expected an integer, got '%s'", s);
    if (v < min || v > max)
        return berth_dec_fail(d, n, "%lld is out of range [%" PRId64 ", %" PRId64 "]", v, min, max);
    *out = v;
    return 0;
}

int berth_dec_node_quantity(berth_dec *d, const berth_node *n, berth_quantity *out)
{
    if (n->type != BERTH_NODE_SCALAR)
        return berth_dec_fail(d, n, "expected a quantity, got %s", type_name(n));
    const char *why = NULL;
    if (berth_quantity_parse(n->str, out, &why))
        return berth_dec_fail(d, n, "invalid quantity '%s': %s", n->str, why ? why : "malformed");
    return 0;
}

static int node_str(berth_dec *d, const berth_node *n, const void *arg, void *out)
{
    (void)arg;
    return berth_dec_node_str(d, n, out);
}

/* arg: the int64_t range {min, max} */
static int node_int(berth_dec *d, const berth_node *n, const void *arg, void *out)
{
    const int64_t *range = arg;
    return berth_dec_node_int(d, n, range[0], range[1], out);
}

static int node_quantity(berth_dec *d, const berth_node *n, const void *arg, void *out)
{
    (void)arg;
    return berth_dec_node_quantity(d, n, out);
}

static int node_bool(berth_dec *d, const berth_node *n, const void *arg, void *out)
{
    (void)arg;
    const char *s = n->str;
    if (n->type == BERTH_NODE_SCALAR && !n->quoted &&
        (!strcmp(s, "true") || !strcmp(s, "True") || !strcmp(s, "TRUE")))
        *(int *)out = 1;
    else if (n->type == BERTH_NODE_SCALAR && !n->quoted &&
             (!strcmp(s, "false") || !strcmp(s, "False") || !strcmp(s, "FALSE")))
        *(int *)out = 0;
    else
        return berth_dec_fail(d, n, "expected true or false, got '%s'",
                              n->type == BERTH_NODE_SCALAR ? s : type_name(n));
    return 0;
}

int berth_dec_str(berth_dec *d, const berth_node *m, const char *key, int required, const char **out)
{
    return dec_field(d, m, key, required, node_str, NULL, out);
}

int berth_dec_int(berth_dec *d, const berth_node *m, const char *key, int required, int64_t min,
                  int64_t max, int64_t *out)
{
    const int64_t range[2] = {min, max};
    return dec_field(d, m, key, required, node_int, range, out);
}

int berth_dec_bool(berth_dec *d, const berth_node *m, const char *key, int required, int *out)
{
    return dec_field(d, m, key, required, node_bool, NULL, out);
}

int berth_dec_quantity(berth_dec *d, const berth_node *m, const char *key, int required,
                       berth_quantity *out)
{
    return dec_field(d, m, key, required, node_quantity, NULL, out);
}

int berth_dec_enum(berth_dec *d, const berth_node *m, const char *key, int required,
                   const char *const *choices, int *out)
{
    const char *v = NULL;
    int rc = berth_dec_str(d, m, key, required, &v);
    if (rc || !v)
        return rc;
    char list[256] = "";
    size_t off = 0;
    for (int i = 0; choices[i]; i++) {
        if (strcmp(choices[i], v) == 0) {
            *out = i;
            return 0;
        }
        int w = snprintf(list + off, sizeof list - off, "%s%s", i ? (choices[i + 1] ? ", " : " or ") : "",
                         choices[i]);
        if (w > 0 && (size_t)w < sizeof list - off)
            off += (size_t)w;
    }
    size_t prev = berth_dec_push(d, key);
    rc = berth_dec_fail(d, berth_node_get(m, key), "expected %s, got '%s'", list, v);
    berth_dec_pop(d, prev);
    return rc;
}

/* A scalar node located at `at` holding s (arena text, not copied). */
static berth_node *synth_scalar(berth_arena *a, const berth_node *at, const char *s)
{
    berth_node *n = berth_arena_alloc(a, sizeof *n);
    if (!n)
        return NULL;
    memset(n, 0, sizeof *n);
    n->type = BERTH_NODE_SCALAR;
    n->line = at->line;
    n->col = at->col;
    n->str = s;
    n->quoted = 1;
    return n;
}

/* The item of a typed list as the loaders see it: item itself when it has
 * kind and apiVersion (or is no mapping), else a shallow copy with the
 * missing entries first (kind: item_kind, apiVersion: the list's). */
int berth_dec_typed_item(berth_dec *d, berth_arena *a, const berth_node *item,
                         const char *item_kind, const char *api, const berth_node **out)
{
    *out = item;
    if (item->type != BERTH_NODE_MAP)
        return 0;
    int need_kind = !berth_node_get(item, "kind");
    int need_api = api && !berth_node_get(item, "apiVersion");
    if (!need_kind && !need_api)
        return 0;
    /* an explicit null entry is replaced, not duplicated */
    size_t keep = 0;
    for (size_t i = 0; i < item->n; i++) {
        const char *k = item->entries[i].key->str;
        keep += !((need_kind && !strcmp(k, "kind")) || (need_api && !strcmp(k, "apiVersion")));
    }
    size_t n = keep + (size_t)need_kind + (size_t)need_api;
    berth_node *copy = berth_arena_alloc(a, sizeof *copy);
    berth_map_entry *ents = berth_arena_alloc(a, n * sizeof *ents);
    if (!copy || !ents)
        return berth_error_set(d->err, BERTH_ENOMEM, "%s: out of memory", d->file);
    *copy = *item;
    size_t j = 0;
    if (need_api) {
        ents[j].key = synth_scalar(a, item, "apiVersion");
        ents[j].value = synth_scalar(a, item, api);
        if (!ents[j].key || !ents[j].value)
            return berth_error_set(d->err, BERTH_ENOMEM, "%s: out of memory", d->file);
        j++;
    }
    if (need_kind) {
        ents[j].key = synth_scalar(a, item, "kind");
        ents[j].value = synth_scalar(a, item, item_kind);
        if (!ents[j].key || !ents[j].value)
            return berth_error_set(d->err, BERTH_ENOMEM, "%s: out of memory", d->file);
        j++;
    }
    for (size_t i = 0; i < item->n; i++) {
        const char *k = item->entries[i].key->str;
        if (!((need_kind && !strcmp(k, "kind")) || (need_api && !strcmp(k, "apiVersion"))))
            ents[j++] = item->entries[i];
    }
    copy->entries = ents;
    copy->n = j;
    *out = copy;
    return 0;
}

int berth_dec_list_from(berth_dec *d, const berth_node *doc, int depth, size_t first,
                        int (*fn)(void *ctx, berth_dec *d, const berth_node *item, int depth),
                        void *ctx)
{
    berth_node *items = NULL;
    int rc = berth_dec_seq(d, doc, "items", 1, &items);
    if (rc)
        return rc;
    if (depth > 4)
        return berth_dec_fail(d, doc, "Lists nested too deeply");
    /* a typed list (NodeList, PodList, ...): its items' kind and apiVersion */
    const berth_node *kn = berth_node_get(doc, "kind"), *api = berth_node_get(doc, "apiVersion");
    const char *item_kind = NULL;
    if (kn && kn->type == BERTH_NODE_SCALAR && strcmp(kn->str, "List") &&
        berth_kind_is_list(kn->str)) {
        item_kind = berth_arena_strndup(d->arena, kn->str, strlen(kn->str) - 4);
        if (!item_kind)
            return berth_error_set(d->err, BERTH_ENOMEM, "%s: out of memory", d->file);
    }
    if (api && api->type != BERTH_NODE_SCALAR)
        api = NULL;
    for (size_t i = 0; i < items->n && !rc; i++) {
        size_t p = berth_dec_push(d, "items");
        berth_dec_push_index(d, first + i);
        const berth_node *item = items->items[i];
        if (item_kind)
            rc = berth_dec_typed_item(d, d->arena, item, item_kind, api ? api->str : NULL, &item);
        if (!rc)
            rc = fn(ctx, d, item, depth + 1);
        berth_dec_pop(d, p);
    }
    return rc;
}

int berth_dec_list(berth_dec *d, const berth_node *doc, int depth,
                   int (*fn)(void *ctx, berth_dec *d, const berth_node *item, int depth),
                   void *ctx)
{
    return berth_dec_list_from(d, doc, depth, 0, fn, ctx);
}

int berth_dec_labels(berth_dec *d, const berth_node *parent, const char *key, berth_labels *out,
                     int validate)
{
    berth_node *mp = NULL;
    memset(out, 0, sizeof *out);
    int rc = berth_dec_map(d, parent, key, 0, &mp);
    if (rc || !mp)
        return rc;
    size_t p = berth_dec_push(d, key);
    out->items = berth_arena_alloc(d->arena, (mp->n ? mp->n : 1) * sizeof *out->items);
    if (!out->items)
        rc = berth_error_set(d->err, BERTH_ENOMEM, "%s: out of memory", d->file);
    for (size_t i = 0; !rc && i < mp->n; i++) {
        const berth_node *k = mp->entries[i].key, *v = mp->entries[i].value;
        size_t p2 = berth_dec_push(d, k->str);
        const char *val = "", *why = NULL;
        if (!berth_node_is_null(v))
            rc = berth_dec_node_str(d, v, &val);
        if (!rc && validate && !berth_label_key_valid(k->str, &why))
            rc = berth_dec_fail(d, k, "invalid label key '%s': %s", k->str, why);
        if (!rc && validate && !berth_label_value_valid(val, &why))
            rc = berth_dec_fail(d, v, "invalid label value '%s': %s", val, why);
        berth_dec_pop(d, p2);
        if (!rc)
            out->items[out->n++] = (berth_label){k->str, val};
    }
    if (!rc && berth_labels_sort(out))
        rc = berth_dec_fail(d, mp, "a key appears twice");
    berth_dec_pop(d, p);
    return rc;
}

int berth_dec_kind(berth_dec *d, const berth_node *doc, const char **kind)
{
    if (doc->type != BERTH_NODE_MAP)
        return berth_dec_fail(d, doc, "expected an object with apiVersion and kind");
    return berth_dec_str(d, doc, "kind", 1, kind);
}

int berth_dec_api(berth_dec *d, const berth_node *doc, const char *kind, const char *want)
{
    const char *api = NULL;
    int rc = berth_dec_str(d, doc, "apiVersion", 1, &api);
    if (rc || !strcmp(api, want))
        return rc;
    rc = berth_dec_fail_field(d, doc, "apiVersion", "kind %s needs apiVersion %s, got '%s'",
                              kind, want, api);
    return rc;
}

int berth_kind_is_list(const char *kind)
{
    size_t n = strlen(kind);
    return !strcmp(kind, "List") || (n > 4 && !strcmp(kind + n - 4, "List"));
}

int berth_dec_skip(berth_dec *d, const berth_node *doc, const char *kind, const char *note,
                   const char *known)
{
    if (!d->strict && d->skips)
        return berth_skips_add(d->skips, kind, note)
                   ? berth_error_set(d->err, BERTH_ENOMEM, "%s: out of memory", d->file)
                   : 0;
    return berth_dec_fail_field(d, doc, "kind", "unknown kind '%s' (%s%s%s)", kind,
                                note ? note : "", note ? "; " : "", known);
}

int berth_skips_add(berth_skips *s, const char *kind, const char *note)
{
    for (uint32_t i = 0; i < s->n; i++)
        if (!s->items[i].message && !strcmp(s->items[i].kind, kind)) {
            s->items[i].count++;
            return 0;
        }
    if (berth_grow((void **)&s->items, &s->cap, s->n + 1, sizeof *s->items, 0))
        return BERTH_ENOMEM;
    char *k = strdup(kind);
    if (!k)
        return BERTH_ENOMEM;
    s->items[s->n++] = (berth_skip){k, note, 1, 0};
    return 0;
}

int berth_skips_warn(berth_skips *s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int len = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (len < 0)
        return BERTH_ENOMEM;
    char *t = malloc((size_t)len + 1);
    if (!t)
        return BERTH_ENOMEM;
    va_start(ap, fmt);
    vsnprintf(t, (size_t)len + 1, fmt, ap);
    va_end(ap);
    for (uint32_t i = 0; i < s->n; i++)
        if (s->items[i].message && !strcmp(s->items[i].kind, t)) {
            free(t);
            return 0;
        }
    if (berth_grow((void **)&s->items, &s->cap, s->n + 1, sizeof *s->items, 0)) {
        free(t);
        return BERTH_ENOMEM;
    }
    s->items[s->n++] = (berth_skip){t, NULL, 1, 1};
    return 0;
}

void berth_warn_names_add(berth_warn_names *w, const char *fmt, ...)
{
    if (w->n++ >= BERTH_WARN_NAMES_SHOWN || w->len + 3 >= sizeof w->text)
        return;
    if (w->len) {
        memcpy(w->text + w->len, ", ", 3);
        w->len += 2;
    }
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(w->text + w->len, sizeof w->text - w->len, fmt, ap);
    va_end(ap);
    if (k > 0)
        w->len += (size_t)k < sizeof w->text - w->len ? (size_t)k : sizeof w->text - w->len - 1;
}

int berth_skips_warn_names(berth_skips *s, const berth_warn_names *w, const char *noun,
                           const char *what)
{
    if (!w->n)
        return 0;
    uint32_t more = w->n > BERTH_WARN_NAMES_SHOWN ? w->n - BERTH_WARN_NAMES_SHOWN : 0;
    char tail[40] = "";
    if (more)
        snprintf(tail, sizeof tail, ", and %" PRIu32 " more", more);
    return berth_skips_warn(s, "%" PRIu32 " %s%s %s: %s%s", w->n, noun, w->n == 1 ? "" : "s", what,
                            w->text, tail);
}

uint32_t berth_skips_total(const berth_skips *s)
{
    uint32_t t = 0;
    for (uint32_t i = 0; i < s->n; i++)
        t += s->items[i].message ? 0 : s->items[i].count;
    return t;
}

void berth_skip_text(const berth_skip *s, char *buf, size_t len)
{
    if (s->message) {
        snprintf(buf, len, "%s", s->kind);
        return;
    }
    snprintf(buf, len, "skipped %" PRIu32 " %s%s%s%s", s->count, s->kind, s->note ? " (" : "",
             s->note ? s->note : "", s->note ? ")" : "");
}

void berth_skips_free(berth_skips *s)
{
    for (uint32_t i = 0; i < s->n; i++)
        free(s->items[i].kind);
    free(s->items);
    memset(s, 0, sizeof *s);
}

const char *berth_node_annotation(const berth_node *doc, const char *key)
{
    const berth_node *meta = berth_node_get(doc, "metadata");
    const berth_node *ann = meta ? berth_node_get(meta, "annotations") : NULL;
    const berth_node *v = ann ? berth_node_get(ann, key) : NULL;
    return v && v->type == BERTH_NODE_SCALAR ? v->str : NULL;
}

int berth_dec_taints(berth_dec *d, berth_arena *a, const berth_node *parent, const char *key,
                     const char *const *fields, int strict, berth_taint **out, uint32_t *n)
{
    berth_node *ts = NULL;
    *out = NULL;
    *n = 0;
    int rc = berth_dec_seq(d, parent, key, 0, &ts);
    if (rc || !ts)
        return rc;
    *out = berth_arena_alloc(a, (ts->n ? ts->n : 1) * sizeof **out);
    if (!*out)
        return berth_error_set(d->err, BERTH_ENOMEM, "out of memory");
    size_t p = berth_dec_push(d, key);
    static const char *const effects[] = {"NoSchedule", "PreferNoSchedule", "NoExecute", NULL};
    for (size_t i = 0; !rc && i < ts->n; i++) {
        const berth_node *t = ts->items[i];
        size_t p2 = berth_dec_push_index(d, i);
        berth_taint tn = {NULL, "", BERTH_EFFECT_NOSCHEDULE};
        int eff = 0;
        const char *why = NULL;
        if (t->type != BERTH_NODE_MAP)
            rc = berth_dec_fail(d, t, "expected a taint mapping with key, value, effect");
        if (!rc && !(rc = strict ? berth_dec_known_fields(d, t, fields) : 0) &&
            !(rc = berth_dec_str(d, t, "key", 1, &tn.key)) &&
            !(rc = berth_dec_str(d, t, "value", 0, &tn.value)))
            rc = berth_dec_enum(d, t, "effect", 1, effects, &eff);
        if (!rc) {
            tn.effect = (berth_taint_effect)(eff + 1);
            if (berth_taint_validate(&tn, &why))
                rc = berth_dec_fail(d, t, "invalid taint: %s", why);
        }
        berth_dec_pop(d, p2);
        if (!rc)
            (*out)[(*n)++] = tn;
    }
    berth_dec_pop(d, p);
    return rc;
}
