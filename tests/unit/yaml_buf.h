/* tests/unit/yaml_buf.h - the YAML text the unit tests build with printf:
 * a fixed buffer (YAML_BUF_SIZE bytes, 65536 unless the test defines it
 * before including this) and add(), which appends and fails the test when
 * the text would not fit. Include after cmocka.h. */
#ifndef BERTH_TEST_YAML_BUF_H
#define BERTH_TEST_YAML_BUF_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

#ifndef YAML_BUF_SIZE
#define YAML_BUF_SIZE 65536
#endif

typedef struct buf {
    char s[YAML_BUF_SIZE];
    size_t n;
} buf;

static void add(buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static __attribute__((unused)) void add(buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(b->s + b->n, sizeof b->s - b->n, fmt, ap);
    va_end(ap);
    assert_true(w > 0 && (size_t)w < sizeof b->s - b->n);
    b->n += (size_t)w;
}

#endif
