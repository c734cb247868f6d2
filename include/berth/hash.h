/* berth/hash.h - the keyed byte-string hash of berth's in-memory tables
 * whose keys come from the input (kube signature maps and pod classes, the
 * fast path's and the fit index's class tables, label columns, taint sets,
 * the extender's reason texts): SipHash-2-4 through libsodium's
 * crypto_shorthash under a random 16-byte key.
 *
 * Why keyed: an unkeyed hash (berth had a multiply / xor-shift one here)
 * has collisions a client can compute once and send forever: whole
 * families of strings sharing one hash, which turn a linear-probing table
 * quadratic. Under a secret key drawn per table owner nobody outside the
 * process can tell which inputs share a slot.
 *
 * How to use: a table's owner draws one key when it is created
 * (berth_hashkey_new: one getrandom(2) call, never per pod or per node),
 * hashes every entry with it for the owner's lifetime, and keeps the hash
 * beside each entry, so growing the table (berth_slots_rebuild, berth/grow.h)
 * reuses the stored hashes and never needs the key again. A table takes the
 * hash's low bits. Values differ from run to run: never stored, never
 * printed, and nothing may iterate a table's slots into output or
 * decisions (iterate its dense entries instead). Names looked up by
 * NUL-terminated string use berth/nameidx.h, keyed the same way.
 *
 * Threads: berth_hashkey_new is thread-safe; berth_hash_keyed is a pure
 * function of its arguments, safe from any thread on a key nobody writes. */
#ifndef BERTH_HASH_H
#define BERTH_HASH_H

#include <stddef.h>
#include <stdint.h>

#define BERTH_HASHKEY_BYTES 16 /* libsodium's crypto_shorthash_KEYBYTES */

typedef struct berth_hashkey {
    unsigned char b[BERTH_HASHKEY_BYTES];
} berth_hashkey;

/* A new random key (berth_nameidx_key_new: getrandom(2), or where that
 * fails the clock and addresses, which still differ from run to run). */
void berth_hashkey_new(berth_hashkey *k);

/* SipHash-2-4 of the n bytes at s under k. */
uint64_t berth_hash_keyed(const berth_hashkey *k, const void *s, size_t n);

/* A key of several strings (namespace and name, kind, namespace and name):
 * h is the hash of the strings before s (0 before the first), the result
 * that of the sequence with s (NUL-terminated; NULL hashes as "") after
 * them. Each string is hashed under k and folded in by an odd multiply, so
 * the result stays unpredictable without k, and (a, b) and (b, a) differ. */
uint64_t berth_hash_keyed_then(uint64_t h, const berth_hashkey *k, const char *s);

#endif
