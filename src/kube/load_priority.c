/* kube/load_priority.c - scheduling.k8s.io/v1 PriorityClass: value,
 * globalDefault, preemptionPolicy, validated as the API server and the
 * Priority admission plugin do (plugin/pkg/admission/priority). Pods'
 * priorityClassName is resolved by berth_kube_expand once every file is
 * in (classes may come in any file order). */
#include "k8s/k8s.h"
#include "kube/load.h"
#include "berth/grow.h"

#include <stdio.h>
#include <string.h>

/* upstream scheduling.HighestUserDefinablePriority and the system classes */
#define HIGHEST_USER_PRIORITY 1000000000LL

static const berth_kpriority_class system_classes[2] = {
    {"system-cluster-critical", 2000000000LL, 0, "PreemptLowerPriority"},
    {"system-node-critical", 2000001000LL, 0, "PreemptLowerPriority"},
};

const berth_kpriority_class *berth_kube_priority_class(const berth_kcluster *k, const char *name)
{
    if (!name)
        return NULL;
    for (uint32_t i = 0; i < 2; i++)
        if (!strcmp(system_classes[i].name, name))
            return &system_classes[i];
    for (uint32_t i = k->npclasses; i-- > 0;) /* a later object with the same name wins */
        if (!strcmp(k->pclasses[i].name, name))
            return &k->pclasses[i];
    return NULL;
}

int kube_load_priority_class(berth_kcluster *k, berth_dec *d, const berth_node *doc)
{
    static const char *const top[] = {"apiVersion", "kind", "metadata", "value", "globalDefault",
                                      "description", "preemptionPolicy", NULL};
    static const char *const policies[] = {"PreemptLowerPriority", "Never", NULL};
    k8s_meta meta;
    int rc = k8s_dec_metadata(k, d, doc, 0, &meta);
    if (rc || (rc = k8s_known(d, doc, top)))
        return rc;
    berth_kpriority_class pc = {meta.name, 0, 0, "PreemptLowerPriority"};
    const char *desc = NULL;
    int pol = 0;
    if ((rc = berth_dec_int(d, doc, "value", 1, INT32_MIN, INT32_MAX, &pc.value)) ||
        (rc = berth_dec_bool(d, doc, "globalDefault", 0, &pc.global_default)) ||
        (rc = berth_dec_str(d, doc, "description", 0, &desc)) ||
        (rc = k8s_dec_choice(d, doc, "preemptionPolicy", 0, policies, &pol)))
        return rc;
    pc.preemption_policy = policies[pol];
    /* the system classes as `kubectl get priorityclass -o yaml` lists them
     * are accepted when their value is the built-in one; user classes stay
     * at or below 1000000000 (the admission plugin's rule) */
    const berth_kpriority_class *sys = NULL;
    for (uint32_t i = 0; i < 2; i++)
        if (!strcmp(system_classes[i].name, meta.name))
            sys = &system_classes[i];
    if (sys && pc.value != sys->value) {
        char msg[160];
        snprintf(msg, sizeof msg, "%lld", (long long)sys->value);
        return k8s_fail_at(d, doc, "value",
                           "the system PriorityClass's value is %s", msg);
    }
    if (!sys && !strncmp(meta.name, "system-", 7)) {
        size_t p = berth_dec_push(d, "metadata");
        rc = k8s_fail_at(d, meta.node, "name",
                         "priority class names with the prefix 'system-' are reserved for the "
                         "system's classes (got '%s')", meta.name);
        berth_dec_pop(d, p);
        return rc;
    }
    if (!sys && pc.value > HIGHEST_USER_PRIORITY)
        return k8s_fail_at(d, doc, "value",
                           "maximum allowed value of a user defined priority is 1000000000%s", "");
    if (sys)
        return 0; /* built in already */
    if ((rc = grow((void **)&k->pclasses, &k->cappclasses, k->npclasses + 1, sizeof *k->pclasses,
                   KUBE_MAX_OBJECTS)))
        return k8s_grow_fail(d, doc, rc, "PriorityClasses", KUBE_MAX_OBJECTS);
    k->pclasses[k->npclasses++] = pc;
    return 0;
}
