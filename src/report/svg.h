/* report/svg.h - the small SVG writer every picture uses (the nexus layout,
 * `kube schedule --svg`, `disrupt plan --svg`, `autoscale simulate --svg`):
 * XML escaping of UTF-8 text (invalid bytes become '?'), measuring and
 * cutting text by characters, and the few elements the pictures draw, each
 * optionally with a hover <title>. Internal to src/report/.
 *
 * Threads: no state; distinct streams may be written concurrently. */
#ifndef BERTH_REPORT_SVG_H
#define BERTH_REPORT_SVG_H

#include <stddef.h>
#include <stdio.h>

/* Text for XML/HTML content and attributes: & < > " ' escaped, bytes XML
 * 1.0 cannot carry (invalid UTF-8, control characters) written as '?'.
 * rsvg_escn writes at most nbytes of s (whole characters only). NULL: "". */
void rsvg_esc(FILE *out, const char *s);
void rsvg_escn(FILE *out, const char *s, size_t nbytes);
/* Characters (code points) in s, and the bytes of its first k characters. */
size_t rsvg_nchars(const char *s);
size_t rsvg_head_bytes(const char *s, size_t k);
/* Estimated width in pixels of n characters of sans-serif at font size px. */
double rsvg_text_w(size_t n, double px);
/* s cut to at most max characters with a trailing ellipsis when cut. */
void rsvg_esc_fit(FILE *out, const char *s, size_t max);

/* "<svg ...>" of w x h pixels (viewBox the same), the shared classes
 * (.rs-t title 16px, .rs-s subtitle 12px, .rs-h heading 13px bold, .rs-l
 * label 12px, .rs-n note 11px grey, .rs-w white label 11px), then `style`
 * (more CSS rules, may be NULL) and a white background. */
void rsvg_open(FILE *out, double w, double h, const char *style);
void rsvg_close(FILE *out);

/* <text class=cls x y [text-anchor=anchor]>printf text, escaped</text>.
 * anchor NULL: start. */
void rsvg_text(FILE *out, double x, double y, const char *cls, const char *anchor,
               const char *fmt, ...) __attribute__((format(printf, 6, 7)));
/* <rect x y width height fill [extra attributes as given]/> (extra: raw
 * attribute text such as "stroke=\"#333\"", or NULL); with title (printf,
 * escaped; NULL: none) it becomes <rect ...><title>..</title></rect>. */
void rsvg_rect(FILE *out, double x, double y, double w, double h, const char *fill,
               const char *extra, const char *title_fmt, ...) __attribute__((format(printf, 8, 9)));
/* "<g><title>printf text, escaped</title>" (fmt NULL: "<g>"); rsvg_end_g
 * closes it. */
void rsvg_begin_g(FILE *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void rsvg_end_g(FILE *out);

#endif
