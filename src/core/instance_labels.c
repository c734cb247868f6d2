/* core/instance_labels.c - the labels an InstanceType gives its nodes
 * (docs/disrupt.md "Instance type labels"): InstanceType spec.labels, and
 * for every label it does not set, the value derived from the type's name
 * and capacity where the provider's naming defines it:
 * - every type: node.kubernetes.io/instance-type, kubernetes.io/os,
 *   kubernetes.io/arch;
 * - Azure ("Standard_..." / "Basic_..."): karpenter.azure.com/sku-name,
 *   sku-family, sku-series, sku-version, sku-cpu, sku-memory,
 *   sku-gpu-count (+ sku-gpu-name, sku-gpu-manufacturer) and
 *   kubernetes.azure.com/sku-cpu, sku-memory, parsed as
 *   Azure/karpenter-provider-azure pkg/providers/instancetype/instancetype.go
 *   computeRequirements does, with skewer's VM size grammar (vmsize.go
 *   skuSizeScheme, matched here with Go regexp's leftmost-first submatch
 *   preference by backtracking);
 * - AWS ("<family>.<size>", e.g. m6i.2xlarge): instance-category,
 *   instance-family, instance-generation, instance-size, instance-cpu,
 *   instance-memory, instance-gpu-count under karpenter.k8s.aws/ and
 *   eks.amazonaws.com/ (EKS Auto Mode), as aws/karpenter-provider-aws
 *   pkg/providers/instancetype/types.go computeRequirements (its
 *   instanceTypeScheme).
 * Keys a provider defines for every type but that a type lacks (an Azure
 * name that does not parse, an AWS type without GPUs) are kept as
 * "defined absent": requirements on them are evaluated as on a missing
 * label (Karpenter's DoesNotExist requirement of the instance type), while
 * keys no provider defines are left to other sources (Requirements.
 * Intersects allows undefined keys). Work: O(name length) per type, once
 * at load time. */
#include "berth/instance.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

/* ---- Azure VM sizes (skewer GetVMSize) ---- */

typedef struct az_match {
    const char *s;
    size_t n;
    size_t cap[14][2];           /* submatch i: [start, end); start = end = SIZE_MAX unset */
} az_match;

#define UNSET ((size_t)-1)

static size_t run(const az_match *m, size_t pos, int (*cls)(int))
{
    size_t i = pos;
    while (i < m->n && cls((unsigned char)m->s[i]))
        i++;
    return i - pos;
}

static int is_upper(int c) { return c >= 'A' && c <= 'Z'; }
static int is_digit(int c) { return c >= '0' && c <= '9'; }
static int is_feature(int c) { return c && strchr("abcdeiflmnotspPr", c) != NULL; }
static int is_c(int c) { return c == 'C'; }

static int lit(const az_match *m, size_t pos, const char *w)
{
    size_t l = strlen(w);
    return pos + l <= m->n && !memcmp(m->s + pos, w, l);
}

static void setcap(az_match *m, int i, size_t a, size_t b)
{
    m->cap[i][0] = a;
    m->cap[i][1] = b;
}

static int az_step(az_match *m, int k, size_t pos);

/* An optional literal group (_cc_), (_MI300X_), (_H100_), (_Promo): greedy. */
static int opt_lit(az_match *m, int k, int capi, size_t pos, const char *w)
{
    if (lit(m, pos, w)) {
        setcap(m, capi, pos, pos + strlen(w));
        if (az_step(m, k + 1, pos + strlen(w)))
            return 1;
    }
    setcap(m, capi, UNSET, UNSET);
    return az_step(m, k + 1, pos);
}

/* ^([A-Z])([A-Z]?)([A-Z]?)([0-9]+)-?((?:[0-9]+)?)((?:[abcdeiflmnotspPr]+|C+|NP)?)_?(?:NDR_)?
 *  (?:((?:xl_)?[A-Z]+[0-9]+[A-Z]*)_?)?(_cc_)?(_[0-9]+_)?(_MI300X_)?(_H100_)?((?:[vV][1-9])?)?
 *  (_Promo)?$  -- one step per element, alternatives in preference order. */
static int az_step(az_match *m, int k, size_t pos)
{
    switch (k) {
    case 0: /* ([A-Z]) */
        if (pos < m->n && is_upper((unsigned char)m->s[pos])) {
            setcap(m, 1, pos, pos + 1);
            return az_step(m, 1, pos + 1);
        }
        return 0;
    case 1: /* ([A-Z]?) */
    case 2: {
        int capi = k + 1;
        if (pos < m->n && is_upper((unsigned char)m->s[pos])) {
            setcap(m, capi, pos, pos + 1);
            if (az_step(m, k + 1, pos + 1))
                return 1;
        }
        setcap(m, capi, pos, pos);
        return az_step(m, k + 1, pos);
    }
    case 3: /* ([0-9]+) */
        for (size_t l = run(m, pos, is_digit); l >= 1; l--) {
            setcap(m, 4, pos, pos + l);
            if (az_step(m, 4, pos + l))
                return 1;
        }
        return 0;
    case 4: /* -? */
        if (pos < m->n && m->s[pos] == '-' && az_step(m, 5, pos + 1))
            return 1;
        return az_step(m, 5, pos);
    case 5: /* ((?:[0-9]+)?) */
        for (size_t l = run(m, pos, is_digit); l >= 1; l--) {
            setcap(m, 5, pos, pos + l);
            if (az_step(m, 6, pos + l))
                return 1;
        }
        setcap(m, 5, pos, pos);
        return az_step(m, 6, pos);
    case 6: /* ((?:[abcdeiflmnotspPr]+|C+|NP)?) */
        for (size_t l = run(m, pos, is_feature); l >= 1; l--) {
            setcap(m, 6, pos, pos + l);
            if (az_step(m, 7, pos + l))
                return 1;
        }
        for (size_t l = run(m, pos, is_c); l >= 1; l--) {
            setcap(m, 6, pos, pos + l);
            if (az_step(m, 7, pos + l))
                return 1;
        }
        if (lit(m, pos, "NP")) {
            setcap(m, 6, pos, pos + 2);
            if (az_step(m, 7, pos + 2))
                return 1;
        }
        setcap(m, 6, pos, pos);
        return az_step(m, 7, pos);
    case 7: /* _? */
        if (lit(m, pos, "_") && az_step(m, 8, pos + 1))
            return 1;
        return az_step(m, 8, pos);
    case 8: /* (?:NDR_)? */
        if (lit(m, pos, "NDR_") && az_step(m, 9, pos + 4))
            return 1;
        return az_step(m, 9, pos);
    case 9: /* (?:((?:xl_)?[A-Z]+[0-9]+[A-Z]*)_?)? */
        for (int xl = 1; xl >= 0; xl--) {
            if (xl && !lit(m, pos, "xl_"))
                continue;
            size_t p1 = pos + (xl ? 3 : 0);
            for (size_t a = run(m, p1, is_upper); a >= 1; a--) {
                size_t p2 = p1 + a;
                for (size_t b = run(m, p2, is_digit); b >= 1; b--) {
                    size_t p3 = p2 + b;
                    for (size_t c = run(m, p3, is_upper) + 1; c-- > 0;) {
                        size_t p4 = p3 + c;
                        setcap(m, 7, pos, p4);
                        if (lit(m, p4, "_") && az_step(m, 10, p4 + 1))
                            return 1;
                        if (az_step(m, 10, p4))
                            return 1;
                    }
                }
            }
        }
        setcap(m, 7, UNSET, UNSET);
        return az_step(m, 10, pos);
    case 10:
        return opt_lit(m, 10, 8, pos, "_cc_");
    case 11: /* (_[0-9]+_)? */
        if (lit(m, pos, "_"))
            for (size_t l = run(m, pos + 1, is_digit); l >= 1; l--)
                if (lit(m, pos + 1 + l, "_")) {
                    setcap(m, 9, pos, pos + l + 2);
                    if (az_step(m, 12, pos + l + 2))
                        return 1;
                }
        setcap(m, 9, UNSET, UNSET);
        return az_step(m, 12, pos);
    case 12:
        return opt_lit(m, 12, 10, pos, "_MI300X_");
    case 13:
        return opt_lit(m, 13, 11, pos, "_H100_");
    case 14: /* ((?:[vV][1-9])?)? */
        if (pos + 1 < m->n && (m->s[pos] == 'v' || m->s[pos] == 'V') && m->s[pos + 1] >= '1' &&
            m->s[pos + 1] <= '9') {
            setcap(m, 12, pos, pos + 2);
            if (az_step(m, 15, pos + 2))
                return 1;
        }
        setcap(m, 12, pos, pos);
        return az_step(m, 15, pos);
    case 15:
        return opt_lit(m, 15, 13, pos, "_Promo");
    case 16:
        return pos == m->n;
    }
    return 0;
}

static void copy_cap(const az_match *m, int i, char *out, size_t size)
{
    out[0] = 0;
    if (m->cap[i][0] == UNSET)
        return;
    size_t l = m->cap[i][1] - m->cap[i][0];
    if (l >= size)
        l = size - 1;
    memcpy(out, m->s + m->cap[i][0], l);
    out[l] = 0;
}

int berth_azure_vmsize_parse(const char *size, berth_azure_vmsize *out)
{
    memset(out, 0, sizeof *out);
    if (!size)
        return -1;
    /* skewer's unParsableVMSizes */
    if (!strcmp(size, "M416s_8_v2")) {
        snprintf(out->family, sizeof out->family, "M");
        snprintf(out->cpus, sizeof out->cpus, "416");
        snprintf(out->features, sizeof out->features, "s");
        snprintf(out->version, sizeof out->version, "v2");
        snprintf(out->series, sizeof out->series, "Ms_v2");
        return 0;
    }
    az_match m;
    memset(&m, 0, sizeof m);
    m.s = size;
    m.n = strlen(size);
    if (m.n > 48) /* real sizes are under 32 characters; bounds the backtracking */
        return -1;
    for (int i = 0; i < 14; i++)
        setcap(&m, i, UNSET, UNSET);
    if (!az_step(&m, 0, 0))
        return -1;
    char sub2[2], sub3[2];
    copy_cap(&m, 1, out->family, sizeof out->family);
    copy_cap(&m, 2, sub2, sizeof sub2);
    copy_cap(&m, 3, sub3, sizeof sub3);
    if (sub2[0])
        snprintf(out->subfamily, sizeof out->subfamily, "%s%s", sub2, sub3);
    copy_cap(&m, 4, out->cpus, sizeof out->cpus);
    copy_cap(&m, 5, out->constrained, sizeof out->constrained);
    copy_cap(&m, 6, out->features, sizeof out->features);
    char acc[sizeof out->accelerator];
    copy_cap(&m, 7, acc, sizeof acc);
    snprintf(out->accelerator, sizeof out->accelerator, "%s",
             !strncmp(acc, "xl_", 3) ? acc + 3 : acc);
    out->confidential_child = m.cap[8][0] != UNSET;
    copy_cap(&m, 12, out->version, sizeof out->version);
    out->promo = m.cap[13][0] != UNSET;
    snprintf(out->series, sizeof out->series, "%s%s%s%s%s", out->family, out->subfamily,
             out->features, out->version[0] ? "_" : "", out->version);
    return 0;
}

/* ---- AWS (instanceTypeScheme `(^[a-z]+)(\-[0-9]+tb)?([0-9]+).*\.`) ---- */

int berth_aws_instance_parse(const char *name, berth_aws_instance *out)
{
    memset(out, 0, sizeof *out);
    if (!name)
        return -1;
    const char *dot = strchr(name, '.');
    /* strings.Split(name, ".") with exactly two parts: family, size */
    if (dot && !strchr(dot + 1, '.')) {
        snprintf(out->family, sizeof out->family, "%.*s", (int)(dot - name), name);
        snprintf(out->size, sizeof out->size, "%s", dot + 1);
        out->has_family = 1;
    }
    const char *p = name;
    while (*p >= 'a' && *p <= 'z')
        p++;
    size_t cat = (size_t)(p - name);
    if (!cat)
        return 0;
    /* (\-[0-9]+tb)? greedy, then ([0-9]+) */
    const char *q = p;
    if (*q == '-' && isdigit((unsigned char)q[1])) {
        const char *r = q + 1;
        while (isdigit((unsigned char)*r))
            r++;
        if (r[0] == 't' && r[1] == 'b' && isdigit((unsigned char)r[2]))
            q = r + 2;
    }
    if (!isdigit((unsigned char)*q))
        return 0;
    const char *g = q;
    while (isdigit((unsigned char)*q))
        q++;
    if (!strchr(q, '.')) /* .*\. needs a dot after the generation */
        return 0;
    snprintf(out->category, sizeof out->category, "%.*s", (int)cat, name);
    snprintf(out->generation, sizeof out->generation, "%.*s", (int)(q - g), g);
    snprintf(out->attributes, sizeof out->attributes, "%.*s", dot ? (int)(dot - q) : 0, q);
    out->has_category = 1;
    return 0;
}

/* ---- the label set ---- */

#define MAX_DERIVED 40

typedef struct lbuf {
    berth_label l[MAX_DERIVED];
    uint32_t n;
    const char *absent[MAX_DERIVED];
    uint32_t nabsent;
    berth_arena *a;
    int oom;
} lbuf;

static void put(lbuf *b, const char *key, const char *value)
{
    if (b->n >= MAX_DERIVED)
        return;
    const char *v = berth_arena_strdup(b->a, value);
    if (!v) {
        b->oom = 1;
        return;
    }
    b->l[b->n++] = (berth_label){key, v};
}

static void putf(lbuf *b, const char *key, long long v)
{
    char s[32];
    snprintf(s, sizeof s, "%lld", v);
    put(b, key, s);
}

static void none(lbuf *b, const char *key)
{
    if (b->nabsent < MAX_DERIVED)
        b->absent[b->nabsent++] = key;
}

/* the instance type's capacity as written (cpu millicores, memory bytes):
 * the derived sku-cpu / instance-memory labels describe the machine, not
 * its allocatable; a type built without capacity_* (tests) has only cpu */
static int64_t cap_cpu(const berth_instance_type *t)
{
    return t->capacity_cpu ? t->capacity_cpu : t->cpu;
}

static int64_t cap_mem(const berth_instance_type *t)
{
    return t->capacity_memory ? t->capacity_memory : t->memory;
}

int berth_instance_provider_of(const char *name)
{
    if (!name)
        return BERTH_PROVIDER_GENERIC;
    if (!strncmp(name, "Standard_", 9) || !strncmp(name, "Basic_", 6))
        return BERTH_PROVIDER_AZURE;
    const char *dot = strchr(name, '.');
    if (dot && dot > name && name[0] >= 'a' && name[0] <= 'z' && dot[1] && !strchr(dot + 1, '.')) {
        for (const char *p = name; *p; p++)
            if (!(islower((unsigned char)*p) || isdigit((unsigned char)*p) || *p == '-' || *p == '.'))
                return BERTH_PROVIDER_GENERIC;
        return BERTH_PROVIDER_AWS;
    }
    return BERTH_PROVIDER_GENERIC;
}

static void derive_azure(lbuf *b, const berth_instance_type *t, const char **arch)
{
    const char *size = strchr(t->name, '_') + 1;
    berth_azure_vmsize z;
    int ok = !berth_azure_vmsize_parse(size, &z);
    put(b, "karpenter.azure.com/sku-name", t->name);
    if (ok) {
        put(b, "karpenter.azure.com/sku-family", z.family);
        put(b, "karpenter.azure.com/sku-series", z.series);
        /* ExtractVersionFromVMSize: "v3" -> "3", none -> "1" */
        put(b, "karpenter.azure.com/sku-version", z.version[0] ? z.version + 1 : "1");
        if (strchr(z.features, 'p'))
            *arch = "arm64"; /* Azure naming: p = Arm-based processor */
    } else {
        none(b, "karpenter.azure.com/sku-family");
        none(b, "karpenter.azure.com/sku-series");
        none(b, "karpenter.azure.com/sku-version");
    }
    putf(b, "karpenter.azure.com/sku-cpu", (long long)(cap_cpu(t) / 1000));
    putf(b, "karpenter.azure.com/sku-memory", (long long)(cap_mem(t) >> 20));
    putf(b, "kubernetes.azure.com/sku-cpu", (long long)(cap_cpu(t) / 1000));
    putf(b, "kubernetes.azure.com/sku-memory", (long long)(cap_mem(t) >> 20));
    putf(b, "karpenter.azure.com/sku-gpu-count", (long long)t->gpus);
    if (t->gpus > 0) {
        put(b, "karpenter.azure.com/sku-gpu-manufacturer", "nvidia");
        if (ok && z.accelerator[0])
            put(b, "karpenter.azure.com/sku-gpu-name", z.accelerator);
        else
            none(b, "karpenter.azure.com/sku-gpu-name");
    } else {
        none(b, "karpenter.azure.com/sku-gpu-manufacturer");
        none(b, "karpenter.azure.com/sku-gpu-name");
    }
}

static void derive_aws(lbuf *b, const berth_instance_type *t, const char **arch)
{
    static const char *const keys[2][7] = {
        {"karpenter.k8s.aws/instance-category", "karpenter.k8s.aws/instance-family",
         "karpenter.k8s.aws/instance-generation", "karpenter.k8s.aws/instance-size",
         "karpenter.k8s.aws/instance-cpu", "karpenter.k8s.aws/instance-memory",
         "karpenter.k8s.aws/instance-gpu-count"},
        {"eks.amazonaws.com/instance-category", "eks.amazonaws.com/instance-family",
         "eks.amazonaws.com/instance-generation", "eks.amazonaws.com/instance-size",
         "eks.amazonaws.com/instance-cpu", "eks.amazonaws.com/instance-memory",
         "eks.amazonaws.com/instance-gpu-count"}};
    berth_aws_instance w;
    berth_aws_instance_parse(t->name, &w);
    for (int k = 0; k < 2; k++) {
        if (w.has_category) {
            put(b, keys[k][0], w.category);
            put(b, keys[k][2], w.generation);
        } else {
            none(b, keys[k][0]);
            none(b, keys[k][2]);
        }
        if (w.has_family) {
            put(b, keys[k][1], w.family);
            put(b, keys[k][3], w.size);
        } else {
            none(b, keys[k][1]);
            none(b, keys[k][3]);
        }
        putf(b, keys[k][4], (long long)(cap_cpu(t) / 1000));
        putf(b, keys[k][5], (long long)(cap_mem(t) >> 20));
        if (t->gpus > 0)
            putf(b, keys[k][6], (long long)t->gpus);
        else
            none(b, keys[k][6]);
    }
    /* Graviton naming: a "g" among the attributes after the generation
     * (m6g, c7gn, r6gd, im4gn) or the a1 category */
    if (w.has_category && (strchr(w.attributes, 'g') || !strcmp(w.category, "a")))
        *arch = "arm64";
}

static int has_label(const berth_label *l, uint32_t n, const char *key)
{
    for (uint32_t i = 0; i < n; i++)
        if (!strcmp(l[i].key, key))
            return 1;
    return 0;
}

int berth_instance_type_derive_labels(berth_arena *a, berth_instance_type *t)
{
    lbuf b;
    memset(&b, 0, sizeof b);
    b.a = a;
    t->naming = berth_instance_provider_of(t->name);
    const char *arch = "amd64";
    if (t->naming == BERTH_PROVIDER_AZURE)
        derive_azure(&b, t, &arch);
    else if (t->naming == BERTH_PROVIDER_AWS)
        derive_aws(&b, t, &arch);
    put(&b, "node.kubernetes.io/instance-type", t->name);
    put(&b, "kubernetes.io/os", "linux");
    put(&b, "kubernetes.io/arch", arch);
    if (b.oom)
        return BERTH_ENOMEM;
    /* spec.labels first; derived ones only for keys it does not set */
    const berth_labels *ex = &t->labels;
    uint32_t cap = ex->n + b.n;
    berth_label *l = berth_arena_alloc(a, (cap ? cap : 1) * sizeof *l);
    const char **absent = berth_arena_alloc(a, (b.nabsent ? b.nabsent : 1) * sizeof *absent);
    if (!l || !absent)
        return BERTH_ENOMEM;
    uint32_t n = 0, na = 0;
    for (uint32_t i = 0; i < ex->n; i++)
        l[n++] = ex->items[i];
    for (uint32_t i = 0; i < b.n; i++)
        if (!has_label(l, n, b.l[i].key))
            l[n++] = b.l[i];
    for (uint32_t i = 0; i < b.nabsent; i++)
        if (!has_label(l, n, b.absent[i]))
            absent[na++] = b.absent[i];
    t->labels.items = l;
    t->labels.n = n;
    berth_labels_sort(&t->labels);
    t->absent = absent;
    t->nabsent = na;
    return 0;
}

int berth_instance_type_defines(const berth_instance_type *t, const char *key)
{
    if (berth_labels_get(&t->labels, key))
        return 1;
    for (uint32_t i = 0; i < t->nabsent; i++)
        if (!strcmp(t->absent[i], key))
            return 1;
    return 0;
}

uint32_t berth_offering_labels(const berth_instance_type *t, const berth_offering *of,
                               berth_label out[BERTH_OFFERING_LABELS])
{
    uint32_t n = 0;
    out[n++] = (berth_label){"topology.kubernetes.io/zone", of->zone};
    out[n++] = (berth_label){"karpenter.sh/capacity-type",
                             berth_capacity_type_name(of->capacity_type)};
    if (t->naming == BERTH_PROVIDER_AZURE)
        out[n++] = (berth_label){"kubernetes.azure.com/scalesetpriority",
                                 of->capacity_type == BERTH_CT_SPOT ? "spot" : "regular"};
    return n;
}
