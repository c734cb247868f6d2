/* fuzz/fuzz_extender.c - libFuzzer target for the kube-scheduler
 * extender's JSON (serve/extender.c): the first byte picks the call, the
 * rest is the body:
 *   0 POST /v1/extender/filter      (ExtenderArgs)
 *   1 POST /v1/extender/prioritize  (ExtenderArgs)
 *   2 POST /v1/extender/bind        (ExtenderBindingArgs)
 *   3 PUT  /v1/kube/nodes           (the node cache)
 * Each input opens an extender over an in-memory SQLite store, loads a
 * two-node cache (so `nodenames` resolve), runs the body through filter
 * then bind of the same pod when it was a filter, and closes it.
 * Seeds: fuzz/corpus/extender/. Run with `make fuzz`. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "serve/serve.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_MAX_INPUT (64u * 1024u)

static const char nodes[] =
    "{\"apiVersion\":\"v1\",\"kind\":\"NodeList\",\"items\":["
    "{\"metadata\":{\"name\":\"node-a\"},\"status\":{\"allocatable\":{\"cpu\":\"4\","
    "\"memory\":\"8Gi\",\"pods\":\"110\"}}},"
    "{\"metadata\":{\"name\":\"node-d\"},\"status\":{\"allocatable\":{\"cpu\":\"16\","
    "\"memory\":\"64Gi\",\"pods\":\"110\"}}}]}";

static const char bind_a[] =
    "{\"podName\":\"web-1\",\"podNamespace\":\"shop\",\"podUID\":\"uid-web-1\",\"node\":\"node-a\"}";

static void check(serve_reply *r)
{
    if (r->status < 200 || r->status > 599 || !r->body)
        abort();
    free(r->body);
    r->body = NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > FUZZ_MAX_INPUT)
        return 0;
    unsigned which = data[0] % 4u;
    size_t len = size - 1;
    char *body = malloc(len ? len : 1);
    if (!body)
        return 0;
    memcpy(body, data + 1, len);
    berth_error e;
    serve_extender *x;
    if (serve_extender_open(":memory:", &x, &e))
        abort();
    serve_reply r = {0};
    serve_extender_put_nodes(x, nodes, sizeof nodes - 1, &r);
    if (r.status != 200)
        abort();
    check(&r);
    switch (which) {
    case 0:
        serve_extender_filter(x, body, len, NULL, &r);
        check(&r);
        serve_extender_bind(x, bind_a, sizeof bind_a - 1, &r); /* the pod just seen, if web-1 */
        check(&r);
        serve_extender_filter(x, body, len, NULL, &r); /* now counting the binding */
        check(&r);
        break;
    case 1: serve_extender_prioritize(x, body, len, NULL, &r); check(&r); break;
    case 2: serve_extender_bind(x, body, len, &r); check(&r); break;
    default: serve_extender_put_nodes(x, body, len, &r); check(&r); break;
    }
    serve_extender_close(x);
    free(body);
    return 0;
}
