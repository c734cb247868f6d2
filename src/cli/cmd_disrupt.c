/* cli/cmd_disrupt.c - `berth disrupt plan`: load NodePools, NodeClaims,
 * InstanceTypes and Kubernetes objects, run one disruption pass at --at
 * (SPEC 4, 4.1) and print a table or the SPEC 6.3 JSON (or YAML). */
#include "cli/cli.h"

#include <jansson.h>
#include <string.h>
#include <time.h>

#include "berth/disrupt.h"
#include "berth/fleet.h"
#include "berth/plan_report.h"

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
            "  -o, --output FORMAT  table (default), json (SPEC 6.3) or yaml\n"
            "  --strict             unknown fields in Kubernetes and Karpenter kinds are errors\n"
            "  -q, --quiet          print nothing (exit code only)\n"
            "  -h, --help           this text\n"
            "\n"
            "exit codes: 0 planned (with or without actions), 2 bad input or usage,\n"
            "3 internal error.\n");
}

static int parse_gates(const char *v, berth_dplan_options *o)
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
            o->spot_to_spot = val;
        else if (strcmp(t, "NodeRepair") && strcmp(t, "ReservedCapacity") &&
                 strcmp(t, "StaticCapacity"))
            return -1;
    }
    return 0;
}

static int load_one(void *m, const berth_source *src, int strict, berth_error *e)
{
    return berth_disrupt_load(m, src, strict, e);
}

static int plan(int argc, char **argv)
{
    cli_common c;
    cli_common_init(&c);
    berth_dplan_options opt = {0};
    int have_at = 0;
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
            if (!v || parse_gates(v, &opt)) {
                fprintf(stderr, "berth disrupt plan: --feature-gates expects Name=true|false "
                                "(SpotToSpotConsolidation), got '%s'\n", v ? v : "");
                return 2;
            }
            continue;
        }
        int r = cli_common_flag(&c, argc, argv, &i);
        if (r < 0)
            return 2;
        if (r == 0) {
            fprintf(stderr, "berth disrupt plan: unknown option '%s' (see berth disrupt plan --help)\n",
                    a);
            return 2;
        }
    }
    if (!have_at)
        opt.now = (int64_t)time(NULL);
    berth_disrupt m;
    berth_disrupt_init(&m);
    berth_error e;
    berth_error_clear(&e);
    int rc = cli_load_each(&c, &m.kube.arena, load_one, &m, &e);
    if (!rc)
        rc = berth_disrupt_finalize(&m, &e);
    berth_dplan p;
    memset(&p, 0, sizeof p);
    if (!rc)
        rc = berth_disrupt_plan(&m, &opt, &p, &e);
    if (rc) {
        fprintf(stderr, "berth: %s\n", e.msg);
        berth_disrupt_free(&m);
        return berth_err_exit_code(rc);
    }
    int code = 0;
    if (!c.quiet) {
        if (c.format == CLI_TABLE)
            berth_report_disrupt_table(stdout, &m, &p);
        else if (cli_print_json(berth_report_disrupt_json(&m, &p), c.format))
            code = 3;
    }
    berth_dplan_free(&p);
    berth_disrupt_free(&m);
    return code;
}

int cmd_disrupt(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
        FILE *f = argc < 2 ? stderr : stdout;
        fprintf(f, "usage: berth disrupt plan [options] FILE...   (berth disrupt plan --help)\n");
        return argc < 2 ? 2 : 0;
    }
    if (!strcmp(argv[1], "plan"))
        return plan(argc - 1, argv + 1);
    fprintf(stderr, "berth disrupt: unknown subcommand '%s' (disrupt has: plan; simulate is not "
                    "implemented yet)\n", argv[1]);
    return 2;
}
