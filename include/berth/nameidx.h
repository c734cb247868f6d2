/* berth/nameidx.h - a name -> index hash table (open addressing, FNV-1a):
 * the one index every loader and planner uses to find an object by name in
 * O(1) expected time instead of comparing against every earlier object.
 *
 * Names are not copied: each name must outlive the index (loaders keep
 * them in their arena). A name maps to one index; adding a name that is
 * there already reports the index it has.
 *
 * Threads: no shared state; an index belongs to its caller. Lookups on an
 * index nobody modifies may run concurrently. */
#ifndef BERTH_NAMEIDX_H
#define BERTH_NAMEIDX_H

#include <stdint.h>

#define BERTH_NAMEIDX_NONE UINT32_MAX

typedef struct berth_nameidx_slot {
    const char *name;             /* NULL: empty */
    uint32_t hash, id;
} berth_nameidx_slot;

typedef struct berth_nameidx {
    berth_nameidx_slot *slot;     /* cap slots, cap a power of two (or 0) */
    uint32_t cap, n;
} berth_nameidx;

/* An empty index is all zero (a zeroed struct is ready to use). */
void berth_nameidx_init(berth_nameidx *x);
void berth_nameidx_free(berth_nameidx *x);
/* FNV-1a 32 of s. */
uint32_t berth_nameidx_hash(const char *s);
/* The index of name, BERTH_NAMEIDX_NONE when absent (or name NULL). */
uint32_t berth_nameidx_find(const berth_nameidx *x, const char *name);
/* Adds name -> id when name is absent: 0; when present: 1 and *had (may be
 * NULL) gets its index, the table unchanged; BERTH_ENOMEM. The table grows
 * to keep at most half of its slots in use. */
int berth_nameidx_add(berth_nameidx *x, const char *name, uint32_t id, uint32_t *had);
/* Adds or replaces: name maps to id afterwards. 0 or BERTH_ENOMEM. */
int berth_nameidx_put(berth_nameidx *x, const char *name, uint32_t id);

#endif
