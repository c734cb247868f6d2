/* tests/unit/disrupt_fixture.h - what the disruption unit tests share: the
 * YAML buffer (yaml_buf.h) and loading it into a model. Include after
 * cmocka.h (and after defining YAML_BUF_SIZE for a larger buffer). */
#ifndef BERTH_TEST_DISRUPT_FIXTURE_H
#define BERTH_TEST_DISRUPT_FIXTURE_H

#include "berth/disrupt.h"
#include "yaml_buf.h"

/* Initialises m, loads b into it (strict, as "t.yaml") and finalises it:
 * 0, or the error code with e set. m is to be freed either way. */
static int load_model(berth_disrupt *m, const buf *b, berth_error *e)
{
    berth_disrupt_init(m);
    berth_error_clear(e);
    berth_source src;
    int rc = berth_doc_load_buffer(&m->kube.arena, "t.yaml", b->s, b->n, &src, e);
    if (!rc)
        rc = berth_disrupt_load(m, &src, 1, e);
    if (!rc)
        rc = berth_disrupt_finalize(m, e);
    return rc;
}

#endif
