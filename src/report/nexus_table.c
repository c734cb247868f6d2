/* report/nexus_table.c - the nexus step tables for people (a heading per
 * step, per-pool rows or runtime-upgrade batches, columns sized to their
 * content) and the small naming helpers every nexus renderer shares. */
#include "berth/report.h"
#include "berth/grow.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* ---- shared names ---- */

const char *berth_report_step_kind_name(berth_step_kind kind)
{
    switch (kind) {
    case BERTH_STEP_CREATE_CLUSTER: return "create-cluster";
    case BERTH_STEP_DELETE_CLUSTER: return "delete-cluster";
    case BERTH_STEP_SCALE_POOL: return "scale-pool";
    case BERTH_STEP_ADD_POOL: return "add-pool";
    case BERTH_STEP_CORDON: return "cordon";
    case BERTH_STEP_UNCORDON: return "uncordon";
    case BERTH_STEP_RUNTIME_UPGRADE: return "runtime-upgrade";
    }
    return "unknown";
}

const char *berth_report_role_name(berth_pool_role role)
{
    return role == BERTH_ROLE_CONTROL_PLANE ? "ControlPlane" : "Worker";
}

const char *berth_report_cluster_status_name(berth_cluster_status status)
{
    switch (status) {
    case BERTH_CLUSTER_PENDING: return "Pending";
    case BERTH_CLUSTER_SUCCEEDED: return "Succeeded";
    case BERTH_CLUSTER_FAILED: return "Failed";
    case BERTH_CLUSTER_DELETED: return "Deleted";
    }
    return "Unknown";
}

#define PER_RACK_MAX_LISTED 6

int berth_report_per_rack_text(const uint32_t *per_rack, uint32_t n, char *buf, size_t size)
{
    uint32_t distinct[PER_RACK_MAX_LISTED + 1];
    uint32_t ndistinct = 0, last = 0, highest = 0;
    if (!per_rack)
        n = 0;
    /* Ascending distinct non-zero values without sorting a copy: each
     * pass finds the smallest value above the previous one. */
    while (ndistinct <= PER_RACK_MAX_LISTED) {
        uint32_t next = 0;
        for (uint32_t i = 0; i < n; i++)
            if (per_rack[i] > last && (next == 0 || per_rack[i] < next))
                next = per_rack[i];
        if (next == 0)
            break;
        distinct[ndistinct++] = next;
        last = next;
    }
    for (uint32_t i = 0; i < n; i++)
        if (per_rack[i] > highest)
            highest = per_rack[i];
    if (ndistinct == 0)
        return snprintf(buf, size, "-");
    if (ndistinct > PER_RACK_MAX_LISTED)
        return snprintf(buf, size, "%" PRIu32 "..%" PRIu32, distinct[0], highest);
    int total = 0;
    for (uint32_t i = 0; i < ndistinct; i++) {
        size_t at = (size_t)total < size ? (size_t)total : size;
        int k = snprintf(buf + at, size - at, i ? ", %" PRIu32 : "%" PRIu32, distinct[i]);
        if (k < 0)
            return k;
        total += k;
    }
    return total;
}

/* ---- growable string ---- */

typedef struct strbuf {
    char *s;
    size_t len, cap;
    int oom;
} strbuf;

static void sb_printf(strbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void sb_printf(strbuf *b, const char *fmt, ...)
{
    if (b->oom)
        return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        size_t room = b->cap - b->len;
        int k = vsnprintf(b->s ? b->s + b->len : NULL, b->s ? room : 0, fmt, ap);
        va_end(ap);
        if (k < 0) {
            b->oom = 1;
            return;
        }
        if (b->s && (size_t)k < room) {
            b->len += (size_t)k;
            return;
        }
        if (berth_grow_bytes((void **)&b->s, &b->cap, b->len + (size_t)k + 1, 64)) {
            b->oom = 1;
            return;
        }
    }
}

/* ---- a table of strings, columns sized to their content ---- */

typedef struct table {
    uint32_t ncols;
    const int *right;    /* per column: right-align */
    char **cell;         /* nrows * ncols owned strings */
    size_t nrows, caprows;
    int oom;
} table;

static void table_add(table *t, const char *const *vals)
{
    if (t->oom)
        return;
    if (t->nrows == t->caprows) {
        size_t cap = t->caprows ? t->caprows * 2 : 16;
        char **p = realloc(t->cell, cap * t->ncols * sizeof *p);
        if (!p) {
            t->oom = 1;
            return;
        }
        t->cell = p;
        t->caprows = cap;
    }
    char **row = t->cell + t->nrows * t->ncols;
    for (uint32_t c = 0; c < t->ncols; c++) {
        row[c] = strdup(vals[c] ? vals[c] : "");
        if (!row[c]) {
            for (uint32_t k = 0; k < c; k++)
                free(row[k]);
            t->oom = 1;
            return;
        }
    }
    t->nrows++;
}

/* Display width: UTF-8 code points (continuation bytes do not count). */
static size_t text_width(const char *s)
{
    size_t w = 0;
    for (; *s; s++)
        if (((unsigned char)*s & 0xC0u) != 0x80u)
            w++;
    return w;
}

static void pad(FILE *out, size_t n)
{
    while (n--)
        fputc(' ', out);
}

static void table_print(FILE *out, const table *t, const char *indent)
{
    size_t width[16] = {0};
    uint32_t ncols = t->ncols < 16 ? t->ncols : 16;
    for (size_t r = 0; r < t->nrows; r++)
        for (uint32_t c = 0; c < ncols; c++) {
            size_t w = text_width(t->cell[r * t->ncols + c]);
            if (w > width[c])
                width[c] = w;
        }
    for (size_t r = 0; r < t->nrows; r++) {
        fputs(indent, out);
        for (uint32_t c = 0; c < ncols; c++) {
            const char *v = t->cell[r * t->ncols + c];
            size_t gap = width[c] - text_width(v);
            if (c)
                fputs("  ", out);
            if (t->right[c])
                pad(out, gap);
            fputs(v, out);
            if (!t->right[c] && c + 1 < ncols)
                pad(out, gap);
        }
        fputc('\n', out);
    }
}

static void table_free(table *t)
{
    for (size_t i = 0; i < t->nrows * t->ncols; i++)
        free(t->cell[i]);
    free(t->cell);
    t->cell = NULL;
    t->nrows = t->caprows = 0;
}

/* ---- lookups that tolerate inconsistent indices ---- */

static const char *str_or(const char *s, const char *dflt)
{
    return s ? s : dflt;
}

static const berth_pool *pool_at(const berth_nexus *nx, uint32_t p)
{
    return p < nx->npools ? &nx->pools[p] : NULL;
}

static const char *pool_cluster_name(const berth_nexus *nx, const berth_pool *p)
{
    if (!p || p->cluster >= nx->nclusters)
        return "?";
    return str_or(nx->clusters[p->cluster].name, "?");
}

static const char *pool_sku_name(const berth_nexus *nx, const berth_pool *p)
{
    if (!p || p->sku >= nx->nskus)
        return "?";
    return str_or(nx->skus[p->sku].name, "?");
}

static const char *rack_name(const berth_nexus *nx, uint32_t r)
{
    return r < nx->nracks ? str_or(nx->racks[r].name, "?") : "?";
}

/* ---- steps ---- */

static void print_heading(FILE *out, const berth_nexus *nx, uint32_t i, const berth_step *st)
{
    fprintf(out, "Step %" PRIu32 ": %s %s", i + 1, berth_report_step_kind_name(st->kind),
            str_or(st->name, ""));
    switch (st->kind) {
    case BERTH_STEP_DELETE_CLUSTER:
        if (st->cluster && (!st->name || strcmp(st->cluster, st->name) != 0))
            fprintf(out, " (cluster %s)", st->cluster);
        break;
    case BERTH_STEP_SCALE_POOL:
        if (st->cluster && st->pool)
            fprintf(out, " (%s/%s to %" PRId64 ")", st->cluster, st->pool, st->count);
        break;
    case BERTH_STEP_ADD_POOL:
        if (st->cluster && st->pool)
            fprintf(out, " (%s/%s)", st->cluster, st->pool);
        break;
    case BERTH_STEP_CORDON:
    case BERTH_STEP_UNCORDON:
        if (st->machine)
            fprintf(out, " (machine %s)", st->machine);
        break;
    default:
        break;
    }
    if (st->failed)
        fprintf(out, "  FAILED: %s", st->reason && *st->reason ? st->reason : "(no reason given)");
    fputc('\n', out);
    (void)nx;
}

static int print_rows(FILE *out, const berth_nexus *nx, const berth_step *st)
{
    static const int right[7] = {0, 0, 0, 1, 1, 1, 0};
    static const char *const head[7] = {"cluster", "pool", "SKU", "count", "placed",
                                        "racks used", "VMs per rack"};
    table t = {.ncols = 7, .right = right};
    table_add(&t, head);
    for (uint32_t r = 0; r < st->nrows; r++) {
        const berth_step_row *row = &st->rows[r];
        const berth_pool *p = pool_at(nx, row->pool);
        char count[24], placed[16], racks[16], per[128];
        snprintf(count, sizeof count, "%" PRId32, row->count);
        snprintf(placed, sizeof placed, "%" PRIu32, row->placed);
        snprintf(racks, sizeof racks, "%" PRIu32, row->racks_used);
        berth_report_per_rack_text(row->per_rack, nx->nracks, per, sizeof per);
        const char *vals[7] = {pool_cluster_name(nx, p), p ? str_or(p->name, "?") : "?",
                               pool_sku_name(nx, p), count, placed, racks, per};
        table_add(&t, vals);
    }
    int oom = t.oom;
    if (!oom)
        table_print(out, &t, "  ");
    table_free(&t);
    return oom ? BERTH_ENOMEM : 0;
}

/* "quorum lost: A; pools at zero: C/p1; down: A/control-plane 1/3, ..." */
static void batch_impact(strbuf *b, const berth_nexus *nx, const berth_upgrade_batch *ub)
{
    const char *sep = "";
    if (ub->nquorum_lost && ub->quorum_lost) {
        sb_printf(b, "quorum lost: ");
        for (uint32_t k = 0; k < ub->nquorum_lost; k++) {
            uint32_t c = ub->quorum_lost[k];
            sb_printf(b, "%s%s", k ? ", " : "",
                      c < nx->nclusters ? str_or(nx->clusters[c].name, "?") : "?");
        }
        sep = "; ";
    }
    if (ub->npools_zero && ub->pools_zero) {
        sb_printf(b, "%spools at zero: ", sep);
        for (uint32_t k = 0; k < ub->npools_zero; k++) {
            const berth_pool *p = pool_at(nx, ub->pools_zero[k]);
            sb_printf(b, "%s%s/%s", k ? ", " : "", pool_cluster_name(nx, p),
                      p ? str_or(p->name, "?") : "?");
        }
        sep = "; ";
    }
    if (ub->npool_down && ub->pool_down) {
        sb_printf(b, "%sVMs down: ", sep);
        for (uint32_t k = 0; k < ub->npool_down; k++) {
            const uint32_t *e = &ub->pool_down[3u * k];
            const berth_pool *p = pool_at(nx, e[0]);
            sb_printf(b, "%s%s/%s %" PRIu32 "/%" PRIu32, k ? ", " : "", pool_cluster_name(nx, p),
                      p ? str_or(p->name, "?") : "?", e[1], e[2]);
        }
        sep = "; ";
    }
    if (!*sep)
        sb_printf(b, "no VMs down");
}

static int print_batches(FILE *out, const berth_nexus *nx, const berth_step *st)
{
    static const int right[6] = {0, 1, 1, 1, 1, 0};
    static const char *const head[6] = {"rack", "batch", "machines down", "VMs down",
                                        "start minute", "impact"};
    if (st->nbatches == 0 || !st->batches) {
        fputs("  no machines to upgrade\n", out);
        return 0;
    }
    table t = {.ncols = 6, .right = right};
    table_add(&t, head);
    for (uint32_t i = 0; i < st->nbatches && !t.oom; i++) {
        const berth_upgrade_batch *ub = &st->batches[i];
        char batch[32], mdown[16], vdown[16], start[24];
        snprintf(batch, sizeof batch, "%" PRIu32 "/%" PRIu32, ub->batch, ub->nbatches);
        snprintf(mdown, sizeof mdown, "%" PRIu32, ub->machines_down);
        snprintf(vdown, sizeof vdown, "%" PRIu32, ub->vms_down);
        snprintf(start, sizeof start, "%" PRId64, ub->start_minute);
        strbuf impact = {0};
        batch_impact(&impact, nx, ub);
        if (impact.oom) {
            free(impact.s);
            t.oom = 1;
            break;
        }
        const char *vals[6] = {rack_name(nx, ub->rack), batch, mdown, vdown, start, impact.s};
        table_add(&t, vals);
        free(impact.s);
    }
    int oom = t.oom;
    if (!oom)
        table_print(out, &t, "  ");
    table_free(&t);
    return oom ? BERTH_ENOMEM : 0;
}

int berth_report_nexus_table(FILE *out, const berth_nexus *nx)
{
    for (uint32_t i = 0; i < nx->nsteps; i++) {
        const berth_step *st = &nx->steps[i];
        if (i)
            fputc('\n', out);
        print_heading(out, nx, i, st);
        int rc = 0;
        if (st->kind == BERTH_STEP_RUNTIME_UPGRADE)
            rc = print_batches(out, nx, st);
        else if (st->nrows && st->rows)
            rc = print_rows(out, nx, st);
        if (rc)
            return rc;
    }
    return ferror(out) ? BERTH_EIO : 0;
}
