/* serve/store.c - the durable log of `berth serve` in SQLite (the default
 * implementation of the store interface serve_log, serve.h): one table of
 * records (estate text, cluster creations, scales, deletes, each with the
 * placements it made: format 2) keyed by a sequence number. WAL journal with synchronous=FULL: a commit returns
 * only after the WAL is fsynced, so an acknowledged mutation survives a
 * process crash and a power loss. Writers batch many records per
 * transaction (group commit, engine.c). */
#include "serve/serve.h"
#include "core/invariant.h"

#include <sqlite3.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

struct serve_store {
    sqlite3 *db;
    sqlite3_stmt *ins, *compact;
    int64_t next_seq;
    uint64_t commits;
    serve_log log; /* the serve_log face of this store */
};

static int db_fail(serve_store *s, berth_error *e, const char *what)
{
    return berth_error_set(e, BERTH_EIO, "store: %s: %s", what,
                           s && s->db ? sqlite3_errmsg(s->db) : "cannot open");
}

static int exec(serve_store *s, const char *sql, berth_error *e)
{
    char *err = NULL;
    if (sqlite3_exec(s->db, sql, NULL, NULL, &err) != SQLITE_OK) {
        berth_error_set(e, BERTH_EIO, "store: %s: %s", sql, err ? err : "error");
        sqlite3_free(err);
        return BERTH_EIO;
    }
    return 0;
}

int serve_store_open(const char *path, serve_store **out, berth_error *e)
{
    *out = NULL;
    serve_store *s = calloc(1, sizeof *s);
    if (!s)
        return berth_error_set(e, BERTH_ENOMEM, "out of memory");
    if (sqlite3_open_v2(path, &s->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
                                          SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
        int rc = berth_error_set(e, BERTH_EIO, "store: cannot open %s: %s", path,
                                 s->db ? sqlite3_errmsg(s->db) : "out of memory");
        serve_store_close(s);
        return rc;
    }
    sqlite3_busy_timeout(s->db, 5000);
    int rc = exec(s, "PRAGMA journal_mode=WAL", e);
    if (!rc)
        rc = exec(s, "PRAGMA synchronous=FULL", e);
    if (!rc)
        rc = exec(s, "CREATE TABLE IF NOT EXISTS log ("
                     " seq INTEGER PRIMARY KEY, kind INTEGER NOT NULL,"
                     " cluster TEXT, pool TEXT, count INTEGER, body BLOB)", e);
    /* format 2 (decision records): a log written before it has neither
     * column; its rows read as format 1 (requests, re-planned on replay) */
    if (!rc) {
        sqlite3_stmt *st;
        int have = 0;
        if (sqlite3_prepare_v2(s->db, "SELECT 1 FROM pragma_table_info('log') WHERE name = "
                                      "'format'", -1, &st, NULL) != SQLITE_OK)
            rc = db_fail(s, e, "prepare");
        else {
            have = sqlite3_step(st) == SQLITE_ROW;
            sqlite3_finalize(st);
        }
        if (!rc && !have)
            rc = exec(s, "ALTER TABLE log ADD COLUMN format INTEGER NOT NULL DEFAULT 1", e);
        if (!rc && !have)
            rc = exec(s, "ALTER TABLE log ADD COLUMN decision TEXT", e);
    }
    if (!rc && (sqlite3_prepare_v2(s->db,
                                   "INSERT INTO log(seq, kind, cluster, pool, count, body, "
                                   "format, decision) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                                   -1, &s->ins, NULL) != SQLITE_OK ||
                sqlite3_prepare_v2(s->db, "DELETE FROM log WHERE seq < ?", -1, &s->compact,
                                   NULL) != SQLITE_OK))
        rc = db_fail(s, e, "prepare");
    if (!rc) {
        sqlite3_stmt *st;
        if (sqlite3_prepare_v2(s->db, "SELECT COALESCE(MAX(seq), 0) FROM log", -1, &st, NULL) !=
            SQLITE_OK)
            rc = db_fail(s, e, "prepare");
        else {
            if (sqlite3_step(st) == SQLITE_ROW)
                s->next_seq = sqlite3_column_int64(st, 0) + 1;
            else
                rc = db_fail(s, e, "max(seq)");
            sqlite3_finalize(st);
        }
    }
    if (rc) {
        serve_store_close(s);
        return rc;
    }
    *out = s;
    return 0;
}

void serve_store_close(serve_store *s)
{
    if (!s)
        return;
    sqlite3_finalize(s->ins);
    sqlite3_finalize(s->compact);
    sqlite3_close(s->db);
    free(s);
}

int serve_store_begin(serve_store *s, berth_error *e)
{
    return exec(s, "BEGIN IMMEDIATE", e);
}

int serve_store_append(serve_store *s, serve_record *r, berth_error *e)
{
    sqlite3_stmt *st = s->ins;
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    int ok = sqlite3_bind_int64(st, 1, s->next_seq) == SQLITE_OK &&
             sqlite3_bind_int(st, 2, r->kind) == SQLITE_OK &&
             (r->cluster ? sqlite3_bind_text(st, 3, r->cluster, -1, SQLITE_STATIC)
                         : sqlite3_bind_null(st, 3)) == SQLITE_OK &&
             (r->pool ? sqlite3_bind_text(st, 4, r->pool, -1, SQLITE_STATIC)
                      : sqlite3_bind_null(st, 4)) == SQLITE_OK &&
             sqlite3_bind_int64(st, 5, r->count) == SQLITE_OK &&
             (r->body ? sqlite3_bind_blob64(st, 6, r->body, r->body_len, SQLITE_STATIC)
                      : sqlite3_bind_null(st, 6)) == SQLITE_OK &&
             sqlite3_bind_int(st, 7, r->format ? r->format : 1) == SQLITE_OK &&
             (r->decision ? sqlite3_bind_text(st, 8, r->decision, -1, SQLITE_STATIC)
                          : sqlite3_bind_null(st, 8)) == SQLITE_OK;
    if (!ok || sqlite3_step(st) != SQLITE_DONE) {
        sqlite3_reset(st);
        return db_fail(s, e, "append");
    }
    sqlite3_reset(st);
    if (r->kind == SERVE_REC_ESTATE) {
        sqlite3_reset(s->compact);
        if (sqlite3_bind_int64(s->compact, 1, s->next_seq) != SQLITE_OK ||
            sqlite3_step(s->compact) != SQLITE_DONE) {
            sqlite3_reset(s->compact);
            return db_fail(s, e, "compact");
        }
        sqlite3_reset(s->compact);
    }
    r->seq = s->next_seq++;
    return 0;
}

int serve_store_commit(serve_store *s, berth_error *e)
{
    int rc = exec(s, "COMMIT", e);
    if (!rc)
        s->commits++;
    return rc;
}

void serve_store_rollback(serve_store *s)
{
    sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
    /* sequence numbers handed out in the failed transaction are reused */
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->db, "SELECT COALESCE(MAX(seq), 0) FROM log", -1, &st, NULL) ==
        SQLITE_OK) {
        if (sqlite3_step(st) == SQLITE_ROW)
            s->next_seq = sqlite3_column_int64(st, 0) + 1;
        sqlite3_finalize(st);
    }
}

int serve_store_replay(serve_store *s,
                       int (*fn)(void *ctx, const serve_record *r, berth_error *e), void *ctx,
                       berth_error *e)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->db,
                           "SELECT seq, kind, cluster, pool, count, body, format, decision "
                           "FROM log WHERE seq >= "
                           "(SELECT COALESCE(MAX(seq), 0) FROM log WHERE kind = 1) ORDER BY seq",
                           -1, &st, NULL) != SQLITE_OK)
        return db_fail(s, e, "replay");
    int rc = 0, step = SQLITE_DONE;
    int64_t prev = 0;
    while (!rc && (step = sqlite3_step(st)) == SQLITE_ROW) {
        serve_record r = {0};
        r.seq = sqlite3_column_int64(st, 0);
        r.kind = sqlite3_column_int(st, 1);
        r.cluster = (const char *)sqlite3_column_text(st, 2);
        r.pool = (const char *)sqlite3_column_text(st, 3);
        r.count = sqlite3_column_int64(st, 4);
        r.body = sqlite3_column_blob(st, 5);
        r.body_len = (size_t)sqlite3_column_bytes(st, 5);
        if (!r.body)
            r.body = "";
        r.format = sqlite3_column_int(st, 6);
        r.decision = (const char *)sqlite3_column_text(st, 7);
        /* the log replays from its latest estate, in increasing sequence,
         * records of known kinds (a file written by another program or a
         * later version fails here rather than half-applying) */
        if (r.seq <= prev || r.kind < SERVE_REC_ESTATE || r.kind > SERVE_REC_DELETE ||
            r.format < 1 || r.format > SERVE_REC_FORMAT || (r.format >= 2 && !r.decision) ||
            (prev == 0 && r.kind != SERVE_REC_ESTATE)) {
            rc = berth_error_set(e, BERTH_EIO, "store: record %lld (kind %d) out of order or "
                                 "of an unknown kind or format", (long long)r.seq, r.kind);
            break;
        }
        BERTH_ASSERT(r.kind == SERVE_REC_ESTATE ? r.body_len > 0 : r.cluster != NULL);
        prev = r.seq;
        rc = fn(ctx, &r, e);
    }
    if (!rc && step != SQLITE_DONE)
        rc = db_fail(s, e, "replay");
    sqlite3_finalize(st);
    return rc;
}

uint64_t serve_store_commits(const serve_store *s)
{
    return s->commits;
}

/* ---- the serve_log face (engine.c calls only this) ---- */

static serve_store *of_log(serve_log *l)
{
    return (serve_store *)((char *)l - offsetof(serve_store, log));
}

/* One transaction, one fsync: the group commit. */
static int sql_append(serve_log *l, serve_record *recs, size_t n, const char *batch_id,
                      int64_t *rev, berth_error *e)
{
    (void)batch_id; /* one writer: a batch is never retried */
    serve_store *s = of_log(l);
    int rc = serve_store_begin(s, e);
    for (size_t i = 0; !rc && i < n; i++)
        rc = serve_store_append(s, &recs[i], e);
    if (!rc)
        rc = serve_store_commit(s, e);
    if (rc) {
        serve_store_rollback(s);
        return rc;
    }
    *rev = s->next_seq - 1;
    return 0;
}

static int sql_read(serve_log *l, int64_t from,
                    int (*fn)(void *ctx, const serve_record *r, berth_error *e), void *ctx,
                    berth_error *e)
{
    (void)from; /* the log starts at its latest estate (append compacts) */
    return serve_store_replay(of_log(l), fn, ctx, e);
}

static uint64_t sql_commits(serve_log *l)
{
    return of_log(l)->commits;
}

static void sql_close(serve_log *l)
{
    serve_store_close(of_log(l));
}

static const serve_log_vt sqlite_vt = {
    .name = "sqlite",
    .shared = 0,
    .append = sql_append,
    .read = sql_read,
    .commits = sql_commits,
    .close = sql_close,
};

int serve_log_open_sqlite(const char *path, serve_log **out, berth_error *e)
{
    serve_store *s;
    int rc = serve_store_open(path, &s, e);
    if (rc)
        return rc;
    s->log.vt = &sqlite_vt;
    *out = &s->log;
    return 0;
}
