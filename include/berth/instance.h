/* berth/instance.h - the instance catalog shared by disruption (SPEC 4.1)
 * and autoscaling (SPEC 5): berth.io/v1 InstanceType documents (capacity
 * and offerings per zone and capacity type, with price, availability and
 * spot interruption rate) and the capacity types in launch order.
 *
 * Ownership: strings and offering arrays live in the arena handed to the
 * decoder; a table of types is a berth_grow vector owned by the caller.
 *
 * Threads: no global state; decoding writes only the caller's arena and
 * table; a loaded table may be read concurrently. */
#ifndef BERTH_INSTANCE_H
#define BERTH_INSTANCE_H

#include <stdint.h>

#include "berth/arena.h"
#include "berth/doc.h"
#include "berth/error.h"
#include "berth/labels.h"
#include "berth/nameidx.h"

typedef enum berth_capacity_type {
    BERTH_CT_RESERVED,       /* launch order: reserved -> spot -> on-demand */
    BERTH_CT_SPOT,
    BERTH_CT_ON_DEMAND,
    BERTH_CT_COUNT
} berth_capacity_type;
/* "reserved", "spot", "on-demand" -> the type; -1 otherwise. */
int berth_capacity_type_parse(const char *s);
const char *berth_capacity_type_name(berth_capacity_type c);

typedef struct berth_offering {
    const char *zone;
    berth_capacity_type capacity_type;
    double price;                 /* per hour */
    int available;                /* default true */
    double interruption_rate;     /* spot: expected interruptions, a fraction (0.05 = 5 %) */
} berth_offering;

/* Whose node overhead formula an InstanceType follows (spec.provider;
 * absent: from the name, berth_instance_provider_of_name). */
typedef enum berth_provider {
    BERTH_PROVIDER_NONE,          /* no overhead unless given */
    BERTH_PROVIDER_AWS,           /* aws/karpenter-provider-aws */
    BERTH_PROVIDER_AZURE,         /* AKS (Azure/karpenter-provider-azure, AKS docs) */
} berth_provider;
const char *berth_provider_name(berth_provider p);
/* "Standard_D2s_v3" -> Azure, "m5.large"-style -> AWS, else none. */
berth_provider berth_instance_provider_of_name(const char *name);
/* Whose naming an InstanceType's name follows (berth_instance_provider_of):
 * BERTH_PROVIDER_AZURE, BERTH_PROVIDER_AWS, or generic (no derived keys). */
#define BERTH_PROVIDER_GENERIC BERTH_PROVIDER_NONE

typedef struct berth_instance_type {
    const char *name;
    const char *family;           /* spec.family, else the name up to its first '.' */
    /* What a node of this type offers pods: its allocatable, i.e. the
     * capacity minus the node overhead (berth_instance_type_allocatable):
     * millicores, bytes, max pods. Every planner sizes hypothetical nodes
     * with these (DaemonSet pods then take their share, k8s.h). */
    int64_t cpu, memory, pods;
    int64_t gpus;                 /* nvidia.com/gpu */
    berth_offering *offerings;
    uint32_t nofferings;
    /* ---- node overhead (core/instance_overhead.c, docs/disrupt.md "Node overhead") ---- */
    berth_provider provider;
    int64_t capacity_cpu, capacity_memory; /* spec.capacity cpu, memory as written */
    int64_t capacity_pods;        /* spec.capacity.pods (default 110) */
    int64_t max_pods;             /* spec.maxPods, -1 unset */
    int64_t enis, ipv4_per_eni;   /* spec.enis, spec.ipv4PerENI (AWS), 0 unset */
    int64_t kube_reserved[2];     /* cpu millicores, memory bytes: spec.kubeReserved, else
                                   * the provider's formula (-1 in the input: unset) */
    int64_t system_reserved[2];   /* spec.systemReserved (default 0) */
    int64_t eviction_memory;      /* spec.evictionThreshold.memory, else the provider's */
    int64_t vm_overhead_memory;   /* AWS: memory the hypervisor keeps (7.5 %, rounded up to MiB) */
    /* the labels its nodes carry (spec.labels, then the derived ones of
     * berth_instance_type_derive_labels; sorted) and the provider keys it
     * defines as absent (sorted by nothing; few) */
    berth_labels labels;
    const char **absent;
    uint32_t nabsent;
    int naming;                   /* BERTH_PROVIDER_*: whose naming the name follows */
} berth_instance_type;

/* Fills t->cpu, memory, pods (and the resolved kube_reserved,
 * eviction_memory, vm_overhead_memory) from the capacity, the provider and
 * the overrides; -1 in kube_reserved[i] / eviction_memory and max_pods
 * means "the provider's". Allocatable values are at least 0. */
void berth_instance_type_allocatable(berth_instance_type *t);

/* Decodes one InstanceType document (apiVersion already checked; strict:
 * an unknown field is always an error) into *out, strings in a. 0 or
 * BERTH_EINVAL / BERTH_ENOMEM with a located message in d->err. */
int berth_instance_type_decode(berth_dec *d, berth_arena *a, const berth_node *doc,
                               berth_instance_type *out);
/* Decodes doc and appends it to the table *v (n used, cap allocated),
 * rejecting a second type of the same name: names (may be NULL) indexes
 * the table's names (O(1) per type; kept in step here), NULL compares
 * against every earlier type. */
int berth_instance_types_add(berth_dec *d, berth_arena *a, const berth_node *doc,
                             berth_instance_type **v, uint32_t *n, uint32_t *cap,
                             berth_nameidx *names);
/* Index of the type named name in v[0..n), -1 when absent (linear). */
int berth_instance_type_find(const berth_instance_type *v, uint32_t n, const char *name);
/* The offering of t in zone with capacity type ct, NULL when none. */
const berth_offering *berth_instance_offering(const berth_instance_type *t, const char *zone,
                                              berth_capacity_type ct);

/* ---- instance type labels (core/instance_labels.c; the table is in
 * docs/disrupt.md "Instance type labels") ---- */

/* The provider whose naming name follows: Azure ("Standard_" or "Basic_"
 * prefix), AWS ("<family>.<size>", lowercase, digits and '-'), else
 * generic. */
int berth_instance_provider_of(const char *name);
/* An Azure VM size (the SKU name without "Standard_") split as skewer's
 * GetVMSize: ^([A-Z])([A-Z]?)([A-Z]?)([0-9]+)-?((?:[0-9]+)?)
 * ((?:[abcdeiflmnotspPr]+|C+|NP)?)_?(?:NDR_)?(?:((?:xl_)?[A-Z]+[0-9]+[A-Z]*)_?)?
 * (_cc_)?(_[0-9]+_)?(_MI300X_)?(_H100_)?((?:[vV][1-9])?)?(_Promo)?$ with Go's
 * submatch preference. */
typedef struct berth_azure_vmsize {
    char family[2];               /* "D" */
    char subfamily[3];            /* "" or "C", "V", "DC"... */
    char cpus[12];                /* "8" */
    char constrained[12];         /* "2" in M8-2ms_v2, else "" */
    char features[24];            /* "s", "ads", "isr" */
    char accelerator[32];         /* "A100", "T4" (no "xl_"), else "" */
    char version[4];              /* "v3", else "" */
    int confidential_child;       /* _cc_ */
    int promo;                    /* _Promo */
    char series[64];              /* family + subfamily + features + "_" + version: "Ds_v3" */
} berth_azure_vmsize;
/* 0, or -1 when the size does not parse (skewer's error). */
int berth_azure_vmsize_parse(const char *size, berth_azure_vmsize *out);
/* An AWS instance type name split as the AWS provider does:
 * instanceTypeScheme (^[a-z]+)(\-[0-9]+tb)?([0-9]+).*\. gives category and
 * generation; splitting at "." into exactly two parts gives family and
 * size. */
typedef struct berth_aws_instance {
    int has_category;             /* the scheme matched */
    char category[16];            /* "m" */
    char generation[8];           /* "6" */
    char attributes[24];          /* berth: the family after the generation ("i", "gd") */
    int has_family;
    char family[32];              /* "m6i" */
    char size[32];                /* "2xlarge" */
} berth_aws_instance;
int berth_aws_instance_parse(const char *name, berth_aws_instance *out);
/* Sets t->provider, t->labels (t->labels as given by spec.labels, plus each
 * derived label whose key it does not set) and t->absent, in a. 0 or
 * BERTH_ENOMEM. Called by the InstanceType decoder. */
int berth_instance_type_derive_labels(berth_arena *a, berth_instance_type *t);
/* Whether t defines key: a label, or a provider key it lacks. */
int berth_instance_type_defines(const berth_instance_type *t, const char *key);
/* The labels of an offering: topology.kubernetes.io/zone,
 * karpenter.sh/capacity-type, and for Azure kubernetes.azure.com/
 * scalesetpriority (spot, else regular). Returns the count. */
#define BERTH_OFFERING_LABELS 3
uint32_t berth_offering_labels(const berth_instance_type *t, const berth_offering *of,
                               berth_label out[BERTH_OFFERING_LABELS]);

#endif
