/* autoscale/timeline.c - `berth autoscale simulate`: the autoscaler over
 * time (SPEC 5). Every step (Ocean evaluates every minute) applies the
 * events due, registers the nodes whose launch delay has passed,
 * terminates the nodes whose drain ended, runs one autoscaler pass
 * (berth_autoscale_plan) and applies it: pods the scheduler puts on
 * existing nodes are bound; new nodes join as launching (cordoned) and
 * register after the launch delay, their pods waiting for them; scaled-down
 * nodes are cordoned, their pods move where the pass put them, and the node
 * is terminated when its pods' grace periods end, at the latest after the
 * drain timeout. The pass's replacements (but spot interruptions, which
 * the timeline's own event does) launch their new node like a scale-up
 * node; once it has registered the old node drains like a scaled-down one
 * (its PodDisruptionBudgets permitting), its pods pending for this step's
 * pass. This file owns the model's mutation over time (nodes
 * added, cordoned and removed, pods bound and unbound, prices) and the
 * accounting (nodes, cost per hour, pending pods and pending time).
 * Linear per step: nodes are found by name through a keyed index, a
 * PodLeave's pod through its pair's list (index_leaves), each
 * node keeps the list of the pods bound to it (a drain, a removal and a
 * PDB check read the node's pods, not every pod), and the nodes a step
 * removes close up the tables in one pass. */
#include "autoscale/state.h"

#include "berth/grow.h"
#include "berth/nameidx.h"
#include "k8s/k8s.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_STEPS 100000
#define REGISTERED INT64_MIN
#define PDB_UNKNOWN INT64_MIN

enum { P_LATER, P_PENDING, P_WAITING, P_BOUND, P_GONE };

typedef struct sim {
    berth_autoscale *m;
    const berth_atimeline *t;
    const berth_asim_options *o;
    berth_asim_result *r;
    uint8_t *ps;                  /* per pod: P_* */
    int64_t *since;               /* per pod: pending since */
    int64_t *wait_until;          /* per pod (P_WAITING): its node registers then */
    int64_t *ready_at;            /* per node: registers then (REGISTERED: it has) */
    int64_t *end_at;              /* per node: terminated then (INT64_MAX: not draining) */
    const char **replaces;        /* per node: the node it was launched to replace, until
                                   * that one drains; NULL: none */
    uint8_t *replaced;            /* per node: a replacement for it was launched */
    uint32_t *head;               /* per node: the first pod bound to it (NONE: none) */
    uint8_t *gone;                /* per node, while nodes are removed: 1 when it goes */
    int64_t *pdb_spent;           /* per PDB: evictions of replacement drains this step */
    int64_t *pdb_allowed;         /* per PDB: its allowance this step (PDB_UNKNOWN: not
                                   * counted yet; a count reads every pod) */
    uint32_t capnodes;
    /* per pod: the node it is bound to (P_BOUND pods only; NONE otherwise)
     * and its neighbours in that node's list */
    uint32_t *pod_node, *pnext, *pprev;
    berth_nameidx names;          /* node name -> index (the first of equal names) */
    uint64_t serial;              /* names of launched nodes */
    berth_error *e;
    /* PodLeave targets: the events' distinct namespace/name pairs (keys
     * capacity_pod_key, back to back in ltext), per event its pair, per
     * pair its pods in pod order (lpods[loff[k] .. loff[k + 1])) and the
     * first of them not gone for good (lcur[k]) */
    berth_nameidx lkeys;
    char *ltext;
    uint32_t *lev, *loff, *lpods, *lcur;
} sim;

static int grow_node_tables(sim *s, uint32_t need)
{
    berth_autoscale *m = s->m;
    uint32_t c1 = s->capnodes, c2 = s->capnodes, c3 = s->capnodes, c4 = s->capnodes;
    uint32_t c5 = s->capnodes, c6 = s->capnodes;
    if (berth_grow((void **)&s->ready_at, &c1, need, sizeof *s->ready_at, 0) ||
        berth_grow((void **)&s->end_at, &c2, need, sizeof *s->end_at, 0) ||
        berth_grow((void **)&s->replaces, &c3, need, sizeof *s->replaces, 0) ||
        berth_grow((void **)&s->replaced, &c4, need, sizeof *s->replaced, 0) ||
        berth_grow((void **)&s->head, &c5, need, sizeof *s->head, 0) ||
        berth_grow((void **)&s->gone, &c6, need, sizeof *s->gone, 0) ||
        berth_grow((void **)&m->kube.nodes, &m->kube.capnodes, need, sizeof *m->kube.nodes, 0) ||
        berth_grow((void **)&m->node_info, &m->capnode_info, need, sizeof *m->node_info, 0))
        return BERTH_ENOMEM;
    s->capnodes = c1;
    return 0;
}

static uint32_t node_by_name(const sim *s, const char *name)
{
    uint32_t i = berth_nameidx_find(&s->names, name);
    return i < s->m->kube.nnodes ? i : BERTH_KUBE_NONE;
}

/* The name index over nodes[0..nnodes), built anew (after nodes closed
 * up), the first of equal names kept as a scan in index order finds it.
 * 0 or BERTH_ENOMEM. */
static int index_names(sim *s)
{
    const berth_kcluster *k = &s->m->kube;
    berth_nameidx_free(&s->names);
    if (berth_nameidx_reserve(&s->names, k->nnodes))
        return BERTH_ENOMEM;
    for (uint32_t i = 0; i < k->nnodes; i++)
        if (berth_nameidx_add(&s->names, k->nodes[i].name, i, NULL) < 0)
            return BERTH_ENOMEM;
    return 0;
}

/* ---- the pods bound to each node: a list through the pods ---- */

static void link_pod(sim *s, uint32_t pod, uint32_t node)
{
    uint32_t h = s->head[node];
    s->pod_node[pod] = node;
    s->pprev[pod] = BERTH_KUBE_NONE;
    s->pnext[pod] = h;
    if (h != BERTH_KUBE_NONE)
        s->pprev[h] = pod;
    s->head[node] = pod;
}

static void unlink_pod(sim *s, uint32_t pod)
{
    uint32_t n = s->pod_node[pod];
    if (n == BERTH_KUBE_NONE)
        return;
    uint32_t a = s->pprev[pod], b = s->pnext[pod];
    if (a != BERTH_KUBE_NONE)
        s->pnext[a] = b;
    else
        s->head[n] = b;
    if (b != BERTH_KUBE_NONE)
        s->pprev[b] = a;
    s->pod_node[pod] = BERTH_KUBE_NONE;
}

/* Node i's price per hour: its offering (type, zone, capacity type), 0
 * when unknown. */
static double node_price(const berth_autoscale *m, uint32_t i)
{
    const berth_labels *l = &m->kube.nodes[i].labels;
    int t = berth_instance_type_find(m->types, m->ntypes,
                                     berth_labels_get(l, "node.kubernetes.io/instance-type"));
    const char *zone = berth_labels_get(l, "topology.kubernetes.io/zone");
    const char *ct = berth_labels_get(l, "karpenter.sh/capacity-type");
    if (t < 0 || !zone)
        return 0;
    int c = ct ? berth_capacity_type_parse(ct) : -1;
    if (c < 0) {
        const char *lc = berth_labels_get(l, "spotinst.io/node-lifecycle");
        c = lc && !strcmp(lc, "spot") ? BERTH_CT_SPOT : BERTH_CT_ON_DEMAND;
    }
    const berth_offering *of = berth_instance_offering(&m->types[t], zone, (berth_capacity_type)c);
    return of ? of->price : 0;
}

static void pending_done(sim *s, uint32_t pod, int64_t now)
{
    double w = (double)(now - s->since[pod]);
    if (w < 0)
        w = 0;
    s->r->pending_seconds += w;
    if (w > s->r->max_pending_seconds)
        s->r->max_pending_seconds = w;
}

static void bind(sim *s, uint32_t pod, uint32_t node, int64_t now)
{
    if (s->ps[pod] == P_PENDING || s->ps[pod] == P_WAITING)
        pending_done(s, pod, now);
    s->ps[pod] = P_BOUND;
    unlink_pod(s, pod);
    link_pod(s, pod, node);
    s->m->kube.pods[pod].node_name = s->m->kube.nodes[node].name;
    s->m->kube.pods[pod].terminating = 0;
}

/* Pod leaves its node and waits for another (a DaemonSet pod goes with
 * its node). */
static void unbind(sim *s, uint32_t pod, int64_t now)
{
    berth_kpod *p = &s->m->kube.pods[pod];
    p->node_name = NULL;
    unlink_pod(s, pod);
    if (s->m->pod_info[pod].daemon || s->m->pod_info[pod].mirror) {
        s->ps[pod] = P_GONE;
        p->terminating = 1;
        return;
    }
    s->ps[pod] = P_PENDING;
    s->since[pod] = now;
}

/* Removes the nodes marked gone (the mark is cleared): their pods look for
 * another node, each replacement among them frees its old node to be
 * replaced again, and the tables close up in one pass, the kept nodes in
 * their order. 0 or BERTH_ENOMEM (the name index). */
static int remove_nodes(sim *s, int64_t now)
{
    berth_autoscale *m = s->m;
    uint32_t N = m->kube.nnodes, j = 0;
    for (uint32_t i = 0; i < N; i++) {
        if (!s->gone[i])
            continue;
        while (s->head[i] != BERTH_KUBE_NONE)
            unbind(s, s->head[i], now);
        if (s->replaces[i]) {
            /* a replacement gone before its old node drained: that one may
             * be replaced again (unless it goes too) */
            uint32_t old = node_by_name(s, s->replaces[i]);
            if (old != BERTH_KUBE_NONE && !s->gone[old])
                s->replaced[old] = 0;
        }
        s->r->terminated++;
    }
    for (uint32_t i = 0; i < N; i++) {
        if (s->gone[i]) {
            s->gone[i] = 0;
            continue;
        }
        if (i != j) {
            m->kube.nodes[j] = m->kube.nodes[i];
            m->node_info[j] = m->node_info[i];
            s->ready_at[j] = s->ready_at[i];
            s->end_at[j] = s->end_at[i];
            s->replaces[j] = s->replaces[i];
            s->replaced[j] = s->replaced[i];
            s->head[j] = s->head[i];
            for (uint32_t p = s->head[j]; p != BERTH_KUBE_NONE; p = s->pnext[p])
                s->pod_node[p] = j;
        }
        j++;
    }
    m->kube.nnodes = j;
    m->nnode_info = j;
    return j == N ? 0 : index_names(s);
}

/* The PodLeave targets (sim's comment): the pod table is fixed for the
 * run, a pod gone (P_GONE) never comes back, so an event reads its pair's
 * pods from the cursor on: O(pods + events) in all, where a scan of the
 * pods per event was O(pods x events). */
static int index_leaves(sim *s)
{
    const berth_atimeline *t = s->t;
    const berth_kcluster *k = &s->m->kube;
    size_t total = 1;
    uint32_t nleave = 0;
    for (uint32_t i = 0; i < t->nev; i++)
        if (t->ev[i].type == BERTH_AEV_POD_LEAVE) {
            total += capacity_pod_key_len(t->ev[i].pod_ns, t->ev[i].pod_name) + 1;
            nleave++;
        }
    if (!nleave)
        return 0;
    s->lev = malloc(((size_t)t->nev + 1) * sizeof *s->lev);
    s->ltext = malloc(total);
    if (!s->lev || !s->ltext || berth_nameidx_reserve(&s->lkeys, nleave))
        return BERTH_ENOMEM;
    char *at = s->ltext;
    uint32_t nk = 0;
    for (uint32_t i = 0; i < t->nev; i++) {
        if (t->ev[i].type != BERTH_AEV_POD_LEAVE)
            continue;
        char *key = at, *end = capacity_pod_key(at, t->ev[i].pod_ns, t->ev[i].pod_name);
        uint32_t had;
        int r = berth_nameidx_add(&s->lkeys, key, nk, &had);
        if (r < 0)
            return BERTH_ENOMEM;
        s->lev[i] = r ? had : nk++;
        if (!r)
            at = end + 1; /* a new pair keeps its text */
    }
    /* each pod's pair (one key built per pod in q), counted, then listed */
    uint32_t *pk = malloc(((size_t)k->npods + 1) * sizeof *pk);
    s->loff = calloc((size_t)nk + 2, sizeof *s->loff);
    s->lcur = malloc(((size_t)nk + 1) * sizeof *s->lcur);
    char *q = NULL;
    size_t capq = 0;
    int rc = pk && s->loff && s->lcur ? 0 : BERTH_ENOMEM;
    uint32_t nl = 0;
    for (uint32_t p = 0; !rc && p < k->npods; p++) {
        const berth_kpod *kp = &k->pods[p];
        if (berth_grow_bytes((void **)&q, &capq, capacity_pod_key_len(kp->ns, kp->name) + 1,
                             256)) {
            rc = BERTH_ENOMEM;
            break;
        }
        capacity_pod_key(q, kp->ns, kp->name);
        pk[p] = berth_nameidx_find(&s->lkeys, q);
        if (pk[p] != BERTH_NAMEIDX_NONE) {
            s->loff[pk[p] + 1]++;
            nl++;
        }
    }
    free(q);
    if (!rc && !(s->lpods = malloc(((size_t)nl + 1) * sizeof *s->lpods)))
        rc = BERTH_ENOMEM;
    for (uint32_t j = 0; !rc && j < nk; j++) {
        s->loff[j + 1] += s->loff[j];
        s->lcur[j] = s->loff[j];
    }
    for (uint32_t p = 0; !rc && p < k->npods; p++)
        if (pk[p] != BERTH_NAMEIDX_NONE)
            s->lpods[s->lcur[pk[p]]++] = p;
    for (uint32_t j = 0; !rc && j < nk; j++)
        s->lcur[j] = s->loff[j];
    free(pk);
    return rc;
}

static int note(sim *s, const char *fmt, const char *a)
{
    char buf[300];
    snprintf(buf, sizeof buf, fmt, a);
    const char *x = berth_arena_strdup(&s->r->arena, buf);
    if (!x)
        return BERTH_ENOMEM;
    s->r->notes[s->r->nevents - 1] = x;
    return 0;
}

static int apply_event(sim *s, uint32_t ei, int64_t now)
{
    berth_autoscale *m = s->m;
    const berth_aevent *ev = &s->t->ev[ei];
    berth_asim_result *r = s->r;
    if (berth_grow((void **)&r->events, &r->capevents, r->nevents + 1, sizeof *r->events, 0))
        return BERTH_ENOMEM;
    uint32_t cap = r->capevents;
    const char **nn = realloc(r->notes, cap * sizeof *nn);
    if (!nn)
        return BERTH_ENOMEM;
    r->notes = nn;
    r->events[r->nevents] = ei;
    r->notes[r->nevents++] = NULL;
    switch (ev->type) {
    case BERTH_AEV_POD_ARRIVE:
        for (uint32_t p = ev->first_pod; p < ev->first_pod + ev->npods; p++) {
            s->ps[p] = P_PENDING;
            s->since[p] = ev->at;
            m->kube.pods[p].terminating = 0;
        }
        return 0;
    case BERTH_AEV_POD_LEAVE: {
        /* the first pod of the pair, in pod order, that has arrived and is
         * not gone (the ones gone for good are passed once) */
        uint32_t k = s->lev[ei], end = s->loff[k + 1];
        while (s->lcur[k] < end && s->ps[s->lpods[s->lcur[k]]] == P_GONE)
            s->lcur[k]++;
        for (uint32_t i = s->lcur[k]; i < end; i++) {
            uint32_t p = s->lpods[i];
            if (s->ps[p] == P_LATER || s->ps[p] == P_GONE)
                continue;
            if (s->ps[p] == P_PENDING || s->ps[p] == P_WAITING)
                pending_done(s, p, now);
            s->ps[p] = P_GONE;
            unlink_pod(s, p);
            m->kube.pods[p].node_name = NULL;
            m->kube.pods[p].terminating = 1;
            return 0;
        }
        return note(s, "no pod %s is running or pending", ev->what);
    }
    case BERTH_AEV_SPOT_INTERRUPTION: {
        uint32_t n = node_by_name(s, ev->node);
        if (n == BERTH_KUBE_NONE)
            return note(s, "no node %s", ev->node);
        /* its waiting pods wait again for another node (a node that has
         * registered has none: no scan of the pods then) */
        for (uint32_t p = 0; s->ready_at[n] != REGISTERED && p < m->kube.npods; p++)
            if (s->ps[p] == P_WAITING && s->wait_until[p] == s->ready_at[n]) {
                s->ps[p] = P_PENDING;
                m->kube.pods[p].terminating = 0;
            }
        s->gone[n] = 1;
        return remove_nodes(s, now);
    }
    case BERTH_AEV_PRICE_CHANGE: {
        berth_instance_type *it = &m->types[ev->itype];
        for (uint32_t o = 0; o < it->nofferings; o++)
            if (it->offerings[o].capacity_type == ev->ct &&
                !strcmp(it->offerings[o].zone, ev->zone)) {
                it->offerings[o].price = ev->price;
                if (ev->available >= 0)
                    it->offerings[o].available = ev->available;
            }
        return 0;
    }
    }
    return 0;
}

/* Adds a launching node of group g, type t, zone, capacity type ct
 * (cordoned until it registers); its index in *out. */
static int launch(sim *s, uint32_t g, uint32_t t, const char *zone, berth_capacity_type ct,
                  int64_t now, uint32_t *out)
{
    berth_autoscale *m = s->m;
    if (grow_node_tables(s, m->kube.nnodes + 1))
        return BERTH_ENOMEM;
    const berth_vng *v = &m->vngs[g];
    const berth_instance_type *it = &m->types[t];
    char name[200];
    snprintf(name, sizeof name, "%s-n%llu", v->name, (unsigned long long)++s->serial);
    const char *nm = berth_arena_strdup(&m->kube.arena, name);
    berth_label *buf =
        berth_arena_alloc(&m->kube.arena, capacity_template_label_cap(m, g, t) * sizeof *buf);
    if (!nm || !buf)
        return BERTH_ENOMEM;
    uint32_t i = m->kube.nnodes;
    if (berth_nameidx_add(&s->names, nm, i, NULL) < 0)
        return BERTH_ENOMEM;
    m->kube.nnodes++;
    m->nnode_info++;
    berth_knode *n = &m->kube.nodes[i];
    memset(n, 0, sizeof *n);
    memset(&m->node_info[i], 0, sizeof m->node_info[i]);
    n->name = nm;
    n->labels = capacity_template_labels(m, g, t, zone, (int)ct, nm, buf);
    n->taints = v->taints;
    n->ntaints = v->ntaints;
    n->alloc[BERTH_KRES_CPU] = it->cpu;
    n->alloc[BERTH_KRES_MEMORY] = it->memory;
    n->alloc[BERTH_KRES_EPHEMERAL] = INT64_MAX / 4;
    uint32_t gpu = berth_kube_resource(&m->kube, "nvidia.com/gpu", 0);
    if (gpu != BERTH_KUBE_NONE)
        n->alloc[gpu] = it->gpus;
    n->alloc_pods = it->pods;
    k8s_daemon_reserve(&m->kube, n); /* its DaemonSet pods' share (k8s/daemons.c) */
    n->any_region = 1; /* VolumeZone: in the cluster's region (docs/autoscale.md) */
    n->unschedulable = 1;
    s->ready_at[i] = now + s->o->launch_delay;
    s->end_at[i] = INT64_MAX;
    s->replaces[i] = NULL;
    s->replaced[i] = 0;
    s->head[i] = BERTH_KUBE_NONE;
    s->r->launched++;
    *out = i;
    return 0;
}

static int movable(const sim *s, uint32_t pod)
{
    return capacity_movable(s->m, pod);
}

/* Drains node: the pods of moves go where the pass put them, movable pods
 * still on it are evicted (pending for this step's pass); the node is
 * cordoned and terminated once the largest grace period of those pods has
 * run, at the latest after the drain timeout. */
static void drain(sim *s, uint32_t node, const berth_amove *moves, uint32_t nmoves, int64_t now)
{
    berth_autoscale *m = s->m;
    int64_t grace = 0;
    for (uint32_t k = 0; k < nmoves; k++) {
        uint32_t pod = moves[k].pod;
        grace = s->t->grace[pod] > grace ? s->t->grace[pod] : grace;
        bind(s, pod, moves[k].node, now);
    }
    for (uint32_t p = s->head[node], next; p != BERTH_KUBE_NONE; p = next) {
        next = s->pnext[p]; /* read before unbind takes p off the list */
        if (movable(s, p)) {
            grace = s->t->grace[p] > grace ? s->t->grace[p] : grace;
            unbind(s, p, now);
        }
    }
    m->kube.nodes[node].unschedulable = 1;
    s->end_at[node] = now + (grace < s->o->drain_timeout ? grace : s->o->drain_timeout);
}

/* Whether the PodDisruptionBudgets of node's pods allow evicting them all
 * (as the pass's scale-down: every matching pod taken as healthy), the
 * evictions of this step's earlier replacement drains spent; spends them. */
static int pdbs_allow(sim *s, uint32_t node)
{
    const berth_kcluster *k = &s->m->kube;
    for (uint32_t b = 0; b < k->npdbs; b++) {
        int64_t need = 0;
        for (uint32_t p = s->head[node]; p != BERTH_KUBE_NONE; p = s->pnext[p])
            need += movable(s, p) && berth_kpdb_matches(&k->pdbs[b], &k->pods[p]);
        if (!need)
            continue;
        if (s->pdb_allowed[b] == PDB_UNKNOWN)
            s->pdb_allowed[b] = capacity_pdb_allowed(k, &k->pdbs[b]);
        if (need > s->pdb_allowed[b] - s->pdb_spent[b])
            return 0;
    }
    for (uint32_t b = 0; b < k->npdbs; b++)
        for (uint32_t p = s->head[node]; p != BERTH_KUBE_NONE; p = s->pnext[p])
            s->pdb_spent[b] += movable(s, p) && berth_kpdb_matches(&k->pdbs[b], &k->pods[p]);
    return 1;
}

/* Replacement nodes that have registered: their old node drains (when its
 * PDBs allow it; else at a later step). A PDB's allowance is counted once
 * per step, when a drain first needs it (a count per drain read every pod
 * per replaced node: quadratic): these drains move no pod and only evict
 * movable ones, which stay pods of the cluster (pending), so no pod's
 * deletion mark, and no allowance, changes during the loop. */
static void drain_replaced(sim *s, int64_t now)
{
    berth_autoscale *m = s->m;
    memset(s->pdb_spent, 0, (m->kube.npdbs + 1) * sizeof *s->pdb_spent);
    for (uint32_t b = 0; b < m->kube.npdbs; b++)
        s->pdb_allowed[b] = PDB_UNKNOWN;
    for (uint32_t i = 0; i < m->kube.nnodes; i++) {
        if (!s->replaces[i] || s->ready_at[i] != REGISTERED)
            continue;
        uint32_t old = node_by_name(s, s->replaces[i]);
        if (old != BERTH_KUBE_NONE && s->end_at[old] == INT64_MAX) {
            if (!pdbs_allow(s, old))
                continue; /* try again next step */
            drain(s, old, NULL, 0, now);
        }
        s->replaces[i] = NULL;
    }
}

/* Starts replacement x of the pass: launches its new node, unless the old
 * node is launching, draining or already being replaced. */
static int start_replace(sim *s, const berth_areplace *x, int64_t now)
{
    uint32_t old = x->node;
    if (x->reason == BERTH_REPLACE_SPOT_INTERRUPTION || s->ready_at[old] != REGISTERED ||
        s->end_at[old] != INT64_MAX || s->replaced[old])
        return 0;
    berth_asim_result *r = s->r;
    if (berth_grow((void **)&r->reps, &r->capreps, r->nreps + 1, sizeof *r->reps, 0))
        return BERTH_ENOMEM;
    uint32_t nn = 0;
    if (launch(s, x->vng, x->type, x->zone, x->capacity_type, now, &nn))
        return BERTH_ENOMEM;
    const berth_knode *kn = s->m->kube.nodes;
    s->replaced[old] = 1;
    s->replaces[nn] = kn[old].name;
    r->reps[r->nreps++] = (berth_asim_replace){now, x->reason, kn[old].name, kn[nn].name,
                                               s->m->types[x->type].name, x->capacity_type,
                                               x->zone};
    return 0;
}

static int apply_plan(sim *s, const berth_aplan *p, int64_t now)
{
    berth_autoscale *m = s->m;
    for (uint32_t i = 0; i < p->non_existing; i++)
        bind(s, p->on_existing[i], p->on_existing_node[i], now);
    /* scale-down first: plan node indices are those of this pass */
    for (uint32_t d = 0; d < p->ndown; d++) {
        const berth_ascaledown *x = &p->down[d];
        if (s->ready_at[x->node] != REGISTERED || s->end_at[x->node] != INT64_MAX ||
            s->replaces[x->node])
            continue; /* launching, already draining, or a replacement whose node is to drain */
        drain(s, x->node, x->moves, x->nmoves, now);
    }
    /* replacements, by the pass's node indices too (launches only append) */
    for (uint32_t k = 0; k < p->nrep; k++)
        if (start_replace(s, &p->rep[k], now))
            return BERTH_ENOMEM;
    for (uint32_t u = 0; u < p->nup; u++) {
        const berth_ascaleup *x = &p->up[u];
        uint32_t nn = 0;
        for (uint32_t k = 0; k < x->count; k++)
            if (launch(s, x->vng, x->type, x->zone, x->capacity_type, now, &nn))
                return BERTH_ENOMEM;
        for (uint32_t k = 0; k < x->npods; k++) {
            unlink_pod(s, x->pods[k]); /* a pending pod: on no list (kept in step) */
            s->ps[x->pods[k]] = P_WAITING;
            s->wait_until[x->pods[k]] = now + s->o->launch_delay;
            m->kube.pods[x->pods[k]].terminating = 1; /* not pending for the next passes */
        }
    }
    return 0;
}

static int run(sim *s)
{
    berth_autoscale *m = s->m;
    const berth_asim_options *o = s->o;
    berth_asim_result *r = s->r;
    uint32_t next = 0;
    int rc = 0;
    for (int64_t now = o->from; now <= o->to && !rc; now += o->step) {
        if (berth_cancel_expired(o->cancel))
            return berth_error_set(s->e, BERTH_ETIMEDOUT, "stopped at the deadline");
        if (berth_grow((void **)&r->steps, &r->capsteps, r->nsteps + 1, sizeof *r->steps,
                       MAX_STEPS))
            return BERTH_ENOMEM;
        berth_asim_step *st = &r->steps[r->nsteps];
        memset(st, 0, sizeof *st);
        st->at = now;
        st->ev0 = r->nevents;
        st->rep0 = r->nreps;
        uint32_t launched0 = r->launched, term0 = r->terminated;
        while (next < s->t->nev && s->t->ev[next].at <= now && !rc)
            rc = apply_event(s, next++, now);
        st->nev = r->nevents - st->ev0;
        /* registrations, then the waiting pods look again (their node is there) */
        for (uint32_t i = 0; i < m->kube.nnodes; i++)
            if (s->ready_at[i] != REGISTERED && s->ready_at[i] <= now) {
                s->ready_at[i] = REGISTERED;
                m->kube.nodes[i].unschedulable = 0;
            }
        drain_replaced(s, now);
        for (uint32_t p = 0; p < m->kube.npods; p++)
            if (s->ps[p] == P_WAITING && s->wait_until[p] <= now) {
                s->ps[p] = P_PENDING;
                m->kube.pods[p].terminating = 0;
            }
        for (uint32_t i = 0; i < m->kube.nnodes; i++)
            s->gone[i] = s->end_at[i] <= now;
        if (!rc)
            rc = remove_nodes(s, now);
        if (rc)
            break;
        berth_aplan p;
        berth_aplan_options po = {0};
        po.now = now;
        po.reference = o->reference;
        po.cancel = o->cancel;
        po.threads = o->threads;
        if ((rc = berth_autoscale_plan(m, &po, &p, s->e)))
            return rc;
        rc = apply_plan(s, &p, now);
        berth_aplan_free(&p);
        st->nodes = m->kube.nnodes;
        for (uint32_t i = 0; i < m->kube.nnodes; i++)
            st->cost_per_hour += node_price(m, i);
        for (uint32_t q = 0; q < m->kube.npods; q++)
            st->pending += s->ps[q] == P_PENDING || s->ps[q] == P_WAITING;
        st->launched = r->launched - launched0;
        st->terminated = r->terminated - term0;
        st->nrep = r->nreps - st->rep0;
        int64_t span = o->to - now < o->step ? o->to - now : o->step;
        r->total_cost += st->cost_per_hour * (double)span / 3600.0;
        if (!r->nsteps || st->nodes < r->nodes_min)
            r->nodes_min = st->nodes;
        if (st->nodes > r->nodes_max)
            r->nodes_max = st->nodes;
        r->nsteps++;
    }
    /* pods still waiting at the end count until then */
    for (uint32_t q = 0; !rc && q < m->kube.npods; q++)
        if (s->ps[q] == P_PENDING || s->ps[q] == P_WAITING)
            pending_done(s, q, o->to);
    return rc;
}

int berth_autoscale_simulate(berth_autoscale *m, const berth_atimeline *t,
                             const berth_asim_options *o, berth_asim_result *out, berth_error *e)
{
    memset(out, 0, sizeof *out);
    berth_arena_init(&out->arena, 0);
    if (o->step <= 0)
        return berth_error_set(e, BERTH_EINVAL, "--step must be positive");
    if (o->to < o->from)
        return berth_error_set(e, BERTH_EINVAL, "--to is before --from");
    if ((o->to - o->from) / o->step >= MAX_STEPS)
        return berth_error_set(e, BERTH_EINVAL, "more than %d steps from --from to --to",
                               MAX_STEPS);
    if (o->drain_timeout < 300)
        return berth_error_set(e, BERTH_EINVAL, "--drain-timeout must be at least 300s");
    if (o->launch_delay < 0)
        return berth_error_set(e, BERTH_EINVAL, "--launch-delay must not be negative");
    if (t->ngrace != m->kube.npods || t->nlater != m->kube.npods)
        return berth_error_set(e, BERTH_EINTERNAL, "timeline pod tables disagree with the model");
    sim s;
    memset(&s, 0, sizeof s);
    s.m = m;
    s.t = t;
    s.o = o;
    s.r = out;
    s.e = e;
    uint32_t np = m->kube.npods;
    s.ps = malloc(np + 1);
    s.since = calloc(np + 1, sizeof *s.since);
    s.wait_until = calloc(np + 1, sizeof *s.wait_until);
    s.pdb_spent = calloc(m->kube.npdbs + 1, sizeof *s.pdb_spent);
    s.pdb_allowed = calloc(m->kube.npdbs + 1, sizeof *s.pdb_allowed);
    s.pod_node = malloc((np + 1) * sizeof *s.pod_node);
    s.pnext = malloc((np + 1) * sizeof *s.pnext);
    s.pprev = malloc((np + 1) * sizeof *s.pprev);
    int ok = s.ps && s.since && s.wait_until && s.pdb_spent && s.pdb_allowed && s.pod_node &&
             s.pnext && s.pprev;
    int rc = ok ? grow_node_tables(&s, m->kube.nnodes + 1) : BERTH_ENOMEM;
    if (!rc)
        rc = index_names(&s);
    if (!rc)
        rc = index_leaves(&s);
    if (!rc) {
        for (uint32_t i = 0; i < m->kube.nnodes; i++) {
            s.ready_at[i] = REGISTERED;
            s.end_at[i] = INT64_MAX;
            s.replaces[i] = NULL;
            s.replaced[i] = 0;
            s.head[i] = BERTH_KUBE_NONE;
        }
        /* pods on one node come together and share its name's text (the
         * loader's): one look-up per run of them */
        const char *last = NULL;
        uint32_t last_n = BERTH_KUBE_NONE;
        for (uint32_t p = 0; p < np; p++) {
            const berth_kpod *kp = &m->kube.pods[p];
            uint32_t n = BERTH_KUBE_NONE;
            s.pod_node[p] = BERTH_KUBE_NONE;
            if (!t->later[p] && !kp->terminating && kp->node_name) {
                n = kp->node_name == last ? last_n : node_by_name(&s, kp->node_name);
                last = kp->node_name;
                last_n = n;
            }
            s.ps[p] = t->later[p] ? P_LATER
                      : kp->terminating ? P_GONE
                      : n != BERTH_KUBE_NONE ? P_BOUND
                                             : P_PENDING;
            if (s.ps[p] == P_BOUND)
                link_pod(&s, p, n);
            if (s.ps[p] == P_PENDING) {
                m->kube.pods[p].node_name = NULL;
                s.since[p] = o->from;
            }
        }
        rc = run(&s);
    }
    free(s.ps);
    free(s.since);
    free(s.wait_until);
    free(s.ready_at);
    free(s.end_at);
    free(s.replaces);
    free(s.replaced);
    free(s.head);
    free(s.gone);
    free(s.pod_node);
    free(s.pnext);
    free(s.pprev);
    berth_nameidx_free(&s.names);
    berth_nameidx_free(&s.lkeys);
    free(s.ltext);
    free(s.lev);
    free(s.loff);
    free(s.lpods);
    free(s.lcur);
    free(s.pdb_spent);
    free(s.pdb_allowed);
    if (rc == BERTH_ENOMEM)
        berth_error_set(e, rc, "out of memory simulating");
    if (rc)
        berth_asim_result_free(out);
    return rc;
}

void berth_asim_result_free(berth_asim_result *r)
{
    free(r->steps);
    free(r->events);
    free(r->notes);
    free(r->reps);
    berth_arena_free(&r->arena);
    memset(r, 0, sizeof *r);
}
