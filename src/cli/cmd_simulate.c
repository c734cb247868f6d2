/* cli/cmd_simulate.c - `berth simulate`: load a site, SKUs, clusters and
 * operations, run the timeline, print the per-step table or JSON, and draw
 * the layout (SVG/HTML). */
#include "cli/cli.h"

#include <jansson.h>
#include <string.h>

#include "berth/crosslayer.h"
#include "berth/report.h"

static void help(FILE *f)
{
    fprintf(f,
            "usage: berth simulate [options] FILE...\n"
            "\n"
            "Places Operator Nexus Kubernetes cluster VMs on the site's racks and machines\n"
            "(SPEC section 1), step by step: each KubernetesCluster is created in input order,\n"
            "each Operation (delete-cluster, scale-pool, add-pool, cordon, uncordon,\n"
            "runtime-upgrade) is applied where it appears.\n"
            "\n"
            "options:\n"
            "  -o, --output FORMAT  table (default), json (SPEC 6.3) or yaml\n"
            "  --svg FILE           write the rack layout picture as SVG\n"
            "  --html FILE          write a standalone HTML page with the picture and tables\n"
            "  --explain VM         explain why VM (e.g. cluster-a-pool-1-3) landed where it did\n"
            "                       (repeatable; printed to stderr)\n"
            "  --partial            best effort: keep the VMs that fit instead of failing the\n"
            "                       whole cluster\n"
            "  --tie-break MODE     first (default: lowest rack, machine, cell) or random\n"
            "  --seed N             seed for --tie-break random (default 0)\n"
            "  --strict             unknown fields in Azure kinds are errors too\n"
            "  --reference          decide every VM by a plain scan of all machines instead of\n"
            "                       the rack index (same decisions, slower; for checking)\n"
            "  --workloads [CLUSTER=]FILE\n"
            "                       an NKS cluster's Kubernetes objects (kubectl -o yaml: Nodes,\n"
            "                       Pods, workloads, PDBs; repeatable): each step's nodes that go\n"
            "                       down are drained and their pods rescheduled (docs/nexus.md,\n"
            "                       \"Workloads across the layers\"); without CLUSTER= the cluster\n"
            "                       is the one whose VMs the file's Nodes name\n"
            "  --detail MODE        summary (default: counts and a few example pods per step)\n"
            "                       or all (every pod) for --workloads\n"
            "  --advise-upgrade     with --workloads: the largest runtime-upgrade maxUnavailable\n"
            "                       that keeps every PodDisruptionBudget at its minimum (re-runs\n"
            "                       the timeline with fewer machines per batch)\n"
            "                       and, with no autoscaler, the rack order and the machines\n"
            "                       to add\n"
            "  --autoscaler KIND    with --workloads: karpenter, ocean or cluster-autoscaler:\n"
            "                       the nodes it launches for each step's pending pods and\n"
            "                       the cost of the upgrade window\n"
            "  --autoscaler-config [CLUSTER=]FILE\n"
            "                       its NodePools (karpenter) or VirtualNodeGroups, and\n"
            "                       InstanceTypes (repeatable; without CLUSTER=: every cluster)\n"
            "  -q, --quiet          print nothing on success (exit code only)\n"
            "  -h, --help           this text\n"
            "\n"
            "exit codes: 0 all placed, 1 something could not be placed (reason in the output),\n"
            "2 bad input or usage, 3 internal error.\n");
}

static int write_svg(FILE *f, const void *nx) { return berth_report_nexus_svg(f, nx); }
static int write_html(FILE *f, const void *nx) { return berth_report_nexus_html(f, nx); }

typedef struct xl_page {
    const berth_nexus *nx;
    const berth_xl *xl;
} xl_page;

static int xl_extra(FILE *f, const void *ctx)
{
    const xl_page *p = ctx;
    return berth_report_crosslayer_html(f, p->nx, p->xl);
}

static int write_xl_html(FILE *f, const void *ctx)
{
    const xl_page *p = ctx;
    return berth_report_nexus_html_with(f, p->nx, xl_extra, p);
}

/* --explain NAME that no step placed: the three VM names closest to it */
static void explain_unknown(const berth_nexus *nx, const char *want)
{
    char best[3][256] = {{0}};
    size_t bd[3] = {SIZE_MAX, SIZE_MAX, SIZE_MAX};
    for (uint32_t v = 0; v < nx->nvms; v++) {
        const berth_pool *p = &nx->pools[nx->vms[v].pool];
        char name[256];
        snprintf(name, sizeof name, "%s-%s-%u", nx->clusters[p->cluster].name, p->name,
                 nx->vms[v].ordinal);
        size_t d = 0, la = strlen(name), lb = strlen(want);
        for (size_t i = 0; i < la || i < lb; i++) /* a cheap distance: differing positions */
            d += i >= la || i >= lb || name[i] != want[i];
        for (int k = 0; k < 3; k++)
            if (d < bd[k] && strcmp(best[k], name)) {
                for (int m = 2; m > k; m--) {
                    bd[m] = bd[m - 1];
                    memcpy(best[m], best[m - 1], sizeof best[m]);
                }
                bd[k] = d;
                snprintf(best[k], sizeof best[k], "%s", name);
                break;
            }
    }
    fprintf(stderr, "berth simulate: --explain %s: no VM of that name is placed in this input", want);
    if (best[0][0])
        fprintf(stderr, " (closest: %s%s%s%s%s)", best[0], best[1][0] ? ", " : "", best[1],
                best[2][0] ? ", " : "", best[2]);
    fprintf(stderr, "\n");
}

/* --workloads [CLUSTER=]FILE...: each file into its cluster's kube model
 * (named, else the cluster whose VMs its Nodes name), then expanded. */
typedef struct wl_opts {
    const char *const *files;     /* --workloads */
    int n;
    const char *const *acfg;      /* --autoscaler-config */
    int nacfg;
    int autoscaler;               /* berth_xl_autoscaler */
    int advise;                   /* --advise-upgrade */
    int strict;
} wl_opts;

/* [CLUSTER=]FILE: *path the file, cluster the name or "". */
static void split_cluster(const char *arg, char cluster[256], const char **path)
{
    const char *eq = strchr(arg, '=');
    cluster[0] = 0;
    *path = arg;
    if (eq && eq != arg && (size_t)(eq - arg) < 256 && !memchr(arg, '/', (size_t)(eq - arg))) {
        memcpy(cluster, arg, (size_t)(eq - arg));
        cluster[eq - arg] = 0;
        *path = eq + 1;
    }
}

static int load_workloads(berth_nexus *nx, berth_xl *xl, const wl_opts *w)
{
    const char *const *files = w->files;
    int n = w->n, strict = w->strict;
    xl->autoscaler = (berth_xl_autoscaler)w->autoscaler;
    xl->advise = w->advise;
    xl->strict = strict;
    berth_error e;
    berth_error_clear(&e);
    for (int i = 0; i < n; i++) {
        const char *path;
        char cluster[256];
        split_cluster(files[i], cluster, &path);
        berth_source src;
        int rc = cli_load_doc(&nx->arena, path, &src, &e);
        if (!rc && !cluster[0]) {
            berth_kcluster probe;
            berth_kube_init(&probe);
            rc = berth_kube_load(&probe, &src, strict, &e);
            const char *name = NULL, *other = NULL;
            int g = rc ? 0 : berth_xl_guess_cluster(nx, &probe, &name, &other);
            if (g == 1)
                rc = berth_error_set(&e, BERTH_EINVAL,
                                     "%s: no Node names a VM of the estate's clusters; give the "
                                     "cluster as --workloads CLUSTER=%s",
                                     path, path);
            else if (g == 2)
                rc = berth_error_set(&e, BERTH_EINVAL,
                                     "%s: its Nodes name VMs of clusters %s and %s; give the "
                                     "cluster as --workloads CLUSTER=%s",
                                     path, name, other, path);
            else if (!rc)
                snprintf(cluster, sizeof cluster, "%s", name);
            berth_kube_free(&probe);
        }
        berth_kcluster *k = NULL;
        uint32_t idx = 0;
        if (!rc && (berth_xl_cluster_for(xl, cluster, &k, &idx) ||
                    (w->autoscaler && berth_xl_add_source(xl, idx, &src))))
            rc = berth_error_set(&e, BERTH_ENOMEM, "out of memory");
        if (!rc)
            rc = berth_kube_load(k, &src, strict, &e);
        if (rc) {
            fprintf(stderr, "berth: %s\n", e.msg);
            return berth_err_exit_code(rc);
        }
    }
    for (int i = 0; w->autoscaler && i < w->nacfg; i++) {
        const char *path;
        char cluster[256];
        split_cluster(w->acfg[i], cluster, &path);
        berth_source src;
        int rc = cli_load_doc(&nx->arena, path, &src, &e);
        if (!rc && berth_xl_add_autoscaler_source(xl, cluster[0] ? cluster : NULL, &src))
            rc = berth_error_set(&e, BERTH_ENOMEM, "out of memory");
        if (rc) {
            fprintf(stderr, "berth: %s\n", e.msg);
            return berth_err_exit_code(rc);
        }
    }
    int rc = berth_xl_prepare(xl, nx, &e);
    if (rc) {
        fprintf(stderr, "berth: %s\n", e.msg);
        return berth_err_exit_code(rc);
    }
    return 0;
}

/* One more run of the whole input with every runtime upgrade's
 * maxUnavailable set to mu: *breaches gets its PDB-breaking phases. */
static int advise_trial(const cli_common *c, const wl_opts *wl, int64_t mu,
                        const berth_nexus_options *base, uint32_t *breaches)
{
    berth_nexus nx;
    berth_nexus_init(&nx);
    berth_xl xl;
    berth_xl_init(&xl);
    int code = cli_load_nexus(&nx, c);
    wl_opts w = *wl;
    w.advise = 0; /* the batch size only: no rack order, no extra nodes */
    w.autoscaler = 0;
    if (!code)
        code = load_workloads(&nx, &xl, &w);
    if (!code) {
        for (uint32_t i = 0; i < nx.nsteps; i++)
            if (nx.steps[i].kind == BERTH_STEP_RUNTIME_UPGRADE)
                nx.steps[i].strategy.max_unavailable = mu;
        berth_nexus_options opt = *base;
        opt.explain_vm = NULL;
        opt.explain_found = NULL;
        opt.step_ctx = &xl;
        berth_error e;
        berth_error_clear(&e);
        int rc = berth_nexus_run(&nx, &opt, &e);
        if (rc && rc != BERTH_ENOFIT) {
            fprintf(stderr, "berth: %s\n", e.msg);
            code = berth_err_exit_code(rc);
        }
        *breaches = berth_xl_upgrade_pdb_breaches(&nx, &xl);
    }
    berth_xl_free(&xl);
    berth_nexus_free(&nx);
    return code;
}

/* --advise-upgrade: the given maxUnavailable (the largest over the upgrade
 * steps, at most the largest rack), its PDB breaches, and the largest
 * smaller value without any (one re-run per value tried, downwards). */
static int advise_upgrade(const cli_common *c, const wl_opts *wl,
                          const berth_nexus_options *opt, const berth_nexus *nx, const berth_xl *xl,
                          berth_xl_advice *adv)
{
    uint32_t rack_max = 1;
    for (uint32_t r = 0; r < nx->nracks; r++)
        if (nx->racks[r].nmachines > rack_max)
            rack_max = nx->racks[r].nmachines;
    adv->given = 0;
    for (uint32_t i = 0; i < nx->nsteps; i++)
        if (nx->steps[i].kind == BERTH_STEP_RUNTIME_UPGRADE) {
            int64_t m = nx->steps[i].strategy.max_unavailable;
            m = m > 0 && m < rack_max ? m : rack_max;
            if (m > adv->given)
                adv->given = m;
        }
    adv->breaches = berth_xl_upgrade_pdb_breaches(nx, xl);
    adv->safe = adv->breaches ? 0 : adv->given;
    for (int64_t m = adv->given - 1; adv->breaches && m >= 1; m--) {
        uint32_t b = 0;
        int code = advise_trial(c, wl, m, opt, &b);
        if (code)
            return code;
        if (!b) {
            adv->safe = m;
            break;
        }
    }
    return 0;
}

int cmd_simulate(int argc, char **argv)
{
    cli_common c;
    cli_common_init(&c);
    const char *svg = NULL, *html = NULL;
    const char *explain[64];
    int nexplain = 0, partial = 0, reference = 0, detail = 0, advise = 0;
    const char *workloads[256], *acfg[256];
    int nworkloads = 0, nacfg = 0, autoscaler = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            help(stdout);
            return 0;
        }
        if ((!strcmp(a, "--svg") || !strcmp(a, "--html") || !strcmp(a, "--explain"))) {
            if (i + 1 >= argc) {
                fprintf(stderr, "berth simulate: %s needs a value\n", a);
                return 2;
            }
            if (!strcmp(a, "--svg"))
                svg = argv[++i];
            else if (!strcmp(a, "--html"))
                html = argv[++i];
            else if (nexplain < 64)
                explain[nexplain++] = argv[++i];
            continue;
        }
        const char *v = NULL;
        int got = cli_flag_value("simulate", "--workloads", argc, argv, &i, &v);
        if (got < 0)
            return 2;
        if (got) {
            if (nworkloads == 256) {
                fprintf(stderr, "berth simulate: at most 256 --workloads files\n");
                return 2;
            }
            workloads[nworkloads++] = v;
            continue;
        }
        if ((got = cli_flag_value("simulate", "--autoscaler-config", argc, argv, &i, &v)) < 0)
            return 2;
        if (got) {
            if (nacfg == 256) {
                fprintf(stderr, "berth simulate: at most 256 --autoscaler-config files\n");
                return 2;
            }
            acfg[nacfg++] = v;
            continue;
        }
        if ((got = cli_flag_value("simulate", "--autoscaler", argc, argv, &i, &v)) < 0)
            return 2;
        if (got) {
            autoscaler = berth_xl_autoscaler_parse(v);
            if (autoscaler < 0) {
                fprintf(stderr, "berth simulate: --autoscaler must be karpenter, ocean or "
                                "cluster-autoscaler, got '%s'\n", v);
                return 2;
            }
            continue;
        }
        if ((got = cli_flag_value("simulate", "--detail", argc, argv, &i, &v)) < 0)
            return 2;
        if (got) {
            if (strcmp(v, "all") && strcmp(v, "summary")) {
                fprintf(stderr, "berth simulate: --detail must be summary or all, got '%s'\n", v);
                return 2;
            }
            detail = !strcmp(v, "all");
            continue;
        }
        if (!strcmp(a, "--advise-upgrade")) {
            advise = 1;
            continue;
        }
        if (!strcmp(a, "--partial")) {
            partial = 1;
            continue;
        }
        if (!strcmp(a, "--reference")) {
            reference = 1;
            continue;
        }
        if (cli_common_or_unknown("simulate", &c, argc, argv, &i) < 0)
            return 2;
    }
    if (advise && !nworkloads) {
        fprintf(stderr, "berth simulate: --advise-upgrade needs --workloads\n");
        return 2;
    }
    if ((autoscaler || nacfg) && !nworkloads) {
        fprintf(stderr, "berth simulate: --autoscaler and --autoscaler-config need --workloads\n");
        return 2;
    }
    if (autoscaler && !nacfg) {
        fprintf(stderr, "berth simulate: --autoscaler needs --autoscaler-config FILE (NodePools "
                        "or VirtualNodeGroups, and InstanceTypes)\n");
        return 2;
    }
    if (nacfg && !autoscaler) {
        fprintf(stderr, "berth simulate: --autoscaler-config needs --autoscaler\n");
        return 2;
    }
    if (advise && autoscaler) {
        fprintf(stderr, "berth simulate: --advise-upgrade is the bare-metal advice (no node can "
                        "be bought); with --autoscaler the answer is what it launches\n");
        return 2;
    }
    wl_opts wlo = {workloads, nworkloads, acfg, nacfg, autoscaler, advise, c.strict};
    berth_nexus nx;
    berth_nexus_init(&nx);
    int code = cli_load_nexus(&nx, &c);
    if (code) {
        berth_nexus_free(&nx);
        return code;
    }
    berth_xl xl;
    berth_xl_init(&xl);
    if (nworkloads && (code = load_workloads(&nx, &xl, &wlo))) {
        berth_xl_free(&xl);
        berth_nexus_free(&nx);
        return code;
    }
    berth_nexus_options opt = {.partial = partial, .use_index = !reference,
                               .tiebreak = c.tiebreak, .seed = c.seed,
                               .explain_vm = nexplain ? explain[0] : NULL,
                               .explain_out = stderr};
    int found = 0;
    opt.explain_found = &found;
    if (nworkloads) {
        opt.on_step = berth_xl_on_step;
        opt.step_ctx = &xl;
    }
    berth_error e;
    berth_error_clear(&e);
    int rc = berth_nexus_run(&nx, &opt, &e);
    /* further --explain targets: re-run on a fresh copy is costly; explain the
     * first and list the rest as a usage note */
    if (nexplain > 1)
        fprintf(stderr, "berth simulate: only the first --explain (%s) is explained per run\n",
                explain[0]);
    if (rc && rc != BERTH_ENOFIT) {
        fprintf(stderr, "berth: %s\n", e.msg);
        berth_xl_free(&xl);
        berth_nexus_free(&nx);
        return berth_err_exit_code(rc);
    }
    if (nexplain && !found) {
        /* no VM of that name was ever placed: name the closest ones */
        explain_unknown(&nx, explain[0]);
        berth_xl_free(&xl);
        berth_nexus_free(&nx);
        return 2;
    }
    if (nworkloads && !c.quiet)
        berth_report_warnings_text(stderr, &xl.warnings);
    berth_xl_advice adv = {0};
    if (advise) {
        int arc = advise_upgrade(&c, &wlo, &opt, &nx, &xl, &adv);
        if (arc) {
            berth_xl_free(&xl);
            berth_nexus_free(&nx);
            return arc;
        }
    }
    if (!c.quiet) {
        if (c.format == CLI_TABLE) {
            berth_report_nexus_table(stdout, &nx);
            if (nworkloads)
                berth_report_crosslayer_table(stdout, &nx, &xl, detail);
            if (advise)
                berth_report_crosslayer_advice_text(stdout, &nx, &xl, &adv);
        } else {
            json_t *j = berth_report_nexus_json(&nx);
            if (j && ((nworkloads && berth_report_crosslayer_json(j, &nx, &xl, detail)) ||
                      (advise && berth_report_crosslayer_advice_json(j, &nx, &xl, &adv)))) {
                json_decref(j);
                j = NULL;
            }
            if (cli_print_json(j, c.format)) { /* printed the failure */
                berth_xl_free(&xl);
                berth_nexus_free(&nx);
                return 3;
            }
        }
    }
    int werr = 0;
    if (svg && cli_write_file(svg, write_svg, &nx))
        werr = 1;
    xl_page page = {&nx, &xl};
    if (html && (nworkloads ? cli_write_file(html, write_xl_html, &page)
                            : cli_write_file(html, write_html, &nx)))
        werr = 1;
    berth_xl_free(&xl);
    berth_nexus_free(&nx);
    if (werr)
        return 3;
    return rc == BERTH_ENOFIT ? 1 : 0;
}
