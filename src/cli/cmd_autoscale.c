/* cli/cmd_autoscale.c - `berth autoscale plan`: load VirtualNodeGroups,
 * Reservations, Headroom, InstanceTypes and Kubernetes objects, run one
 * autoscaler pass at --at (SPEC 5) and print a table or the SPEC 6.3 JSON
 * (or YAML). */
#include "cli/cli.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "berth/autoscale.h"
#include "berth/disrupt.h"
#include "berth/time.h"
#include "berth/plan_report.h"
#include "berth/report.h"

static void help(FILE *f)
{
    fprintf(f,
            "usage: berth autoscale plan [options] FILE...\n"
            "\n"
            "Decides what Spot Ocean would buy and remove at one moment (SPEC section 5):\n"
            "pending pods that fit no existing node go to a virtual node group that can host\n"
            "them and are bin-packed onto new nodes (unused reservations first, then spot by\n"
            "market score, on-demand as fallback); headroom is kept; then the least utilised\n"
            "nodes whose pods all move elsewhere are scaled down; last, nodes are replaced\n"
            "(spot interruption, auto-heal, roll, revert to reserved capacity or to spot), the\n"
            "new node launched first. See docs/autoscale.md.\n"
            "Input: VirtualNodeGroup, Reservation, Headroom, InstanceType (berth.io/v1), Node,\n"
            "Pod, PodDisruptionBudget and workloads.\n"
            "\n"
            "options:\n"
            "  --at TIME            the moment to plan at (RFC 3339, e.g. 2024-05-01T12:00:00Z;\n"
            "                       default: the current time)\n"
            "  -o, --output FORMAT  table (default), json (SPEC 6.3) or yaml\n"
            "  --strict             unknown fields in Kubernetes kinds, and kinds the command\n"
            "                       does not read, are errors\n"
            "  --policy POLICY      ocean (default) or cluster-autoscaler (SPEC 5.1: its\n"
            "                       scale-up estimate and expanders, its scale-down rules)\n"
            "  --expander NAME      cluster-autoscaler: least-waste, most-pods, least-nodes,\n"
            "                       price, priority (the cluster-autoscaler-priority-expander\n"
            "                       ConfigMap in the input) or random (default; --seed N)\n"
            "  --scale-down-unneeded-time D  cluster-autoscaler: a node goes once unneeded\n"
            "                       for more than D (default 10m; node annotation\n"
            "                       berth.io/unneeded-since says since when)\n"
            "  --blocking-system-pod-distruption-timeout D  cluster-autoscaler (upstream's\n"
            "                       spelling): a kube-system pod without a\n"
            "                       PodDisruptionBudget stops blocking its node's removal\n"
            "                       once created at least D before --at (default 1h)\n"
            "  --skip-nodes-with-custom-controller-pods[=false]  cluster-autoscaler: by\n"
            "                       default a pod whose controller is not a\n"
            "                       ReplicationController, ReplicaSet, Job or StatefulSet\n"
            "                       blocks its node's removal; =false: any controller will do\n"
            "  --interrupt NODE[,NODE]  ocean: spot interruption notices; each node is\n"
            "                       replaced and drained at once (repeatable)\n"
            "  --roll GROUP[:N%%]    ocean: roll a virtual node group; the plan replaces the\n"
            "                       first batch of N %% of its nodes (default 20 %%)\n"
            "  --autoheal-grace D   ocean: replace nodes not Ready for more than D (default 5m)\n"
            "  --seed N             seed of the random expander and of expander ties\n"
            "  --threads N          threads for the per-node filters and scores of the what-if\n"
            "                       placements on clusters of 1024 nodes or more (default: the\n"
            "                       online cores); the plan is the same for every N\n"
            "  --reference          the plain planner: every what-if question schedules a\n"
            "                       view of the whole cluster (slow; the same plan)\n"
            "  -q, --quiet          print nothing (exit code only)\n"
            "  -h, --help           this text\n"
            "\n"
            "exit codes: 0 planned and every pending pod has a node, 1 some pod stays\n"
            "unschedulable (reasons in the output), 2 bad input or usage, 3 internal error.\n");
}

/* The plan's own flags (replacements, cluster-autoscaler mode): 1 consumed,
 * 0 not one of them, -1 usage error (printed). Node names of --interrupt
 * point into names (a copy of the argument, freed by the caller). */
static int plan_flag(int argc, char **argv, int *i, berth_aplan_options *o, char **names,
                     const char **list, uint32_t cap, int *ocean_only, int *ca_only)
{
    static const char cmd[] = "autoscale plan";
    const char *v = NULL;
    int r;
    if ((r = cli_flag_value(cmd, "--policy", argc, argv, i, &v))) {
        if (r > 0 && !strcmp(v, "ocean"))
            o->policy = BERTH_POLICY_OCEAN;
        else if (r > 0 && !strcmp(v, "cluster-autoscaler"))
            o->policy = BERTH_POLICY_CLUSTER_AUTOSCALER;
        else if (r > 0) {
            fprintf(stderr, "berth %s: --policy expects ocean or cluster-autoscaler, got '%s'\n",
                    cmd, v);
            return -1;
        }
        return r;
    }
    if ((r = cli_flag_value(cmd, "--expander", argc, argv, i, &v))) {
        int x = r > 0 ? berth_expander_parse(v) : 0;
        if (r > 0 && x < 0) {
            fprintf(stderr, "berth %s: --expander expects least-waste, most-pods, least-nodes, "
                            "price, priority or random, got '%s'\n", cmd, v);
            return -1;
        }
        o->expander = (berth_expander)x;
        *ca_only = 1;
        return r;
    }
    int64_t *dur = NULL;
    int *has = NULL;
    const char *dname = NULL;
    if ((r = cli_flag_value(cmd, "--autoheal-grace", argc, argv, i, &v))) {
        dur = &o->autoheal_grace, has = &o->has_autoheal_grace, dname = "--autoheal-grace";
        *ocean_only = 1;
    } else if ((r = cli_flag_value(cmd, "--scale-down-unneeded-time", argc, argv, i, &v))) {
        dur = &o->unneeded_time, has = &o->has_unneeded_time, dname = "--scale-down-unneeded-time";
        *ca_only = 1;
    } else if ((r = cli_flag_value(cmd, "--blocking-system-pod-distruption-timeout", argc, argv, i,
                                   &v))) {
        dur = &o->system_pod_timeout, has = &o->has_system_pod_timeout;
        dname = "--blocking-system-pod-distruption-timeout";
        *ca_only = 1;
    }
    if (r < 0)
        return r;
    if (dur) {
        if (cli_parse_duration(cmd, dname, v, 0, "30s, 5m or 1h30m", dur))
            return -1;
        *has = 1;
        return 1;
    }
    {
        /* a Go boolean flag: bare (true) or =true / =false */
        static const char bf[] = "--skip-nodes-with-custom-controller-pods";
        const char *a = argv[*i];
        size_t n = sizeof bf - 1;
        if (!strncmp(a, bf, n) && (!a[n] || a[n] == '=')) {
            const char *b = a[n] ? a + n + 1 : "true";
            if (strcmp(b, "true") && strcmp(b, "false")) {
                fprintf(stderr, "berth %s: %s expects =true or =false, got '%s'\n", cmd, bf, b);
                return -1;
            }
            o->custom_controller_pods_ok = !strcmp(b, "false");
            *ca_only = 1;
            return 1;
        }
    }
    if ((r = cli_flag_value(cmd, "--roll", argc, argv, i, &v))) {
        if (r < 0)
            return r;
        const char *colon = strchr(v, ':');
        char *end = NULL;
        long long pct = colon ? strtoll(colon + 1, &end, 10) : 0;
        if (end && *end == '%')
            end++;
        if (colon == v || (colon && (end == colon + 1 || *end || pct < 1 || pct > 100))) {
            fprintf(stderr, "berth %s: --roll expects GROUP or GROUP:N%% with N in 1..100, got "
                            "'%s'\n", cmd, v);
            return -1;
        }
        *names = strdup(v);
        if (!*names) {
            fprintf(stderr, "berth: out of memory\n");
            return -1;
        }
        if (colon)
            (*names)[colon - v] = 0;
        o->roll = *names;
        o->roll_percent = pct;
        *ocean_only = 1;
        return 1;
    }
    if ((r = cli_flag_value(cmd, "--interrupt", argc, argv, i, &v))) {
        if (r < 0)
            return r;
        char *copy = strdup(v);
        if (!copy) {
            fprintf(stderr, "berth: out of memory\n");
            return -1;
        }
        *names = copy;
        for (char *tok = strtok(copy, ","); tok; tok = strtok(NULL, ",")) {
            if (o->ninterrupt >= cap) {
                fprintf(stderr, "berth %s: --interrupt: more than %u nodes\n", cmd, cap);
                return -1;
            }
            list[o->ninterrupt++] = tok;
        }
        if (!*copy) {
            fprintf(stderr, "berth %s: --interrupt expects NODE[,NODE...], got '%s'\n", cmd, v);
            return -1;
        }
        o->interrupt = list;
        *ocean_only = 1;
        return 1;
    }
    return 0;
}

static int load_one(void *m, const char *path, int strict, berth_error *e)
{
    return berth_autoscale_load_file(m, path, strict, e);
}

static int plan_run(cli_common *cp, berth_aplan_options *op, int have_at);

static int plan(int argc, char **argv)
{
    cli_common c;
    cli_common_init(&c);
    berth_aplan_options opt = {0};
    opt.threads = cli_default_threads(); /* docs/autoscale.md "Threads" */
    int have_at = 0;
    /* replacements / cluster-autoscaler flags: argument copies and node names */
    enum { MAX_NAMES = 4096 };
    char *copies[256] = {0};
    int ncopies = 0, ocean_only = 0, ca_only = 0, bad = 0;
    const char **inames = calloc(MAX_NAMES, sizeof *inames);
    if (!inames) {
        fprintf(stderr, "berth: out of memory\n");
        return 3;
    }
    for (int i = 1; i < argc && !bad; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            help(stdout);
            bad = -1;
            break;
        }
        if (ncopies == 256) {
            fprintf(stderr, "berth autoscale plan: too many --roll / --interrupt flags\n");
            bad = 2;
            break;
        }
        int pf = plan_flag(argc, argv, &i, &opt, &copies[ncopies], inames, MAX_NAMES,
                           &ocean_only, &ca_only);
        ncopies += copies[ncopies] != NULL;
        if (pf < 0)
            bad = 2;
        if (pf)
            continue;
        if (!strcmp(a, "--reference")) {
            opt.reference = 1;
            continue;
        }
        int tr = cli_flag_threads("autoscale plan", argc, argv, &i, &opt.threads);
        if (tr < 0) {
            bad = 2;
            break;
        }
        if (tr)
            continue;
        int at = cli_flag_at("autoscale plan", argc, argv, &i, &opt.now);
        if (at < 0) {
            bad = 2;
            break;
        }
        if (at) {
            have_at = 1;
            continue;
        }
        if (cli_common_or_unknown("autoscale plan", &c, argc, argv, &i) < 0)
            bad = 2;
    }
    if (!bad && opt.policy == BERTH_POLICY_OCEAN && ca_only) {
        fprintf(stderr, "berth autoscale plan: --expander, --scale-down-unneeded-time, "
                        "--blocking-system-pod-distruption-timeout and "
                        "--skip-nodes-with-custom-controller-pods need --policy "
                        "cluster-autoscaler\n");
        bad = 2;
    }
    if (!bad && opt.policy == BERTH_POLICY_CLUSTER_AUTOSCALER && ocean_only) {
        fprintf(stderr, "berth autoscale plan: --interrupt, --roll and --autoheal-grace are "
                        "Ocean replacements; cluster-autoscaler does not replace nodes\n");
        bad = 2;
    }
    opt.seed = c.seed;
    int code = bad < 0 ? 0 : bad ? bad : plan_run(&c, &opt, have_at);
    for (int i = 0; i < ncopies; i++)
        free(copies[i]);
    free(inames);
    return code;
}

static int plan_run(cli_common *cp, berth_aplan_options *op, int have_at)
{
    cli_common c = *cp;
    berth_aplan_options opt = *op;
    if (!have_at)
        opt.now = (int64_t)time(NULL);
    berth_autoscale m;
    berth_autoscale_init(&m);
    berth_error e;
    berth_error_clear(&e);
    int rc = cli_stream_each(&c, load_one, &m, &e);
    if (!rc)
        rc = berth_autoscale_finalize(&m, &e);
    /* kinds skipped over every file and the planner's warnings, once (SPEC 6.1) */
    if (!rc && !c.quiet)
        berth_report_warnings_text(stderr, &m.kube.skipped);
    berth_aplan p;
    memset(&p, 0, sizeof p);
    if (!rc)
        rc = berth_autoscale_plan(&m, &opt, &p, &e);
    if (rc) {
        fprintf(stderr, "berth: %s\n", e.msg);
        berth_autoscale_free(&m);
        return berth_err_exit_code(rc);
    }
    int code = p.nunsched ? 1 : 0;
    if (!c.quiet) {
        if (c.format == CLI_TABLE)
            berth_report_autoscale_table(stdout, &m, &p);
        else if (cli_print_json(berth_report_autoscale_json(&m, &p), c.format))
            code = 3;
    }
    berth_aplan_free(&p);
    berth_autoscale_free(&m);
    return code;
}

/* ---- berth autoscale simulate ---- */

static void sim_help(FILE *f)
{
    fprintf(f,
            "usage: berth autoscale simulate [options] --events FILE FILE...\n"
            "\n"
            "Runs the autoscaler over a timeline (SPEC section 5): every --step it applies the\n"
            "events due (AutoscaleEvent: PodArrive, PodLeave, SpotInterruption, PriceChange),\n"
            "registers nodes launched --launch-delay ago, terminates drained nodes, runs one\n"
            "autoscaler pass and applies it (scale-up, scale-down, and replacements: the new\n"
            "node is launched first, the old one drains once it has registered). Reports\n"
            "nodes, cost per hour, pending pods and replacements per step, and the total cost\n"
            "and pod-pending time. See docs/autoscale.md \"Simulate\".\n"
            "\n"
            "options:\n"
            "  --events FILE        the AutoscaleEvent documents (required)\n"
            "  --from TIME          the first step (RFC 3339; default: the first event)\n"
            "  --to TIME            the last step (default: the last event + 15m)\n"
            "  --step DURATION      time between passes (default 1m)\n"
            "  --launch-delay DUR   a new node registers this long after launch (default 2m)\n"
            "  --drain-timeout DUR  a draining node is terminated after at most this\n"
            "                       (default 300s, at least 300s)\n"
            "  --reference          every pass runs the plain (uncached) planner\n"
            "  --threads N          threads for each pass's what-if placements on clusters of\n"
            "                       1024 nodes or more (default: the online cores); the\n"
            "                       result is the same for every N\n"
            "  -o, --output FORMAT  table (default), json or yaml\n"
            "  --svg FILE           also draw nodes (launched, terminated), pending pods and\n"
            "                       cost per hour over time\n"
            "  --strict             unknown fields in Kubernetes kinds, and kinds the command\n"
            "                       does not read, are errors\n"
            "  -q, --quiet          print nothing (exit code only)\n"
            "\n"
            "exit codes: 0 no pod pending at the end, 1 some pod still pending, 2 bad input or\n"
            "usage, 3 internal error.\n");
}

typedef struct sim_load {
    berth_autoscale *m;
    berth_atimeline *t;
} sim_load;

static int sim_load_one(void *vc, const berth_source *src, int strict, berth_error *e)
{
    sim_load *c = vc;
    int rc = berth_autoscale_load(c->m, src, strict, e);
    return rc ? rc : berth_atimeline_scan_pods(c->t, c->m, src, e);
}

typedef struct svg_args {
    const berth_asim_options *o;
    const berth_asim_result *r;
} svg_args;

static int write_svg(FILE *f, const void *arg)
{
    const svg_args *a = arg;
    return berth_report_autoscale_timeline_svg(f, a->o, a->r);
}

static int simulate(int argc, char **argv)
{
    static const char cmd[] = "autoscale simulate";
    cli_common c;
    cli_common_init(&c);
    berth_asim_options o = {0};
    o.step = 60;
    o.launch_delay = 120;
    o.drain_timeout = 300;
    o.threads = cli_default_threads(); /* docs/autoscale.md "Threads" */
    const char *events = NULL, *svg = NULL;
    int have_from = 0, have_to = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            sim_help(stdout);
            return 0;
        }
        if (!strcmp(a, "--reference")) {
            o.reference = 1;
            continue;
        }
        static const char *const tflags[] = {"--from", "--to"};
        static const char *const dflags[] = {"--step", "--launch-delay", "--drain-timeout"};
        int64_t *tdst[] = {&o.from, &o.to}, *ddst[] = {&o.step, &o.launch_delay, &o.drain_timeout};
        int done = 0;
        int r = cli_flag_threads(cmd, argc, argv, &i, &o.threads);
        if (r < 0)
            return 2;
        if (r)
            continue;
        r = cli_flag_value(cmd, "--events", argc, argv, &i, &events);
        if (r < 0)
            return 2;
        done = r;
        if (!done && (r = cli_flag_value(cmd, "--svg", argc, argv, &i, &svg)) < 0)
            return 2;
        done = done || r;
        for (int k = 0; !done && k < 2; k++) {
            if ((r = cli_flag_value(cmd, tflags[k], argc, argv, &i, &v)) < 0)
                return 2;
            if (!r)
                continue;
            if (cli_parse_time(cmd, tflags[k], v, tdst[k]))
                return 2;
            *(k ? &have_to : &have_from) = 1;
            done = 1;
        }
        for (int k = 0; !done && k < 3; k++) {
            if ((r = cli_flag_value(cmd, dflags[k], argc, argv, &i, &v)) < 0)
                return 2;
            if (!r)
                continue;
            if (cli_parse_duration(cmd, dflags[k], v, 0, "1m or 300s", ddst[k]))
                return 2;
            done = 1;
        }
        if (done)
            continue;
        if (cli_common_or_unknown(cmd, &c, argc, argv, &i) < 0)
            return 2;
    }
    if (!events) {
        fprintf(stderr, "berth autoscale simulate: --events FILE is required\n");
        return 2;
    }
    berth_autoscale m;
    berth_autoscale_init(&m);
    berth_atimeline t;
    berth_atimeline_init(&t);
    berth_error e;
    berth_error_clear(&e);
    sim_load sl = {&m, &t};
    int rc = cli_load_each(&c, &m.kube.arena, sim_load_one, &sl, &e);
    if (!rc)
        rc = berth_autoscale_finalize(&m, &e);
    if (!rc && !c.quiet) /* skipped kinds and the planner's warnings, once */
        berth_report_warnings_text(stderr, &m.kube.skipped);
    berth_source src;
    if (!rc)
        rc = cli_load_doc(&m.kube.arena, events, &src, &e);
    if (!rc)
        rc = berth_atimeline_load_events(&t, &m, &src, &e);
    if (!rc) {
        berth_atimeline_finish(&t);
        if (!have_from)
            o.from = t.nev ? t.ev[0].at : (int64_t)time(NULL);
        if (!have_to)
            o.to = (t.nev ? t.ev[t.nev - 1].at : o.from) + 15 * 60;
    }
    berth_asim_result r;
    memset(&r, 0, sizeof r);
    if (!rc)
        rc = berth_autoscale_simulate(&m, &t, &o, &r, &e);
    if (rc) {
        fprintf(stderr, "berth: %s\n", e.msg);
        berth_atimeline_free(&t);
        berth_autoscale_free(&m);
        return berth_err_exit_code(rc);
    }
    int code = r.nsteps && r.steps[r.nsteps - 1].pending ? 1 : 0;
    if (!c.quiet) {
        if (c.format == CLI_TABLE)
            berth_report_autoscale_timeline_table(stdout, &t, &o, &r);
        else {
            /* with the input's warnings, as `autoscale plan` has them */
            json_t *j = berth_report_autoscale_timeline_json(&t, &o, &r);
            if (j && berth_report_set_warnings(j, &m.kube.skipped)) {
                json_decref(j);
                j = NULL;
            }
            if (cli_print_json(j, c.format))
                code = 3;
        }
    }
    if (code != 3 && svg && cli_write_file(svg, write_svg, &(svg_args){&o, &r}))
        code = 3;
    berth_asim_result_free(&r);
    berth_atimeline_free(&t);
    berth_autoscale_free(&m);
    return code;
}

int cmd_autoscale(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
        FILE *f = argc < 2 ? stderr : stdout;
        fprintf(f, "usage: berth autoscale plan [options] FILE...   (berth autoscale plan --help)\n"
                   "       berth autoscale simulate [options] --events FILE FILE...\n"
                   "                                                (berth autoscale simulate --help)\n");
        return argc < 2 ? 2 : 0;
    }
    if (!strcmp(argv[1], "plan"))
        return plan(argc - 1, argv + 1);
    if (!strcmp(argv[1], "simulate"))
        return simulate(argc - 1, argv + 1);
    fprintf(stderr, "berth autoscale: unknown subcommand '%s' (autoscale has: plan, simulate)\n", argv[1]);
    return 2;
}
