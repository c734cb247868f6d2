/* disrupt/apply.c - changes to a disruption model over time (the
 * `disrupt simulate` timeline): a launched NodeClaim and its Node joining
 * the cluster (labels, taints and allocatable from the NodePool template
 * and the InstanceType offering, whose requirements it must satisfy: its
 * allocatable after the node overhead, less its DaemonSet pods' requests),
 * a node and its NodeClaim leaving it, a taint added, and a
 * PodDisruptionBudget's disruptionsAllowed. */
#include "berth/disrupt.h"
#include "berth/grow.h"
#include "k8s/k8s.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The disruption planner counts a pod healthy when it is Ready. */
static int pod_ready(const void *ctx, uint32_t pod)
{
    return ((const berth_disrupt *)ctx)->pod_info[pod].ready;
}

int64_t berth_pdb_disruptions_allowed(const berth_disrupt *m, uint32_t pdb)
{
    int64_t a = berth_kpdb_count_allowed(&m->kube, &m->kube.pdbs[pdb], pod_ready, m);
    return a > 0 ? a : 0; /* status.disruptionsAllowed too */
}

int berth_disrupt_claim_of(const berth_disrupt *m, const char *node_name)
{
    for (uint32_t c = 0; c < m->nclaims; c++)
        if (!strcmp(m->claims[c].node_name, node_name))
            return (int)c;
    return -1;
}

static const char *label_of(const berth_label *l, uint32_t n, const char *key)
{
    for (uint32_t i = 0; i < n; i++)
        if (!strcmp(l[i].key, key))
            return l[i].value;
    return NULL;
}

void berth_requirement_format(const berth_requirement *r, char *buf, size_t size)
{
    size_t k = 0;
    if (!size)
        return;
    buf[0] = 0;
    k += (size_t)snprintf(buf, size, "%s %s", r->key, berth_sel_op_name(r->op));
    if (r->op == BERTH_SEL_GT || r->op == BERTH_SEL_LT) {
        if (k < size && r->nvalues)
            snprintf(buf + k, size - k, " %s", r->values[0]);
        return;
    }
    if (r->op == BERTH_SEL_EXISTS || r->op == BERTH_SEL_DOESNOTEXIST)
        return;
    for (uint32_t i = 0; i < r->nvalues && k < size; i++)
        k += (size_t)snprintf(buf + k, size - k, "%s%s", i ? ", " : " [", r->values[i]);
    if (k < size)
        snprintf(buf + k, size - k, "]");
}

int berth_disrupt_template_node_why(const berth_disrupt *m, uint32_t pool, uint32_t type,
                                    uint32_t offering, const char *name, int initialized,
                                    berth_arena *a, berth_knode *out, char *why, size_t size)
{
    const berth_kcluster *k = &m->kube;
    const berth_nodepool *np = &m->pools[pool];
    const berth_instance_type *it = &m->types[type];
    const berth_offering *of = &it->offerings[offering];
    memset(out, 0, sizeof *out);
    if (why && size)
        why[0] = 0;
    uint32_t cap = 3 + BERTH_OFFERING_LABELS + it->labels.n + np->labels.n + np->nreqs;
    berth_label *l = berth_arena_alloc(a, cap * sizeof *l);
    if (!l)
        return BERTH_ENOMEM;
    uint32_t n = 0;
    l[n++] = (berth_label){"karpenter.sh/nodepool", np->name};
    l[n++] = (berth_label){"kubernetes.io/hostname", name};
    if (initialized)
        l[n++] = (berth_label){"karpenter.sh/initialized", "true"};
    berth_label ofl[BERTH_OFFERING_LABELS];
    uint32_t nof = berth_offering_labels(it, of, ofl);
    for (uint32_t i = 0; i < nof; i++)
        l[n++] = ofl[i];
    /* the instance type's labels (its name included), then the template's:
     * a template label the type defines otherwise makes the type
     * incompatible (it is an In requirement of the NodeClaim template) */
    for (uint32_t i = 0; i < it->labels.n; i++)
        if (!label_of(l, n, it->labels.items[i].key))
            l[n++] = it->labels.items[i];
    int bad = 0;
    for (uint32_t i = 0; i < np->labels.n; i++) {
        const berth_label *tl = &np->labels.items[i];
        const char *have = label_of(l, n, tl->key);
        if (!have && berth_instance_type_defines(it, tl->key)) {
            if (!bad && why)
                snprintf(why, size, "NodePool %s template label %s=%s: %s has no such label",
                         np->name, tl->key, tl->value, it->name);
            bad = 1;
        } else if (!have) {
            l[n++] = *tl;
        } else if (strcmp(have, tl->value) && strcmp(tl->key, "kubernetes.io/hostname")) {
            if (!bad && why)
                snprintf(why, size, "NodePool %s template label %s=%s, the offering has %s",
                         np->name, tl->key, tl->value, have);
            bad = 1;
        }
    }
    for (uint32_t i = 0; i < np->nreqs; i++) {
        const berth_requirement *r = &np->reqs[i];
        if (r->op == BERTH_SEL_IN && r->nvalues == 1 && !label_of(l, n, r->key) &&
            !berth_instance_type_defines(it, r->key))
            l[n++] = (berth_label){r->key, r->values[0]};
    }
    out->name = name;
    out->labels.items = l;
    out->labels.n = n;
    berth_labels_sort(&out->labels);
    out->taints = np->taints; /* startup taints are gone once initialised */
    out->ntaints = np->ntaints;
    out->alloc[BERTH_KRES_CPU] = it->cpu;
    out->alloc[BERTH_KRES_MEMORY] = it->memory;
    out->alloc[BERTH_KRES_EPHEMERAL] = INT64_MAX / 4;
    for (uint32_t r = BERTH_KRES_FIRST_EXT; r < k->nres; r++)
        if (!strcmp(k->res_names[r], "nvidia.com/gpu"))
            out->alloc[r] = it->gpus;
    out->alloc_pods = it->pods;
    k8s_daemon_reserve(k, out); /* its DaemonSet pods' share (k8s/daemons.c) */
    if (bad)
        return 1;
    /* requirements on keys the node or its instance type defines must hold
     * (Requirements.Intersects: keys nobody defines are allowed) */
    for (uint32_t i = 0; i < np->nreqs; i++) {
        const berth_requirement *r = &np->reqs[i];
        if ((berth_labels_get(&out->labels, r->key) || berth_instance_type_defines(it, r->key)) &&
            !berth_requirement_matches(r, &out->labels)) {
            if (why && size) {
                char rs[160];
                berth_requirement_format(r, rs, sizeof rs);
                const char *v = berth_labels_get(&out->labels, r->key);
                snprintf(why, size, "NodePool %s requires %s (%s)", np->name, rs,
                         v ? v : "label absent");
            }
            return 1;
        }
    }
    return 0;
}

int berth_disrupt_template_node(const berth_disrupt *m, uint32_t pool, uint32_t type,
                                uint32_t offering, const char *name, int initialized,
                                berth_arena *a, berth_knode *out)
{
    return berth_disrupt_template_node_why(m, pool, type, offering, name, initialized, a, out,
                                           NULL, 0);
}

int berth_disrupt_add_node(berth_disrupt *m, uint32_t pool, uint32_t type, uint32_t offering,
                           const char *name, int64_t created, int64_t now, uint32_t *node)
{
    berth_kcluster *k = &m->kube;
    const berth_nodepool *np = &m->pools[pool];
    const char *nm = berth_arena_strdup(&k->arena, name);
    berth_knode nd;
    if (!nm || berth_disrupt_template_node(m, pool, type, offering, nm, 1, &k->arena, &nd) < 0 ||
        berth_grow((void **)&k->nodes, &k->capnodes, k->nnodes + 1, sizeof *k->nodes, 0) ||
        berth_grow((void **)&m->node_info, &m->capnode_info, m->nnode_info + 1,
                   sizeof *m->node_info, 0) ||
        berth_grow((void **)&m->claims, &m->capclaims, m->nclaims + 1, sizeof *m->claims, 0))
        return BERTH_ENOMEM;
    k->nodes[k->nnodes] = nd;
    m->node_info[m->nnode_info] = (berth_dnode){1, 0, 0, 1};
    berth_nodeclaim *c = &m->claims[m->nclaims];
    memset(c, 0, sizeof *c);
    c->name = nm;
    c->nodepool = np->name;
    c->node_name = nm;
    c->labels = nd.labels;
    c->hash = np->hash;
    c->hash_version = BERTH_DISRUPT_HASH_VERSION;
    const berth_aksnodeclass *kc = berth_nodepool_class(m, np);
    if (kc) {
        c->class_hash = kc->hash;
        c->class_hash_version = BERTH_DISRUPT_HASH_VERSION;
    }
    c->created = created;
    c->has_created = 1;
    c->initialized = 1;
    c->initialized_at = now;
    c->has_termination_grace = np->termination_grace >= 0;
    c->termination_grace = np->termination_grace;
    *node = k->nnodes;
    k->nnodes++;
    m->nnode_info++;
    m->nclaims++;
    return 0;
}

void berth_disrupt_remove_node(berth_disrupt *m, uint32_t node)
{
    berth_kcluster *k = &m->kube;
    int c = berth_disrupt_claim_of(m, k->nodes[node].name);
    if (c >= 0) {
        memmove(&m->claims[c], &m->claims[c + 1],
                (m->nclaims - (uint32_t)c - 1) * sizeof *m->claims);
        m->nclaims--;
    }
    memmove(&k->nodes[node], &k->nodes[node + 1], (k->nnodes - node - 1) * sizeof *k->nodes);
    k->nnodes--;
    memmove(&m->node_info[node], &m->node_info[node + 1],
            (m->nnode_info - node - 1) * sizeof *m->node_info);
    m->nnode_info--;
}

int berth_disrupt_taint(berth_disrupt *m, uint32_t node, const char *key, berth_taint_effect effect)
{
    berth_knode *nd = &m->kube.nodes[node];
    for (uint32_t i = 0; i < nd->ntaints; i++)
        if (!strcmp(nd->taints[i].key, key) && nd->taints[i].effect == effect)
            return 0;
    berth_taint *t = berth_arena_alloc(&m->kube.arena, (nd->ntaints + 1) * sizeof *t);
    if (!t)
        return BERTH_ENOMEM;
    if (nd->ntaints)
        memcpy(t, nd->taints, nd->ntaints * sizeof *t);
    t[nd->ntaints] = (berth_taint){key, "", effect};
    nd->taints = t;
    nd->ntaints++;
    return 0;
}
