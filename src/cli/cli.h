/* cli/cli.h - shared pieces of the berth command line: common options,
 * loading input files into a model, writing output files atomically. */
#ifndef BERTH_CLI_H
#define BERTH_CLI_H

#include <stdio.h>

#include "berth/nexus.h"

enum cli_format { CLI_TABLE, CLI_JSON, CLI_YAML };

typedef struct cli_common {
    enum cli_format format;
    int quiet;
    int strict;
    uint64_t seed;
    berth_tiebreak tiebreak;
    const char *files[256];
    int nfiles;
} cli_common;

/* Parses a common flag at argv[*i] (advancing *i past its value). Returns
 * 1 when consumed, 0 when not a common flag, -1 on a usage error (printed). */
int cli_common_flag(cli_common *c, int argc, char **argv, int *i);
/* The last flag check of a command's loop: a common flag at argv[*i] (1),
 * else -1 after a usage error ("berth CMD: unknown option 'X' (see berth
 * CMD --help)" when it is no common flag either). */
int cli_common_or_unknown(const char *cmd, cli_common *c, int argc, char **argv, int *i);
void cli_common_init(cli_common *c);
/* Loads every file into nx and validates it; prints the error and returns
 * the exit code (2) on failure, 0 on success. */
int cli_load_nexus(berth_nexus *nx, const cli_common *c);
/* Parses `--at TIME` / `--at=TIME` (RFC 3339) at argv[*i] into *now
 * (seconds). 1 consumed, 0 not --at, -1 usage error (printed, naming cmd). */
int cli_flag_at(const char *cmd, int argc, char **argv, int *i, int64_t *now);
/* An RFC 3339 time v (the value of flag) into *out, seconds since the
 * epoch rounded down. 0, or -1 when v is not one (printed, naming cmd and
 * flag). */
int cli_parse_time(const char *cmd, const char *flag, const char *v, int64_t *out);
/* A Go duration v (the value of flag) into *out, seconds; never, negative
 * and (when positive) zero durations are refused. 0, or -1 (printed,
 * naming cmd and flag, with `examples` such as "30s, 1m or 1h30m"). */
int cli_parse_duration(const char *cmd, const char *flag, const char *v, int positive,
                       const char *examples, int64_t *out);
/* `--name VALUE` / `--name=VALUE` at argv[*i]: 1 with *v set (advancing *i
 * past a separate value), 0 not this flag, -1 missing value (printed,
 * naming cmd). */
int cli_flag_value(const char *cmd, const char *name, int argc, char **argv, int *i,
                   const char **v);
/* `--threads N` at argv[*i] (N from 1 to 256): 1 with *out set, 0 not this
 * flag, -1 bad or missing value (printed, naming cmd). */
int cli_flag_threads(const char *cmd, int argc, char **argv, int *i, uint32_t *out);
/* The default --threads: the online processors, at most 256. */
uint32_t cli_default_threads(void);
/* Reads every input file of c into arena and hands each to load(ctx, ...).
 * Returns 0, or the failing code with e set; "no input files" is EINVAL. */
int cli_load_each(const cli_common *c, berth_arena *arena,
                  int (*load)(void *ctx, const berth_source *src, int strict, berth_error *e),
                  void *ctx, berth_error *e);
/* Hands every input file of c to load(ctx, path, ...), a loader that
 * streams its file (berth_disrupt_load_file). 0, or the failing code with
 * e set; "no input files" is EINVAL. */
int cli_stream_each(const cli_common *c,
                    int (*load)(void *ctx, const char *path, int strict, berth_error *e),
                    void *ctx, berth_error *e);
/* Writes via fn into path atomically (temp file + rename). 0 or -1 (printed). */
int cli_write_file(const char *path, int (*fn)(FILE *, const void *), const void *arg);
/* Prints json_t (as JSON or YAML) to stdout and frees it. 0, or -1 after
 * printing "berth: out of memory" (root NULL: the report could not be
 * built, or jansson failed) or "berth: cannot write output". */
struct json_t;
int cli_print_json(struct json_t *root, enum cli_format f);
/* berth_doc_load_file, and an empty source (no documents) is an error:
 * "<stdin>: no input documents" (exit 2) */
int cli_load_doc(berth_arena *arena, const char *path, berth_source *src, berth_error *e);
/* the closest of choices (NULL-terminated) within a small edit distance, or NULL */
const char *cli_closest(const char *word, const char *const *choices);
/* "berth CMD: unknown option 'X' (did you mean --y? see berth CMD --help)" on stderr */
void cli_unknown_option(const char *cmd, const char *a);
int cli_completion(int argc, char **argv);

int cmd_simulate(int argc, char **argv);
int cmd_advise(int argc, char **argv);
int cmd_fleet(int argc, char **argv);
int cmd_kube(int argc, char **argv);
int cmd_disrupt(int argc, char **argv);
int cmd_autoscale(int argc, char **argv);
int cmd_serve(int argc, char **argv);

#endif
