/* report/stream.c - documents written as they are produced: '{"<key>": [',
 * one item at a time, then the closing members, as JSON (jansson's dump
 * flags; the text equals json_dumpf of the whole tree) or as YAML (libyaml's
 * emitter fed event by event; the text equals berth_report_yaml_write of the
 * whole tree). The writer keeps no item, so memory does not grow with the
 * output. Also the JSON -> YAML conversion every `-o yaml` uses. */
#include "berth/report.h"

#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "berth/error.h"
#include "berth/grow.h"

struct berth_stream {
    FILE *out;
    berth_stream_format fmt;
    size_t flags;          /* JSON: jansson's dump flags */
    uint64_t written;      /* items written */
    int failed;            /* YAML: the emitter failed (it cannot go on) */
    yaml_emitter_t em;
};

/* ---- YAML ---- */

/* A string that a YAML reader would take for a number, bool or null must
 * be quoted to stay a string. */
static yaml_scalar_style_t string_style(const char *v)
{
    static const char *const special[] = {"", "~", "null", "Null", "NULL", "true", "True",
                                          "TRUE", "false", "False", "FALSE", "yes", "Yes",
                                          "no", "No", "on", "On", "off", "Off", "y", "n", NULL};
    for (int i = 0; special[i]; i++)
        if (!strcmp(v, special[i]))
            return YAML_DOUBLE_QUOTED_SCALAR_STYLE;
    char *end;
    strtod(v, &end);
    if (end != v && *end == '\0')
        return YAML_DOUBLE_QUOTED_SCALAR_STYLE;
    return YAML_ANY_SCALAR_STYLE;
}

static int emit_scalar(yaml_emitter_t *em, const char *s, size_t len, int plain)
{
    yaml_event_t ev;
    if (!yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)s, (int)len, 1, !plain,
                                      plain ? YAML_PLAIN_SCALAR_STYLE : string_style(s)))
        return -1;
    return yaml_emitter_emit(em, &ev) ? 0 : -1;
}

/* One JSON value as YAML events. */
static int emit_json(yaml_emitter_t *em, json_t *j)
{
    yaml_event_t ev;
    char buf[64];
    switch (json_typeof(j)) {
    case JSON_OBJECT: {
        yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_MAPPING_STYLE);
        if (!yaml_emitter_emit(em, &ev))
            return -1;
        const char *k;
        json_t *v;
        json_object_foreach(j, k, v)
        {
            if (emit_scalar(em, k, strlen(k), 0) || emit_json(em, v))
                return -1;
        }
        yaml_mapping_end_event_initialize(&ev);
        return yaml_emitter_emit(em, &ev) ? 0 : -1;
    }
    case JSON_ARRAY: {
        yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_SEQUENCE_STYLE);
        if (!yaml_emitter_emit(em, &ev))
            return -1;
        size_t i;
        json_t *v;
        json_array_foreach(j, i, v) if (emit_json(em, v)) return -1;
        yaml_sequence_end_event_initialize(&ev);
        return yaml_emitter_emit(em, &ev) ? 0 : -1;
    }
    case JSON_STRING:
        return emit_scalar(em, json_string_value(j), json_string_length(j), 0);
    case JSON_INTEGER:
        snprintf(buf, sizeof buf, "%" JSON_INTEGER_FORMAT, json_integer_value(j));
        return emit_scalar(em, buf, strlen(buf), 1);
    case JSON_REAL:
        snprintf(buf, sizeof buf, "%.15g", json_real_value(j));
        return emit_scalar(em, buf, strlen(buf), 1);
    case JSON_TRUE:
        return emit_scalar(em, "true", 4, 1);
    case JSON_FALSE:
        return emit_scalar(em, "false", 5, 1);
    case JSON_NULL:
        return emit_scalar(em, "null", 4, 1);
    }
    return -1;
}

static int write_out(void *data, unsigned char *buffer, size_t size)
{
    return fwrite(buffer, 1, size, (FILE *)data) == size;
}

/* stream start, document start (implicit) */
static int yaml_open(yaml_emitter_t *em, FILE *out)
{
    yaml_event_t ev;
    if (!yaml_emitter_initialize(em))
        return -1;
    yaml_emitter_set_output(em, write_out, out);
    yaml_emitter_set_unicode(em, 1);
    yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING);
    if (!yaml_emitter_emit(em, &ev))
        return -1;
    yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 1);
    return yaml_emitter_emit(em, &ev) ? 0 : -1;
}

static int yaml_close(yaml_emitter_t *em)
{
    yaml_event_t ev;
    yaml_document_end_event_initialize(&ev, 1);
    if (!yaml_emitter_emit(em, &ev))
        return -1;
    yaml_stream_end_event_initialize(&ev);
    return yaml_emitter_emit(em, &ev) ? 0 : -1;
}

/* libyaml reports a memory failure as YAML_MEMORY_ERROR, a write failure
 * as YAML_WRITER_ERROR */
static int yaml_rc(const yaml_emitter_t *em)
{
    return em->error == YAML_MEMORY_ERROR ? BERTH_ENOMEM : BERTH_EIO;
}

int berth_report_yaml_write(FILE *out, json_t *root)
{
    yaml_emitter_t em;
    memset(&em, 0, sizeof em);
    int bad = yaml_open(&em, out) || emit_json(&em, root) || yaml_close(&em);
    int rc = bad ? yaml_rc(&em) : 0;
    yaml_emitter_delete(&em);
    if (!rc && (fflush(out) || ferror(out)))
        rc = BERTH_EIO;
    return rc;
}

/* ---- the stream ---- */

static int indent_of(size_t flags) { return (int)(flags & 0x1F); }

/* jansson's json_dumps builds the text in a buffer, and when growing that
 * buffer fails while it writes an object's key, jansson 2.14 drops the key
 * and goes on (do_dump ignores dump_string's result): a document missing a
 * key, not an error (found by `make torture`). Dumping through a callback
 * that writes to the FILE allocates nothing of the kind; each newline is
 * followed by `pad` spaces (a nested value of an indented dump; JSON
 * strings hold no raw newline). */
typedef struct dump_to {
    FILE *out;
    int pad;
} dump_to;

static int dump_cb(const char *buffer, size_t size, void *data)
{
    const dump_to *d = data;
    for (size_t i = 0; i < size; i++) {
        if (putc(buffer[i], d->out) == EOF)
            return -1;
        if (buffer[i] == '\n' && d->pad && fprintf(d->out, "%*s", d->pad, "") < 0)
            return -1;
    }
    return 0;
}

/* v as JSON with flags, nested `pad` spaces deep; 0, BERTH_ENOMEM (jansson
 * failed: its loop check allocates) or BERTH_EIO */
static int dump_value(FILE *out, json_t *v, size_t flags, int pad)
{
    dump_to d = {out, pad};
    if (json_dump_callback(v, dump_cb, &d, flags | JSON_ENCODE_ANY))
        return ferror(out) ? BERTH_EIO : BERTH_ENOMEM;
    return ferror(out) ? BERTH_EIO : 0;
}

/* a JSON key as jansson writes it (quoted, escaped) */
static int dump_key(FILE *out, const char *key)
{
    json_t *ks = json_string(key);
    if (!ks)
        return BERTH_ENOMEM;
    int rc = dump_value(out, ks, 0, 0);
    json_decref(ks);
    return rc;
}

int berth_stream_open(FILE *out, berth_stream_format fmt, size_t flags, const char *key,
                      berth_stream **sp)
{
    *sp = NULL;
    berth_stream *s = calloc(1, sizeof *s);
    if (!s)
        return BERTH_ENOMEM;
    s->out = out;
    s->fmt = fmt;
    s->flags = flags;
    if (fmt == BERTH_STREAM_YAML) {
        yaml_event_t ev;
        int bad = yaml_open(&s->em, out);
        if (!bad) {
            yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_MAPPING_STYLE);
            bad = !yaml_emitter_emit(&s->em, &ev) || emit_scalar(&s->em, key, strlen(key), 0);
        }
        if (!bad) {
            yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_SEQUENCE_STYLE);
            bad = !yaml_emitter_emit(&s->em, &ev);
        }
        if (bad) {
            int rc = yaml_rc(&s->em);
            berth_stream_free(s);
            return rc;
        }
        *sp = s;
        return 0;
    }
    int ind = indent_of(flags), rc;
    if (ind)
        fprintf(out, "{\n%*s", ind, "");
    else
        fputc('{', out);
    if ((rc = dump_key(out, key))) {
        free(s);
        return rc;
    }
    fputs(ind || !(flags & JSON_COMPACT) ? ": [" : ":[", out);
    *sp = s;
    return ferror(out) ? BERTH_EIO : 0;
}

int berth_stream_item(berth_stream *s, json_t *item)
{
    if (s->fmt == BERTH_STREAM_YAML) {
        if (s->failed || emit_json(&s->em, item)) {
            s->failed = 1;
            return yaml_rc(&s->em);
        }
        s->written++;
        return 0;
    }
    int ind = indent_of(s->flags);
    if (ind)
        fprintf(s->out, "%s\n%*s", s->written ? "," : "", 2 * ind, "");
    else if (s->written)
        fputs(s->flags & JSON_COMPACT ? "," : ", ", s->out);
    int rc = dump_value(s->out, item, s->flags, 2 * ind);
    if (rc)
        return rc;
    s->written++;
    return 0;
}

int berth_stream_close(berth_stream *s, json_t *tail)
{
    FILE *out = s->out;
    const char *key;
    json_t *val;
    if (s->fmt == BERTH_STREAM_YAML) {
        yaml_event_t ev;
        int bad = s->failed;
        if (!bad) {
            yaml_sequence_end_event_initialize(&ev);
            bad = !yaml_emitter_emit(&s->em, &ev);
        }
        json_object_foreach(tail, key, val)
        {
            if (bad)
                break;
            bad = emit_scalar(&s->em, key, strlen(key), 0) || emit_json(&s->em, val);
        }
        if (!bad) {
            yaml_mapping_end_event_initialize(&ev);
            bad = !yaml_emitter_emit(&s->em, &ev) || yaml_close(&s->em);
        }
        if (bad) {
            s->failed = 1;
            return yaml_rc(&s->em);
        }
        return fflush(out) || ferror(out) ? BERTH_EIO : 0;
    }
    int ind = indent_of(s->flags), compact = (s->flags & JSON_COMPACT) != 0;
    if (ind && s->written)
        fprintf(out, "\n%*s", ind, "");
    fputc(']', out);
    json_object_foreach(tail, key, val)
    {
        int rc;
        fputs(ind ? ",\n" : compact ? "," : ", ", out);
        if (ind)
            fprintf(out, "%*s", ind, "");
        if ((rc = dump_key(out, key)))
            return rc;
        fputs(compact ? ":" : ": ", out);
        if ((rc = dump_value(out, val, s->flags, ind)))
            return rc;
    }
    fputs(ind ? "\n}" : "}", out);
    return ferror(out) ? BERTH_EIO : 0;
}

uint64_t berth_stream_count(const berth_stream *s) { return s->written; }

void berth_stream_free(berth_stream *s)
{
    if (!s)
        return;
    if (s->fmt == BERTH_STREAM_YAML)
        yaml_emitter_delete(&s->em);
    free(s);
}

/* ---- a whole document as text, failures reported ---- */

typedef struct text_buf {
    char *p;
    size_t n, cap;
    int failed; /* sticky: jansson ignores a failed write of an object key */
} text_buf;

static int text_cb(const char *buffer, size_t size, void *data)
{
    text_buf *t = data;
    if (t->failed)
        return -1;
    if (berth_grow_bytes((void **)&t->p, &t->cap, t->n + size + 1, 256)) {
        t->failed = 1;
        return -1;
    }
    memcpy(t->p + t->n, buffer, size);
    t->n += size;
    t->p[t->n] = '\0';
    return 0;
}

char *berth_report_json_text(json_t *root, size_t flags)
{
    text_buf t = {0};
    if (!root || json_dump_callback(root, text_cb, &t, flags | JSON_ENCODE_ANY) || t.failed ||
        !t.p) {
        free(t.p);
        return NULL;
    }
    return t.p;
}
