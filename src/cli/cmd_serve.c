/* cli/cmd_serve.c - `berth serve`: parses the options, starts the HTTP
 * service (berth/serve.h) and runs until SIGINT or SIGTERM. */
#include "cli/cli.h"

#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "berth/serve.h"

static void help(FILE *f)
{
    fprintf(f,
            "usage: berth serve [options]\n"
            "\n"
            "Runs the placement service: a JSON HTTP API over the same engine as the other\n"
            "commands (docs/api.md). Every accepted mutation is committed to a SQLite log\n"
            "before it is acknowledged; a restart replays the log.\n"
            "\n"
            "options:\n"
            "  --db FILE                    the store (default ./berth.db; WAL files beside it)\n"
            "  --etcd URL[,URL...]          keep the estate's log in etcd instead, shared by\n"
            "                               several replicas (http://HOST:PORT of its members)\n"
            "  --estate NAME                the estate's name in etcd (needed with --etcd)\n"
            "  --checkpoint-every N         etcd: a snapshot every N log batches, the log\n"
            "                               below it removed (default 1000)\n"
            "  --etcd-cacert FILE           etcd: PEM CA bundle its https:// members' certificates\n"
            "                               are checked against\n"
            "  --etcd-cert FILE             etcd: PEM client certificate (--client-cert-auth)\n"
            "  --etcd-key FILE              etcd: the client certificate's PEM private key\n"
            "  --listen ADDR:PORT           where to listen (default 127.0.0.1:8080;\n"
            "                               [::1]:PORT for IPv6; port 0 picks a free port)\n"
            "  --token-file FILE            bearer tokens allowed to read and write, one per line\n"
            "  --read-only-token-file FILE  bearer tokens allowed to read only (403 on writes)\n"
            "  --max-body BYTES             request body limit (default 8388608)\n"
            "  --max-connections N          open connections (default 10000)\n"
            "  --per-ip-connections N       open connections per client address (default 64)\n"
            "  --timeout SECONDS            idle connection timeout (default 30)\n"
            "  --request-timeout SECONDS    time for a whole request (headers and body) to\n"
            "                               arrive, and for its reply to be taken (default 10)\n"
            "  --threads N                  event-loop (epoll) threads (default 4)\n"
            "  --workers N                  threads for estate, extender and metrics requests\n"
            "                               (default 64)\n"
            "  --planner-threads N          threads for kube, fleet, disrupt and autoscale\n"
            "                               requests (default: online CPUs, at least 2)\n"
            "  --planner-queue N            planner requests waiting beyond those before 503\n"
            "                               (default: --planner-threads)\n"
            "  --max-objects N              objects in one planner request body (default 100000)\n"
            "  --max-pairs N                nodes x pods in one planner request (default 250000)\n"
            "  --max-request-seconds S      planning time of one planner request, fractions\n"
            "                               allowed; 0: no limit (default 30)\n"
            "  --tls-cert FILE              PEM certificate (chain): serve HTTPS (needs --tls-key)\n"
            "  --tls-key FILE               PEM private key of the certificate\n"
            "  -q, --quiet                  no log lines\n"
            "  -h, --help                   this text\n"
            "\n"
            "Without a token file the API is open: listen on loopback only.\n"
            "exit codes: 0 stopped by a signal, 2 bad usage or option, 3 cannot start.\n");
}

static int parse_uint(const char *flag, const char *v, unsigned long long max,
                      unsigned long long *out)
{
    char *end;
    unsigned long long x = strtoull(v, &end, 10);
    if (!*v || *end || *v == '-' || x == 0 || x > max) {
        fprintf(stderr, "berth serve: %s expects an integer from 1 to %llu, got '%s'\n", flag, max,
                v);
        return -1;
    }
    *out = x;
    return 0;
}

/* Seconds with fractions ("0.05", "30"), 0 allowed, at most a day. */
static int parse_seconds(const char *flag, const char *v, double *out)
{
    char *end;
    double x = strtod(v, &end);
    if (!*v || *end || !isfinite(x) || x < 0 || x > 86400) {
        fprintf(stderr,
                "berth serve: %s expects seconds from 0 (no limit) to 86400, fractions allowed, "
                "got '%s'\n",
                flag, v);
        return -1;
    }
    *out = x;
    return 0;
}

int cmd_serve(int argc, char **argv)
{
    berth_serve_options o;
    berth_serve_default_options(&o);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            help(stdout);
            return 0;
        }
        if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
            o.quiet = 1;
            continue;
        }
        static const char *const valued[] = {"--db", "--listen", "--token-file",
                                             "--read-only-token-file", "--max-body",
                                             "--max-connections", "--timeout", "--tls-cert",
                                             "--tls-key", "--per-ip-connections",
                                             "--request-timeout", "--threads", "--workers",
                                             "--planner-threads", "--planner-queue",
                                             "--max-objects", "--max-pairs", "--etcd",
                                             "--estate", "--max-request-seconds",
                                             "--checkpoint-every", "--etcd-cacert",
                                             "--etcd-cert", "--etcd-key", NULL};
        int k = -1;
        for (int j = 0; valued[j]; j++)
            if (!strcmp(a, valued[j]))
                k = j;
        if (k < 0) {
            cli_unknown_option("serve", a);
            return 2;
        }
        if (i + 1 >= argc) {
            fprintf(stderr, "berth serve: %s needs a value\n", a);
            return 2;
        }
        const char *v = argv[++i];
        unsigned long long x;
        switch (k) {
        case 0: o.db = v; break;
        case 1: o.listen = v; break;
        case 2: o.token_file = v; break;
        case 3: o.read_only_token_file = v; break;
        case 7: o.tls_cert = v; break;
        case 17: o.etcd = v; break;
        case 18: o.estate = v; break;
        case 21: o.etcd_cacert = v; break;
        case 22: o.etcd_cert = v; break;
        case 23: o.etcd_key = v; break;
        case 8: o.tls_key = v; break;
        case 4:
            if (parse_uint(a, v, 1ull << 30, &x))
                return 2;
            o.max_body = (size_t)x;
            break;
        case 5:
            if (parse_uint(a, v, 1000000, &x))
                return 2;
            o.max_connections = (unsigned)x;
            break;
        case 9:
            if (parse_uint(a, v, 1000000, &x))
                return 2;
            o.per_ip_connections = (unsigned)x;
            break;
        case 10:
            if (parse_uint(a, v, 86400, &x))
                return 2;
            o.request_timeout = (unsigned)x;
            break;
        case 11:
        case 12:
        case 13:
        case 14:
            if (parse_uint(a, v, 1024, &x))
                return 2;
            if (k == 11)
                o.threads = (unsigned)x;
            else if (k == 12)
                o.workers = (unsigned)x;
            else if (k == 13)
                o.planner_threads = (unsigned)x;
            else
                o.planner_queue = (unsigned)x;
            break;
        case 19:
            if (parse_seconds(a, v, &o.max_request_seconds))
                return 2;
            break;
        case 20:
            if (parse_uint(a, v, 1ull << 30, &x))
                return 2;
            o.checkpoint_every = (unsigned)x;
            break;
        case 15:
        case 16:
            if (parse_uint(a, v, 1ull << 50, &x))
                return 2;
            if (k == 15)
                o.max_objects = x;
            else
                o.max_pairs = x;
            break;
        default:
            if (parse_uint(a, v, 86400, &x))
                return 2;
            o.timeout_seconds = (unsigned)x;
        }
    }
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set, NULL); /* threads started below inherit the mask */
    signal(SIGPIPE, SIG_IGN);
    berth_server *s;
    berth_error e;
    berth_error_clear(&e);
    int rc = berth_serve_start(&o, &s, &e);
    if (rc) {
        fprintf(stderr, "berth serve: %s\n", e.msg);
        return rc == BERTH_EINVAL ? 2 : 3;
    }
    if (!o.quiet)
        fprintf(stderr, "berth serve: listening on port %u%s, store %s%s%s%s\n",
                berth_serve_port(s), o.tls_cert ? " (HTTPS)" : "", o.etcd ? "etcd " : "",
                o.etcd ? o.etcd : o.db, o.etcd ? " estate " : "", o.etcd ? o.estate : "");
    int sig = 0;
    sigwait(&set, &sig);
    if (!o.quiet)
        fprintf(stderr, "berth serve: stopping (signal %d)\n", sig);
    berth_serve_stop(s);
    return 0;
}
