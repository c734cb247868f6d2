/* disrupt/simulate.c - re-placing the pods of disrupted nodes with the
 * kube scheduling pipeline (SPEC 4.1 "Simulation"). A view of the cluster
 * (the remaining nodes, their bound pods, the moved pods pending) goes
 * through berth_kube_schedule; pods left over then try each hypothetical
 * new node built from a NodePool template and an InstanceType offering
 * (labels: template labels, single-value In requirements, nodepool,
 * instance type, zone, capacity type, hostname; taints: the template's;
 * allocatable: the instance type's capacity). Work: one schedule of the
 * moved pods, then one per offering and new node. */
#include "disrupt/state.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const berth_offering *disrupt_option_offering(const disrupt_state *s, const disrupt_option *o)
{
    return &s->m->types[o->type].offerings[o->offering];
}

/* Schedules `pending` (kube pod indices; bind[i] non-NULL pins pod i to
 * that node name) on the nodes not excluded plus the hypothetical nodes,
 * through the shared view scheduler (berth_kube_schedule_view). placed[i]
 * gets the node name or NULL. */
static int sched_view(disrupt_state *s, const uint8_t *excluded, const berth_knode *hyp,
                      uint32_t nhyp, const uint32_t *pending, uint32_t npending,
                      const char *const *bind, const char **placed)
{
    berth_kview v = {excluded, s->pod_node, hyp, nhyp, pending, npending, bind, NULL};
    berth_error e;
    return berth_kube_schedule_view(&s->m->kube, &v, placed, NULL, NULL, &e);
}

/* A hypothetical node for option o, named name; 0, or -1 when the
 * offering does not satisfy the pool's requirements. */
static int make_node(disrupt_state *s, berth_arena *a, const disrupt_option *o, const char *name,
                     berth_knode *out)
{
    const berth_disrupt *m = s->m;
    const berth_nodepool *np = &m->pools[o->pool];
    const berth_instance_type *it = &m->types[o->type];
    const berth_offering *of = &it->offerings[o->offering];
    memset(out, 0, sizeof *out);
    out->name = name;
    uint32_t cap = np->labels.n + np->nreqs + 5;
    berth_label *l = berth_arena_alloc(a, cap * sizeof *l);
    if (!l)
        return BERTH_ENOMEM;
    uint32_t n = 0;
    const char *keys[5] = {"karpenter.sh/nodepool", "node.kubernetes.io/instance-type",
                           "topology.kubernetes.io/zone", "karpenter.sh/capacity-type",
                           "kubernetes.io/hostname"};
    const char *vals[5] = {np->name, it->name, of->zone, berth_capacity_type_name(of->capacity_type),
                           name};
    for (int i = 0; i < 5; i++)
        l[n++] = (berth_label){keys[i], vals[i]};
    for (uint32_t i = 0; i < np->labels.n; i++) {
        int dup = 0;
        for (uint32_t j = 0; j < n; j++)
            dup |= !strcmp(l[j].key, np->labels.items[i].key);
        if (!dup)
            l[n++] = np->labels.items[i];
    }
    for (uint32_t i = 0; i < np->nreqs; i++) {
        const berth_requirement *r = &np->reqs[i];
        int dup = 0;
        for (uint32_t j = 0; j < n; j++)
            dup |= !strcmp(l[j].key, r->key);
        if (!dup && r->op == BERTH_SEL_IN && r->nvalues == 1)
            l[n++] = (berth_label){r->key, r->values[0]};
    }
    out->labels.items = l;
    out->labels.n = n;
    berth_labels_sort(&out->labels);
    /* requirements on keys the node defines must hold */
    for (uint32_t i = 0; i < np->nreqs; i++)
        if (berth_labels_get(&out->labels, np->reqs[i].key) &&
            !berth_requirement_matches(&np->reqs[i], &out->labels))
            return -1;
    out->taints = np->taints;
    out->ntaints = np->ntaints;
    out->alloc[BERTH_KRES_CPU] = it->cpu;
    out->alloc[BERTH_KRES_MEMORY] = it->memory;
    out->alloc[BERTH_KRES_EPHEMERAL] = INT64_MAX / 4;
    for (uint32_t r = BERTH_KRES_FIRST_EXT; r < m->kube.nres; r++)
        if (!strcmp(m->kube.res_names[r], "nvidia.com/gpu"))
            out->alloc[r] = it->gpus;
    out->alloc_pods = it->pods;
    return 0;
}

void disrupt_sim_free(disrupt_sim *r)
{
    free(r->feasible);
    free(r->chosen);
    memset(r, 0, sizeof *r);
}

static int push_option(disrupt_option **v, uint32_t *n, disrupt_option o)
{
    disrupt_option *q = realloc(*v, (*n + 1) * sizeof *q);
    if (!q)
        return BERTH_ENOMEM;
    *v = q;
    q[(*n)++] = o;
    return 0;
}

int disrupt_simulate(disrupt_state *s, const uint32_t *cands, uint32_t nc, uint32_t max_new,
                     disrupt_sim *out)
{
    const berth_disrupt *m = s->m;
    memset(out, 0, sizeof *out);
    uint8_t *excluded = calloc(s->nn + 1, 1);
    uint32_t *moving = calloc(m->kube.npods + 1, sizeof *moving);
    const char **placed = calloc(m->kube.npods + 1, sizeof *placed);
    const char **bind = calloc(m->kube.npods + 1, sizeof *bind);
    const char **placed2 = calloc(m->kube.npods + 1, sizeof *placed2);
    berth_knode *hyp = calloc(max_new + 2, sizeof *hyp);
    berth_arena a;
    berth_arena_init(&a, 0);
    uint32_t nmove = 0, nhyp = 0;
    int rc = 0;
    if (!excluded || !moving || !placed || !bind || !placed2 || !hyp) {
        rc = BERTH_ENOMEM;
        goto out;
    }
    /* nodes that receive nothing: the candidates and nodes being deleted */
    for (uint32_t n = 0; n < s->nn; n++)
        excluded[n] = (uint8_t)(s->n[n].deleting || s->n[n].expired);
    for (uint32_t i = 0; i < nc; i++)
        excluded[cands[i]] = 1;
    for (uint32_t i = 0; i < nc; i++) {
        const disrupt_node *dn = &s->n[cands[i]];
        for (uint32_t j = 0; j < dn->npods; j++) {
            uint32_t p = dn->pods[j];
            char why[8];
            if (disrupt_pod_reschedulable(s, p) && !disrupt_pod_dnd_active(s, p) &&
                !disrupt_pod_pdb_blocked(s, p, why, sizeof why))
                moving[nmove++] = p;
        }
    }
    if ((rc = sched_view(s, excluded, NULL, 0, moving, nmove, NULL, placed)))
        goto out;
    uint32_t left = 0;
    for (uint32_t i = 0; i < nmove; i++) {
        bind[i] = placed[i];
        left += placed[i] == NULL;
    }
    if (!left) {
        out->ok = 1;
        goto out;
    }
    if (!max_new) {
        snprintf(out->why, sizeof out->why, "%u pod(s) do not fit on the remaining nodes", left);
        goto out;
    }
    for (uint32_t round = 0; round < max_new && left; round++) {
        int best = -1;
        uint32_t best_count = 0;
        double best_price = 0;
        disrupt_option best_o = {0};
        char name[48];
        snprintf(name, sizeof name, "berth-replacement-%u", round + 1);
        const char *nm = berth_arena_strdup(&a, name);
        if (!nm) {
            rc = BERTH_ENOMEM;
            goto out;
        }
        for (uint32_t p = 0; p < m->npools; p++)
            for (uint32_t t = 0; t < m->ntypes; t++)
                for (uint32_t o = 0; o < m->types[t].nofferings; o++) {
                    disrupt_option op = {p, t, o};
                    const berth_offering *of = disrupt_option_offering(s, &op);
                    if (!of->available)
                        continue;
                    int mk = make_node(s, &a, &op, nm, &hyp[nhyp]);
                    if (mk == BERTH_ENOMEM) {
                        rc = mk;
                        goto out;
                    }
                    if (mk)
                        continue;
                    if ((rc = sched_view(s, excluded, hyp, nhyp + 1, moving, nmove, bind, placed2)))
                        goto out;
                    uint32_t got = 0;
                    for (uint32_t i = 0; i < nmove; i++)
                        got += !bind[i] && placed2[i];
                    if (got == left && max_new == 1 &&
                        (rc = push_option(&out->feasible, &out->nfeasible, op)))
                        goto out;
                    if (got > best_count || (got == best_count && got && of->price < best_price)) {
                        best = 1;
                        best_count = got;
                        best_price = of->price;
                        best_o = op;
                    }
                }
        if (best < 0)
            break;
        if (max_new == 1) {
            if (best_count == left) {
                out->ok = 1;
                out->nnew = 1;
            }
            break;
        }
        /* commit the best node and pin its pods */
        if ((rc = make_node(s, &a, &best_o, nm, &hyp[nhyp])) ||
            (rc = sched_view(s, excluded, hyp, nhyp + 1, moving, nmove, bind, placed2)) ||
            (rc = push_option(&out->chosen, &out->nchosen, best_o)))
            goto out;
        nhyp++;
        left = 0;
        for (uint32_t i = 0; i < nmove; i++) {
            bind[i] = placed2[i];
            left += placed2[i] == NULL;
        }
        out->nnew = nhyp;
        if (!left)
            out->ok = 1;
    }
    if (!out->ok)
        snprintf(out->why, sizeof out->why,
                 "%u pod(s) fit neither the remaining nodes nor %s new node%s", left,
                 max_new == 1 ? "one" : "the", max_new == 1 ? "" : "s");
out:
    free(excluded);
    free(moving);
    free(placed);
    free(bind);
    free(placed2);
    free(hyp);
    berth_arena_free(&a);
    return rc;
}
