/* core/resources.c - the resource vector: arithmetic, fit test and access
 * by resource name. */
#include "berth/resources.h"
#include "berth/error.h"

#include <string.h>

enum { SLOT_CPU, SLOT_MEMORY, SLOT_EPHEMERAL, SLOT_PODS, N_BUILTIN };

static const char *const builtin_names[N_BUILTIN] = {
    BERTH_RES_CPU, BERTH_RES_MEMORY, BERTH_RES_EPHEMERAL, BERTH_RES_PODS,
};

static int64_t *builtin_slot(berth_resources *r, int slot)
{
    switch (slot) {
    case SLOT_CPU: return &r->cpu_milli;
    case SLOT_MEMORY: return &r->memory;
    case SLOT_EPHEMERAL: return &r->ephemeral;
    default: return &r->pods;
    }
}

static int64_t builtin_get(const berth_resources *r, int slot)
{
    switch (slot) {
    case SLOT_CPU: return r->cpu_milli;
    case SLOT_MEMORY: return r->memory;
    case SLOT_EPHEMERAL: return r->ephemeral;
    default: return r->pods;
    }
}

static int builtin_index(const char *name)
{
    for (int i = 0; i < N_BUILTIN; i++)
        if (strcmp(name, builtin_names[i]) == 0)
            return i;
    return -1;
}

/* Index of an extended resource in r, or -1. */
static int ext_index(const berth_resources *r, const char *name)
{
    for (uint32_t i = 0; i < r->n_ext && i < BERTH_MAX_EXT_RESOURCES; i++)
        if (r->ext[i].name && strcmp(r->ext[i].name, name) == 0)
            return (int)i;
    return -1;
}

/* Pointer to the extended slot for name, appending it (value 0) if needed;
 * NULL when full. */
static int64_t *ext_slot(berth_resources *r, const char *name)
{
    int i = ext_index(r, name);
    if (i >= 0)
        return &r->ext[i].value;
    if (r->n_ext >= BERTH_MAX_EXT_RESOURCES)
        return NULL;
    r->ext[r->n_ext].name = name;
    r->ext[r->n_ext].value = 0;
    return &r->ext[r->n_ext++].value;
}

void berth_resources_zero(berth_resources *r)
{
    memset(r, 0, sizeof *r);
}

enum combine_op { OP_ADD, OP_SUB, OP_MAX };

static bool combine(int64_t *d, int64_t s, enum combine_op op)
{
    switch (op) {
    case OP_ADD: return !__builtin_add_overflow(*d, s, d);
    case OP_SUB: return !__builtin_sub_overflow(*d, s, d);
    default:
        if (s > *d)
            *d = s;
        return true;
    }
}

static int combine_all(berth_resources *dst, const berth_resources *src,
                       enum combine_op op)
{
    berth_resources t = *dst;
    for (int i = 0; i < N_BUILTIN; i++)
        if (!combine(builtin_slot(&t, i),
                     builtin_get(src, i), op))
            return BERTH_ELIMIT;
    for (uint32_t i = 0; i < src->n_ext && i < BERTH_MAX_EXT_RESOURCES; i++) {
        const berth_ext_resource *e = &src->ext[i];
        if (!e->name)
            continue;
        if (e->value == 0 && ext_index(&t, e->name) < 0)
            continue;   /* absent is 0 already; do not spend a slot */
        int64_t *slot = ext_slot(&t, e->name);
        if (!slot || !combine(slot, e->value, op))
            return BERTH_ELIMIT;
    }
    *dst = t;
    return 0;
}

int berth_resources_add(berth_resources *dst, const berth_resources *src)
{
    return combine_all(dst, src, OP_ADD);
}

int berth_resources_sub(berth_resources *dst, const berth_resources *src)
{
    return combine_all(dst, src, OP_SUB);
}

int berth_resources_max(berth_resources *dst, const berth_resources *src)
{
    return combine_all(dst, src, OP_MAX);
}

bool berth_resources_fits(const berth_resources *a, const berth_resources *b)
{
    if (a->cpu_milli > b->cpu_milli || a->memory > b->memory ||
        a->ephemeral > b->ephemeral || a->pods > b->pods)
        return false;
    for (uint32_t i = 0; i < a->n_ext && i < BERTH_MAX_EXT_RESOURCES; i++)
        if (a->ext[i].name &&
            a->ext[i].value > berth_resources_get(b, a->ext[i].name))
            return false;
    /* b's extended resources absent from a: a has 0 there. */
    for (uint32_t i = 0; i < b->n_ext && i < BERTH_MAX_EXT_RESOURCES; i++)
        if (b->ext[i].name && b->ext[i].value < 0 &&
            ext_index(a, b->ext[i].name) < 0)
            return false;
    return true;
}

int64_t berth_resources_get(const berth_resources *r, const char *name)
{
    if (!name)
        return 0;
    int b = builtin_index(name);
    if (b >= 0)
        return builtin_get(r, b);
    int i = ext_index(r, name);
    return i >= 0 ? r->ext[i].value : 0;
}

int berth_resources_set(berth_resources *r, const char *name, int64_t value)
{
    if (!name || !*name)
        return BERTH_EINVAL;
    int b = builtin_index(name);
    int64_t *slot = b >= 0 ? builtin_slot(r, b) : ext_slot(r, name);
    if (!slot)
        return BERTH_ELIMIT;
    *slot = value;
    return 0;
}

int berth_resources_set_quantity(berth_resources *r, const char *name,
                                 berth_quantity q)
{
    if (!name || !*name)
        return BERTH_EINVAL;
    bool cpu = strcmp(name, BERTH_RES_CPU) == 0;
    __int128 div = cpu ? 1000000 : 1000000000;
    /* Exact range check before the saturating conversion. */
    __int128 whole = q.nano / div;
    if (whole > INT64_MAX || whole < INT64_MIN ||
        (whole == INT64_MAX && q.nano % div > 0) ||
        (whole == INT64_MIN && q.nano % div < 0))
        return BERTH_ELIMIT;
    return berth_resources_set(r, name, cpu ? berth_quantity_milli(q)
                                            : berth_quantity_value(q));
}

uint32_t berth_resources_count(const berth_resources *r)
{
    uint32_t n = r->n_ext < BERTH_MAX_EXT_RESOURCES ? r->n_ext
                                                    : BERTH_MAX_EXT_RESOURCES;
    return N_BUILTIN + n;
}

const char *berth_resources_at(const berth_resources *r, uint32_t i,
                               int64_t *value)
{
    if (i >= berth_resources_count(r))
        return NULL;
    int64_t v = i < N_BUILTIN ? builtin_get(r, (int)i)
                              : r->ext[i - N_BUILTIN].value;
    if (value)
        *value = v;
    return i < N_BUILTIN ? builtin_names[i] : r->ext[i - N_BUILTIN].name;
}
