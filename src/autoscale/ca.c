/* autoscale/ca.c - cluster-autoscaler compatibility (SPEC 5.1, `--policy
 * cluster-autoscaler`). Node groups are (virtual node group x instance
 * type). Scale-up: pending pods that fit no existing node are estimated per
 * node group by first-fit decreasing (cpu/alloc + memory/alloc), an
 * expander (least-waste, most-pods, least-nodes, price, priority, random)
 * picks one node group per round, the kube scheduler confirms its new
 * nodes. Scale-down: nodes with utilisation max(cpu, memory) <= 0.5
 * (DaemonSet and mirror pods excluded), whose pods are all drainable
 * (upstream's drainability rules: replicated by a known controller kind,
 * kube-system pods younger than --blocking-system-pod-distruption-timeout,
 * safe-to-evict, local volumes not named in safe-to-evict-local-volumes,
 * PDBs) and move elsewhere, unneeded for more than
 * --scale-down-unneeded-time, in groups above minNodes. Also the priority
 * expander's ConfigMap decoder. The scale-down asks its what-if questions
 * through the scale-down's session (scaledown.h: one session for the walk,
 * a node's pods from its list, rejected questions rolled back); the plain
 * path (reference) schedules a view per candidate. Same decisions.
 * Algorithms and work bounds: docs/autoscale.md. */
#include "autoscale/scaledown.h"

#include "berth/time.h"
#include "berth/grow.h"
#include "berth/random.h"

#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CA_THRESHOLD_NUM 1        /* utilisation threshold 1/2 */
#define CA_THRESHOLD_DEN 2
#define CA_EXPENDABLE_BELOW (-10) /* priority < -10: expendable */
#define CA_MAX_ROUNDS 256

static const char *const expander_names[] = {"random", "least-waste", "most-pods", "least-nodes",
                                             "price", "priority", NULL};

int berth_expander_parse(const char *name)
{
    for (int i = 0; name && expander_names[i]; i++)
        if (!strcmp(expander_names[i], name))
            return i;
    return -1;
}

const char *berth_expander_name(berth_expander x)
{
    return (unsigned)x < sizeof expander_names / sizeof *expander_names - 1 ? expander_names[x]
                                                                             : "?";
}

/* ---- the priority expander's ConfigMap ---- */

static int add_priority(berth_autoscale *m, berth_dec *d, const berth_node *at, int line,
                        int64_t prio, const char *re)
{
    regex_t rx;
    int err = regcomp(&rx, re, REG_EXTENDED | REG_NOSUB);
    if (err == REG_ESPACE) /* an allocation failure is not bad input */
        return berth_error_set(d->err, BERTH_ENOMEM, "out of memory");
    if (err) {
        char msg[160];
        regerror(err, &rx, msg, sizeof msg);
        return berth_dec_fail(d, at, "line %d of the priorities: invalid regular expression "
                                     "'%s': %s", line, re, msg);
    }
    regfree(&rx);
    int rc = berth_grow((void **)&m->prio, &m->capprio, m->nprio + 1, sizeof *m->prio, 1u << 16);
    if (rc)
        return berth_dec_grow_fail(d, at, rc, "priority expander entries");
    m->prio[m->nprio++] = (berth_expander_priority){prio, re};
    return 0;
}

int capacity_load_priority_configmap(berth_autoscale *m, berth_dec *d, const berth_node *doc)
{
    int rc = berth_dec_api(d, doc, "ConfigMap", "v1");
    const char *name = NULL;
    const berth_node *meta = berth_node_get(doc, "metadata");
    if (!rc && meta && meta->type == BERTH_NODE_MAP) {
        size_t p = berth_dec_push(d, "metadata");
        rc = berth_dec_str(d, meta, "name", 1, &name);
        berth_dec_pop(d, p);
    } else if (!rc) {
        rc = berth_dec_fail(d, doc, "metadata: required");
    }
    if (rc)
        return rc;
    if (strcmp(name, BERTH_PRIORITY_EXPANDER_CONFIGMAP)) /* other ConfigMaps: skipped */
        return berth_dec_skip(d, doc, "ConfigMap", NULL,
                              "autoscale input reads only the ConfigMap "
                              BERTH_PRIORITY_EXPANDER_CONFIGMAP);
    if (m->has_prio)
        return berth_dec_fail(d, meta, "ConfigMap '%s' appears twice", name);
    berth_node *data = NULL;
    const char *text = NULL;
    if ((rc = berth_dec_map(d, doc, "data", 1, &data)))
        return rc;
    size_t p = berth_dec_push(d, "data");
    if ((rc = berth_dec_str(d, data, "priorities", 1, &text)))
        goto out;
    berth_dec_push(d, "priorities");
    const berth_node *tn = berth_node_get(data, "priorities");
    berth_error ie;
    berth_error_clear(&ie);
    berth_source inner;
    if ((rc = berth_doc_load_buffer(d->arena, "priorities", text, strlen(text), &inner, &ie))) {
        rc = rc == BERTH_ENOMEM ? berth_error_set(d->err, BERTH_ENOMEM, "out of memory")
                                : berth_dec_fail(d, tn, "not a YAML document: %s", ie.msg);
        goto out;
    }
    const berth_node *root = inner.ndocs == 1 ? inner.docs[0] : NULL;
    if (!root || root->type != BERTH_NODE_MAP) {
        rc = berth_dec_fail(d, tn, "expected a mapping of priority (an integer) to a list of "
                                   "regular expressions");
        goto out;
    }
    for (size_t i = 0; !rc && i < root->n; i++) {
        const berth_node *k = root->entries[i].key, *v = root->entries[i].value;
        int64_t prio = 0;
        char *end = NULL;
        long long x = k->type == BERTH_NODE_SCALAR ? strtoll(k->str, &end, 10) : 0;
        if (!end || end == k->str || *end || x < INT32_MIN || x > INT32_MAX) {
            rc = berth_dec_fail(d, tn, "line %d of the priorities: key '%s' is not an integer "
                                       "priority", k->line, k->str);
            break;
        }
        prio = x;
        if (v->type != BERTH_NODE_SEQ) {
            rc = berth_dec_fail(d, tn, "line %d of the priorities: priority %lld needs a list of "
                                       "regular expressions", v->line, (long long)prio);
            break;
        }
        for (size_t j = 0; !rc && j < v->n; j++) {
            const berth_node *r = v->items[j];
            if (r->type != BERTH_NODE_SCALAR || !*r->str)
                rc = berth_dec_fail(d, tn, "line %d of the priorities: expected a regular "
                                           "expression", r->line);
            else
                rc = add_priority(m, d, tn, r->line, prio, r->str);
        }
    }
    m->has_prio = !rc;
out:
    berth_dec_pop(d, p);
    return rc;
}

/* ---- node groups and the estimate ---- */

typedef struct ca_group {
    uint32_t vng, type;
    const berth_offering *of;     /* the offering its new nodes use */
    char name[192];               /* "<virtual node group>/<instance type>" */
    int64_t priority;             /* priority expander; has_priority 0: none matched */
    int has_priority;
    int failed;                   /* the scheduler placed nothing on its new nodes */
    /* the estimate for the pending pods */
    uint32_t nodes, pods;
    double waste, price;          /* least-waste score; price per pod placed */
} ca_group;

typedef struct ca_work {
    capacity_pass *s;
    uint32_t *pend;               /* pending pods, queue order */
    uint32_t npend;
    uint32_t *elig;               /* slots of pend a group hosts, FFD order */
    double *w;                    /* per slot of pend: FFD weight for the group at hand */
    uint32_t *asg;                /* per slot of elig: bin or NONE */
    int64_t *bins;                /* 4 per bin: free cpu, memory, gpu, pods */
    const char **why;             /* per kube pod: the scheduler's last reason */
    uint32_t *placed, *pods;
} ca_work;

/* The cheapest permitted available offering of type t in group g's zones:
 * spot when spotPercentage > 0, on-demand when spotPercentage < 100 or
 * fallbackToOd; reserved offerings are not a cluster-autoscaler notion.
 * Ties: zone name, then on-demand before spot. */
static const berth_offering *group_offering(const berth_autoscale *m, uint32_t g, uint32_t t)
{
    const berth_vng *v = &m->vngs[g];
    const berth_instance_type *it = &m->types[t];
    const berth_offering *best = NULL;
    for (uint32_t o = 0; o < it->nofferings; o++) {
        const berth_offering *of = &it->offerings[o];
        if (!of->available || !capacity_vng_allows_zone(v, of->zone))
            continue;
        if (of->capacity_type == BERTH_CT_RESERVED ||
            (of->capacity_type == BERTH_CT_SPOT && v->spot_percentage == 0) ||
            (of->capacity_type == BERTH_CT_ON_DEMAND && v->spot_percentage == 100 &&
             !v->fallback_to_od))
            continue;
        int c = best ? strcmp(of->zone, best->zone) : -1;
        if (!best || of->price < best->price ||
            (of->price == best->price &&
             (c < 0 || (c == 0 && of->capacity_type < best->capacity_type))))
            best = of;
    }
    return best;
}

static int cmp_slot(const void *a, const void *b, void *ctx)
{
    const double *w = ctx;
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    if (w[x] != w[y])
        return w[x] > w[y] ? -1 : 1;
    return x < y ? -1 : x > y;
}

/* First-fit decreasing of the pending pods group G hosts onto new nodes of
 * its type, at most maxNodes - the group's nodes of them. Fills G's
 * estimate and w->elig / w->asg (nelig). Work: O(P x bins). */
static uint32_t estimate(ca_work *w, ca_group *G)
{
    capacity_pass *s = w->s;
    const berth_autoscale *m = s->m;
    const berth_instance_type *it = &m->types[G->type];
    const berth_vng *v = &m->vngs[G->vng];
    uint32_t ne = 0;
    for (uint32_t i = 0; i < w->npend; i++) {
        uint32_t pod = w->pend[i];
        if (!capacity_template_hosts(s, G->vng, G->type, G->of->zone, (int)G->of->capacity_type,
                                     pod, NULL, 0))
            continue;
        const berth_kpod *p = &m->kube.pods[pod];
        w->w[i] = (double)p->req[BERTH_KRES_CPU] / (double)(it->cpu > 0 ? it->cpu : 1) +
                  (double)p->req[BERTH_KRES_MEMORY] / (double)(it->memory > 0 ? it->memory : 1);
        w->elig[ne++] = i;
    }
    qsort_r(w->elig, ne, sizeof *w->elig, cmp_slot, w->w);
    int64_t limit = v->max_nodes == BERTH_VNG_UNLIMITED ? INT64_MAX
                                                        : v->max_nodes - s->vng_nodes[G->vng];
    uint32_t nb = 0, placed = 0;
    int64_t used[2] = {0, 0};
    for (uint32_t e = 0; e < ne; e++) {
        const berth_kpod *p = &m->kube.pods[w->pend[w->elig[e]]];
        int64_t need[4] = {p->req[BERTH_KRES_CPU], p->req[BERTH_KRES_MEMORY],
                           s->gpu != BERTH_KUBE_NONE ? p->req[s->gpu] : 0, 1};
        uint32_t b = 0;
        while (b < nb && !(need[0] <= w->bins[b * 4] && need[1] <= w->bins[b * 4 + 1] &&
                           need[2] <= w->bins[b * 4 + 2] && need[3] <= w->bins[b * 4 + 3]))
            b++;
        if (b == nb) {
            if ((int64_t)nb >= limit) {
                w->asg[e] = BERTH_KUBE_NONE;
                continue;
            }
            int64_t *f = &w->bins[nb++ * 4];
            capacity_template_free(s, G->vng, G->type, G->of->zone, (int)G->of->capacity_type, f);
        }
        for (int r = 0; r < 4; r++)
            w->bins[b * 4 + r] -= need[r];
        used[0] += need[0];
        used[1] += need[1];
        w->asg[e] = b;
        placed++;
    }
    G->nodes = nb;
    G->pods = placed;
    G->waste = 0;
    G->price = 0;
    if (nb) {
        double cpu = (double)nb * (double)it->cpu, mem = (double)nb * (double)it->memory;
        G->waste = (cpu > 0 ? (cpu - (double)used[0]) / cpu : 0) +
                   (mem > 0 ? (mem - (double)used[1]) / mem : 0);
        G->price = placed ? (double)nb * G->of->price / (double)placed : 0;
    }
    return ne;
}

/* The expander: the best candidates by its criterion, then a seeded random
 * choice among equals (upstream's fallback). */
static int expand(const berth_aplan_options *opt, ca_group *g, uint32_t ng, berth_rng *rng,
                  uint32_t *tie)
{
    uint32_t nt = 0;
    int any_prio = 0;
    for (uint32_t i = 0; i < ng; i++)
        any_prio |= !g[i].failed && g[i].pods && g[i].has_priority;
    for (uint32_t i = 0; i < ng; i++) {
        if (g[i].failed || !g[i].pods)
            continue;
        if (opt->expander == BERTH_EXPANDER_PRIORITY && any_prio && !g[i].has_priority)
            continue;
        if (!nt) {
            tie[nt++] = i;
            continue;
        }
        const ca_group *b = &g[tie[0]];
        double d = 0;
        switch (opt->expander) {
        case BERTH_EXPANDER_LEAST_WASTE: d = b->waste - g[i].waste; break;
        case BERTH_EXPANDER_MOST_PODS: d = (double)g[i].pods - (double)b->pods; break;
        case BERTH_EXPANDER_LEAST_NODES: d = (double)b->nodes - (double)g[i].nodes; break;
        case BERTH_EXPANDER_PRICE: d = b->price - g[i].price; break;
        case BERTH_EXPANDER_PRIORITY: d = (double)g[i].priority - (double)b->priority; break;
        case BERTH_EXPANDER_RANDOM: d = 0; break;
        }
        if (d > 1e-12)
            nt = 0; /* strictly better */
        if (d > 1e-12 || d >= -1e-12)
            tie[nt++] = i;
    }
    if (!nt)
        return -1;
    return (int)tie[nt > 1 ? berth_rng_below(rng, nt) : 0];
}

static int build_groups(capacity_pass *s, ca_group **out, uint32_t *nout, berth_error *e)
{
    const berth_autoscale *m = s->m;
    ca_group *g = calloc((size_t)m->nvngs * m->ntypes + 1, sizeof *g);
    regex_t *rx = calloc(m->nprio + 1, sizeof *rx);
    uint32_t ng = 0, nrx = 0;
    int rc = 0;
    if (!g || !rx) {
        rc = BERTH_ENOMEM;
        goto out;
    }
    for (; nrx < m->nprio; nrx++)
        if (regcomp(&rx[nrx], m->prio[nrx].regex, REG_EXTENDED | REG_NOSUB)) {
            rc = berth_error_set(e, BERTH_EINVAL, "priority expander: invalid regular expression "
                                                  "'%s'", m->prio[nrx].regex);
            goto out;
        }
    for (uint32_t v = 0; v < m->nvngs; v++)
        for (uint32_t t = 0; t < m->ntypes; t++) {
            if (!capacity_vng_allows_type(&m->vngs[v], &m->types[t]))
                continue;
            const berth_offering *of = group_offering(m, v, t);
            if (!of)
                continue;
            ca_group *x = &g[ng++];
            x->vng = v;
            x->type = t;
            x->of = of;
            snprintf(x->name, sizeof x->name, "%s/%s", m->vngs[v].name, m->types[t].name);
            for (uint32_t r = 0; r < m->nprio; r++)
                if (!regexec(&rx[r], x->name, 0, NULL, 0) &&
                    (!x->has_priority || m->prio[r].priority > x->priority)) {
                    x->priority = m->prio[r].priority;
                    x->has_priority = 1;
                }
        }
out:
    for (uint32_t r = 0; r < nrx; r++)
        regfree(&rx[r]);
    free(rx);
    if (rc) {
        free(g);
        return rc;
    }
    *out = g;
    *nout = ng;
    return 0;
}

/* Opens the estimate of group G (w->elig / w->asg) and lets the scheduler
 * confirm it: pods it places elsewhere or nowhere are taken back; new nodes
 * left empty are dropped. Returns the pods placed, or -1 on ENOMEM. */
static int64_t apply(ca_work *w, ca_group *G, uint32_t ne)
{
    capacity_pass *s = w->s;
    uint32_t first = s->nn, cnt = 0;
    for (uint32_t b = 0; b < G->nodes; b++)
        if (capacity_new_node(s, G->vng, G->type, G->of->zone, (int)G->of->capacity_type) ==
            BERTH_KUBE_NONE)
            return -1;
    for (uint32_t e = 0; e < ne; e++)
        if (w->asg[e] != BERTH_KUBE_NONE)
            w->pods[cnt++] = w->pend[w->elig[e]];
    const char **why = calloc(cnt + 1, sizeof *why);
    if (!why || capacity_schedule(s, w->pods, cnt, s->nn - s->nexisting, w->placed, why)) {
        free(why);
        return -1;
    }
    int64_t ok = 0;
    for (uint32_t i = 0; i < cnt; i++) {
        if (w->placed[i] != BERTH_KUBE_NONE) {
            capacity_place(s, w->pods[i], w->placed[i]);
            ok++;
        } else {
            w->why[w->pods[i]] = why[i];
        }
    }
    free(why);
    for (uint32_t n = first; n < s->nn; n++)
        if (!s->n[n].npods) {
            s->n[n].removed = 1;
            s->vng_nodes[s->n[n].vng]--;
        }
    return ok;
}

int capacity_ca_scale_up(capacity_pass *s, const berth_aplan_options *opt, berth_error *e)
{
    const berth_autoscale *m = s->m;
    const berth_kcluster *k = &m->kube;
    berth_aplan *p = s->plan;
    if (opt->ninterrupt || opt->roll)
        return berth_error_set(e, BERTH_EINVAL, "--interrupt and --roll are Ocean replacements; "
                                                "cluster-autoscaler does not replace nodes");
    if (opt->expander == BERTH_EXPANDER_PRIORITY && !m->has_prio)
        return berth_error_set(e, BERTH_EINVAL, "--expander priority needs the ConfigMap '%s' "
                                                "(data.priorities) in the input",
                                BERTH_PRIORITY_EXPANDER_CONFIGMAP);
    ca_group *g = NULL;
    uint32_t ng = 0;
    int rc = build_groups(s, &g, &ng, e);
    if (rc)
        return rc == BERTH_ENOMEM ? berth_error_set(e, rc, "out of memory") : rc;
    uint32_t np = k->npods + 1;
    ca_work w = {s, malloc(np * sizeof *w.pend), 0, malloc(np * sizeof *w.elig),
                 malloc(np * sizeof *w.w), malloc(np * sizeof *w.asg),
                 malloc(4 * (size_t)np * sizeof *w.bins), calloc(np, sizeof *w.why),
                 malloc(np * sizeof *w.placed), malloc(np * sizeof *w.pods)};
    uint32_t *tie = malloc((ng + 1) * sizeof *tie);
    p->on_existing = malloc(np * sizeof *p->on_existing);
    p->on_existing_node = malloc(np * sizeof *p->on_existing_node);
    const char **why0 = calloc(np, sizeof *why0);
    if (!w.pend || !w.elig || !w.w || !w.asg || !w.bins || !w.why || !w.placed || !w.pods ||
        !tie || !p->on_existing || !p->on_existing_node || !why0) {
        rc = BERTH_ENOMEM;
        goto out;
    }
    berth_rng rng;
    berth_rng_seed(&rng, opt->seed);
    /* 1. pending pods onto existing nodes through the kube scheduler */
    uint32_t n0 = s->npending; /* found by capacity_pass_init, in pod order */
    if (n0)
        memcpy(w.pods, s->pending, n0 * sizeof *w.pods);
    if ((rc = capacity_schedule(s, w.pods, n0, 0, w.placed, why0)))
        goto out;
    for (uint32_t i = 0; i < n0; i++) {
        uint32_t pod = w.pods[i];
        if (w.placed[i] != BERTH_KUBE_NONE) {
            capacity_place(s, pod, w.placed[i]);
            p->on_existing[p->non_existing] = pod;
            p->on_existing_node[p->non_existing++] = w.placed[i];
        } else if (capacity_daemon_unplaced(s, pod, &rc)) {
            if (rc)
                goto out;
        } else if (k->pods[pod].priority < CA_EXPENDABLE_BELOW) {
            char msg[200];
            snprintf(msg, sizeof msg, "expendable pod (priority %lld < %d): cluster-autoscaler "
                     "does not scale up for it", (long long)k->pods[pod].priority,
                     CA_EXPENDABLE_BELOW);
            if ((rc = capacity_add_unsched(s, pod, msg)))
                goto out;
        } else {
            w.why[pod] = why0[i];
            w.pend[w.npend++] = pod;
        }
    }
    /* 2. rounds: estimate every node group, expand one, confirm */
    for (uint32_t round = 0; round < CA_MAX_ROUNDS && w.npend; round++) {
        for (uint32_t i = 0; i < ng; i++)
            if (!g[i].failed)
                estimate(&w, &g[i]);
        int best = expand(opt, g, ng, &rng, tie);
        if (best < 0)
            break;
        uint32_t ne = estimate(&w, &g[best]);
        int64_t ok = apply(&w, &g[best], ne);
        if (ok < 0) {
            rc = BERTH_ENOMEM;
            goto out;
        }
        if (!ok)
            g[best].failed = 1;
        uint32_t left = 0;
        for (uint32_t i = 0; i < w.npend; i++)
            if (s->pod_node[w.pend[i]] == BERTH_KUBE_NONE)
                w.pend[left++] = w.pend[i];
        w.npend = left;
    }
    /* 3. what is left: no node group hosts it, or none of its nodes took it */
    for (uint32_t i = 0; i < w.npend && !rc; i++) {
        uint32_t pod = w.pend[i];
        char why[640], first[400] = "";
        int hosts = 0;
        for (uint32_t x = 0; x < ng && !hosts; x++) {
            char r[160];
            hosts = capacity_template_hosts(s, g[x].vng, g[x].type, g[x].of->zone,
                                            (int)g[x].of->capacity_type, pod, r, sizeof r);
            if (!hosts && !*first)
                snprintf(first, sizeof first, "%s: %s", g[x].name, r);
        }
        if (!hosts)
            snprintf(why, sizeof why, "no cluster-autoscaler node group (virtual node group x "
                     "instance type) can host it%s%s%s", *first ? " (" : "", first,
                     *first ? ")" : "");
        else
            snprintf(why, sizeof why, "no node group's new nodes take it (maxNodes reached or "
                     "the scheduler rejects it: %s)", w.why[pod] ? w.why[pod] : "no node fits");
        rc = capacity_add_unsched(s, pod, why);
    }
    if (!rc)
        rc = capacity_report_new_nodes(s);
out:
    free(g);
    free(tie);
    free(why0);
    free(w.pend);
    free(w.elig);
    free(w.w);
    free(w.asg);
    free(w.bins);
    free(w.why);
    free(w.placed);
    free(w.pods);
    if (rc == BERTH_ENOMEM)
        rc = berth_error_set(e, rc, "out of memory planning scale-up");
    return rc;
}

/* ---- scale-down ---- */

/* Go's duration spelling: 10m0s, 1h0m0s, 45s. */
static void fmt_dur(int64_t secs, char *buf, size_t size)
{
    long long h = secs / 3600, mn = secs % 3600 / 60, sc = secs % 60;
    if (h)
        snprintf(buf, size, "%lldh%lldm%llds", h, mn, sc);
    else if (mn)
        snprintf(buf, size, "%lldm%llds", mn, sc);
    else
        snprintf(buf, size, "%llds", (long long)secs);
}

typedef struct util_ctx {
    const capacity_pass *s;
    const double *u;
} util_ctx;

/* least utilised first, ties by name */
static int cmp_util(const void *a, const void *b, void *ctx)
{
    const util_ctx *c = ctx;
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    if (c->u[x] != c->u[y])
        return c->u[x] < c->u[y] ? -1 : 1;
    return strcmp(c->s->n[x].k->name, c->s->n[y].k->name);
}

/* requests of movable pods over allocatable <= 1/2 for cpu and memory,
 * in integers (exactly 0.5 is a candidate); on[0..non) the node's pods
 * (fast; NULL: scanned) */
static int under_threshold(const capacity_pass *s, uint32_t n, const uint32_t *on, uint32_t non)
{
    int64_t cpu = 0, mem = 0;
    if (on) {
        const berth_kcluster *k = &s->m->kube;
        for (uint32_t i = 0; i < non; i++)
            if (capacity_pod_movable(s, on[i])) {
                cpu += k->pods[on[i]].req[BERTH_KRES_CPU];
                mem += k->pods[on[i]].req[BERTH_KRES_MEMORY];
            }
    } else {
        capacity_node_requests(s, n, &cpu, &mem);
    }
    const capacity_node *c = &s->n[n];
    return cpu * CA_THRESHOLD_DEN <= c->alloc[0] * CA_THRESHOLD_NUM &&
           mem * CA_THRESHOLD_DEN <= c->alloc[1] * CA_THRESHOLD_NUM;
}

static int has_pdb(const berth_kcluster *k, const berth_kpod *p)
{
    for (uint32_t b = 0; b < k->npdbs; b++)
        if (berth_kpdb_matches(&k->pdbs[b], p))
            return 1;
    return 0;
}

/* Whether a pod with controller kind `kind` counts as replicated
 * (simulator/drainability/rules/replicated, Drainable and replicatedKind):
 * with --skip-nodes-with-custom-controller-pods (the default) only these
 * four kinds; without it, any controller. */
static int replicated_kind(const char *kind, int any_controller)
{
    static const char *const kinds[] = {"ReplicationController", "ReplicaSet", "Job",
                                        "StatefulSet", NULL};
    if (!kind)
        return 0;
    for (int i = 0; kinds[i] && !any_controller; i++)
        if (!strcmp(kinds[i], kind))
            return 1;
    return any_controller;
}

/* The first local volume of pod p that the annotation
 * safe-to-evict-local-volumes does not name, or NULL (utils/drain/drain.go
 * HasBlockingLocalStorage, getNonBlockingVolumes: the value split at commas,
 * each piece an exact volume name, no trimming). */
static const char *blocking_local_volume(const berth_kpod *p, const char *safe)
{
    for (uint32_t i = 0; i < p->nlocal_volumes; i++) {
        const char *v = p->local_volumes[i], *s = safe && *safe ? safe : NULL;
        size_t n = strlen(v);
        int named = 0;
        while (s && !named) {
            const char *comma = strchr(s, ',');
            size_t len = comma ? (size_t)(comma - s) : strlen(s);
            named = len == n && !memcmp(s, v, n);
            s = comma ? comma + 1 : NULL;
        }
        if (!named)
            return v;
    }
    return NULL;
}

/* The drainability blocker of pod (SPEC 5.1) in words, or "". The rules
 * in upstream's order (simulator/drainability/rules/rules.go Default):
 * replicated, system, notsafetoevict, localstorage (the pdb rule is the
 * caller's). */
static void drain_blocker(const capacity_pass *s, const berth_aplan_options *opt, uint32_t pod,
                          char *why, size_t size)
{
    const berth_kcluster *k = &s->m->kube;
    const berth_kpod *p = &k->pods[pod];
    const berth_apod *ap = &s->m->pod_info[pod];
    int64_t timeout = opt->has_system_pod_timeout ? opt->system_pod_timeout
                                                  : BERTH_CA_SYSTEM_POD_TIMEOUT_DEFAULT;
    /* a pod without creationTimestamp counts as created now */
    int64_t age = p->has_created ? opt->now - p->created : 0;
    const char *vol = NULL;
    *why = 0;
    if (!p->owner_kind)
        snprintf(why, size, "pod %s/%s is not replicated (no controller owner)", p->ns, p->name);
    else if (!replicated_kind(p->owner_kind, opt->custom_controller_pods_ok))
        snprintf(why, size, "pod %s/%s is owned by %s %s, a custom controller "
                 "(--skip-nodes-with-custom-controller-pods)", p->ns, p->name, p->owner_kind,
                 p->owner_name ? p->owner_name : "");
    else if (!strcmp(p->ns, "kube-system") && !has_pdb(k, p) && age < timeout) {
        char a[32], t[32];
        fmt_dur(age > 0 ? age : 0, a, sizeof a);
        fmt_dur(timeout, t, sizeof t);
        snprintf(why, size, "pod %s/%s is a kube-system pod without a PodDisruptionBudget, "
                 "created %s ago (blocks until --blocking-system-pod-distruption-timeout %s)",
                 p->ns, p->name, a, t);
    } else if (ap->safe_to_evict == 0)
        snprintf(why, size, "pod %s/%s is annotated " BERTH_SAFE_TO_EVICT ": \"false\"", p->ns,
                 p->name);
    else if ((vol = blocking_local_volume(p, ap->safe_local_volumes)))
        snprintf(why, size, "pod %s/%s uses local storage (volume %s: an emptyDir or hostPath "
                 "volume not named in " BERTH_SAFE_TO_EVICT_LOCAL_VOLUMES ")", p->ns, p->name,
                 vol);
}

int capacity_ca_scale_down(capacity_pass *s, const berth_aplan_options *opt, berth_error *e)
{
    const berth_autoscale *m = s->m;
    const berth_kcluster *k = &m->kube;
    int64_t unneeded = opt->has_unneeded_time ? opt->unneeded_time : BERTH_CA_UNNEEDED_TIME_DEFAULT;
    if (unneeded < 0)
        return berth_error_set(e, BERTH_EINVAL, "--scale-down-unneeded-time must not be negative");
    if (opt->has_system_pod_timeout && opt->system_pod_timeout < 0)
        return berth_error_set(e, BERTH_EINVAL, "--blocking-system-pod-distruption-timeout must "
                                                "not be negative");
    int scaled_up = 0;
    for (uint32_t n = s->nexisting; n < s->nn; n++)
        scaled_up |= !s->n[n].removed;
    uint32_t *cand = malloc((s->nexisting + 1) * sizeof *cand);
    double *util = calloc(s->nexisting + 1, sizeof *util);
    int64_t *pdb_left = calloc(k->npdbs + 1, sizeof *pdb_left);
    int64_t *pdb_need = calloc(k->npdbs + 1, sizeof *pdb_need);
    uint32_t *pods = malloc((k->npods + 1) * sizeof *pods);
    uint32_t *gone = malloc((k->npods + 1) * sizeof *gone);
    uint8_t *counted = malloc(k->npods + 1);
    uint32_t *placed = malloc((k->npods + 1) * sizeof *placed);
    const char **why = calloc(k->npods + 1, sizeof *why);
    /* fast path: the scale-down's what-if session for every question, a
     * node's pods from the session's list, utilisation in one pass */
    int fast = !s->reference;
    uint32_t *all_on = fast ? malloc((k->npods + 1) * sizeof *all_on) : NULL;
    uint32_t *pn = fast ? malloc((k->npods + 1) * sizeof *pn) : NULL;
    sd_ctx cx = {0};
    int rc = 0;
    if (!cand || !util || !pdb_left || !pdb_need || !pods || !gone || !counted || !placed || !why ||
        (fast && (!all_on || !pn))) {
        rc = BERTH_ENOMEM;
        goto out;
    }
    if (fast && (rc = sd_open(s, &cx, pn, e))) {
        fast = -1; /* message set */
        goto out;
    }
    if (fast && (rc = sd_utilisation_all(s, util)))
        goto out;
    for (uint32_t b = 0; b < k->npdbs; b++)
        pdb_left[b] = capacity_pdb_allowed(k, &k->pdbs[b]);
    uint32_t nc = 0;
    for (uint32_t n = 0; n < s->nexisting; n++)
        if (s->n[n].vng >= 0 && !s->n[n].removed) {
            if (!fast)
                util[n] = capacity_utilisation(s, n);
            cand[nc++] = n;
        }
    util_ctx uc = {s, util};
    qsort_r(cand, nc, sizeof *cand, cmp_util, &uc);
    char reason[300], d1[32], d2[32];
    for (uint32_t ci = 0; ci < nc && !rc; ci++) {
        uint32_t n = cand[ci];
        capacity_node *c = &s->n[n];
        const berth_vng *v = &m->vngs[c->vng];
        *reason = 0;
        /* fast: the node's pods in pod order, the scan's order */
        uint32_t non = fast ? sd_pods_on(s, cx.ks, n, all_on) : 0;
        if (scaled_up)
            snprintf(reason, sizeof reason, "scale-down waits: this pass scales up "
                     "(cluster-autoscaler's scale-down-delay-after-add)");
        else if (!under_threshold(s, n, fast ? all_on : NULL, non))
            snprintf(reason, sizeof reason, "utilisation %.3f is above the scale-down threshold "
                     "0.5", util[n]);
        else if (s->vng_nodes[c->vng] - 1 < v->min_nodes)
            snprintf(reason, sizeof reason, "virtual node group %s is at minNodes %lld", v->name,
                     (long long)v->min_nodes);
        uint32_t npods = 0, ngone = 0;
        for (uint32_t i = 0, p; !*reason && (fast ? i < non : i < k->npods); i++) {
            p = fast ? all_on[i] : i;
            if ((!fast && s->pod_node[p] != n) || !capacity_pod_movable(s, p))
                continue;
            counted[npods] = 0;
            if (k->pods[p].priority < CA_EXPENDABLE_BELOW) {
                gone[ngone++] = p; /* expendable: deleted, not moved */
                continue;
            }
            if (m->pod_info[p].safe_to_evict != 1) {
                drain_blocker(s, opt, p, reason, sizeof reason);
                counted[npods] = 1;
            }
            pods[npods++] = p;
        }
        /* PodDisruptionBudgets of the pods safe-to-evict does not override */
        memset(pdb_need, 0, (k->npdbs + 1) * sizeof *pdb_need);
        for (uint32_t i = 0; i < npods && !*reason; i++)
            for (uint32_t b = 0; counted[i] && b < k->npdbs && !*reason; b++)
                if (berth_kpdb_matches(&k->pdbs[b], &k->pods[pods[i]]) &&
                    ++pdb_need[b] > pdb_left[b])
                    snprintf(reason, sizeof reason, "pod %s/%s: PodDisruptionBudget %s/%s allows "
                             "%lld more disruption(s), the node needs %lld", k->pods[pods[i]].ns,
                             k->pods[pods[i]].name, k->pdbs[b].ns, k->pdbs[b].name,
                             (long long)pdb_left[b], (long long)pdb_need[b]);
        if (*reason) {
            rc = capacity_add_blocked(s, n, reason);
            continue;
        }
        /* simulate: the remaining existing nodes take every pod (the
         * expendable ones leave with the node) */
        for (uint32_t i = 0; i < npods; i++)
            capacity_unplace(s, pods[i]);
        c->removed = 1;
        sd_question q = {.node = n, .all_on = all_on, .non = non, .pods = pods, .npods = npods,
                         .placed = placed, .why = why};
        if (fast) {
            /* (pod by pod it stops at the first pod that fits nowhere: the
             * one the reason names, as the view's first unplaced pod) */
            sd_whatif(&cx, k, &q);
            if (q.rc) {
                rc = berth_error_set(e, q.rc, "%s", q.err.msg);
                fast = -1;
                goto out;
            }
        } else if ((rc = capacity_schedule(s, pods, npods, 0, placed, why))) {
            goto out;
        }
        for (uint32_t i = 0; i < npods && !*reason; i++)
            if (placed[i] == BERTH_KUBE_NONE)
                snprintf(reason, sizeof reason, "pod %s/%s fits no other node: %s",
                         k->pods[pods[i]].ns, k->pods[pods[i]].name,
                         why[i] && strncmp(why[i], "0/0 ", 4) ? why[i] : "no other node");
        const berth_anode *an = &m->node_info[n];
        int64_t since = an->has_unneeded_since ? an->unneeded_since : opt->now;
        if (!*reason && opt->now - since <= unneeded) {
            fmt_dur(opt->now - since > 0 ? opt->now - since : 0, d1, sizeof d1);
            fmt_dur(unneeded, d2, sizeof d2);
            snprintf(reason, sizeof reason, "unneeded for %s; cluster-autoscaler removes it after "
                     "more than %s (annotation " BERTH_UNNEEDED_SINCE ")", d1, d2);
        }
        if (*reason) {
            c->removed = 0;
            for (uint32_t i = 0; i < npods; i++)
                capacity_place(s, pods[i], n);
            if (fast && (rc = sd_rollback(&cx, &q))) {
                rc = berth_error_set(e, rc, "what-if session rollback failed");
                fast = -1;
                goto out;
            }
            rc = capacity_add_blocked(s, n, reason);
            continue;
        }
        if (fast) /* the removal is for good: no question goes back past it */
            sd_workers_commit(NULL, &cx);
        for (uint32_t i = 0; i < npods; i++)
            capacity_place(s, pods[i], placed[i]);
        for (uint32_t i = 0; i < ngone; i++)
            capacity_unplace(s, gone[i]);
        s->vng_nodes[c->vng]--;
        if ((rc = capacity_add_scaledown(s, n, util[n], pods, placed, npods, gone, ngone,
                                         pdb_left, pdb_need)))
            goto out;
    }
out:
    sd_close(&cx);
    free(all_on);
    free(pn);
    free(cand);
    free(util);
    free(pdb_left);
    free(pdb_need);
    free(pods);
    free(gone);
    free(counted);
    free(placed);
    free(why);
    if (rc == BERTH_ENOMEM && fast >= 0)
        rc = berth_error_set(e, rc, "out of memory planning scale-down");
    return rc;
}
