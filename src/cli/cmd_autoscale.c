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

static void fmt_time(int64_t t, char *buf, size_t size)
{
    time_t tt = (time_t)t;
    struct tm tm;
    gmtime_r(&tt, &tm);
    strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static double round6(double v)
{
    return (double)(long long)(v * 1e6 + (v >= 0 ? 0.5 : -0.5)) / 1e6;
}

static json_t *pod_name(const berth_autoscale *m, uint32_t pod)
{
    const berth_kpod *p = &m->kube.pods[pod];
    return json_sprintf("%s/%s", p->ns, p->name);
}

static json_t *plan_json(const berth_autoscale *m, const berth_aplan *p)
{
    char at[40];
    fmt_time(p->at, at, sizeof at);
    json_t *root = json_object(), *up = json_array(), *down = json_array(), *rep = json_array(),
           *un = json_array(), *blk = json_array();
    json_object_set_new(root, "at", json_string(at));
    json_object_set_new(root, "scaleUp", up);
    json_object_set_new(root, "scaleDown", down);
    json_object_set_new(root, "replacements", rep);
    json_object_set_new(root, "unschedulable", un);
    json_object_set_new(root, "blocked", blk);
    for (uint32_t i = 0; i < p->nup; i++) {
        const berth_ascaleup *u = &p->up[i];
        json_t *o = json_object(), *pods = json_array(), *nodes = json_array();
        json_object_set_new(o, "virtualNodeGroup", json_string(m->vngs[u->vng].name));
        json_object_set_new(o, "instanceType", json_string(m->types[u->type].name));
        json_object_set_new(o, "capacityType", json_string(berth_capacity_type_name(u->capacity_type)));
        json_object_set_new(o, "zone", json_string(u->zone));
        json_object_set_new(o, "count", json_integer(u->count));
        json_object_set_new(o, "pricePerHour", json_real(round6(u->price)));
        for (uint32_t j = 0; j < u->npods; j++)
            json_array_append_new(pods, pod_name(m, u->pods[j]));
        json_object_set_new(o, "pods", pods);
        for (uint32_t j = 0; j < u->count; j++)
            json_array_append_new(nodes, json_string(u->nodes[j]));
        json_object_set_new(o, "nodes", nodes);
        json_object_set_new(o, "headroomUnits", json_integer(u->headroom_units));
        json_object_set_new(o, "reservation", u->reservation ? json_string(u->reservation) : json_null());
        json_array_append_new(up, o);
    }
    for (uint32_t i = 0; i < p->ndown; i++) {
        const berth_ascaledown *d = &p->down[i];
        json_t *o = json_object(), *mv = json_object();
        json_object_set_new(o, "node", json_string(m->kube.nodes[d->node].name));
        json_object_set_new(o, "virtualNodeGroup", json_string(m->vngs[d->vng].name));
        json_object_set_new(o, "utilisation", json_real(round6(d->utilisation)));
        for (uint32_t j = 0; j < d->nmoves; j++) {
            const berth_kpod *kp = &m->kube.pods[d->moves[j].pod];
            char key[512];
            snprintf(key, sizeof key, "%s/%s", kp->ns, kp->name);
            json_object_set_new(mv, key, json_string(m->kube.nodes[d->moves[j].node].name));
        }
        json_object_set_new(o, "moves", mv);
        json_array_append_new(down, o);
    }
    for (uint32_t i = 0; i < p->nunsched; i++) {
        json_t *o = json_object();
        json_object_set_new(o, "pod", pod_name(m, p->unsched[i].pod));
        json_object_set_new(o, "reason", json_string(p->unsched[i].reason));
        json_array_append_new(un, o);
    }
    for (uint32_t i = 0; i < p->nblocked; i++) {
        json_t *o = json_object();
        json_object_set_new(o, "node", json_string(m->kube.nodes[p->blocked[i].node].name));
        json_object_set_new(o, "reason", json_string(p->blocked[i].reason));
        json_array_append_new(blk, o);
    }
    return root;
}

static void plan_table(const berth_autoscale *m, const berth_aplan *p)
{
    char at[40];
    fmt_time(p->at, at, sizeof at);
    printf("autoscale plan at %s\n\nSCALE UP\n", at);
    if (!p->nup)
        printf("  (none)\n");
    for (uint32_t i = 0; i < p->nup; i++) {
        const berth_ascaleup *u = &p->up[i];
        printf("  %-16s %-20s %-9s %-12s x%-3u %.4f/h  %u pod(s)", m->vngs[u->vng].name,
               m->types[u->type].name, berth_capacity_type_name(u->capacity_type), u->zone,
               u->count, u->price, u->npods);
        if (u->headroom_units)
            printf("  headroom %lld", (long long)u->headroom_units);
        if (u->reservation)
            printf("  reservation %s", u->reservation);
        printf("\n");
        for (uint32_t j = 0; j < u->npods; j++)
            printf("    %s/%s\n", m->kube.pods[u->pods[j]].ns, m->kube.pods[u->pods[j]].name);
    }
    printf("\nSCALE DOWN\n");
    if (!p->ndown)
        printf("  (none)\n");
    for (uint32_t i = 0; i < p->ndown; i++) {
        const berth_ascaledown *d = &p->down[i];
        printf("  %-28s %-16s utilisation %.2f\n", m->kube.nodes[d->node].name,
               m->vngs[d->vng].name, d->utilisation);
        for (uint32_t j = 0; j < d->nmoves; j++)
            printf("    %s/%s -> %s\n", m->kube.pods[d->moves[j].pod].ns,
                   m->kube.pods[d->moves[j].pod].name, m->kube.nodes[d->moves[j].node].name);
    }
    printf("\nUNSCHEDULABLE\n");
    if (!p->nunsched)
        printf("  (none)\n");
    for (uint32_t i = 0; i < p->nunsched; i++)
        printf("  %s/%s: %s\n", m->kube.pods[p->unsched[i].pod].ns,
               m->kube.pods[p->unsched[i].pod].name, p->unsched[i].reason);
    printf("\nKEPT\n");
    if (!p->nblocked)
        printf("  (none)\n");
    for (uint32_t i = 0; i < p->nblocked; i++)
        printf("  %-28s %s\n", m->kube.nodes[p->blocked[i].node].name, p->blocked[i].reason);
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
        if (!strcmp(a, "--at") || !strncmp(a, "--at=", 5)) {
            const char *v = a[4] == '=' ? a + 5 : (i + 1 < argc ? argv[++i] : NULL);
            int64_t ms;
            if (!v) {
                fprintf(stderr, "berth autoscale plan: --at needs a value\n");
                return 2;
            }
            if (berth_fleet_parse_time(v, &ms)) {
                fprintf(stderr,
                        "berth autoscale plan: --at expects an RFC 3339 time such as "
                        "2024-05-01T12:00:00Z, got '%s'\n", v);
                return 2;
            }
            opt.now = ms >= 0 ? ms / 1000 : -((-ms + 999) / 1000);
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
    if (c.nfiles == 0) {
        fprintf(stderr, "berth: no input files (give one or more YAML/JSON files, or - for stdin)\n");
        return 2;
    }
    berth_autoscale m;
    berth_autoscale_init(&m);
    berth_error e;
    berth_error_clear(&e);
    int rc = 0;
    for (int i = 0; i < c.nfiles && !rc; i++) {
        berth_source src;
        rc = berth_doc_load_file(&m.kube.arena, c.files[i], &src, &e);
        if (!rc)
            rc = berth_autoscale_load(&m, &src, c.strict, &e);
    }
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
            plan_table(&m, &p);
        else if (cli_print_json(plan_json(&m, &p), c.format))
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
    fprintf(stderr, "berth autoscale: unknown subcommand '%s' (autoscale has: plan; simulate is "
                    "not implemented yet)\n", argv[1]);
    return 2;
}
