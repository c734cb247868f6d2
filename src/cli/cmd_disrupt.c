/* cli/cmd_disrupt.c - `berth disrupt plan`: load NodePools, NodeClaims,
 * InstanceTypes and Kubernetes objects, run one disruption pass at --at
 * (SPEC 4, 4.1) and print a table or the SPEC 6.3 JSON (or YAML);
 * `berth disrupt simulate`: the same pass applied every --step from
 * --from to --to with the termination flow, printed as a timeline. */
#include "cli/cli.h"

#include <jansson.h>
#include <string.h>
#include <time.h>

#include "berth/disrupt.h"
#include "berth/time.h"
#include "berth/plan_report.h"
#include "berth/report.h"

static void help(FILE *f)
{
    fprintf(f,
            "usage: berth disrupt plan [options] FILE...\n"
            "\n"
            "Decides which nodes Karpenter / AKS Node Auto Provisioning would disrupt at one\n"
            "moment (SPEC section 4): expirations, then the first of emptiness, drift,\n"
            "multi-node and single-node consolidation that acts, within the NodePools'\n"
            "disruption budgets; pods are re-placed with the kube scheduling pipeline.\n"
            "Input: NodePool, NodeClaim (karpenter.sh/v1), InstanceType (berth.io/v1), Node,\n"
            "Pod, PodDisruptionBudget and workloads.\n"
            "\n"
            "options:\n"
            "  --at TIME            the moment to plan at (RFC 3339, e.g. 2024-05-01T12:00:00Z;\n"
            "                       default: the current time)\n"
            "  --feature-gates G    Name=true|false[,...]; SpotToSpotConsolidation (default false)\n"
            "  --optimize           also search a consolidation beyond Karpenter's one greedy\n"
            "                       command (same budgets and rules) and show it when it leaves\n"
            "                       a strictly lower cost (docs/disrupt.md \"--optimize\")\n"
            "  --reference          simulate with one scheduling run per question and per\n"
            "                       replacement option (the slow reference path; same decisions)\n"
            "  --threads N          threads for the per-node filters and scores of the what-if\n"
            "                       placements on clusters of 1024 nodes or more (default: the\n"
            "                       online cores); the plan is the same for every N\n"
            "  -o, --output FORMAT  table (default), json (SPEC 6.3) or yaml\n"
            "  --svg FILE           also draw the nodes before and after the plan (deleted,\n"
            "                       replaced, blocked, kept) with their prices\n"
            "  --strict             unknown fields in Kubernetes and Karpenter kinds, and kinds\n"
            "                       the command does not read, are errors\n"
            "  -q, --quiet          print nothing (exit code only)\n"
            "  -h, --help           this text\n"
            "\n"
            "exit codes: 0 planned (with or without actions), 2 bad input or usage,\n"
            "3 internal error.\n");
}

static int parse_gates(const char *v, int *spot_to_spot)
{
    char buf[512];
    snprintf(buf, sizeof buf, "%s", v);
    char *save = NULL;
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(t, '=');
        if (!eq)
            return -1;
        *eq = 0;
        int val;
        if (!strcmp(eq + 1, "true"))
            val = 1;
        else if (!strcmp(eq + 1, "false"))
            val = 0;
        else
            return -1;
        if (!strcmp(t, "SpotToSpotConsolidation"))
            *spot_to_spot = val;
        else if (strcmp(t, "NodeRepair") && strcmp(t, "ReservedCapacity") &&
                 strcmp(t, "StaticCapacity"))
            return -1;
    }
    return 0;
}

/* The value v of --feature-gates (NULL: missing) into *spot_to_spot: 0,
 * or -1 (printed, naming cmd). */
static int gates_value(const char *cmd, const char *v, int *spot_to_spot)
{
    if (v && !parse_gates(v, spot_to_spot))
        return 0;
    fprintf(stderr, "berth %s: --feature-gates expects Name=true|false "
                    "(SpotToSpotConsolidation), got '%s'\n", cmd, v ? v : "");
    return -1;
}

static int load_one(void *m, const char *path, int strict, berth_error *e)
{
    return berth_disrupt_load_file(m, path, strict, e);
}

/* Initialises m, loads every input file of c into it and finalises it:
 * 0, or the error code with e set. */
static int load_model(const cli_common *c, berth_disrupt *m, berth_error *e)
{
    berth_disrupt_init(m);
    berth_error_clear(e);
    int rc = cli_stream_each(c, load_one, m, e);
    if (!rc)
        rc = berth_disrupt_finalize(m, e);
    /* kinds skipped over every file and the planner's warnings, once (SPEC 6.1) */
    if (!rc && !c->quiet)
        berth_report_warnings_text(stderr, &m->kube.skipped);
    return rc;
}

/* Prints e, frees m and returns rc's exit code. */
static int fail(berth_disrupt *m, const berth_error *e, int rc)
{
    fprintf(stderr, "berth: %s\n", e->msg);
    berth_disrupt_free(m);
    return berth_err_exit_code(rc);
}

typedef struct svg_args {
    const berth_disrupt *m;
    const berth_dplan *p;
} svg_args;

static int write_svg(FILE *f, const void *arg)
{
    const svg_args *a = arg;
    return berth_report_disrupt_svg(f, a->m, a->p);
}

static int plan(int argc, char **argv)
{
    cli_common c;
    cli_common_init(&c);
    berth_dplan_options opt = {0};
    opt.threads = cli_default_threads(); /* docs/disrupt.md "Threads" */
    int have_at = 0;
    const char *svg = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            help(stdout);
            return 0;
        }
        int at = cli_flag_at("disrupt plan", argc, argv, &i, &opt.now);
        if (at < 0)
            return 2;
        if (at) {
            have_at = 1;
            continue;
        }
        if (!strcmp(a, "--feature-gates") || !strncmp(a, "--feature-gates=", 16)) {
            const char *v = a[15] == '=' ? a + 16 : (i + 1 < argc ? argv[++i] : NULL);
            if (gates_value("disrupt plan", v, &opt.spot_to_spot))
                return 2;
            continue;
        }
        if (!strcmp(a, "--optimize") || !strcmp(a, "--reference")) {
            *(a[2] == 'o' ? &opt.optimize : &opt.reference) = 1;
            continue;
        }
        int r = cli_flag_value("disrupt plan", "--svg", argc, argv, &i, &svg);
        if (r < 0)
            return 2;
        if (r)
            continue;
        if ((r = cli_flag_threads("disrupt plan", argc, argv, &i, &opt.threads)) < 0)
            return 2;
        if (r)
            continue;
        if (cli_common_or_unknown("disrupt plan", &c, argc, argv, &i) < 0)
            return 2;
    }
    if (!have_at)
        opt.now = (int64_t)time(NULL);
    berth_disrupt m;
    berth_error e;
    int rc = load_model(&c, &m, &e);
    berth_dplan p;
    memset(&p, 0, sizeof p);
    if (!rc)
        rc = berth_disrupt_plan(&m, &opt, &p, &e);
    if (rc)
        return fail(&m, &e, rc);
    int code = 0;
    if (!c.quiet) {
        if (c.format == CLI_TABLE)
            berth_report_disrupt_table(stdout, &m, &p);
        else if (cli_print_json(berth_report_disrupt_json(&m, &p), c.format))
            code = 3;
    }
    if (!code && svg && cli_write_file(svg, write_svg, &(svg_args){&m, &p}))
        code = 3;
    berth_dplan_free(&p);
    berth_disrupt_free(&m);
    return code;
}

/* ---- berth disrupt simulate ---- */

static void simulate_help(FILE *f)
{
    fprintf(f,
            "usage: berth disrupt simulate [options] FILE... --from TIME --to TIME\n"
            "\n"
            "Applies the disruption plan of `berth disrupt plan` repeatedly over a time window\n"
            "and reports a timeline (SPEC 4.1 \"Termination\", docs/disrupt.md \"Simulate\"): at\n"
            "each step, replacements launched earlier become Ready and their candidates are\n"
            "tainted karpenter.sh/disrupted:NoSchedule; tainted nodes drain (eviction groups,\n"
            "PodDisruptionBudgets, do-not-disrupt, terminationGracePeriod) and are removed when\n"
            "empty; evicted pods are re-scheduled with the kube scheduler; then one disruption\n"
            "pass runs at the step's time and its actions start.\n"
            "\n"
            "options:\n"
            "  --from TIME          start of the window (RFC 3339, e.g. 2024-05-01T12:00:00Z)\n"
            "  --to TIME            end of the window (inclusive when on a step)\n"
            "  --step DURATION      time between steps (Go duration, default 1m)\n"
            "  --launch-delay D     time from launching a replacement to it being Ready and\n"
            "                       initialised (default 60s; 0s: Ready in the same step)\n"
            "  --feature-gates G    Name=true|false[,...]; SpotToSpotConsolidation (default false)\n"
            "  -o, --output FORMAT  table (default), json or yaml\n"
            "  --strict             unknown fields in Kubernetes, Karpenter and Azure kinds, and\n"
            "                       kinds the command does not read, are errors\n"
            "  -q, --quiet          print nothing (exit code only)\n"
            "  -h, --help           this text\n"
            "\n"
            "At most %d steps. exit codes: 0 ran, 1 ran but some pod ended the window\n"
            "without a node, 2 bad input or usage, 3 internal error.\n",
            BERTH_DSIM_MAX_STEPS);
}

/* The timeline's JSON with the input's `warnings` (skipped kinds and the
 * planner's warnings), as `disrupt plan` has them. */
static json_t *timeline_json(const berth_disrupt *m, const berth_dtimeline *t)
{
    json_t *j = berth_report_disrupt_timeline_json(t);
    if (j && berth_report_set_warnings(j, &m->kube.skipped)) {
        json_decref(j);
        return NULL;
    }
    return j;
}

static int simulate(int argc, char **argv)
{
    static const char cmd[] = "disrupt simulate", durations[] = "30s, 1m or 1h30m";
    cli_common c;
    cli_common_init(&c);
    berth_dsim_options o = {0};
    o.step = 60;
    o.launch_delay = BERTH_DSIM_LAUNCH_DELAY;
    int have_from = 0, have_to = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            simulate_help(stdout);
            return 0;
        }
        int r;
        if ((r = cli_flag_value(cmd, "--from", argc, argv, &i, &v))) {
            if (r < 0 || cli_parse_time(cmd, "--from", v, &o.from))
                return 2;
            have_from = 1;
            continue;
        }
        if ((r = cli_flag_value(cmd, "--to", argc, argv, &i, &v))) {
            if (r < 0 || cli_parse_time(cmd, "--to", v, &o.to))
                return 2;
            have_to = 1;
            continue;
        }
        if ((r = cli_flag_value(cmd, "--step", argc, argv, &i, &v))) {
            if (r < 0 || cli_parse_duration(cmd, "--step", v, 1, durations, &o.step))
                return 2;
            continue;
        }
        if ((r = cli_flag_value(cmd, "--launch-delay", argc, argv, &i, &v))) {
            if (r < 0 || cli_parse_duration(cmd, "--launch-delay", v, 0, durations,
                                            &o.launch_delay))
                return 2;
            continue;
        }
        if ((r = cli_flag_value(cmd, "--feature-gates", argc, argv, &i, &v))) {
            int spot_to_spot = 0; /* each --feature-gates starts from the defaults */
            if (r < 0 || gates_value(cmd, v, &spot_to_spot))
                return 2;
            o.spot_to_spot = spot_to_spot;
            continue;
        }
        if (cli_common_or_unknown(cmd, &c, argc, argv, &i) < 0)
            return 2;
    }
    if (!have_from || !have_to) {
        fprintf(stderr, "berth disrupt simulate: --from and --to are required (see berth disrupt "
                        "simulate --help)\n");
        return 2;
    }
    if (o.to < o.from) {
        fprintf(stderr, "berth disrupt simulate: --to is before --from\n");
        return 2;
    }
    uint64_t nsteps = (uint64_t)(o.to - o.from) / (uint64_t)o.step + 1;
    if (nsteps > BERTH_DSIM_MAX_STEPS) {
        fprintf(stderr, "berth disrupt simulate: the window holds %llu steps, at most %d are "
                        "allowed (use a larger --step or a shorter window)\n",
                (unsigned long long)nsteps, BERTH_DSIM_MAX_STEPS);
        return 2;
    }
    berth_disrupt m;
    berth_error e;
    int rc = load_model(&c, &m, &e);
    berth_dtimeline t;
    memset(&t, 0, sizeof t);
    if (!rc)
        rc = berth_disrupt_simulate(&m, &o, &t, &e);
    if (rc)
        return fail(&m, &e, rc);
    int code = t.pending_end ? 1 : 0;
    if (!c.quiet) {
        if (c.format == CLI_TABLE)
            berth_report_disrupt_timeline_table(stdout, &t);
        else if (cli_print_json(timeline_json(&m, &t), c.format))
            code = 3;
    }
    berth_dtimeline_free(&t);
    berth_disrupt_free(&m);
    return code;
}

int cmd_disrupt(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
        FILE *f = argc < 2 ? stderr : stdout;
        fprintf(f, "usage: berth disrupt plan [options] FILE...   (berth disrupt plan --help)\n"
                   "       berth disrupt simulate [options] FILE... --from T1 --to T2   "
                   "(berth disrupt simulate --help)\n");
        return argc < 2 ? 2 : 0;
    }
    if (!strcmp(argv[1], "plan"))
        return plan(argc - 1, argv + 1);
    if (!strcmp(argv[1], "simulate"))
        return simulate(argc - 1, argv + 1);
    fprintf(stderr, "berth disrupt: unknown subcommand '%s' (disrupt has: plan, simulate)\n",
            argv[1]);
    return 2;
}
