/* bench/sbuf.h - what the autoscale benches share: the growable text
 * buffer they write their YAML estates into (put: printf-style append;
 * exits with 3 when memory runs out) and the monotonic clock. Header-only,
 * one copy per bench program. */
#ifndef BERTH_BENCH_SBUF_H
#define BERTH_BENCH_SBUF_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef struct sbuf {
    char *s;
    size_t n, cap;
} sbuf;

static void put(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(sbuf *b, const char *fmt, ...)
{
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int w = vsnprintf(b->s + b->n, b->cap - b->n, fmt, ap);
        va_end(ap);
        if (w >= 0 && (size_t)w < b->cap - b->n) {
            b->n += (size_t)w;
            return;
        }
        b->cap = b->cap ? b->cap * 2 : 1 << 20;
        b->s = realloc(b->s, b->cap);
        if (!b->s) {
            fprintf(stderr, "bench: out of memory\n");
            exit(3);
        }
    }
}

/* seconds on the monotonic clock */
static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

#endif
