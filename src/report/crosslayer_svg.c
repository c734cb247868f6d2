/* report/crosslayer_svg.c - the upgrade timeline of `simulate --workloads
 * --html`: per runtime-upgrade step one SVG with a lane per rack (each
 * batch a bar from its start minute for the drain limit plus the
 * re-image, coloured by what it did to the pods: a PDB below its minimum,
 * pods left pending, or neither) and, under the rack lanes, the
 * pod-impact lane: per batch three bars (pods moved, pods pending, drains
 * PDB-blocked, summed over the clusters), scaled to the step's largest
 * count; hover titles carry the numbers. */
#include "berth/crosslayer.h"

#include <stdlib.h>

#include "report/svg.h"

#define LEFT 110.0
#define WIDTH 1200.0
#define LANE 22.0
#define POD_LANE 90.0

typedef struct batch_sum {
    uint32_t moved, pending, blocked, breaches, clusters;
    int64_t minutes;
} batch_sum;

static void sum_batches(const berth_xl *x, uint32_t step, batch_sum *b, uint32_t nb)
{
    for (uint32_t i = 0; i < x->nphases; i++) {
        const berth_xl_phase *ph = &x->phases[i];
        if (ph->step != step || ph->batch == BERTH_XL_NONE || ph->batch >= nb)
            continue;
        batch_sum *s = &b[ph->batch];
        s->moved += ph->moved;
        s->pending += ph->pending;
        s->blocked += ph->nholds;
        s->breaches += ph->npdbs > 0;
        s->clusters++;
        s->minutes = ph->minutes;
    }
}

static int step_svg(FILE *out, const berth_nexus *nx, const berth_xl *x, uint32_t step)
{
    const berth_step *st = &nx->steps[step];
    uint32_t nb = st->nbatches;
    batch_sum *b = calloc(nb ? nb : 1, sizeof *b);
    uint32_t *lane = malloc((nx->nracks ? nx->nracks : 1) * sizeof *lane);
    if (!b || !lane) {
        free(b);
        free(lane);
        return BERTH_ENOMEM;
    }
    sum_batches(x, step, b, nb);
    /* lanes: racks in the order the upgrade takes them */
    uint32_t nl = 0;
    for (uint32_t r = 0; r < nx->nracks; r++)
        lane[r] = UINT32_MAX;
    for (uint32_t i = 0; i < nb; i++)
        if (lane[st->batches[i].rack] == UINT32_MAX)
            lane[st->batches[i].rack] = nl++;
    int64_t end = 1;
    uint32_t peak = 1;
    for (uint32_t i = 0; i < nb; i++) {
        int64_t len = st->batches[i].vms_down ? BERTH_XL_DRAIN_LIMIT_MINUTES : 0;
        len += st->strategy.reimage_minutes;
        if (st->batches[i].start_minute + len > end)
            end = st->batches[i].start_minute + len;
        uint32_t m = b[i].moved > b[i].pending ? b[i].moved : b[i].pending;
        m = m > b[i].blocked ? m : b[i].blocked;
        peak = m > peak ? m : peak;
    }
    double top = 48, h = top + nl * LANE + 16 + POD_LANE + 40;
    double span = WIDTH - LEFT - 20, scale = span / (double)end;
    rsvg_open(out, WIDTH, h,
              ".xl-ok{fill:#4caf50}.xl-pend{fill:#f0a030}.xl-pdb{fill:#c62828}"
              ".xl-mv{fill:#1e88e5}.xl-pp{fill:#f0a030}.xl-bl{fill:#c62828}");
    rsvg_text(out, 10, 20, "rs-t", NULL, "Runtime upgrade %s: racks and pods",
              st->name ? st->name : "");
    rsvg_text(out, 10, 38, "rs-n", NULL,
              "minutes from the upgrade's start, %lld in all; bars: green no pod pending, "
              "orange pods pending, red a PDB below its minimum",
              (long long)end);
    for (uint32_t r = 0; r < nx->nracks; r++) {
        if (lane[r] == UINT32_MAX)
            continue;
        double y = top + lane[r] * LANE;
        rsvg_text(out, 10, y + 15, "rs-l", NULL, "rack %s", nx->racks[r].name);
        rsvg_rect(out, LEFT, y + 2, span, LANE - 4, "#f3f4f6", NULL, NULL);
    }
    for (uint32_t i = 0; i < nb; i++) {
        const berth_upgrade_batch *bt = &st->batches[i];
        int64_t len = (bt->vms_down ? BERTH_XL_DRAIN_LIMIT_MINUTES : 0) + st->strategy.reimage_minutes;
        double y = top + lane[bt->rack] * LANE;
        const char *cls = b[i].breaches ? "xl-pdb" : b[i].pending ? "xl-pend" : "xl-ok";
        char extra[48];
        snprintf(extra, sizeof extra, "class=\"%s\"", cls);
        rsvg_rect(out, LEFT + bt->start_minute * scale, y + 4, len * scale > 2 ? len * scale : 2,
                  LANE - 8, "#888", extra,
                  "rack %s batch %u/%u, minute %lld for %lld min: %u machines, %u VMs down; "
                  "%u pods moved, %u pending, %u drains PDB-blocked, %u cluster%s with a PDB "
                  "below its minimum",
                  nx->racks[bt->rack].name, bt->batch, bt->nbatches, (long long)bt->start_minute,
                  (long long)len, bt->machines_down, bt->vms_down, b[i].moved, b[i].pending,
                  b[i].blocked, b[i].breaches, b[i].breaches == 1 ? "" : "s");
    }
    /* the pod-impact lane */
    double py = top + nl * LANE + 16;
    fprintf(out, "<g class=\"xl-pod-lane\" id=\"xl-pod-lane-%u\">\n", step + 1);
    rsvg_text(out, 10, py + 14, "rs-h", NULL, "pod impact");
    rsvg_text(out, 10, py + 30, "rs-n", NULL, "moved, pending,");
    rsvg_text(out, 10, py + 44, "rs-n", NULL, "PDB-blocked");
    rsvg_rect(out, LEFT, py, span, POD_LANE, "#fafafa", "stroke=\"#ddd\"", NULL);
    for (uint32_t i = 0; i < nb; i++) {
        const berth_upgrade_batch *bt = &st->batches[i];
        double x0 = LEFT + bt->start_minute * scale, w = 5;
        const uint32_t v[3] = {b[i].moved, b[i].pending, b[i].blocked};
        const char *cls[3] = {"class=\"xl-mv\"", "class=\"xl-pp\"", "class=\"xl-bl\""};
        const char *what[3] = {"moved", "pending", "drains PDB-blocked"};
        for (int k = 0; k < 3; k++) {
            double bh = (POD_LANE - 6) * v[k] / (double)peak;
            if (v[k] && bh < 1)
                bh = 1;
            rsvg_rect(out, x0 + k * (w + 1), py + POD_LANE - 3 - bh, w, bh, "#888", cls[k],
                      "rack %s batch %u/%u: %u pods %s", nx->racks[bt->rack].name, bt->batch,
                      bt->nbatches, v[k], what[k]);
        }
    }
    fputs("</g>\n", out);
    double ly = py + POD_LANE + 20;
    rsvg_rect(out, LEFT, ly - 9, 10, 10, "#1e88e5", NULL, NULL);
    rsvg_text(out, LEFT + 14, ly, "rs-n", NULL, "pods moved");
    rsvg_rect(out, LEFT + 110, ly - 9, 10, 10, "#f0a030", NULL, NULL);
    rsvg_text(out, LEFT + 124, ly, "rs-n", NULL, "pods pending");
    rsvg_rect(out, LEFT + 230, ly - 9, 10, 10, "#c62828", NULL, NULL);
    rsvg_text(out, LEFT + 244, ly, "rs-n", NULL, "drains PDB-blocked (held the 10-minute limit)");
    rsvg_text(out, WIDTH - 20, ly, "rs-n", "end", "peak %u pods", peak);
    rsvg_close(out);
    free(b);
    free(lane);
    return 0;
}

int berth_report_crosslayer_html(FILE *out, const berth_nexus *nx, const berth_xl *x)
{
    int any = 0;
    for (uint32_t s = 0; s < nx->nsteps; s++) {
        if (nx->steps[s].kind != BERTH_STEP_RUNTIME_UPGRADE || !nx->steps[s].nbatches)
            continue;
        if (!any)
            fputs("<h2>Upgrade timeline and pod impact</h2>\n", out);
        any = 1;
        fputs("<div class=\"pic\">\n", out);
        int rc = step_svg(out, nx, x, s);
        if (rc)
            return rc;
        fputs("</div>\n", out);
    }
    return ferror(out) ? BERTH_EIO : 0;
}
