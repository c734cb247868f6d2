/* report/warnings.c - the kinds a load skipped (berth_skips, SPEC 6.1) and
 * the planners' warnings about input they ignore, in one list: the
 * `warnings` array of the JSON reports (SPEC 6.3) and stderr lines. Every
 * command and endpoint that reads Kubernetes objects uses these. */
#include "berth/report.h"

int berth_report_warnings_text(FILE *out, const berth_skips *s)
{
    char line[1024];
    for (uint32_t i = 0; i < s->n; i++) {
        berth_skip_text(&s->items[i], line, sizeof line);
        fprintf(out, "berth: %s\n", line);
    }
    return ferror(out) ? BERTH_EIO : 0;
}

json_t *berth_report_warnings_json(const berth_skips *s)
{
    json_t *a = json_array();
    char line[1024];
    for (uint32_t i = 0; a && i < s->n; i++) {
        berth_skip_text(&s->items[i], line, sizeof line);
        if (json_array_append_new(a, json_string(line))) {
            json_decref(a);
            return NULL;
        }
    }
    return a;
}

int berth_report_set_warnings(json_t *root, const berth_skips *s)
{
    json_t *a = berth_report_warnings_json(s);
    if (!root) { /* the caller's object failed: a must not leak */
        json_decref(a);
        return BERTH_ENOMEM;
    }
    return a && !json_object_set_new(root, "warnings", a) ? 0 : BERTH_ENOMEM;
}
