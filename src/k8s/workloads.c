/* k8s/workloads.c - berth_kube_expand: the pods the workload controllers
 * would create (upstream pkg/controller/replicaset, deployment,
 * statefulset, job, daemon), each pod's workload, and priorityClassName
 * resolution (plugin/pkg/admission/priority), once every input file is in.
 *
 * Steps: (1) ownership: every loaded pod is matched to its controller by
 * its controller ownerReference (kind, namespace, name; uid when both have
 * one), a pod of a ReplicaSet missing from the input to the Deployment the
 * ReplicaSet's name says (<deployment>-<pod-template-hash>), an orphan to
 * the first controller of its namespace whose selector matches (as
 * ClaimPods adopts); (2) per controller the number of pods to create from
 * its live pods (not terminating); (3) the pods, appended to k->pods with
 * deterministic names, the template's labels, owner and workload; (4)
 * StatefulSet claims missing from the input become unbound PVCs, and
 * volumes are resolved again; (5) priorities. docs/kube-input.md,
 * "Workloads", states each rule and its upstream source. */
#include "k8s/k8s.h"
#include "kube/load.h"

#include "berth/hash.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SAFE_ALPHABET "bcdfghjklmnpqrstvwxz2456789" /* upstream rand.SafeEncodeString */
#define MAX_GENERATED_PREFIX 58                       /* 63 - 5: generateName's limit */
#define NAME_FIELD "metadata.name"

/* ---- the template hash ---- */

static uint64_t fnv64(uint64_t h, const char *s)
{
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return (h ^ 0xffu) * 1099511628211ull;
}

/* a hash of a document tree; a map's entries combine commutatively, so
 * key order does not matter (YAML and JSON of one object agree) */
static uint64_t tree_hash(const berth_node *n)
{
    uint64_t h = 14695981039346656037ull;
    h = (h ^ (uint64_t)(n->type + 1)) * 1099511628211ull;
    if (n->type == BERTH_NODE_SCALAR)
        return fnv64(h, n->str);
    uint64_t acc = 0;
    for (size_t i = 0; i < n->n; i++) {
        if (n->type == BERTH_NODE_MAP) {
            uint64_t e = fnv64(14695981039346656037ull, n->entries[i].key->str);
            e = (e ^ tree_hash(n->entries[i].value)) * 1099511628211ull;
            acc += e * 0x9e3779b97f4a7c15ull + (e >> 29);
        } else
            h = (h ^ tree_hash(n->items[i])) * 1099511628211ull;
    }
    return (h ^ acc) * 1099511628211ull;
}

const char *k8s_template_hash(berth_kcluster *k, const berth_node *tmpl)
{
    uint64_t h = tree_hash(tmpl);
    char dec[16];
    snprintf(dec, sizeof dec, "%" PRIu32, (uint32_t)(h ^ (h >> 32)));
    for (char *s = dec; *s; s++)
        *s = SAFE_ALPHABET[(unsigned char)*s % 27];
    return berth_arena_strdup(&k->arena, dec);
}

/* ---- a table keyed by up to three strings ---- */

typedef struct slot {
    const char *a, *b, *c;
    uint32_t v;               /* value + 1; 0 empty */
} slot;

typedef struct table {
    slot *s;
    uint32_t cap, n;
    berth_hashkey key;        /* drawn by table_init: the names are the input's */
} table;

static uint32_t key_hash(const table *t, const char *a, const char *b, const char *c)
{
    uint64_t h = berth_hash_keyed_then(0, &t->key, a);
    h = berth_hash_keyed_then(h, &t->key, b);
    return (uint32_t)berth_hash_keyed_then(h, &t->key, c);
}

static int same(const char *x, const char *y)
{
    return !strcmp(x ? x : "", y ? y : "");
}

static int table_init(table *t, uint32_t n)
{
    t->cap = 16;
    while (t->cap < 2 * (uint64_t)n + 2)
        t->cap *= 2;
    t->n = 0;
    berth_hashkey_new(&t->key);
    t->s = calloc(t->cap, sizeof *t->s);
    return t->s ? 0 : BERTH_ENOMEM;
}

/* value of (a, b, c), BERTH_KUBE_NONE when absent */
static uint32_t table_get(const table *t, const char *a, const char *b, const char *c)
{
    uint32_t m = t->cap - 1;
    for (uint32_t i = key_hash(t, a, b, c) & m; t->s[i].v; i = (i + 1) & m)
        if (same(t->s[i].a, a) && same(t->s[i].b, b) && same(t->s[i].c, c))
            return t->s[i].v - 1;
    return BERTH_KUBE_NONE;
}

/* adds (a, b, c) -> v unless present (the first stays); the table was
 * sized for every key it receives */
static void table_put(table *t, const char *a, const char *b, const char *c, uint32_t v)
{
    uint32_t m = t->cap - 1;
    uint32_t i = key_hash(t, a, b, c) & m;
    for (; t->s[i].v; i = (i + 1) & m)
        if (same(t->s[i].a, a) && same(t->s[i].b, b) && same(t->s[i].c, c))
            return;
    t->s[i] = (slot){a, b, c, v + 1};
    t->n++;
}

/* ---- expansion state ---- */

typedef struct expand {
    berth_kcluster *k;
    berth_error *e;
    table ctl;                /* (kind, ns, name) -> controller */
    table names;              /* (ns, name) -> pod: every pod name taken */
    table nodes;              /* (name) -> node */
    uint32_t *owner;          /* per loaded pod: controller or NONE */
    uint32_t *deploy;         /* per controller: its Deployment in the input or NONE */
    uint32_t *current;        /* per Deployment: its current ReplicaSet or NONE */
    int64_t *live;            /* per controller: owned pods not terminating */
    uint32_t *first, *list;   /* per controller: its pods (CSR) */
    int64_t *want;            /* per controller: pods to create */
    const char **wl;          /* per controller: its workload string (lazy) */
    uint8_t *mark;            /* per node (DaemonSets) */
    uint32_t nloaded;
} expand;

static void expand_free(expand *x)
{
    free(x->ctl.s);
    free(x->names.s);
    free(x->nodes.s);
    free(x->owner);
    free(x->deploy);
    free(x->current);
    free(x->live);
    free(x->first);
    free(x->list);
    free(x->want);
    free(x->wl);
    free(x->mark);
}

static int oom(expand *x)
{
    return berth_error_set(x->e, BERTH_ENOMEM, "out of memory");
}

static char *fmt3(berth_kcluster *k, const char *a, const char *b, const char *c)
{
    size_t n = strlen(a) + strlen(b) + strlen(c) + 3;
    char *s = berth_arena_alloc(&k->arena, n);
    if (s)
        snprintf(s, n, "%s/%s/%s", a, b, c);
    return s;
}

/* "Kind/ns/name" of controller c: a ReplicaSet of a Deployment in the
 * input answers with the Deployment */
static const char *workload_of(expand *x, uint32_t c)
{
    if (x->deploy[c] != BERTH_KUBE_NONE)
        c = x->deploy[c];
    if (!x->wl[c]) {
        const berth_kcontroller *ct = &x->k->controllers[c];
        x->wl[c] = fmt3(x->k, ct->kind, ct->ns, ct->name);
    }
    return x->wl[c];
}

/* name ends with "-" suffix: the prefix's length, else 0 */
static size_t strip_suffix(const char *name, const char *suffix)
{
    size_t n = strlen(name), s = strlen(suffix);
    if (!s || n < s + 2 || name[n - s - 1] != '-' || strcmp(name + n - s, suffix))
        return 0;
    return n - s - 1;
}

/* the controller pod p belongs to, by its controller reference */
static uint32_t owner_by_ref(expand *x, const berth_kpod *p)
{
    berth_kcluster *k = x->k;
    uint32_t c = table_get(&x->ctl, p->owner_kind, p->ns, p->owner_name);
    if (c != BERTH_KUBE_NONE) {
        const berth_kcontroller *ct = &k->controllers[c];
        if (ct->uid && p->owner_uid && strcmp(ct->uid, p->owner_uid))
            return BERTH_KUBE_NONE; /* another object of that name */
        return c;
    }
    /* a ReplicaSet not in the input: the Deployment its name says
     * (deployment controller: <deployment>-<pod-template-hash>) */
    const char *hash = berth_labels_get(&p->labels, "pod-template-hash");
    size_t len;
    if (strcmp(p->owner_kind, "ReplicaSet") || !hash || !(len = strip_suffix(p->owner_name, hash)))
        return BERTH_KUBE_NONE;
    char name[320];
    if (len >= sizeof name)
        return BERTH_KUBE_NONE;
    memcpy(name, p->owner_name, len);
    name[len] = 0;
    c = table_get(&x->ctl, "Deployment", p->ns, name);
    if (c != BERTH_KUBE_NONE && berth_selector_matches(&k->controllers[c].selector, &p->labels))
        return c;
    return BERTH_KUBE_NONE;
}

/* a pod's StatefulSet ordinal from its name (<set>-<n>), -1 otherwise */
static int64_t sts_ordinal(const char *set, const char *pod)
{
    size_t n = strlen(set);
    if (strncmp(set, pod, n) || pod[n] != '-' || !pod[n + 1])
        return -1;
    int64_t v = 0;
    for (const char *s = pod + n + 1; *s; s++) {
        if (*s < '0' || *s > '9' || v > INT32_MAX)
            return -1;
        v = v * 10 + (*s - '0');
    }
    return v;
}

/* Whether controller c adopts orphan pod p (ClaimPods: selector match;
 * a StatefulSet only its own <set>-<ordinal> names; a Deployment never
 * adopts pods - its ReplicaSet does, so a Deployment without one in the
 * input adopts what its synthesized ReplicaSet would select). */
static int adopts(const expand *x, uint32_t c, const berth_kpod *p)
{
    const berth_kcontroller *ct = &x->k->controllers[c];
    if (ct->terminating || strcmp(ct->ns, p->ns) ||
        !berth_selector_matches(&ct->selector, &p->labels))
        return 0;
    if (ct->type == BERTH_KCTL_STATEFULSET)
        return sts_ordinal(ct->name, p->name) >= 0;
    if (ct->type == BERTH_KCTL_DEPLOYMENT) {
        const char *h = berth_labels_get(&p->labels, "pod-template-hash");
        return x->current[c] == BERTH_KUBE_NONE && h && ct->hash && !strcmp(h, ct->hash);
    }
    return 1;
}

/* DaemonSet pods' tolerations: the template's plus upstream
 * AddOrUpdateDaemonPodTolerations (a template toleration equal in key,
 * operator, value and effect is replaced, i.e. kept as is for scheduling) */
static int daemon_tolerations(berth_kcluster *k, const berth_kcontroller *c, berth_toleration **out,
                              uint32_t *n)
{
    static const struct {
        const char *key;
        berth_taint_effect eff;
    } add[6] = {
        {"node.kubernetes.io/not-ready", BERTH_EFFECT_NOEXECUTE},
        {"node.kubernetes.io/unreachable", BERTH_EFFECT_NOEXECUTE},
        {"node.kubernetes.io/disk-pressure", BERTH_EFFECT_NOSCHEDULE},
        {"node.kubernetes.io/memory-pressure", BERTH_EFFECT_NOSCHEDULE},
        {"node.kubernetes.io/pid-pressure", BERTH_EFFECT_NOSCHEDULE},
        {"node.kubernetes.io/unschedulable", BERTH_EFFECT_NOSCHEDULE},
    };
    uint32_t cap = c->tmpl.ntols + 7;
    berth_toleration *t = berth_arena_alloc(&k->arena, cap * sizeof *t);
    if (!t)
        return BERTH_ENOMEM;
    uint32_t m = c->tmpl.ntols;
    if (m)
        memcpy(t, c->tmpl.tols, m * sizeof *t);
    for (int i = 0; i < 7; i++) {
        if (i == 6 && !c->host_network)
            break;
        const char *key = i < 6 ? add[i].key : "node.kubernetes.io/network-unavailable";
        berth_taint_effect eff = i < 6 ? add[i].eff : BERTH_EFFECT_NOSCHEDULE;
        berth_toleration want = {key, "", BERTH_TOL_EXISTS, eff, -1};
        int found = 0;
        for (uint32_t j = 0; j < m && !found; j++)
            if (same(t[j].key, key) && t[j].op == BERTH_TOL_EXISTS && same(t[j].value, "") &&
                t[j].effect == eff) {
                t[j] = want;
                found = 1;
            }
        if (!found)
            t[m++] = want;
    }
    *out = t;
    *n = m;
    return 0;
}

/* Whether the DaemonSet controller runs a pod of c on node nd
 * (NodeShouldRunDaemonPod's shouldRun: the template's nodeName, its
 * nodeSelector and required node affinity, and no untolerated NoSchedule
 * or NoExecute taint with the daemon tolerations). */
int k8s_daemon_should_run(const berth_kpod *tmpl, const berth_knode *nd)
{
    if (tmpl->node_name && strcmp(tmpl->node_name, nd->name))
        return 0;
    if (!berth_kube_node_affinity_matches(tmpl, nd))
        return 0;
    return berth_taints_first_untolerated(nd->taints, nd->ntaints, tmpl->tols, tmpl->ntols,
                                          BERTH_EFFECT_MASK_HARD) == NULL;
}

/* the node a DaemonSet pod is for: spec.nodeName, else the matchFields
 * metadata.name In [one node] of its required node affinity (upstream
 * GetTargetNodeName); NULL when neither */
const char *k8s_daemon_target(const berth_kpod *p)
{
    if (p->node_name)
        return p->node_name;
    for (uint32_t t = 0; t < p->nreq_terms; t++)
        for (uint32_t f = 0; f < p->req_terms[t].nfields; f++) {
            const berth_requirement *r = &p->req_terms[t].fields[f];
            if (!strcmp(r->key, NAME_FIELD) && r->op == BERTH_SEL_IN && r->nvalues == 1)
                return r->values[0];
        }
    return NULL;
}

static int cap_error(expand *x, const berth_kcontroller *c, uint64_t want, uint64_t total)
{
    const berth_kloc *l = &c->replicas_at;
    char what[200];
    snprintf(what, sizeof what, "%s %s/%s would create %" PRIu64 " pods", c->kind, c->ns,
             c->name, want);
    if (l->file)
        return berth_error_set(x->e, BERTH_EINVAL,
                               "%s:%d:%d: %s: %s (%" PRIu64 " from workloads in all): berth "
                               "creates at most %u pods from workloads per run",
                               l->file, l->line, l->col, l->path, what, total,
                               BERTH_KUBE_MAX_GENERATED);
    return berth_error_set(x->e, BERTH_EINVAL,
                           "%s (%" PRIu64 " from workloads in all): berth creates at most %u "
                           "pods from workloads per run",
                           what, total, BERTH_KUBE_MAX_GENERATED);
}

/* ---- steps ---- */

static int link_controllers(expand *x)
{
    berth_kcluster *k = x->k;
    uint32_t nc = k->ncontrollers;
    for (uint32_t c = 0; c < nc; c++)
        table_put(&x->ctl, k->controllers[c].kind, k->controllers[c].ns, k->controllers[c].name, c);
    for (uint32_t c = 0; c < nc; c++) {
        x->deploy[c] = x->current[c] = BERTH_KUBE_NONE;
    }
    /* a ReplicaSet owned by a Deployment of the input is not expanded on
     * its own; the Deployment's current one is its newest revision (ties:
     * the later object) */
    for (uint32_t c = 0; c < nc; c++) {
        const berth_kcontroller *rs = &k->controllers[c];
        if (rs->type != BERTH_KCTL_REPLICASET || !rs->owner_kind ||
            strcmp(rs->owner_kind, "Deployment"))
            continue;
        uint32_t d = table_get(&x->ctl, "Deployment", rs->ns, rs->owner_name);
        if (d == BERTH_KUBE_NONE ||
            (k->controllers[d].uid && rs->owner_uid && strcmp(k->controllers[d].uid, rs->owner_uid)))
            continue;
        x->deploy[c] = d;
        uint32_t cur = x->current[d];
        if (cur == BERTH_KUBE_NONE || k->controllers[cur].revision <= rs->revision)
            x->current[d] = c;
    }
    return 0;
}

static int cmp_ctl_ns(const void *a, const void *b, void *ctx)
{
    const berth_kcluster *k = ctx;
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    int r = strcmp(k->controllers[x].ns, k->controllers[y].ns);
    return r ? r : (x > y) - (x < y);
}

static int assign_pods(expand *x)
{
    berth_kcluster *k = x->k;
    uint32_t nc = k->ncontrollers, norphan = 0;
    for (uint32_t p = 0; p < x->nloaded; p++) {
        const berth_kpod *pod = &k->pods[p];
        x->owner[p] = pod->owner_kind ? owner_by_ref(x, pod) : BERTH_KUBE_NONE;
        norphan += !pod->owner_kind;
    }
    if (norphan && nc) {
        /* orphans: the first controller of their namespace that adopts them */
        uint32_t *byns = malloc(nc * sizeof *byns);
        if (!byns)
            return oom(x);
        for (uint32_t c = 0; c < nc; c++)
            byns[c] = c;
        qsort_r(byns, nc, sizeof *byns, cmp_ctl_ns, k);
        for (uint32_t p = 0; p < x->nloaded; p++) {
            const berth_kpod *pod = &k->pods[p];
            if (pod->owner_kind)
                continue;
            uint32_t lo = 0, hi = nc;
            while (lo < hi) {
                uint32_t mid = lo + (hi - lo) / 2;
                if (strcmp(k->controllers[byns[mid]].ns, pod->ns) < 0)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            for (uint32_t i = lo; i < nc && !strcmp(k->controllers[byns[i]].ns, pod->ns); i++)
                if (adopts(x, byns[i], pod)) {
                    x->owner[p] = byns[i];
                    break;
                }
        }
        free(byns);
    }
    /* each controller's pods (CSR) and live counts; workloads */
    for (uint32_t p = 0; p < x->nloaded; p++) {
        berth_kpod *pod = &k->pods[p];
        uint32_t c = x->owner[p];
        if (c == BERTH_KUBE_NONE) {
            pod->workload = NULL;
            if (pod->owner_kind) {
                /* an owner outside the input: a ReplicaSet named
                 * <deployment>-<pod-template-hash> is a Deployment's */
                const char *hash = berth_labels_get(&pod->labels, "pod-template-hash");
                size_t len = hash && !strcmp(pod->owner_kind, "ReplicaSet")
                                 ? strip_suffix(pod->owner_name, hash)
                                 : 0;
                char name[320];
                if (len && len < sizeof name) {
                    memcpy(name, pod->owner_name, len);
                    name[len] = 0;
                    pod->workload = fmt3(k, "Deployment", pod->ns, name);
                } else
                    pod->workload = fmt3(k, pod->owner_kind, pod->ns, pod->owner_name);
                if (!pod->workload)
                    return oom(x);
            }
            continue;
        }
        if (!(pod->workload = workload_of(x, c)))
            return oom(x);
        x->first[c + 1]++;
        if (!pod->terminating)
            x->live[c]++;
    }
    for (uint32_t c = 0; c < nc; c++)
        x->first[c + 1] += x->first[c];
    uint32_t *fill = calloc(nc + 1, sizeof *fill);
    if (!fill)
        return oom(x);
    for (uint32_t p = 0; p < x->nloaded; p++)
        if (x->owner[p] != BERTH_KUBE_NONE) {
            uint32_t c = x->owner[p];
            x->list[x->first[c] + fill[c]++] = p;
        }
    free(fill);
    return 0;
}

/* pods each controller creates (upstream's manage / sync functions) */
static int plan_counts(expand *x, uint64_t *total)
{
    berth_kcluster *k = x->k;
    uint32_t nc = k->ncontrollers;
    *total = 0;
    /* a Deployment's live pods: its own (ReplicaSets missing from the
     * input) plus those of its ReplicaSets; want[] holds them for now */
    for (uint32_t c = 0; c < nc; c++)
        if (k->controllers[c].type == BERTH_KCTL_DEPLOYMENT)
            x->want[c] += x->live[c];
    for (uint32_t r = 0; r < nc; r++)
        if (x->deploy[r] != BERTH_KUBE_NONE)
            x->want[x->deploy[r]] += x->live[r];
    for (uint32_t c = 0; c < nc; c++) {
        const berth_kcontroller *ct = &k->controllers[c];
        int64_t w = 0;
        if (ct->terminating)
            w = 0;
        else if (ct->type == BERTH_KCTL_REPLICASET || ct->type == BERTH_KCTL_RC)
            w = x->deploy[c] != BERTH_KUBE_NONE ? 0 : ct->replicas - x->live[c];
        else if (ct->type == BERTH_KCTL_DEPLOYMENT)
            w = ct->replicas - x->want[c];
        else if (ct->type == BERTH_KCTL_STATEFULSET) {
            /* <set>-<ordinal> for every ordinal whose name is free: a
             * terminating pod keeps its name until it is gone */
            char name[400];
            for (int64_t o = ct->ordinal_start; o < ct->ordinal_start + ct->replicas; o++) {
                snprintf(name, sizeof name, "%s-%" PRId64, ct->name, o);
                if (table_get(&x->names, ct->ns, name, NULL) == BERTH_KUBE_NONE)
                    w++;
                if ((uint64_t)w > BERTH_KUBE_MAX_GENERATED)
                    break;
            }
        } else if (ct->type == BERTH_KCTL_DAEMONSET) {
            for (uint32_t i = x->first[c]; i < x->first[c + 1]; i++) {
                const char *t = k8s_daemon_target(&k->pods[x->list[i]]);
                uint32_t n = t ? table_get(&x->nodes, t, NULL, NULL) : BERTH_KUBE_NONE;
                if (n != BERTH_KUBE_NONE)
                    x->mark[n] = 1;
            }
            for (uint32_t n = 0; n < k->nnodes; n++) {
                w += !x->mark[n] && k8s_daemon_should_run(&ct->tmpl, &k->nodes[n]);
                x->mark[n] = 0;
            }
        } else if (ct->type == BERTH_KCTL_JOB && !ct->finished && !ct->suspended) {
            /* job controller manageJob: completions unset -> parallelism
             * until a pod succeeded; else min(completions - succeeded,
             * parallelism) */
            int64_t active = x->live[c], want;
            if (ct->completions < 0)
                want = ct->succeeded > 0 ? active : ct->replicas;
            else {
                want = ct->completions - ct->succeeded;
                if (want > ct->replicas)
                    want = ct->replicas;
                if (want < 0)
                    want = 0;
            }
            w = want - active;
        }
        x->want[c] = w > 0 ? w : 0;
        *total += (uint64_t)x->want[c];
        if ((uint64_t)x->want[c] > BERTH_KUBE_MAX_GENERATED || *total > BERTH_KUBE_MAX_GENERATED ||
            (uint64_t)k->npods + *total > KUBE_MAX_PODS)
            return cap_error(x, ct, (uint64_t)x->want[c], *total);
    }
    return 0;
}

/* a free name <prefix><5 characters>, the characters from a hash of the
 * namespace, the prefix and a counter (upstream: generateName, random) */
static const char *fresh_name(expand *x, const char *ns, const char *prefix, uint64_t *seq)
{
    char buf[MAX_GENERATED_PREFIX + 8];
    size_t pl = strlen(prefix);
    if (pl > MAX_GENERATED_PREFIX)
        pl = MAX_GENERATED_PREFIX;
    memcpy(buf, prefix, pl);
    for (;;) {
        char num[24];
        snprintf(num, sizeof num, "%" PRIu64, (*seq)++);
        uint64_t h = fnv64(fnv64(fnv64(14695981039346656037ull, ns), prefix), num);
        for (int i = 0; i < 5; i++) {
            buf[pl + i] = SAFE_ALPHABET[h % 27];
            h /= 27;
        }
        buf[pl + 5] = 0;
        if (table_get(&x->names, ns, buf, NULL) == BERTH_KUBE_NONE)
            return berth_arena_strdup(&x->k->arena, buf);
    }
}

static int add_pvc_if_missing(expand *x, table *pvcs, const char *ns, const char *name)
{
    berth_kcluster *k = x->k;
    if (table_get(pvcs, ns, name, NULL) != BERTH_KUBE_NONE)
        return 0;
    if (berth_grow((void **)&k->pvcs, &k->cappvcs, k->npvcs + 1, sizeof *k->pvcs, KUBE_MAX_OBJECTS))
        return oom(x);
    k->pvcs[k->npvcs] = (berth_kpvc){ns, name, NULL, NULL};
    table_put(pvcs, ns, name, NULL, k->npvcs);
    k->npvcs++;
    return 0;
}

/* appends one pod from template t of controller c (the owner written on
 * the pod: owner_kind/name/uid) */
static berth_kpod *new_pod(expand *x, const berth_kpod *t, const char *ns, const char *name,
                           const char *okind, const char *oname, const char *ouid,
                           const char *workload)
{
    berth_kcluster *k = x->k;
    berth_kpod *p = &k->pods[k->npods];
    *p = *t;
    p->ns = ns;
    p->name = name;
    p->owner_kind = okind;
    p->owner_name = oname;
    p->owner_uid = ouid;
    p->workload = workload;
    p->generated = 1;
    p->order = k->npods;
    p->has_created = 0;
    p->created = 0;
    p->terminating = 0;
    p->assumed = 0;
    p->has_usage = 0;
    memset(p->usage, 0, sizeof p->usage);
    table_put(&x->names, ns, name, NULL, k->npods);
    k->npods++;
    return p;
}

/* labels plus extra (key, value) pairs, sorted */
static int with_labels(expand *x, berth_kpod *p, const berth_label *extra, uint32_t n)
{
    berth_label *items = berth_arena_alloc(&x->k->arena, (p->labels.n + n) * sizeof *items);
    if (!items)
        return oom(x);
    uint32_t m = 0;
    for (uint32_t i = 0; i < p->labels.n; i++) {
        int dup = 0;
        for (uint32_t j = 0; j < n; j++)
            dup |= !strcmp(p->labels.items[i].key, extra[j].key);
        if (!dup)
            items[m++] = p->labels.items[i];
    }
    for (uint32_t j = 0; j < n; j++)
        items[m++] = extra[j];
    p->labels = (berth_labels){items, m};
    berth_labels_sort(&p->labels);
    return 0;
}

static int generate(expand *x, int *claims)
{
    berth_kcluster *k = x->k;
    uint32_t nc = k->ncontrollers;
    table pvcs = {0};
    int rc = 0;
    for (uint32_t c = 0; c < nc && !rc; c++) {
        if (!x->want[c])
            continue;
        berth_kcontroller *ct = &k->controllers[c];
        const char *wl = workload_of(x, c);
        if (!wl)
            return oom(x);
        uint64_t seq = 0;
        int64_t want = x->want[c];
        if (ct->type == BERTH_KCTL_DEPLOYMENT) {
            /* through the current ReplicaSet, or the one the deployment
             * controller would create: <deployment>-<pod-template-hash> */
            uint32_t cur = x->current[c];
            const berth_kpod *t = cur != BERTH_KUBE_NONE ? &k->controllers[cur].tmpl : &ct->tmpl;
            const char *rs_name, *rs_uid = NULL;
            if (cur != BERTH_KUBE_NONE) {
                rs_name = k->controllers[cur].name;
                rs_uid = k->controllers[cur].uid;
            } else {
                size_t n = strlen(ct->name) + strlen(ct->hash) + 2;
                char *s = berth_arena_alloc(&k->arena, n);
                if (!s)
                    return oom(x);
                snprintf(s, n, "%s-%s", ct->name, ct->hash);
                rs_name = s;
            }
            char prefix[400];
            snprintf(prefix, sizeof prefix, "%s-", rs_name);
            for (int64_t i = 0; i < want; i++) {
                const char *name = fresh_name(x, ct->ns, prefix, &seq);
                if (!name)
                    return oom(x);
                new_pod(x, t, ct->ns, name, "ReplicaSet", rs_name, rs_uid, wl);
            }
            continue;
        }
        if (ct->type == BERTH_KCTL_STATEFULSET) {
            char name[400];
            for (int64_t o = ct->ordinal_start; o < ct->ordinal_start + ct->replicas; o++) {
                snprintf(name, sizeof name, "%s-%" PRId64, ct->name, o);
                if (table_get(&x->names, ct->ns, name, NULL) != BERTH_KUBE_NONE)
                    continue;
                const char *nm = berth_arena_strdup(&k->arena, name);
                char ord[24];
                snprintf(ord, sizeof ord, "%" PRId64, o);
                const char *os = berth_arena_strdup(&k->arena, ord);
                if (!nm || !os)
                    return oom(x);
                berth_kpod *p = new_pod(x, &ct->tmpl, ct->ns, nm, ct->kind, ct->name, ct->uid, wl);
                berth_label extra[2] = {{"apps.kubernetes.io/pod-index", os},
                                        {"statefulset.kubernetes.io/pod-name", nm}};
                if ((rc = with_labels(x, p, extra, 2)))
                    return rc;
                if (!ct->nclaim_templates)
                    continue;
                /* one claim per volumeClaimTemplates entry: <template>-<pod> */
                if (!pvcs.s) {
                    if (table_init(&pvcs, k->npvcs + (uint32_t)x->want[c] * ct->nclaim_templates +
                                              16))
                        return oom(x);
                    for (uint32_t i = 0; i < k->npvcs; i++)
                        table_put(&pvcs, k->pvcs[i].ns, k->pvcs[i].name, NULL, i);
                }
                const char **cl = berth_arena_alloc(
                    &k->arena, (p->nclaims + ct->nclaim_templates) * sizeof *cl);
                if (!cl)
                    return oom(x);
                if (p->nclaims)
                    memcpy(cl, p->claims, p->nclaims * sizeof *cl);
                for (uint32_t v = 0; v < ct->nclaim_templates && !rc; v++) {
                    size_t n = strlen(ct->claim_templates[v]) + strlen(nm) + 2;
                    char *s = berth_arena_alloc(&k->arena, n);
                    if (!s)
                        return oom(x);
                    snprintf(s, n, "%s-%s", ct->claim_templates[v], nm);
                    cl[p->nclaims + v] = s;
                    rc = add_pvc_if_missing(x, &pvcs, ct->ns, s);
                }
                p->claims = cl;
                p->nclaims += ct->nclaim_templates;
            }
            continue;
        }
        if (ct->type == BERTH_KCTL_DAEMONSET) {
            berth_kpod t = ct->tmpl;
            for (uint32_t i = x->first[c]; i < x->first[c + 1]; i++) {
                const char *tg = k8s_daemon_target(&k->pods[x->list[i]]);
                uint32_t n = tg ? table_get(&x->nodes, tg, NULL, NULL) : BERTH_KUBE_NONE;
                if (n != BERTH_KUBE_NONE)
                    x->mark[n] = 1;
            }
            char prefix[400];
            snprintf(prefix, sizeof prefix, "%s-", ct->name);
            for (uint32_t n = 0; n < k->nnodes; n++) {
                if (x->mark[n] || !k8s_daemon_should_run(&t, &k->nodes[n])) {
                    x->mark[n] = 0;
                    continue;
                }
                const char *name = fresh_name(x, ct->ns, prefix, &seq);
                /* pinned to its node: the required node affinity becomes
                 * matchFields metadata.name In [node]
                 * (ReplaceDaemonSetPodNodeNameNodeAffinity) */
                berth_kterm *term = berth_arena_alloc(&k->arena, sizeof *term);
                berth_requirement *r = berth_arena_alloc(&k->arena, sizeof *r);
                const char **v = berth_arena_alloc(&k->arena, sizeof *v);
                if (!name || !term || !r || !v)
                    return oom(x);
                v[0] = k->nodes[n].name;
                *r = (berth_requirement){NAME_FIELD, BERTH_SEL_IN, v, 1};
                *term = (berth_kterm){NULL, 0, r, 1};
                berth_kpod *p = new_pod(x, &t, ct->ns, name, ct->kind, ct->name, ct->uid, wl);
                p->req_terms = term;
                p->nreq_terms = 1;
                p->has_req_affinity = 1;
            }
            continue;
        }
        /* ReplicaSet, ReplicationController, Job: generateName <name>- */
        char prefix[400];
        for (int64_t i = 0, idx = 0; i < want; i++) {
            const char *ix = NULL;
            if (ct->type == BERTH_KCTL_JOB && ct->indexed) {
                /* the lowest completion indexes no live pod holds */
                char num[24];
                for (;; idx++) {
                    snprintf(num, sizeof num, "%" PRId64, idx);
                    int held = 0;
                    for (uint32_t j = x->first[c]; j < x->first[c + 1] && !held; j++) {
                        const berth_kpod *q = &k->pods[x->list[j]];
                        const char *qi = berth_labels_get(&q->labels,
                                                          "batch.kubernetes.io/job-completion-index");
                        held = !q->terminating && qi && !strcmp(qi, num);
                    }
                    if (!held)
                        break;
                }
                ix = berth_arena_strdup(&k->arena, num);
                if (!ix)
                    return oom(x);
                snprintf(prefix, sizeof prefix, "%s-%s-", ct->name, ix);
                idx++;
            } else
                snprintf(prefix, sizeof prefix, "%s-", ct->name);
            const char *name = fresh_name(x, ct->ns, prefix, &seq);
            if (!name)
                return oom(x);
            berth_kpod *p = new_pod(x, &ct->tmpl, ct->ns, name, ct->kind, ct->name, ct->uid, wl);
            if (ix) {
                berth_label extra[1] = {{"batch.kubernetes.io/job-completion-index", ix}};
                if ((rc = with_labels(x, p, extra, 1)))
                    return rc;
            }
        }
    }
    free(pvcs.s);
    for (uint32_t p = x->nloaded; p < k->npods; p++) {
        berth_kube_pod_requests(k, &k->pods[p]);
        *claims |= k->pods[p].nclaims != 0;
    }
    return rc;
}

/* the synthesized ReplicaSets' selectors for the default spread: the
 * Deployment's selector plus pod-template-hash */
static int synth_workloads(expand *x)
{
    berth_kcluster *k = x->k;
    for (uint32_t c = 0; c < k->ncontrollers; c++) {
        const berth_kcontroller *ct = &k->controllers[c];
        if (ct->type != BERTH_KCTL_DEPLOYMENT || x->current[c] != BERTH_KUBE_NONE || !ct->hash ||
            ct->selector.nothing)
            continue;
        berth_requirement *r = berth_arena_alloc(&k->arena, (ct->selector.n + 1) * sizeof *r);
        const char **v = berth_arena_alloc(&k->arena, sizeof *v);
        size_t n = strlen(ct->name) + strlen(ct->hash) + 2;
        char *name = berth_arena_alloc(&k->arena, n);
        if (!r || !v || !name)
            return oom(x);
        if (ct->selector.n)
            memcpy(r, ct->selector.reqs, ct->selector.n * sizeof *r);
        v[0] = ct->hash;
        r[ct->selector.n] = (berth_requirement){"pod-template-hash", BERTH_SEL_IN, v, 1};
        snprintf(name, n, "%s-%s", ct->name, ct->hash);
        if (berth_grow((void **)&k->workloads, &k->capworkloads, k->nworkloads + 1,
                       sizeof *k->workloads, KUBE_MAX_OBJECTS))
            return oom(x);
        k->workloads[k->nworkloads++] =
            (berth_kworkload){"ReplicaSet", ct->ns, name, {r, ct->selector.n + 1, 0}};
    }
    return 0;
}

/* the class's preemptionPolicy (admission plugin Priority sets the pod's
 * when it has none; a pod naming a class cannot disagree with it) */
static void class_policy(berth_kpod *pod, const berth_kpriority_class *pc)
{
    if (pc->preemption_policy && !strcmp(pc->preemption_policy, "Never"))
        pod->preemption_policy = 1;
}

/* priorityClassName -> priority (admission plugin Priority, admitPod): a
 * pod with spec.priority keeps it; a named class must exist; no class:
 * the globalDefault class with the lowest value, else 0 */
static int resolve_priorities(expand *x)
{
    berth_kcluster *k = x->k;
    const berth_kpriority_class *def = NULL;
    for (uint32_t i = 0; i < k->npclasses; i++) {
        const berth_kpriority_class *pc = &k->pclasses[i];
        if (berth_kube_priority_class(k, pc->name) != pc) /* replaced by a later one */
            continue;
        if (pc->global_default && (!def || pc->value < def->value))
            def = pc;
    }
    for (uint32_t p = 0; p < k->npods; p++) {
        berth_kpod *pod = &k->pods[p];
        if (pod->has_priority)
            continue;
        if (!pod->priority_class) {
            if (def) {
                pod->priority = def->value;
                pod->priority_class = def->name;
                class_policy(pod, def);
            }
            continue;
        }
        const berth_kpriority_class *pc = berth_kube_priority_class(k, pod->priority_class);
        if (pc) {
            pod->priority = pc->value;
            class_policy(pod, pc);
            continue;
        }
        const berth_kloc *l = &pod->priority_class_at;
        if (l->file)
            return berth_error_set(x->e, BERTH_EINVAL,
                                   "%s:%d:%d: %s: no PriorityClass with name '%s' was found (pod "
                                   "%s/%s; give the PriorityClass object in the input; built-in: "
                                   "system-cluster-critical, system-node-critical)",
                                   l->file, l->line, l->col, l->path, pod->priority_class,
                                   pod->ns, pod->name);
        return berth_error_set(x->e, BERTH_EINVAL,
                               "pod %s/%s: spec.priorityClassName: no PriorityClass with name '%s' "
                               "was found", pod->ns, pod->name, pod->priority_class);
    }
    return 0;
}

/* the expansion state over k's pods, controllers and nodes as they are */
static int expand_init(expand *x, berth_kcluster *k, berth_error *e, uint64_t extra_names)
{
    memset(x, 0, sizeof *x);
    x->k = k;
    x->e = e;
    x->nloaded = k->npods;
    uint32_t nc = k->ncontrollers, N = nc ? nc : 1, P = k->npods ? k->npods : 1;
    if (table_init(&x->ctl, nc) || table_init(&x->nodes, k->nnodes) ||
        table_init(&x->names, (uint32_t)(k->npods + 1024 + extra_names)) ||
        !(x->owner = malloc(P * sizeof *x->owner)) ||
        !(x->deploy = malloc(N * sizeof *x->deploy)) ||
        !(x->current = malloc(N * sizeof *x->current)) || !(x->live = calloc(N, sizeof *x->live)) ||
        !(x->first = calloc(N + 1, sizeof *x->first)) || !(x->list = malloc(P * sizeof *x->list)) ||
        !(x->want = calloc(N, sizeof *x->want)) || !(x->wl = calloc(N, sizeof *x->wl)) ||
        !(x->mark = calloc(k->nnodes ? k->nnodes : 1, 1))) {
        expand_free(x);
        return berth_error_set(e, BERTH_ENOMEM, "out of memory");
    }
    for (uint32_t n = 0; n < k->nnodes; n++)
        table_put(&x->nodes, k->nodes[n].name, NULL, NULL, n);
    for (uint32_t p = 0; p < k->npods; p++)
        table_put(&x->names, k->pods[p].ns, k->pods[p].name, NULL, p);
    int rc = link_controllers(x);
    if (!rc)
        rc = assign_pods(x);
    if (rc)
        expand_free(x);
    return rc;
}

/* creates x->want[c] pods per controller (total of them) */
static int expand_generate(expand *x, uint64_t total)
{
    berth_kcluster *k = x->k;
    int rc = 0;
    if ((uint64_t)x->names.n + total > x->names.cap / 2) {
        table bigger;
        if (table_init(&bigger, (uint32_t)(x->names.n + total)))
            return oom(x);
        for (uint32_t p = 0; p < k->npods; p++)
            table_put(&bigger, k->pods[p].ns, k->pods[p].name, NULL, p);
        free(x->names.s);
        x->names = bigger;
    }
    if (berth_grow_append((void **)&k->pods, &k->cappods, k->npods + (uint32_t)total,
                          sizeof *k->pods, KUBE_MAX_PODS))
        return oom(x);
    int claims = 0;
    rc = generate(x, &claims);
    if (!rc && claims && kube_resolve_volumes(k))
        rc = oom(x);
    return rc;
}

int berth_kube_expand(berth_kcluster *k, berth_error *e)
{
    if (k->expanded)
        return 0;
    k->expanded = 1;
    int rc = 0;
    /* every DaemonSet template gets the daemon tolerations once (NewPod)
     * and its requests (the planners' node overhead, k8s/daemons.c) */
    for (uint32_t c = 0; c < k->ncontrollers && !rc; c++)
        if (k->controllers[c].type == BERTH_KCTL_DAEMONSET) {
            if (daemon_tolerations(k, &k->controllers[c], &k->controllers[c].tmpl.tols,
                                   &k->controllers[c].tmpl.ntols))
                rc = berth_error_set(e, BERTH_ENOMEM, "out of memory");
            berth_kube_pod_requests(k, &k->controllers[c].tmpl);
        }
    expand x;
    if (rc || (rc = expand_init(&x, k, e, 0)))
        return rc;
    uint64_t total = 0;
    rc = plan_counts(&x, &total);
    if (!rc && total)
        rc = expand_generate(&x, total);
    if (!rc)
        rc = synth_workloads(&x);
    if (!rc)
        rc = resolve_priorities(&x);
    expand_free(&x);
    return rc;
}

int berth_kube_expand_more(berth_kcluster *k, uint32_t c, uint32_t n, berth_error *e)
{
    if (!k->expanded)
        return berth_error_set(e, BERTH_EINVAL, "berth_kube_expand_more before berth_kube_expand");
    if (c >= k->ncontrollers || k->controllers[c].type == BERTH_KCTL_DAEMONSET)
        return berth_error_set(e, BERTH_EINVAL, "no such scalable controller");
    berth_kcontroller *ct = &k->controllers[c];
    if ((uint64_t)k->npods + n > KUBE_MAX_PODS)
        return berth_error_set(e, BERTH_EINVAL, "more than %u pods", KUBE_MAX_PODS);
    if (!n)
        return 0;
    expand x;
    int rc = expand_init(&x, k, e, n);
    if (rc)
        return rc;
    /* a StatefulSet names its new pods by the ordinals past its replicas;
     * the others take fresh generated names */
    if (ct->type == BERTH_KCTL_STATEFULSET) {
        /* replicas up to the n-th free ordinal */
        int64_t nfree = 0, r = 0;
        char name[400];
        while (nfree < n) {
            snprintf(name, sizeof name, "%s-%" PRId64, ct->name, ct->ordinal_start + r);
            nfree += table_get(&x.names, ct->ns, name, NULL) == BERTH_KUBE_NONE;
            r++;
        }
        ct->replicas = r;
    } else
        ct->replicas += n;
    x.want[c] = n;
    rc = expand_generate(&x, n);
    /* priorities as berth_kube_expand resolved them (idempotent for the
     * pods it already resolved) */
    if (!rc)
        rc = resolve_priorities(&x);
    expand_free(&x);
    return rc;
}
