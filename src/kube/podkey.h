/* kube/podkey.h - internal: the byte keys that group pods into classes
 * (kube/podkey.c). Two pods with equal keys are the same to every plugin
 * the key covers, so a cache keyed by it (the fast path's class columns,
 * the fit index's classes, the term counters' pod classes) may answer one
 * with the other's result.
 *
 * Thread rules: a key is built into its owner's buffer; the owner (one
 * scheduler, one index) belongs to one thread. */
#ifndef BERTH_KUBE_PODKEY_H
#define BERTH_KUBE_PODKEY_H

#include "berth/kube.h"

#include <stddef.h>
#include <string.h>

typedef struct kube_podkey {
    char **buf;  /* the owner's buffer, grown by doubling (never shrunk) */
    size_t *cap;
    size_t len;  /* bytes written */
    int oom;     /* an allocation failed: the key is void */
} kube_podkey;

static inline kube_podkey kube_podkey_start(char **buf, size_t *cap)
{
    return (kube_podkey){buf, cap, 0, 0};
}

/* kube_podkey_put past the buffer's end: grows it (kube/podkey.c). */
void kube_podkey_grow_put(kube_podkey *b, const void *p, size_t n);

/* Appends n bytes (the buffer keeps one byte beyond the key). Inline: a
 * key is a few dozen small puts, most of a constant size. */
static inline void kube_podkey_put(kube_podkey *b, const void *p, size_t n)
{
    if (b->len + n + 1 <= *b->cap) {
        memcpy(*b->buf + b->len, p, n);
        b->len += n;
    } else {
        kube_podkey_grow_put(b, p, n);
    }
}
/* Appends the pod's effective requests of the cluster's nres resources
 * (the entries after them are 0 in every pod: no resource has their index)
 * and its non-zero cpu and memory requests: a key hashes the resources the
 * cluster has, not BERTH_KUBE_MAX_RES of them. */
void kube_podkey_requests(kube_podkey *b, const berth_kpod *p, uint32_t nres);
/* Appends a string with its terminator; NULL as "\x01" (unlike ""). */
void kube_podkey_str(kube_podkey *b, const char *s);
/* Appends requirements (key, operator, values) with their count. */
void kube_podkey_reqs(kube_podkey *b, const berth_requirement *r, uint32_t n);
/* Appends what the node-side filters read of a pod apart from its node:
 * tolerations, nodeSelector, required node affinity (terms and their
 * parse verdicts). */
void kube_podkey_required_rules(kube_podkey *b, const berth_kpod *p);
/* Appends nodeSelector and required node affinity (terms and their parse
 * verdicts): the nodes a pod may run on, tolerations aside. */
void kube_podkey_required_affinity(kube_podkey *b, const berth_kpod *p);
/* Appends what the node-side filters and scores read of a pod:
 * spec.nodeName (node_name: as the scheduler reads it, kube_pod_node_name),
 * tolerations, nodeSelector and node affinity (required terms, their parse
 * verdicts, preferred terms with weights). */
void kube_podkey_node_constraints(kube_podkey *b, const berth_kpod *p, const char *node_name);

#endif
