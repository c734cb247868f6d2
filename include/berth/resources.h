/* berth/resources.h - a resource vector: cpu, memory, ephemeral-storage,
 * pods and up to BERTH_MAX_EXT_RESOURCES extended resources by name.
 *
 * Units (SPEC 0): cpu in millicores, memory and ephemeral-storage in bytes,
 * pods and extended resources in counts. A vector is a plain value: zero it
 * with berth_resources_zero (or = {0}), copy it with assignment. Extended
 * resource names are borrowed, not copied: the caller keeps the string alive
 * (usually in the run's arena) as long as the vector. Names compare with
 * strcmp; an extended resource that is absent counts as 0. No function
 * allocates.
 *
 * Threads: pure functions on caller-owned values; safe to call
 * concurrently. */
#ifndef BERTH_RESOURCES_H
#define BERTH_RESOURCES_H

#include <stdbool.h>
#include <stdint.h>

#include "berth/quantity.h"

#define BERTH_MAX_EXT_RESOURCES 8

/* Names of the four built-in resources. */
#define BERTH_RES_CPU "cpu"
#define BERTH_RES_MEMORY "memory"
#define BERTH_RES_EPHEMERAL "ephemeral-storage"
#define BERTH_RES_PODS "pods"

typedef struct berth_ext_resource {
    const char *name;    /* e.g. "nvidia.com/gpu"; borrowed */
    int64_t value;
} berth_ext_resource;

typedef struct berth_resources {
    int64_t cpu_milli, memory, ephemeral, pods;
    uint32_t n_ext;      /* entries used in ext, in insertion order */
    berth_ext_resource ext[BERTH_MAX_EXT_RESOURCES];
} berth_resources;

void berth_resources_zero(berth_resources *r);

/* dst += src, per resource; an extended resource of src missing from dst is
 * appended (unless its value is 0). Returns 0, or BERTH_ELIMIT when a value
 * would overflow int64 or dst has no room for another extended resource;
 * dst is unchanged on error. */
int berth_resources_add(berth_resources *dst, const berth_resources *src);
/* dst -= src, per resource (results may go negative). Same errors as add. */
int berth_resources_sub(berth_resources *dst, const berth_resources *src);
/* dst = max(dst, src), per resource (for the init-container rule).
 * BERTH_ELIMIT when dst has no room; dst is unchanged on error. */
int berth_resources_max(berth_resources *dst, const berth_resources *src);

/* True when a <= b for every resource (a missing extended resource is 0 on
 * either side). */
bool berth_resources_fits(const berth_resources *a, const berth_resources *b);

/* Value by name ("cpu" in millicores, "memory", "ephemeral-storage",
 * "pods", anything else extended); 0 when absent or name is NULL. */
int64_t berth_resources_get(const berth_resources *r, const char *name);
/* Sets a value by name; a new extended resource is appended (name
 * borrowed). Returns 0, BERTH_EINVAL for a NULL or empty name, or
 * BERTH_ELIMIT when there is no room for another extended resource. */
int berth_resources_set(berth_resources *r, const char *name, int64_t value);
/* Sets from a quantity: cpu takes berth_quantity_milli, others
 * berth_quantity_value (both round away from zero, like Kubernetes).
 * Returns as berth_resources_set, or BERTH_ELIMIT when the scaled value
 * does not fit in int64 (e.g. cpu "1e17"). */
int berth_resources_set_quantity(berth_resources *r, const char *name,
                                 berth_quantity q);

/* Iteration over every slot: i in [0, berth_resources_count(r)) gives cpu,
 * memory, ephemeral-storage, pods, then the extended resources in order.
 * Returns the name and stores the value in *value (if not NULL); NULL when
 * i is out of range. */
uint32_t berth_resources_count(const berth_resources *r);
const char *berth_resources_at(const berth_resources *r, uint32_t i,
                               int64_t *value);

#endif
