/* disrupt/fitcert.c - the counting certificate: whether the kube scheduler
 * is certain to place every moved pod of a question on the remaining
 * nodes, decided without scheduling (docs/ARCHITECTURE.md "Performance").
 *
 * For plain pods (no required pod (anti-)affinity, no host ports, no
 * DoNotSchedule spread, no volumes, the default profile, and labels that
 * no required anti-affinity term of any pod of the cluster selects, so
 * that InterPodAffinity cannot reject them) every filter of the default
 * profile is static (NodeUnschedulable, NodeName, TaintToleration,
 * NodeAffinity, VolumeZone) except NodeResourcesFit. Let M be the largest
 * request per resource among the moved pods and, per remaining node, slots
 * = min(free pod count, min over resources with M > 0 of free / M). A pod
 * of size <= M placed on a node lowers its slots by at most one. So when,
 * for each static class of the moved pods (same nodeSelector, required
 * node affinity, tolerations), the slots of the nodes that class passes
 * add up to at least the number of moved pods, each pod still finds a node
 * with a slot when its turn comes (fewer pods were placed before it), and
 * the scheduler places it: the question's answer is "all fit" exactly as
 * scheduling would find. Otherwise the answer is "unknown" and the caller
 * schedules. The free room is the base state's (every pod on its node,
 * terminating ones too: never more room than the session has), so the
 * certificate is used only while the what-if session is at its base.
 *
 * Work per question: O(moved pods + nodes x (resources + classes present)),
 * classes capped at CERT_MAX_CLASSES; once per plan O(pods x resources)
 * for the free room and the distinct anti-affinity selectors (capped at
 * CERT_MAX_ANTI), O(nodes) per class for its static filters and, once
 * per moved pod, O(distinct anti-affinity selectors).
 *
 * Threads (berth_dplan_options.threads > 1, 1,024 nodes or more): a class's
 * slot sum runs in chunks of 1,024 nodes on a pool of the certificate's
 * own; each chunk adds its sum to one atomic total and skips when the total
 * already covers the moved pods, so the answer (total >= moved pods) is the
 * one-thread scan's for every thread count. */
#include "disrupt/state.h"
#include "kube/podkey.h"
#include "berth/pipeline.h"
#include "berth/pool.h"
#include "berth/grow.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* nodes per chunk of the parallel scan (berth_dplan_options.threads) */
#define CERT_CHUNK 1024
#define CERT_MAX_CLASSES 64
#define CERT_MAX_ANTI 256
#define CLS_UNKNOWN 0u
#define CLS_NOT_PLAIN UINT32_MAX
#define NO_CLASS (-100)

typedef struct cert_class {
    uint32_t hash;
    size_t keyoff, keylen;
    uint8_t *pass;              /* per node: the class passes its static filters */
    uint32_t stamp;
} cert_class;

struct disrupt_cert {
    int usable;                 /* the cluster-wide conditions hold (and it is built) */
    uint32_t nres;
    int64_t *room[BERTH_KUBE_MAX_RES]; /* per node: allocatable - requested at base */
    int64_t *room_pods;
    uint8_t *off;               /* per node: receives nothing (base or question) */
    uint32_t *pod_cls;          /* per pod: class + 1, CLS_UNKNOWN, CLS_NOT_PLAIN */
    cert_class cls[CERT_MAX_CLASSES];
    uint32_t ncls, stamp;
    unsigned char *keys;        /* class keys, back to back */
    size_t nkeys, capkeys;
    char *kb;                   /* the key being built (kube/podkey.h) */
    size_t kblen, kbcap;
    int oom;
    /* the distinct selectors of the cluster's required anti-affinity terms
     * (namespaces ignored: a pod they might select is not plain) */
    const berth_selector *anti[CERT_MAX_ANTI];
    uint32_t anti_hash[CERT_MAX_ANTI];
    size_t anti_off[CERT_MAX_ANTI], anti_len[CERT_MAX_ANTI];
    uint32_t nanti;
    /* --threads: the slot sum over chunks of CERT_CHUNK nodes on a pool of
     * its own (NULL: the calling thread) */
    berth_pool *pool;
};

void disrupt_cert_free(disrupt_state *s)
{
    struct disrupt_cert *c = s->cert;
    if (!c)
        return;
    for (uint32_t r = 0; r < BERTH_KUBE_MAX_RES; r++)
        free(c->room[r]);
    free(c->room_pods);
    free(c->off);
    free(c->pod_cls);
    for (uint32_t i = 0; i < c->ncls; i++)
        free(c->cls[i].pass);
    free(c->keys);
    free(c->kb);
    berth_pool_destroy(c->pool);
    free(c);
    s->cert = NULL;
}

/* What the static filters read of a plain pod: tolerations, nodeSelector,
 * required node affinity (the writer the kube fast path keys its classes with). */
static void build_key(struct disrupt_cert *c, const berth_kpod *p)
{
    kube_podkey b = kube_podkey_start(&c->kb, &c->kbcap);
    kube_podkey_required_rules(&b, p);
    c->kblen = b.len;
    c->oom |= b.oom;
}

/* Appends the built key to c->keys; its offset, or (size_t)-1 when out of memory. */
static size_t keep_key(struct disrupt_cert *c)
{
    if (berth_grow_bytes((void **)&c->keys, &c->capkeys, c->nkeys + c->kblen, 1024))
        return (size_t)-1;
    size_t off = c->nkeys;
    memcpy(c->keys + off, c->kb, c->kblen);
    c->nkeys += c->kblen;
    return off;
}

static uint32_t hash_bytes(const void *p, size_t n)
{
    const unsigned char *b = p;
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 16777619u;
    return h;
}

/* A pod whose filters on the remaining nodes are static except
 * NodeResourcesFit under the default profile, and which the scheduler
 * places whenever a node passes them. */
static int plain(const berth_kpod *p)
{
    if (p->naff_req || p->nanti_req || p->nports || p->nclaims || p->nvol_zones || p->vol_error ||
        (p->scheduler_name && strcmp(p->scheduler_name, "default-scheduler")))
        return 0;
    for (uint32_t i = 0; i < p->nspread; i++)
        if (p->spread[i].do_not_schedule)
            return 0;
    /* an unparsable preferred term fails NodeAffinity's PreScore (the pod
     * is not placed although nodes pass) */
    for (uint32_t i = 0; i < p->npref_terms; i++)
        if (p->pref_terms[i].term.invalid)
            return 0;
    return 1;
}

static int prepare(disrupt_state *s)
{
    struct disrupt_cert *c = calloc(1, sizeof *c);
    if (!c)
        return BERTH_ENOMEM;
    s->cert = c;
    const berth_kcluster *k = &s->m->kube;
    if (k->nprofiles)
        return 0; /* never usable */
    /* the distinct anti-affinity selectors */
    for (uint32_t p = 0; p < k->npods; p++)
        for (uint32_t i = 0; i < k->pods[p].nanti_req; i++) {
            const berth_selector *sel = &k->pods[p].anti_req[i].selector;
            if (sel->nothing)
                continue; /* selects no pod */
            kube_podkey b = kube_podkey_start(&c->kb, &c->kbcap);
            kube_podkey_reqs(&b, sel->reqs, sel->n);
            c->kblen = b.len;
            c->oom |= b.oom;
            if (c->oom)
                return BERTH_ENOMEM;
            uint32_t h = hash_bytes(c->kb, c->kblen), j = 0;
            while (j < c->nanti && !(c->anti_hash[j] == h && c->anti_len[j] == c->kblen &&
                                     !memcmp(c->keys + c->anti_off[j], c->kb, c->kblen)))
                j++;
            if (j < c->nanti)
                continue;
            if (c->nanti == CERT_MAX_ANTI)
                return 0; /* too many to test per pod: never usable */
            size_t off = keep_key(c);
            if (off == (size_t)-1)
                return BERTH_ENOMEM;
            c->anti[c->nanti] = sel;
            c->anti_hash[c->nanti] = h;
            c->anti_off[c->nanti] = off;
            c->anti_len[c->nanti++] = c->kblen;
        }
    uint32_t N = s->nn;
    c->nres = k->nres;
    for (uint32_t r = 0; r < k->nres; r++)
        if (!(c->room[r] = malloc((N + 1) * sizeof *c->room[r])))
            return BERTH_ENOMEM;
    c->room_pods = malloc((N + 1) * sizeof *c->room_pods);
    c->off = malloc(N + 1);
    c->pod_cls = calloc(k->npods + 1, sizeof *c->pod_cls);
    if (!c->room_pods || !c->off || !c->pod_cls)
        return BERTH_ENOMEM;
    for (uint32_t n = 0; n < N; n++) {
        const berth_knode *nd = &k->nodes[s->n[n].node];
        for (uint32_t r = 0; r < k->nres; r++)
            c->room[r][n] = nd->alloc[r];
        c->room_pods[n] = nd->alloc_pods;
        c->off[n] = (uint8_t)(s->n[n].deleting || s->n[n].expired);
    }
    /* every pod on its node, terminating or not (the session counts fewer) */
    for (uint32_t p = 0; p < k->npods; p++) {
        uint32_t n = s->pod_node[p];
        if (n >= N)
            continue;
        for (uint32_t r = 0; r < k->nres; r++)
            c->room[r][n] -= k->pods[p].req[r];
        c->room_pods[n]--;
    }
    if (s->threads > 1 && N >= BERTH_PAR_MIN) {
        /* BERTH_EINTERNAL (no thread could start): the calling thread
         * scans alone, with the same answers */
        int rc = berth_pool_create(&c->pool, s->threads);
        if (rc == BERTH_ENOMEM)
            return rc;
    }
    c->usable = 1;
    return 0;
}

/* The class of pod p (index into c->cls), NO_CLASS when it is not plain
 * or there are too many classes, or BERTH_ENOMEM. */
static int class_of(disrupt_state *s, uint32_t p)
{
    struct disrupt_cert *c = s->cert;
    if (c->pod_cls[p] == CLS_NOT_PLAIN)
        return NO_CLASS;
    if (c->pod_cls[p] != CLS_UNKNOWN)
        return (int)(c->pod_cls[p] - 1);
    const berth_kcluster *k = &s->m->kube;
    const berth_kpod *pd = &k->pods[p];
    int ok = plain(pd);
    for (uint32_t i = 0; ok && i < c->nanti; i++)
        ok = !berth_selector_matches(c->anti[i], &pd->labels);
    if (!ok) {
        c->pod_cls[p] = CLS_NOT_PLAIN;
        return NO_CLASS;
    }
    build_key(c, pd);
    if (c->oom)
        return BERTH_ENOMEM;
    uint32_t h = hash_bytes(c->kb, c->kblen);
    for (uint32_t i = 0; i < c->ncls; i++)
        if (c->cls[i].hash == h && c->cls[i].keylen == c->kblen &&
            !memcmp(c->keys + c->cls[i].keyoff, c->kb, c->kblen)) {
            c->pod_cls[p] = i + 1;
            return (int)i;
        }
    if (c->ncls == CERT_MAX_CLASSES)
        return NO_CLASS; /* not cached: a later question may find room again */
    cert_class *x = &c->cls[c->ncls];
    size_t off = keep_key(c);
    if (off == (size_t)-1 || !(x->pass = malloc(s->nn + 1)))
        return BERTH_ENOMEM;
    x->hash = h;
    x->keyoff = off;
    x->keylen = c->kblen;
    x->stamp = 0;
    /* the static filters (NodeUnschedulable taken as failing even for a
     * pod that tolerates it: never more nodes than the scheduler has) */
    for (uint32_t n = 0; n < s->nn; n++) {
        const berth_knode *nd = &k->nodes[s->n[n].node];
        x->pass[n] = (uint8_t)(!nd->unschedulable &&
                               !berth_taints_first_untolerated(nd->taints, nd->ntaints, pd->tols,
                                                               pd->ntols, BERTH_EFFECT_MASK_HARD) &&
                               berth_kube_node_affinity_matches(pd, nd));
    }
    c->pod_cls[p] = ++c->ncls;
    return (int)(c->ncls - 1);
}

/* One class's slot sum over nodes (see the top of the file). */
typedef struct cert_scan {
    const struct disrupt_cert *c;
    const uint8_t *pass;
    const int64_t *M;
    uint32_t nn;
    uint64_t nmove;
    _Atomic uint64_t total;     /* the chunks' sums (pool runs) */
} cert_scan;

/* The slots of nodes [lo, hi) for the class, stopping once they cover
 * j->nmove. */
static uint64_t slot_sum(const cert_scan *j, uint32_t lo, uint32_t hi)
{
    const struct disrupt_cert *c = j->c;
    uint64_t sum = 0;
    for (uint32_t n = lo; n < hi && sum < j->nmove; n++) {
        if (c->off[n] || !j->pass[n] || c->room_pods[n] <= 0)
            continue;
        int64_t slots = c->room_pods[n];
        for (uint32_t r = 0; r < c->nres && slots > 0; r++)
            if (j->M[r] > 0) {
                int64_t f = c->room[r][n] < 0 ? 0 : c->room[r][n] / j->M[r];
                if (f < slots)
                    slots = f;
            }
        sum += (uint64_t)slots;
    }
    return sum;
}

static void cert_chunk(void *ctx, uint32_t k)
{
    cert_scan *j = ctx;
    if (atomic_load_explicit(&j->total, memory_order_relaxed) >= j->nmove)
        return;
    uint32_t lo = k * CERT_CHUNK, hi = j->nn - lo < CERT_CHUNK ? j->nn : lo + CERT_CHUNK;
    atomic_fetch_add_explicit(&j->total, slot_sum(j, lo, hi), memory_order_relaxed);
}

int disrupt_cert_all_fit(disrupt_state *s, const uint32_t *cands, uint32_t nc,
                         const uint32_t *moving, uint32_t nmove)
{
    if (!s->cert) {
        int rc = prepare(s);
        if (rc)
            return rc;
    }
    struct disrupt_cert *c = s->cert;
    if (!c->usable)
        return 0;
    if (!nmove)
        return 1;
    const berth_kcluster *k = &s->m->kube;
    int64_t M[BERTH_KUBE_MAX_RES] = {0};
    uint32_t stamp = ++c->stamp;
    for (uint32_t i = 0; i < nmove; i++) {
        int x = class_of(s, moving[i]);
        if (x == NO_CLASS)
            return 0;
        if (x < 0)
            return x;
        c->cls[x].stamp = stamp;
        const int64_t *q = k->pods[moving[i]].req;
        for (uint32_t r = 0; r < c->nres; r++)
            if (q[r] > M[r])
                M[r] = q[r];
    }
    for (uint32_t i = 0; i < nc; i++)
        c->off[cands[i]] |= 2;
    int all = 1;
    uint32_t nch = (s->nn + CERT_CHUNK - 1) / CERT_CHUNK;
    for (uint32_t x = 0; x < c->ncls && all; x++) {
        if (c->cls[x].stamp != stamp)
            continue;
        cert_scan j = {.c = c, .pass = c->cls[x].pass, .M = M, .nn = s->nn, .nmove = nmove};
        atomic_init(&j.total, 0);
        if (c->pool && nch > 1) {
            /* chunks add their sums to one total and skip once it covers
             * the moved pods: which chunks ran varies, whether the total
             * reaches nmove does not (it only grows, and a chunk skips
             * only once it has) */
            berth_pool_run(c->pool, nch, cert_chunk, &j);
            all = atomic_load_explicit(&j.total, memory_order_relaxed) >= nmove;
        } else {
            all = slot_sum(&j, 0, s->nn) >= nmove;
        }
    }
    for (uint32_t i = 0; i < nc; i++)
        c->off[cands[i]] &= 1;
    return all;
}
