/* tests/unit/test_report_svg.c - the shared SVG writer (src/report/svg.c):
 * escaping of text and attributes with invalid UTF-8, cutting by
 * characters with an ellipsis, long formatted text (beyond the stack
 * buffer), titles; and the three domain pictures on empty inputs (no
 * division by zero, a complete document). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "berth/kube_report.h"
#include "berth/plan_report.h"
#include "report/svg.h"

/* The stream's buffer lives in static storage (see test_report_nexus.c). */
static char *mem_buf;
static size_t mem_len;
static FILE *mem;

static void open_mem(void)
{
    mem_buf = NULL;
    mem_len = 0;
    mem = open_memstream(&mem_buf, &mem_len);
    assert_non_null(mem);
}

static char *close_mem(void)
{
    assert_int_equal(fclose(mem), 0);
    return mem_buf;
}

static void test_escape(void **state)
{
    (void)state;
    open_mem();
    rsvg_esc(mem, "a<b>&\"c'");
    fputc('|', mem);
    rsvg_esc(mem, "bad\xff\xc3(ok \xc3\xa9");
    fputc('|', mem);
    rsvg_esc(mem, NULL);
    fputc('|', mem);
    rsvg_escn(mem, "h\xc3\xa9llo", 2); /* cuts inside 'é': not written whole */
    fputc('|', mem);
    rsvg_esc(mem, "tab\there\x01");
    char *s = close_mem();
    assert_string_equal(s, "a&lt;b&gt;&amp;&quot;c&#39;|bad?" "?(ok \xc3\xa9||h?|tab\there?");
    free(s);
}

static void test_fit(void **state)
{
    (void)state;
    assert_int_equal(rsvg_nchars("h\xc3\xa9llo"), 5);
    assert_int_equal(rsvg_head_bytes("h\xc3\xa9llo", 2), 3);
    assert_int_equal(rsvg_head_bytes("abc", 10), 3);
    assert_true(rsvg_text_w(10, 12.0) > 60.0 && rsvg_text_w(10, 12.0) < 80.0);
    open_mem();
    rsvg_esc_fit(mem, "abcdef", 6);
    fputc('|', mem);
    rsvg_esc_fit(mem, "abcdef", 4);
    fputc('|', mem);
    rsvg_esc_fit(mem, "\xc3\xa9\xc3\xa9\xc3\xa9", 2);
    fputc('|', mem);
    rsvg_esc_fit(mem, "a&b&c", 3);
    fputc('|', mem);
    rsvg_esc_fit(mem, "abc", 0);
    char *s = close_mem();
    assert_string_equal(s, "abcdef|abc\xe2\x80\xa6|\xc3\xa9\xe2\x80\xa6|a&amp;\xe2\x80\xa6|");
    free(s);
}

static void test_elements(void **state)
{
    (void)state;
    char big[2000];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = 0;
    open_mem();
    rsvg_open(mem, 1400, 300, ".z{font-size:12px}");
    rsvg_text(mem, 1, 2, "rs-l", "middle", "%s & %d", "a<b", 7);
    rsvg_text(mem, 1, 2, "rs-l", NULL, "%s", big); /* longer than the stack buffer */
    rsvg_rect(mem, 1, 2, -3, 4, "#fff", "rx=\"2\"", "t<%d>", 9);
    rsvg_rect(mem, 1, 2, 3, 4, "#000", NULL, NULL);
    rsvg_begin_g(mem, "node %s\nline 2", "n&1");
    rsvg_end_g(mem);
    rsvg_begin_g(mem, NULL);
    rsvg_end_g(mem);
    rsvg_close(mem);
    char *s = close_mem();
    static const char head[] = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"1400\" height=\"300\"";
    assert_int_equal(strncmp(s, head, sizeof head - 1), 0);
    assert_non_null(strstr(s, ".z{font-size:12px}</style>"));
    assert_non_null(strstr(s, "<text class=\"rs-l\" x=\"1.0\" y=\"2.0\" text-anchor=\"middle\">a&lt;b &amp; 7</text>"));
    assert_non_null(strstr(s, big));
    assert_non_null(strstr(s, "width=\"0.0\" height=\"4.0\" fill=\"#fff\" rx=\"2\"><title>t&lt;9&gt;</title></rect>"));
    assert_non_null(strstr(s, "fill=\"#000\"/>"));
    assert_non_null(strstr(s, "<g><title>node n&amp;1\nline 2</title>\n</g>\n<g>\n</g>\n</svg>\n"));
    free(s);
}

static void test_empty_pictures(void **state)
{
    (void)state;
    /* kube: no nodes, no pods */
    berth_kcluster k;
    berth_kube_init(&k);
    berth_kube_report *r = berth_kube_report_new(0);
    assert_non_null(r);
    open_mem();
    assert_int_equal(berth_kube_report_svg(mem, r, &k), 0);
    char *s = close_mem();
    assert_non_null(strstr(s, "0 nodes, 0 of 0 pending pods scheduled"));
    assert_true(strlen(s) > 7 && !strcmp(s + strlen(s) - 7, "</svg>\n"));
    free(s);
    berth_kube_report_free(r);
    berth_kube_free(&k);
    /* disrupt: an empty plan */
    berth_disrupt m;
    berth_disrupt_init(&m);
    berth_dplan p;
    memset(&p, 0, sizeof p);
    open_mem();
    assert_int_equal(berth_report_disrupt_svg(mem, &m, &p), 0);
    s = close_mem();
    assert_non_null(strstr(s, "0 nodes \xe2\x86\x92 0"));
    assert_null(strstr(s, "nan"));
    free(s);
    berth_disrupt_free(&m);
    /* autoscale: no steps */
    berth_asim_options o = {.from = 0, .to = 0, .step = 60};
    berth_asim_result ar;
    memset(&ar, 0, sizeof ar);
    open_mem();
    assert_int_equal(berth_report_autoscale_timeline_svg(mem, &o, &ar), 0);
    s = close_mem();
    assert_non_null(strstr(s, "0 steps of 60s"));
    assert_null(strstr(s, "nan"));
    assert_null(strstr(s, "inf"));
    free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_escape),
        cmocka_unit_test(test_fit),
        cmocka_unit_test(test_elements),
        cmocka_unit_test(test_empty_pictures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
