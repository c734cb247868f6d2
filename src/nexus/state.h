/* nexus/state.h - internal: the nexus placement state. Hot per-machine and
 * per-rack columns, per-(rack, SKU) fit counters, one segment tree per SKU
 * over racks (the index behind narrow()), and the placement context (the
 * cluster and pool being placed) whose counters are kept incrementally. */
#ifndef BERTH_NEXUS_STATE_H
#define BERTH_NEXUS_STATE_H

#include "berth/grow.h"
#include "berth/nexus.h"

/* One pick's request: which SKU, for which pool/cluster, where allowed. */
typedef struct nexus_req {
    uint32_t sku;
    uint32_t pool, cluster;
    int32_t cell_cpu;        /* host vCPU needed in each used cell */
    int64_t cell_mem;        /* bytes needed in each used cell */
    uint32_t ncells;         /* cells the VM spans (1 or 2) */
    int xl;
    const uint8_t *allowed;  /* per rack 1/0, NULL = every rack */
    uint32_t chosen_cell;    /* out: first cell picked by reserve */
    uint32_t chosen_mask;    /* out: every cell picked by reserve */
} nexus_req;

/* Fit flags per (machine, sku), as read from the bit columns. */
#define NEXUS_FIT 1u
#define NEXUS_XLFIT 2u   /* fits and already hosts an extra-large VM */

/* Fit class of a (rack, SKU) pair, as kept in cls. */
#define NEXUS_CLS_NOXL 1u  /* no fitting machine hosts an extra-large VM */
#define NEXUS_CLS_NOFIT 2u /* no machine fits */

/* Hot per-machine state, one 16-byte record per machine (four to a cache
 * line): a placement reads and writes one record, not four arrays. */
typedef struct nexus_mstate {
    uint32_t xl_cnt;   /* extra-large VMs hosted */
    uint32_t ctx_cnt;  /* VMs of the context cluster */
    uint32_t ctx_xl;   /* extra-large VMs of the context cluster */
    uint32_t sched;    /* up and not cordoned */
} nexus_mstate;

/* Hot per-rack state, one 32-byte record per rack. */
typedef struct nexus_rstate {
    int64_t cap_cpu, used_cpu;
    uint32_t util;        /* ppm */
    uint32_t ctx_pool;    /* VMs of the context pool */
    uint32_t ctx_cluster; /* VMs of the context cluster */
    uint32_t pad;
} nexus_rstate;

/* Levels of a rack tree: 8-ary min trees over racks. Level 0 (the leaves,
 * one per rack) is not stored: a leaf is the rack's shared key (rkey) ORed
 * with its fit class for the SKU (cls), and the eight leaves under a level-1
 * node are one line of rkey and eight bytes of cls. Level k+1 node j is the
 * minimum of level k nodes 8j..8j+7 (one cache line); the root is node 0 of
 * the top level (at least level 1). 24-bit rack indices: at most 8 levels. */
#define NEXUS_TREE_MAXLEVELS 10

struct berth_nexus_state {
    berth_cycle cycle;
    uint32_t nskus, nracks;
    nexus_mstate *mach;         /* per machine */
    nexus_rstate *rack;         /* per rack */
    /* Per (rack, active SKU) and per (machine word, active SKU) columns are
     * indexed by the SKU's activation slot (slot[sku], in activation
     * order), sstride slots a row (a power of two, at least 8, doubled with
     * a re-layout when more SKUs become active), so that a rack's or a
     * machine's entries of every active SKU share a cache line or two:
     * fitcnt[2 * (r * sstride + a)]: machines of rack r fitting SKU slot a,
     * and the next entry: of those hosting an extra-large VM;
     * bits[2 * (w * sstride + a)]: word w (machines 64w..64w+63, machine m
     * is bit m % 64) of the machines whose fit flags for slot a have
     * NEXUS_FIT, and the next word: NEXUS_XLFIT; a rack's machines are a
     * few words apart by 2 * sstride;
     * cls[a * 8 * ngroups + r]: rack r's fit class for slot a, from its two
     * counters: NEXUS_CLS_NOFIT when none fits, | NEXUS_CLS_NOXL when no
     * fitting machine hosts an extra-large VM (slot-major: a level-1 node's
     * eight racks are eight adjacent bytes);
     * ctxbits: the machines hosting a VM of the context cluster. */
    uint32_t *slot;             /* per sku: activation slot, or BERTH_NEXUS_NONE */
    uint32_t sstride;
    uint32_t words;
    uint32_t *fitcnt;           /* nracks x sstride x 2 */
    uint64_t *bits;             /* words x sstride x 2 */
    uint8_t *cls;               /* sstride x 8 * ngroups */
    uint64_t *ctxbits;          /* words */
    /* per rack (padded to 8 * ngroups, padding UINT64_MAX) the SKU-free
     * part of its tree key: VMs of the context pool, utilisation ppm, rack
     * index (the leaf of SKU s is rkey | the OR of its class) */
    uint64_t *rkey;
    uint32_t ngroups;           /* level-1 nodes: ceil(nracks / 8) */
    /* per active SKU, what one VM needs per used cell (set on activation) */
    int32_t *need_cpu;
    int64_t *need_mem;
    uint8_t *need_cells;
    /* rack trees: per active sku one allocation of tsize keys, level k at
     * toff[k] (64-byte aligned), levels 1..tlevels. Only SKUs that have
     * been asked for are indexed (activated lazily). */
    uint32_t tlevels, tsize, toff[NEXUS_TREE_MAXLEVELS + 1];
    uint64_t **tree;            /* per sku, NULL until active */
    uint32_t *active, nactive;  /* active sku ids */
    /* Trees are brought up to date lazily, from one change log shared by
     * every SKU: a rack's change writes its rkey and appends its level-1
     * group to the log (O(1), whatever the number of active SKUs), unless
     * the group is already logged since the last flush. A SKU's tree is
     * brought up to date by nexus_index_flush before it is read: the groups
     * logged since its cursor, each recomputed once, their paths
     * re-minimised. The log is a ring of clog_mask + 1 entries; a SKU whose
     * cursor fell further behind is rebuilt (O(racks), after at least as
     * many changes). Positions count from 0 and never wrap. */
    uint32_t *clog, clog_mask;
    uint64_t clog_end;          /* position of the next entry */
    uint64_t lastflush;         /* clog_end at the latest flush or activation */
    uint64_t *glast;            /* per group: 1 + position of its last entry, 0: none */
    uint64_t *cursor;           /* per sku: the first log position not applied */
    uint64_t *gseen;            /* scratch bits over groups (all clear between flushes) */
    uint32_t *gscratch;         /* scratch: ngroups group indices */
    /* The hot SKU (the one narrow read last: the SKU being placed), or
     * BERTH_NEXUS_NONE: every change updates its tree at once (one group
     * and its path), so reading it flushes nothing and the log's entries
     * are only for the others. */
    uint32_t hot;
    uint64_t *hot_tree;         /* its tree, class row, class ORs (none, no XL */
    const uint8_t *hot_cls;     /* host, nothing fits x2) */
    uint64_t hot_tab[4];
    /* context */
    uint32_t ctx_cluster, ctx_pool;
    uint32_t *touched_racks, ntouched_racks, captouched_racks;
    uint32_t *touched_machines, ntouched_machines, captouched_machines;
    int touched_lost;       /* a touched list could not grow: clear every counter */
    uint8_t *allowed;           /* scratch rack mask */
    uint32_t *placed, capplaced; /* scratch: VMs placed by the running operation */
    int use_index;
    berth_tiebreak tiebreak;
    /* explain */
    const char *explain_vm;
    FILE *explain_out;
    int *explain_found;
};

/* Machine m's fit flags for active SKU s (NEXUS_FIT | NEXUS_XLFIT). */
static inline uint32_t nexus_fit_flags(const struct berth_nexus_state *st, uint32_t m, uint32_t s)
{
    const uint64_t *w = st->bits + 2 * ((size_t)(m >> 6) * st->sstride + st->slot[s]);
    return (uint32_t)((w[0] >> (m & 63)) & 1) | (uint32_t)(((w[1] >> (m & 63)) & 1) << 1);
}

#define nexus_grow(p, cap, need, elem) berth_grow(p, cap, need, elem, 0)
/* Adds cluster id to the name index (after nclusters counts it). */
int nexus_index_cluster(berth_nexus *nx, uint32_t id);
/* (Re)builds the machine-name index of the site (berth_nexus_find_machine):
 * 0 or BERTH_ENOMEM. */
int nexus_index_machines(berth_nexus *nx);
void nexus_state_free(berth_nexus *nx);

/* Does machine m fit the request now (schedulable not checked)? */
int nexus_machine_fits(const berth_nexus *nx, uint32_t m, const nexus_req *rq);
/* Fills rq for a pool. */
void nexus_req_for_pool(const berth_nexus *nx, uint32_t pool, nexus_req *rq);
/* Recomputes machine m's fit flags and the rack counters/index after its
 * cells, XL count or schedulability changed. */
void nexus_machine_changed(berth_nexus *nx, uint32_t m);
/* Re-keys rack r in every SKU tree (after util, context or fit changes):
 * updates its utilisation and rkey and logs its group for every tree. */
void nexus_rack_rekey(berth_nexus *nx, uint32_t r);
/* Brings sku's tree up to date (no-op when nothing is pending). */
void nexus_index_flush(berth_nexus *nx, uint32_t sku);
/* Sets / clears the placement context (cluster and pool being placed). */
void nexus_ctx_set(berth_nexus *nx, uint32_t cluster, uint32_t pool);
void nexus_ctx_clear(berth_nexus *nx);
/* Counts VM vm into (+1) or out of (-1) the context counters. */
void nexus_ctx_count(berth_nexus *nx, uint32_t vm, int delta, int rekey);
/* Index: returns the racks's best candidate batch (see pipeline narrow). */
int nexus_narrow(void *state, const void *req, uint32_t *cand, uint32_t cap);
int nexus_index_init(berth_nexus *nx);
/* Starts indexing sku (fit flags, counters, tree). 0 or BERTH_ENOMEM. */
int nexus_sku_activate(berth_nexus *nx, uint32_t sku);
/* Recomputes every counter, fit flag and rack tree of the index from the
 * model (cells, machines, VMs) and compares: 0 when all agree, else -1 with
 * the first disagreement in msg. Flushes pending re-keys. Expects no
 * placement context (between operations). For tests. */
int nexus_index_check(berth_nexus *nx, char *msg, size_t size);

#endif
