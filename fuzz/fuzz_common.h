/* fuzz/fuzz_common.h - shared by the libFuzzer targets: runs one input
 * through the document decoder (berth_doc_load_buffer) and then through
 * every domain loader (nexus, kube, fleet), freeing everything. The
 * targets differ in their seed corpora and in how far they go (fuzz_json
 * also runs the estate path of PUT /v1/estate: validate and prepare).
 * docs/fuzzing.md describes `make fuzz`. */
#ifndef BERTH_FUZZ_COMMON_H
#define BERTH_FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "berth/arena.h"
#include "berth/doc.h"
#include "berth/error.h"
#include "berth/fleet.h"
#include "berth/kube.h"
#include "berth/nexus.h"

/* Inputs above this are skipped: the decoders' limits are tested elsewhere
 * and large inputs only slow the search down. */
#define FUZZ_MAX_INPUT (64u * 1024u)

static void fuzz_nexus(const berth_source *src, int strict, int prepare)
{
    berth_error e;
    berth_error_clear(&e);
    berth_nexus nx;
    berth_nexus_init(&nx);
    int rc = berth_nexus_load(&nx, src, strict, &e);
    if (!rc && prepare) {
        /* what PUT /v1/estate does with a body (serve/engine.c parse_estate) */
        static const berth_nexus_options opt = {.use_index = 1, .tiebreak = BERTH_TIE_FIRST};
        rc = berth_nexus_validate(&nx, &e);
        if (!rc)
            rc = berth_nexus_prepare(&nx, &opt, &e);
    }
    (void)rc;
    berth_nexus_free(&nx);
}

static void fuzz_kube(const berth_source *src, int strict)
{
    berth_error e;
    berth_error_clear(&e);
    berth_kcluster k;
    berth_kube_init(&k);
    if (!berth_kube_load(&k, src, strict, &e))
        (void)berth_kube_expand(&k, &e); /* workloads -> pods, priority classes */
    berth_kube_free(&k);
}

static void fuzz_fleet(const berth_source *src, int strict)
{
    berth_error e;
    berth_error_clear(&e);
    berth_fleet f;
    berth_fleet_init(&f);
    (void)berth_fleet_load(&f, src, strict, &e);
    berth_fleet_free(&f);
}

/* Decodes data and runs every loader on the result (strict chosen by the
 * input's length, so both modes are exercised). */
static int fuzz_one(const uint8_t *data, size_t size, int prepare)
{
    if (size > FUZZ_MAX_INPUT)
        return 0;
    berth_arena a;
    berth_arena_init(&a, 0);
    berth_error e;
    berth_error_clear(&e);
    berth_source src;
    memset(&src, 0, sizeof src);
    int strict = (int)(size & 1u);
    if (berth_doc_load_buffer(&a, "fuzz", (const char *)data, size, &src, &e) == 0) {
        fuzz_nexus(&src, strict, prepare);
        fuzz_kube(&src, strict);
        fuzz_fleet(&src, strict);
    }
    berth_arena_free(&a);
    return 0;
}

#endif
