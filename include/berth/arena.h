/* berth/arena.h - bump allocator: many small allocations, one release.
 *
 * A run (a loaded input set, a simulation) allocates from an arena and frees
 * it in one call. Blocks grow geometrically; an arena has a hard byte cap
 * (0 = unlimited) so input-driven growth cannot exhaust the machine.
 *
 * Threads: an arena is not locked; one arena from one thread at a time.
 * Distinct arenas may be used from different threads. */
#ifndef BERTH_ARENA_H
#define BERTH_ARENA_H

#include <stddef.h>

typedef struct berth_arena_block berth_arena_block;

typedef struct berth_arena {
    berth_arena_block *head;  /* current block, linked to older ones */
    size_t used_total;        /* bytes handed out */
    size_t cap;               /* max bytes, 0 = unlimited */
} berth_arena;

void berth_arena_init(berth_arena *a, size_t cap);
/* Zeroed memory aligned to 16 bytes, or NULL when out of memory or over cap. */
void *berth_arena_alloc(berth_arena *a, size_t size);
/* Copy of s (n bytes, NUL added), NULL on failure. */
char *berth_arena_strndup(berth_arena *a, const char *s, size_t n);
char *berth_arena_strdup(berth_arena *a, const char *s);
/* Releases every block; the arena can be reused afterwards. */
void berth_arena_free(berth_arena *a);
/* Releases every block but the newest, which is emptied and kept for the
 * next allocations (a scratch arena reused for one item after another:
 * its memory stays warm). Pointers into the arena become invalid. */
void berth_arena_reset(berth_arena *a);
/* Moves every block of src into dst, which goes on allocating from its own
 * newest block; src is left empty. Pointers into src stay valid and now
 * live as long as dst. */
void berth_arena_adopt(berth_arena *dst, berth_arena *src);

#endif
