/* kube/load.h - the kube loader's kinds, one file each (internal to
 * src/kube/load*.c). Each decodes one document already checked for kind
 * and apiVersion and appends it to the cluster. */
#ifndef BERTH_KUBE_LOAD_H
#define BERTH_KUBE_LOAD_H

#include "berth/kube.h"

extern const char *const kube_top_fields[];

uint32_t kube_node_index_find(const berth_kcluster *k, const char *name);
int kube_node_index_add(berth_kcluster *k, uint32_t id);
int kube_load_node(berth_kcluster *k, berth_dec *d, const berth_node *doc);
int kube_load_pod(berth_kcluster *k, berth_dec *d, const berth_node *doc);
int kube_load_namespace(berth_kcluster *k, berth_dec *d, const berth_node *doc);
int kube_load_service(berth_kcluster *k, berth_dec *d, const berth_node *doc);
/* Deployment, ReplicaSet, ReplicationController, StatefulSet, DaemonSet,
 * Job: a selector entry in workloads and a controller (load_workloads.c) */
int kube_load_workload(berth_kcluster *k, berth_dec *d, const berth_node *doc, const char *kind);
int kube_load_priority_class(berth_kcluster *k, berth_dec *d, const berth_node *doc);
int kube_load_pdb(berth_kcluster *k, berth_dec *d, const berth_node *doc);
int kube_load_pvc(berth_kcluster *k, berth_dec *d, const berth_node *doc);
int kube_load_pv(berth_kcluster *k, berth_dec *d, const berth_node *doc);
/* pods' claims -> PVCs -> PVs' zones, once the files are in */
int kube_resolve_volumes(berth_kcluster *k);
int kube_load_ksc(berth_kcluster *k, berth_dec *d, const berth_node *doc);

#endif
