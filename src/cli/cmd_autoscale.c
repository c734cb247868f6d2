/* cli/cmd_autoscale.c - `berth autoscale plan`: load VirtualNodeGroups,
 * Reservations, Headroom, InstanceTypes and Kubernetes objects, run one
 * autoscaler pass at --at (SPEC 5) and print a table or the SPEC 6.3 JSON
 * (or YAML). */
#include "cli/cli.h"

#include <jansson.h>
#include <string.h>
#include <time.h>

#include "berth/autoscale.h"
#include "berth/fleet.h"
#include "berth/plan_report.h"

static void help(FILE *f)
{
    fprintf(f,
            "usage: berth autoscale plan [options] FILE...\n"
            "\n"
            "Decides what Spot Ocean would buy and remove at one moment (SPEC section 5):\n"
            "pending pods that fit no existing node go to a virtual node group that can host\n"
            "them and are bin-packed onto new nodes (unused reservations first, then spot by\n"
            "market score, on-demand as fallback); headroom is kept; then the least utilised\n"
            "nodes whose pods all move elsewhere are scaled down. See docs/autoscale.md.\n"
            "Input: VirtualNodeGroup, Reservation, Headroom, InstanceType (berth.io/v1), Node,\n"
            "Pod, PodDisruptionBudget and workloads.\n"
            "\n"
            "options:\n"
            "  --at TIME            the moment to plan at (RFC 3339, e.g. 2024-05-01T12:00:00Z;\n"
            "                       default: the current time)\n"
            "  -o, --output FORMAT  table (default), json (SPEC 6.3) or yaml\n"
            "  --strict             unknown fields in Kubernetes kinds are errors\n"
            "  -q, --quiet          print nothing (exit code only)\n"
            "  -h, --help           this text\n"
            "\n"
            "exit codes: 0 planned and every pending pod has a node, 1 some pod stays\n"
            "unschedulable (reasons in the output), 2 bad input or usage, 3 internal error.\n");
}

static int load_one(void *m, const berth_source *src, int strict, berth_error *e)
{
    return berth_autoscale_load(m, src, strict, e);
}

static int plan(int argc, char **argv)
{
    cli_common c;
    cli_common_init(&c);
    berth_aplan_options opt = {0};
    int have_at = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            help(stdout);
            return 0;
        }
        int at = cli_flag_at("autoscale plan", argc, argv, &i, &opt.now);
        if (at < 0)
            return 2;
        if (at) {
            have_at = 1;
            continue;
        }
        int r = cli_common_flag(&c, argc, argv, &i);
        if (r < 0)
            return 2;
        if (r == 0) {
            fprintf(stderr,
                    "berth autoscale plan: unknown option '%s' (see berth autoscale plan --help)\n", a);
            return 2;
        }
    }
    if (!have_at)
        opt.now = (int64_t)time(NULL);
    berth_autoscale m;
    berth_autoscale_init(&m);
    berth_error e;
    berth_error_clear(&e);
    int rc = cli_load_each(&c, &m.kube.arena, load_one, &m, &e);
    if (!rc)
        rc = berth_autoscale_finalize(&m, &e);
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

int cmd_autoscale(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
        FILE *f = argc < 2 ? stderr : stdout;
        fprintf(f, "usage: berth autoscale plan [options] FILE...   (berth autoscale plan --help)\n");
        return argc < 2 ? 2 : 0;
    }
    if (!strcmp(argv[1], "plan"))
        return plan(argc - 1, argv + 1);
    fprintf(stderr, "berth autoscale: unknown subcommand '%s' (autoscale has: plan)\n", argv[1]);
    return 2;
}
