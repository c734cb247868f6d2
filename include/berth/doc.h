/* berth/doc.h - input documents as a located tree, and typed field access.
 *
 * Every input file (YAML, or JSON, which libyaml reads as YAML flow style)
 * becomes a list of documents; each node remembers its line and column, so
 * a decoder can say "file:line:column: spec.pools[1].count: expected ...".
 * A file whose first non-blank character is `{` is a JSON stream: several
 * JSON values back to back (`kubectl cluster-info dump`), with the dump's
 * container log sections between them skipped. The tree lives in the
 * caller's arena.
 *
 * Threads: parsing keeps no global state; distinct sources and arenas may
 * be used from different threads. A parsed tree is read-only and may be
 * read concurrently. */
#ifndef BERTH_DOC_H
#define BERTH_DOC_H

#include <stddef.h>
#include <stdint.h>

#include "berth/arena.h"
#include "berth/error.h"
#include "berth/labels.h"
#include "berth/quantity.h"
#include "berth/taints.h"

typedef enum berth_node_type {
    BERTH_NODE_SCALAR,
    BERTH_NODE_MAP,
    BERTH_NODE_SEQ,
} berth_node_type;

typedef struct berth_node berth_node;
typedef struct berth_map_entry { berth_node *key, *value; } berth_map_entry;

/* 32 bytes (a kubectl dump of 50k nodes makes 13 million of them): the
 * type and quoted flag in bytes, the count in 32 bits (a document is at
 * most BERTH_DOC_MAX_BYTES), a map's entries and a seq's items sharing one
 * pointer: read entries only when type is BERTH_NODE_MAP, items only when
 * it is BERTH_NODE_SEQ (scalars leave both unset). */
struct berth_node {
    uint8_t type;             /* a berth_node_type */
    uint8_t quoted;           /* scalar was written in quotes */
    int line, col;            /* 1-based */
    uint32_t n;               /* entries (map) or items (seq) */
    const char *str;          /* scalar text (NUL-terminated), "" otherwise */
    union {
        berth_map_entry *entries; /* map */
        berth_node **items;       /* seq */
    };
};

typedef struct berth_source {
    const char *path;         /* as given by the caller */
    size_t ndocs;
    berth_node **docs;        /* top-level nodes, empty documents skipped */
} berth_source;

/* Limits on input growth. */
#define BERTH_DOC_MAX_DEPTH 64
#define BERTH_DOC_MAX_BYTES (256u * 1024u * 1024u)

/* Parses a file (path "-" reads stdin) or a memory buffer into src.
 * Syntax errors: BERTH_EINVAL with "path:line:col: message". A JSON stream
 * (first character other than blanks and `#` comment lines is `{`) is split
 * into its top-level values, each a document with the lines and columns of
 * the file; text between values other than blanks, `#` comment lines and
 * `==== START logs for container C of pod NS/NAME ====` ... `==== END logs
 * for container C of pod NS/NAME ====` sections makes the whole buffer go
 * to the YAML parser instead (and its error). */
int berth_doc_load_file(berth_arena *a, const char *path, berth_source *src, berth_error *e);
int berth_doc_load_buffer(berth_arena *a, const char *name, const char *buf, size_t len,
                          berth_source *src, berth_error *e);

/* ---- streaming: documents and List items handed over as they are parsed ----
 * A kubectl dump of 50k nodes is a 120 MB file whose tree takes 600 MB;
 * streamed, each top-level document is built, handed over and released,
 * and so is each item of its `items` sequence, so the tree never holds
 * more than one object (docs/disrupt.md "Streaming the input"). Scalar
 * texts stay in the arena: strings read from a node outlive it. Anchors
 * keep their document or item alive (an alias may name them later). */
typedef struct berth_doc_stream {
    /* An item of the `items` sequence of a top-level mapping, once
     * parsed: list_kind and list_api are that mapping's kind and
     * apiVersion if they came before `items` (NULL otherwise), index the
     * item's position. 1: taken (its nodes are released after the call:
     * keep no pointer to them); 0: keep it in its document, and every later
     * item of this List too; < 0: an error (set in the berth_error), the
     * parse stops. Items that are not mappings are always kept. */
    int (*item)(void *ctx, const char *list_kind, const char *list_api, size_t index,
                const berth_node *item);
    /* A top-level document once parsed (null documents skipped), its first
     * `streamed` items taken by item (the rest are in its items). Its nodes
     * are released after the call. 0 or an error. */
    int (*doc)(void *ctx, const berth_node *doc, size_t streamed);
    void *ctx;
} berth_doc_stream;
/* berth_doc_load_file / _buffer with every document handed to st instead
 * of kept; *ndocs: documents handed over. */
int berth_doc_stream_file(berth_arena *a, const char *path, const berth_doc_stream *st,
                          size_t *ndocs, berth_error *e);
int berth_doc_stream_buffer(berth_arena *a, const char *name, const char *buf, size_t len,
                            const berth_doc_stream *st, size_t *ndocs, berth_error *e);

/* ---- kinds a loader does not use (SPEC 6.1) ---- */

/* One skipped kind: how many documents of it, and an optional note
 * printed after the count ("not expanded: ..."). Or, with `message`, one
 * planner warning: input a planner ignores (a NodeClaim without its Node,
 * a headroom unit no instance type holds, ...), its whole text in kind. */
typedef struct berth_skip {
    char *kind;               /* owned; the text itself when message */
    const char *note;         /* static text or NULL */
    uint32_t count;           /* documents skipped; 1 for a message */
    int message;              /* 1: a planner warning (berth_skips_warn) */
} berth_skip;

/* The skip counts of one model, over every file loaded into it, in order
 * of first appearance, then the planners' warnings about the input (added
 * by the models' finalize steps: one list, one `warnings` array). Zero-
 * initialised is empty. Each model that reads
 * Kubernetes objects owns one (berth_kcluster.skipped, berth_fleet.skipped)
 * and its loaders count into it through berth_dec_skip; the report code
 * (berth_report_warnings_*) prints it. */
typedef struct berth_skips {
    berth_skip *items;
    uint32_t n, cap;
} berth_skips;

/* Counts one document of kind (note: static text kept with the kind's
 * first entry). 0 or BERTH_ENOMEM. O(kinds skipped). */
int berth_skips_add(berth_skips *s, const char *kind, const char *note);
/* Adds a planner warning (printf format; a text already present is not
 * added twice). 0 or BERTH_ENOMEM. */
int berth_skips_warn(berth_skips *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The items a planner warning names: a count and the first
 * BERTH_WARN_NAMES_SHOWN of them as text ("a (node x), b"); zero-
 * initialised is empty. */
#define BERTH_WARN_NAMES_SHOWN 5
typedef struct berth_warn_names {
    uint32_t n;
    size_t len;
    char text[512];
} berth_warn_names;
/* Counts one more item; the first BERTH_WARN_NAMES_SHOWN are appended
 * (printf format), comma-separated. */
void berth_warn_names_add(berth_warn_names *w, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* When w holds an item: the warning "N NOUN[s] WHAT: names[, and K more]"
 * (the plural adds "s" to noun). 0 or BERTH_ENOMEM. */
int berth_skips_warn_names(berth_skips *s, const berth_warn_names *w, const char *noun,
                           const char *what);
/* Total documents skipped (messages not counted). */
uint32_t berth_skips_total(const berth_skips *s);
/* "skipped 12 ConfigMap" or "skipped 2 CronJob (not expanded: ...)" into
 * buf (truncated to len); a message's own text. */
void berth_skip_text(const berth_skip *s, char *buf, size_t len);
void berth_skips_free(berth_skips *s);

/* ---- typed access with a field path for errors ---- */

/* A decoding context: the source (for the file name), a path stack and the
 * error record. Decoders push a field name or index, read, then pop. */
typedef struct berth_dec {
    const char *file;
    char path[512];
    size_t plen;
    int strict;               /* unknown fields are errors for every kind */
    berth_error *err;
    berth_arena *arena;
    berth_skips *skips;       /* kinds skipped (berth_dec_skip); NULL: none are */
} berth_dec;

void berth_dec_init(berth_dec *d, berth_arena *a, const char *file, berth_error *e);
/* Path helpers; push returns the previous length to restore with pop. */
size_t berth_dec_push(berth_dec *d, const char *field);
size_t berth_dec_push_index(berth_dec *d, size_t i);
void berth_dec_pop(berth_dec *d, size_t prev);

/* Reports an error at node n (or the file when n is NULL) and returns BERTH_EINVAL. */
int berth_dec_fail(berth_dec *d, const berth_node *n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* A table that could not grow for the input (berth_grow's rc): out of
 * memory says so (BERTH_ENOMEM, never bad input), its limit is bad input
 * at n ("too many WHAT", BERTH_EINVAL). */
int berth_dec_grow_fail(berth_dec *d, const berth_node *n, int rc, const char *what);
/* berth_dec_fail at field key of map m (at m's place when the field is
 * absent), with key on the field path for the message. */
int berth_dec_fail_field(berth_dec *d, const berth_node *m, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Value of key in map m, or NULL when m is not a map or lacks the key. A
 * present key with an explicit null (~, null, empty) yields NULL too. */
berth_node *berth_node_get(const berth_node *m, const char *key);
/* A deep copy of n's nodes in a (scalar texts are shared, not copied): for
 * a part of a document kept after the document's own nodes are released
 * (a streamed List item, berth_dec_walk_file). NULL when n is NULL, out
 * of memory or deeper than BERTH_DOC_MAX_DEPTH (an alias cycle). */
berth_node *berth_node_copy(berth_arena *a, const berth_node *n);
int berth_node_is_null(const berth_node *n);

/* Levenshtein distance of two short strings (99 when either is longer than
 * 64 bytes): "did you mean" suggestions for fields, kinds, commands. */
size_t berth_edit_distance(const char *a, const char *b);

/* Checks that every key of map m is in the NULL-terminated list allowed;
 * an unknown key is an error naming it and the nearest allowed key. */
int berth_dec_known_fields(berth_dec *d, const berth_node *m, const char *const *allowed);

/* Typed readers: read key `key` of map m. `required` makes absence an
 * error; otherwise *out is left unchanged when absent. Each validates the
 * type and reports "expected ..., got '...'" at the node. */
int berth_dec_map(berth_dec *d, const berth_node *m, const char *key, int required, berth_node **out);
int berth_dec_seq(berth_dec *d, const berth_node *m, const char *key, int required, berth_node **out);
int berth_dec_str(berth_dec *d, const berth_node *m, const char *key, int required, const char **out);
int berth_dec_int(berth_dec *d, const berth_node *m, const char *key, int required,
                  int64_t min, int64_t max, int64_t *out);
int berth_dec_bool(berth_dec *d, const berth_node *m, const char *key, int required, int *out);
int berth_dec_quantity(berth_dec *d, const berth_node *m, const char *key, int required,
                       berth_quantity *out);
/* Reads a string that must be one of the NULL-terminated choices; *out is
 * its index. Absent and not required: *out unchanged. */
int berth_dec_enum(berth_dec *d, const berth_node *m, const char *key, int required,
                   const char *const *choices, int *out);
/* Reads the string map at key of parent (labels, annotations, selectors'
 * matchLabels) into out, sorted, in d->arena; validate checks label key and
 * value syntax. Absent: out is empty. A repeated key is an error. */
int berth_dec_labels(berth_dec *d, const berth_node *parent, const char *key, berth_labels *out,
                     int validate);

/* A top-level document's kind: doc must be an object with a string `kind`
 * ("expected an object with apiVersion and kind" at doc otherwise). 0 with
 * *kind set, or the located error. Every loader starts with it. */
int berth_dec_kind(berth_dec *d, const berth_node *doc, const char **kind);
/* Whether kind is "List" or ends in "List" (PodList, NodeClaimList, ...). */
int berth_kind_is_list(const char *kind);
/* A document of a kind this loader does not use: counted in d->skips under
 * kind (with note, static text or NULL) and 0. With d->strict, or without
 * a table, the located error at doc's kind instead: "unknown kind 'K'
 * (NOTE; KNOWN)", where known lists the kinds the loader reads. */
int berth_dec_skip(berth_dec *d, const berth_node *doc, const char *kind, const char *note,
                   const char *known);
/* metadata.annotations[key] of doc when it is a string, else NULL (no
 * error: for optional annotations read beside a loader). */
const char *berth_node_annotation(const berth_node *doc, const char *key);
/* A list of taints at parent[key] (absent: none): each a mapping with key,
 * value and effect (NoSchedule, PreferNoSchedule, NoExecute), validated;
 * with strict, fields outside `fields` are errors. The array lives in a. */
int berth_dec_taints(berth_dec *d, berth_arena *a, const berth_node *parent, const char *key,
                     const char *const *fields, int strict, berth_taint **out, uint32_t *n);
/* Requires doc's apiVersion to be exactly want ("kind K needs apiVersion
 * W, got 'X'" at the field otherwise). */
int berth_dec_api(berth_dec *d, const berth_node *doc, const char *kind, const char *want);

/* Decodes a `kind: List` document: calls fn on each of its `items` with the
 * field path set ("items[3]") and depth + 1; Lists nest at most 4 deep.
 * Stops at the first error. A typed list (`kind: <X>List`, as the API
 * server returns it: NodeList, PodList, ...) gives an item mapping without
 * `kind` the kind X, and without `apiVersion` the list's apiVersion: fn
 * then sees a shallow copy of the item (in d->arena) with those entries
 * added, located at the item. Items of `kind: List` keep their own (an
 * item without kind stays an error of fn's). */
int berth_dec_list(berth_dec *d, const berth_node *doc, int depth,
                   int (*fn)(void *ctx, berth_dec *d, const berth_node *item, int depth),
                   void *ctx);
/* berth_dec_list of a List whose first `first` items were already read
 * (streamed: berth_dec_walk_file): its items are numbered from first. */
int berth_dec_list_from(berth_dec *d, const berth_node *doc, int depth, size_t first,
                        int (*fn)(void *ctx, berth_dec *d, const berth_node *item, int depth),
                        void *ctx);
/* The item of a typed list as the loaders see it (berth_dec_list): item
 * itself when it has kind and apiVersion (or is no mapping), else a
 * shallow copy in a with the missing entries first (kind: item_kind,
 * apiVersion: api, unless NULL), located at the item. 0 or BERTH_ENOMEM. */
int berth_dec_typed_item(berth_dec *d, berth_arena *a, const berth_node *item,
                         const char *item_kind, const char *api, const berth_node **out);
/* ---- the kind dispatch every loader uses (io/walk.c) ----
 *
 * A loader describes the kinds it reads as a table; berth_dec_walk reads a
 * document's kind, recurses into Lists (berth_dec_list: typed lists' items
 * take the list's kind), checks the apiVersion and the top-level fields of
 * the kinds in the table, and hands each document to its handler. A kind
 * not in the table goes to the walker's `other` (disrupt and autoscale:
 * "not mine, the kube loader's"), else is skipped through berth_dec_skip
 * with the hint "<input> input has A, B, ..., List" built from the table. */

typedef struct berth_kind_handler berth_kind_handler;
struct berth_kind_handler {
    const char *kind;
    /* accepted apiVersions, NULL-terminated; NULL: not checked here */
    const char *const *api;
    /* what the apiVersion error says is wanted; NULL: api joined by " or " */
    const char *api_text;
    /* the top-level fields (NULL-terminated), checked with d->strict, or
     * always with BERTH_KIND_STRICT; NULL: not checked here */
    const char *const *fields;
    unsigned flags;
    /* decodes one document (kind and apiVersion checked); NULL: a kind the
     * loader knows and skips (berth_dec_skip with `note`), not in the hint */
    int (*load)(void *ctx, berth_dec *d, const berth_node *doc, const berth_kind_handler *h);
    const char *note;
    int tag;                  /* the loader's own value (a sub-kind) */
};

#define BERTH_KIND_STRICT 1u  /* fields checked even without --strict */

typedef struct berth_walker {
    const char *input;        /* "kube": the hint "kube input has Node, ..., List" */
    const berth_kind_handler *kinds;
    size_t nkinds;
    unsigned flags;           /* BERTH_WALK_PLAIN_LISTS */
    /* a List's top-level fields, checked with d->strict; NULL: not checked */
    const char *const *list_fields;
    /* a kind not in the table; NULL: berth_dec_skip */
    int (*other)(void *ctx, berth_dec *d, const berth_node *doc, const char *kind);
    /* replaces the apiVersion check of the table: called on every document
     * once its kind is read, h NULL for Lists and kinds not in the table */
    int (*check_api)(berth_dec *d, const berth_node *doc, const char *kind,
                     const berth_kind_handler *h);
} berth_walker;

#define BERTH_WALK_PLAIN_LISTS 1u /* only `kind: List` is a List (no typed lists) */

/* Dispatches doc (depth: of List nesting, 0 at the top) through w with the
 * loader's ctx. 0 or the first error. O(table + document). */
int berth_dec_walk(berth_dec *d, const berth_node *doc, int depth, const berth_walker *w,
                   void *ctx);
/* Every document of src through berth_dec_walk, the field path reset for
 * each; stops at the first error. */
int berth_dec_walk_source(berth_dec *d, const berth_source *src, const berth_walker *w,
                          void *ctx);
/* berth_dec_walk of every document of the file at path ("-": stdin), each
 * walked as soon as it is parsed (berth_doc_stream_file): the items of a
 * top-level List are walked one by one and released, so the tree never
 * holds more than one object. A List whose kind follows its items
 * (kubectl's key order) is streamed when each item has its own kind and
 * apiVersion; if the document then is no List: an error at it. d->arena
 * holds the texts; d->file must be path. *ndocs: documents walked. Handlers
 * must keep no pointer to the nodes they are given (berth_node_copy what
 * they keep). Stops at the first error. */
int berth_dec_walk_file(berth_dec *d, const char *path, const berth_walker *w, void *ctx,
                        size_t *ndocs);
/* berth_dec_walk_file of buf[0, len), named d->file in messages. */
int berth_dec_walk_buffer(berth_dec *d, const char *buf, size_t len, const berth_walker *w,
                          void *ctx, size_t *ndocs);
/* Requires doc's apiVersion to be one of api (NULL-terminated): "kind K
 * needs apiVersion WANT, got 'X'" at the field otherwise, WANT being
 * want_text or the versions joined by " or ". */
int berth_dec_api_in(berth_dec *d, const berth_node *doc, const char *kind,
                     const char *const *api, const char *want_text);
/* The unknown-kind hint of w: "<input> input has A, B, ..., List" (the
 * table's kinds with a handler, in table order), truncated to len. */
void berth_walker_hint(const berth_walker *w, char *buf, size_t len);

/* The same readers for a node already in hand (field path as pushed). */
int berth_dec_node_str(berth_dec *d, const berth_node *n, const char **out);
int berth_dec_node_int(berth_dec *d, const berth_node *n, int64_t min, int64_t max, int64_t *out);
int berth_dec_node_quantity(berth_dec *d, const berth_node *n, berth_quantity *out);

/* ---- io/fields.c: fields of berth's own kinds ---- */
/* metadata (strict known fields when d->strict or force_strict) with a
 * required non-empty name; labels / annotations may be NULL to skip. */
int berth_dec_meta_named(berth_dec *d, berth_arena *a, const berth_node *doc, int force_strict,
                      const char **name, berth_labels *labels, berth_labels *ann);
/* A list of taints at key (key, value, effect). */
int berth_dec_taints_strict(berth_dec *d, berth_arena *a, const berth_node *parent, const char *key,
                        berth_taint **out, uint32_t *n);
/* A list of non-empty strings at key. */
int berth_dec_strlist(berth_dec *d, berth_arena *a, const berth_node *parent, const char *key,
                         const char ***out, uint32_t *n);
/* A non-negative plain number at key; absent: *out kept. */
int berth_dec_number(berth_dec *d, const berth_node *mp, const char *key, double *out);


#endif
