/* fuzz/fuzz_serve.c - libFuzzer target for the request bodies of `berth
 * serve`: the first byte picks an endpoint, the rest is the body, handed
 * to the function the HTTP layer (serve/http.c) calls with it:
 *   0 POST /v1/kube/schedule      serve_kube_schedule (stateless.c)
 *   1 POST /v1/fleet/place        serve_fleet_place
 *   2 POST /v1/disrupt/plan       serve_disrupt_plan
 *   3 POST /v1/autoscale/plan     serve_autoscale_plan
 *   4 PUT  /v1/estate             serve_engine_put_estate (engine.c)
 *   5 POST /v1/clusters           serve_engine_create, over a seed estate
 * The engine runs on an in-memory SQLite store opened per input, so every
 * input starts from the same state. Every reply must be a JSON body with a
 * 2xx/4xx/5xx status. Seeds: fuzz/corpus/serve/. Run with `make fuzz`. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "serve/serve.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_MAX_INPUT (64u * 1024u)

static const char seed_site[] =
    "apiVersion: berth.io/v1\nkind: Site\nmetadata: {name: f}\n"
    "spec: {racks: 2, machinesPerRack: 4, machine: {numaCells: 2, cell: {cpu: 48, memory: 224Gi}}}\n";

static void check(serve_reply *r)
{
    if (r->status < 200 || r->status > 599 || !r->body || (r->body[0] != '{' && r->body[0] != '['))
        abort();
    free(r->body);
    r->body = NULL;
}

static void engine_call(int create, const char *body, size_t len)
{
    berth_error e;
    serve_engine *g;
    if (serve_engine_open(":memory:", 16, &g, &e))
        abort();
    serve_reply r;
    if (create) {
        serve_engine_put_estate(g, seed_site, sizeof seed_site - 1, &r);
        if (r.status != 200)
            abort();
        check(&r);
        serve_engine_create(g, body, len, &r);
    } else {
        serve_engine_put_estate(g, body, len, &r);
    }
    check(&r);
    serve_engine_get_estate(g, &r); /* the committed state renders */
    check(&r);
    serve_engine_close(g);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > FUZZ_MAX_INPUT)
        return 0;
    unsigned which = data[0] % 6u;
    /* a NUL-terminated copy: the HTTP layer passes a buffer with a length,
     * but the decoders must not read past it either way */
    size_t len = size - 1;
    char *body = malloc(len ? len : 1);
    if (!body)
        return 0;
    memcpy(body, data + 1, len);
    serve_reply r = {0};
    switch (which) {
    case 0: serve_kube_schedule(body, len, NULL, NULL, NULL, NULL, &r); check(&r); break;
    case 1: serve_fleet_place(body, len, "2024-05-01T12:00:00Z", NULL, NULL, &r); check(&r); break;
    case 2: serve_disrupt_plan(body, len, "2024-05-01T12:00:00Z", NULL, &r); check(&r); break;
    case 3: serve_autoscale_plan(body, len, "2024-05-01T12:00:00Z", NULL, &r); check(&r); break;
    case 4: engine_call(0, body, len); break;
    default: engine_call(1, body, len); break;
    }
    free(body);
    return 0;
}
