/* tests/unit/test_decode.c - the typed readers of src/io/decode.c on their
 * own: located errors ("file:line:column: field.path: message") for each
 * reader, required fields located at their parent, field paths through
 * push/pop and list indices (and their bound), unknown fields with the
 * nearest known one, enums, booleans, integer ranges, quantities, labels
 * (syntax), nulls, errors at a named field (berth_dec_fail_field), typed
 * Lists (items without kind), JSON streams, and mapping keys kept once
 * per parse (equal keys share one text, values never do); files mapped
 * or read, and too large ones refused from their size. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "berth/doc.h"

typedef struct fx {
    berth_arena a;
    berth_source src;
    berth_error e;
    berth_dec d;
} fx;

static berth_node *load(fx *f, const char *text)
{
    berth_arena_init(&f->a, 0);
    berth_error_clear(&f->e);
    assert_int_equal(berth_doc_load_buffer(&f->a, "t.yaml", text, strlen(text), &f->src, &f->e), 0);
    berth_dec_init(&f->d, &f->a, "t.yaml", &f->e);
    assert_true(f->src.ndocs >= 1);
    return f->src.docs[0];
}

#define assert_msg(f, want) \
    do { \
        if (strcmp((f)->e.msg, (want))) \
            fail_msg("message\n  got:  %s\n  want: %s", (f)->e.msg, (want)); \
    } while (0)

static const char doc1[] =
    "spec:\n"                                   /* 1 */
    "  name: web\n"                             /* 2 */
    "  pools:\n"                                /* 3 */
    "  - {name: a, count: 3}\n"                 /* 4 */
    "  - {name: b, count: x, size: 2Gi}\n"      /* 5 */
    "  - {name: c, count: 99, mode: Fast}\n"    /* 6 */
    "  flag: maybe\n"                           /* 7 */
    "  mem: 1.5.3Gi\n";                         /* 8 */

static void test_located_errors(void **state)
{
    fx f;
    berth_node *root = load(&f, doc1);
    berth_node *spec = NULL, *pools = NULL;
    size_t p0 = berth_dec_push(&f.d, "spec");
    assert_int_equal(berth_dec_map(&f.d, root, "spec", 1, &spec), 0);
    berth_dec_pop(&f.d, p0);
    p0 = berth_dec_push(&f.d, "spec");
    assert_int_equal(berth_dec_seq(&f.d, spec, "pools", 1, &pools), 0);
    assert_int_equal(pools->n, 3);
    int64_t v = 0;
    size_t p1 = berth_dec_push(&f.d, "pools");
    berth_dec_push_index(&f.d, 0);
    assert_int_equal(berth_dec_int(&f.d, pools->items[0], "count", 1, 0, 10, &v), 0);
    assert_int_equal(v, 3);
    berth_dec_pop(&f.d, p1);
    /* not an integer, at the value */
    p1 = berth_dec_push(&f.d, "pools");
    berth_dec_push_index(&f.d, 1);
    assert_int_equal(berth_dec_int(&f.d, pools->items[1], "count", 1, 0, 10, &v), BERTH_EINVAL);
    assert_msg(&f, "t.yaml:5:22: spec.pools[1].count: expected an integer, got 'x'");
    assert_int_equal(v, 3); /* unchanged */
    berth_dec_pop(&f.d, p1);
    /* out of range */
    p1 = berth_dec_push(&f.d, "pools");
    berth_dec_push_index(&f.d, 2);
    assert_int_equal(berth_dec_int(&f.d, pools->items[2], "count", 1, 0, 10, &v), BERTH_EINVAL);
    assert_msg(&f, "t.yaml:6:22: spec.pools[2].count: 99 is out of range [0, 10]");
    /* an enum, with the choices in the message */
    static const char *const modes[] = {"Slow", "Steady", NULL};
    int m = -1;
    assert_int_equal(berth_dec_enum(&f.d, pools->items[2], "mode", 0, modes, &m), BERTH_EINVAL);
    assert_non_null(strstr(f.e.msg, "t.yaml:6:32: spec.pools[2].mode: expected "));
    assert_non_null(strstr(f.e.msg, "Steady"));
    assert_non_null(strstr(f.e.msg, "got 'Fast'"));
    assert_int_equal(m, -1);
    berth_dec_pop(&f.d, p1);
    /* the path is back to "spec" after every pop */
    assert_string_equal(f.d.path, "spec");
    /* a required field that is missing is located at its parent map */
    const char *s = NULL;
    assert_int_equal(berth_dec_str(&f.d, spec, "image", 1, &s), BERTH_EINVAL);
    assert_msg(&f, "t.yaml:2:3: spec.image: required field is missing");
    /* absent and optional: no error, out unchanged */
    s = "keep";
    assert_int_equal(berth_dec_str(&f.d, spec, "image", 0, &s), 0);
    assert_string_equal(s, "keep");
    /* wrong shapes */
    assert_int_equal(berth_dec_map(&f.d, spec, "name", 1, &pools), BERTH_EINVAL);
    assert_msg(&f, "t.yaml:2:9: spec.name: expected a mapping, got a scalar");
    assert_int_equal(berth_dec_str(&f.d, spec, "pools", 1, &s), BERTH_EINVAL);
    assert_msg(&f, "t.yaml:4:3: spec.pools: expected a string, got a list");
    int b = 0;
    assert_int_equal(berth_dec_bool(&f.d, spec, "flag", 1, &b), BERTH_EINVAL);
    assert_msg(&f, "t.yaml:7:9: spec.flag: expected true or false, got 'maybe'");
    berth_quantity q;
    assert_int_equal(berth_dec_quantity(&f.d, spec, "mem", 1, &q), BERTH_EINVAL);
    assert_non_null(strstr(f.e.msg, "t.yaml:8:8: spec.mem: invalid quantity '1.5.3Gi'"));
    berth_dec_pop(&f.d, p0);
    assert_int_equal(f.d.plen, 0);
    /* without a node: the file and the path only */
    assert_int_equal(berth_dec_fail(&f.d, NULL, "no %s", "Site"), BERTH_EINVAL);
    assert_msg(&f, "t.yaml: (document): no Site");
    berth_arena_free(&f.a);
}

static void test_unknown_fields(void **state)
{
    fx f;
    berth_node *root = load(&f, "spec: {replicas: 2, selectr: {}}\n");
    berth_node *spec = berth_node_get(root, "spec");
    static const char *const known[] = {"replicas", "selector", "template", NULL};
    size_t p = berth_dec_push(&f.d, "spec");
    assert_int_equal(berth_dec_known_fields(&f.d, spec, known), BERTH_EINVAL);
    assert_msg(&f, "t.yaml:1:21: spec.selectr: unknown field 'selectr' (did you mean 'selector'?)");
    static const char *const far[] = {"replicas", "template", NULL};
    assert_int_equal(berth_dec_known_fields(&f.d, spec, far), BERTH_EINVAL);
    assert_msg(&f, "t.yaml:1:21: spec.selectr: unknown field 'selectr'");
    static const char *const all[] = {"replicas", "selectr", NULL};
    assert_int_equal(berth_dec_known_fields(&f.d, spec, all), 0);
    berth_dec_pop(&f.d, p);
    berth_arena_free(&f.a);
}

static void test_nulls_and_bools(void **state)
{
    fx f;
    berth_node *root = load(&f, "a: ~\nb: null\nc: \"null\"\nd:\ne: true\nf: false\ng: 'true'\n");
    assert_null(berth_node_get(root, "a"));
    assert_null(berth_node_get(root, "b"));
    assert_null(berth_node_get(root, "d"));
    berth_node *c = berth_node_get(root, "c");
    assert_non_null(c); /* a quoted "null" is a string */
    assert_false(berth_node_is_null(c));
    assert_string_equal(c->str, "null");
    int v = -1;
    assert_int_equal(berth_dec_bool(&f.d, root, "e", 1, &v), 0);
    assert_int_equal(v, 1);
    assert_int_equal(berth_dec_bool(&f.d, root, "f", 1, &v), 0);
    assert_int_equal(v, 0);
    /* a null required field is missing */
    const char *s;
    assert_int_equal(berth_dec_str(&f.d, root, "b", 1, &s), BERTH_EINVAL);
    assert_non_null(strstr(f.e.msg, "b: required field is missing"));
    berth_arena_free(&f.a);
}

static void test_paths(void **state)
{
    fx f;
    load(&f, "a: 1\n");
    size_t p0 = berth_dec_push(&f.d, "spec");
    size_t p1 = berth_dec_push(&f.d, "containers");
    berth_dec_push_index(&f.d, 12);
    berth_dec_push(&f.d, "ports");
    assert_string_equal(f.d.path, "spec.containers[12].ports");
    size_t p2 = berth_dec_push_index(&f.d, 0);
    berth_dec_push_index(&f.d, 18446744073709551615u);
    assert_string_equal(f.d.path, "spec.containers[12].ports[0][18446744073709551615]");
    berth_dec_pop(&f.d, p2);
    assert_string_equal(f.d.path, "spec.containers[12].ports");
    berth_dec_pop(&f.d, p1);
    assert_string_equal(f.d.path, "spec");
    berth_dec_pop(&f.d, p0);
    assert_string_equal(f.d.path, "");
    /* a path longer than the buffer is cut, never overrun, and pops back */
    char name[100];
    memset(name, 'x', sizeof name - 1);
    name[sizeof name - 1] = '\0';
    size_t marks[20];
    for (int i = 0; i < 20; i++) {
        marks[i] = berth_dec_push(&f.d, name);
        berth_dec_push_index(&f.d, (size_t)i);
        assert_true(f.d.plen < sizeof f.d.path);
        assert_int_equal(strlen(f.d.path), f.d.plen);
    }
    for (int i = 19; i >= 0; i--)
        berth_dec_pop(&f.d, marks[i]);
    assert_int_equal(f.d.plen, 0);
    assert_string_equal(f.d.path, "");
    berth_arena_free(&f.a);
}

/* berth_dec_fail_field: the error at the field's value with the field on
 * the path (at the map when the field is absent); the path is popped. */
static void test_fail_field(void **state)
{
    (void)state;
    fx f;
    berth_node *doc = load(&f, "spec:\n  mode: fast\n");
    berth_node *spec = berth_node_get(doc, "spec");
    size_t p = berth_dec_push(&f.d, "spec");
    assert_int_equal(berth_dec_fail_field(&f.d, spec, "mode", "unknown mode '%s'", "fast"),
                     BERTH_EINVAL);
    assert_msg(&f, "t.yaml:2:9: spec.mode: unknown mode 'fast'");
    assert_string_equal(f.d.path, "spec");
    assert_int_equal(berth_dec_fail_field(&f.d, spec, "speed", "needed with mode"), BERTH_EINVAL);
    assert_msg(&f, "t.yaml:2:3: spec.speed: needed with mode");
    assert_string_equal(f.d.path, "spec");
    berth_dec_pop(&f.d, p);
    berth_arena_free(&f.a);
}

static void test_labels(void **state)
{
    fx f;
    berth_node *root = load(&f,
                            "metadata:\n"
                            "  labels: {b: two, a: one}\n"
                            "  bad: {\"-x\": v}\n"
                            "  badv: {k: \"sp ace\"}\n");
    berth_node *md = berth_node_get(root, "metadata");
    size_t p = berth_dec_push(&f.d, "metadata");
    berth_labels l;
    assert_int_equal(berth_dec_labels(&f.d, md, "labels", &l, 1), 0);
    assert_int_equal(l.n, 2);
    assert_int_equal(berth_dec_labels(&f.d, md, "bad", &l, 1), BERTH_EINVAL);
    assert_non_null(strstr(f.e.msg, "t.yaml:3:9: metadata.bad.-x: "));
    assert_non_null(strstr(f.e.msg, "invalid label key '-x'"));
    assert_int_equal(berth_dec_labels(&f.d, md, "badv", &l, 1), BERTH_EINVAL);
    assert_non_null(strstr(f.e.msg, "invalid label value 'sp ace'"));
    /* not validated: any text */
    assert_int_equal(berth_dec_labels(&f.d, md, "badv", &l, 0), 0);
    assert_int_equal(berth_dec_labels(&f.d, md, "absent", &l, 1), 0);
    assert_int_equal(l.n, 0);
    berth_dec_pop(&f.d, p);
    berth_arena_free(&f.a);
}

typedef struct seen_items {
    int n;
    char kinds[4][32];
} seen_items;

static int on_item(void *ctx, berth_dec *d, const berth_node *item, int depth)
{
    seen_items *s = ctx;
    const char *kind = NULL;
    int rc = berth_dec_kind(d, item, &kind);
    if (rc)
        return rc;
    if (s->n < 4)
        snprintf(s->kinds[s->n], 32, "%s", kind);
    s->n++;
    int64_t v;
    return berth_dec_int(d, item, "n", 0, 0, 5, &v);
}

/* A typed List (NodeList): items without kind get the list's item kind;
 * errors inside name items[i]. */
static void test_typed_list(void **state)
{
    fx f;
    berth_node *root = load(&f,
                            "apiVersion: v1\n"
                            "kind: NodeList\n"
                            "items:\n"
                            "- metadata: {name: a}\n"
                            "- metadata: {name: b}\n"
                            "  n: 9\n");
    seen_items s = {0};
    assert_int_equal(berth_dec_list(&f.d, root, 0, on_item, &s), BERTH_EINVAL);
    assert_int_equal(s.n, 2);
    assert_string_equal(s.kinds[0], "Node");
    assert_string_equal(s.kinds[1], "Node");
    assert_msg(&f, "t.yaml:6:6: items[1].n: 9 is out of range [0, 5]");
    assert_true(berth_kind_is_list("PodList"));
    assert_true(berth_kind_is_list("List"));
    assert_false(berth_kind_is_list("Listing"));
    berth_arena_free(&f.a);
}

/* A JSON stream: several values, each a document with its own lines. */
static void test_json_stream(void **state)
{
    fx f;
    load(&f, "{\"kind\": \"A\"}\n{\n  \"kind\": \"B\",\n  \"n\": \"x\"\n}\n");
    assert_int_equal(f.src.ndocs, 2);
    berth_node *b = f.src.docs[1];
    int64_t v;
    assert_int_equal(berth_dec_int(&f.d, b, "n", 1, 0, 5, &v), BERTH_EINVAL);
    assert_msg(&f, "t.yaml:4:8: n: expected an integer, got 'x'");
    berth_arena_free(&f.a);
    /* a syntax error is located too */
    berth_arena_init(&f.a, 0);
    static const char bad[] = "a: [1, 2\nb: 3\n";
    assert_int_equal(berth_doc_load_buffer(&f.a, "t.yaml", bad, sizeof bad - 1, &f.src, &f.e),
                     BERTH_EINVAL);
    assert_non_null(strstr(f.e.msg, "t.yaml:"));
    berth_arena_free(&f.a);
}

/* Equal mapping keys share one text (io/yaml.c intern_key), in YAML and
 * JSON alike; keys that differ (also past a NUL, and across the key
 * table's growth) do not, and a key holding a NUL has its own; a value
 * equal to a key is its own copy, and so are scalars of sequences. */
static void test_keys_shared(void **state)
{
    fx f;
    char text[64 * 1024];
    size_t o = 0;
    o += (size_t)snprintf(text + o, sizeof text - o, "items:\n");
    for (int i = 0; i < 700; i++)
        o += (size_t)snprintf(text + o, sizeof text - o,
                              "- {name: n%d, k%d: v, \"b\\0c\": 1, a: name, l: [name, {b: 2}]}\n", i, i);
    assert_true(o < sizeof text);
    berth_node *root = load(&f, text);
    const berth_node *items = berth_node_get(root, "items");
    assert_non_null(items);
    assert_int_equal(items->n, 700);
    const berth_node *first = items->items[0];
    for (size_t i = 0; i < items->n; i++) {
        const berth_node *m = items->items[i];
        assert_int_equal(m->n, 5);
        char want[32];
        snprintf(want, sizeof want, "k%u", (unsigned)i);
        assert_string_equal(m->entries[1].key->str, want);
        for (size_t j = 0; j < m->n; j++)
            if (j != 1 && j != 2) /* k<i>; "b\0c": a key holding a NUL */
                assert_ptr_equal(m->entries[j].key->str, first->entries[j].key->str);
            else if (i)
                assert_ptr_not_equal(m->entries[j].key->str, first->entries[j].key->str);
        /* "b\0c" and "b": two keys */
        const berth_node *inner = m->entries[4].value->items[1];
        assert_string_equal(m->entries[2].key->str, "b");
        assert_string_equal(inner->entries[0].key->str, "b");
        assert_ptr_not_equal(m->entries[2].key->str, inner->entries[0].key->str);
        assert_ptr_equal(inner->entries[0].key->str, first->entries[4].value->items[1]->entries[0].key->str);
        assert_string_equal(m->entries[3].key->str, "a");
        /* values are never shared, though equal to a key */
        assert_string_equal(m->entries[3].value->str, "name");
        assert_ptr_not_equal(m->entries[3].value->str, m->entries[0].key->str);
        assert_ptr_not_equal(m->entries[4].value->items[0]->str, m->entries[0].key->str);
        if (i)
            assert_ptr_not_equal(m->entries[3].value->str, first->entries[3].value->str);
    }
    /* the k<i> keys grew the table past its first size: each still one text */
    assert_ptr_not_equal(items->items[1]->entries[1].key->str,
                         items->items[2]->entries[1].key->str);
    berth_arena_free(&f.a);
    /* JSON: the same */
    load(&f, "{\"x\": {\"name\": 1}, \"y\": {\"name\": \"name\"}}\n");
    const berth_node *x = berth_node_get(f.src.docs[0], "x"), *y = berth_node_get(f.src.docs[0], "y");
    assert_ptr_equal(x->entries[0].key->str, y->entries[0].key->str);
    assert_ptr_not_equal(y->entries[0].value->str, y->entries[0].key->str);
    berth_arena_free(&f.a);
}

/* berth_doc_load_file maps a regular file (io/yaml.c load_mapped) and
 * reads anything else: the same documents, lines and columns either way
 * (a FIFO takes the read path); a file of BERTH_DOC_MAX_BYTES or more is
 * refused before it is read (a sparse file: no disk used). */
static void test_load_file(void **state)
{
    (void)state;
    static const char text[] = "kind: A\nmetadata: {name: a}\n---\n\n  # c\nkind: B\nx: [1, 2]\n";
    char dir[] = "/tmp/berth-test-decode-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[256], fifo[256], big[256];
    snprintf(path, sizeof path, "%s/in.yaml", dir);
    snprintf(fifo, sizeof fifo, "%s/in.fifo", dir);
    snprintf(big, sizeof big, "%s/big.yaml", dir);
    FILE *w = fopen(path, "w");
    assert_non_null(w);
    fputs(text, w);
    fclose(w);
    fx f;
    berth_arena_init(&f.a, 0);
    berth_error_clear(&f.e);
    assert_int_equal(berth_doc_load_file(&f.a, path, &f.src, &f.e), 0);
    assert_int_equal(f.src.ndocs, 2);
    assert_string_equal(berth_node_get(f.src.docs[1], "kind")->str, "B");
    const berth_node *x = berth_node_get(f.src.docs[1], "x");
    assert_int_equal(x->line, 7);
    assert_int_equal(x->col, 4);
    assert_string_equal(x->items[1]->str, "2");
    berth_arena_free(&f.a);

    /* a FIFO: read, not mapped */
    assert_int_equal(mkfifo(fifo, 0600), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        FILE *o = fopen(fifo, "w");
        if (o) {
            fputs(text, o);
            fclose(o);
        }
        _exit(0);
    }
    berth_arena_init(&f.a, 0);
    assert_int_equal(berth_doc_load_file(&f.a, fifo, &f.src, &f.e), 0);
    int st;
    waitpid(pid, &st, 0);
    assert_int_equal(f.src.ndocs, 2);
    assert_int_equal(berth_node_get(f.src.docs[1], "x")->line, 7);
    berth_arena_free(&f.a);

    /* too large: refused from its size */
    int fd = open(big, O_CREAT | O_WRONLY | O_TRUNC, 0600);
    assert_true(fd >= 0);
    assert_int_equal(ftruncate(fd, (off_t)BERTH_DOC_MAX_BYTES + 1), 0);
    close(fd);
    berth_arena_init(&f.a, 0);
    assert_int_equal(berth_doc_load_file(&f.a, big, &f.src, &f.e), BERTH_ELIMIT);
    assert_non_null(strstr(f.e.msg, "larger than 268435456 bytes"));
    berth_arena_free(&f.a);
    unlink(path);
    unlink(fifo);
    unlink(big);
    rmdir(dir);
}

/* A map's duplicate keys (io/yaml.c first_duplicate): the first entry in
 * document order whose key equals an earlier one is named, for small maps
 * (every pair compared) and large ones (sorted), each in O(n log n). */
static void test_duplicate_keys(void **state)
{
    (void)state;
    enum { N = 2000 };
    static char text[N * 16 + 64];
    for (int dup_at = 0; dup_at < 2; dup_at++) {
        for (int n = 7; n <= N; n = n == 7 ? 17 : n == 17 ? N : N + 1) {
            size_t off = 0;
            for (int i = 0; i < n; i++) {
                int k = i;
                if (i == n - 1)
                    k = 2;                       /* equals entry 2: reported unless ... */
                if (dup_at && i == n - 2)
                    k = 3;                       /* ... this earlier one comes first */
                off += (size_t)snprintf(text + off, sizeof text - off, "k%d: v\n", k);
            }
            fx f;
            berth_arena_init(&f.a, 0);
            berth_error_clear(&f.e);
            assert_int_equal(berth_doc_load_buffer(&f.a, "t.yaml", text, off, &f.src, &f.e),
                             BERTH_EINVAL);
            char want[64];
            snprintf(want, sizeof want, "t.yaml:%d:1: duplicate key 'k%d'", dup_at ? n - 1 : n,
                     dup_at ? 3 : 2);
            assert_msg(&f, want);
            berth_arena_free(&f.a);
        }
    }
    /* N distinct keys: no error */
    size_t off = 0;
    for (int i = 0; i < N; i++)
        off += (size_t)snprintf(text + off, sizeof text - off, "k%d: v\n", (i * 7) % N);
    fx f;
    berth_arena_init(&f.a, 0);
    berth_error_clear(&f.e);
    assert_int_equal(berth_doc_load_buffer(&f.a, "t.yaml", text, off, &f.src, &f.e), 0);
    assert_int_equal(f.src.docs[0]->n, N);
    berth_arena_free(&f.a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_located_errors),
        cmocka_unit_test(test_unknown_fields),
        cmocka_unit_test(test_nulls_and_bools),
        cmocka_unit_test(test_paths),
        cmocka_unit_test(test_fail_field),
        cmocka_unit_test(test_labels),
        cmocka_unit_test(test_typed_list),
        cmocka_unit_test(test_json_stream),
        cmocka_unit_test(test_keys_shared),
        cmocka_unit_test(test_load_file),
        cmocka_unit_test(test_duplicate_keys),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
