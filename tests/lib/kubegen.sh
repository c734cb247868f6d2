# tests/lib/kubegen.sh - sourced by scenarios that need a large cluster in
# the shape the API server emits: `gen_kube NODES PODS` prints a NodeList
# and a PodList as `kubectl get -o json` writes them (typed lists whose
# items have no kind, managedFields, status blocks, owner references).
# gen_kube NODES PODS: a NodeList and a PodList as `kubectl get -o json` writes them
gen_kube() {
  awk -v N="$1" -v P="$2" 'BEGIN {
    printf "{\"apiVersion\":\"v1\",\"kind\":\"NodeList\",\"metadata\":{\"resourceVersion\":\"1000\"},\"items\":["
    for (i = 0; i < N; i++) {
      if (i) printf ","
      printf "{\"metadata\":{\"name\":\"node-%05d\",\"uid\":\"00000000-0000-4000-8000-%012d\",\"resourceVersion\":\"%d\",\"creationTimestamp\":\"2024-05-01T10:00:00Z\",", i, i, 100 + i
      printf "\"labels\":{\"kubernetes.io/hostname\":\"node-%05d\",\"kubernetes.io/os\":\"linux\",\"topology.kubernetes.io/zone\":\"zone-%d\"},", i, i % 3
      printf "\"managedFields\":[{\"manager\":\"kubelet\",\"operation\":\"Update\",\"apiVersion\":\"v1\",\"time\":\"2024-05-01T10:00:00Z\",\"fieldsType\":\"FieldsV1\",\"fieldsV1\":{\"f:metadata\":{\"f:labels\":{}}}}]},"
      printf "\"spec\":{\"podCIDR\":\"10.244.%d.0/24\"},\"status\":{\"capacity\":{\"cpu\":\"4\",\"memory\":\"16Gi\",\"pods\":\"110\"},\"allocatable\":{\"cpu\":\"3860m\",\"memory\":\"12Gi\",\"pods\":\"110\"},", i % 250
      printf "\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\",\"reason\":\"KubeletReady\",\"lastHeartbeatTime\":\"2024-05-02T08:00:00Z\",\"lastTransitionTime\":\"2024-05-01T10:00:00Z\"}]}}"
    }
    printf "]}\n{\"apiVersion\":\"v1\",\"kind\":\"PodList\",\"metadata\":{\"resourceVersion\":\"2000\"},\"items\":["
    for (i = 0; i < P; i++) {
      if (i) printf ","
      printf "{\"metadata\":{\"name\":\"web-%05d\",\"namespace\":\"shop\",\"uid\":\"11111111-0000-4000-8000-%012d\",\"resourceVersion\":\"%d\",\"creationTimestamp\":\"2024-05-01T11:00:00Z\",\"labels\":{\"app\":\"web\"},", i, i, 5000 + i
      printf "\"ownerReferences\":[{\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\",\"name\":\"web-5d9c\",\"uid\":\"22222222-0000-4000-8000-000000000001\",\"controller\":true,\"blockOwnerDeletion\":true}]},"
      printf "\"spec\":{\"schedulerName\":\"default-scheduler\",\"containers\":[{\"name\":\"web\",\"image\":\"nginx:1.25\",\"resources\":{\"requests\":{\"cpu\":\"100m\",\"memory\":\"128Mi\"}}}]},"
      printf "\"status\":{\"phase\":\"Pending\",\"qosClass\":\"Burstable\",\"conditions\":[{\"type\":\"PodScheduled\",\"status\":\"False\",\"reason\":\"Unschedulable\",\"lastTransitionTime\":\"2024-05-01T11:00:00Z\"}]}}"
    }
    printf "]}\n"
  }'
}
