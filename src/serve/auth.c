/* serve/auth.c - bearer tokens for `berth serve`: loading a token file (one
 * token per line; blank lines and lines starting with '#' are skipped) and
 * a comparison whose time does not depend on where a candidate differs. */
#include "serve/serve.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define TOKEN_MAX 256 /* bytes compared per token; longer tokens are refused at load */

int serve_tokens_load(serve_tokens *t, const char *path, berth_error *e)
{
    memset(t, 0, sizeof *t);
    FILE *f = fopen(path, "r");
    if (!f)
        return berth_error_set(e, BERTH_EINVAL, "cannot read token file %s: %s", path,
                               strerror(errno));
    char line[4096];
    int rc = 0, lineno = 0;
    while (!rc && fgets(line, sizeof line, f)) {
        lineno++;
        size_t n = strlen(line);
        while (n && (line[n - 1] == '\n' || line[n - 1] == '\r' || line[n - 1] == ' ' ||
                     line[n - 1] == '\t'))
            line[--n] = 0;
        char *s = line;
        while (*s == ' ' || *s == '\t')
            s++;
        if (!*s || *s == '#')
            continue;
        if (strlen(s) >= TOKEN_MAX || strpbrk(s, " \t")) {
            rc = berth_error_set(e, BERTH_EINVAL,
                                 "%s:%d: a token is one word of at most %d bytes", path, lineno,
                                 TOKEN_MAX - 1);
            break;
        }
        char **grown = realloc(t->tok, (t->n + 1) * sizeof *t->tok);
        char *copy = grown ? strdup(s) : NULL;
        if (grown)
            t->tok = grown;
        if (!copy) {
            rc = berth_error_set(e, BERTH_ENOMEM, "out of memory");
            break;
        }
        t->tok[t->n++] = copy;
    }
    fclose(f);
    if (!rc && t->n == 0)
        rc = berth_error_set(e, BERTH_EINVAL, "token file %s holds no token", path);
    if (rc)
        serve_tokens_free(t);
    return rc;
}

void serve_tokens_free(serve_tokens *t)
{
    for (size_t i = 0; i < t->n; i++) {
        /* do not leave secrets in freed memory */
        volatile char *p = t->tok[i];
        while (*p)
            *p++ = 0;
        free(t->tok[i]);
    }
    free(t->tok);
    memset(t, 0, sizeof *t);
}

/* Compares TOKEN_MAX bytes of both (zero-padded) and the lengths, always
 * touching every byte of every token. */
int serve_tokens_match(const serve_tokens *t, const char *cand)
{
    size_t clen = strnlen(cand, TOKEN_MAX);
    unsigned char c[TOKEN_MAX] = {0};
    memcpy(c, cand, clen);
    int too_long = cand[clen] != 0;
    unsigned found = 0;
    for (size_t i = 0; i < t->n; i++) {
        unsigned char k[TOKEN_MAX] = {0};
        size_t klen = strlen(t->tok[i]);
        memcpy(k, t->tok[i], klen);
        unsigned diff = (unsigned)(klen ^ clen);
        for (size_t j = 0; j < TOKEN_MAX; j++)
            diff |= (unsigned)(k[j] ^ c[j]);
        found |= (diff == 0);
    }
    return found && !too_long && clen > 0;
}
