/* cli/main.c - the `berth` command: dispatch to subcommands, common flags,
 * input loading and atomic output files shared by every subcommand. */
#include "cli/cli.h"

#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "berth/disrupt.h"
#include "berth/pool.h"
#include "berth/fleet.h"
#include "berth/report.h"

#ifndef BERTH_VERSION
#define BERTH_VERSION "0.2.0"
#endif
#ifndef BERTH_BUILD
#define BERTH_BUILD "unknown"
#endif

static void usage(FILE *f)
{
    fprintf(f,
            "usage: berth COMMAND [options] FILE...\n"
            "\n"
            "berth places workloads onto capacity, reproducing the documented behaviour of\n"
            "Operator Nexus, kube-scheduler, Fleet, Karpenter and Ocean.\n"
            "\n"
            "commands:\n"
            "  simulate FILE...   bare-metal VM placement and timeline (Operator Nexus)\n"
            "  advise FILE...     largest counts that fit now, best-practice warnings\n"
            "  fleet place FILE...  member-cluster placement (Kubernetes Fleet)\n"
            "  kube schedule FILE...  pod placement with kube-scheduler's semantics\n"
            "  kube size FILE...    QoS classes and vSphere Pod sizes\n"
            "  kube fit WORKLOAD-FILE CLUSTER-FILE...   how many more replicas fit now\n"
            "  disrupt plan FILE... --at TIME  Karpenter / NAP disruption decisions\n"
            "  disrupt simulate FILE... --from T1 --to T2  the disruption timeline\n"
            "  autoscale plan FILE... --at TIME  Spot Ocean scale-up / scale-down decisions\n"
            "  autoscale simulate FILE... --events FILE  the autoscaler over a timeline\n"
            "  serve              the HTTP placement service (docs/api.md)\n"
            "  help [COMMAND]     this text, or a command's options\n"
            "\n"
            "Run 'berth COMMAND --help' for a command's options.\n"
            "Exit codes: 0 all placed, 1 something could not be placed, 2 bad input or usage,\n"
            "3 internal error.\n");
}

void cli_common_init(cli_common *c)
{
    memset(c, 0, sizeof *c);
    c->format = isatty(STDOUT_FILENO) ? CLI_TABLE : CLI_TABLE;
    c->tiebreak = BERTH_TIE_FIRST;
}

int cli_flag_value(const char *cmd, const char *name, int argc, char **argv, int *i,
                   const char **v)
{
    size_t n = strlen(name);
    const char *a = argv[*i];
    if (strncmp(a, name, n) || (a[n] && a[n] != '='))
        return 0;
    *v = a[n] == '=' ? a + n + 1 : (*i + 1 < argc ? argv[++*i] : NULL);
    if (!*v) {
        fprintf(stderr, "berth %s: %s needs a value\n", cmd, name);
        return -1;
    }
    return 1;
}

int cli_flag_threads(const char *cmd, int argc, char **argv, int *i, uint32_t *out)
{
    const char *v = NULL;
    int r = cli_flag_value(cmd, "--threads", argc, argv, i, &v);
    if (r <= 0)
        return r;
    char *end = NULL;
    long long x = strtoll(v, &end, 10);
    if (!*v || *end || x < 1 || x > 256) {
        fprintf(stderr, "berth %s: --threads expects an integer from 1 to 256\n", cmd);
        return -1;
    }
    *out = (uint32_t)x;
    return 1;
}

uint32_t cli_default_threads(void)
{
    uint32_t n = berth_threads_online();
    return n > 256 ? 256 : n;
}

int cli_common_flag(cli_common *c, int argc, char **argv, int *i)
{
    const char *a = argv[*i];
    const char *val = NULL;
    size_t n = strcspn(a, "=");
    int has_eq = a[n] == '=';
#define FLAG(name) (strncmp(a, name, n) == 0 && strlen(name) == n)
#define NEED_VALUE()                                                                     \
    do {                                                                                 \
        if (has_eq)                                                                      \
            val = a + n + 1;                                                             \
        else if (*i + 1 < argc)                                                          \
            val = argv[++*i];                                                            \
        else {                                                                           \
            fprintf(stderr, "berth: %.*s needs a value\n", (int)n, a);                   \
            return -1;                                                                   \
        }                                                                                \
    } while (0)
    if (FLAG("-o") || FLAG("--output")) {
        NEED_VALUE();
        if (!strcmp(val, "table"))
            c->format = CLI_TABLE;
        else if (!strcmp(val, "json"))
            c->format = CLI_JSON;
        else if (!strcmp(val, "yaml"))
            c->format = CLI_YAML;
        else {
            fprintf(stderr, "berth: -o expects table, json or yaml, got '%s'\n", val);
            return -1;
        }
        return 1;
    }
    if (FLAG("--seed")) {
        NEED_VALUE();
        char *end;
        errno = 0;
        unsigned long long s = strtoull(val, &end, 10);
        if (!*val || *end || errno || *val == '-') {
            fprintf(stderr, "berth: --seed expects a non-negative integer, got '%s'\n", val);
            return -1;
        }
        c->seed = s;
        return 1;
    }
    if (FLAG("--tie-break")) {
        NEED_VALUE();
        if (!strcmp(val, "first"))
            c->tiebreak = BERTH_TIE_FIRST;
        else if (!strcmp(val, "random"))
            c->tiebreak = BERTH_TIE_RANDOM;
        else {
            fprintf(stderr, "berth: --tie-break expects first or random, got '%s'\n", val);
            return -1;
        }
        return 1;
    }
    if (FLAG("-q") || FLAG("--quiet")) {
        c->quiet = 1;
        return 1;
    }
    if (FLAG("--strict")) {
        c->strict = 1;
        return 1;
    }
    if (a[0] != '-' || !strcmp(a, "-")) {
        if (c->nfiles >= (int)(sizeof c->files / sizeof c->files[0])) {
            fprintf(stderr, "berth: too many input files (at most 256)\n");
            return -1;
        }
        c->files[c->nfiles++] = a;
        return 1;
    }
    return 0;
#undef FLAG
#undef NEED_VALUE
}

/* ---- input documents ---- */

int cli_load_doc(berth_arena *arena, const char *path, berth_source *src, berth_error *e)
{
    int rc = berth_doc_load_file(arena, path, src, e);
    if (!rc && src->ndocs == 0)
        return berth_error_set(e, BERTH_EINVAL, "%s: no input documents (an empty file or stream)",
                               strcmp(path, "-") ? path : "<stdin>");
    return rc;
}

/* ---- suggestions ---- */


const char *cli_closest(const char *word, const char *const *choices)
{
    const char *best = NULL;
    size_t bd = 99;
    for (size_t i = 0; choices[i]; i++) {
        size_t d = berth_edit_distance(word, choices[i]);
        if (d < bd) {
            bd = d;
            best = choices[i];
        }
    }
    size_t n = strlen(word);
    return best && bd <= (n > 6 ? 2u : 1u) ? best : NULL;
}

/* every option some berth command takes (suggestions for typos) */
static const char *const all_flags[] = {
    "--output", "--seed", "--tie-break", "--strict", "--quiet", "--help", "--svg", "--html",
    "--explain", "--partial", "--reference", "--sku", "--now", "--config", "--profile",
    "--margin-cpu", "--margin-memory", "--no-preempt", "--max", "--at", "--from", "--to",
    "--step", "--launch-delay", "--optimize", "--events", "--policy", "--expander",
    "--interrupt", "--roll", "--autoheal-grace", "--scale-down-unneeded-time",
    "--skip-nodes-with-custom-controller-pods", "--blocking-system-pod-distruption-timeout",
    "--db", "--listen", "--token-file", "--detail", "--threads", NULL};

void cli_unknown_option(const char *cmd, const char *a)
{
    char flag[80];
    snprintf(flag, sizeof flag, "%s", a);
    char *eq = strchr(flag, '=');
    if (eq)
        *eq = 0;
    const char *near = flag[0] == '-' ? cli_closest(flag, all_flags) : NULL;
    if (near)
        fprintf(stderr, "berth %s: unknown option '%s' (did you mean %s? see berth %s --help)\n",
                cmd, a, near, cmd);
    else
        fprintf(stderr, "berth %s: unknown option '%s' (see berth %s --help)\n", cmd, a, cmd);
}

int cli_common_or_unknown(const char *cmd, cli_common *c, int argc, char **argv, int *i)
{
    const char *a = argv[*i];
    int r = cli_common_flag(c, argc, argv, i);
    if (r == 0) {
        cli_unknown_option(cmd, a);
        return -1;
    }
    return r < 0 ? -1 : 1;
}

int cli_parse_time(const char *cmd, const char *flag, const char *v, int64_t *out)
{
    int64_t ms;
    if (berth_time_parse(v, &ms)) {
        fprintf(stderr,
                "berth %s: %s expects an RFC 3339 time such as 2024-05-01T12:00:00Z, got '%s'\n",
                cmd, flag, v);
        return -1;
    }
    *out = ms >= 0 ? ms / 1000 : -((-ms + 999) / 1000);
    return 0;
}

int cli_parse_duration(const char *cmd, const char *flag, const char *v, int positive,
                       const char *examples, int64_t *out)
{
    int64_t d = berth_duration_parse(v);
    if (d < 0 || d == BERTH_DURATION_NEVER || (positive && d == 0)) {
        fprintf(stderr, "berth %s: %s expects a %sduration such as %s, got '%s'\n", cmd, flag,
                positive ? "positive " : "", examples, v);
        return -1;
    }
    *out = d;
    return 0;
}

int cli_flag_at(const char *cmd, int argc, char **argv, int *i, int64_t *now)
{
    const char *v = NULL;
    int r = cli_flag_value(cmd, "--at", argc, argv, i, &v);
    if (r > 0 && cli_parse_time(cmd, "--at", v, now))
        return -1;
    return r;
}

int cli_stream_each(const cli_common *c,
                    int (*load)(void *ctx, const char *path, int strict, berth_error *e),
                    void *ctx, berth_error *e)
{
    if (c->nfiles == 0)
        return berth_error_set(e, BERTH_EINVAL,
                               "no input files (give one or more YAML/JSON files, or - for stdin)");
    for (int i = 0; i < c->nfiles; i++) {
        int rc = load(ctx, c->files[i], c->strict, e);
        if (rc)
            return rc;
    }
    return 0;
}

/* cli_load_each through cli_stream_each: each file parsed whole, then
 * handed to the tree loader */
typedef struct tree_load {
    berth_arena *arena;
    int (*load)(void *ctx, const berth_source *src, int strict, berth_error *e);
    void *ctx;
} tree_load;

static int load_tree(void *vt, const char *path, int strict, berth_error *e)
{
    const tree_load *t = vt;
    berth_source src;
    int rc = cli_load_doc(t->arena, path, &src, e);
    return rc ? rc : t->load(t->ctx, &src, strict, e);
}

int cli_load_each(const cli_common *c, berth_arena *arena,
                  int (*load)(void *ctx, const berth_source *src, int strict, berth_error *e),
                  void *ctx, berth_error *e)
{
    tree_load t = {arena, load, ctx};
    return cli_stream_each(c, load_tree, &t, e);
}

int cli_load_nexus(berth_nexus *nx, const cli_common *c)
{
    berth_error e;
    berth_error_clear(&e);
    if (c->nfiles == 0) {
        fprintf(stderr, "berth: no input files (give one or more YAML/JSON files, or - for stdin)\n");
        return 2;
    }
    for (int i = 0; i < c->nfiles; i++) {
        berth_source src;
        int rc = cli_load_doc(&nx->arena, c->files[i], &src, &e);
        if (!rc)
            rc = berth_nexus_load(nx, &src, c->strict, &e);
        if (rc) {
            fprintf(stderr, "berth: %s\n", e.msg);
            return berth_err_exit_code(rc);
        }
    }
    int rc = berth_nexus_validate(nx, &e);
    if (rc) {
        fprintf(stderr, "berth: %s\n", e.msg);
        return berth_err_exit_code(rc);
    }
    return 0;
}

int cli_write_file(const char *path, int (*fn)(FILE *, const void *), const void *arg)
{
    size_t len = strlen(path);
    char *tmp = malloc(len + 32);
    if (!tmp)
        return -1;
    snprintf(tmp, len + 32, "%s.tmp.%ld", path, (long)getpid());
    FILE *f = fopen(tmp, "w");
    if (!f) {
        fprintf(stderr, "berth: cannot write %s: %s\n", path, strerror(errno));
        free(tmp);
        return -1;
    }
    int rc = fn(f, arg);
    if (fclose(f) != 0 || rc != 0) {
        fprintf(stderr, "berth: writing %s failed\n", path);
        unlink(tmp);
        free(tmp);
        return -1;
    }
    if (rename(tmp, path) != 0) {
        fprintf(stderr, "berth: cannot write %s: %s\n", path, strerror(errno));
        unlink(tmp);
        free(tmp);
        return -1;
    }
    free(tmp);
    return 0;
}

int cli_print_json(json_t *root, enum cli_format f)
{
    int rc = 0;
    if (!root) {
        fprintf(stderr, "berth: out of memory\n");
        return -1;
    }
    if (f == CLI_YAML)
        rc = berth_report_yaml_write(stdout, root);
    else
        rc = berth_report_json_write(stdout, root);
    json_decref(root);
    if (rc)
        fprintf(stderr, "berth: %s\n", rc == BERTH_ENOMEM ? "out of memory" : "cannot write output");
    return rc ? -1 : 0;
}

/* `berth completion bash`: a bash completion script on stdout */
int cli_completion(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "bash")) {
        fprintf(stderr, "usage: berth completion bash   (prints a bash completion script;\n"
                        "       source it: source <(berth completion bash))\n");
        return argc >= 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) ? 0 : 2;
    }
    printf("# bash completion for berth (berth completion bash)\n"
           "_berth() {\n"
           "  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[1]} words\n"
           "  case $COMP_CWORD in\n"
           "    1) words='simulate advise fleet kube disrupt autoscale serve help version completion' ;;\n"
           "    2) case $prev in\n"
           "         kube) words='schedule size fit' ;;\n"
           "         fleet) words='place' ;;\n"
           "         disrupt|autoscale) words='plan simulate' ;;\n"
           "         completion) words='bash' ;;\n"
           "       esac ;;\n"
           "  esac\n"
           "  if [ -z \"$words\" ]; then\n"
           "    case $cur in\n"
           "      -*) words='");
    for (size_t i = 0; all_flags[i]; i++)
        printf("%s%s", i ? " " : "", all_flags[i]);
    printf("' ;;\n"
           "      *) COMPREPLY=($(compgen -f -- \"$cur\")); return ;;\n"
           "    esac\n"
           "  fi\n"
           "  COMPREPLY=($(compgen -W \"$words\" -- \"$cur\"))\n"
           "}\n"
           "complete -F _berth berth\n");
    return ferror(stdout) ? 3 : 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help") || !strcmp(cmd, "help")) {
        if (argc > 2 && strcmp(cmd, "help") == 0) {
            char *hv[] = {argv[2], "--help", NULL};
            if (!strcmp(argv[2], "simulate"))
                return cmd_simulate(2, hv);
            if (!strcmp(argv[2], "advise"))
                return cmd_advise(2, hv);
            if (!strcmp(argv[2], "fleet"))
                return cmd_fleet(2, hv);
            if (!strcmp(argv[2], "disrupt"))
                return cmd_disrupt(2, hv);
            if (!strcmp(argv[2], "autoscale"))
                return cmd_autoscale(2, hv);
            if (!strcmp(argv[2], "serve"))
                return cmd_serve(2, hv);
            if (!strcmp(argv[2], "kube")) {
                char *kv[] = {argv[2], "--help", NULL};
                return cmd_kube(2, kv);
            }
        }
        usage(stdout);
        return 0;
    }
    if (!strcmp(cmd, "--version") || !strcmp(cmd, "version")) {
        printf("berth %s (build %s)\n", BERTH_VERSION, BERTH_BUILD);
        return 0;
    }
    if (!strcmp(cmd, "completion"))
        return cli_completion(argc - 1, argv + 1);
    if (!strcmp(cmd, "simulate"))
        return cmd_simulate(argc - 1, argv + 1);
    if (!strcmp(cmd, "advise"))
        return cmd_advise(argc - 1, argv + 1);
    if (!strcmp(cmd, "fleet"))
        return cmd_fleet(argc - 1, argv + 1);
    if (!strcmp(cmd, "kube"))
        return cmd_kube(argc - 1, argv + 1);
    if (!strcmp(cmd, "disrupt"))
        return cmd_disrupt(argc - 1, argv + 1);
    if (!strcmp(cmd, "autoscale"))
        return cmd_autoscale(argc - 1, argv + 1);
    if (!strcmp(cmd, "serve"))
        return cmd_serve(argc - 1, argv + 1);
    static const char *const commands[] = {"simulate", "advise", "fleet", "kube", "disrupt",
                                           "autoscale", "serve", "help", "version", "completion",
                                           NULL};
    const char *near = cli_closest(cmd, commands);
    if (near)
        fprintf(stderr, "berth: unknown command '%s' (did you mean %s?)\n", cmd, near);
    else {
        fprintf(stderr, "berth: unknown command '%s'\n\n", cmd);
        usage(stderr);
    }
    return 2;
}
