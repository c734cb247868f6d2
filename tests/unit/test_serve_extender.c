/* tests/unit/test_serve_extender.c - the kube-scheduler extender's
 * nodeCacheCapable fast path (serve/extender.c: ExtenderArgs scanned in
 * place, the answer written without a JSON tree, the cycle kept for the
 * call that follows) answers byte for byte as the general way (the whole
 * body through jansson, one throwaway cluster per call). The general way is
 * reached with the same question plus a key the fast path does not take
 * ("zz": 1, which ExtenderArgs ignores). Random clusters (zones, taints,
 * sizes), random pods (requests, tolerations, node affinity, topology
 * spread, anti-affinity), random subsets of the names with unknown ones,
 * bindings in between, both profiles; then bodies the fast path hands to
 * the general way (escapes, a name twice, errors). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "berth/random.h"
#include "serve/serve.h"

#define NODES 48
#define BODY_MAX 65536

typedef struct buf {
    char p[BODY_MAX];
    size_t n;
} buf;

static void put(buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(b->p + b->n, sizeof b->p - b->n, fmt, ap);
    va_end(ap);
    assert_true(k >= 0 && (size_t)k < sizeof b->p - b->n);
    b->n += (size_t)k;
}

static void load_nodes(serve_extender *x, berth_rng *g)
{
    static buf b;
    b.n = 0;
    put(&b, "{\"apiVersion\": \"v1\", \"kind\": \"NodeList\", \"items\": [");
    for (int i = 0; i < NODES; i++) {
        put(&b, "%s{\"metadata\": {\"name\": \"node-%02d\", \"labels\": {\"kubernetes.io/hostname\": "
                "\"node-%02d\", \"topology.kubernetes.io/zone\": \"z%d\"}}",
            i ? ", " : "", i, i, (int)berth_rng_below(g, 3));
        if (berth_rng_below(g, 5) == 0)
            put(&b, ", \"spec\": {\"taints\": [{\"key\": \"dedicated\", \"value\": \"gpu\", "
                    "\"effect\": \"%s\"}]}",
                berth_rng_below(g, 2) ? "NoSchedule" : "PreferNoSchedule");
        put(&b, ", \"status\": {\"allocatable\": {\"cpu\": \"%d\", \"memory\": \"%dGi\", "
                "\"pods\": \"%d\"}}}",
            2 + 2 * (int)berth_rng_below(g, 8), 4 + 4 * (int)berth_rng_below(g, 8),
            3 + (int)berth_rng_below(g, 30));
    }
    put(&b, "]}");
    serve_reply r = {0};
    serve_extender_put_nodes(x, b.p, b.n, &r);
    assert_int_equal(r.status, 200);
    free(r.body);
}

/* A random pod named name; extra: text put before "nodenames". */
static void args(buf *b, berth_rng *g, const char *name, const char *extra, const char *names)
{
    b->n = 0;
    put(b, "{\"pod\": {\"metadata\": {\"name\": \"%s\", \"namespace\": \"shop\", \"uid\": \"u-%s\", "
           "\"labels\": {\"app\": \"web\"}}, \"spec\": {\"containers\": [{\"name\": \"c\", "
           "\"resources\": {\"requests\": {\"cpu\": \"%dm\", \"memory\": \"%dMi\"}}}]",
        name, name, 100 + 500 * (int)berth_rng_below(g, 10), 128 * (1 + (int)berth_rng_below(g, 16)));
    if (berth_rng_below(g, 3) == 0)
        put(b, ", \"tolerations\": [{\"key\": \"dedicated\", \"operator\": \"Exists\"}]");
    if (berth_rng_below(g, 4) == 0)
        put(b, ", \"affinity\": {\"nodeAffinity\": {\"requiredDuringSchedulingIgnoredDuringExecution\": "
               "{\"nodeSelectorTerms\": [{\"matchExpressions\": [{\"key\": "
               "\"topology.kubernetes.io/zone\", \"operator\": \"In\", \"values\": [\"z%d\"]}]}]}}}",
            (int)berth_rng_below(g, 3));
    else if (berth_rng_below(g, 4) == 0)
        put(b, ", \"affinity\": {\"podAntiAffinity\": {\"requiredDuringSchedulingIgnoredDuringExecution\": "
               "[{\"labelSelector\": {\"matchLabels\": {\"app\": \"web\"}}, \"topologyKey\": "
               "\"kubernetes.io/hostname\"}]}}");
    if (berth_rng_below(g, 4) == 0)
        put(b, ", \"topologySpreadConstraints\": [{\"maxSkew\": 1, \"topologyKey\": "
               "\"topology.kubernetes.io/zone\", \"whenUnsatisfiable\": \"%s\", \"labelSelector\": "
               "{\"matchLabels\": {\"app\": \"web\"}}}]",
            berth_rng_below(g, 2) ? "DoNotSchedule" : "ScheduleAnyway");
    put(b, "}, \"status\": {\"phase\": \"Pending\"}},\n %s\"nodenames\": [%s]}", extra, names);
}

/* A random list of names: a subset of the nodes in random order, maybe an
 * unknown one or two. */
static void random_names(berth_rng *g, char *out, size_t size)
{
    int order[NODES];
    for (int i = 0; i < NODES; i++)
        order[i] = i;
    for (int i = NODES - 1; i > 0; i--) {
        int j = (int)berth_rng_below(g, (uint64_t)i + 1), t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    int n = berth_rng_below(g, 3) ? NODES : (int)berth_rng_below(g, NODES + 1);
    size_t len = 0;
    out[0] = 0;
    for (int i = 0; i < n; i++)
        len += (size_t)snprintf(out + len, size - len, "%s\"node-%02d\"", len ? ", " : "", order[i]);
    for (int u = (int)berth_rng_below(g, 3); u > 0; u--)
        len += (size_t)snprintf(out + len, size - len, "%s\"ghost-%d\"", len ? ", " : "", u);
}

/* The names of list (", "-separated) in reverse order into out: the same
 * set, another array. */
static void reverse_names(const char *list, char *out, size_t size)
{
    size_t len = 0, end = strlen(list);
    out[0] = 0;
    while (end > 0) {
        size_t start = end;
        while (start > 0 && list[start - 1] != ' ')
            start--;
        /* list[start, end) is one name, with its comma unless the last */
        size_t n = end - start - (list[end - 1] == ',');
        len += (size_t)snprintf(out + len, size - len, "%s%.*s", len ? ", " : "", (int)n,
                                list + start);
        end = start ? start - 1 : 0; /* before the space */
    }
}

/* The fast reply and the general way's reply to the same question. */
static void same_answer(serve_extender *x, int prioritize, const buf *fast, const buf *slow,
                        const char *profile)
{
    serve_reply a = {0}, b = {0};
    if (prioritize) {
        serve_extender_prioritize(x, fast->p, fast->n, profile, &a);
        serve_extender_prioritize(x, slow->p, slow->n, profile, &b);
    } else {
        serve_extender_filter(x, fast->p, fast->n, profile, &a);
        serve_extender_filter(x, slow->p, slow->n, profile, &b);
    }
    assert_non_null(a.body);
    assert_non_null(b.body);
    if (a.status != b.status || strcmp(a.body, b.body))
        fail_msg("%s differs:\nfast %d %.600s\nslow %d %.600s\nbody %.900s",
                 prioritize ? "prioritize" : "filter", a.status, a.body, b.status, b.body, fast->p);
    free(a.body);
    free(b.body);
}

static void test_fast_equals_general(void **state)
{
    (void)state;
    serve_extender *x;
    berth_error e;
    berth_error_clear(&e);
    assert_int_equal(serve_extender_open(":memory:", &x, &e), 0);
    berth_rng g;
    berth_rng_seed(&g, 15);
    static buf fast, slow;
    static char names[NODES * 16 + 64];
    int feasible_seen = 0, failed_seen = 0;
    char bound[32] = "";
    for (int round = 0; round < 3; round++) {
        load_nodes(x, &g);
        berth_rng tmpl = g; /* the last new pod spec: replicas repeat it */
        static char tnames[NODES * 16 + 64];
        tnames[0] = 0;
        for (int i = 0; i < 40; i++) {
            char pod[32];
            snprintf(pod, sizeof pod, "p%d-%d", round, i);
            /* half the pods are replicas of the last spec on the last names
             * (answered from their class's kept result), some of them
             * named as a bound pod (whose binding their cycle leaves out) */
            int replica = i && berth_rng_below(&g, 2);
            if (replica && bound[0] && berth_rng_below(&g, 4) == 0)
                snprintf(pod, sizeof pod, "%s", bound);
            if (!replica) {
                random_names(&g, names, sizeof names);
                snprintf(tnames, sizeof tnames, "%s", names);
            } else if (berth_rng_below(&g, 3) == 0) {
                /* the same set in another order: the class's result, a
                 * reply of its own */
                reverse_names(tnames, names, sizeof names);
                snprintf(tnames, sizeof tnames, "%s", names);
            }
            berth_rng a = replica ? tmpl : g, b = a; /* the same pod in both bodies */
            args(&fast, &a, pod, "", tnames);
            args(&slow, &b, pod, "\"zz\": 1, ", tnames);
            if (!replica) {
                tmpl = g;
                g = a;
            }
            const char *profile = berth_rng_below(&g, 4) ? NULL : "usage-aware";
            /* kube-scheduler's order: filter, then prioritize (from the kept
             * cycle), then prioritize once more */
            same_answer(x, 0, &fast, &slow, profile);
            same_answer(x, 1, &fast, &slow, profile);
            same_answer(x, 1, &fast, &slow, profile);
            serve_reply r = {0};
            serve_extender_filter(x, fast.p, fast.n, profile, &r);
            feasible_seen |= strstr(r.body, "\"nodenames\":[\"") != NULL;
            failed_seen |= strstr(r.body, "\"failedNodes\":{\"") != NULL;
            free(r.body);
            if (berth_rng_below(&g, 2)) {
                /* a binding changes the answers the kept cycles gave */
                char bind[200];
                int n = snprintf(bind, sizeof bind,
                                 "{\"podName\": \"%s\", \"podNamespace\": \"shop\", \"node\": "
                                 "\"node-%02d\"}",
                                 pod, (int)berth_rng_below(&g, NODES));
                serve_extender_bind(x, bind, (size_t)n, &r);
                assert_int_equal(r.status, 200);
                free(r.body);
                snprintf(bound, sizeof bound, "%s", pod);
                same_answer(x, 1, &fast, &slow, profile);
            }
        }
    }
    assert_true(feasible_seen && failed_seen);
    /* the fast path answered (the general way did the rest), from kept
     * cycles too */
    uint64_t calls, hits;
    serve_extender_fast_stats(x, &calls, &hits);
    assert_true(calls >= 3 * 40 * 4);
    assert_true(hits >= 3 * 40 * 2);
    /* and new pods were answered from warm scheduler states, some reused */
    uint64_t builds, probes;
    serve_extender_warm_stats(x, &builds, &probes);
    assert_true(probes > builds && builds > 0);
    /* and replicas from their class's result */
    uint64_t classed;
    serve_extender_class_stats(x, &classed);
    assert_true(classed > 0);
    serve_extender_close(x);
}

/* Bodies the fast path leaves to the general way answer as it does. */
static void test_handed_over(void **state)
{
    (void)state;
    serve_extender *x;
    berth_error e;
    berth_error_clear(&e);
    assert_int_equal(serve_extender_open(":memory:", &x, &e), 0);
    berth_rng g;
    berth_rng_seed(&g, 7);
    load_nodes(x, &g);
    static buf plain, other;
    berth_rng a = g, b = g;
    /* an escaped name is the same name */
    args(&plain, &a, "w", "", "\"node-01\", \"node-02\"");
    args(&other, &b, "w", "", "\"node-01\", \"node\\u002d02\"");
    same_answer(x, 0, &plain, &other, NULL);
    same_answer(x, 1, &plain, &other, NULL);
    /* errors: a name twice, an unknown profile, a bad pod, bad JSON */
    const char *bad[] = {
        "{\"pod\": {\"metadata\": {\"name\": \"w\"}}, \"nodenames\": [\"node-01\", \"node-01\"]}",
        "{\"pod\": {\"metadata\": {\"name\": \"w\"}}, \"nodenames\": [\"gh\", \"gh\"]}",
        "{\"pod\": {\"metadata\": {}}, \"nodenames\": [\"node-01\"]}",
        "{\"pod\": {\"metadata\": {\"name\": \"w\"}, \"spec\": {\"nodeName\": \"x\"}}, "
        "\"nodenames\": [\"node-01\"]}",
        "{\"pod\": {\"metadata\": {\"name\": \"w\"}, ]}, \"nodenames\": [\"node-01\"]}",
        "{\"pod\": {\"metadata\": {\"name\": \"w\"}}, \"nodenames\": [\"node-01\"]} x",
        "{\"pod\": {\"metadata\": {\"name\": \"w\"}}, \"nodenames\": [\"\"]}",
        "{\"pod\": {\"metadata\": {\"name\": \"w\"}, \"spec\": {\"containers\": [{\"name\": \"c\", "
        "\"resources\": {\"requests\": {\"cpu\": \"lots\"}}}]}}, \"nodenames\": [\"node-01\"]}",
    };
    const char *want[] = {"appears twice", "appears twice", "pod.metadata.name: required",
                          "already bound", "body:1:", "body:1:", "nodenames[0]",
                          "invalid quantity 'lots'"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        serve_reply r = {0};
        serve_extender_filter(x, bad[i], strlen(bad[i]), NULL, &r);
        assert_int_equal(r.status, 400);
        if (!strstr(r.body, want[i]))
            fail_msg("body %s: reply %s lacks %s", bad[i], r.body, want[i]);
        free(r.body);
    }
    serve_reply r = {0};
    serve_extender_prioritize(x, plain.p, plain.n, "nope", &r);
    assert_int_equal(r.status, 400);
    assert_non_null(strstr(r.body, "no profile named 'nope'"));
    free(r.body);
    serve_extender_close(x);
}


/* The filter's answer for pod name on names (the fast path, same spec every
 * time: 800m cpu), malloc'd. */
static char *filter_of(serve_extender *x, const char *name, const char *names)
{
    char body[600];
    int n = snprintf(body, sizeof body,
                     "{\"pod\": {\"metadata\": {\"name\": \"%s\", \"namespace\": \"shop\", "
                     "\"uid\": \"u-%s\"}, \"spec\": {\"containers\": [{\"name\": \"c\", "
                     "\"resources\": {\"requests\": {\"cpu\": \"800m\"}}}]}}, "
                     "\"nodenames\": [%s]}",
                     name, name, names);
    serve_reply r = {0};
    serve_extender_filter(x, body, (size_t)n, NULL, &r);
    assert_int_equal(r.status, 200);
    return r.body;
}

static void put_nodes(serve_extender *x, const char *items)
{
    char body[1200];
    int n = snprintf(body, sizeof body,
                     "{\"apiVersion\": \"v1\", \"kind\": \"NodeList\", \"items\": [%s]}", items);
    serve_reply r = {0};
    serve_extender_put_nodes(x, body, (size_t)n, &r);
    assert_int_equal(r.status, 200);
    free(r.body);
}

#define NODE_JSON(name, cpu)                                                                   \
    "{\"metadata\": {\"name\": \"" name "\"}, \"status\": {\"allocatable\": {\"cpu\": \"" cpu \
    "\", \"memory\": \"8Gi\", \"pods\": \"110\"}}}"

/* The warm scheduler state of one estate is not the answer for another: a
 * pod bound, or the nodes replaced (a node added, a node's size changed),
 * between two calls with the same names and the same pod spec changes the
 * answer. Each step first warms the state (two pods answered from it), so
 * a state kept across the change would give the old answer. */
static void test_warm_invalidated(void **state)
{
    (void)state;
    serve_extender *x;
    berth_error e;
    berth_error_clear(&e);
    assert_int_equal(serve_extender_open(":memory:", &x, &e), 0);
    put_nodes(x, NODE_JSON("node-a", "1") ", " NODE_JSON("node-b", "4"));
    const char *ab = "\"node-a\", \"node-b\"";
    char *r1 = filter_of(x, "p1", ab), *r2 = filter_of(x, "p2", ab);
    assert_string_equal(r1, r2); /* warm: both fit both nodes */
    assert_non_null(strstr(r1, "\"nodenames\":[\"node-a\",\"node-b\"]"));
    uint64_t builds, probes;
    serve_extender_warm_stats(x, &builds, &probes);
    uint64_t classed;
    serve_extender_class_stats(x, &classed);
    /* p2 came from p1's state: p1's class result */
    assert_true(probes >= 1 && classed >= 1 && builds < probes + classed);
    free(r1);
    free(r2);

    /* a pod bound on node-a: 800m of its 1000m are taken */
    const char *bind = "{\"PodName\": \"p2\", \"PodNamespace\": \"shop\", \"Node\": \"node-a\"}";
    serve_reply r = {0};
    serve_extender_bind(x, bind, strlen(bind), &r);
    assert_int_equal(r.status, 200);
    assert_null(strstr(r.body, "not seen")); /* recorded */
    free(r.body);
    char *r3 = filter_of(x, "p3", ab);
    if (!strstr(r3, "\"nodenames\":[\"node-b\"]") || !strstr(r3, "\"node-a\":\"Insufficient cpu\""))
        fail_msg("after the binding: %s", r3);
    free(r3);
    free(filter_of(x, "p4", ab)); /* the new state warm again */

    /* node-b shrinks and node-c joins: same names asked, other answers */
    put_nodes(x, NODE_JSON("node-a", "1") ", " NODE_JSON("node-b", "500m") ", "
                 NODE_JSON("node-c", "2"));
    char *r5 = filter_of(x, "p5", "\"node-a\", \"node-b\", \"node-c\"");
    if (!strstr(r5, "\"nodenames\":[\"node-c\"]") || !strstr(r5, "\"node-b\":\"Insufficient cpu\"") ||
        !strstr(r5, "\"node-a\":\"Insufficient cpu\""))
        fail_msg("after the nodes changed: %s", r5);
    free(r5);
    char *r6 = filter_of(x, "p6", ab);
    if (!strstr(r6, "\"nodenames\":[]") || !strstr(r6, "\"node-b\":\"Insufficient cpu\""))
        fail_msg("after the nodes changed, names a and b: %s", r6);
    free(r6);
    serve_extender_close(x);
}

/* Replicas (same spec, other names) share their class's result, except a
 * pod named as a bound pod: its cycle leaves that binding out (as the
 * general way does), so the class's result, which counts it, is not its
 * answer. */
static void test_class_bound_name(void **state)
{
    (void)state;
    serve_extender *x;
    berth_error e;
    berth_error_clear(&e);
    assert_int_equal(serve_extender_open(":memory:", &x, &e), 0);
    put_nodes(x, NODE_JSON("node-a", "1") ", " NODE_JSON("node-b", "4"));
    const char *ab = "\"node-a\", \"node-b\"";
    free(filter_of(x, "p1", ab));
    const char *bind = "{\"PodName\": \"p1\", \"PodNamespace\": \"shop\", \"Node\": \"node-a\"}";
    serve_reply r = {0};
    serve_extender_bind(x, bind, strlen(bind), &r);
    assert_int_equal(r.status, 200);
    free(r.body);
    /* p2 and p3: p1's 800m on node-a leave no room; p3 from p2's class */
    char *r2 = filter_of(x, "p2", ab), *r3 = filter_of(x, "p3", ab);
    if (!strstr(r2, "\"nodenames\":[\"node-b\"]") || !strstr(r2, "\"node-a\":\"Insufficient cpu\""))
        fail_msg("p2 after p1 bound on node-a: %s", r2);
    assert_string_equal(r2, r3);
    uint64_t classed;
    serve_extender_class_stats(x, &classed);
    assert_true(classed >= 1);
    /* p1 asked again (same spec): its own binding is left out, both fit */
    char *r1 = filter_of(x, "p1", ab);
    if (!strstr(r1, "\"nodenames\":[\"node-a\",\"node-b\"]"))
        fail_msg("p1 again: %s", r1);
    free(r1);
    free(r2);
    free(r3);
    serve_extender_close(x);
}

/* ---- the class key: pods that differ only in what no cycle reads share
 * one result; pods whose answers differ never do ---- */

typedef struct podv {
    const char *meta;   /* metadata members after name, namespace, uid, labels (", ...") */
    const char *app;    /* labels.app */
    const char *ctr;    /* container members after name and image (", ...") */
    const char *req;    /* resources.requests members */
    const char *spec;   /* spec members after containers (", ...") */
    const char *status; /* status members */
} podv;

static void pod_args(buf *b, const char *name, const podv *v, const char *extra,
                     const char *names)
{
    b->n = 0;
    put(b, "{\"pod\": {\"metadata\": {\"name\": \"%s\", \"namespace\": \"shop\", \"uid\": \"u-%s\", "
           "\"labels\": {\"app\": \"%s\"}%s}, \"spec\": {\"containers\": [{\"name\": \"c\", "
           "\"image\": \"nginx:1\"%s, \"resources\": {\"requests\": {%s}}}]%s}, "
           "\"status\": {%s}}, %s\"nodenames\": [%s]}",
        name, name, v->app, v->meta, v->ctr, v->req, v->spec, v->status, extra, names);
}

#define LNODE_JSON(name, zone, cpu, mem, spec)                                                   \
    "{\"metadata\": {\"name\": \"" name "\", \"labels\": {\"kubernetes.io/hostname\": \"" name    \
    "\", \"topology.kubernetes.io/zone\": \"" zone "\"}}" spec ", \"status\": {\"allocatable\": " \
    "{\"cpu\": \"" cpu "\", \"memory\": \"" mem "\", \"pods\": \"110\"}}}"

/* Pod p's filter and prioritize replies, fast and general, compared; the
 * general ones returned (malloc'd) and *classed set to whether the fast
 * filter was answered from a class's result. */
static void class_ask(serve_extender *x, const char *name, const podv *v, char **gf, char **gp,
                      int *classed)
{
    static buf fast, slow;
    const char *names = "\"node-a\", \"node-b\", \"node-c\", \"node-d\"";
    pod_args(&fast, name, v, "", names);
    pod_args(&slow, name, v, "\"zz\": 1, ", names);
    uint64_t before, after;
    serve_extender_class_stats(x, &before);
    serve_reply a = {0}, b = {0};
    for (int pr = 0; pr < 2; pr++) {
        if (pr) {
            serve_extender_prioritize(x, fast.p, fast.n, NULL, &a);
            serve_extender_prioritize(x, slow.p, slow.n, NULL, &b);
        } else {
            serve_extender_filter(x, fast.p, fast.n, NULL, &a);
            serve_extender_class_stats(x, &after);
            serve_extender_filter(x, slow.p, slow.n, NULL, &b);
        }
        assert_non_null(a.body);
        assert_non_null(b.body);
        if (a.status != b.status || strcmp(a.body, b.body))
            fail_msg("pod %s, %s differs:\nfast %d %.600s\nslow %d %.600s\nbody %.900s", name,
                     pr ? "prioritize" : "filter", a.status, a.body, b.status, b.body, fast.p);
        free(a.body);
        *(pr ? gp : gf) = b.body;
        a = b = (serve_reply){0};
    }
    *classed = after > before;
}

static void test_class_key(void **state)
{
    (void)state;
    serve_extender *x;
    berth_error e;
    berth_error_clear(&e);
    assert_int_equal(serve_extender_open(":memory:", &x, &e), 0);
    put_nodes(x, LNODE_JSON("node-a", "z1", "2", "4Gi", "") ", "
                 LNODE_JSON("node-b", "z2", "4", "8Gi", "") ", "
                 LNODE_JSON("node-c", "z1", "8", "16Gi",
                            ", \"spec\": {\"taints\": [{\"key\": \"dedicated\", \"value\": \"gpu\", "
                            "\"effect\": \"NoSchedule\"}]}") ", "
                 LNODE_JSON("node-d", "z2", "1", "8Gi", ""));
    /* b1 on node-b: anti-affinity to app=web, hostPort 8080 */
    podv b1 = {"", "web", ", \"ports\": [{\"containerPort\": 80, \"hostPort\": 8080}]",
               "\"cpu\": \"100m\"",
               ", \"affinity\": {\"podAntiAffinity\": {\"requiredDuringSchedulingIgnoredDuring"
               "Execution\": [{\"labelSelector\": {\"matchLabels\": {\"app\": \"web\"}}, "
               "\"topologyKey\": \"kubernetes.io/hostname\"}]}}",
               "\"phase\": \"Pending\""};
    char *gf, *gp;
    int classed;
    class_ask(x, "b1", &b1, &gf, &gp, &classed);
    free(gf);
    free(gp);
    const char *bind = "{\"PodName\": \"b1\", \"PodNamespace\": \"shop\", \"Node\": \"node-b\"}";
    serve_reply r = {0};
    serve_extender_bind(x, bind, strlen(bind), &r);
    assert_int_equal(r.status, 200);
    free(r.body);

    const char *meta = ", \"resourceVersion\": \"100\", \"creationTimestamp\": "
                       "\"2026-01-01T00:00:00Z\", \"annotations\": {\"team\": \"a\"}";
    const char *ctr = ", \"env\": [{\"name\": \"A\", \"value\": \"1\"}], \"command\": [\"run\"]";
    const char *req = "\"cpu\": \"500m\", \"memory\": \"1Gi\"";
    const char *status = "\"phase\": \"Pending\"";
    podv base = {meta, "web", ctr, req, "", status};
    char *bf, *bp;
    class_ask(x, "p0", &base, &bf, &bp, &classed);
    assert_false(classed);
    /* the estate answers: node-b refused (b1's anti-affinity), node-c (taint) */
    assert_non_null(strstr(bf, "\"nodenames\":[\"node-a\",\"node-d\"]"));

    /* what no cycle reads: the same answer, from p0's class */
    const podv same[] = {
        {", \"resourceVersion\": \"101\", \"generateName\": \"web-\", \"creationTimestamp\": "
         "\"2026-01-02T03:04:05Z\", \"annotations\": {\"team\": \"b\", \"x\": null}, "
         "\"managedFields\": [{\"manager\": \"kubectl\"}], \"generation\": 3, \"selfLink\": \"/x\"",
         "web", ctr, req, "", status},
        {meta, "web",
         ", \"env\": [{\"name\": \"A\", \"value\": \"2\"}], \"args\": [\"-v\"], "
         "\"imagePullPolicy\": \"Always\", \"securityContext\": {\"runAsUser\": 1000}, "
         "\"livenessProbe\": {\"httpGet\": {\"port\": 80}}, \"volumeMounts\": []",
         req, "", status},
        {meta, "web", ctr, req, "",
         "\"phase\": \"Pending\", \"message\": \"0/4 nodes\", \"reason\": \"Unschedulable\", "
         "\"conditions\": [{\"type\": \"PodScheduled\", \"status\": \"False\", "
         "\"lastTransitionTime\": \"2026-01-03T00:00:00Z\"}]"},
    };
    for (size_t i = 0; i < sizeof same / sizeof *same; i++) {
        char name[16], *f, *p;
        snprintf(name, sizeof name, "s%zu", i);
        class_ask(x, name, &same[i], &f, &p, &classed);
        if (!classed || strcmp(f, bf) || strcmp(p, bp))
            fail_msg("pod %s: classed %d, filter %s", name, classed, f);
        free(f);
        free(p);
    }

    /* what a cycle reads or the loader refuses: another answer, never the
     * class's (each differs from p0's answer, so a key that merged it with
     * p0 would answer p0's) */
    const podv other[] = {
        {meta, "web", ctr, "\"cpu\": \"1500m\", \"memory\": \"1Gi\"", "", status},
        {meta, "web", ctr, "\"cpu\": \"500m\", \"memory\": \"6Gi\"", "", status},
        {meta, "api", ctr, req, "", status},
        {meta, "web", ctr, req, ", \"nodeSelector\": {\"topology.kubernetes.io/zone\": \"z2\"}",
         status},
        {meta, "web", ctr, req, ", \"tolerations\": [{\"key\": \"dedicated\", \"operator\": "
                                "\"Exists\"}]", status},
        {meta, "web", ", \"ports\": [{\"containerPort\": 80, \"hostPort\": 8080}]", req, "",
         status},
        {", \"creationTimestamp\": \"yesterday\"", "web", ctr, req, "", status},
        {meta, "web", ", \"restartPolicy\": \"Always\"", req, "", status},
    };
    for (size_t i = 0; i < sizeof other / sizeof *other; i++) {
        char name[16], *f, *p;
        snprintf(name, sizeof name, "o%zu", i);
        class_ask(x, name, &other[i], &f, &p, &classed);
        if (classed)
            fail_msg("pod %s answered from p0's class: %s", name, f);
        if (!strcmp(f, bf) && !strcmp(p, bp))
            fail_msg("pod %s: the same answer as p0 (the test would not see a merge)", name);
        free(f);
        free(p);
    }
    free(bf);
    free(bp);
    serve_extender_close(x);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fast_equals_general),
        cmocka_unit_test(test_handed_over),
        cmocka_unit_test(test_warm_invalidated),
        cmocka_unit_test(test_class_bound_name),
        cmocka_unit_test(test_class_key),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
