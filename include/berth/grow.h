/* berth/grow.h - growable arrays: the one doubling rule every table (and
 * byte buffer) uses.
 *
 * Threads: no shared state; a table belongs to its caller. */
#ifndef BERTH_GROW_H
#define BERTH_GROW_H

#include <stddef.h>
#include <stdint.h>

/* Makes *p hold at least `need` elements of `elem` bytes, doubling *cap
 * (from 8); new elements are zeroed. limit caps the capacity (0 = no cap
 * below UINT32_MAX / 2). Returns 0, BERTH_ELIMIT (need > limit) or
 * BERTH_ENOMEM; on failure *p and *cap are unchanged. */
int berth_grow(void **p, uint32_t *cap, uint32_t need, size_t elem, uint32_t limit);

/* berth_grow for an append-only table whose entries are written whole as
 * they are appended (the loaders' pod, node and NodeClaim records): the
 * new capacity is left as realloc returns it, not zeroed. Doubling leaves
 * up to half a table unused (150 k pods: capacity 262,144, 75 % more than
 * the records), and zeroing it touched that memory for nothing: memory
 * first touched costs a page fault and a page clear, so a table that
 * doubled just past a power of two cost more per record than one just
 * below it (issue 18: load time per node was not constant across sizes).
 * Untouched capacity costs no memory. Same returns as berth_grow. */
int berth_grow_append(void **p, uint32_t *cap, uint32_t need, size_t elem, uint32_t limit);

/* The same for a byte buffer (text being built): makes *p hold at least
 * `need` bytes, doubling *cap (from `first` when it is 0); new bytes are
 * not zeroed. Returns 0 or BERTH_ENOMEM; on failure *p and *cap are
 * unchanged. */
int berth_grow_bytes(void **p, size_t *cap, size_t need, size_t first);

/* Large tables are read at random by the planners (the pod table at 50 k
 * nodes is ~500 MB): with 4 KB pages most of those reads also miss the
 * TLB. berth_advise_huge asks the kernel (madvise MADV_HUGEPAGE, for
 * transparent huge pages in "madvise" mode) to back the 2 MB-aligned
 * interior of [p, p + len) with 2 MB pages where it is touched next; it
 * does nothing below BERTH_HUGE_MIN bytes or where the call is not
 * available, and never changes the memory's contents. berth_grow calls it
 * before it zeroes a table's new part (a part realloc copied is already
 * backed), the arena on a new block before first use. The minimum is
 * glibc's largest dynamic mmap threshold (32 MB): larger blocks are
 * mappings of their own, so the advice ends with them and never reaches
 * the shared heap. */
#define BERTH_HUGE_MIN (32u * 1024u * 1024u)
void berth_advise_huge(void *p, size_t len);

/* Open-addressing slot tables (linear probing from the hash's low bits; a
 * slot holds an entry's index + 1, 0 = empty) over entries that keep their
 * own hash (hash_size 4 or 8 bytes: uint32_t or uint64_t) at byte offset
 * hash_off, stride bytes apart. Replaces *table (of *cap slots) by one of
 * ncap slots (a power of two above n) holding entries 0..n-1. 0 or
 * BERTH_ENOMEM (then *table and *cap are unchanged). Reads the entries
 * only. */
int berth_slots_rebuild(uint32_t **table, uint32_t *cap, uint32_t ncap, const void *entries,
                        size_t stride, size_t hash_off, size_t hash_size, uint32_t n);
/* The longest run of consecutive used slots of such a table (what a miss
 * may probe; a run across the end counts whole): O(cap), for tests and
 * diagnostics. */
uint32_t berth_slots_longest_run(const uint32_t *table, uint32_t cap);

#endif
