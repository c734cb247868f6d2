/* tests/torture/fail_alloc.c - failure injection for `make torture`: the
 * torture binaries are linked with -Wl,--wrap=malloc,--wrap=calloc,
 * --wrap=realloc,--wrap=strdup, so every allocation the library and the
 * CLI make comes here; jansson's and SQLite's allocators are pointed here
 * too (json_set_alloc_funcs, SQLITE_CONFIG_MALLOC) from a constructor.
 * Allocations are counted; the Nth fails (returns NULL) once.
 *
 *   BERTH_FAIL_AT=N        fail the Nth allocation (0 or unset: count only)
 *   BERTH_FAIL_REPORT=FILE at exit, write "<allocations> <failed>\n" there
 *                          (failed is 1 when the Nth allocation happened)
 *
 * In-process drivers call torture_fail_at() / torture_allocations() /
 * torture_failed() instead (tests/torture/torture.h). libyaml's own
 * allocations are not reachable (it has no allocator hook). */
#include "torture.h"

#include <fcntl.h>
#include <jansson.h>
#include <malloc.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t m);
void *__real_realloc(void *p, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t m);
void *__wrap_realloc(void *p, size_t n);
char *__wrap_strdup(const char *s);

/* test-harness state: the counter every thread shares */
static unsigned long alloc_count, fail_at;
static int failed_flag;

void torture_fail_at(unsigned long n)
{
    __atomic_store_n(&alloc_count, 0, __ATOMIC_SEQ_CST);
    __atomic_store_n(&failed_flag, 0, __ATOMIC_SEQ_CST);
    __atomic_store_n(&fail_at, n, __ATOMIC_SEQ_CST);
}

unsigned long torture_allocations(void)
{
    return __atomic_load_n(&alloc_count, __ATOMIC_SEQ_CST);
}

int torture_failed(void)
{
    return __atomic_load_n(&failed_flag, __ATOMIC_SEQ_CST);
}

/* 1 when this allocation is to fail */
static int should_fail(void)
{
    unsigned long k = __atomic_add_fetch(&alloc_count, 1, __ATOMIC_SEQ_CST);
    if (k == __atomic_load_n(&fail_at, __ATOMIC_SEQ_CST)) {
        __atomic_store_n(&failed_flag, 1, __ATOMIC_SEQ_CST);
        return 1;
    }
    return 0;
}

void *__wrap_malloc(size_t n)
{
    return should_fail() ? NULL : __real_malloc(n);
}

void *__wrap_calloc(size_t n, size_t m)
{
    return should_fail() ? NULL : __real_calloc(n, m);
}

void *__wrap_realloc(void *p, size_t n)
{
    return should_fail() ? NULL : __real_realloc(p, n);
}

char *__wrap_strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = __wrap_malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

/* SQLite's allocator over the counted one (xSize from the C library) */
static void *sq_malloc(int n) { return __wrap_malloc((size_t)n); }
static void sq_free(void *p) { free(p); }
static void *sq_realloc(void *p, int n) { return __wrap_realloc(p, (size_t)n); }
static int sq_size(void *p) { return (int)malloc_usable_size(p); }
static int sq_roundup(int n) { return (n + 7) & ~7; }
static int sq_init(void *ctx) { (void)ctx; return SQLITE_OK; }
static void sq_shutdown(void *ctx) { (void)ctx; }
static void *js_malloc(size_t n) { return __wrap_malloc(n); }

static void report(void)
{
    const char *path = getenv("BERTH_FAIL_REPORT");
    if (!path || !*path)
        return;
    char line[64];
    int len = snprintf(line, sizeof line, "%lu %d\n", torture_allocations(), torture_failed());
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
        if (write(fd, line, (size_t)len) != len)
            (void)0;
        close(fd);
    }
}

__attribute__((constructor)) static void torture_init(void)
{
    static const sqlite3_mem_methods mem = {sq_malloc, sq_free,   sq_realloc, sq_size,
                                            sq_roundup, sq_init, sq_shutdown, NULL};
    sqlite3_config(SQLITE_CONFIG_MALLOC, &mem);
    json_set_alloc_funcs(js_malloc, free);
    const char *at = getenv("BERTH_FAIL_AT");
    torture_fail_at(at ? strtoul(at, NULL, 10) : 0);
    atexit(report);
}
