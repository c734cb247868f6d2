/* report/svg.c - the shared SVG writer (report/svg.h): XML escaping of
 * UTF-8 text, character counting and cutting, the <svg> frame with the
 * shared classes, text, rectangles and groups with hover titles. Every
 * picture (nexus_svg.c, kube_svg.c, disrupt_svg.c, autoscale_svg.c)
 * writes through it instead of its own copy. */
#include "report/svg.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Length of the valid UTF-8 sequence at p that XML 1.0 allows, or 0. */
static size_t utf8_seq(const unsigned char *p)
{
    unsigned c = p[0];
    size_t n;
    uint32_t cp;
    if (c < 0x80u)
        return (c >= 0x20u || c == '\t' || c == '\n' || c == '\r') ? 1 : 0;
    if (c >= 0xC2u && c <= 0xDFu) {
        n = 2;
        cp = c & 0x1Fu;
    } else if (c >= 0xE0u && c <= 0xEFu) {
        n = 3;
        cp = c & 0x0Fu;
    } else if (c >= 0xF0u && c <= 0xF4u) {
        n = 4;
        cp = c & 0x07u;
    } else {
        return 0;
    }
    for (size_t i = 1; i < n; i++) {
        if ((p[i] & 0xC0u) != 0x80u)
            return 0;
        cp = (cp << 6) | (p[i] & 0x3Fu);
    }
    if ((n == 3 && cp < 0x800u) || (n == 4 && (cp < 0x10000u || cp > 0x10FFFFu)) ||
        (cp >= 0xD800u && cp <= 0xDFFFu) || cp == 0xFFFEu || cp == 0xFFFFu)
        return 0;
    return n;
}

void rsvg_escn(FILE *out, const char *s, size_t nbytes)
{
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    const unsigned char *end = p + nbytes;
    while (p < end && *p) {
        size_t n = utf8_seq(p);
        if (n == 0 || p + n > end) {
            fputc('?', out);
            p++;
            continue;
        }
        switch (*p) {
        case '&': fputs("&amp;", out); break;
        case '<': fputs("&lt;", out); break;
        case '>': fputs("&gt;", out); break;
        case '"': fputs("&quot;", out); break;
        case '\'': fputs("&#39;", out); break;
        default: fwrite(p, 1, n, out); break;
        }
        p += n;
    }
}

void rsvg_esc(FILE *out, const char *s)
{
    rsvg_escn(out, s, s ? strlen(s) : 0);
}

size_t rsvg_nchars(const char *s)
{
    size_t n = 0;
    for (; s && *s; s++)
        if (((unsigned char)*s & 0xC0u) != 0x80u)
            n++;
    return n;
}

size_t rsvg_head_bytes(const char *s, size_t k)
{
    size_t i = 0;
    while (s && s[i]) {
        if (((unsigned char)s[i] & 0xC0u) != 0x80u) {
            if (k == 0)
                break;
            k--;
        }
        i++;
    }
    return i;
}

double rsvg_text_w(size_t n, double px)
{
    return (double)n * px * 0.58;
}

void rsvg_esc_fit(FILE *out, const char *s, size_t max)
{
    size_t n = rsvg_nchars(s);
    if (n <= max) {
        rsvg_esc(out, s);
        return;
    }
    if (max == 0)
        return;
    rsvg_escn(out, s, rsvg_head_bytes(s, max - 1));
    fputs("\xe2\x80\xa6", out); /* ellipsis */
}

void rsvg_open(FILE *out, double w, double h, const char *style)
{
    fprintf(out,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
            "viewBox=\"0 0 %.0f %.0f\" font-family=\"sans-serif\">\n",
            w, h, w, h);
    fputs("<style>"
          ".rs-t{font-size:16px;font-weight:bold;fill:#222}"
          ".rs-s{font-size:12px;fill:#555}"
          ".rs-h{font-size:13px;font-weight:bold;fill:#222}"
          ".rs-l{font-size:12px;fill:#222}"
          ".rs-n{font-size:11px;fill:#555}"
          ".rs-w{font-size:11px;fill:#fff;pointer-events:none}",
          out);
    if (style)
        fputs(style, out);
    fputs("</style>\n", out);
    fprintf(out, "<rect x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" fill=\"#ffffff\"/>\n", w, h);
}

void rsvg_close(FILE *out)
{
    fputs("</svg>\n", out);
}

/* vprintf into buf (size bytes), or into a malloc'd buffer when longer:
 * the text to escape; *heap is that buffer (free it), else NULL. */
static const char *vformat(char *buf, size_t size, char **heap, const char *fmt, va_list ap)
{
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(buf, size, fmt, ap);
    *heap = NULL;
    if (n >= 0 && (size_t)n >= size) {
        *heap = malloc((size_t)n + 1);
        if (*heap)
            vsnprintf(*heap, (size_t)n + 1, fmt, ap2);
    }
    va_end(ap2);
    return *heap ? *heap : n < 0 ? "" : buf;
}

void rsvg_text(FILE *out, double x, double y, const char *cls, const char *anchor,
               const char *fmt, ...)
{
    char buf[512], *heap;
    va_list ap;
    va_start(ap, fmt);
    const char *s = vformat(buf, sizeof buf, &heap, fmt, ap);
    va_end(ap);
    fprintf(out, "<text class=\"%s\" x=\"%.1f\" y=\"%.1f\"", cls, x, y);
    if (anchor)
        fprintf(out, " text-anchor=\"%s\"", anchor);
    fputc('>', out);
    rsvg_esc(out, s);
    fputs("</text>\n", out);
    free(heap);
}

void rsvg_rect(FILE *out, double x, double y, double w, double h, const char *fill,
               const char *extra, const char *title_fmt, ...)
{
    if (w < 0)
        w = 0;
    if (h < 0)
        h = 0;
    fprintf(out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"", x, y, w,
            h, fill);
    if (extra) {
        fputc(' ', out);
        fputs(extra, out);
    }
    if (!title_fmt) {
        fputs("/>\n", out);
        return;
    }
    char buf[512], *heap;
    va_list ap;
    va_start(ap, title_fmt);
    const char *s = vformat(buf, sizeof buf, &heap, title_fmt, ap);
    va_end(ap);
    fputs("><title>", out);
    rsvg_esc(out, s);
    fputs("</title></rect>\n", out);
    free(heap);
}

void rsvg_begin_g(FILE *out, const char *fmt, ...)
{
    if (!fmt) {
        fputs("<g>\n", out);
        return;
    }
    char buf[512], *heap;
    va_list ap;
    va_start(ap, fmt);
    const char *s = vformat(buf, sizeof buf, &heap, fmt, ap);
    va_end(ap);
    fputs("<g><title>", out);
    rsvg_esc(out, s);
    fputs("</title>\n", out);
    free(heap);
}

void rsvg_end_g(FILE *out)
{
    fputs("</g>\n", out);
}
