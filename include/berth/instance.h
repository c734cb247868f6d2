/* berth/instance.h - the instance catalog shared by disruption (SPEC 4.1)
 * and autoscaling (SPEC 5): berth.io/v1 InstanceType documents (capacity
 * and offerings per zone and capacity type, with price, availability and
 * spot interruption rate) and the capacity types in launch order.
 *
 * Ownership: strings and offering arrays live in the arena handed to the
 * decoder; a table of types is a berth_grow vector owned by the caller. */
#ifndef BERTH_INSTANCE_H
#define BERTH_INSTANCE_H

#include <stdint.h>

#include "berth/arena.h"
#include "berth/doc.h"
#include "berth/error.h"

typedef enum berth_capacity_type {
    BERTH_CT_RESERVED,       /* launch order: reserved -> spot -> on-demand */
    BERTH_CT_SPOT,
    BERTH_CT_ON_DEMAND,
    BERTH_CT_COUNT
} berth_capacity_type;
/* "reserved", "spot", "on-demand" -> the type; -1 otherwise. */
int berth_capacity_type_parse(const char *s);
const char *berth_capacity_type_name(berth_capacity_type c);

typedef struct berth_offering {
    const char *zone;
    berth_capacity_type capacity_type;
    double price;                 /* per hour */
    int available;                /* default true */
    double interruption_rate;     /* spot: expected interruptions, a fraction (0.05 = 5 %) */
} berth_offering;

typedef struct berth_instance_type {
    const char *name;
    const char *family;           /* spec.family, else the name up to its first '.' */
    int64_t cpu, memory, pods;    /* millicores, bytes, count (default 110) */
    int64_t gpus;                 /* nvidia.com/gpu */
    berth_offering *offerings;
    uint32_t nofferings;
} berth_instance_type;

/* Decodes one InstanceType document (apiVersion already checked; strict:
 * an unknown field is always an error) into *out, strings in a. 0 or
 * BERTH_EINVAL / BERTH_ENOMEM with a located message in d->err. */
int berth_instance_type_decode(berth_dec *d, berth_arena *a, const berth_node *doc,
                               berth_instance_type *out);
/* Decodes doc and appends it to the table *v (n used, cap allocated),
 * rejecting a second type of the same name. */
int berth_instance_types_add(berth_dec *d, berth_arena *a, const berth_node *doc,
                             berth_instance_type **v, uint32_t *n, uint32_t *cap);
/* Index of the type named name in v[0..n), -1 when absent (linear). */
int berth_instance_type_find(const berth_instance_type *v, uint32_t n, const char *name);
/* The offering of t in zone with capacity type ct, NULL when none. */
const berth_offering *berth_instance_offering(const berth_instance_type *t, const char *zone,
                                              berth_capacity_type ct);

#endif
