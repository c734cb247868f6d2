/* berth/nameidx.h - a name -> index hash table (open addressing, keyed
 * SipHash-2-4): the one index every loader and planner uses to find an
 * object by name in O(1) expected time instead of comparing against every
 * earlier object.
 *
 * The names come from the input, so the hash is keyed: each index draws
 * a random key at its first add (or berth_nameidx_hash_in), and names
 * crafted to share a slot under a public hash (an unkeyed one such as
 * FNV-1a lets a client compute 50,000 such mapping keys in a fraction of a
 * second; they made every insert probe all the earlier ones) spread like
 * any others.
 *
 * Names are not copied: each name must outlive the index (loaders keep
 * them in their arena). A name maps to one index; adding a name that is
 * there already reports the index it has.
 *
 * Threads: no shared state; an index belongs to its caller. Lookups on an
 * index nobody modifies may run concurrently. */
#ifndef BERTH_NAMEIDX_H
#define BERTH_NAMEIDX_H

#include <stddef.h>
#include <stdint.h>

#define BERTH_NAMEIDX_NONE UINT32_MAX
#define BERTH_NAMEIDX_KEY 16 /* bytes of a hash key (libsodium's crypto_shorthash) */

typedef struct berth_nameidx_slot {
    const char *name;             /* NULL: empty */
    uint32_t hash, id;
} berth_nameidx_slot;

typedef struct berth_nameidx {
    berth_nameidx_slot *slot;     /* cap slots, cap a power of two (or 0) */
    uint32_t cap, n;
    unsigned char key[BERTH_NAMEIDX_KEY]; /* drawn at the first add (keyed set) */
    int keyed;
} berth_nameidx;

/* An empty index is all zero (a zeroed struct is ready to use). */
void berth_nameidx_init(berth_nameidx *x);
void berth_nameidx_free(berth_nameidx *x);
/* A new random hash key (getrandom(2); where that fails, the clock and
 * addresses, which still differ from run to run). Thread-safe. */
void berth_nameidx_key_new(unsigned char key[BERTH_NAMEIDX_KEY]);
/* The hash of s under key (SipHash-2-4, its low 32 bits). */
uint32_t berth_nameidx_hash(const unsigned char key[BERTH_NAMEIDX_KEY], const char *s);
/* The index of name, BERTH_NAMEIDX_NONE when absent (or name NULL). */
uint32_t berth_nameidx_find(const berth_nameidx *x, const char *name);
/* The same for the n bytes at s, which need no terminator (a name inside
 * a larger text): the index of the name equal to them. */
uint32_t berth_nameidx_find_n(const berth_nameidx *x, const char *s, size_t n);
/* Adds name -> id when name is absent: 0; when present: 1 and *had (may be
 * NULL) gets its index, the table unchanged; BERTH_ENOMEM. The table grows
 * to keep at most half of its slots in use. */
int berth_nameidx_add(berth_nameidx *x, const char *name, uint32_t id, uint32_t *had);
/* Adds or replaces: name maps to id afterwards. 0 or BERTH_ENOMEM. */
int berth_nameidx_put(berth_nameidx *x, const char *name, uint32_t id);
/* The same three in two steps, for a caller that adds a name only when a
 * lookup missed and must not pay for its hash twice: berth_nameidx_hash_in
 * is name's hash in x (it draws x's key when x has none), the other two
 * take that hash, and h must be it (from the same x, since its last
 * berth_nameidx_free). */
uint32_t berth_nameidx_hash_in(berth_nameidx *x, const char *name);
uint32_t berth_nameidx_find_hash(const berth_nameidx *x, const char *name, uint32_t h);
int berth_nameidx_add_hash(berth_nameidx *x, const char *name, uint32_t h, uint32_t id,
                           uint32_t *had);
/* Empties x, keeping its slots and its key (a table rebuilt often). */
void berth_nameidx_clear(berth_nameidx *x);
/* Room for n names without growing: 0 or BERTH_ENOMEM. */
int berth_nameidx_reserve(berth_nameidx *x, uint32_t n);
/* Removes name when it maps to id (any id: BERTH_NAMEIDX_NONE) and returns
 * the index it had; BERTH_NAMEIDX_NONE when it was not there (the table
 * unchanged). The run after it closes up, so lookups stay exact. */
uint32_t berth_nameidx_remove(berth_nameidx *x, const char *name, uint32_t id);
/* The longest run of consecutive used slots (what a miss may probe):
 * O(cap), for tests and diagnostics. */
uint32_t berth_nameidx_longest_run(const berth_nameidx *x);

#endif
