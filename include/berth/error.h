/* berth/error.h - error codes and the error record every fallible call fills.
 *
 * Functions return 0 on success or a negative BERTH_E* code. When a caller
 * passes a berth_error, the callee writes a one-line message for humans into
 * it; messages about input carry "file:line:column: field.path: what".
 *
 * Threads: berth_strerror returns constant strings; an error record
 * belongs to one call at a time. */
#ifndef BERTH_ERROR_H
#define BERTH_ERROR_H

#include <stddef.h>

/* X-macro: code, name, description. Exit code for the CLI in last column. */
#define BERTH_ERROR_LIST(X)                                              \
    X(BERTH_OK,        0, "OK",        "success", 0)                     \
    X(BERTH_EINVAL,   -1, "EINVAL",    "invalid input", 2)               \
    X(BERTH_ENOMEM,   -2, "ENOMEM",    "out of memory", 3)               \
    X(BERTH_EIO,      -3, "EIO",       "input/output error", 2)          \
    X(BERTH_ENOFIT,   -4, "ENOFIT",    "does not fit", 1)                \
    X(BERTH_ENOENT,   -5, "ENOENT",    "no such object", 2)              \
    X(BERTH_ELIMIT,   -6, "ELIMIT",    "input exceeds a limit", 2)       \
    X(BERTH_EINTERNAL,-7, "EINTERNAL", "internal error", 3)           \
    X(BERTH_ETIMEDOUT,-8, "ETIMEDOUT", "stopped at its deadline", 2)

enum berth_error_code {
#define BERTH_X_ENUM(sym, val, name, desc, exitc) sym = val,
    BERTH_ERROR_LIST(BERTH_X_ENUM)
#undef BERTH_X_ENUM
};

#define BERTH_ERROR_MSG_MAX 1024

typedef struct berth_error {
    int code;                       /* last code set, 0 when none */
    char msg[BERTH_ERROR_MSG_MAX];  /* human message, "" when none */
} berth_error;

/* Short symbolic name ("EINVAL") and description of a code. Never NULL. */
const char *berth_err_name(int code);
const char *berth_strerror(int code);
/* CLI exit code for an error code (SPEC 6.2: 1 unplaced, 2 bad input, 3 internal). */
int berth_err_exit_code(int code);

/* Records code and a printf-style message in e (if e is not NULL) and
 * returns code, so callers can write `return berth_error_set(e, ...)`. */
int berth_error_set(berth_error *e, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void berth_error_clear(berth_error *e);

#endif
