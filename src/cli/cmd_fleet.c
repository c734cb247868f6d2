/* cli/cmd_fleet.c - `berth fleet place`: load MemberClusters,
 * (Cluster)ResourcePlacements, their bindings and policy snapshots, decide
 * every placement (SPEC 3), print a table or the SPEC 6.3 JSON (or YAML). */
#include "cli/cli.h"

#include <jansson.h>
#include <string.h>
#include <time.h>

#include "berth/fleet.h"
#include "berth/report.h"

static void help(FILE *f)
{
    fprintf(f,
            "usage: berth fleet place [options] FILE...\n"
            "\n"
            "Decides, for every ClusterResourcePlacement and ResourcePlacement, which member\n"
            "clusters Kubernetes Fleet's scheduler selects (SPEC section 3): eligibility,\n"
            "required and preferred cluster affinity, taints and tolerations, topology\n"
            "spread, PickAll / PickN / PickFixed, and existing bindings as the scheduler\n"
            "reads them (obsolete under an older policy snapshot: re-scored with +1;\n"
            "Unscheduled: ignored). See docs/fleet.md.\n"
            "\n"
            "options:\n"
            "  --now TIME           the clock for heartbeat and condition ages (RFC 3339,\n"
            "                       e.g. 2024-05-01T12:00:00Z; default: the current time)\n"
            "  -o, --output FORMAT  table (default), json (SPEC 6.3) or yaml\n"
            "  --explain            show each preferred term's contribution per cluster\n"
            "  --detail all         list every member cluster per placement (default: every\n"
            "                       Selected, Invalid and NotFound one and at most 20 others,\n"
            "                       with clusterCounts and reasons counting them all)\n"
            "  --strict             unknown fields in Fleet kinds, and kinds the command does\n"
            "                       not read, are errors too\n"
            "  --reference          decide by plain scans and generic matching (same\n"
            "                       decisions, slower; for checking)\n"
            "  -q, --quiet          print nothing (exit code only)\n"
            "  -h, --help           this text\n"
            "\n"
            "exit codes: 0 every placement got what it asked for, 1 a PickN shortfall or a\n"
            "PickFixed name not found or invalid, 2 bad input, usage or an invalid policy,\n"
            "3 internal error.\n");
}

static int place(int argc, char **argv)
{
    cli_common c;
    cli_common_init(&c);
    berth_fleet_options opt = {0};
    int have_now = 0, detail = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            help(stdout);
            return 0;
        }
        if (!strcmp(a, "--now") || !strncmp(a, "--now=", 6)) {
            const char *v = a[5] == '=' ? a + 6 : (i + 1 < argc ? argv[++i] : NULL);
            if (!v) {
                fprintf(stderr, "berth fleet place: --now needs a value\n");
                return 2;
            }
            if (berth_time_parse(v, &opt.now_ms)) {
                fprintf(stderr,
                        "berth fleet place: --now expects an RFC 3339 time such as "
                        "2024-05-01T12:00:00Z, got '%s'\n",
                        v);
                return 2;
            }
            have_now = 1;
            continue;
        }
        if (!strcmp(a, "--explain")) {
            opt.explain = 1;
            continue;
        }
        if (!strcmp(a, "--reference")) {
            opt.reference = 1;
            continue;
        }
        if (!strcmp(a, "--detail")) {
            if (i + 1 >= argc || (strcmp(argv[i + 1], "all") && strcmp(argv[i + 1], "default"))) {
                fprintf(stderr, "berth fleet place: --detail expects 'all' or 'default'\n");
                return 2;
            }
            detail = !strcmp(argv[++i], "all");
            continue;
        }
        if (cli_common_or_unknown("fleet place", &c, argc, argv, &i) < 0)
            return 2;
    }
    if (!have_now) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        opt.now_ms = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
    }
    if (c.nfiles == 0) {
        fprintf(stderr, "berth: no input files (give one or more YAML/JSON files, or - for stdin)\n");
        return 2;
    }
    berth_fleet fl;
    berth_fleet_init(&fl);
    berth_error e;
    berth_error_clear(&e);
    int rc = 0;
    for (int i = 0; i < c.nfiles && !rc; i++) {
        berth_source src;
        rc = cli_load_doc(&fl.arena, c.files[i], &src, &e);
        if (!rc)
            rc = berth_fleet_load(&fl, &src, c.strict, &e);
    }
    if (!rc && !c.quiet) /* kinds skipped over every file, once (SPEC 6.1) */
        berth_report_warnings_text(stderr, &fl.skipped);
    if (!rc)
        rc = berth_fleet_finalize(&fl, &e);
    berth_fleet_ctx *ctx = NULL;
    if (!rc)
        rc = berth_fleet_ctx_new(&fl, &opt, &ctx, &e);
    if (rc) {
        fprintf(stderr, "berth: %s\n", e.msg);
        berth_fleet_free(&fl);
        return berth_err_exit_code(rc);
    }
    int code = 0;
    /* JSON and YAML are written placement by placement (berth_stream) */
    berth_stream *st = NULL;
    if (c.format != CLI_TABLE && !c.quiet &&
        (rc = berth_stream_open(stdout, c.format == CLI_YAML ? BERTH_STREAM_YAML : BERTH_STREAM_JSON,
                                JSON_INDENT(2) | JSON_PRESERVE_ORDER | BERTH_JSON_REAL,
                                "placements", &st))) {
        fprintf(stderr, "berth: %s\n", rc == BERTH_ENOMEM ? "out of memory" : "cannot write output");
        code = 3;
        goto out;
    }
    for (uint32_t p = 0; p < fl.nplacements; p++) {
        berth_fleet_outcome o;
        if ((rc = berth_fleet_place(ctx, p, &o))) {
            fprintf(stderr, "berth: placement %s: %s\n", fl.placements[p].name, berth_strerror(rc));
            code = 3;
            goto out;
        }
        if (o.status == BERTH_FLEET_POLICY_ERROR) {
            fprintf(stderr, "berth: placement %s: invalid policy: %s\n", fl.placements[p].name,
                    o.reason);
            code = 2;
        } else if (o.status == BERTH_FLEET_UNFULFILLED && code == 0) {
            code = 1;
        }
        if (c.quiet)
            continue;
        if (c.format == CLI_TABLE) {
            if (p)
                printf("\n");
            berth_report_fleet_table_detail(stdout, ctx, &o, opt.explain, detail);
        } else {
            json_t *j = berth_report_fleet_json_detail(ctx, &o, opt.explain, detail);
            rc = j ? berth_stream_item(st, j) : BERTH_ENOMEM;
            json_decref(j);
            if (rc) {
                fprintf(stderr, "berth: %s\n", rc == BERTH_ENOMEM ? "out of memory" : "cannot write output");
                code = 3;
                goto out;
            }
        }
    }
    if (st) {
        json_t *tail = json_object();
        rc = !tail || berth_report_set_warnings(tail, &fl.skipped) ? BERTH_ENOMEM
                                                                    : berth_stream_close(st, tail);
        if (!rc && c.format == CLI_JSON && fputc('\n', stdout) == EOF)
            rc = BERTH_EIO;
        json_decref(tail);
        if (rc) {
            fprintf(stderr, "berth: %s\n", rc == BERTH_ENOMEM ? "out of memory" : "cannot write output");
            code = 3;
        }
    }
out:
    berth_stream_free(st);
    berth_fleet_ctx_free(ctx);
    berth_fleet_free(&fl);
    return code;
}

int cmd_fleet(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
        FILE *f = argc < 2 ? stderr : stdout;
        fprintf(f, "usage: berth fleet place [options] FILE...   (berth fleet place --help)\n");
        return argc < 2 ? 2 : 0;
    }
    if (!strcmp(argv[1], "place"))
        return place(argc - 1, argv + 1);
    fprintf(stderr, "berth fleet: unknown subcommand '%s' (fleet has: place)\n", argv[1]);
    return 2;
}
