/* kube/labelcols.h - internal: per-key node label columns (kube/labelcols.c)
 * and NodeAffinity's Filter verdict read from them.
 *
 * For a label key, a column holds one value id per node (0: the node has
 * no such label; ids from 1 name the distinct values, interned by text),
 * built with one label lookup per node the first time a pod's
 * nodeSelector or required node affinity names the key. A requirement then
 * becomes a table over the key's value ids (filled by the label code's own
 * matcher on each distinct value, so In / NotIn / Exists / DoesNotExist /
 * Gt / Lt keep berth_requirement_matches' semantics exactly), and a node's
 * verdict is a column read and a table read per requirement: no label
 * search per node and pod class, and the per-node data read is 4 bytes a
 * key in node order instead of each node's label strings.
 *
 * Thread rules: a kube_labelcols belongs to one thread (columns are built
 * lazily by kube_labelcols_affinity); the nodes it was opened on must stay
 * unchanged and alive while it is open. */
#ifndef BERTH_KUBE_LABELCOLS_H
#define BERTH_KUBE_LABELCOLS_H

#include "berth/hash.h"
#include "berth/kube.h"

#include <stdint.h>

typedef struct kube_labelcols kube_labelcols;

/* Columns over nodes[0..nnodes) (none built yet), their tables hashed
 * under key (copied: the owner's, berth/hash.h). 0 or BERTH_ENOMEM. */
int kube_labelcols_open(kube_labelcols **out, const berth_knode *nodes, uint32_t nnodes,
                        const berth_hashkey *key);
void kube_labelcols_close(kube_labelcols *c);

/* NodeAffinity's Filter for pod p without a profile's addedAffinity (the
 * pod's nodeSelector, then its required node affinity terms, ORed), as
 * kube/plugins_node.c f_affinity decides it: for each node list[i]
 * (indices into the nodes the columns were opened on) that does not match,
 * v[i] = BERTH_UNRESOLVABLE; matching nodes' v[i] are left alone.
 * Returns 0, 1 when p is not one this answers for (a term with
 * matchFields: nothing written, ask the plugin), or BERTH_ENOMEM. */
int kube_labelcols_affinity(kube_labelcols *c, const berth_kpod *p, const uint32_t *list,
                            uint32_t n, uint8_t *v);

/* The number of columns built (tests). */
uint32_t kube_labelcols_ncols(const kube_labelcols *c);
/* The longest run of used slots in the columns' table by key (tests). */
uint32_t kube_labelcols_longest_run(const kube_labelcols *c);

#endif
