/* report/nexus_svg.c - the nexus layout pictures: an SVG of racks (columns),
 * machines (rows), NUMA cells and VMs coloured by cluster with a legend, a
 * compact utilisation heat map for large estates, and the standalone HTML
 * page that embeds the SVG with rack and cluster/pool summary tables. */
#include "berth/report.h"

#include "report/svg.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *str_or(const char *s, const char *dflt)
{
    return s ? s : dflt;
}

/* ---- geometry and colours ---- */

#define MARGIN 16.0
#define FONT 11.0             /* VM and machine labels: the smallest text drawn */
#define CHAR_W (FONT * 0.58)  /* estimated glyph width at FONT */
#define ROW_H 20.0            /* machine row */
#define ROW_PITCH 22.0
#define LABEL_W 86.0          /* machine name area */
#define CELL_GAP 2.0
#define RACK_GAP 12.0
#define RACK_HEAD 38.0
#define RACK_ROW_GAP 14.0     /* between rows of racks */
#define PIC_W 1400.0          /* racks wrap into rows of this width */
#define MIN_CELL_W 96.0
#define MAX_CELL_W 260.0
#define LEGEND_COL_W 440.0
#define HEAT_SQ 6.0
#define HEAT_PITCH 7.0
#define HEAT_MAX_SQUARES 65536u
#define HEAT_MAX_TITLES 16384u
#define HEAT_TILE_RACKS 4096u  /* above: one global grid instead of rack tiles */

typedef struct colour {
    const char *fill, *text;
} colour;

/* Tableau-like palette, text colour chosen for contrast. */
static const colour PALETTE[] = {
    {"#4e79a7", "#ffffff"}, {"#f28e2b", "#1a1a1a"}, {"#59a14f", "#ffffff"},
    {"#e15759", "#ffffff"}, {"#76b7b2", "#1a1a1a"}, {"#edc948", "#1a1a1a"},
    {"#b07aa1", "#ffffff"}, {"#ff9da7", "#1a1a1a"}, {"#9c755f", "#ffffff"},
    {"#a0cbe8", "#1a1a1a"}, {"#8cd17d", "#1a1a1a"}, {"#ffbe7d", "#1a1a1a"},
};
#define NPALETTE (sizeof PALETTE / sizeof PALETTE[0])

static const colour *cluster_colour(uint32_t c)
{
    return &PALETTE[c % NPALETTE];
}

/* Pools of one cluster share its colour; later pools are lighter. */
static double pool_opacity(uint32_t k)
{
    static const double op[3] = {1.0, 0.8, 0.62};
    return op[k % 3];
}

/* Utilisation ramp (light to dark blue). u in [0, 1]. */
static void ramp(double u, char buf[8])
{
    static const unsigned char stops[5][3] = {
        {0xf7, 0xfb, 0xff}, {0xc6, 0xdb, 0xef}, {0x6b, 0xae, 0xd6},
        {0x21, 0x71, 0xb5}, {0x08, 0x30, 0x6b}};
    if (!(u > 0.0))
        u = 0.0;
    if (u > 1.0)
        u = 1.0;
    double pos = u * 4.0;
    int i = (int)pos;
    if (i > 3)
        i = 3;
    double f = pos - i;
    unsigned rgb[3];
    for (int k = 0; k < 3; k++)
        rgb[k] = (unsigned)lround(stops[i][k] + (stops[i + 1][k] - stops[i][k]) * f);
    snprintf(buf, 8, "#%02x%02x%02x", rgb[0] & 0xffu, rgb[1] & 0xffu, rgb[2] & 0xffu);
}

/* ---- model access tolerant of inconsistent indices ---- */

static const berth_pool *pool_at(const berth_nexus *nx, uint32_t p)
{
    return p < nx->npools ? &nx->pools[p] : NULL;
}

static const berth_sku *pool_sku(const berth_nexus *nx, const berth_pool *p)
{
    return p && p->sku < nx->nskus ? &nx->skus[p->sku] : NULL;
}

static const char *cluster_name(const berth_nexus *nx, uint32_t c)
{
    return c < nx->nclusters ? str_or(nx->clusters[c].name, "?") : "?";
}

static const char *rack_name(const berth_nexus *nx, uint32_t r)
{
    return r < nx->nracks ? str_or(nx->racks[r].name, "?") : "?";
}

/* Machines of rack r, clamped to the machine array. */
static void rack_span(const berth_nexus *nx, uint32_t r, uint32_t *first, uint32_t *n)
{
    const berth_rack *rk = &nx->racks[r];
    uint32_t f = rk->first_machine < nx->nmachines ? rk->first_machine : nx->nmachines;
    uint32_t k = rk->nmachines;
    if (k > nx->nmachines - f)
        k = nx->nmachines - f;
    *first = f;
    *n = k;
}

static const berth_cell *machine_cell(const berth_nexus *nx, const berth_machine *m, uint32_t k)
{
    uint64_t ci = (uint64_t)m->first_cell + k;
    return k < m->ncells && ci < nx->ncells ? &nx->cells[ci] : NULL;
}

static void machine_usage(const berth_nexus *nx, const berth_machine *m, int64_t *cpu,
                          int64_t *used_cpu, int64_t *mem, int64_t *used_mem)
{
    for (uint32_t k = 0; k < m->ncells; k++) {
        const berth_cell *c = machine_cell(nx, m, k);
        if (!c)
            break;
        *cpu += c->cpu;
        *used_cpu += c->used_cpu;
        *mem += c->memory;
        *used_mem += c->used_memory;
    }
}

static int live_vm(const berth_nexus *nx, uint32_t v)
{
    return v < nx->nvms && nx->vms[v].machine < nx->nmachines;
}

static double pct(int64_t used, int64_t total)
{
    return total > 0 ? 100.0 * (double)used / (double)total : 0.0;
}

/* ---- short codes for narrow labels ---- */

typedef struct codes {
    char **cluster;       /* per cluster: short code, owned */
} codes;

/* Last segment after '-', '_' or ' ' (the whole name when there is none). */
static const char *last_segment(const char *s)
{
    const char *seg = s;
    for (const char *p = s; *p; p++)
        if ((*p == '-' || *p == '_' || *p == ' ') && p[1])
            seg = p + 1;
    return seg;
}

static const char *pool_code(const berth_pool *p)
{
    if (p->role == BERTH_ROLE_CONTROL_PLANE)
        return "cp";
    return last_segment(str_or(p->name, "?"));
}

/* Cluster codes: names without their common prefix ("cluster-a" and
 * "cluster-b" become "a" and "b"); one cluster keeps its last segment. */
static int codes_build(codes *cd, const berth_nexus *nx)
{
    cd->cluster = calloc(nx->nclusters ? nx->nclusters : 1, sizeof *cd->cluster);
    if (!cd->cluster)
        return BERTH_ENOMEM;
    const char *first = NULL;
    size_t lcp = 0;
    uint32_t live = 0;
    for (uint32_t c = 0; c < nx->nclusters; c++) {
        const char *n = str_or(nx->clusters[c].name, "?");
        if (nx->clusters[c].status == BERTH_CLUSTER_DELETED)
            continue;
        if (!first) {
            first = n;
            lcp = strlen(n);
        } else {
            size_t i = 0;
            while (i < lcp && n[i] && n[i] == first[i])
                i++;
            lcp = i;
        }
        live++;
    }
    /* back off to a character boundary, and keep every remainder non-empty */
    while (first && lcp > 0 && ((unsigned char)first[lcp] & 0xC0u) == 0x80u)
        lcp--;
    for (uint32_t c = 0; c < nx->nclusters && lcp; c++) {
        const char *n = str_or(nx->clusters[c].name, "?");
        if (nx->clusters[c].status != BERTH_CLUSTER_DELETED && strlen(n) <= lcp)
            lcp = 0;
    }
    for (uint32_t c = 0; c < nx->nclusters; c++) {
        const char *n = str_or(nx->clusters[c].name, "?");
        const char *code = n;
        if (live >= 2 && strlen(n) > lcp)
            code = n + lcp;
        else if (live < 2)
            code = last_segment(n);
        cd->cluster[c] = strdup(code);
        if (!cd->cluster[c])
            return BERTH_ENOMEM;
    }
    /* shorter still: the last segment of each code ("cluster-a" -> "a")
     * when those stay distinct among live clusters */
    if (live >= 2 && nx->nclusters <= 4096) {
        int unique = 1;
        for (uint32_t c = 0; c < nx->nclusters && unique; c++) {
            if (nx->clusters[c].status == BERTH_CLUSTER_DELETED)
                continue;
            for (uint32_t d = c + 1; d < nx->nclusters && unique; d++)
                if (nx->clusters[d].status != BERTH_CLUSTER_DELETED &&
                    strcmp(last_segment(cd->cluster[c]), last_segment(cd->cluster[d])) == 0)
                    unique = 0;
        }
        for (uint32_t c = 0; c < nx->nclusters && unique; c++) {
            const char *seg = last_segment(cd->cluster[c]);
            if (seg != cd->cluster[c])
                memmove(cd->cluster[c], seg, strlen(seg) + 1);
        }
    }
    return 0;
}

static void codes_free(codes *cd, uint32_t n)
{
    for (uint32_t c = 0; cd->cluster && c < n; c++)
        free(cd->cluster[c]);
    free(cd->cluster);
    cd->cluster = NULL;
}

/* ---- the detailed picture ---- */

typedef struct picture {
    const berth_nexus *nx;
    FILE *out;
    uint32_t maxcells, per_row;  /* racks per row of the picture */
    double cell_w, machine_w, rack_w;
    double width, height;
    double racks_y, legend_y;
    /* VMs per machine (CSR over live VMs, cluster/pool/placement order) */
    uint32_t *mstart, *mvms;
    double *cursor;        /* per cell: x already used */
    uint32_t *rack_vms;
    uint32_t *pool_rank;   /* per pool: position within its cluster */
    codes cd;
} picture;

static int picture_index(picture *pc)
{
    const berth_nexus *nx = pc->nx;
    pc->mstart = calloc((size_t)nx->nmachines + 1, sizeof *pc->mstart);
    pc->cursor = calloc(nx->ncells ? nx->ncells : 1, sizeof *pc->cursor);
    pc->rack_vms = calloc(nx->nracks ? nx->nracks : 1, sizeof *pc->rack_vms);
    pc->pool_rank = calloc(nx->npools ? nx->npools : 1, sizeof *pc->pool_rank);
    if (!pc->mstart || !pc->cursor || !pc->rack_vms || !pc->pool_rank)
        return BERTH_ENOMEM;
    size_t total = 0;
    for (int pass = 0; pass < 2; pass++) {
        for (uint32_t c = 0; c < nx->nclusters; c++) {
            const berth_cluster *cl = &nx->clusters[c];
            for (uint32_t k = 0; cl->pools && k < cl->npools; k++) {
                const berth_pool *p = pool_at(nx, cl->pools[k]);
                if (!p)
                    continue;
                pc->pool_rank[cl->pools[k]] = k;
                for (uint32_t i = 0; p->vms && i < p->nvms; i++) {
                    uint32_t v = p->vms[i];
                    if (!live_vm(nx, v))
                        continue;
                    uint32_t m = nx->vms[v].machine;
                    if (pass == 0) {
                        pc->mstart[m + 1]++;
                        total++;
                        uint32_t r = nx->machines[m].rack;
                        if (r < nx->nracks)
                            pc->rack_vms[r]++;
                    } else {
                        pc->mvms[pc->mstart[m]++] = v;
                    }
                }
            }
        }
        if (pass == 0) {
            for (uint32_t m = 0; m < nx->nmachines; m++)
                pc->mstart[m + 1] += pc->mstart[m];
            pc->mvms = malloc((total ? total : 1) * sizeof *pc->mvms);
            if (!pc->mvms)
                return BERTH_ENOMEM;
        }
    }
    /* the fill pass advanced each start to the next machine's start */
    for (uint32_t m = nx->nmachines; m > 0; m--)
        pc->mstart[m] = pc->mstart[m - 1];
    pc->mstart[0] = 0;
    return codes_build(&pc->cd, nx);
}

static void picture_free(picture *pc)
{
    free(pc->mstart);
    free(pc->mvms);
    free(pc->cursor);
    free(pc->rack_vms);
    free(pc->pool_rank);
    codes_free(&pc->cd, pc->nx->nclusters);
}

static void svg_open(FILE *out, double w, double h)
{
    rsvg_open(out, w, h,
          ".bth-t{font-size:17px;font-weight:bold;fill:#222}"
          ".bth-s{font-size:12px;fill:#555}"
          ".bth-rh{font-size:13px;font-weight:bold;fill:#222}"
          ".bth-ru{font-size:11px;fill:#555}"
          ".bth-ml{font-size:11px;fill:#333}"
          ".bth-vl{font-size:11px;pointer-events:none}"
          ".bth-lg{font-size:12px;fill:#222}"
          ".bth-lp{font-size:11px;fill:#333}"
          ".bth-b{font-size:11px;font-weight:bold;fill:#fff;pointer-events:none}");
    fputs("<defs><pattern id=\"bth-hatch\" width=\"5\" height=\"5\" patternUnits=\"userSpaceOnUse\" "
          "patternTransform=\"rotate(45)\"><rect width=\"5\" height=\"5\" fill=\"#9e9e9e\" "
          "fill-opacity=\"0.25\"/><line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"5\" stroke=\"#555\" "
          "stroke-width=\"1.6\" stroke-opacity=\"0.55\"/></pattern>"
          "<pattern id=\"bth-down\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" "
          "patternTransform=\"rotate(-45)\"><rect width=\"6\" height=\"6\" fill=\"#d9534f\" "
          "fill-opacity=\"0.18\"/><line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" stroke=\"#d9534f\" "
          "stroke-width=\"1.2\" stroke-opacity=\"0.6\"/></pattern></defs>\n",
          out);
}

static void svg_title_block(FILE *out, const berth_nexus *nx, double w, uint32_t nvms_live)
{
    fprintf(out, "<text class=\"bth-t\" x=\"%.0f\" y=\"%.0f\">Layout", MARGIN, MARGIN + 15);
    if (nx->site_name && *nx->site_name) {
        fputs(" of ", out);
        rsvg_esc(out, nx->site_name);
    }
    fputs("</text>\n", out);
    uint32_t live_clusters = 0;
    for (uint32_t c = 0; c < nx->nclusters; c++)
        if (nx->clusters[c].status != BERTH_CLUSTER_DELETED)
            live_clusters++;
    fprintf(out,
            "<text class=\"bth-s\" x=\"%.0f\" y=\"%.0f\">%" PRIu32 " racks, %" PRIu32
            " machines, %" PRIu32 " clusters, %" PRIu32 " VMs after %" PRIu32 " steps</text>\n",
            MARGIN, MARGIN + 33, nx->nracks, nx->nmachines, live_clusters, nvms_live, nx->nsteps);
}

/* Label for a VM block of width w: "cluster/pool", "c/p" codes, the
 * cluster code (cut to fit), or nothing. Writes into buf. */
static void vm_label(const picture *pc, const berth_pool *p, double w, char *buf, size_t size)
{
    const char *cname = cluster_name(pc->nx, p->cluster);
    const char *ccode = p->cluster < pc->nx->nclusters ? pc->cd.cluster[p->cluster] : "?";
    double room = w - 4.0;
    buf[0] = '\0';
    snprintf(buf, size, "%s/%s", cname, str_or(p->name, "?"));
    if ((double)rsvg_nchars(buf) * CHAR_W <= room)
        return;
    snprintf(buf, size, "%s/%s", ccode, pool_code(p));
    if ((double)rsvg_nchars(buf) * CHAR_W <= room)
        return;
    size_t fit = room > 0 ? (size_t)(room / CHAR_W) : 0;
    size_t n = rsvg_nchars(ccode);
    if (fit > n)
        fit = n;
    size_t b = rsvg_head_bytes(ccode, fit);
    if (b >= size)
        b = size - 1;
    memcpy(buf, ccode, b);
    buf[b] = '\0';
}

static void draw_vm(picture *pc, const berth_machine *m, uint32_t v, double mx, double y)
{
    const berth_nexus *nx = pc->nx;
    FILE *out = pc->out;
    const berth_vm *vm = &nx->vms[v];
    const berth_pool *p = pool_at(nx, vm->pool);
    const berth_sku *sku = pool_sku(nx, p);
    if (!p)
        return;
    uint32_t span = sku && sku->numa_cells > 1 ? (uint32_t)sku->numa_cells : 1;
    double share = sku ? (double)sku->host_vcpu / span : 0.0;
    const colour *col = cluster_colour(p->cluster);
    char name[512], label[256];
    berth_nexus_vm_name(nx, v, name, sizeof name);

    fputs("<g><title>", out);
    rsvg_esc(out, name);
    fputs("\nSKU ", out);
    rsvg_esc(out, sku ? sku->name : "?");
    if (sku)
        fprintf(out, " (%" PRId32 " vCPU, %" PRId32 " host vCPU, %.0f GiB)", sku->vcpu,
                sku->host_vcpu, (double)sku->memory / (1024.0 * 1024.0 * 1024.0));
    fputs("\nmachine ", out);
    rsvg_esc(out, m->name);
    fputs(", rack ", out);
    rsvg_esc(out, rack_name(nx, m->rack));
    if (span > 1)
        fprintf(out, ", NUMA cells %" PRIu32 "-%" PRIu32 "</title>\n", vm->cell,
                vm->cell + span - 1);
    else
        fprintf(out, ", NUMA cell %" PRIu32 "</title>\n", vm->cell);

    for (uint32_t j = vm->cell; j < vm->cell + span && j < m->ncells; j++) {
        const berth_cell *c = machine_cell(nx, m, j);
        if (!c || c->cpu <= 0 || j >= pc->maxcells)
            continue;
        double *cur = &pc->cursor[m->first_cell + j];
        double inner = pc->cell_w - 1.0;
        double w = inner * share / (double)c->cpu;
        if (w > inner - *cur)
            w = inner - *cur;
        if (w < 0.8)  /* overfull or tiny: keep a sliver visible */
            w = 0.8;
        double x = mx + LABEL_W + j * (pc->cell_w + CELL_GAP) + 0.5 + *cur;
        *cur += w;
        int cp = p->role == BERTH_ROLE_CONTROL_PLANE;
        fprintf(out,
                "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\" "
                "fill-opacity=\"%.2f\" stroke=\"%s\" stroke-width=\"%s\"%s/>\n",
                x, y + 3.0, w, ROW_H - 6.0, col->fill,
                pool_opacity(pc->pool_rank[vm->pool]),
                cp ? "#222" : "#ffffff", cp ? "0.9" : "0.6", m->down ? " opacity=\"0.45\"" : "");
        vm_label(pc, p, w, label, sizeof label);
        if (label[0]) {
            fprintf(out, "<text class=\"bth-vl\" x=\"%.1f\" y=\"%.1f\" fill=\"%s\">", x + 2.0,
                    y + ROW_H / 2.0 + 4.0, col->text);
            rsvg_esc(out, label);
            fputs("</text>\n", out);
        }
    }
    fputs("</g>\n", out);
}

static void draw_machine(picture *pc, uint32_t mi, double mx, double y)
{
    const berth_nexus *nx = pc->nx;
    FILE *out = pc->out;
    const berth_machine *m = &nx->machines[mi];
    int64_t cpu = 0, ucpu = 0, mem = 0, umem = 0;
    machine_usage(nx, m, &cpu, &ucpu, &mem, &umem);

    fputs("<g><title>", out);
    rsvg_esc(out, m->name);
    fputs(" (rack ", out);
    rsvg_esc(out, rack_name(nx, m->rack));
    fprintf(out, ")%s%s\n%" PRId64 "/%" PRId64 " host vCPU, %.0f/%.0f GiB, %" PRIu32 " VMs</title>\n",
            m->cordoned ? ", cordoned" : "", m->down ? ", down" : "", ucpu, cpu,
            (double)umem / 1073741824.0, (double)mem / 1073741824.0,
            pc->mstart[mi + 1] - pc->mstart[mi]);
    fprintf(out,
            "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" rx=\"2\" fill=\"#ffffff\" "
            "stroke=\"%s\" stroke-width=\"%s\"%s/>\n",
            mx, y, pc->machine_w, ROW_H, m->down ? "#d9534f" : "#aab0b8", m->down ? "1.2" : "0.6",
            m->down ? " stroke-dasharray=\"3 2\"" : "");

    /* badges and the name (its tail when long: the distinguishing part) */
    double lx = mx + 2.0;
    if (m->down) {
        fprintf(out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"13\" height=\"13\" rx=\"2\" fill=\"#d9534f\"/>"
                     "<text class=\"bth-b\" x=\"%.1f\" y=\"%.1f\">D</text>\n",
                lx, y + 3.5, lx + 2.8, y + 14.0);
        lx += 15.0;
    }
    if (m->cordoned) {
        fprintf(out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"13\" height=\"13\" rx=\"2\" fill=\"#e0932b\"/>"
                     "<text class=\"bth-b\" x=\"%.1f\" y=\"%.1f\">C</text>\n",
                lx, y + 3.5, lx + 2.8, y + 14.0);
        lx += 15.0;
    }
    const char *mname = str_or(m->name, "?");
    double room = mx + LABEL_W - 2.0 - lx;
    size_t fit = room > 0 ? (size_t)(room / CHAR_W) : 0;
    size_t n = rsvg_nchars(mname);
    if (fit > 0) {
        fprintf(out, "<text class=\"bth-ml\" x=\"%.1f\" y=\"%.1f\">", lx, y + ROW_H / 2.0 + 4.0);
        if (n <= fit) {
            rsvg_esc(out, mname);
        } else if (fit >= 2) {
            fputs("\xe2\x80\xa6", out); /* ellipsis */
            rsvg_esc(out, mname + rsvg_head_bytes(mname, n - (fit - 1)));
        }
        fputs("</text>\n", out);
    }

    for (uint32_t j = 0; j < m->ncells && j < pc->maxcells; j++) {
        const berth_cell *c = machine_cell(nx, m, j);
        if (!c)
            break;
        double cx = mx + LABEL_W + j * (pc->cell_w + CELL_GAP);
        fprintf(out,
                "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"#eef0f3\" "
                "stroke=\"#c8ccd2\" stroke-width=\"0.5\"><title>NUMA cell %" PRIu32 ": %" PRId32
                "/%" PRId32 " host vCPU, %.0f/%.0f GiB</title></rect>\n",
                cx, y + 2.0, pc->cell_w, ROW_H - 4.0, j, c->used_cpu, c->cpu,
                (double)c->used_memory / 1073741824.0, (double)c->memory / 1073741824.0);
    }
    for (uint32_t k = pc->mstart[mi]; k < pc->mstart[mi + 1]; k++)
        draw_vm(pc, m, pc->mvms[k], mx, y);
    if (m->cordoned || m->down)
        fprintf(out,
                "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"url(#%s)\" "
                "pointer-events=\"none\"/>\n",
                mx + LABEL_W, y + 1.0, pc->machine_w - LABEL_W - 1.0, ROW_H - 2.0,
                m->down ? "bth-down" : "bth-hatch");
    fputs("</g>\n", out);
}

/* Height of the row of racks starting at rack r0: its tallest rack. */
static double row_height(const picture *pc, uint32_t r0)
{
    uint32_t most = 0;
    for (uint32_t r = r0; r < r0 + pc->per_row && r < pc->nx->nracks; r++) {
        uint32_t first, n;
        rack_span(pc->nx, r, &first, &n);
        if (n > most)
            most = n;
    }
    return RACK_HEAD + most * ROW_PITCH + 2.0;
}

static void draw_racks(picture *pc)
{
    const berth_nexus *nx = pc->nx;
    FILE *out = pc->out;
    double y = pc->racks_y;
    for (uint32_t r = 0; r < nx->nracks; r++) {
        uint32_t first, n;
        rack_span(nx, r, &first, &n);
        int64_t cpu = 0, ucpu = 0, mem = 0, umem = 0;
        for (uint32_t i = 0; i < n; i++)
            machine_usage(nx, &nx->machines[first + i], &cpu, &ucpu, &mem, &umem);
        if (r > 0 && r % pc->per_row == 0)
            y += row_height(pc, r - pc->per_row) + RACK_ROW_GAP;
        double rx = MARGIN + (r % pc->per_row) * (pc->rack_w + RACK_GAP);
        fputs("<g><title>Rack ", out);
        rsvg_esc(out, rack_name(nx, r));
        fprintf(out, " (zone)\n%" PRIu32 " machines, %" PRIu32 " VMs, %" PRId64 "/%" PRId64
                     " host vCPU (%.0f%%), %.0f/%.0f GiB</title>\n",
                n, pc->rack_vms[r], ucpu, cpu, pct(ucpu, cpu), (double)umem / 1073741824.0,
                (double)mem / 1073741824.0);
        fprintf(out,
                "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" rx=\"4\" "
                "fill=\"#f6f7f9\" stroke=\"#d5d8dc\"/>\n",
                rx, y, pc->rack_w, RACK_HEAD + n * ROW_PITCH + 2.0);
        fprintf(out, "<text class=\"bth-rh\" x=\"%.1f\" y=\"%.1f\">Rack ", rx + 5.0, y + 15.0);
        const char *rn = rack_name(nx, r);
        size_t fit = (size_t)((pc->rack_w - 40.0) / 8.0);
        rsvg_escn(out, rn, rsvg_head_bytes(rn, fit));
        fputs("</text>\n", out);
        fprintf(out,
                "<text class=\"bth-ru\" x=\"%.1f\" y=\"%.1f\">%.0f%% host vCPU, %" PRIu32
                " VMs</text>\n",
                rx + 5.0, y + 30.0, pct(ucpu, cpu), pc->rack_vms[r]);
        for (uint32_t i = 0; i < n; i++)
            draw_machine(pc, first + i, rx + 4.0, y + RACK_HEAD + i * ROW_PITCH);
        fputs("</g>\n", out);
    }
}

/* Legend entries flow into columns, each entry into the shortest one. */
static double legend_entry_h(const berth_cluster *cl)
{
    return 19.0 + 15.0 * cl->npools + 8.0;
}

static double legend_height(const picture *pc)
{
    const berth_nexus *nx = pc->nx;
    uint32_t ncol = (uint32_t)((pc->width - 2 * MARGIN) / LEGEND_COL_W);
    if (ncol < 1)
        ncol = 1;
    if (ncol > 64)
        ncol = 64;
    double colh[64] = {0}, maxh = 0;
    for (uint32_t c = 0; c < nx->nclusters; c++) {
        if (nx->clusters[c].status == BERTH_CLUSTER_DELETED)
            continue;
        uint32_t best = 0;
        for (uint32_t k = 1; k < ncol; k++)
            if (colh[k] < colh[best])
                best = k;
        colh[best] += legend_entry_h(&nx->clusters[c]);
        if (colh[best] > maxh)
            maxh = colh[best];
    }
    return 48.0 + maxh;
}

static void draw_legend(picture *pc)
{
    const berth_nexus *nx = pc->nx;
    FILE *out = pc->out;
    double y0 = pc->legend_y;
    fputs("<g>\n", out);
    fprintf(out, "<text class=\"bth-rh\" x=\"%.0f\" y=\"%.1f\">Legend</text>\n", MARGIN, y0 + 12);
    double x = MARGIN + 64.0;
    fprintf(out,
            "<rect x=\"%.1f\" y=\"%.1f\" width=\"16\" height=\"12\" fill=\"#ffffff\" stroke=\"#aab0b8\"/>"
            "<rect x=\"%.1f\" y=\"%.1f\" width=\"16\" height=\"12\" fill=\"url(#bth-hatch)\"/>"
            "<text class=\"bth-lg\" x=\"%.1f\" y=\"%.1f\">C = cordoned (no new VMs)</text>\n",
            x, y0 + 2, x, y0 + 2, x + 21, y0 + 12);
    x += 200.0;
    fprintf(out,
            "<rect x=\"%.1f\" y=\"%.1f\" width=\"16\" height=\"12\" fill=\"url(#bth-down)\" "
            "stroke=\"#d9534f\" stroke-dasharray=\"3 2\"/>"
            "<text class=\"bth-lg\" x=\"%.1f\" y=\"%.1f\">D = down (VMs off)</text>\n",
            x, y0 + 2, x + 21, y0 + 12);
    x += 160.0;
    fprintf(out,
            "<text class=\"bth-lg\" x=\"%.1f\" y=\"%.1f\">one block per VM, coloured by "
            "cluster; width = its share of the NUMA cell's host vCPU; dark outline = control "
            "plane; hover for details</text>\n",
            x, y0 + 12);

    uint32_t ncol = (uint32_t)((pc->width - 2 * MARGIN) / LEGEND_COL_W);
    if (ncol < 1)
        ncol = 1;
    if (ncol > 64)
        ncol = 64;
    double colh[64] = {0};
    for (uint32_t c = 0; c < nx->nclusters; c++) {
        const berth_cluster *cl = &nx->clusters[c];
        if (cl->status == BERTH_CLUSTER_DELETED)
            continue;
        uint32_t best = 0;
        for (uint32_t k = 1; k < ncol; k++)
            if (colh[k] < colh[best])
                best = k;
        double ex = MARGIN + best * LEGEND_COL_W, ey = y0 + 32.0 + colh[best];
        colh[best] += legend_entry_h(cl);
        const colour *col = cluster_colour(c);
        uint32_t nvm = 0;
        for (uint32_t k = 0; cl->pools && k < cl->npools; k++) {
            const berth_pool *p = pool_at(nx, cl->pools[k]);
            for (uint32_t i = 0; p && p->vms && i < p->nvms; i++)
                nvm += live_vm(nx, p->vms[i]) ? 1u : 0u;
        }
        fputs("<g>", out);
        if (cl->reason && *cl->reason) {
            fputs("<title>", out);
            rsvg_esc(out, cl->reason);
            fputs("</title>", out);
        }
        fprintf(out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"16\" height=\"12\" rx=\"2\" fill=\"%s\"/>",
                ex, ey, col->fill);
        fprintf(out, "<text class=\"bth-lg\" x=\"%.1f\" y=\"%.1f\"><tspan font-weight=\"bold\">",
                ex + 21, ey + 10.5);
        rsvg_esc(out, cl->name);
        fputs("</tspan> ", out);
        if (strcmp(pc->cd.cluster[c], str_or(cl->name, "?")) != 0) {
            fputs("[", out);
            rsvg_esc(out, pc->cd.cluster[c]);
            fputs("] ", out);
        }
        fprintf(out, " %s, %" PRIu32 " VMs", berth_report_cluster_status_name(cl->status), nvm);
        if (cl->status == BERTH_CLUSTER_FAILED && cl->reason && *cl->reason) {
            const char *rs = cl->reason;
            fputs(": ", out);
            rsvg_escn(out, rs, rsvg_head_bytes(rs, 40));
            if (rsvg_nchars(rs) > 40)
                fputs("\xe2\x80\xa6", out);
        }
        fputs("</text></g>\n", out);
        for (uint32_t k = 0; cl->pools && k < cl->npools; k++) {
            const berth_pool *p = pool_at(nx, cl->pools[k]);
            if (!p)
                continue;
            const berth_sku *sku = pool_sku(nx, p);
            double py = ey + 18.0 + 15.0 * k;
            uint32_t placed = 0;
            for (uint32_t i = 0; p->vms && i < p->nvms; i++)
                placed += live_vm(nx, p->vms[i]) ? 1u : 0u;
            int cp = p->role == BERTH_ROLE_CONTROL_PLANE;
            fprintf(out,
                    "<rect x=\"%.1f\" y=\"%.1f\" width=\"12\" height=\"10\" fill=\"%s\" "
                    "fill-opacity=\"%.2f\" stroke=\"%s\" stroke-width=\"0.8\"/>",
                    ex + 21, py + 1.0, col->fill, pool_opacity(k), cp ? "#222" : "#ffffff");
            fprintf(out, "<text class=\"bth-lp\" x=\"%.1f\" y=\"%.1f\">", ex + 38, py + 10.0);
            if (strcmp(pool_code(p), str_or(p->name, "?")) != 0) {
                rsvg_esc(out, pool_code(p));
                fputs(" = ", out);
            }
            rsvg_esc(out, p->name);
            fputs(", ", out);
            rsvg_esc(out, sku ? sku->name : "?");
            fprintf(out, ", %" PRIu32 "/%" PRId32 " placed</text>\n", placed, p->count);
        }
    }
    fputs("</g>\n", out);
}

static int svg_detailed(FILE *out, const berth_nexus *nx)
{
    picture pc = {.nx = nx, .out = out};
    int rc = picture_index(&pc);
    if (rc) {
        picture_free(&pc);
        return rc;
    }
    pc.maxcells = 1;
    for (uint32_t m = 0; m < nx->nmachines; m++) {
        uint32_t k = nx->machines[m].ncells;
        if (k > BERTH_NEXUS_MAX_CELLS)
            k = BERTH_NEXUS_MAX_CELLS;
        if (k > pc.maxcells)
            pc.maxcells = k;
    }
    /* racks wrap into rows at most PIC_W wide (as many as fit, spread
     * evenly over the rows), their NUMA cells stretched to fill the row */
    double min_cell = pc.maxcells <= 2 ? MIN_CELL_W : fmax(56.0, 240.0 / pc.maxcells);
    double fixed = LABEL_W + (pc.maxcells - 1) * CELL_GAP + 2.0 + 8.0; /* rack minus its cells */
    double avail = PIC_W - 2 * MARGIN;
    uint32_t per_row = (uint32_t)((avail + RACK_GAP) / (fixed + pc.maxcells * min_cell + RACK_GAP));
    if (per_row < 1)
        per_row = 1;
    if (nx->nracks && per_row > nx->nracks)
        per_row = nx->nracks;
    uint32_t nrows = nx->nracks ? (nx->nracks + per_row - 1) / per_row : 0;
    if (nrows)
        per_row = (nx->nracks + nrows - 1) / nrows;
    pc.per_row = per_row;
    pc.cell_w = (avail - (per_row - 1) * RACK_GAP) / per_row - fixed;
    pc.cell_w /= pc.maxcells;
    if (pc.cell_w < min_cell)
        pc.cell_w = min_cell;
    if (pc.cell_w > MAX_CELL_W)
        pc.cell_w = MAX_CELL_W;
    pc.machine_w = LABEL_W + pc.maxcells * pc.cell_w + (pc.maxcells - 1) * CELL_GAP + 2.0;
    pc.rack_w = pc.machine_w + 8.0;
    pc.width = 2 * MARGIN + per_row * pc.rack_w + (per_row - 1) * RACK_GAP;
    if (pc.width < 2 * MARGIN + 2 * LEGEND_COL_W)
        pc.width = 2 * MARGIN + 2 * LEGEND_COL_W;
    pc.racks_y = MARGIN + 48.0;
    double racks_h = 0;
    for (uint32_t r = 0; r < nx->nracks; r += per_row)
        racks_h += row_height(&pc, r) + RACK_ROW_GAP;
    pc.legend_y = pc.racks_y + racks_h + 10.0;
    pc.height = pc.legend_y + legend_height(&pc) + MARGIN;

    svg_open(out, pc.width, pc.height);
    svg_title_block(out, nx, pc.width, pc.mstart[nx->nmachines]);
    draw_racks(&pc);
    draw_legend(&pc);
    fputs("</svg>\n", out);
    picture_free(&pc);
    return 0;
}

/* ---- the compact heat map ---- */

typedef struct heat_sq {
    int64_t cpu, used;
    uint32_t n, cordoned, down;
} heat_sq;

static void heat_add(heat_sq *s, const berth_nexus *nx, uint32_t m)
{
    const berth_machine *mc = &nx->machines[m];
    int64_t mem = 0, umem = 0;
    machine_usage(nx, mc, &s->cpu, &s->used, &mem, &umem);
    s->n++;
    s->cordoned += mc->cordoned ? 1u : 0u;
    s->down += mc->down ? 1u : 0u;
}

static void heat_square(FILE *out, const heat_sq *s, double x, double y, int titled,
                        const char *what)
{
    char fill[8];
    if (s->down * 2 > s->n)
        snprintf(fill, sizeof fill, "#d9534f");
    else if (s->cordoned * 2 > s->n)
        snprintf(fill, sizeof fill, "#9e9e9e");
    else
        ramp(s->cpu > 0 ? (double)s->used / (double)s->cpu : 0.0, fill);
    fprintf(out, "<rect x=\"%.0f\" y=\"%.0f\" width=\"6\" height=\"6\" fill=\"%s\"", x, y, fill);
    if (titled) {
        fputs("><title>", out);
        rsvg_esc(out, what);
        fprintf(out, ": %.0f%% host vCPU%s%s</title></rect>\n", pct(s->used, s->cpu),
                s->cordoned ? ", cordoned" : "", s->down ? ", down" : "");
    } else {
        fputs("/>\n", out);
    }
}

static void heat_legend(FILE *out, double y)
{
    static const double stops[5] = {0.0, 0.25, 0.5, 0.75, 1.0};
    double x = MARGIN;
    fprintf(out, "<g>\n<text class=\"bth-lg\" x=\"%.0f\" y=\"%.0f\">host vCPU used:</text>\n", x,
            y + 10);
    x += 100;
    for (int i = 0; i < 5; i++) {
        char fill[8];
        ramp(stops[i], fill);
        fprintf(out,
                "<rect x=\"%.0f\" y=\"%.0f\" width=\"12\" height=\"12\" fill=\"%s\" stroke=\"#ccc\" "
                "stroke-width=\"0.5\"/><text class=\"bth-lg\" x=\"%.0f\" y=\"%.0f\">%.0f%%</text>\n",
                x, y, fill, x + 16, y + 10, stops[i] * 100);
        x += 56;
    }
    fprintf(out,
            "<rect x=\"%.0f\" y=\"%.0f\" width=\"12\" height=\"12\" fill=\"#9e9e9e\"/>"
            "<text class=\"bth-lg\" x=\"%.0f\" y=\"%.0f\">mostly cordoned</text>\n"
            "<rect x=\"%.0f\" y=\"%.0f\" width=\"12\" height=\"12\" fill=\"#d9534f\"/>"
            "<text class=\"bth-lg\" x=\"%.0f\" y=\"%.0f\">mostly down</text>\n</g>\n",
            x + 10, y, x + 26, y + 10, x + 140, y, x + 156, y + 10);
}

static int svg_heatmap(FILE *out, const berth_nexus *nx)
{
    uint64_t group = ((uint64_t)nx->nmachines + HEAT_MAX_SQUARES - 1) / HEAT_MAX_SQUARES;
    if (group == 0)
        group = 1;
    int tiles = nx->nracks <= HEAT_TILE_RACKS;
    double width = PIC_W, tile_w = 0, tile_h = 0;
    uint32_t tile_cols = 1, per_row = 1, tile_rows_total = 0;
    uint64_t squares = 0;
    double body_h;
    if (tiles) {
        /* per rack: squares of `group` machines in a near-square tile */
        uint32_t maxsq = 1;
        for (uint32_t r = 0; r < nx->nracks; r++) {
            uint32_t first, n;
            rack_span(nx, r, &first, &n);
            uint64_t sq = (n + group - 1) / group;
            squares += sq;
            if (sq > maxsq)
                maxsq = (uint32_t)sq;
        }
        tile_cols = (uint32_t)ceil(sqrt((double)maxsq));
        if (tile_cols < 1)
            tile_cols = 1;
        uint32_t trows = (maxsq + tile_cols - 1) / tile_cols;
        tile_w = tile_cols * HEAT_PITCH;
        tile_h = trows * HEAT_PITCH + 15.0; /* rack label below */
        per_row = (uint32_t)((width - 2 * MARGIN + 8.0) / (tile_w + 8.0));
        if (per_row < 1)
            per_row = 1;
        if (per_row > nx->nracks && nx->nracks)
            per_row = nx->nracks;
        tile_rows_total = nx->nracks ? (nx->nracks + per_row - 1) / per_row : 0;
        width = fmax(width, 2 * MARGIN + per_row * (tile_w + 8.0));
        body_h = tile_rows_total * (tile_h + 8.0);
    } else {
        squares = (nx->nmachines + group - 1) / group;
        per_row = (uint32_t)((width - 2 * MARGIN) / HEAT_PITCH);
        body_h = ((squares + per_row - 1) / per_row) * HEAT_PITCH;
    }
    int titled = squares <= HEAT_MAX_TITLES;
    double top = MARGIN + 70.0;
    double height = top + body_h + 40.0 + MARGIN;

    svg_open(out, width, height);
    uint32_t nlive = 0;
    for (uint32_t p = 0; p < nx->npools; p++)
        for (uint32_t i = 0; nx->pools[p].vms && i < nx->pools[p].nvms; i++)
            nlive += live_vm(nx, nx->pools[p].vms[i]) ? 1u : 0u;
    svg_title_block(out, nx, width, nlive);
    fprintf(out,
            "<text class=\"bth-s\" x=\"%.0f\" y=\"%.0f\" font-style=\"italic\">Compact view: the "
            "estate exceeds the detailed picture's limits (%u racks or %u machines). Each square "
            "is ",
            MARGIN, MARGIN + 52, BERTH_REPORT_SVG_MAX_RACKS, BERTH_REPORT_SVG_MAX_MACHINES);
    if (group == 1)
        fputs("one machine", out);
    else
        fprintf(out, "up to %" PRIu64 " machines", group);
    fprintf(out, ", shaded by host vCPU utilisation%s.</text>\n",
            tiles ? "; one tile per rack" : "; machines in rack order, racks not separated");

    char what[160];
    if (tiles) {
        for (uint32_t r = 0; r < nx->nracks; r++) {
            uint32_t first, n;
            rack_span(nx, r, &first, &n);
            double tx = MARGIN + (r % per_row) * (tile_w + 8.0);
            double ty = top + (r / per_row) * (tile_h + 8.0);
            heat_sq all = {0};
            for (uint32_t i = 0; i < n; i++)
                heat_add(&all, nx, first + i);
            fputs("<g><title>Rack ", out);
            rsvg_esc(out, rack_name(nx, r));
            fprintf(out, ": %" PRIu32 " machines, %.0f%% host vCPU</title>\n", n,
                    pct(all.used, all.cpu));
            uint32_t k = 0;
            for (uint64_t i = 0; i < n; i += group, k++) {
                heat_sq s = {0};
                for (uint64_t j = i; j < i + group && j < n; j++)
                    heat_add(&s, nx, first + (uint32_t)j);
                if (titled) {
                    if (group == 1)
                        snprintf(what, sizeof what, "%s", str_or(nx->machines[first + i].name, "?"));
                    else
                        snprintf(what, sizeof what, "machines %" PRIu64 "-%" PRIu64 " of the rack",
                                 i + 1, (i + group < n ? i + group : n));
                }
                heat_square(out, &s, tx + (k % tile_cols) * HEAT_PITCH,
                            ty + (k / tile_cols) * HEAT_PITCH, titled, what);
            }
            if (tile_w >= 14.0) {
                const char *rn = rack_name(nx, r);
                size_t fit = (size_t)(tile_w / CHAR_W);
                fprintf(out, "<text class=\"bth-ml\" x=\"%.0f\" y=\"%.0f\">", tx,
                        ty + tile_h - 3.0);
                rsvg_escn(out, rn, rsvg_head_bytes(rn, fit));
                fputs("</text>\n", out);
            }
            fputs("</g>\n", out);
        }
    } else {
        uint64_t k = 0;
        for (uint64_t i = 0; i < nx->nmachines; i += group, k++) {
            heat_sq s = {0};
            for (uint64_t j = i; j < i + group && j < nx->nmachines; j++)
                heat_add(&s, nx, (uint32_t)j);
            if (titled) {
                uint32_t m = (uint32_t)i;
                if (group == 1)
                    snprintf(what, sizeof what, "%s (rack %s)", str_or(nx->machines[m].name, "?"),
                             rack_name(nx, nx->machines[m].rack));
                else
                    snprintf(what, sizeof what, "machines %" PRIu64 "-%" PRIu64, i + 1,
                             (i + group < nx->nmachines ? i + group : nx->nmachines));
            }
            heat_square(out, &s, MARGIN + (k % per_row) * HEAT_PITCH,
                        top + (double)(k / per_row) * HEAT_PITCH, titled, what);
        }
    }
    heat_legend(out, top + body_h + 12.0);
    fputs("</svg>\n", out);
    return 0;
}

int berth_report_nexus_svg(FILE *out, const berth_nexus *nx)
{
    int rc;
    if (nx->nracks > BERTH_REPORT_SVG_MAX_RACKS || nx->nmachines > BERTH_REPORT_SVG_MAX_MACHINES)
        rc = svg_heatmap(out, nx);
    else
        rc = svg_detailed(out, nx);
    if (rc)
        return rc;
    return ferror(out) ? BERTH_EIO : 0;
}

/* ---- HTML ---- */

#define HTML_MAX_RACK_ROWS 1024u

static void html_cell(FILE *out, const char *s, int num)
{
    fputs(num ? "<td class=\"n\">" : "<td>", out);
    rsvg_esc(out, s);
    fputs("</td>", out);
}

/* The page's heat map: one row per rack, one square per machine shaded by
 * host vCPU used (red: down, grey: cordoned), the rack's share at the row's
 * end; hover titles name the machine. Large estates: the squares shrink
 * down to 4 px, beyond HTML_HEAT_MAX machines the picture's compact view
 * above already is the heat map. */
#define HTML_HEAT_MAX 16384u
static void html_heatmap(FILE *out, const berth_nexus *nx)
{
    if (nx->nracks == 0 || nx->nmachines > HTML_HEAT_MAX || nx->nracks > HTML_MAX_RACK_ROWS)
        return;
    uint32_t most = 1;
    for (uint32_t r = 0; r < nx->nracks; r++) {
        uint32_t first, n;
        rack_span(nx, r, &first, &n);
        if (n > most)
            most = n;
    }
    double label_w = 64.0, tail_w = 48.0;
    double pitch = fmin(22.0, fmax(4.0, (PIC_W - 2 * MARGIN - label_w - tail_w) / most));
    double sq = pitch >= 8.0 ? pitch - 2.0 : pitch - 1.0, row = fmax(pitch, 16.0);
    double w = 2 * MARGIN + label_w + most * pitch + tail_w;
    if (w < 660.0) /* the legend */
        w = 660.0;
    double h = MARGIN + nx->nracks * row + 40.0;
    fputs("<h2>Utilisation heat map</h2>\n<div class=\"pic\">\n", out);
    rsvg_open(out, w, h, ".bth-lg{font-size:12px;fill:#222}.bth-ml{font-size:11px;fill:#333}");
    for (uint32_t r = 0; r < nx->nracks; r++) {
        uint32_t first, n;
        rack_span(nx, r, &first, &n);
        double y = MARGIN / 2 + r * row;
        heat_sq all = {0};
        for (uint32_t i = 0; i < n; i++)
            heat_add(&all, nx, first + i);
        rsvg_begin_g(out, "Rack %s: %" PRIu32 " machines, %.0f%% host vCPU used", rack_name(nx, r),
                     n, pct(all.used, all.cpu));
        fprintf(out, "<text class=\"bth-ml\" x=\"%.0f\" y=\"%.1f\">Rack ", MARGIN,
                y + row / 2 + 4);
        rsvg_escn(out, rack_name(nx, r), rsvg_head_bytes(rack_name(nx, r), 8));
        fputs("</text>\n", out);
        for (uint32_t i = 0; i < n; i++) {
            const berth_machine *m = &nx->machines[first + i];
            heat_sq one = {0};
            heat_add(&one, nx, first + i);
            char fill[8];
            if (m->down)
                snprintf(fill, sizeof fill, "#d9534f");
            else if (m->cordoned)
                snprintf(fill, sizeof fill, "#9e9e9e");
            else
                ramp(one.cpu > 0 ? (double)one.used / (double)one.cpu : 0.0, fill);
            rsvg_rect(out, MARGIN + label_w + i * pitch, y + (row - sq) / 2, sq, sq, fill,
                      "stroke=\"#d5d8dc\" stroke-width=\"0.5\"",
                      "%s (rack %s): %" PRId64 "/%" PRId64 " host vCPU used (%.0f%%)%s%s",
                      str_or(m->name, "?"), rack_name(nx, r), one.used, one.cpu,
                      pct(one.used, one.cpu), m->cordoned ? ", cordoned" : "",
                      m->down ? ", down" : "");
        }
        fprintf(out, "<text class=\"bth-ml\" x=\"%.0f\" y=\"%.1f\">%.0f%%</text>\n",
                MARGIN + label_w + n * pitch + 6.0, y + row / 2 + 4, pct(all.used, all.cpu));
        rsvg_end_g(out);
    }
    heat_legend(out, MARGIN / 2 + nx->nracks * row + 10.0);
    rsvg_close(out);
    fputs("</div>\n", out);
}

static int html_racks(FILE *out, const berth_nexus *nx)
{
    uint32_t *vms = calloc(nx->nracks ? nx->nracks : 1, sizeof *vms);
    if (!vms)
        return BERTH_ENOMEM;
    for (uint32_t p = 0; p < nx->npools; p++)
        for (uint32_t i = 0; nx->pools[p].vms && i < nx->pools[p].nvms; i++) {
            uint32_t v = nx->pools[p].vms[i];
            if (live_vm(nx, v) && nx->machines[nx->vms[v].machine].rack < nx->nracks)
                vms[nx->machines[nx->vms[v].machine].rack]++;
        }
    fputs("<h2>Racks</h2>\n<table>\n<tr><th>rack</th><th>machines</th><th>cordoned</th>"
          "<th>down</th><th>VMs</th><th>host vCPU used</th><th>host vCPU</th><th>vCPU %</th>"
          "<th>memory used (GiB)</th><th>memory (GiB)</th><th>memory %</th></tr>\n",
          out);
    int64_t tc = 0, tuc = 0, tm = 0, tum = 0;
    uint64_t tvms = 0, tcord = 0, tdown = 0;
    for (uint32_t r = 0; r < nx->nracks; r++) {
        uint32_t first, n, cord = 0, down = 0;
        rack_span(nx, r, &first, &n);
        int64_t cpu = 0, ucpu = 0, mem = 0, umem = 0;
        for (uint32_t i = 0; i < n; i++) {
            const berth_machine *m = &nx->machines[first + i];
            machine_usage(nx, m, &cpu, &ucpu, &mem, &umem);
            cord += m->cordoned ? 1u : 0u;
            down += m->down ? 1u : 0u;
        }
        tc += cpu;
        tuc += ucpu;
        tm += mem;
        tum += umem;
        tvms += vms[r];
        tcord += cord;
        tdown += down;
        if (r >= HTML_MAX_RACK_ROWS)
            continue;
        fputs("<tr>", out);
        html_cell(out, rack_name(nx, r), 0);
        fprintf(out,
                "<td class=\"n\">%" PRIu32 "</td><td class=\"n\">%" PRIu32 "</td><td class=\"n\">%"
                PRIu32 "</td><td class=\"n\">%" PRIu32 "</td><td class=\"n\">%" PRId64
                "</td><td class=\"n\">%" PRId64 "</td><td class=\"n\">%.1f</td><td class=\"n\">%.0f"
                "</td><td class=\"n\">%.0f</td><td class=\"n\">%.1f</td></tr>\n",
                n, cord, down, vms[r], ucpu, cpu, pct(ucpu, cpu),
                (double)umem / 1073741824.0, (double)mem / 1073741824.0, pct(umem, mem));
    }
    if (nx->nracks > HTML_MAX_RACK_ROWS)
        fprintf(out, "<tr><td colspan=\"11\">&#8230; %" PRIu32 " more racks not listed</td></tr>\n",
                nx->nracks - HTML_MAX_RACK_ROWS);
    fprintf(out,
            "<tr class=\"total\"><td>total</td><td class=\"n\">%" PRIu32 "</td><td class=\"n\">%"
            PRIu64 "</td><td class=\"n\">%" PRIu64 "</td><td class=\"n\">%" PRIu64
            "</td><td class=\"n\">%" PRId64 "</td><td class=\"n\">%" PRId64
            "</td><td class=\"n\">%.1f</td><td class=\"n\">%.0f</td><td class=\"n\">%.0f</td>"
            "<td class=\"n\">%.1f</td></tr>\n</table>\n",
            nx->nmachines, tcord, tdown, tvms, tuc, tc, pct(tuc, tc), (double)tum / 1073741824.0,
            (double)tm / 1073741824.0, pct(tum, tm));
    free(vms);
    return 0;
}

static int html_clusters(FILE *out, const berth_nexus *nx)
{
    uint32_t *per_rack = calloc(nx->nracks ? nx->nracks : 1, sizeof *per_rack);
    if (!per_rack)
        return BERTH_ENOMEM;
    fputs("<h2>Clusters and pools</h2>\n<table>\n<tr><th></th><th>cluster</th><th>status</th>"
          "<th>pool</th><th>role</th><th>SKU</th><th>count</th><th>placed</th><th>racks used</th>"
          "<th>VMs per rack</th><th>reason</th></tr>\n",
          out);
    for (uint32_t c = 0; c < nx->nclusters; c++) {
        const berth_cluster *cl = &nx->clusters[c];
        for (uint32_t k = 0; cl->pools && k < cl->npools; k++) {
            const berth_pool *p = pool_at(nx, cl->pools[k]);
            if (!p)
                continue;
            const berth_sku *sku = pool_sku(nx, p);
            memset(per_rack, 0, (size_t)nx->nracks * sizeof *per_rack);
            uint32_t placed = 0, used = 0;
            for (uint32_t i = 0; p->vms && i < p->nvms; i++) {
                uint32_t v = p->vms[i];
                if (!live_vm(nx, v))
                    continue;
                placed++;
                uint32_t r = nx->machines[nx->vms[v].machine].rack;
                if (r < nx->nracks && per_rack[r]++ == 0)
                    used++;
            }
            char per[128];
            berth_report_per_rack_text(per_rack, nx->nracks, per, sizeof per);
            fprintf(out, "<tr><td><span class=\"sw\" style=\"background:%s;opacity:%.2f\"></span></td>",
                    cl->status == BERTH_CLUSTER_DELETED ? "#cccccc" : cluster_colour(c)->fill,
                    pool_opacity(k));
            html_cell(out, cl->name, 0);
            fprintf(out, "<td class=\"st-%s\">%s</td>",
                    cl->status == BERTH_CLUSTER_FAILED    ? "bad"
                    : cl->status == BERTH_CLUSTER_DELETED ? "del"
                                                          : "ok",
                    berth_report_cluster_status_name(cl->status));
            html_cell(out, p->name, 0);
            html_cell(out, berth_report_role_name(p->role), 0);
            html_cell(out, sku ? sku->name : "?", 0);
            fprintf(out,
                    "<td class=\"n\">%" PRId32 "</td><td class=\"n\">%" PRIu32
                    "</td><td class=\"n\">%" PRIu32 "</td>",
                    p->count, placed, used);
            html_cell(out, per, 0);
            html_cell(out, k == 0 ? str_or(cl->reason, "") : "", 0);
            fputs("</tr>\n", out);
        }
    }
    fputs("</table>\n", out);
    free(per_rack);
    return 0;
}

static void html_steps(FILE *out, const berth_nexus *nx)
{
    fputs("<h2>Timeline</h2>\n<table>\n<tr><th>step</th><th>kind</th><th>name</th>"
          "<th>result</th></tr>\n",
          out);
    for (uint32_t i = 0; i < nx->nsteps; i++) {
        const berth_step *st = &nx->steps[i];
        fprintf(out, "<tr><td class=\"n\">%" PRIu32 "</td>", i + 1);
        html_cell(out, berth_report_step_kind_name(st->kind), 0);
        html_cell(out, str_or(st->name, ""), 0);
        if (st->failed) {
            fputs("<td class=\"st-bad\">FAILED: ", out);
            rsvg_esc(out, str_or(st->reason, ""));
            fputs("</td>", out);
        } else if (st->kind == BERTH_STEP_RUNTIME_UPGRADE) {
            uint32_t worst = 0, lost = 0;
            for (uint32_t b = 0; st->batches && b < st->nbatches; b++) {
                if (st->batches[b].vms_down > worst)
                    worst = st->batches[b].vms_down;
                lost += st->batches[b].nquorum_lost + st->batches[b].npools_zero;
            }
            fprintf(out,
                    "<td class=\"st-%s\">%" PRIu32 " batches, at most %" PRIu32
                    " VMs down at once%s</td>",
                    lost ? "bad" : "ok", st->nbatches, worst,
                    lost ? ", quorum lost or pools at zero (see the table output)" : "");
        } else {
            fputs("<td class=\"st-ok\">ok</td>", out);
        }
        fputs("</tr>\n", out);
    }
    fputs("</table>\n", out);
}

int berth_report_nexus_html(FILE *out, const berth_nexus *nx)
{
    return berth_report_nexus_html_with(out, nx, NULL, NULL);
}

int berth_report_nexus_html_with(FILE *out, const berth_nexus *nx,
                                 int (*extra)(FILE *out, const void *ctx), const void *ctx)
{
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>berth layout",
          out);
    if (nx->site_name && *nx->site_name) {
        fputs(": ", out);
        rsvg_esc(out, nx->site_name);
    }
    fputs("</title>\n<style>\n"
          "body{font-family:sans-serif;margin:1.5em;color:#222;background:#fff}\n"
          "h1{font-size:1.4em}h2{font-size:1.15em;margin-top:1.6em}\n"
          ".pic{overflow:auto;border:1px solid #ddd;padding:4px;max-height:90vh}\n"
          ".pic svg{display:block;max-width:100%;height:auto}\n"
          ".row{display:flex;flex-wrap:wrap;gap:0 28px;align-items:flex-start}\n"
          "table{border-collapse:collapse;font-size:0.85em}\n"
          "th,td{border:1px solid #d5d8dc;padding:2px 8px;text-align:left}\n"
          "th{background:#f0f2f5}td.n{text-align:right;font-variant-numeric:tabular-nums}\n"
          "tr.total td{font-weight:bold;background:#f6f7f9}\n"
          ".st-bad{color:#b52b27;font-weight:bold}.st-ok{color:#2e7d32}.st-del{color:#777}\n"
          ".sw{display:inline-block;width:12px;height:10px;border-radius:2px}\n"
          "</style>\n</head>\n<body>\n<h1>berth layout",
          out);
    if (nx->site_name && *nx->site_name) {
        fputs(": ", out);
        rsvg_esc(out, nx->site_name);
    }
    fputs("</h1>\n<div class=\"pic\">\n", out);
    int rc = berth_report_nexus_svg(out, nx);
    if (rc)
        return rc;
    fputs("</div>\n<div class=\"row\">\n<div>\n", out);
    html_heatmap(out, nx);
    fputs("</div>\n<div>\n", out);
    rc = html_racks(out, nx);
    if (rc)
        return rc;
    fputs("</div>\n</div>\n", out);
    rc = html_clusters(out, nx);
    if (rc)
        return rc;
    html_steps(out, nx);
    if (extra && (rc = extra(out, ctx)))
        return rc;
    fputs("</body>\n</html>\n", out);
    return ferror(out) ? BERTH_EIO : 0;
}
