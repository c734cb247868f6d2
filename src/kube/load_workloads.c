/* kube/load_workloads.c - the workload controllers: apps/v1 Deployment,
 * ReplicaSet, StatefulSet, DaemonSet, v1 ReplicationController and batch/v1
 * Job. Each becomes a selector entry (k->workloads: the system default
 * spread) and a controller (k->controllers) holding its pod template
 * decoded as a pod (through k8s_dec_pod_spec, errors located at
 * spec.template.spec...), its desired count and what its upstream
 * controller reads; berth_kube_expand (k8s/workloads.c) creates the pods
 * once every file is in. */
#include "k8s/k8s.h"
#include "kube/load.h"
#include "berth/grow.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REVISION_ANN "deployment.kubernetes.io/revision"

static int add_selector_entry(berth_kcluster *k, berth_dec *d, const berth_node *doc,
                              const char *kind, const char *ns, const char *name,
                              berth_selector sel)
{
    int rc = grow((void **)&k->workloads, &k->capworkloads, k->nworkloads + 1,
                  sizeof *k->workloads, KUBE_MAX_OBJECTS);
    if (rc)
        return k8s_grow_fail(d, doc, rc, "workload objects", KUBE_MAX_OBJECTS);
    k->workloads[k->nworkloads++] = (berth_kworkload){kind, ns, name, sel};
    return 0;
}

/* labels plus key=value (unless key is there), sorted, in the arena */
static int add_label(berth_kcluster *k, berth_dec *d, berth_labels *l, const char *key,
                     const char *value)
{
    if (berth_labels_get(l, key))
        return 0;
    berth_label *items = k8s_alloc(k, l->n + 1, sizeof *items);
    if (!items)
        return ENOMEM_(d);
    if (l->n)
        memcpy(items, l->items, l->n * sizeof *items);
    items[l->n] = (berth_label){key, value};
    l->items = items;
    l->n++;
    berth_labels_sort(l);
    return 0;
}

/* a selector of In requirements, one per label */
static int selector_of(berth_kcluster *k, berth_dec *d, const berth_labels *l, berth_selector *out)
{
    memset(out, 0, sizeof *out);
    out->reqs = k8s_alloc(k, l->n, sizeof *out->reqs);
    if (!out->reqs)
        return ENOMEM_(d);
    for (uint32_t i = 0; i < l->n; i++) {
        const char **vals = k8s_alloc(k, 1, sizeof *vals);
        if (!vals)
            return ENOMEM_(d);
        vals[0] = l->items[i].value;
        out->reqs[out->n++] = (berth_requirement){l->items[i].key, BERTH_SEL_IN, vals, 1};
    }
    return 0;
}

static int set_loc(berth_kcluster *k, berth_dec *d, const berth_node *n, const char *field,
                   berth_kloc *out)
{
    size_t p = berth_dec_push(d, field);
    *out = (berth_kloc){berth_arena_strdup(&k->arena, d->file), berth_arena_strdup(&k->arena, d->path),
                        n ? n->line : 0, n ? n->col : 0};
    berth_dec_pop(d, p);
    return out->file && out->path ? 0 : ENOMEM_(d);
}

/* spec.template: metadata.labels (plus the labels the controller adds
 * before the spec is decoded, so matchLabelKeys see them) and spec. */
static int dec_template(berth_kcluster *k, berth_dec *d, const berth_node *spec,
                        berth_kcontroller *c)
{
    berth_node *t = NULL, *tm = NULL, *ts = NULL;
    int rc = berth_dec_map(d, spec, "template", 1, &t);
    if (rc)
        return rc;
    size_t p = berth_dec_push(d, "template");
    static const char *const tf[] = {"metadata", "spec", NULL};
    berth_kpod *pod = &c->tmpl;
    pod->scheduler_name = "default-scheduler";
    if (!(rc = k8s_known(d, t, tf)) && !(rc = berth_dec_map(d, t, "metadata", 0, &tm)) && tm) {
        size_t p2 = berth_dec_push(d, "metadata");
        if (!(rc = k8s_known(d, tm, k8s_meta_fields)))
            rc = k8s_dec_labels_at(k, d, tm, "labels", &pod->labels, 1);
        berth_dec_pop(d, p2);
    }
    if (!rc && (c->type == BERTH_KCTL_DEPLOYMENT || c->type == BERTH_KCTL_STATEFULSET ||
                c->type == BERTH_KCTL_DAEMONSET)) {
        c->hash = k8s_template_hash(k, t);
        if (!c->hash)
            rc = ENOMEM_(d);
        else if (c->type == BERTH_KCTL_DEPLOYMENT)
            rc = add_label(k, d, &pod->labels, "pod-template-hash", c->hash);
        else {
            const char *v = c->hash;
            if (c->type == BERTH_KCTL_STATEFULSET) { /* the revision's name */
                size_t n = strlen(c->name) + strlen(c->hash) + 2;
                char *s = k8s_alloc(k, n, 1);
                if (!s)
                    rc = ENOMEM_(d);
                else
                    snprintf(s, n, "%s-%s", c->name, c->hash);
                v = s;
            }
            if (!rc)
                rc = add_label(k, d, &pod->labels, "controller-revision-hash", v);
        }
    }
    if (!rc && c->type == BERTH_KCTL_JOB) {
        /* the API server's Job defaulting (manualSelector unset) */
        if (c->uid && !(rc = add_label(k, d, &pod->labels, "batch.kubernetes.io/controller-uid", c->uid)))
            rc = add_label(k, d, &pod->labels, "controller-uid", c->uid);
        if (!rc && !(rc = add_label(k, d, &pod->labels, "batch.kubernetes.io/job-name", c->name)))
            rc = add_label(k, d, &pod->labels, "job-name", c->name);
    }
    if (!rc)
        rc = berth_dec_map(d, t, "spec", 1, &ts);
    if (!rc) {
        size_t p2 = berth_dec_push(d, "spec");
        rc = k8s_dec_pod_spec(k, d, ts, pod);
        if (!rc)
            rc = berth_dec_bool(d, ts, "hostNetwork", 0, &c->host_network);
        berth_dec_pop(d, p2);
    }
    berth_dec_pop(d, p);
    return rc;
}

/* StatefulSet volumeClaimTemplates[].metadata.name, spec.ordinals.start */
static int dec_statefulset(berth_kcluster *k, berth_dec *d, const berth_node *spec,
                           berth_kcontroller *c)
{
    berth_node *vct = NULL, *ord = NULL;
    int rc = berth_dec_seq(d, spec, "volumeClaimTemplates", 0, &vct);
    if (!rc && vct) {
        c->claim_templates = k8s_alloc(k, vct->n, sizeof *c->claim_templates);
        if (!c->claim_templates)
            return ENOMEM_(d);
        for (size_t i = 0; !rc && i < vct->n; i++) {
            size_t p = berth_dec_push(d, "volumeClaimTemplates");
            berth_dec_push_index(d, i);
            const berth_node *v = vct->items[i];
            static const char *const vf[] = {"apiVersion", "kind", "metadata", "spec", "status",
                                             NULL};
            berth_node *m = NULL;
            const char *name = NULL;
            if (v->type != BERTH_NODE_MAP)
                rc = berth_dec_fail(d, v, "expected a PersistentVolumeClaim template mapping");
            if (!rc && !(rc = k8s_known(d, v, vf)) && !(rc = berth_dec_map(d, v, "metadata", 1, &m))) {
                size_t p2 = berth_dec_push(d, "metadata");
                if (!(rc = berth_dec_str(d, m, "name", 1, &name)) && !*name)
                    rc = k8s_fail_at(d, m, "name", "must not be empty%s", "");
                berth_dec_pop(d, p2);
            }
            if (!rc)
                c->claim_templates[c->nclaim_templates++] = name;
            berth_dec_pop(d, p);
        }
    }
    if (!rc)
        rc = berth_dec_map(d, spec, "ordinals", 0, &ord);
    if (!rc && ord) {
        size_t p = berth_dec_push(d, "ordinals");
        static const char *const of[] = {"start", NULL};
        if (!(rc = k8s_known(d, ord, of)))
            rc = berth_dec_int(d, ord, "start", 0, 0, INT32_MAX, &c->ordinal_start);
        berth_dec_pop(d, p);
    }
    return rc;
}

/* Job: parallelism (in replicas), completions, suspend, completionMode,
 * status.succeeded and the Complete / Failed conditions */
static int dec_job(berth_kcluster *k, berth_dec *d, const berth_node *doc, const berth_node *spec,
                   berth_kcontroller *c)
{
    (void)k;
    static const char *const modes[] = {"NonIndexed", "Indexed", NULL};
    int mode = 0;
    int rc = berth_dec_int(d, spec, "completions", 0, 0, INT32_MAX, &c->completions);
    if (!rc)
        rc = berth_dec_bool(d, spec, "suspend", 0, &c->suspended);
    if (!rc)
        rc = k8s_dec_choice(d, spec, "completionMode", 0, modes, &mode);
    c->indexed = mode == 1;
    berth_node *st = NULL, *conds = NULL;
    if (!rc)
        rc = berth_dec_map(d, doc, "status", 0, &st);
    if (rc || !st)
        return rc;
    size_t p = berth_dec_push(d, "status");
    if (!(rc = berth_dec_int(d, st, "succeeded", 0, 0, INT32_MAX, &c->succeeded)))
        rc = berth_dec_seq(d, st, "conditions", 0, &conds);
    for (size_t i = 0; !rc && conds && i < conds->n; i++) {
        const berth_node *cd = conds->items[i];
        const berth_node *t = berth_node_get(cd, "type"), *s = berth_node_get(cd, "status");
        if (t && s && t->type == BERTH_NODE_SCALAR && s->type == BERTH_NODE_SCALAR &&
            (!strcmp(t->str, "Complete") || !strcmp(t->str, "Failed")) && !strcmp(s->str, "True"))
            c->finished = 1;
    }
    berth_dec_pop(d, p);
    return rc;
}

int kube_load_workload(berth_kcluster *k, berth_dec *d, const berth_node *doc, const char *kind)
{
    k8s_meta meta;
    int rc = k8s_dec_metadata(k, d, doc, 1, &meta);
    if (rc)
        return rc;
    static const char *const deploy_f[] = {
        "replicas", "selector", "template", "strategy", "minReadySeconds", "revisionHistoryLimit",
        "paused", "progressDeadlineSeconds", NULL};
    static const char *const rs_f[] = {"replicas", "minReadySeconds", "selector", "template", NULL};
    static const char *const ss_f[] = {
        "replicas", "selector", "template", "volumeClaimTemplates", "serviceName",
        "podManagementPolicy", "updateStrategy", "revisionHistoryLimit", "minReadySeconds",
        "persistentVolumeClaimRetentionPolicy", "ordinals", NULL};
    static const char *const ds_f[] = {"selector", "template", "updateStrategy", "minReadySeconds",
                                       "revisionHistoryLimit", NULL};
    static const char *const job_f[] = {
        "parallelism", "completions", "activeDeadlineSeconds", "podFailurePolicy", "successPolicy",
        "backoffLimit", "backoffLimitPerIndex", "maxFailedIndexes", "selector", "manualSelector",
        "template", "ttlSecondsAfterFinished", "completionMode", "suspend", "podReplacementPolicy",
        "managedBy", NULL};
    berth_kcontroller cc, *c = &cc;
    memset(c, 0, sizeof *c);
    c->kind = kind;
    c->ns = meta.ns;
    c->name = meta.name;
    c->replicas = 1;
    c->completions = -1;
    const char *const *sf = rs_f;
    if (!strcmp(kind, "Deployment"))
        c->type = BERTH_KCTL_DEPLOYMENT, sf = deploy_f;
    else if (!strcmp(kind, "ReplicaSet"))
        c->type = BERTH_KCTL_REPLICASET;
    else if (!strcmp(kind, "ReplicationController"))
        c->type = BERTH_KCTL_RC;
    else if (!strcmp(kind, "StatefulSet"))
        c->type = BERTH_KCTL_STATEFULSET, sf = ss_f;
    else if (!strcmp(kind, "DaemonSet"))
        c->type = BERTH_KCTL_DAEMONSET, sf = ds_f;
    else
        c->type = BERTH_KCTL_JOB, sf = job_f;
    /* metadata: uid, deletionTimestamp, the controller reference, the revision */
    size_t p = berth_dec_push(d, "metadata");
    int64_t t = 0;
    if (!(rc = berth_dec_str(d, meta.node, "uid", 0, &c->uid)) &&
        !(rc = k8s_dec_time_at(d, meta.node, "deletionTimestamp", &t, &c->terminating)))
        rc = k8s_dec_controller_ref(d, meta.node, &c->owner_kind, &c->owner_name, &c->owner_uid);
    berth_dec_pop(d, p);
    if (rc)
        return rc;
    if (c->uid && !*c->uid)
        c->uid = NULL;
    const char *rev = berth_node_annotation(doc, REVISION_ANN);
    if (rev) {
        char *end = NULL;
        long long v = strtoll(rev, &end, 10);
        if (*rev && !*end && v >= 0)
            c->revision = v;
    }
    berth_node *spec = NULL;
    if ((rc = berth_dec_map(d, doc, "spec", 1, &spec)))
        return rc;
    p = berth_dec_push(d, "spec");
    int present = 1;
    if (!(rc = k8s_known(d, spec, sf))) {
        if (c->type == BERTH_KCTL_RC)
            rc = k8s_dec_map_selector(k, d, spec, "selector", &c->selector, &present);
        else if (c->type == BERTH_KCTL_JOB) {
            present = berth_node_get(spec, "selector") != NULL;
            if (present)
                rc = k8s_dec_label_selector(k, d, spec, "selector", &c->selector);
        } else if (!berth_node_get(spec, "selector"))
            rc = berth_dec_fail(d, spec, "selector: required field is missing");
        else
            rc = k8s_dec_label_selector(k, d, spec, "selector", &c->selector);
    }
    const char *count_key = c->type == BERTH_KCTL_JOB ? "parallelism" : "replicas";
    if (!rc && c->type != BERTH_KCTL_DAEMONSET)
        rc = berth_dec_int(d, spec, count_key, 0, 0, INT32_MAX, &c->replicas);
    if (!rc) {
        const berth_node *cn = berth_node_get(spec, count_key);
        rc = cn ? set_loc(k, d, cn, count_key, &c->replicas_at)
                : set_loc(k, d, berth_node_get(spec, "template"), "template", &c->replicas_at);
    }
    /* an RC without a template selects and creates nothing; every other
     * kind requires one */
    if (!rc && (c->type != BERTH_KCTL_RC || berth_node_get(spec, "template")))
        rc = dec_template(k, d, spec, c);
    else if (!rc)
        c->replicas = 0;
    if (!rc && c->type == BERTH_KCTL_STATEFULSET)
        rc = dec_statefulset(k, d, spec, c);
    if (!rc && c->type == BERTH_KCTL_JOB)
        rc = dec_job(k, d, doc, spec, c);
    berth_dec_pop(d, p);
    if (rc)
        return rc;
    /* defaulted selectors: an RC's is its template's labels; a Job's (no
     * manualSelector) its controller-uid label, else its job-name label */
    if (!present && c->type == BERTH_KCTL_RC && c->tmpl.labels.n)
        rc = selector_of(k, d, &c->tmpl.labels, &c->selector), present = !rc;
    if (!present && c->type == BERTH_KCTL_JOB) {
        berth_label one = {c->uid ? "batch.kubernetes.io/controller-uid" : "batch.kubernetes.io/job-name",
                           c->uid ? c->uid : c->name};
        berth_label *items = k8s_alloc(k, 1, sizeof *items);
        if (!items)
            return ENOMEM_(d);
        items[0] = one;
        berth_labels l = {items, 1};
        rc = selector_of(k, d, &l, &c->selector);
        present = !rc;
    }
    if (rc)
        return rc;
    if (!present) /* an RC with neither selector nor template labels selects nothing */
        c->selector.nothing = 1;
    else if ((rc = add_selector_entry(k, d, doc, kind, meta.ns, meta.name, c->selector)))
        return rc;
    if ((rc = grow((void **)&k->controllers, &k->capcontrollers, k->ncontrollers + 1,
                   sizeof *k->controllers, KUBE_MAX_OBJECTS)))
        return k8s_grow_fail(d, doc, rc, "workload controllers", KUBE_MAX_OBJECTS);
    k->controllers[k->ncontrollers++] = *c;
    return 0;
}
