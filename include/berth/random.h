/* berth/random.h - seeded, portable random numbers (splitmix64 seeding a
 * xoshiro256** generator). Same seed, same sequence, on every machine.
 *
 * Threads: a generator is a value owned by its caller; one generator
 * from one thread at a time. */
#ifndef BERTH_RANDOM_H
#define BERTH_RANDOM_H

#include <stdint.h>

typedef struct berth_rng { uint64_t s[4]; } berth_rng;

void berth_rng_seed(berth_rng *r, uint64_t seed);
uint64_t berth_rng_next(berth_rng *r);
/* Uniform integer in [0, n), n > 0, without modulo bias. */
uint64_t berth_rng_below(berth_rng *r, uint64_t n);

#endif
