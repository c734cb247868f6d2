/* core/hash.c - the keyed byte-string hash of the input-keyed tables
 * (berth/hash.h): drawing a key (the name index's generator) and
 * SipHash-2-4 through libsodium. Owns no state. */
#include "berth/hash.h"
#include "berth/nameidx.h"

#include <sodium.h>
#include <string.h>

_Static_assert(BERTH_HASHKEY_BYTES == crypto_shorthash_KEYBYTES, "SipHash key size");
_Static_assert(BERTH_HASHKEY_BYTES == BERTH_NAMEIDX_KEY, "one key generator");
_Static_assert(crypto_shorthash_BYTES == sizeof(uint64_t), "SipHash-2-4 gives 8 bytes");

void berth_hashkey_new(berth_hashkey *k)
{
    berth_nameidx_key_new(k->b);
}

uint64_t berth_hash_keyed(const berth_hashkey *k, const void *s, size_t n)
{
    unsigned char out[crypto_shorthash_BYTES];
    crypto_shorthash(out, s, n, k->b);
    uint64_t h;
    memcpy(&h, out, sizeof h);
    return h;
}

uint64_t berth_hash_keyed_then(uint64_t h, const berth_hashkey *k, const char *s)
{
    s = s ? s : "";
    return berth_hash_keyed(k, s, strlen(s)) ^ (h * 0x9e3779b97f4a7c15ull + 0x632be59bd9b4e019ull);
}
