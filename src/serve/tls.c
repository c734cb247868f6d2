/* serve/tls.c - optional TLS for `berth serve` (--tls-cert, --tls-key):
 * reads the PEM certificate (chain) and private key into memory for
 * libmicrohttpd's MHD_OPTION_HTTPS_MEM_CERT / _KEY, after checking that
 * the library was built with TLS (Debian's is, with GnuTLS). */
#include "serve/serve.h"

#include <microhttpd.h>
#include <stdlib.h>
#include <string.h>

#define TLS_MAX_PEM (1u << 20)

static int read_pem(const char *flag, const char *path, char **out, berth_error *e)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return berth_error_set(e, BERTH_EINVAL, "%s: cannot read '%s'", flag, path);
    char *buf = malloc(TLS_MAX_PEM + 1);
    size_t n = buf ? fread(buf, 1, TLS_MAX_PEM + 1, f) : 0;
    int err = ferror(f);
    fclose(f);
    if (!buf)
        return berth_error_set(e, BERTH_ENOMEM, "out of memory");
    if (err || n == 0 || n > TLS_MAX_PEM || !memmem(buf, n, "-----BEGIN ", 11)) {
        free(buf);
        return berth_error_set(e, BERTH_EINVAL, "%s: '%s' is not a PEM file%s", flag, path,
                               n > TLS_MAX_PEM ? " (larger than 1 MiB)" : "");
    }
    buf[n] = 0;
    *out = buf;
    return 0;
}

int serve_tls_load(const char *cert, const char *key, serve_tls *t, berth_error *e)
{
    memset(t, 0, sizeof *t);
    if (!cert && !key)
        return 0;
    if (!cert || !key)
        return berth_error_set(e, BERTH_EINVAL, "TLS needs both --tls-cert and --tls-key");
    if (MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES)
        return berth_error_set(e, BERTH_EINVAL,
                               "--tls-cert: this libmicrohttpd was built without TLS support "
                               "(install one built with GnuTLS, or terminate TLS in a proxy)");
    int rc = read_pem("--tls-cert", cert, &t->cert, e);
    if (!rc)
        rc = read_pem("--tls-key", key, &t->key, e);
    if (rc)
        serve_tls_free(t);
    return rc;
}

void serve_tls_free(serve_tls *t)
{
    free(t->cert);
    if (t->key) /* the private key does not outlive its use */
        memset(t->key, 0, strlen(t->key));
    free(t->key);
    t->cert = t->key = NULL;
}
