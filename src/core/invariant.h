/* core/invariant.h - SQLite-style invariant checks for the library.
 *
 *   BERTH_ASSERT(X)  X must hold; checked (abort with file:line) in debug
 *                    and sanitizer builds, compiled out in release.
 *   ALWAYS(X)        X is believed always true, yet the code handles the
 *                    false case (`if (!ALWAYS(i < n)) return BERTH_EINTERNAL;`):
 *                    aborts in debug/sanitizer builds so tests find the
 *                    case, and is the plain cheap test (X) in release.
 *   NEVER(X)         the same for a condition believed always false.
 *
 * Debug builds are those with BERTH_DEBUG defined, or built with
 * AddressSanitizer (what `make check` and `make torture` use); define
 * BERTH_NDEBUG to force release behaviour. */
#ifndef BERTH_CORE_INVARIANT_H
#define BERTH_CORE_INVARIANT_H

#include <stdio.h>
#include <stdlib.h>

#if !defined(BERTH_DEBUG) && !defined(BERTH_NDEBUG)
#if defined(__SANITIZE_ADDRESS__)
#define BERTH_DEBUG 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define BERTH_DEBUG 1
#endif
#endif
#endif

#if defined(BERTH_DEBUG) && !defined(BERTH_NDEBUG)
static inline int berth_invariant_failed(const char *what, const char *file, int line)
{
    fprintf(stderr, "%s:%d: berth: invariant violated: %s\n", file, line, what);
    abort();
    return 0;
}
#define BERTH_ASSERT(X) ((X) ? (void)0 : (void)berth_invariant_failed(#X, __FILE__, __LINE__))
#define ALWAYS(X) ((X) ? 1 : berth_invariant_failed("ALWAYS(" #X ")", __FILE__, __LINE__))
#define NEVER(X) ((X) ? berth_invariant_failed("NEVER(" #X ")", __FILE__, __LINE__) : 0)
#else
#define BERTH_ASSERT(X) ((void)0)
#define ALWAYS(X) (X)
#define NEVER(X) (X)
#endif

#endif
