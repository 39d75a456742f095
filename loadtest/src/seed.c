/*
 * seed.c — see seed.h; also `loadtest seed` and `loadtest cleanup`.
 */
#include "seed.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "lt.h"
#include "netpolicy.h"
#include "rpc/cfg.h"
#include "store/auth.h"

static void lt_hex(const unsigned char *in, size_t n, char *out)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = digits[in[i] >> 4];
        out[2 * i + 1] = digits[in[i] & 15];
    }
    out[2 * n] = '\0';
}

void lt_seed_handle(const char *tag, int idx, char *out, size_t len)
{
    snprintf(out, len, "%s-%d", tag, idx);
}

void lt_seed_token(const char *secret, const char *tag, int idx, char out[LT_TOKEN_LEN + 1])
{
    char msg[96];
    int n = snprintf(msg, sizeof(msg), "%s:%d", tag, idx);
    unsigned char mac[EVP_MAX_MD_SIZE];
    unsigned int maclen = 0;
    HMAC(EVP_sha256(), secret, (int)strlen(secret), (const unsigned char *)msg, (size_t)n, mac,
         &maclen);
    memcpy(out, "lt1.", 4);
    char hex[65];
    lt_hex(mac, 16, hex);
    memcpy(out + 4, hex, 32);
    out[LT_TOKEN_LEN] = '\0';
}

/* What store-svc keeps of a token: its hash in store-svc's own format
 * (store/auth.h), so a seeded session authenticates like a real one. */
static void lt_token_hash(const char *token, char out[65])
{
    store_sha256_hex(token, strlen(token), out);
}

/* Every host (and hostaddr) of the connection string, each possibly a
 * comma-separated list, must pass the driver's network policy (netpolicy.h). */
static bool lt_pg_allowed(const char *conninfo, bool allow_private, char *err, size_t errlen)
{
    char *perr = NULL;
    PQconninfoOption *opts = PQconninfoParse(conninfo, &perr);
    if (opts == NULL) {
        snprintf(err, errlen, "postgres: bad connection string: %s", perr ? perr : "?");
        PQfreemem(perr);
        return false;
    }
    bool ok = true;
    for (PQconninfoOption *o = opts; o->keyword && ok; o++) {
        if (!o->val || !o->val[0] || (strcmp(o->keyword, "host") && strcmp(o->keyword, "hostaddr")))
            continue;
        char buf[256];
        snprintf(buf, sizeof(buf), "%s", o->val);
        char *save = NULL;
        for (char *h = strtok_r(buf, ",", &save); h && ok; h = strtok_r(NULL, ",", &save)) {
            char why[224];
            if (!lt_net_host_allowed(h, allow_private, why, sizeof(why))) {
                snprintf(err, errlen, "postgres %s", why);
                ok = false;
            }
        }
    }
    PQconninfoFree(opts);
    return ok;
}

PGconn *lt_pg_connect(const char *conninfo, bool allow_private, char *err, size_t errlen)
{
    if (!lt_pg_allowed(conninfo, allow_private, err, errlen))
        return NULL;
    PGconn *pg = PQconnectdb(conninfo);
    if (PQstatus(pg) != CONNECTION_OK) {
        snprintf(err, errlen, "postgres (%s): %s", conninfo, PQerrorMessage(pg));
        PQfinish(pg);
        return NULL;
    }
    PQsetNoticeProcessor(pg, NULL, NULL);
    return pg;
}

/* Runs one statement; PGRES_COMMAND_OK or TUPLES_OK is success. */
static int lt_pg_exec(PGconn *pg, const char *sql, int nparams, const char *const *params,
                      PGresult **out, char *err, size_t errlen)
{
    PGresult *r = PQexecParams(pg, sql, nparams, NULL, params, NULL, NULL, 0);
    ExecStatusType s = PQresultStatus(r);
    if (s != PGRES_COMMAND_OK && s != PGRES_TUPLES_OK) {
        snprintf(err, errlen, "postgres: %s", PQresultErrorMessage(r));
        PQclear(r);
        return -1;
    }
    if (out)
        *out = r;
    else
        PQclear(r);
    return 0;
}

/* Streams `len` bytes of COPY text, flushing in 256 KiB chunks. */
typedef struct lt_copybuf {
    PGconn *pg;
    char buf[256 * 1024];
    size_t n;
    bool failed;
} lt_copybuf;

static void lt_copy_flush(lt_copybuf *c)
{
    if (c->n && !c->failed && PQputCopyData(c->pg, c->buf, (int)c->n) != 1)
        c->failed = true;
    c->n = 0;
}

static void lt_copy_line(lt_copybuf *c, const char *line, size_t len)
{
    if (c->n + len > sizeof(c->buf))
        lt_copy_flush(c);
    memcpy(c->buf + c->n, line, len);
    c->n += len;
}

static int lt_copy_end(lt_copybuf *c, char *err, size_t errlen)
{
    lt_copy_flush(c);
    if (PQputCopyEnd(c->pg, c->failed ? "client failed" : NULL) != 1)
        c->failed = true;
    PGresult *r;
    int rc = c->failed ? -1 : 0;
    while ((r = PQgetResult(c->pg)) != NULL) {
        if (PQresultStatus(r) != PGRES_COMMAND_OK) {
            snprintf(err, errlen, "postgres COPY: %s", PQresultErrorMessage(r));
            rc = -1;
        }
        PQclear(r);
    }
    if (rc != 0 && err[0] == '\0')
        snprintf(err, errlen, "postgres COPY: %s", PQerrorMessage(c->pg));
    return rc;
}

static int lt_copy_begin(PGconn *pg, const char *sql, char *err, size_t errlen)
{
    PGresult *r = PQexec(pg, sql);
    if (PQresultStatus(r) != PGRES_COPY_IN) {
        snprintf(err, errlen, "postgres: %s", PQresultErrorMessage(r));
        PQclear(r);
        return -1;
    }
    PQclear(r);
    return 0;
}

static int lt_seed_check_schema(PGconn *pg, char *err, size_t errlen)
{
    PGresult *r;
    if (lt_pg_exec(
            pg,
            "SELECT to_regclass('accounts') IS NOT NULL AND to_regclass('sessions') IS NOT NULL", 0,
            NULL, &r, err, errlen) != 0)
        return -1;
    bool ok = PQgetvalue(r, 0, 0)[0] == 't';
    PQclear(r);
    if (!ok) {
        snprintf(err, errlen,
                 "the schema is missing (accounts, sessions): start store-svc once to migrate");
        return -1;
    }
    return 0;
}

int lt_seed_cleanup(PGconn *pg, const char *tag, long long *removed, char *err, size_t errlen)
{
    const char *p[1] = {tag};
    PGresult *r = NULL;
    *removed = 0;
    if (lt_seed_check_schema(pg, err, errlen) != 0)
        return -1;
    if (lt_pg_exec(pg, "BEGIN", 0, NULL, NULL, err, errlen) != 0)
        return -1;
    if (lt_pg_exec(
            pg, "CREATE TEMP TABLE lt_acc ON COMMIT DROP AS SELECT id FROM accounts WHERE tag = $1",
            1, p, NULL, err, errlen) != 0 ||
        lt_pg_exec(pg,
                   "DELETE FROM games WHERE id IN (SELECT game_id FROM game_players "
                   "WHERE account_id IN (SELECT id FROM lt_acc))",
                   0, NULL, NULL, err, errlen) != 0 ||
        lt_pg_exec(pg, "DELETE FROM chat_messages WHERE account_id IN (SELECT id FROM lt_acc)", 0,
                   NULL, NULL, err, errlen) != 0 ||
        /* The event log (migration 0004; the driver also runs against older
         * schemas) has no foreign key to accounts. */
        lt_pg_exec(pg,
                   "DO $$BEGIN IF to_regclass('events') IS NOT NULL THEN "
                   "DELETE FROM events WHERE account_id IN (SELECT id FROM lt_acc); "
                   "DELETE FROM event_horizon WHERE account_id IN (SELECT id FROM lt_acc); "
                   "END IF; END$$",
                   0, NULL, NULL, err, errlen) != 0 ||
        lt_pg_exec(
            pg,
            "DELETE FROM games WHERE invitation_id IN (SELECT invitation_id FROM invitation_seats "
            "WHERE account_id IN (SELECT id FROM lt_acc))",
            0, NULL, NULL, err, errlen) != 0 ||
        lt_pg_exec(pg,
                   "DELETE FROM invitations WHERE inviter_id IN (SELECT id FROM lt_acc) OR id IN "
                   "(SELECT invitation_id FROM invitation_seats WHERE account_id IN (SELECT id "
                   "FROM lt_acc))",
                   0, NULL, NULL, err, errlen) != 0 ||
        lt_pg_exec(pg, "DELETE FROM accounts WHERE tag = $1", 1, p, &r, err, errlen) != 0) {
        PQclear(PQexec(pg, "ROLLBACK"));
        return -1;
    }
    *removed = atoll(PQcmdTuples(r));
    PQclear(r);
    return lt_pg_exec(pg, "COMMIT", 0, NULL, NULL, err, errlen);
}

int lt_seed_reset_games(PGconn *pg, char *err, size_t errlen)
{
    if (lt_seed_check_schema(pg, err, errlen) != 0)
        return -1;
    if (lt_pg_exec(pg,
                   "DO $$BEGIN IF to_regclass('events') IS NOT NULL THEN "
                   "TRUNCATE events, event_horizon; END IF; END$$",
                   0, NULL, NULL, err, errlen) != 0)
        return -1;
    /* bot_turns (migration 0008) refers to games, and the lobby's tables
     * (0010_seeks.sql) to invitations, so they go in the same TRUNCATE
     * when the schema has them. */
    return lt_pg_exec(pg,
                      "DO $$BEGIN EXECUTE 'TRUNCATE game_moves, game_players, chat_messages, "
                      "game_deadlines, games, invitation_seats, invitations, account_stats, "
                      "rating_history, ratings' || CASE WHEN to_regclass('bot_turns') IS NOT NULL "
                      "THEN ', bot_turns' ELSE '' END || CASE WHEN to_regclass('seeks') IS NOT "
                      "NULL THEN ', seek_matches, seeks' ELSE '' END; END$$",
                      0, NULL, NULL, err, errlen);
}

/* One shared password for the whole population ("loadtest"), hashed by
 * store-svc's own code: seeded players never log in, but the hash is one
 * store-svc can verify. 1000 iterations: the seed hashes it once per run. */
static int lt_seed_pw_hash(char *out, size_t len)
{
    return store_password_hash("loadtest", 1000, out, len);
}

int lt_seed_ensure(PGconn *pg, const char *tag, const char *secret, int n, int ttl_hours,
                   int *created, char *err, size_t errlen)
{
    *created = 0;
    if (lt_seed_check_schema(pg, err, errlen) != 0)
        return -1;
    /* Already there? Every handle 0..n-1 with a session that outlives the
     * run, and the token hash of the last one matches this secret. */
    char last_handle[96], last_token[LT_TOKEN_LEN + 1], last_hash[65], nbuf[16];
    lt_seed_handle(tag, n - 1, last_handle, sizeof(last_handle));
    lt_seed_token(secret, tag, n - 1, last_token);
    lt_token_hash(last_token, last_hash);
    snprintf(nbuf, sizeof(nbuf), "%d", n);
    const char *p[3] = {tag, last_hash, nbuf};
    PGresult *r;
    if (lt_pg_exec(pg,
                   "SELECT (SELECT count(*) FROM accounts WHERE tag = $1) >= $3::int AND EXISTS "
                   "(SELECT 1 FROM sessions WHERE token_hash = $2 AND expires_at > now() + "
                   "interval '1 hour')",
                   3, p, &r, err, errlen) != 0)
        return -1;
    bool have = PQgetvalue(r, 0, 0)[0] == 't';
    PQclear(r);
    if (have)
        return 0;
    long long removed;
    if (lt_seed_cleanup(pg, tag, &removed, err, errlen) != 0)
        return -1;
    char pw[STORE_PW_HASH_BYTES];
    if (lt_seed_pw_hash(pw, sizeof(pw)) != 0) {
        snprintf(err, errlen, "seed: cannot hash the players' password");
        return -1;
    }
    if (lt_pg_exec(pg, "BEGIN", 0, NULL, NULL, err, errlen) != 0)
        return -1;
    lt_copybuf *c = calloc(1, sizeof(*c));
    c->pg = pg;
    char line[512];
    if (lt_copy_begin(pg, "COPY accounts (handle, display_name, pw_hash, tag) FROM STDIN", err,
                      errlen) != 0)
        goto fail;
    for (int i = 0; i < n; i++) {
        char h[96];
        lt_seed_handle(tag, i, h, sizeof(h));
        int len = snprintf(line, sizeof(line), "%s\tLoad player %d\t%s\t%s\n", h, i, pw, tag);
        lt_copy_line(c, line, (size_t)len);
    }
    if (lt_copy_end(c, err, errlen) != 0)
        goto fail;
    if (lt_pg_exec(pg, "CREATE TEMP TABLE lt_seed (handle text, token_hash text) ON COMMIT DROP", 0,
                   NULL, NULL, err, errlen) != 0 ||
        lt_copy_begin(pg, "COPY lt_seed (handle, token_hash) FROM STDIN", err, errlen) != 0)
        goto fail;
    for (int i = 0; i < n; i++) {
        char h[96], tok[LT_TOKEN_LEN + 1], hash[65];
        lt_seed_handle(tag, i, h, sizeof(h));
        lt_seed_token(secret, tag, i, tok);
        lt_token_hash(tok, hash);
        int len = snprintf(line, sizeof(line), "%s\t%s\n", h, hash);
        lt_copy_line(c, line, (size_t)len);
    }
    if (lt_copy_end(c, err, errlen) != 0)
        goto fail;
    char ttl[32];
    snprintf(ttl, sizeof(ttl), "%d", ttl_hours);
    const char *tp[1] = {ttl};
    if (lt_pg_exec(pg,
                   "INSERT INTO sessions (token_hash, account_id, expires_at) "
                   "SELECT s.token_hash, a.id, now() + $1::int * interval '1 hour' "
                   "FROM lt_seed s JOIN accounts a ON a.handle = s.handle",
                   1, tp, NULL, err, errlen) != 0 ||
        lt_pg_exec(pg, "COMMIT", 0, NULL, NULL, err, errlen) != 0)
        goto fail;
    /* Fresh statistics: the planner sees 100k new rows at once. */
    PQclear(PQexec(pg, "ANALYZE accounts; ANALYZE sessions"));
    free(c);
    *created = 1;
    return 0;
fail:
    free(c);
    PQclear(PQexec(pg, "ROLLBACK"));
    return -1;
}

/* ------------------------------------------------------------------ */
/* Commands                                                            */

typedef struct lt_seed_cfg {
    char pg[512];
    char tag[32];
    char secret[128];
    int players;
    int ttl_hours;
    bool allow_private;
} lt_seed_cfg;

static const cfg_option lt_seed_options[] = {
    CFG_STR_OPT(lt_seed_cfg, pg, "pg",
                "host=127.0.0.1 port=55432 dbname=scrabble user=scrabble_loadtest",
                "libpq connection string"),
    CFG_STR_OPT(lt_seed_cfg, tag, "tag", "lt", "population tag (accounts.tag; handles are TAG-i)"),
    CFG_STR_OPT(lt_seed_cfg, secret, "secret", "loadtest-local",
                "key the bearer tokens derive from"),
    CFG_INT_OPT(lt_seed_cfg, players, "players", 1, 1000000, "1000", "players to create"),
    CFG_INT_OPT(lt_seed_cfg, ttl_hours, "ttl-hours", 2, 24 * 365, "48", "session lifetime"),
    CFG_BOOL_OPT(lt_seed_cfg, allow_private, "allow-private", "false",
                 "also allow a Postgres host on a private network (containers), never public"),
};

static int lt_seed_load(int argc, char **argv, lt_seed_cfg *c)
{
    memset(c, 0, sizeof(*c));
    cfg_table t = {lt_seed_options, sizeof(lt_seed_options) / sizeof(lt_seed_options[0]), c};
    char err[256];
    int rc =
        cfg_load(&t, 1, "SCRABBLE_LOADTEST_", argv[0], argc, argv, 1, NULL, NULL, err, sizeof(err));
    if (rc == CFG_HELP)
        return 1;
    if (rc != CFG_OK) {
        fprintf(stderr, "loadtest %s: %s\n", argv[0], err);
        return -1;
    }
    if (c->tag[0] == '\0') {
        fprintf(stderr, "loadtest %s: --tag must not be empty\n", argv[0]);
        return -1;
    }
    return 0;
}

/* What seed and cleanup share: their options and a Postgres connection.
 * Returns -1 with *pg open, or the exit code to return (help, usage,
 * unreachable Postgres). */
static int lt_seed__open(const char *cmd, int argc, char **argv, lt_seed_cfg *c, PGconn **pg)
{
    int lr = lt_seed_load(argc, argv, c);
    if (lr != 0)
        return lr > 0 ? LT_EXIT_OK : LT_EXIT_USAGE;
    char err[512] = "";
    *pg = lt_pg_connect(c->pg, c->allow_private, err, sizeof(err));
    if (!*pg) {
        fprintf(stderr, "loadtest %s: %s\n", cmd, err);
        return LT_EXIT_FAIL;
    }
    return -1;
}

int lt_cmd_seed(int argc, char **argv, lt_stop *stop)
{
    lt_seed_cfg c;
    PGconn *pg;
    int ex = lt_seed__open("seed", argc, argv, &c, &pg);
    if (ex >= 0)
        return ex;
    char err[512] = "";
    uint64_t t0 = lt_now_ns();
    int created;
    int rc =
        lt_seed_ensure(pg, c.tag, c.secret, c.players, c.ttl_hours, &created, err, sizeof(err));
    PQfinish(pg);
    if (rc != 0) {
        fprintf(stderr, "loadtest seed: %s\n", err);
        return LT_EXIT_FAIL;
    }
    printf("seed: tag=%s players=%d %s in %.2f s\n", c.tag, c.players,
           created ? "created" : "already present", (lt_now_ns() - t0) / 1e9);
    return LT_EXIT_OK;
}

int lt_cmd_cleanup(int argc, char **argv, lt_stop *stop)
{
    lt_seed_cfg c;
    PGconn *pg;
    int ex = lt_seed__open("cleanup", argc, argv, &c, &pg);
    if (ex >= 0)
        return ex;
    char err[512] = "";
    uint64_t t0 = lt_now_ns();
    long long removed;
    int rc = lt_seed_cleanup(pg, c.tag, &removed, err, sizeof(err));
    PQfinish(pg);
    if (rc != 0) {
        fprintf(stderr, "loadtest cleanup: %s\n", err);
        return LT_EXIT_FAIL;
    }
    printf("cleanup: tag=%s removed %lld accounts in %.2f s\n", c.tag, removed,
           (lt_now_ns() - t0) / 1e9);
    return LT_EXIT_OK;
}
