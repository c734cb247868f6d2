/* serve/validate.c - request checks of `berth serve` that come before any
 * work (docs/api.md "Names and paths"): cluster and pool names (1-63
 * letters, digits, '-', '_' or '.', starting and ending with a letter or
 * digit), path segments that held an encoded NUL, '/' or control byte,
 * and the request size announced by Content-Length. Called from the
 * request handler (http.c) and the engine (engine.c); no state. */
#include "serve/serve.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int alnum(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

int serve_name_valid(const char *s, size_t n)
{
    if (n < 1 || n > SERVE_NAME_MAX || !alnum((unsigned char)s[0]) ||
        !alnum((unsigned char)s[n - 1]))
        return 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (!alnum(c) && c != '-' && c != '_' && c != '.')
            return 0;
    }
    return 1;
}

int serve_name_check(const char *where, const char *what, const char *s, size_t n,
                     serve_reply *r)
{
    if (serve_name_valid(s, n))
        return 0;
    char msg[400];
    /* quote at most 80 bytes, printable ASCII only */
    char shown[84];
    size_t k = 0;
    for (size_t i = 0; i < n && k < 80; i++) {
        unsigned char c = (unsigned char)s[i];
        shown[k++] = c >= 0x20 && c < 0x7f && c != '\'' ? (char)c : '?';
    }
    shown[k] = 0;
    snprintf(msg, sizeof msg,
             "%s: %s name '%s%s' is not valid: use 1 to %d letters, digits, '-', '_' or '.', "
             "starting and ending with a letter or digit",
             where, what, shown, n > 80 ? "..." : "", SERVE_NAME_MAX);
    serve_reply_error(r, 400, "bad_input", msg);
    return -1;
}

/* The URL unescaper given to libmicrohttpd: %XX as usual, except that an
 * encoded NUL or '/' (which would end or split a path segment) becomes the
 * control byte SERVE_BAD_ESCAPE, which serve_path_check rejects. */
static int hexval(char ch)
{
    return ch >= '0' && ch <= '9' ? ch - '0'
           : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10
           : ch >= 'A' && ch <= 'F' ? ch - 'A' + 10
                                    : -1;
}

size_t serve_unescape(void *cls, struct MHD_Connection *c, char *s)
{
    (void)cls;
    (void)c;
    char *w = s;
    for (const char *p = s; *p;) {
        int hi = p[0] == '%' ? hexval(p[1]) : -1, lo = hi >= 0 ? hexval(p[2]) : -1;
        if (lo >= 0) {
            int v = hi * 16 + lo;
            *w++ = v == 0 || v == '/' ? SERVE_BAD_ESCAPE : (char)v;
            p += 3;
            continue;
        }
        *w++ = *p++;
    }
    *w = 0;
    return (size_t)(w - s);
}

int serve_path_check(const char *url, serve_reply *r)
{
    for (const unsigned char *p = (const unsigned char *)url; *p; p++)
        if (*p < 0x20 || *p == 0x7f) {
            serve_reply_error(r, 400, "bad_input",
                              *p == SERVE_BAD_ESCAPE
                                  ? "path: a segment holds an encoded NUL or '/' (%00, %2F)"
                                  : "path: a segment holds a control character");
            return -1;
        }
    return 0;
}

int serve_length_check(const char *content_length, size_t max, serve_reply *r)
{
    if (!content_length)
        return 0;
    char *end;
    unsigned long long v = strtoull(content_length, &end, 10);
    if (end == content_length || v <= max)
        return 0;
    char msg[160];
    snprintf(msg, sizeof msg, "the body exceeds the limit of %zu bytes (Content-Length %llu)", max,
             v);
    serve_reply_error(r, 413, "payload_too_large", msg);
    return -1;
}
