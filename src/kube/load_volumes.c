/* kube/load_volumes.c - PersistentVolumeClaim and PersistentVolume, and
 * the resolution of pods' claims to their volumes' zones (VolumeZone). */
#include "k8s/k8s.h"
#include "kube/load.h"
#include "berth/time.h"
#include "berth/grow.h"
#include "berth/hash.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- PersistentVolumeClaim, PersistentVolume (VolumeZone) ---- */

/* v1 PersistentVolumeClaim: spec.volumeName and spec.storageClassName;
 * status is not read. */
int kube_load_pvc(berth_kcluster *k, berth_dec *d, const berth_node *doc)
{
    k8s_meta meta;
    int rc = k8s_dec_metadata(k, d, doc, 1, &meta);
    if (rc)
        return rc;
    static const char *const sf[] = {"accessModes", "selector", "resources", "volumeName",
                                     "storageClassName", "volumeMode", "dataSource",
                                     "dataSourceRef", "volumeAttributesClassName", NULL};
    berth_kpvc c = {meta.ns, meta.name, NULL, NULL};
    berth_node *spec = NULL;
    if ((rc = berth_dec_map(d, doc, "spec", 0, &spec)))
        return rc;
    if (spec) {
        size_t p = berth_dec_push(d, "spec");
        if (!(rc = k8s_known(d, spec, sf)) &&
            !(rc = berth_dec_str(d, spec, "volumeName", 0, &c.volume_name)))
            rc = berth_dec_str(d, spec, "storageClassName", 0, &c.storage_class);
        berth_dec_pop(d, p);
        if (rc)
            return rc;
    }
    if (c.volume_name && !*c.volume_name)
        c.volume_name = NULL;
    if ((rc = grow((void **)&k->pvcs, &k->cappvcs, k->npvcs + 1, sizeof *k->pvcs,
                   KUBE_MAX_OBJECTS)))
        return k8s_grow_fail(d, doc, rc, "PersistentVolumeClaims", KUBE_MAX_OBJECTS);
    k->pvcs[k->npvcs++] = c;
    k->volumes_stale = 1;
    return 0;
}

/* v1 PersistentVolume: its name and labels (the zone keys); the spec is
 * only checked for field names (--strict); spec.nodeAffinity is
 * VolumeBinding's, which berth does not model. */
int kube_load_pv(berth_kcluster *k, berth_dec *d, const berth_node *doc)
{
    k8s_meta meta;
    int rc = k8s_dec_metadata(k, d, doc, 0, &meta);
    if (rc)
        return rc;
    static const char *const sf[] = {
        "capacity", "accessModes", "claimRef", "persistentVolumeReclaimPolicy",
        "storageClassName", "mountOptions", "volumeMode", "nodeAffinity",
        "volumeAttributesClassName", "awsElasticBlockStore", "azureDisk", "azureFile", "cephfs",
        "cinder", "csi", "fc", "flexVolume", "flocker", "gcePersistentDisk", "glusterfs",
        "hostPath", "iscsi", "local", "nfs", "photonPersistentDisk", "portworxVolume", "quobyte",
        "rbd", "scaleIO", "storageos", "vsphereVolume", NULL};
    berth_node *spec = NULL;
    if ((rc = berth_dec_map(d, doc, "spec", 0, &spec)))
        return rc;
    if (spec) {
        size_t p = berth_dec_push(d, "spec");
        rc = k8s_known(d, spec, sf);
        berth_dec_pop(d, p);
        if (rc)
            return rc;
    }
    if ((rc = grow((void **)&k->pvs, &k->cappvs, k->npvs + 1, sizeof *k->pvs, KUBE_MAX_OBJECTS)))
        return k8s_grow_fail(d, doc, rc, "PersistentVolumes", KUBE_MAX_OBJECTS);
    k->pvs[k->npvs++] = (berth_kpv){meta.name, meta.labels};
    k->volumes_stale = 1;
    return 0;
}

/* The zone label keys VolumeZone reads, in upstream's order. */
static const char *const zone_keys[4] = {
    "failure-domain.beta.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/region",
    "topology.kubernetes.io/zone", "topology.kubernetes.io/region"};

static int cmp_cstr(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* One PV's constraints (upstream getPVTopologies): for each zone key it
 * carries, the value split at "__" (LabelZonesToSet: elements trimmed; an
 * empty element makes the key unusable and it is skipped). Sorted,
 * distinct values. Returns the count written to out[0..4), -1 on ENOMEM. */
static int pv_zones(berth_kcluster *k, const berth_kpv *pv, berth_kvolume_zone *out)
{
    int n = 0;
    for (int z = 0; z < 4; z++) {
        const char *v = berth_labels_get(&pv->labels, zone_keys[z]);
        if (!v)
            continue;
        uint32_t parts = 1;
        for (const char *q = strstr(v, "__"); q; q = strstr(q + 2, "__"))
            parts++;
        const char **vals = k8s_alloc(k, parts, sizeof *vals);
        if (!vals)
            return -1;
        uint32_t nv = 0;
        int bad = 0;
        for (const char *q = v;;) {
            const char *end = strstr(q, "__");
            size_t len = end ? (size_t)(end - q) : strlen(q);
            const char *a = q, *b = q + len;
            while (a < b && (*a == ' ' || *a == '\t' || *a == '\n' || *a == '\r' || *a == '\v' || *a == '\f'))
                a++;
            while (b > a && (b[-1] == ' ' || b[-1] == '\t' || b[-1] == '\n' || b[-1] == '\r' ||
                             b[-1] == '\v' || b[-1] == '\f'))
                b--;
            if (a == b) {
                bad = 1;
                break;
            }
            char *x = berth_arena_alloc(&k->arena, (size_t)(b - a) + 1);
            if (!x)
                return -1;
            memcpy(x, a, (size_t)(b - a));
            x[b - a] = 0;
            vals[nv++] = x;
            if (!end)
                break;
            q = end + 2;
        }
        if (bad)
            continue;
        qsort(vals, nv, sizeof *vals, cmp_cstr);
        uint32_t w = 0;
        for (uint32_t i = 0; i < nv; i++)
            if (!w || strcmp(vals[w - 1], vals[i]))
                vals[w++] = vals[i];
        out[n++] = (berth_kvolume_zone){pv->name, zone_keys[z], vals, w};
    }
    return n;
}

/* (namespace, name) under the tables' key: the names are the input's */
static uint32_t vol_hash(const berth_hashkey *key, const char *ns, const char *name)
{
    return (uint32_t)berth_hash_keyed_then(berth_hash_keyed_then(0, key, ns), key, name);
}

static int same_obj(const char *ns1, const char *n1, const char *ns2, const char *n2)
{
    return !strcmp(n1, n2) && !strcmp(ns1 ? ns1 : "", ns2 ? ns2 : "");
}

/* Resolves every pod's claims: pod -> PVC (its namespace) -> PV, keeping
 * the PVs' zone constraints or the first error (upstream's PreFilter:
 * persistentvolumeclaim "x" not found, persistentvolume "y" not found);
 * an unbound claim (no volumeName) is skipped. Hash tables over PVCs and
 * PVs (a later object of the same name wins) and each PV's constraints
 * computed once: O(pods with claims + PVCs + PVs). 0 or BERTH_ENOMEM. */
int kube_resolve_volumes(berth_kcluster *k)
{
    uint32_t cc = 16, vc = 16;
    while (cc < 2 * k->npvcs)
        cc *= 2;
    while (vc < 2 * k->npvs)
        vc *= 2;
    uint32_t *ct = calloc(cc, sizeof *ct), *vt = calloc(vc, sizeof *vt);
    int *pvn = calloc(k->npvs + 1, sizeof *pvn); /* per PV: constraints + 1, 0 not yet */
    berth_kvolume_zone(*pvz)[4] = malloc((k->npvs + 1) * sizeof *pvz);
    berth_kvolume_zone *buf = NULL;
    uint32_t capbuf = 0;
    int rc = ct && vt && pvn && pvz ? 0 : BERTH_ENOMEM;
    berth_hashkey key;
    berth_hashkey_new(&key);
    for (uint32_t i = 0; !rc && i < k->npvcs; i++) {
        const berth_kpvc *c = &k->pvcs[i];
        uint32_t j = vol_hash(&key, c->ns, c->name) & (cc - 1);
        while (ct[j] && !same_obj(k->pvcs[ct[j] - 1].ns, k->pvcs[ct[j] - 1].name, c->ns, c->name))
            j = (j + 1) & (cc - 1);
        ct[j] = i + 1;
    }
    for (uint32_t i = 0; !rc && i < k->npvs; i++) {
        uint32_t j = vol_hash(&key, NULL, k->pvs[i].name) & (vc - 1);
        while (vt[j] && strcmp(k->pvs[vt[j] - 1].name, k->pvs[i].name))
            j = (j + 1) & (vc - 1);
        vt[j] = i + 1;
    }
    for (uint32_t p = 0; !rc && p < k->npods; p++) {
        berth_kpod *pod = &k->pods[p];
        pod->vol_zones = NULL;
        pod->nvol_zones = 0;
        pod->vol_error = NULL;
        if (!pod->nclaims)
            continue;
        if (capbuf < 4 * pod->nclaims) {
            free(buf);
            capbuf = 4 * pod->nclaims;
            buf = malloc(capbuf * sizeof *buf);
            if (!buf) {
                rc = BERTH_ENOMEM;
                break;
            }
        }
        uint32_t nz = 0;
        char msg[600];
        msg[0] = 0;
        for (uint32_t c = 0; c < pod->nclaims && !msg[0]; c++) {
            uint32_t j = vol_hash(&key, pod->ns, pod->claims[c]) & (cc - 1);
            while (ct[j] && !same_obj(k->pvcs[ct[j] - 1].ns, k->pvcs[ct[j] - 1].name, pod->ns,
                                      pod->claims[c]))
                j = (j + 1) & (cc - 1);
            if (!ct[j]) {
                snprintf(msg, sizeof msg, "persistentvolumeclaim \"%s\" not found", pod->claims[c]);
                break;
            }
            const berth_kpvc *pvc = &k->pvcs[ct[j] - 1];
            if (!pvc->volume_name) /* unbound: VolumeBinding's business */
                continue;
            j = vol_hash(&key, NULL, pvc->volume_name) & (vc - 1);
            while (vt[j] && strcmp(k->pvs[vt[j] - 1].name, pvc->volume_name))
                j = (j + 1) & (vc - 1);
            if (!vt[j]) {
                snprintf(msg, sizeof msg, "persistentvolume \"%s\" not found", pvc->volume_name);
                break;
            }
            uint32_t v = vt[j] - 1;
            if (!pvn[v]) {
                int n = pv_zones(k, &k->pvs[v], pvz[v]);
                if (n < 0) {
                    rc = BERTH_ENOMEM;
                    break;
                }
                pvn[v] = n + 1;
            }
            for (int z = 0; z < pvn[v] - 1; z++)
                buf[nz++] = pvz[v][z];
        }
        if (rc)
            break;
        if (msg[0]) {
            if (!(pod->vol_error = berth_arena_strdup(&k->arena, msg)))
                rc = BERTH_ENOMEM;
        } else if (nz) {
            berth_kvolume_zone *z = k8s_alloc(k, nz, sizeof *z);
            if (!z)
                rc = BERTH_ENOMEM;
            else {
                memcpy(z, buf, nz * sizeof *z);
                pod->vol_zones = z;
                pod->nvol_zones = nz;
            }
        }
    }
    free(ct);
    free(vt);
    free(pvn);
    free(pvz);
    free(buf);
    return rc;
}
