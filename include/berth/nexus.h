/* berth/nexus.h - bare-metal VM placement (Azure Operator Nexus, SPEC 1).
 *
 * The model: a site of racks (a rack is an availability zone), machines
 * with NUMA cells, a VM SKU catalog, NKS clusters (a control plane and
 * agent pools) and a timeline of steps (create a cluster, delete it, scale
 * or add a pool, cordon/uncordon a machine, a rack-by-rack runtime
 * upgrade). berth_nexus_run places every VM through the shared pipeline
 * (berth/pipeline.h) with the nexus plugins: filters Schedulable,
 * NumaFit, Zones; lexicographic scores RackSpread, MachineSpread,
 * PackExtraLarge, RackUtilisation; candidates are machines, and a
 * per-SKU rack index narrows each pick to one rack.
 *
 * Ownership: a berth_nexus owns everything it holds; strings live in its
 * arena. Indices (rack, machine, pool, cluster, vm) are uint32_t and stable
 * for the life of the object.
 *
 * Threads: the library keeps no mutable global state. Distinct models may
 * be used from different threads at once; one model from one thread at a
 * time (placement and steps change it). */
#ifndef BERTH_NEXUS_H
#define BERTH_NEXUS_H

#include <stdint.h>
#include <stdio.h>

#include "berth/arena.h"
#include "berth/doc.h"
#include "berth/error.h"
#include "berth/nameidx.h"
#include "berth/pipeline.h"

#define BERTH_NEXUS_MAX_CELLS 8
#define BERTH_NEXUS_NONE UINT32_MAX
#define BERTH_NEXUS_MAX_MACHINES (4u * 1024u * 1024u)
#define BERTH_NEXUS_MAX_SKUS 1024

typedef struct berth_sku {
    const char *name;
    int32_t vcpu;        /* guest vCPU */
    int32_t host_vcpu;   /* host vCPU consumed (vcpu + 2 for performance SKUs) */
    int64_t memory;      /* bytes */
    int32_t numa_cells;  /* 1, or 2 for memory-optimised SKUs split over both cells */
    int extra_large;     /* packs with other clusters' extra-large VMs (rule 3) */
    int builtin;
} berth_sku;

typedef struct berth_rack {
    const char *name;            /* the zone name, "1".."N" */
    uint32_t first_machine;      /* machines of a rack are contiguous */
    uint32_t nmachines;
} berth_rack;

typedef struct berth_machine {
    const char *name;            /* bareMetalMachineId */
    uint32_t rack;
    uint32_t first_cell;         /* cells of a machine are contiguous */
    uint32_t ncells;
    int cordoned;
    int down;                    /* readyState False, or being re-imaged */
} berth_machine;

typedef struct berth_cell {
    int32_t cpu, used_cpu;       /* host vCPU */
    int64_t memory, used_memory; /* bytes */
} berth_cell;

typedef enum berth_pool_role { BERTH_ROLE_CONTROL_PLANE, BERTH_ROLE_WORKER } berth_pool_role;

typedef struct berth_vm {
    uint32_t pool;
    uint32_t machine;            /* BERTH_NEXUS_NONE when removed */
    uint32_t cell;               /* first NUMA cell index within the machine */
    uint32_t cells_mask;         /* every cell the VM uses (bit i = cell i) */
    uint32_t ordinal;            /* the number in its name */
} berth_vm;

typedef struct berth_pool {
    const char *name;            /* "control-plane" for the control plane */
    uint32_t cluster;
    berth_pool_role role;
    uint32_t sku;
    int32_t count;               /* desired */
    uint32_t *zones;             /* allowed rack indices; nzones 0 = any */
    uint32_t nzones;
    uint32_t *vms;               /* live VM ids in placement order */
    uint32_t nvms, capvms;
    uint32_t next_ordinal;
} berth_pool;

typedef enum berth_cluster_status {
    BERTH_CLUSTER_PENDING,
    BERTH_CLUSTER_SUCCEEDED,
    BERTH_CLUSTER_FAILED,
    BERTH_CLUSTER_DELETED,
} berth_cluster_status;

typedef struct berth_cluster {
    const char *name;
    berth_cluster_status status;
    const char *reason;          /* "" when none */
    uint32_t *pools;             /* pool ids, control plane first */
    uint32_t npools, cappools;
} berth_cluster;

typedef enum berth_step_kind {
    BERTH_STEP_CREATE_CLUSTER,
    BERTH_STEP_DELETE_CLUSTER,
    BERTH_STEP_SCALE_POOL,
    BERTH_STEP_ADD_POOL,
    BERTH_STEP_CORDON,
    BERTH_STEP_UNCORDON,
    BERTH_STEP_RUNTIME_UPGRADE,
} berth_step_kind;

typedef struct berth_update_strategy {
    int pause_after_rack;        /* strategyType PauseAfterRack */
    int64_t max_unavailable;     /* machines of a rack at once, default 32767 */
    int count_success;           /* thresholdType CountSuccess (else PercentSuccess) */
    int64_t threshold_value;     /* default 80 */
    int64_t wait_time_minutes;   /* default 15 */
    int64_t reimage_minutes;     /* berth's estimate of one re-image, default 60 */
} berth_update_strategy;

/* One pool's row in a step's table, captured at the end of the step. */
typedef struct berth_step_row {
    uint32_t pool;
    int32_t count;               /* desired */
    uint32_t placed;             /* live VMs */
    uint32_t racks_used;
    uint32_t *per_rack;          /* VMs per rack, indexed by rack (nracks entries) */
} berth_step_row;

/* One batch of a runtime upgrade: the machines re-imaged together. */
typedef struct berth_upgrade_batch {
    uint32_t rack;
    uint32_t batch, nbatches;    /* 1-based batch within the rack */
    uint32_t machines_down;
    uint32_t vms_down;
    uint32_t *pool_down;         /* per pool touched: pool id, VMs down, VMs of the pool */
    uint32_t npool_down;         /* entries (each 3 uint32) */
    uint32_t *quorum_lost;       /* cluster ids whose control plane lost quorum */
    uint32_t nquorum_lost;
    uint32_t *pools_zero;        /* pool ids with no VM running */
    uint32_t npools_zero;
    int64_t start_minute;        /* offset from the upgrade's start */
    uint32_t threshold_machines; /* machines that must come back for the rack to count */
    uint32_t first_machine;      /* the batch's machines: first_machine .. + machines_down */
} berth_upgrade_batch;

typedef struct berth_step {
    berth_step_kind kind;
    const char *name;            /* Operation or cluster name */
    const char *source;          /* "file:line" where the step was declared */
    /* arguments */
    const char *cluster, *pool;  /* names */
    int64_t count;
    const char *sku;
    const char **zones;
    uint32_t nzones;
    const char *machine;
    const char *sku_where, *zones_where, *machine_where; /* located field paths */
    berth_update_strategy strategy;
    uint32_t spec_doc;           /* index of the cluster/pool spec for create/add */
    /* result */
    int failed;                  /* something could not be placed */
    const char *reason;
    berth_step_row *rows;
    uint32_t nrows;
    berth_upgrade_batch *batches;
    uint32_t nbatches;
} berth_step;

/* A cluster as declared (create-cluster steps refer to it). */
typedef struct berth_pool_spec {
    const char *name;
    berth_pool_role role;
    const char *sku;
    int64_t count;
    const char **zones;
    uint32_t nzones;
    const char *where;           /* "file:line:col" of the pool, for messages */
    const char *sku_where;       /* "file:line:col: path.vmSkuName" */
    const char *zones_where;     /* "file:line:col: path.availabilityZones" ("" if none) */
} berth_pool_spec;

typedef struct berth_cluster_spec {
    const char *name;
    berth_pool_spec *pools;
    uint32_t npools;
    const char *where;
} berth_cluster_spec;

typedef struct berth_nexus_state berth_nexus_state; /* placement columns and indexes */

typedef struct berth_nexus {
    berth_arena arena;
    const char *site_name;
    berth_rack *racks;       uint32_t nracks;
    berth_machine *machines; uint32_t nmachines;
    berth_cell *cells;       uint32_t ncells;
    berth_sku *skus;         uint32_t nskus, capskus;
    berth_cluster_spec *specs; uint32_t nspecs, capspecs;
    berth_step *steps;       uint32_t nsteps, capsteps;
    /* state after running */
    berth_cluster *clusters; uint32_t nclusters, capclusters;
    berth_pool *pools;       uint32_t npools, cappools;
    berth_vm *vms;           uint32_t nvms, capvms;
    berth_nexus_state *state;
    int have_site;
    /* open-addressing index of live cluster names -> id+1 (0 = empty),
     * hashed under cluster_key (drawn by berth_nexus_init: cluster names
     * are the clients', and an unkeyed hash lets them pick names that
     * share one slot) */
    uint32_t *cluster_index;
    uint32_t cluster_index_cap;  /* power of two */
    unsigned char cluster_key[BERTH_NAMEIDX_KEY];
    /* machine name -> index (berth_nexus_find_machine), built with the site */
    berth_nameidx machine_idx;
} berth_nexus;

typedef struct berth_nexus_options {
    int partial;             /* best effort: keep what fits (--partial) */
    int use_index;           /* 1 (default): indexed picks; 0: plain full scans */
    berth_tiebreak tiebreak; /* FIRST (default) or RANDOM (full scans, seeded) */
    uint64_t seed;
    const char *explain_vm;  /* VM name to explain, or NULL */
    FILE *explain_out;       /* where the explanation goes */
    int *explain_found;      /* when not NULL: set to 1 once explain_vm was explained */
    /* when not NULL: called by berth_nexus_run after each step (also a
     * failed one) with the estate as that step left it (a runtime
     * upgrade's batches filled); a non-zero return stops the run with it
     * (berth simulate --workloads: the kube view per step, crosslayer.h) */
    int (*on_step)(void *ctx, const berth_nexus *nx, uint32_t step, berth_error *e);
    void *step_ctx;
} berth_nexus_options;

void berth_nexus_init(berth_nexus *nx);
void berth_nexus_free(berth_nexus *nx);

/* Adds the built-in SKU catalog (SPEC 1.2). berth_nexus_init does it. */
int berth_nexus_add_builtin_skus(berth_nexus *nx);
/* Index of a SKU by name, or BERTH_NEXUS_NONE. */
uint32_t berth_nexus_find_sku(const berth_nexus *nx, const char *name);
uint32_t berth_nexus_find_rack(const berth_nexus *nx, const char *name);
uint32_t berth_nexus_find_machine(const berth_nexus *nx, const char *name);

/* Decodes every document of src (Site, VmSku, KubernetesCluster,
 * Operation, List of those). Clusters and operations become timeline steps
 * in document order. strict: unknown fields in Azure kinds are errors too.
 * Returns 0 or BERTH_EINVAL with a located message. */
int berth_nexus_load(berth_nexus *nx, const berth_source *src, int strict, berth_error *e);

/* Checks cross-document references once everything is loaded: a Site
 * exists, every SKU and zone named by a cluster or operation exists, every
 * machine named by an operation exists. BERTH_EINVAL with a location. */
int berth_nexus_validate(const berth_nexus *nx, berth_error *e);

/* Builds a compact site programmatically (tests, benchmarks): nracks
 * racks "1".."N" of per_rack machines, each with ncells cells. */
int berth_nexus_make_site(berth_nexus *nx, uint32_t nracks, uint32_t per_rack, uint32_t ncells,
                          int32_t cell_cpu, int64_t cell_memory, berth_error *e);

/* Runs the timeline from the start. Returns 0 when everything was placed,
 * BERTH_ENOFIT when a step could not place something (see steps[].failed),
 * or another error. May be called once per loaded model. */
int berth_nexus_run(berth_nexus *nx, const berth_nexus_options *opt, berth_error *e);

/* ---- incremental API (used by run, tests, benchmarks and the server) ---- */

/* Prepares placement state after the site and SKUs are set. */
int berth_nexus_prepare(berth_nexus *nx, const berth_nexus_options *opt, berth_error *e);
/* Creates a cluster from spec and places it (all-or-nothing unless partial).
 * *cluster_out receives its id. BERTH_ENOFIT with a reason when it does not fit. */
int berth_nexus_create_cluster(berth_nexus *nx, const berth_cluster_spec *spec,
                               const berth_nexus_options *opt, uint32_t *cluster_out,
                               berth_error *e);
int berth_nexus_delete_cluster(berth_nexus *nx, uint32_t cluster, berth_error *e);
/* Sets a pool's count: adds VMs (placed) or removes the newest ones.
 * BERTH_ENOFIT with a reason when they do not fit (none kept unless
 * opt->partial; the count stays the one asked); any other error (out of
 * memory) leaves the pool as it was, with a message. */
int berth_nexus_scale_pool(berth_nexus *nx, uint32_t pool, int64_t count,
                           const berth_nexus_options *opt, berth_error *e);
int berth_nexus_add_pool(berth_nexus *nx, uint32_t cluster, const berth_pool_spec *ps,
                         const berth_nexus_options *opt, uint32_t *pool_out, berth_error *e);
/* Places one more VM of pool on machine, in exactly the NUMA cells of
 * cells_mask (bit i = cell i), named with ordinal: a recorded decision
 * applied without planning (berth serve's log, docs/ARCHITECTURE.md). The
 * pool's desired count is not changed. BERTH_ENOFIT with a message when the
 * machine is cordoned or down, outside the pool's zones, or a named cell
 * lacks room; BERTH_EINVAL when the mask does not name the SKU's number of
 * the machine's cells or the ordinal was already used. */
int berth_nexus_place_at(berth_nexus *nx, uint32_t pool, uint32_t machine, uint32_t cells_mask,
                         uint32_t ordinal, berth_error *e);
int berth_nexus_set_cordon(berth_nexus *nx, uint32_t machine, int cordoned, berth_error *e);
/* Runtime upgrade report into step (batches); the estate is unchanged after it. */
int berth_nexus_runtime_upgrade(berth_nexus *nx, berth_step *step, berth_error *e);

uint32_t berth_nexus_find_cluster(const berth_nexus *nx, const char *name);
uint32_t berth_nexus_find_pool(const berth_nexus *nx, uint32_t cluster, const char *name);

/* Formats a VM's name ("<cluster>-<pool>-<ordinal>") into buf. */
void berth_nexus_vm_name(const berth_nexus *nx, uint32_t vm, char *buf, size_t size);

/* Writes rack names of zones[] as "1, 4, 7" into buf (truncated to size). */
void berth_nexus_format_zones(const berth_nexus *nx, const uint32_t *zones, uint32_t n, char *buf,
                              size_t size);

/* Rack utilisation in parts per million of the rack's host vCPU (floor). */
uint32_t berth_nexus_rack_util_ppm(const berth_nexus *nx, uint32_t rack);

/* How many more VMs of sku fit now: overall, and per rack into per_rack
 * (nracks entries, may be NULL). */
uint64_t berth_nexus_max_fit(const berth_nexus *nx, uint32_t sku, uint64_t *per_rack);

/* The nexus placement profile (plugins over the shared pipeline). */
const berth_profile *berth_nexus_profile(void);

#endif
