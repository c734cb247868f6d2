/* tests/unit/test_report_stream.c - streamed documents (report/stream.c):
 * the streamed JSON equals jansson's dump of the whole tree, the streamed
 * YAML equals berth_report_yaml_write of the whole tree, and the YAML read
 * back with berth's own decoder (src/io) is the JSON key for key, value
 * for value (strings that look like numbers, bools or null stay strings);
 * then `kube schedule`'s report streamed as YAML and as JSON, default and
 * --detail all, over the examples. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "berth/doc.h"
#include "berth/kube.h"
#include "berth/kube_report.h"
#include "berth/report.h"

/* a YAML scalar that a reader takes for something other than a string */
static int looks_typed(const char *s)
{
    static const char *const special[] = {"", "~", "null", "Null", "NULL", "true", "True",
                                          "TRUE", "false", "False", "FALSE", "yes", "Yes",
                                          "no", "No", "on", "On", "off", "Off", "y", "n", NULL};
    for (int i = 0; special[i]; i++)
        if (!strcmp(s, special[i]))
            return 1;
    char *end;
    strtod(s, &end);
    return end != s && *end == '\0';
}

/* the YAML node n read back is the JSON value j; counts values compared */
static void same(const berth_node *n, json_t *j, const char *where, size_t *count)
{
    char buf[64];
    ++*count;
    switch (json_typeof(j)) {
    case JSON_OBJECT: {
        if (n->type != BERTH_NODE_MAP || n->n != json_object_size(j))
            fail_msg("%s: a map of %zu entries expected (type %d, %zu)", where,
                     json_object_size(j), (int)n->type, n->n);
        size_t i = 0;
        const char *k;
        json_t *v;
        json_object_foreach(j, k, v)
        {
            assert_string_equal(n->entries[i].key->str, k);
            same(n->entries[i].value, v, k, count);
            i++;
        }
        return;
    }
    case JSON_ARRAY: {
        if (n->type != BERTH_NODE_SEQ || n->n != json_array_size(j))
            fail_msg("%s: a sequence of %zu expected", where, json_array_size(j));
        size_t i;
        json_t *v;
        json_array_foreach(j, i, v) same(n->items[i], v, where, count);
        return;
    }
    default:
        break;
    }
    if (n->type != BERTH_NODE_SCALAR)
        fail_msg("%s: a scalar expected", where);
    switch (json_typeof(j)) {
    case JSON_STRING:
        assert_string_equal(n->str, json_string_value(j));
        if (!n->quoted && looks_typed(n->str))
            fail_msg("%s: string '%s' written unquoted", where, n->str);
        return;
    case JSON_INTEGER:
        snprintf(buf, sizeof buf, "%" JSON_INTEGER_FORMAT, json_integer_value(j));
        break;
    case JSON_REAL:
        assert_false(n->quoted);
        assert_true(strtod(n->str, NULL) == json_real_value(j));
        return;
    case JSON_TRUE:
        snprintf(buf, sizeof buf, "true");
        break;
    case JSON_FALSE:
        snprintf(buf, sizeof buf, "false");
        break;
    default:
        snprintf(buf, sizeof buf, "null");
        break;
    }
    assert_false(n->quoted);
    assert_string_equal(n->str, buf);
}

/* YAML text -> compared with the JSON document; returns values compared */
static size_t yaml_equals_json(const char *yaml, size_t ylen, json_t *doc)
{
    berth_arena a;
    berth_arena_init(&a, 0);
    berth_source src;
    berth_error e;
    berth_error_clear(&e);
    int rc = berth_doc_load_buffer(&a, "out.yaml", yaml, ylen, &src, &e);
    if (rc)
        fail_msg("YAML does not parse: %s", e.msg);
    assert_int_equal(src.ndocs, 1);
    size_t count = 0;
    same(src.docs[0], doc, "root", &count);
    berth_arena_free(&a);
    return count;
}

/* a document with awkward strings: numbers, bools, null, empty, colons,
 * quotes, newlines, non-ASCII */
static json_t *awkward(void)
{
    json_error_t je;
    json_t *j = json_loads(
        "{\"items\": [{\"a\": \"123\", \"b\": \"true\", \"c\": \"null\", \"d\": \"\", "
        "\"e\": \"x: y\", \"f\": \"say \\\"hi\\\"\\nline 2\", \"g\": \"caf\\u00e9\", "
        "\"h\": 42, \"i\": -7, \"j\": 0.768, \"k\": true, \"l\": false, \"m\": null, "
        "\"n\": [], \"o\": {}, \"1.5\": \"1e3\", \"p\": [\"no\", \"- dash\", \"#hash\"]}, "
        "{\"q\": {\"r\": {\"s\": [1, [2, [3]]]}}}, \"plain\", 5], "
        "\"warnings\": [\"skipped 2 ConfigMap\"], \"at\": \"2024-05-01T12:00:00Z\"}",
        JSON_PRESERVE_ORDER, &je);
    assert_non_null(j);
    return j;
}

/* text of a stream over doc's "items" with the rest as the tail */
static char *streamed(json_t *doc, berth_stream_format fmt, size_t flags, size_t *len)
{
    char *text = NULL;
    FILE *f = open_memstream(&text, len);
    assert_non_null(f);
    berth_stream *s;
    assert_int_equal(berth_stream_open(f, fmt, flags, "items", &s), 0);
    size_t i;
    json_t *v;
    json_array_foreach(json_object_get(doc, "items"), i, v) assert_int_equal(berth_stream_item(s, v), 0);
    assert_int_equal(berth_stream_count(s), json_array_size(json_object_get(doc, "items")));
    json_t *tail = json_deep_copy(doc);
    json_object_del(tail, "items");
    assert_int_equal(berth_stream_close(s, tail), 0);
    json_decref(tail);
    berth_stream_free(s);
    assert_int_equal(fclose(f), 0);
    return text;
}

static char *whole_yaml(json_t *doc, size_t *len)
{
    char *text = NULL;
    FILE *f = open_memstream(&text, len);
    assert_non_null(f);
    assert_int_equal(berth_report_yaml_write(f, doc), 0);
    assert_int_equal(fclose(f), 0);
    return text;
}

static void test_stream_json_equals_dump(void **state)
{
    (void)state;
    json_t *doc = awkward();
    const size_t flags[] = {JSON_INDENT(2) | JSON_PRESERVE_ORDER,
                            JSON_COMPACT | JSON_PRESERVE_ORDER, JSON_PRESERVE_ORDER,
                            JSON_INDENT(4) | JSON_PRESERVE_ORDER | BERTH_JSON_REAL};
    for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++) {
        size_t len;
        char *got = streamed(doc, BERTH_STREAM_JSON, flags[i], &len);
        char *want = json_dumps(doc, flags[i]);
        assert_string_equal(got, want);
        free(got);
        free(want);
    }
    json_decref(doc);
}

static void test_stream_yaml_equals_whole_and_json(void **state)
{
    (void)state;
    json_t *doc = awkward();
    size_t glen, wlen;
    char *got = streamed(doc, BERTH_STREAM_YAML, 0, &glen);
    char *want = whole_yaml(doc, &wlen);
    assert_string_equal(got, want);
    assert_true(yaml_equals_json(got, glen, doc) > 30);
    free(got);
    free(want);
    /* no items: an empty sequence */
    json_t *empty = json_pack("{s:[], s:[]}", "items", "warnings");
    got = streamed(empty, BERTH_STREAM_YAML, 0, &glen);
    want = whole_yaml(empty, &wlen);
    assert_string_equal(got, want);
    yaml_equals_json(got, glen, empty);
    free(got);
    free(want);
    got = streamed(empty, BERTH_STREAM_JSON, JSON_INDENT(2) | JSON_PRESERVE_ORDER, &glen);
    want = json_dumps(empty, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    assert_string_equal(got, want);
    free(got);
    free(want);
    json_decref(empty);
    json_decref(doc);
}

/* kube schedule FILE with the report streamed in fmt; the text */
static char *kube_streamed(const char *path, berth_stream_format fmt, int detail, size_t *len)
{
    berth_kcluster k;
    berth_kube_init(&k);
    berth_error e;
    berth_error_clear(&e);
    berth_source src;
    assert_int_equal(berth_doc_load_file(&k.arena, path, &src, &e), 0);
    assert_int_equal(berth_kube_load(&k, &src, 0, &e), 0);
    assert_int_equal(berth_kube_expand(&k, &e), 0);
    char *text = NULL;
    FILE *f = open_memstream(&text, len);
    berth_kube_report *rep = berth_kube_report_new(detail);
    assert_non_null(rep);
    assert_int_equal(berth_kube_report_stream_format(rep, f, fmt, JSON_INDENT(2) | JSON_PRESERVE_ORDER), 0);
    berth_kube_options opt = {.tiebreak = BERTH_TIE_FIRST, .detail = detail, .reasons = 1,
                              .on_decision = berth_kube_report_decision, .ctx = rep,
                              .preempt = 1};
    int rc = berth_kube_schedule(&k, &opt, &e);
    assert_true(rc == 0 || rc == BERTH_ENOFIT);
    assert_int_equal(berth_kube_report_status(rep), 0);
    json_t *tail = json_object();
    assert_int_equal(berth_report_set_warnings(tail, &k.skipped), 0);
    assert_int_equal(berth_kube_report_stream_end(rep, tail), 0);
    json_decref(tail);
    berth_kube_report_free(rep);
    berth_kube_free(&k);
    assert_int_equal(fclose(f), 0);
    return text;
}

static void test_kube_yaml_equals_json(void **state)
{
    (void)state;
    const char *files[] = {"examples/kube/workloads.yaml", "examples/kube/preemption.yaml",
                           "examples/kube/kubectl-list.yaml", "examples/kube/volume-zone.yaml"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++)
        for (int detail = 0; detail <= 1; detail++) {
            size_t jlen, ylen;
            char *js = kube_streamed(files[i], BERTH_STREAM_JSON, detail, &jlen);
            char *ys = kube_streamed(files[i], BERTH_STREAM_YAML, detail, &ylen);
            json_error_t je;
            json_t *doc = json_loads(js, JSON_PRESERVE_ORDER, &je);
            if (!doc)
                fail_msg("%s: streamed JSON does not parse: %s", files[i], je.text);
            assert_true(json_array_size(json_object_get(doc, "pods")) > 0);
            size_t n = yaml_equals_json(ys, ylen, doc);
            assert_true(n > 10 * json_array_size(json_object_get(doc, "pods")));
            /* and the YAML is what the whole tree gives */
            size_t wlen;
            char *whole = whole_yaml(doc, &wlen);
            assert_string_equal(ys, whole);
            /* --detail all adds fields; the default has none of them */
            json_t *p0 = json_array_get(json_object_get(doc, "pods"), 0);
            assert_true((json_object_get(p0, "scores") != NULL) == detail);
            assert_non_null(json_object_get(p0, "top"));
            free(whole);
            json_decref(doc);
            free(js);
            free(ys);
        }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stream_json_equals_dump),
        cmocka_unit_test(test_stream_yaml_equals_whole_and_json),
        cmocka_unit_test(test_kube_yaml_equals_json),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
