/* tests/unit/test_walk.c - the kind dispatcher every loader uses
 * (berth_dec_walk, io/walk.c): typed lists (items without kind and
 * apiVersion take the list's, as the API server returns them) and nested
 * Lists, kinds not in the table skipped and counted or, with --strict or
 * without a skip table, the located error with the hint built from the
 * table, skipped kinds with a note, the apiVersion check and its wording,
 * the strict top-level field check (per kind or always), the fallback that
 * hands other kinds to the next loader, plain-List walkers and the
 * replaced apiVersion check; each walk also streamed (berth_dec_walk_buffer)
 * with the same outcome, and what streaming alone does. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "berth/doc.h"

/* What the handlers saw, in order: "Kind/name@path#tag" per document. */
typedef struct seen {
    char log[2048];
    size_t n;
    int other;                /* documents handed to the fallback */
    char other_kinds[256];
} seen;

static void note(seen *s, const char *fmt, const char *a, const char *b, const char *c, int tag)
{
    int w = snprintf(s->log + s->n, sizeof s->log - s->n, fmt, a, b, c, tag);
    assert_true(w > 0 && (size_t)w < sizeof s->log - s->n);
    s->n += (size_t)w;
}

static int handle(void *ctx, berth_dec *d, const berth_node *doc, const berth_kind_handler *h)
{
    const berth_node *meta = berth_node_get(doc, "metadata");
    const berth_node *name = meta ? berth_node_get(meta, "name") : NULL;
    const berth_node *api = berth_node_get(doc, "apiVersion");
    note(ctx, "%s/%s@%s#%d ", h->kind, name ? name->str : "?", d->plen ? d->path : "-", h->tag);
    /* a typed list's item carries the list's apiVersion */
    assert_non_null(api);
    return 0;
}

static int fallback(void *ctx, berth_dec *d, const berth_node *doc, const char *kind)
{
    seen *s = ctx;
    s->other++;
    size_t n = strlen(s->other_kinds);
    snprintf(s->other_kinds + n, sizeof s->other_kinds - n, "%s%s", n ? "," : "", kind);
    return 0;
}

static const char *const v1[] = {"v1", NULL};
static const char *const apps[] = {"apps/v1", "apps/v1beta2", NULL};
static const char *const top[] = {"apiVersion", "kind", "metadata", "spec", NULL};
static const char *const list_fields[] = {"apiVersion", "kind", "metadata", "items", NULL};

static const berth_kind_handler kinds[] = {
    {"Node", v1, NULL, top, 0, handle, NULL, 1},
    {"Deployment", apps, NULL, top, 0, handle, NULL, 2},
    {"Gizmo", v1, "v1 (nothing else)", top, BERTH_KIND_STRICT, handle, NULL, 3},
    {"CronJob", NULL, NULL, NULL, 0, NULL, "not expanded: runs later", 0},
};

static const berth_walker walker = {"test", kinds, 4, 0, list_fields, NULL, NULL};

typedef struct run {
    berth_arena a;
    berth_source src;
    berth_error e;
    berth_skips skips;
    seen s;
    int rc;
    size_t ndocs;
} run;

/* Walks text through w, streamed (berth_dec_walk_buffer) when stream;
 * strict as given; with_skips: a skip table. */
static void walk_one(run *r, const berth_walker *w, const char *text, int strict, int with_skips,
                     int stream)
{
    memset(r, 0, sizeof *r);
    berth_arena_init(&r->a, 0);
    berth_error_clear(&r->e);
    berth_dec d;
    berth_dec_init(&d, &r->a, "t.yaml", &r->e);
    d.strict = strict;
    d.skips = with_skips ? &r->skips : NULL;
    if (stream) {
        r->rc = berth_dec_walk_buffer(&d, text, strlen(text), w, &r->s, &r->ndocs);
        return;
    }
    assert_int_equal(berth_doc_load_buffer(&r->a, "t.yaml", text, strlen(text), &r->src, &r->e), 0);
    r->ndocs = r->src.ndocs;
    r->rc = berth_dec_walk_source(&d, &r->src, w, &r->s);
}

static void done(run *r)
{
    berth_skips_free(&r->skips);
    berth_arena_free(&r->a);
}

/* walk_one of the whole tree; then streamed, which must see the same
 * documents in the same order, with the same paths, skips and error. */
static void walk(run *r, const berth_walker *w, const char *text, int strict, int with_skips)
{
    run s;
    walk_one(&s, w, text, strict, with_skips, 1);
    walk_one(r, w, text, strict, with_skips, 0);
    assert_int_equal(s.rc, r->rc);
    assert_string_equal(s.e.msg, r->e.msg);
    assert_string_equal(s.s.log, r->s.log);
    assert_int_equal(s.s.other, r->s.other);
    assert_string_equal(s.s.other_kinds, r->s.other_kinds);
    assert_int_equal(berth_skips_total(&s.skips), berth_skips_total(&r->skips));
    if (!r->rc)
        assert_int_equal(s.ndocs, r->ndocs);
    done(&s);
}

static void expect_error(const run *r, const char *msg)
{
    assert_int_equal(r->rc, BERTH_EINVAL);
    if (!strstr(r->e.msg, msg))
        fail_msg("got '%s', want '%s'", r->e.msg, msg);
}

/* A NodeList as kubectl prints it: items without kind or apiVersion take
 * the list's; a List inside a List keeps its items' own kinds. */
static void test_typed_lists(void **state)
{
    (void)state;
    run r;
    walk(&r, &walker,
         "apiVersion: v1\n"
         "kind: NodeList\n"
         "metadata: {resourceVersion: \"12\"}\n"
         "items:\n"
         "- metadata: {name: n1, uid: 6f1c}\n"
         "  spec: {}\n"
         "- metadata: {name: n2}\n"
         "---\n"
         "apiVersion: v1\n"
         "kind: List\n"
         "items:\n"
         "- apiVersion: apps/v1beta2\n"
         "  kind: Deployment\n"
         "  metadata: {name: web}\n"
         "- apiVersion: v1\n"
         "  kind: List\n"
         "  items:\n"
         "  - {apiVersion: v1, kind: Gizmo, metadata: {name: g}}\n"
         "- apiVersion: apps/v1\n"
         "  kind: DeploymentList\n"
         "  items:\n"
         "  - metadata: {name: api}\n",
         1, 1);
    assert_int_equal(r.rc, 0);
    assert_string_equal(r.s.log, "Node/n1@items[0]#1 Node/n2@items[1]#1 Deployment/web@items[0]#2 "
                                 "Gizmo/g@items[1].items[0]#3 Deployment/api@items[2].items[0]#2 ");
    assert_int_equal(berth_skips_total(&r.skips), 0);
    done(&r);

    /* an item of `kind: List` without a kind is an error, located */
    walk(&r, &walker, "apiVersion: v1\nkind: List\nitems:\n- metadata: {name: x}\n", 0, 1);
    expect_error(&r, "t.yaml:4:3: items[0].kind: required field is missing");
    done(&r);

    /* strict: a List's own fields are checked */
    walk(&r, &walker, "apiVersion: v1\nkind: List\nitmes: []\nitems: []\n", 1, 1);
    expect_error(&r, "t.yaml:3:1: itmes: unknown field 'itmes' (did you mean 'items'?)");
    done(&r);
    walk(&r, &walker, "apiVersion: v1\nkind: List\nitmes: []\nitems: []\n", 0, 1);
    assert_int_equal(r.rc, 0);
    done(&r);

    /* nesting is bounded */
    walk(&r, &walker,
         "kind: List\nitems:\n- kind: List\n  items:\n  - kind: List\n    items:\n"
         "    - kind: List\n      items:\n      - kind: List\n        items:\n"
         "        - kind: List\n          items: []\n",
         0, 1);
    expect_error(&r, "Lists nested too deeply");
    done(&r);
}

/* Kinds not in the table: counted (with the table's note), or with --strict
 * (or no skip table) the error at the kind with the generated hint. */
static void test_unknown_kinds(void **state)
{
    (void)state;
    static const char *const text = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n"
                                    "---\n"
                                    "apiVersion: v1\nkind: EventList\nitems:\n"
                                    "- metadata: {name: e1}\n- metadata: {name: e2}\n"
                                    "---\n"
                                    "apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: j}\n";
    run r;
    walk(&r, &walker, text, 0, 1);
    assert_int_equal(r.rc, 0);
    assert_string_equal(r.s.log, "");
    assert_int_equal(berth_skips_total(&r.skips), 4);
    assert_int_equal(r.skips.n, 3);
    char line[128];
    berth_skip_text(&r.skips.items[1], line, sizeof line);
    assert_string_equal(line, "skipped 2 Event");
    berth_skip_text(&r.skips.items[2], line, sizeof line);
    assert_string_equal(line, "skipped 1 CronJob (not expanded: runs later)");
    done(&r);

    walk(&r, &walker, text, 1, 1);
    assert_int_equal(r.rc, BERTH_EINVAL);
    assert_string_equal(r.e.msg, "t.yaml:2:7: kind: unknown kind 'ConfigMap' "
                                 "(test input has Node, Deployment, Gizmo, List)");
    done(&r);

    /* without a skip table (nexus) every unknown kind is an error */
    walk(&r, &walker, "apiVersion: v1\nkind: Gizmo\nmetadata: {name: g}\n---\n" "kind: CronJob\n",
         0, 0);
    assert_int_equal(r.rc, BERTH_EINVAL);
    assert_string_equal(r.e.msg, "t.yaml:5:7: kind: unknown kind 'CronJob' (not expanded: runs "
                                 "later; test input has Node, Deployment, Gizmo, List)");
    assert_string_equal(r.s.log, "Gizmo/g@-#3 ");
    done(&r);

    char hint[30]; /* truncated, terminated */
    berth_walker_hint(&walker, hint, sizeof hint);
    assert_string_equal(hint, "test input has Node, Deployme");
}

/* apiVersion: one of the table's, else the located error; a kind's own
 * wanted text; absent: required. */
static void test_api_version(void **state)
{
    (void)state;
    run r;
    walk(&r, &walker, "apiVersion: apps/v2\nkind: Deployment\nmetadata: {name: d}\n", 0, 1);
    assert_int_equal(r.rc, BERTH_EINVAL);
    assert_string_equal(r.e.msg, "t.yaml:1:13: apiVersion: kind Deployment needs apiVersion "
                                 "apps/v1 or apps/v1beta2, got 'apps/v2'");
    done(&r);
    walk(&r, &walker, "kind: List\nitems:\n- {apiVersion: v2, kind: Gizmo, metadata: {name: g}}\n",
         0, 1);
    expect_error(&r, "t.yaml:3:16: items[0].apiVersion: kind Gizmo needs apiVersion v1 (nothing "
                     "else), got 'v2'");
    done(&r);
    walk(&r, &walker, "kind: Node\nmetadata: {name: n}\n", 0, 1);
    expect_error(&r, "t.yaml:1:1: apiVersion: required field is missing");
    done(&r);
    /* a typed list's apiVersion is its items' */
    walk(&r, &walker, "apiVersion: v2\nkind: NodeList\nitems:\n- metadata: {name: n}\n", 0, 1);
    expect_error(&r, "t.yaml:4:3: items[0].apiVersion: kind Node needs apiVersion v1, got 'v2'");
    done(&r);
    /* a document that is no object */
    walk(&r, &walker, "- a\n- b\n", 0, 1);
    expect_error(&r, "t.yaml:1:1: (document): expected an object with apiVersion and kind");
    done(&r);
}

/* Top-level fields: with --strict, or always for BERTH_KIND_STRICT kinds. */
static void test_fields(void **state)
{
    (void)state;
    run r;
    walk(&r, &walker, "apiVersion: v1\nkind: Node\nmetadata: {name: n}\nstatus: {}\n", 0, 1);
    assert_int_equal(r.rc, 0);
    assert_string_equal(r.s.log, "Node/n@-#1 ");
    done(&r);
    walk(&r, &walker, "apiVersion: v1\nkind: Node\nmetadata: {name: n}\nstatus: {}\n", 1, 1);
    expect_error(&r, "t.yaml:4:1: status: unknown field 'status'");
    done(&r);
    walk(&r, &walker, "apiVersion: v1\nkind: Gizmo\nmetadata: {name: n}\nspek: {}\n", 0, 1);
    expect_error(&r, "t.yaml:4:1: spek: unknown field 'spek' (did you mean 'spec'?)");
    assert_string_equal(r.s.log, "");
    done(&r);
}

/* The fallback takes every kind not in the table (Lists are still walked:
 * it sees their items); the apiVersion check may be the loader's own. */
static int own_api(berth_dec *d, const berth_node *doc, const char *kind,
                   const berth_kind_handler *h)
{
    const char *api = NULL;
    int rc = berth_dec_str(d, doc, "apiVersion", 0, &api);
    if (rc || !h || (api && !strcmp(api, "own/v1")))
        return rc;
    return berth_dec_fail(d, doc, "kind %s: not own/v1", kind);
}

static void test_fallback(void **state)
{
    (void)state;
    static const berth_walker fw = {"test", kinds, 3, 0, NULL, fallback, NULL};
    run r;
    walk(&r, &fw,
         "apiVersion: v1\nkind: PodList\nitems:\n- metadata: {name: p}\n"
         "- {apiVersion: v1, kind: Node, metadata: {name: n}}\n"
         "---\n"
         "apiVersion: v1\nkind: CronJob\nmetadata: {name: c}\n",
         1, 1);
    assert_int_equal(r.rc, 0);
    assert_int_equal(r.s.other, 2);
    assert_string_equal(r.s.other_kinds, "Pod,CronJob");
    assert_string_equal(r.s.log, "Node/n@items[1]#1 ");
    assert_int_equal(berth_skips_total(&r.skips), 0);
    done(&r);

    /* plain Lists only, the loader's apiVersion rule */
    static const berth_walker pw = {"plain", kinds, 3, BERTH_WALK_PLAIN_LISTS, NULL, NULL,
                                    own_api};
    walk(&r, &pw, "kind: List\nitems:\n- {apiVersion: own/v1, kind: Node, metadata: {name: n}}\n",
         0, 1);
    assert_int_equal(r.rc, 0);
    assert_string_equal(r.s.log, "Node/n@items[0]#1 ");
    done(&r);
    walk(&r, &pw, "kind: List\nitems:\n- {apiVersion: v1, kind: Node, metadata: {name: n}}\n", 0,
         1);
    expect_error(&r, "t.yaml:3:3: items[0]: kind Node: not own/v1");
    done(&r);
    walk(&r, &pw, "apiVersion: own/v1\nkind: NodeList\nitems: []\n", 1, 1);
    expect_error(&r, "t.yaml:2:7: kind: unknown kind 'NodeList' (plain input has Node, "
                     "Deployment, Gizmo, List)");
    done(&r);
    /* the loader's check runs on Lists too */
    walk(&r, &pw, "apiVersion: {a: b}\nkind: List\nitems: []\n", 0, 1);
    expect_error(&r, "t.yaml:1:13: apiVersion: expected a string, got a mapping");
    done(&r);
}

/* counts Nodes (in seen.other) and keeps the last name */
static int count_node(void *ctx, berth_dec *d, const berth_node *doc, const berth_kind_handler *h)
{
    seen *s = ctx;
    (void)d;
    (void)h;
    s->other++;
    snprintf(s->other_kinds, sizeof s->other_kinds, "%s",
             berth_node_get(berth_node_get(doc, "metadata"), "name")->str);
    return 0;
}

static const berth_kind_handler count_kinds[] = {{"Node", v1, NULL, top, 0, count_node, NULL, 1}};
static const berth_walker count_walker = {"test", count_kinds, 1, 0, list_fields, NULL, NULL};

/* Streaming (berth_dec_walk_buffer): a List's items are walked as they are
 * parsed and released. The same documents, paths and errors as the whole
 * tree (walk() compares them) for kubectl's key order (items before kind),
 * a typed list whose kind comes last (items kept until it is known), a
 * List that switches to keeping at an item without kind, aliases across
 * items and a JSON stream; the texts alone stay in the arena; and a
 * document with items before a kind that is no List is an error. */
static void test_streaming(void **state)
{
    (void)state;
    run r;
    /* kubectl's order: apiVersion, items, kind, metadata */
    walk(&r, &walker,
         "apiVersion: v1\nitems:\n"
         "- {apiVersion: v1, kind: Node, metadata: {name: a}}\n"
         "- {apiVersion: apps/v1, kind: Deployment, metadata: {name: b}}\n"
         "kind: List\nmetadata: {resourceVersion: \"\"}\n",
         1, 1);
    assert_int_equal(r.rc, 0);
    assert_string_equal(r.s.log, "Node/a@items[0]#1 Deployment/b@items[1]#2 ");
    done(&r);
    /* a typed list with its kind last: items without kind wait for it; the
     * first item (own kind) was walked at once, the rest keep their index */
    walk(&r, &walker,
         "apiVersion: v1\nitems:\n"
         "- {apiVersion: v1, kind: Node, metadata: {name: a}}\n"
         "- metadata: {name: b}\n"
         "- {apiVersion: v1, kind: Node, metadata: {name: c}}\n"
         "- metadata: {name: d, labels: {x: \"1\"}}\n"
         "kind: NodeList\n",
         0, 1);
    assert_int_equal(r.rc, 0);
    assert_string_equal(r.s.log, "Node/a@items[0]#1 Node/b@items[1]#1 Node/c@items[2]#1 "
                                 "Node/d@items[3]#1 ");
    done(&r);
    walk(&r, &walker,
         "apiVersion: v1\nitems:\n- {apiVersion: v1, kind: Node, metadata: {name: a}}\n"
         "- {metadata: {name: b}}\nkind: List\n",
         0, 1);
    expect_error(&r, "t.yaml:4:3: items[1].kind: required field is missing");
    done(&r);
    /* aliases: into an earlier item (kept alive), and an item that is one */
    walk(&r, &walker,
         "kind: List\napiVersion: v1\nitems:\n"
         "- {apiVersion: v1, kind: Node, metadata: &m {name: c}}\n"
         "- {apiVersion: v1, kind: Node, metadata: *m}\n"
         "- &n {apiVersion: v1, kind: Node, metadata: {name: a}}\n"
         "- *n\n"
         "- {apiVersion: v1, kind: Node, metadata: {name: e}}\n",
         0, 1);
    assert_int_equal(r.rc, 0);
    assert_string_equal(r.s.log, "Node/c@items[0]#1 Node/c@items[1]#1 Node/a@items[2]#1 "
                                 "Node/a@items[3]#1 Node/e@items[4]#1 ");
    done(&r);
    /* a JSON stream in kubectl's order */
    walk(&r, &walker,
         "{\"apiVersion\": \"v1\", \"items\": [{\"apiVersion\": \"v1\", \"kind\": \"Node\", "
         "\"metadata\": {\"name\": \"j\"}}], \"kind\": \"List\"}\n"
         "{\"apiVersion\": \"v1\", \"kind\": \"NodeList\", \"items\": [{\"metadata\": "
         "{\"name\": \"k\"}}]}\n",
         0, 1);
    assert_int_equal(r.rc, 0);
    assert_string_equal(r.s.log, "Node/j@items[0]#1 Node/k@items[0]#1 ");
    done(&r);

    /* items read before a kind that is no List: an error (the whole tree
     * would have skipped the unknown kind) */
    walk_one(&r, &walker,
             "apiVersion: v1\nitems:\n- {apiVersion: v1, kind: Node, metadata: {name: a}}\n"
             "kind: Gadget\n",
             0, 1, 1);
    expect_error(&r, "t.yaml:4:7: kind: kind Gadget is no List, but its items were read as a "
                     "List's objects");
    done(&r);

    /* a key that is no scalar, before the items: the same error both
     * ways, at the key, before any item is read (the streamed read looks
     * up the top mapping's kind among its keys when the items begin) */
    static const char complex_key[] =
        "apiVersion: v1\n? [a, b]\n: x\nkind: List\n"
        "items:\n- {apiVersion: v1, kind: Node, metadata: {name: a}}\n";
    walk_one(&r, &walker, complex_key, 0, 1, 1);
    expect_error(&r, "t.yaml:2:3: mapping keys must be plain scalars");
    assert_string_equal(r.s.log, "");
    done(&r);
    berth_arena_init(&r.a, 0);
    berth_error_clear(&r.e);
    assert_int_equal(berth_doc_load_buffer(&r.a, "t.yaml", complex_key, strlen(complex_key),
                                           &r.src, &r.e),
                     BERTH_EINVAL);
    assert_string_equal(r.e.msg, "t.yaml:2:3: mapping keys must be plain scalars");
    berth_arena_free(&r.a);

    /* released: 2,000 items keep only their texts (and fewer of them than
     * the tree's nodes), whether kind comes first or last */
    enum { N = 2000 };
    static char text[N * 80 + 128];
    for (int last = 0; last < 2; last++) {
        size_t off = (size_t)snprintf(text, sizeof text, "%sitems:\n",
                                      last ? "apiVersion: v1\n" : "apiVersion: v1\nkind: NodeList\n");
        for (int i = 0; i < N; i++)
            off += (size_t)snprintf(text + off, sizeof text - off,
                                    "- {apiVersion: v1, kind: Node, metadata: {name: n%d}}\n", i);
        if (last)
            off += (size_t)snprintf(text + off, sizeof text - off, "kind: NodeList\n");
        run t, st;
        walk_one(&t, &count_walker, text, 0, 1, 0);
        walk_one(&st, &count_walker, text, 0, 1, 1);
        assert_int_equal(t.rc, 0);
        assert_int_equal(st.rc, 0);
        assert_int_equal(t.s.other, N);
        assert_int_equal(st.s.other, N);
        assert_string_equal(st.s.other_kinds, "n1999");
        assert_true(st.a.used_total * 3 < t.a.used_total);
        done(&t);
        done(&st);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_typed_lists),
        cmocka_unit_test(test_unknown_kinds),
        cmocka_unit_test(test_api_version),
        cmocka_unit_test(test_fields),
        cmocka_unit_test(test_fallback),
        cmocka_unit_test(test_streaming),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
