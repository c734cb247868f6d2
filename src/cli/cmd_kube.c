/* cli/cmd_kube.c - `berth kube schedule` (kube-scheduler semantics, SPEC 2)
 * and `berth kube size` (QoS classes and vSphere Pod sizes, SPEC 2.1/2.3). */
#include "cli/cli.h"

#include <jansson.h>
#include <string.h>

#include "berth/kube.h"
#include "berth/kube_report.h"
#include "berth/report.h"

static void help_schedule(FILE *f)
{
    fprintf(f,
            "usage: berth kube schedule [options] FILE...\n"
            "\n"
            "Schedules every pending pod (no spec.nodeName) onto the Nodes in the input with\n"
            "kube-scheduler's filters, scores and weights (SPEC 2.5), in queue order (priority,\n"
            "then creation time, then input order), accounting each pod before the next.\n"
            "Input: Node, Pod, List and typed lists (NodeList, ...), Namespace, Service,\n"
            "PriorityClass, PodDisruptionBudget, PersistentVolumeClaim, PersistentVolume,\n"
            "KubeSchedulerConfiguration, and the workloads Deployment, ReplicaSet,\n"
            "StatefulSet, ReplicationController, DaemonSet, Job: each becomes the pods its\n"
            "controller would create (existing owned pods count), grouped by workload.\n"
            "YAML, JSON or JSON streams: kubectl get ... -o yaml|json and kubectl\n"
            "cluster-info dump load as they are. Other kinds are skipped, one\n"
            "'skipped N KIND' line per kind on stderr and in the JSON's warnings.\n"
            "\n"
            "options:\n"
            "  --config FILE        a KubeSchedulerConfiguration (profiles by schedulerName)\n"
            "  --profile NAME       schedule every pod with this profile: a schedulerName from\n"
            "                       --config, default-scheduler, or usage-aware (SPEC 2.4)\n"
            "  -o, --output FORMAT  table (default), json (SPEC 6.3: per pod its node, score,\n"
            "                       feasible count, rejecting reasons counted over nodes and\n"
            "                       the best 3 nodes with plugin scores) or yaml\n"
            "  --detail all         json/yaml also list every feasible node's scores and\n"
            "                       every node's filter reasons (grows as pods x nodes)\n"
            "  --tie-break MODE     first (default: lowest node name) or random (seeded)\n"
            "  --seed N             seed for --tie-break random (default 0)\n"
            "  --explain            for every pod, print (to stderr) the best nodes with each\n"
            "                       plugin's score and the rejected nodes counted by reason\n"
            "  --svg FILE           also draw the nodes (requested vs allocatable cpu and\n"
            "                       memory) and the pods not scheduled with their reason\n"
            "  --reference          plain per-pod recomputation instead of incremental counters\n"
            "                       (same decisions, slower; for checking)\n"
            "  --no-preempt         a pod that fits nowhere stays unschedulable (default: it\n"
            "                       preempts lower-priority pods as DefaultPreemption does)\n"
            "  --threads N          threads for one pod's per-node filters and scores on\n"
            "                       clusters of 1024 nodes or more (default: the online\n"
            "                       cores); decisions and output are the same for every N\n"
            "  --strict             unknown fields in Kubernetes objects, and kinds the\n"
            "                       command does not read, are errors\n"
            "  -q, --quiet          print nothing (exit code only)\n"
            "  -h, --help           this text\n"
            "\n"
            "exit codes: 0 every pending pod scheduled, 1 some pod is unschedulable (its\n"
            "reason is in the output), 2 bad input or usage, 3 internal error.\n");
}

static void help_size(FILE *f)
{
    fprintf(f,
            "usage: berth kube size [options] FILE...\n"
            "\n"
            "Prints every pod's QoS class (SPEC 2.1) and its vSphere Pod size (SPEC 2.3): each\n"
            "container at the larger of its request and limit, 0.5 vCPU / 512Mi for a metric\n"
            "with neither, summed, vCPU rounded up; the reservation is the sum of requests.\n"
            "\n"
            "options:\n"
            "  -o, --output FORMAT  table (default), json or yaml\n"
            "  --margin-cpu MILLI   lifecycle margin added to every pod, millicores (default 0)\n"
            "  --margin-memory MIB  lifecycle margin, MiB (default 0)\n"
            "  --strict, -q, -h     as for schedule\n");
}

static int load_kube(berth_kcluster *k, const cli_common *c, const char *config)
{
    berth_error e;
    berth_error_clear(&e);
    if (c->nfiles == 0) {
        fprintf(stderr, "berth: no input files (give one or more YAML/JSON files, or - for stdin)\n");
        return 2;
    }
    for (int i = 0; i <= c->nfiles; i++) {
        const char *path = i < c->nfiles ? c->files[i] : config;
        if (!path)
            continue;
        int rc = berth_kube_load_file(k, path, c->strict, &e);
        if (rc) {
            fprintf(stderr, "berth: %s\n", e.msg);
            return berth_err_exit_code(rc);
        }
    }
    /* every file is in: workloads become pods, priority classes resolve */
    int rc = berth_kube_expand(k, &e);
    if (rc) {
        fprintf(stderr, "berth: %s\n", e.msg);
        return berth_err_exit_code(rc);
    }
    if (!c->quiet) /* kinds skipped over every file, once (SPEC 6.1) */
        berth_report_warnings_text(stderr, &k->skipped);
    return 0;
}

/* --profile NAME: a profile of the configuration, or the built-in
 * default-scheduler / usage-aware (filled into *forced); NULL when none. */
static const berth_kprofile *named_profile(berth_kcluster *k, const char *name,
                                           berth_kprofile *forced)
{
    const berth_kprofile *prof = berth_kube_find_profile(k, name);
    if (!prof && !strcmp(name, "default-scheduler")) {
        berth_kube_default_profile(k, forced);
        prof = forced;
    } else if (!prof && !strcmp(name, "usage-aware")) {
        berth_kube_usage_aware_profile(k, forced);
        prof = forced;
    }
    return prof;
}

typedef struct svg_args {
    const berth_kube_report *rep;
    const berth_kcluster *k;
} svg_args;

static int write_svg(FILE *f, const void *arg)
{
    const svg_args *a = arg;
    return berth_kube_report_svg(f, a->rep, a->k);
}

static int cmd_schedule(int argc, char **argv)
{
    cli_common c;
    cli_common_init(&c);
    const char *config = NULL, *profile = NULL, *svg = NULL;
    int reference = 0, explain = 0, preempt = 1, detail_all = 0;
    /* the machine's cores: the pool is only woken where a loop over nodes
     * remains, never on the fast path's picks (docs/kube.md "Threads") */
    uint32_t threads = cli_default_threads();
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            help_schedule(stdout);
            return 0;
        }
        if (!strcmp(a, "--config") || !strcmp(a, "--profile") || !strcmp(a, "--svg")) {
            if (i + 1 >= argc) {
                fprintf(stderr, "berth kube schedule: %s needs a value\n", a);
                return 2;
            }
            if (!strcmp(a, "--config"))
                config = argv[++i];
            else if (!strcmp(a, "--svg"))
                svg = argv[++i];
            else
                profile = argv[++i];
            continue;
        }
        if (!strcmp(a, "--reference")) {
            reference = 1;
            continue;
        }
        if (!strcmp(a, "--explain")) {
            explain = 1;
            continue;
        }
        if (!strcmp(a, "--detail")) {
            if (i + 1 >= argc || (strcmp(argv[i + 1], "all") && strcmp(argv[i + 1], "default"))) {
                fprintf(stderr, "berth kube schedule: --detail expects 'all' or 'default'\n");
                return 2;
            }
            detail_all = !strcmp(argv[++i], "all");
            continue;
        }
        if (!strcmp(a, "--no-preempt")) {
            preempt = 0;
            continue;
        }
        int tr = cli_flag_threads("kube schedule", argc, argv, &i, &threads);
        if (tr < 0)
            return 2;
        if (tr)
            continue;
        int r = cli_common_flag(&c, argc, argv, &i);
        if (r < 0)
            return 2;
        if (r == 0) {
            cli_unknown_option("kube schedule", a);
            return 2;
        }
    }
    berth_kcluster k;
    berth_kube_init(&k);
    int code = load_kube(&k, &c, config);
    if (code) {
        berth_kube_free(&k);
        return code;
    }
    berth_kprofile forced;
    const berth_kprofile *prof = NULL;
    if (profile) {
        prof = named_profile(&k, profile, &forced);
        if (!prof) {
            fprintf(stderr, "berth kube schedule: --profile: no profile named '%s' (use "
                            "default-scheduler, usage-aware or a schedulerName from --config)\n",
                    profile);
            berth_kube_free(&k);
            return 2;
        }
    }
    /* per (pod, node) detail in the JSON/YAML only when asked for (--explain
     * reads it per pod, without keeping it); reasons and top for JSON */
    int detail = detail_all && c.format != CLI_TABLE;
    berth_kube_report *rep = berth_kube_report_new(detail);
    if (!rep) {
        berth_kube_free(&k);
        fprintf(stderr, "berth: out of memory\n");
        return 3;
    }
    berth_kube_options opt = {.profile = prof, .tiebreak = c.tiebreak, .seed = c.seed,
                              .detail = detail || explain, .reference = reference,
                              .on_decision = berth_kube_report_decision, .ctx = rep,
                              .preempt = preempt, .reasons = c.format != CLI_TABLE,
                              .threads = threads};
    berth_error e;
    berth_error_clear(&e);
    /* JSON and YAML are streamed as pods are decided, --explain too: memory
     * does not grow with the output */
    int stream = c.format != CLI_TABLE && !c.quiet;
    if (explain)
        berth_kube_report_explain_to(rep, stderr);
    if (!stream)
        berth_kube_report_rows_only(rep);
    int src = stream ? berth_kube_report_stream_format(rep, stdout,
                                                       c.format == CLI_YAML ? BERTH_STREAM_YAML
                                                                            : BERTH_STREAM_JSON,
                                                       JSON_INDENT(2) | JSON_PRESERVE_ORDER)
                     : 0;
    if (src) {
        berth_kube_report_free(rep);
        berth_kube_free(&k);
        fprintf(stderr, "berth: %s\n", src == BERTH_ENOMEM ? "out of memory" : "cannot write output");
        return 3;
    }
    int rc = berth_kube_schedule(&k, &opt, &e);
    if ((rc && rc != BERTH_ENOFIT) || berth_kube_report_status(rep)) {
        int failed = rc && rc != BERTH_ENOFIT; /* else the report ran out of memory */
        fprintf(stderr, "berth: %s\n", !failed ? "out of memory" : e.msg[0] ? e.msg : berth_strerror(rc));
        berth_kube_report_free(rep);
        berth_kube_free(&k);
        return failed ? berth_err_exit_code(rc) : 3;
    }
    int out = 0;
    if (!c.quiet) {
        if (c.format == CLI_TABLE)
            out = berth_kube_report_table(stdout, rep, &k);
        else {
            json_t *tail = json_object();
            out = !tail || berth_report_set_warnings(tail, &k.skipped) ? BERTH_ENOMEM
                                                                       : berth_kube_report_stream_end(rep, tail);
            if (!out && c.format == CLI_JSON && fputc('\n', stdout) == EOF)
                out = BERTH_EIO;
            json_decref(tail);
        }
    }
    if (!out && svg && cli_write_file(svg, write_svg, &(svg_args){rep, &k}))
        out = 1; /* printed */
    berth_kube_report_free(rep);
    berth_kube_free(&k);
    if (out) {
        if (out != 1)
            fprintf(stderr, "berth: %s\n", out == BERTH_ENOMEM ? "out of memory" : "cannot write output");
        return 3;
    }
    return rc == BERTH_ENOFIT ? 1 : 0;
}

static int parse_nonneg(const char *flag, const char *v, int64_t *out)
{
    char *end;
    long long x = strtoll(v, &end, 10);
    if (!*v || *end || x < 0) {
        fprintf(stderr, "berth kube size: %s expects a non-negative integer, got '%s'\n", flag, v);
        return -1;
    }
    *out = x;
    return 0;
}

static int cmd_size(int argc, char **argv)
{
    cli_common c;
    cli_common_init(&c);
    berth_vsphere_opts vo;
    berth_vsphere_default_opts(&vo);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            help_size(stdout);
            return 0;
        }
        if (!strcmp(a, "--margin-cpu") || !strcmp(a, "--margin-memory")) {
            int64_t v;
            if (i + 1 >= argc || parse_nonneg(a, argv[i + 1], &v))
                return 2;
            i++;
            if (!strcmp(a, "--margin-cpu"))
                vo.margin_cpu_milli = v;
            else
                vo.margin_memory = v * 1024 * 1024;
            continue;
        }
        int r = cli_common_flag(&c, argc, argv, &i);
        if (r < 0)
            return 2;
        if (r == 0) {
            cli_unknown_option("kube size", a);
            return 2;
        }
    }
    berth_kcluster k;
    berth_kube_init(&k);
    int code = load_kube(&k, &c, NULL);
    if (code) {
        berth_kube_free(&k);
        return code;
    }
    int out = 0;
    if (!c.quiet) {
        if (c.format == CLI_TABLE)
            out = berth_kube_size_table(stdout, &k, &vo);
        else {
            json_t *j = berth_kube_size_json(&k, &vo);
            out = cli_print_json(j, c.format); /* prints its failure */
        }
    }
    berth_kube_free(&k);
    return out ? 3 : 0;
}

static void help_fit(FILE *f)
{
    fprintf(f,
            "usage: berth kube fit [options] WORKLOAD-FILE CLUSTER-FILE...\n"
            "\n"
            "How many more replicas of a workload fit now beyond those it runs, where they\n"
            "would land (per node) and why the next one does not, in kube-scheduler's words\n"
            "(kubernetes-sigs/cluster-capacity's question, answered with the full scheduler).\n"
            "WORKLOAD-FILE holds a Deployment, ReplicaSet, ReplicationController, StatefulSet\n"
            "or Job (the first one is the subject; it replaces an object of the same kind,\n"
            "namespace and name in the cluster, whose running pods then count), or a Pod (a\n"
            "template). CLUSTER-FILEs are read as by 'kube schedule'; their pending pods are\n"
            "scheduled first (without preemption), then replicas are added as the controller\n"
            "names them until one does not fit.\n"
            "\n"
            "options:\n"
            "  --max N              stop after N more replicas (default: until one does not fit)\n"
            "  --config KSC.yaml    KubeSchedulerConfiguration (profiles)\n"
            "  --profile NAME       schedule every pod with this profile\n"
            "  -o, --output FORMAT  table (default), json or yaml\n"
            "  --strict, -q, -h     as for schedule\n"
            "\n"
            "exit codes: 0 at least one more replica fits, 1 none fits, 2 bad input or usage,\n"
            "3 internal error.\n");
}

static int cmd_fit(int argc, char **argv)
{
    cli_common c;
    cli_common_init(&c);
    const char *config = NULL, *profile = NULL;
    uint32_t max = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            help_fit(stdout);
            return 0;
        }
        if (!strcmp(a, "--config") || !strcmp(a, "--profile") || !strcmp(a, "--max")) {
            if (i + 1 >= argc) {
                fprintf(stderr, "berth kube fit: %s needs a value\n", a);
                return 2;
            }
            const char *v = argv[++i];
            if (!strcmp(a, "--config"))
                config = v;
            else if (!strcmp(a, "--profile"))
                profile = v;
            else {
                char *end;
                long long x = strtoll(v, &end, 10);
                if (!*v || *end || x < 1 || x > BERTH_KUBE_MAX_GENERATED) {
                    fprintf(stderr, "berth kube fit: --max expects an integer from 1 to %u, got '%s'\n",
                            BERTH_KUBE_MAX_GENERATED, v);
                    return 2;
                }
                max = (uint32_t)x;
            }
            continue;
        }
        int r = cli_common_flag(&c, argc, argv, &i);
        if (r < 0)
            return 2;
        if (r == 0) {
            cli_unknown_option("kube fit", a);
            return 2;
        }
    }
    if (c.nfiles < 2) {
        fprintf(stderr, "berth kube fit: give a WORKLOAD-FILE and at least one CLUSTER-FILE (see --help)\n");
        return 2;
    }
    berth_kcluster k;
    berth_kube_init(&k);
    berth_error e;
    berth_error_clear(&e);
    int rc = 0;
    uint32_t first_ctl = 0, first_pod = 0;
    /* the cluster's files (and the configuration), then the workload's */
    for (int i = 1; i <= c.nfiles && !rc; i++) {
        const char *path = i < c.nfiles ? c.files[i] : config;
        if (i == c.nfiles) {
            if (path)
                rc = berth_kube_load_file(&k, path, c.strict, &e);
            first_ctl = k.ncontrollers;
            first_pod = k.npods;
            path = c.files[0];
            if (rc)
                break;
        }
        rc = berth_kube_load_file(&k, path, c.strict, &e);
    }
    berth_kprofile forced;
    const berth_kprofile *prof = NULL;
    if (!rc && profile) {
        prof = named_profile(&k, profile, &forced);
        if (!prof)
            rc = berth_error_set(&e, BERTH_EINVAL, "--profile: no profile named '%s'", profile);
    }
    berth_kfit f;
    if (!rc)
        rc = berth_kube_fit(&k, first_ctl, first_pod, max, prof, NULL, &f, &e);
    if (rc) {
        fprintf(stderr, "berth: %s\n", e.msg);
        berth_kube_free(&k);
        return berth_err_exit_code(rc);
    }
    if (!c.quiet)
        berth_report_warnings_text(stderr, &k.skipped);
    int out = 0;
    if (!c.quiet) {
        if (c.format == CLI_TABLE)
            out = berth_kube_fit_table(stdout, &f, &k);
        else {
            json_t *j = berth_kube_fit_json(&f, &k);
            if (j && berth_report_set_warnings(j, &k.skipped)) {
                json_decref(j);
                j = NULL; /* out of memory */
            }
            if (cli_print_json(j, c.format))
                out = 1; /* printed */
        }
    }
    int fits = f.fits > 0;
    berth_kube_free(&k);
    if (out) {
        if (out != 1)
            fprintf(stderr, "berth: cannot write output\n");
        return 3;
    }
    return fits ? 0 : 1;
}

int cmd_kube(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
        FILE *f = argc < 2 ? stderr : stdout;
        fprintf(f, "usage: berth kube schedule|size|fit [options] FILE...\n"
                   "  schedule   place pending pods with kube-scheduler's semantics\n"
                   "  size       QoS classes and vSphere Pod sizes\n"
                   "  fit        how many more replicas of a workload fit now\n"
                   "Run 'berth kube COMMAND --help' for options.\n");
        return argc < 2 ? 2 : 0;
    }
    if (!strcmp(argv[1], "schedule"))
        return cmd_schedule(argc - 1, argv + 1);
    if (!strcmp(argv[1], "size"))
        return cmd_size(argc - 1, argv + 1);
    if (!strcmp(argv[1], "fit"))
        return cmd_fit(argc - 1, argv + 1);
    fprintf(stderr, "berth kube: unknown command '%s' (schedule, size or fit)\n", argv[1]);
    return 2;
}
