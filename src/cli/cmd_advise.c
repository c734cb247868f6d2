/* cli/cmd_advise.c - `berth advise`: after running the timeline, the
 * largest count of each SKU that fits now (overall, per rack, and per zone
 * set used by the input), and the best-practice warnings of SPEC 1.7. */
#include "cli/cli.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "berth/advice.h"
#include "berth/report.h"

static void help(FILE *f)
{
    fprintf(f,
            "usage: berth advise [options] FILE...\n"
            "\n"
            "Runs the same timeline as 'berth simulate', then reports, for the state after the\n"
            "last step: the largest count of every SKU that fits now (overall, per rack, and\n"
            "per availabilityZones set used in the input) and warnings for the Operator Nexus\n"
            "best practices (SPEC 1.7).\n"
            "\n"
            "options:\n"
            "  -o, --output FORMAT  table (default), json or yaml\n"
            "  --sku NAME           only this SKU (repeatable)\n"
            "  --strict, -q, --seed, --tie-break as for simulate\n"
            "  -h, --help           this text\n"
            "\n"
            "exit codes: 0 no warnings, 1 warnings were given, 2 bad input or usage, 3 internal.\n");
}

int cmd_advise(int argc, char **argv)
{
    cli_common c;
    cli_common_init(&c);
    const char *only[64];
    int nonly = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            help(stdout);
            return 0;
        }
        if (!strcmp(a, "--sku")) {
            if (i + 1 >= argc) {
                fprintf(stderr, "berth advise: --sku needs a value\n");
                return 2;
            }
            if (nonly < 64)
                only[nonly++] = argv[++i];
            continue;
        }
        if (cli_common_or_unknown("advise", &c, argc, argv, &i) < 0)
            return 2;
    }
    berth_nexus nx;
    berth_nexus_init(&nx);
    int code = cli_load_nexus(&nx, &c);
    if (code) {
        berth_nexus_free(&nx);
        return code;
    }
    for (int i = 0; i < nonly; i++)
        if (berth_nexus_find_sku(&nx, only[i]) == BERTH_NEXUS_NONE) {
            fprintf(stderr, "berth advise: --sku: unknown SKU '%s'\n", only[i]);
            berth_nexus_free(&nx);
            return 2;
        }
    berth_nexus_options opt = {.use_index = 1, .tiebreak = c.tiebreak, .seed = c.seed};
    berth_error e;
    berth_error_clear(&e);
    int rc = berth_nexus_run(&nx, &opt, &e);
    if (rc && rc != BERTH_ENOFIT) {
        fprintf(stderr, "berth: %s\n", e.msg);
        berth_nexus_free(&nx);
        return berth_err_exit_code(rc);
    }
    berth_advice *adv = NULL;
    uint32_t nadv = 0;
    if (berth_nexus_advise(&nx, &adv, &nadv)) {
        fprintf(stderr, "berth: out of memory\n");
        berth_nexus_free(&nx);
        return 3;
    }
    uint32_t *skus = malloc((nx.nskus ? nx.nskus : 1) * sizeof *skus);
    uint32_t nsk = 0;
    for (uint32_t s = 0; skus && s < nx.nskus; s++) {
        int keep = nonly == 0;
        for (int i = 0; i < nonly; i++)
            keep |= !strcmp(only[i], nx.skus[s].name);
        if (keep)
            skus[nsk++] = s;
    }
    json_t *j = berth_report_nexus_advice_json(&nx, skus, nsk, adv, nadv);
    if (!c.quiet) {
        if (c.format == CLI_TABLE)
            berth_report_nexus_advice_table(stdout, &nx, skus, nsk, adv, nadv);
        else
            cli_print_json(json_incref(j), c.format); /* prints its failure */
    }
    json_decref(j);
    free(skus);
    berth_nexus_free(&nx);
    return nadv ? 1 : 0;
}
