/* disrupt/drift.c - NodeClaim drift (SPEC 4.1): berth's stable template
 * hash of a NodePool (template labels, annotations, taints, startup
 * taints, node class, expireAfter, terminationGracePeriod; not
 * requirements, disruption, weight or limits), compared with the
 * NodeClaim's karpenter.sh/nodepool-hash annotation; requirement
 * compatibility of the NodeClaim's labels (narrowing In or requiring a key
 * it lacks drifts, widening does not); the Drifted condition as given;
 * the AKSNodeClass hash (imageFamily, vnetSubnetID, osDiskSizeGB) against
 * the NodeClaim's karpenter.azure.com/aksnodeclass-hash annotation. */
#include "disrupt/state.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#define FNV_OFFSET 14695981039346656037ull
#define FNV_PRIME 1099511628211ull

static uint64_t mix(uint64_t h, const char *s)
{
    /* length-prefixed so field boundaries cannot shift */
    size_t n = s ? strlen(s) : 0;
    for (int i = 0; i < 8; i++)
        h = (h ^ (uint8_t)(n >> (8 * i))) * FNV_PRIME;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (uint8_t)s[i]) * FNV_PRIME;
    return h;
}

static uint64_t mix_int(uint64_t h, int64_t v)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%" PRId64, v);
    return mix(h, buf);
}

static uint64_t mix_labels(uint64_t h, const char *tag, const berth_labels *l, int skip_hash)
{
    h = mix(h, tag);
    for (uint32_t i = 0; i < l->n; i++) {
        if (skip_hash && !strncmp(l->items[i].key, "karpenter.sh/nodepool-hash", 26))
            continue;
        h = mix(mix(h, l->items[i].key), l->items[i].value);
    }
    return h;
}

static uint64_t mix_taints(uint64_t h, const char *tag, const berth_taint *t, uint32_t n)
{
    h = mix(h, tag);
    for (uint32_t i = 0; i < n; i++)
        h = mix(mix(mix(h, t[i].key), t[i].value), berth_taint_effect_name(t[i].effect));
    return h;
}

void berth_nodepool_hash(const berth_nodepool *p, char out[24])
{
    uint64_t h = FNV_OFFSET;
    h = mix(h, BERTH_DISRUPT_HASH_VERSION);
    h = mix_labels(h, "labels", &p->labels, 0);
    h = mix_labels(h, "annotations", &p->annotations, 1);
    h = mix_taints(h, "taints", p->taints, p->ntaints);
    h = mix_taints(h, "startupTaints", p->startup_taints, p->nstartup_taints);
    h = mix(mix(mix(mix(h, "nodeClassRef"), p->class_group), p->class_kind), p->class_name);
    h = mix_int(mix(h, "expireAfter"), p->expire_after);
    h = mix_int(mix(h, "terminationGracePeriod"), p->termination_grace);
    snprintf(out, 24, "%" PRIu64, h);
}

void berth_aksnodeclass_hash(const berth_aksnodeclass *c, char out[24])
{
    uint64_t h = FNV_OFFSET;
    h = mix(h, BERTH_DISRUPT_HASH_VERSION);
    h = mix(mix(h, "imageFamily"), c->image_family);
    h = mix(mix(h, "vnetSubnetID"), c->vnet_subnet_id);
    h = mix_int(mix(h, "osDiskSizeGB"), c->os_disk_size_gb);
    snprintf(out, 24, "%" PRIu64, h);
}

const berth_aksnodeclass *berth_nodepool_class(const berth_disrupt *m, const berth_nodepool *p)
{
    if (!p->class_name || (p->class_kind && strcmp(p->class_kind, "AKSNodeClass")) ||
        (p->class_group && strcmp(p->class_group, "karpenter.azure.com")))
        return NULL;
    for (uint32_t i = 0; i < m->nclasses; i++)
        if (!strcmp(m->classes[i].name, p->class_name))
            return &m->classes[i];
    return NULL;
}

/* The AKSNodeClass hash, compared as the NodePool hash is: berth's own
 * unless the claim carries another hash version, then the class's own
 * annotation of that version. */
static int class_drifted(const berth_disrupt *m, const berth_nodepool *p, const berth_nodeclaim *c,
                         char *why, size_t size)
{
    const berth_aksnodeclass *k = c->class_hash ? berth_nodepool_class(m, p) : NULL;
    if (!k)
        return 0;
    if (!c->class_hash_version || !strcmp(c->class_hash_version, BERTH_DISRUPT_HASH_VERSION)) {
        if (strcmp(c->class_hash, k->hash)) {
            snprintf(why, size,
                     "AKSNodeClass %s hash %s (imageFamily %s, osDiskSizeGB %lld) differs from "
                     "the NodeClaim's %s", k->name, k->hash, k->image_family,
                     (long long)k->os_disk_size_gb, c->class_hash);
            return 1;
        }
    } else if (k->hash_annotation && k->hash_version &&
               !strcmp(k->hash_version, c->class_hash_version) &&
               strcmp(k->hash_annotation, c->class_hash)) {
        snprintf(why, size, "AKSNodeClass %s hash %s differs from the NodeClaim's %s", k->name,
                 k->hash_annotation, c->class_hash);
        return 1;
    }
    return 0;
}

static const berth_nodepool *pool_of(const berth_disrupt *m, const char *name)
{
    for (uint32_t i = 0; name && i < m->npools; i++)
        if (!strcmp(m->pools[i].name, name))
            return &m->pools[i];
    return NULL;
}

static const berth_knode *node_of(const berth_disrupt *m, const char *name)
{
    for (uint32_t i = 0; name && i < m->kube.nnodes; i++)
        if (!strcmp(m->kube.nodes[i].name, name))
            return &m->kube.nodes[i];
    return NULL;
}

int berth_nodeclaim_drifted(const berth_disrupt *m, const berth_nodeclaim *c, char *why,
                            size_t size)
{
    return disrupt_claim_drifted(m, c, node_of(m, c->node_name), why, size);
}

int disrupt_claim_drifted(const berth_disrupt *m, const berth_nodeclaim *c, const berth_knode *nd,
                          char *why, size_t size)
{
    char tmp[8];
    if (!why) {
        why = tmp;
        size = sizeof tmp;
    }
    why[0] = 0;
    if (c->drifted) {
        snprintf(why, size, "Drifted condition is True");
        return 1;
    }
    const berth_nodepool *p = pool_of(m, c->nodepool);
    if (!p)
        return 0;
    /* the template hash: berth's own unless the claim carries an upstream
     * hash version, then the NodePool's annotation of the same version */
    if (c->hash) {
        if (!c->hash_version || !strcmp(c->hash_version, BERTH_DISRUPT_HASH_VERSION)) {
            if (strcmp(c->hash, p->hash)) {
                snprintf(why, size, "NodePool template hash %s differs from the NodeClaim's %s",
                         p->hash, c->hash);
                return 1;
            }
        } else if (p->hash_annotation && p->hash_version &&
                   !strcmp(p->hash_version, c->hash_version) &&
                   strcmp(p->hash_annotation, c->hash)) {
            snprintf(why, size, "NodePool hash %s differs from the NodeClaim's %s",
                     p->hash_annotation, c->hash);
            return 1;
        }
    }
    if (class_drifted(m, p, c, why, size))
        return 1;
    /* requirements: the claim's labels (else its node's) must satisfy each */
    const berth_labels *labels = &c->labels;
    if (!c->labels.n && nd)
        labels = &nd->labels;
    /* berth: a key neither carries that the node's instance type defines
     * (the labels derived from its name, berth/instance.h) is read from the
     * type: Karpenter writes them on every NodeClaim and Node it launches,
     * so only hand-written inputs lack them */
    const char *tname = berth_labels_get(&c->labels, "node.kubernetes.io/instance-type");
    if (!tname && nd)
        tname = berth_labels_get(&nd->labels, "node.kubernetes.io/instance-type");
    int ti = berth_instance_type_find(m->types, m->ntypes, tname);
    const berth_instance_type *it = ti >= 0 ? &m->types[ti] : NULL;
    for (uint32_t i = 0; i < p->nreqs; i++) {
        const berth_requirement *r = &p->reqs[i];
        const berth_labels *l = labels;
        if (!berth_labels_get(labels, r->key) && nd && berth_labels_get(&nd->labels, r->key))
            l = &nd->labels;
        else if (!berth_labels_get(labels, r->key) && it && berth_instance_type_defines(it, r->key))
            l = &it->labels;
        if (!berth_requirement_matches(r, l)) {
            const char *v = berth_labels_get(l, r->key);
            if (v)
                snprintf(why, size, "label %s=%s no longer satisfies the NodePool requirement "
                         "%s %s", r->key, v, r->key, berth_sel_op_name(r->op));
            else
                snprintf(why, size, "NodePool requires label %s (%s), which the node lacks",
                         r->key, berth_sel_op_name(r->op));
            return 1;
        }
    }
    return 0;
}
