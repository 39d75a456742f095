/*
 * store.h — store-svc internals: the server context, the operation record
 * every call becomes, the Postgres connection wrapper, the write batcher and
 * the reader pool.
 *
 * Life of a call: a handler (handlers.c) validates the request, fills a
 * store_op in the call's arena (which SQL statement, its parameters, the
 * function that turns the result into a reply) and queues it on the writer
 * (batcher.c) or the reader pool (readers.c). Whoever runs the last stage
 * calls op->done, which finishes the gRPC call. Nothing in db.c, batcher.c or
 * readers.c knows about gRPC, so tests drive them with their own `done`.
 */
#ifndef STORE_STORE_H
#define STORE_STORE_H

#include <libpq-fe.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "rpc/arena.h"
#include "rpc/metrics.h"
#include "rpc/rpc.h"
#include "rpc/status.h"
#include "rpc/trace.h"
#include "store/auth.h"

/* Return codes of store functions. */
enum {
    STORE_OK = 0,
    STORE_ERROR = -1, /* see errstr, or the op's status */
    STORE_ECONN = -2, /* the connection is broken or timed out */
};

#define STORE_MAX_PARAMS 24

/* ------------------------------------------------------------------ */
/* Configuration (config.c)                                            */

typedef struct store_config {
    rpc_server_config rpc;
    char log_level[16];        /* debug|info|warn|error|off */
    char pg[512];              /* libpq conninfo */
    char pg_migrate[512];      /* the schema owner's conninfo; "" = pg */
    int64_t batch_window_us;   /* how long a batch stays open, from its oldest op's arrival */
    int batch_max;             /* ops per transaction; 1 turns batching off */
    int read_pool;             /* reader threads, one connection each */
    int64_t session_ttl_us;    /* new sessions live this long */
    int kdf_iterations;        /* PBKDF2 rounds for new password hashes */
    char redis[128];           /* the event relay's Redis ("": relay off) */
    char redis_secrets[512];   /* its ACL password directory ("": no AUTH) */
    int events_max_age_ms;     /* the event log keeps this long ... */
    int events_keep;           /* ... and at most this many per account */
    int events_prune_ms;       /* how often the prune runs */
    int64_t invitation_ttl_us; /* an unanswered invitation expires this long after Invite */
    int64_t seek_ttl_us;       /* an unmatched seek expires this long after Seek (and at most) */
    int seek_max_open;         /* open seeks one account may hold */
} store_config;

/* Fills cfg from defaults, SCRABBLE_STORE_* and argv[first..]. Returns
 * CFG_OK, CFG_HELP or CFG_ERROR (message in err). Non-flag arguments are
 * returned through positional (indexes into argv). */
int store_config_load(store_config *cfg, int argc, char **argv, int first, int *positional,
                      int *npositional, char *err, size_t errlen);

/* ------------------------------------------------------------------ */
/* Operations                                                          */

typedef struct store_op store_op;
typedef struct store_server store_server;

/* Where an op goes after a stage. */
typedef enum store_next {
    STORE_NEXT_DONE = 0, /* op->st (and op->reply on OK) is final */
    STORE_NEXT_WRITE,    /* run op->stmt on the writer (batched) */
    STORE_NEXT_READ,     /* run op->stmt (or a local step) on a reader */
} store_next;

/* A stage's continuation. `res` is the statement's result (NULL for a local
 * stage, i.e. when op->stmt was NULL). It sets op->st / op->reply, or sets
 * up the next stage's stmt/params/step and says where it runs. A write-stage
 * step must return STORE_NEXT_DONE and touch nothing but op->st/op->reply:
 * the batcher may run it twice (a failed batch is retried op by op). */
typedef store_next (*store_step_fn)(store_op *op, PGresult *res);

/* Called once, from a writer or reader thread, when the op is final. */
typedef void (*store_done_fn)(store_op *op);

struct store_op {
    const char *name; /* for logs: "CommitMove" */
    /* The call's trace (in the call, which outlives the op): entered by
     * log lines about the op on the reader and writer threads. */
    const rpc_trace *trace;
    store_server *srv;
    rpc_arena *arena;    /* replies and params live here (the call's) */
    const void *req;     /* the decoded request (in the arena) */
    int64_t deadline_ms; /* monotonic; store_now_ms() */

    const char *stmt; /* prepared statement name, NULL: local step */
    int nparams;
    const char *params[STORE_MAX_PARAMS];
    int lengths[STORE_MAX_PARAMS];
    int formats[STORE_MAX_PARAMS];
    store_step_fn step;

    rpc_status st;           /* result */
    ProtobufCMessage *reply; /* on OK; in the arena */
    void *scratch;           /* step-private state, in the arena */

    store_done_fn done;
    void *done_arg;      /* e.g. the rpc_call */
    bool writes_events;  /* may add rows to the event log (wakes the relay) */
    store_op *next;      /* queue link */
    int64_t enqueued_us; /* monotonic µs; set by store_queue_push */
};

/* Monotonic milliseconds (deadlines) and microseconds (the batch window:
 * a 9 ms window timed in whole milliseconds lasts anything from 8 to 9). */
int64_t store_now_ms(void);
int64_t store_now_us(void);

/* Parameter helpers: copy the value into the op's arena as text (or binary
 * for bytea) at index i. */
void store_op_param_text(store_op *op, int i, const char *s);
void store_op_param_i64(store_op *op, int i, int64_t v);
void store_op_param_bool(store_op *op, int i, bool v);
void store_op_param_bytes(store_op *op, int i, const void *p, size_t n);
/* A Postgres array literal of ints ("{1,2,3}"). */
void store_op_param_int_array(store_op *op, int i, const int32_t *v, size_t n);
/* A Postgres array literal of bigints. */
void store_op_param_i64_array(store_op *op, int i, const int64_t *v, size_t n);
/* A Postgres array literal of text, each element quoted and escaped. */
void store_op_param_text_array(store_op *op, int i, char *const *v, size_t n);

/* Sets op->st from a Postgres error (SQLSTATE mapped to a gRPC code). */
void store_op_fail_pg(store_op *op, const PGresult *res, PGconn *pg);
/* Sets op->st from a `code` column value ('ok' is not an error; returns
 * true on 'ok'). Reasons map to codes as the contract says. */
bool store_op_code(store_op *op, const char *code, const char *detail);

/* ------------------------------------------------------------------ */
/* Connections (db.c)                                                  */

/* A prepared statement every connection carries. */
typedef struct store_stmt {
    const char *name;
    const char *sql;
    int nparams;
} store_stmt;

/* All statements (stmts.c), terminated by {NULL}. */
extern const store_stmt store_statements[];

typedef struct store_db {
    PGconn *pg;           /* NULL while down */
    const char *conninfo; /* borrowed */
    const char *label;    /* "writer", "reader-0" */
    bool pipeline;        /* keep the connection in pipeline mode */
    int64_t next_try_ms;  /* no reconnect before this */
    int backoff_ms;       /* next delay: 100 ms doubling to 5 s */
    bool connected_once;  /* later connects count as reconnects */
    metric *reconnects;   /* may be NULL */
    metric *up;           /* store_db_connections_up{role=...}; may be NULL */
    void *owner;          /* the thread's server context */
    char errstr[256];
} store_db;

void store_db_init(store_db *db, const char *conninfo, const char *label, bool pipeline,
                   metric *reconnects);
/* Connects (if down and the backoff allows) and prepares every statement.
 * STORE_OK when up. */
int store_db_ensure(store_db *db);
/* Drops the connection and schedules a reconnect. */
void store_db_drop(store_db *db, const char *why);
void store_db_close(store_db *db);
bool store_db_up(const store_db *db);

/* Sends everything buffered and waits for the next result, polling the
 * socket until deadline_ms (monotonic). *out is the result (caller PQclear's
 * it), or NULL at the end of a query's results. STORE_ECONN on a broken
 * connection or timeout. */
int store_db_next_result(store_db *db, int64_t deadline_ms, PGresult **out);
/* Runs op->stmt alone (its own implicit transaction) and waits for its
 * single result. On success *out is the result (caller clears). */
int store_db_run_one(store_db *db, const store_op *op, int64_t deadline_ms, PGresult **out);

/* Blocking connection for tools (migrate, tests): conninfo + timeouts. NULL
 * on failure with the message in err. Caller PQfinish'es. */
PGconn *store_db_connect_plain(const char *conninfo, char *err, size_t errlen);

/* ------------------------------------------------------------------ */
/* Migrations (migrate.c)                                              */

typedef struct store_migration {
    int version;
    const char *name;
    const unsigned char *sql;
    size_t len;
} store_migration;

extern const store_migration store_migrations[];
extern const size_t store_migrations_count;

/* Applies the embedded migrations not yet in schema_migrations, under an
 * advisory lock. *applied (may be NULL) gets how many ran. */
int store_migrate(PGconn *pg, int *applied, char *err, size_t errlen);

/* ------------------------------------------------------------------ */
/* Queues, writer and readers (queue.c, batcher.c, readers.c)          */

typedef struct store_queue {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    store_op *head, *tail;
    int len;
    int wake_at; /* 0: signal every push (many consumers); else only at
                  * len 1 and len == wake_at (the batcher's batch_max) */
    bool stopping;
    metric *depth; /* store_queue_depth{queue=...}; may be NULL */
} store_queue;

/* The condition variable runs on CLOCK_MONOTONIC (see store_queue_wait). */
void store_queue_init(store_queue *q, int wake_at);
/* Waits on q->cv (q->mu held) until deadline_ms (monotonic); -1: forever. */
void store_queue_wait(store_queue *q, int64_t deadline_ms);
/* The same with a deadline in monotonic microseconds (never -1). */
void store_queue_wait_us(store_queue *q, int64_t deadline_us);
/* Unlinks the head (q->mu held). */
store_op *store_queue_pop_locked(store_queue *q);
void store_queue_destroy(store_queue *q);
/* A worker's idle wait (q->mu held, and held again on return): until q has
 * an op or is stopping. While db is down it wakes at each reconnect time,
 * tries store_db_ensure without the lock and tells after_try the result,
 * so the worker can publish whether it is up. */
void store_db_wait_work(store_db *db, store_queue *q, void (*after_try)(store_db *db, int rc));
/* Appends; returns false when the queue is stopping (op not queued). */
bool store_queue_push(store_queue *q, store_op *op);

typedef struct store_metrics {
    metric *batches;            /* store_batches_total */
    metric *batch_ops;          /* store_batch_ops_total */
    metric *batch_size;         /* store_batch_size histogram */
    metric *commit_seconds;     /* store_commit_seconds histogram */
    metric *tx;                 /* store_tx_total */
    metric *retries;            /* store_batch_retries_total */
    metric *reconnects;         /* store_db_reconnects_total */
    metric *db_up;              /* store_db_up (writer) */
    metric *read_ops;           /* store_read_ops_total */
    metric *failed_unavailable; /* store_ops_unavailable_total */
    metric *kdf_runs;           /* store_kdf_runs_total */
    metric *kdf_unknown;        /* store_kdf_unknown_handle_total */
    metric *batch_window;       /* store_batch_window_seconds histogram */
    metric *write_depth;        /* store_queue_depth{queue="write"} */
    metric *read_depth;         /* store_queue_depth{queue="read"} */
    metric *writer_conns_up;    /* store_db_connections_up{role="writer"} */
    metric *reader_conns_up;    /* store_db_connections_up{role="reader"} */
} store_metrics;

/* HELP of store_db_connections_up, whose roles two modules register. */
#define STORE_DB_CONNS_HELP                                                                        \
    "Postgres connections up, by role (the writer; the reader pool; the event relay)"

/* Registers the store metrics in r (NULL: a private registry is created and
 * owned by the server). */
void store_metrics_init(store_metrics *m, metrics_registry *r);

/* The server context: everything mutable lives here. */
struct store_server {
    store_config cfg;
    store_metrics m;
    metrics_registry *own_registry; /* when not given one */

    store_queue writeq;
    pthread_t writer;
    store_db writer_db;
    atomic_bool writer_up;

    store_queue readq;
    pthread_t *readers;
    store_db *reader_dbs;
    int nreaders;
    atomic_bool readers_up; /* at least the last reader attempt worked */

    /* A hash of a random password at the configured cost, made at start:
     * a Login for an unknown handle verifies against it, so it costs the
     * same KDF as a wrong password and handle existence cannot be timed. */
    char dummy_hash[192];

    /* Called by the writer after a COMMIT that may have added events
     * (the relay's wake-up); NULL: none. */
    void (*events_committed)(void *arg);
    void *events_committed_arg;

    bool started;
};

/* Initializes srv with cfg (copied) and metrics in r; starts the writer and
 * the readers. They connect in the background. Returns STORE_OK. */
int store_server_start(store_server *srv, const store_config *cfg, metrics_registry *r);
/* Stops the threads; ops still queued finish UNAVAILABLE shutting_down. */
void store_server_stop(store_server *srv);

/* Queues an op for its next stage; if it cannot run (queue stopping or the
 * database known down), finishes it at once with UNAVAILABLE. */
void store_submit(store_server *srv, store_op *op, store_next where);
/* Calls op->done. */
void store_op_finish(store_op *op);

void *store_writer_main(void *arg);
/* Checks an idle connection is still alive and (re)connects if needed:
 * true when db is ready for a statement. */
bool store__db_usable(store_db *db);
/* Finishes op with UNAVAILABLE and `reason` (db_unavailable, shutting_down). */
void store__op_unavailable(store_server *srv, store_op *op, const char *reason);
void *store_reader_main(void *arg);

/* ------------------------------------------------------------------ */
/* Text rules (text.c): pure.                                          */

/* Returns NULL when s is acceptable, else the reason: "empty", "too_long",
 * "bad_utf8", "bad_handle". Lengths count code points. */
const char *store_check_handle(const char *s);
const char *store_check_text(const char *s, size_t min_chars, size_t max_chars);
/* A client request id (SendChat, Invite): NULL when s is empty (none) or
 * 1..STORE_REQUEST_ID_MAX characters of [A-Za-z0-9_-], else
 * "bad_request_id". */
#define STORE_REQUEST_ID_MAX 64
const char *store_check_request_id(const char *s);

/* Handles. A handle is at most STORE_HANDLE_MAX_CHARS code points; its
 * stored and folded forms fit in STORE_HANDLE_BYTES (NUL included). */
#define STORE_HANDLE_MAX_CHARS 32
#define STORE_HANDLE_BYTES 160
/* A new handle (Register): checks it and writes its stored form (Unicode
 * NFKC, the case the user chose) into norm and its folded form (NFKC +
 * case folding: the form that must be unique) into folded, each a buffer
 * of STORE_HANDLE_BYTES. Returns NULL, or the reason: "empty", "too_long",
 * "bad_utf8", "bad_handle" (spaces, controls, format or invisible
 * characters, a mix of scripts such as Latin with Cyrillic). */
const char *store_handle_new(const char *in, char *norm, char *folded);
/* The folded form of any string, for lookups by handle (Login, profiles,
 * invitations) and the backfill of accounts made before folding: no rules
 * beyond valid UTF-8, so handles accepted under older rules still fold.
 * Returns 0, or -1 when in is empty, not UTF-8 or folds to len bytes or
 * more. */
int store_handle_fold(const char *in, char *folded, size_t len);

/* ------------------------------------------------------------------ */
/* Passwords and tokens (auth.c)                                       */

/* store/auth.h (the store_auth library): store_password_hash,
 * store_password_verify, store_token_new, store_sha256_hex. Their 0 / -1
 * are STORE_OK / STORE_ERROR. */

/* ------------------------------------------------------------------ */
/* Page tokens (pagetoken.c): pure.                                    */

/* n (<= 16) lower-case hex digits at s into *v: 0, or -1 on another
 * character. The page tokens' fields. */
int store_hex_u64(const char *s, int n, uint64_t *v);
/* Opaque ListGames keyset token for (updated_at in µs, game_id). */
void store_page_token_encode(int64_t updated_us, int64_t game_id, char *out, size_t outlen);
/* 0 and the pair, or -1 when the token is malformed. */
int store_page_token_decode(const char *tok, int64_t *updated_us, int64_t *game_id);

/* ------------------------------------------------------------------ */
/* JSON -> messages (json.c)                                           */

struct cJSON;
ProtobufCMessage *store_json_profile(rpc_arena *a, const struct cJSON *j);
ProtobufCMessage *store_json_invitation(rpc_arena *a, const struct cJSON *j);
/* A GameClock from its JSON object (store__clock_json). */
ProtobufCMessage *store_json_clock(rpc_arena *a, const struct cJSON *j);
/* A GameRecord without moves; *updated_us (may be NULL) gets the keyset
 * time. */
ProtobufCMessage *store_json_game(rpc_arena *a, const struct cJSON *j, int64_t *updated_us);
/* ratings_json() / ratings_history_json() arrays (0006_ratings.sql) into
 * arena arrays; an empty or non-array j gives none. STORE_OK, or
 * STORE_ERROR when the arena is out of memory. */
struct Scrabble__V1__Rating;
struct Scrabble__V1__RatingChange;
int store_json_ratings(rpc_arena *a, const struct cJSON *j, struct Scrabble__V1__Rating ***out,
                       size_t *n);
int store_json_rating_history(rpc_arena *a, const struct cJSON *j,
                              struct Scrabble__V1__RatingChange ***out, size_t *n);
/* A text column parsed as JSON; NULL when not valid. Caller cJSON_Delete's. */
struct cJSON *store_json_parse(const char *text);

/* Decodes Postgres' text form of bytea ("\x0a1b...") into the arena. */
int store_bytea_decode(rpc_arena *a, const char *text, uint8_t **out, size_t *n);

/* ------------------------------------------------------------------ */
/* Operations by domain (accounts.c, invitations.c, games.c, chat.c)   */

/* A begin function validates op->req and sets up op's first stage:
 * returns where it runs, or STORE_NEXT_DONE with op->st set (bad input). */
typedef store_next (*store_begin_fn)(store_op *op);

store_next store_register_begin(store_op *op);        /* RegisterRequest */
store_next store_login_begin(store_op *op);           /* LoginRequest */
store_next store_resolve_session_begin(store_op *op); /* ResolveSessionRequest */
store_next store_get_account_begin(store_op *op);     /* GetProfileRequest */
store_next store_update_profile_begin(store_op *op);  /* StoreUpdateProfileRequest */
store_next store_get_stats_begin(store_op *op);       /* GetStatsRequest */
store_next store_create_invitation_begin(store_op *op);
store_next store_respond_invitation_begin(store_op *op);
store_next store_list_invitations_begin(store_op *op); /* AccountRef */
store_next store_get_invitation_begin(store_op *op);   /* InvitationRef */
store_next store_create_game_begin(store_op *op);
store_next store_load_game_begin(store_op *op); /* GameRef */
store_next store_list_games_begin(store_op *op);
struct Scrabble__V1__GameRecord;
struct Scrabble__V1__GameSummary;
/* The list line of a game record (its seats and strings shared, in a). */
struct Scrabble__V1__GameSummary *store_game_summary(rpc_arena *a,
                                                     struct Scrabble__V1__GameRecord *g);
store_next store_list_public_games_begin(store_op *op); /* PublicGameListRequest (watch.c) */
store_next store_commit_move_begin(store_op *op);
store_next store_finish_game_begin(store_op *op);
store_next store_append_chat_begin(store_op *op);
store_next store_cancel_invitation_begin(store_op *op); /* StoreCancelInvitationRequest */
/* Time controls (deadlines.c). */
store_next store_start_clock_begin(store_op *op);     /* StartClockRequest */
store_next store_timeout_game_begin(store_op *op);    /* TimeoutGameRequest */
store_next store_claim_deadlines_begin(store_op *op); /* ClaimDeadlinesRequest */
/* Shared by the claims (deadlines.c, bots.c): the reply with n empty
 * Deadlines in op's arena (NULL with op->st set on OOM); the check of
 * now_ms, limit and lease_ms, which then become parameters $1..$3 of
 * statement stmt (false with op->st set). */
struct Scrabble__V1__ClaimDeadlinesRequest;
struct Scrabble__V1__ClaimDeadlinesReply;
struct Scrabble__V1__ClaimDeadlinesReply *store_claim_reply(store_op *op, int n);
bool store_claim_begin(store_op *op, const struct Scrabble__V1__ClaimDeadlinesRequest *req,
                       const char *stmt);
/* bots.c: ClaimBotTurns (ClaimDeadlinesRequest), and the reserved handle
 * prefix of bot accounts (0008_bots.sql): case-insensitive, since handles
 * are unique in their folded form. */
#define STORE_BOT_PREFIX "bot-"
/* The password hash of an account nobody may log in as (bots). */
#define STORE_LOCKED_PW_HASH "!"
store_next store_claim_bot_turns_begin(store_op *op);
bool store_handle_is_bot_reserved(const char *handle);
/* Sets the clock parameters first..first+4 of a clock-writing statement
 * (remaining, turn start, deadline, its reason, warning); c may be NULL
 * (no clock: zeros). */
struct Scrabble__V1__GameClock;
void store_op_param_clock(store_op *op, int first, const struct Scrabble__V1__GameClock *c);
/* The step of write functions that return (code, game json): a
 * GameRecord reply (games.c). */
store_next store_game_write_done(store_op *op, PGresult *res);
/* Checks a GameFinish: NULL or the message for INVALID_ARGUMENT
 * bad_finish. on_time: a TimeoutGame's (TIMEOUT or ABANDONED), else a
 * move's or FinishGame's (OUT, SCORELESS or RESIGN). */
struct Scrabble__V1__GameFinish;
const char *store_check_finish(const struct Scrabble__V1__GameFinish *f, bool on_time);
/* Checks a clock's shape: NULL or the message for INVALID_ARGUMENT
 * bad_clock. */
const char *store_check_clock(const struct Scrabble__V1__GameClock *c);
store_next store_list_chat_begin(store_op *op); /* ListChatRequest */
store_next store_append_events_begin(store_op *op);
store_next store_read_events_begin(store_op *op);

/* ------------------------------------------------------------------ */
/* The event log (events.c, relay.c)                                    */

struct Scrabble__V1__EventRecord;
/* Checks the events a write carries (count, sizes, recipients, keys):
 * NULL when acceptable, else a message. */
const char *store_events_check(struct Scrabble__V1__EventRecord *const *ev, size_t n);
/* Parameters i (bigint[] of recipients) and i+1 (text[] of hex bodies). */
void store_op_param_events(store_op *op, int i, struct Scrabble__V1__EventRecord *const *ev,
                           size_t n);
/* Appends the event id to a stored body as Event.event_id (field 14): the
 * packed event a client sees. Writes at most len bytes into out; returns
 * the length, or 0 when it does not fit. */
size_t store_event_with_id(const uint8_t *body, size_t n, int64_t id, uint8_t *out, size_t len);

typedef struct store_relay store_relay;
/* Starts the relay thread: it publishes committed events to Redis in id
 * order (PUBLISH ev:<account> <event with id>) and runs the prune. With
 * cfg->redis empty it only prunes. Hooks itself into srv's writer. NULL on
 * error (logged). */
store_relay *store_relay_start(store_server *srv, metrics_registry *r);
void store_relay_stop(store_relay *rl);
store_next store_get_leaderboard_begin(store_op *op); /* GetLeaderboardRequest (ratings.c) */

/* Seeks (seeks.c, 0010_seeks.sql). */
#define STORE_SEEK_RATING_MAX 4000
store_next store_post_seek_begin(store_op *op);   /* StorePostSeekRequest */
store_next store_cancel_seek_begin(store_op *op); /* StoreCancelSeekRequest */
store_next store_list_seeks_begin(store_op *op);  /* StoreListSeeksRequest */
/* A Seek from store_seek_json(). */
ProtobufCMessage *store_json_seek(rpc_arena *a, const struct cJSON *j);
/* Column `col` of row 0 (a ratings_json() or ratings_history_json() array)
 * into whichever of ratings / history is given. STORE_OK (also for a NULL
 * column: none), STORE_ERROR on malformed JSON or no memory. */
int store_ratings_col(store_op *op, PGresult *res, int col, struct Scrabble__V1__Rating ***ratings,
                      size_t *nratings, struct Scrabble__V1__RatingChange ***history,
                      size_t *nhistory);

/* Sets op->st to INVALID_ARGUMENT with `reason` about `field`; returns
 * STORE_NEXT_DONE. */
store_next store_op_bad(store_op *op, const char *reason, const char *field);
/* The step of the write functions that return one row (code, [detail,]
 * json): a code other than ok sets op->st (store_op_code, with the detail);
 * ok: op->reply is the json converted by conv (`what` names it when
 * malformed: INTERNAL). Returns STORE_NEXT_DONE. */
store_next store_op_code_json(store_op *op, PGresult *res,
                              ProtobufCMessage *(*conv)(rpc_arena *, const struct cJSON *),
                              const char *what);
/* Column `col` of row 0 parsed as JSON into a message by `conv`; NULL when
 * NULL or malformed. */
ProtobufCMessage *store_op_json_col(store_op *op, PGresult *res, int row, int col,
                                    ProtobufCMessage *(*conv)(rpc_arena *, const struct cJSON *));

#endif
