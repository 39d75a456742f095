/*
 * relay.c — the event relay: one thread that publishes committed events to
 * Redis pub/sub, in id order, and prunes the log.
 *
 * Why a relay reading the table, and not the writer publishing what it
 * just wrote: the table is the only record that survives every crash. The
 * relay keeps a position (the last id it published, saved in event_relay
 * at most once a second) and publishes `id > position` page by page, so
 *   - a crash of any process between a COMMIT and its publish costs a late
 *     publish, never a lost one (store-svc restarts from the saved
 *     position; game-svc and the gateway publish nothing themselves);
 *   - a Redis outage stops the relay at its position; when Redis is back it
 *     publishes the backlog in order;
 *   - it reads only committed rows, and ids become visible in increasing
 *     order (one writer connection), so `id > position` never skips a row
 *     that commits later.
 * Pub/sub is only the wake-up that makes delivery fast; a gateway that
 * misses messages (its Redis link broke) reads the log through ReadEvents.
 * The writer wakes the relay after each COMMIT that may have added events;
 * a one-second poll covers anything else.
 *
 * Payload: PUBLISH ev:<account> <the stored event with event_id appended>,
 * pipelined per page on the relay's one rpc/redis.h connection (ACL user
 * publisher).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rpc/log.h"
#include "rpc/redis.h"
#include "store.h"

#define STORE__RELAY_PAGE 256
#define STORE__RELAY_POLL_MS 1000
#define STORE__RELAY_SAVE_MS 1000
/* With nothing to publish the relay PINGs Redis this often, so
 * store_events_redis_up tells the truth between events (a connection is
 * only known dead once something is sent on it). */
#define STORE__RELAY_PROBE_MS 1000

struct store_relay {
    store_server *srv;
    store_db db;
    rpc_redis *redis; /* NULL: relay off (prune only) */
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool kicked, stopping; /* guarded by mu */

    int64_t position;      /* the last id published (or skipped: relay off) */
    int64_t saved;         /* the position event_relay holds */
    bool have_position;    /* read from event_relay since the last connect */
    int64_t saved_at_ms;   /* when it was last saved */
    int64_t next_prune_ms; /* monotonic */
    int64_t prune_high;    /* the prune's high mark (0: scan from the start) */
    int64_t next_probe_ms; /* monotonic; PING Redis when idle until this */

    metric *m_published, *m_pruned, *m_failures, *m_redis_up;
};

static void store__relay_kick(void *arg)
{
    store_relay *rl = arg;
    pthread_mutex_lock(&rl->mu);
    rl->kicked = true;
    pthread_cond_signal(&rl->cv);
    pthread_mutex_unlock(&rl->mu);
}

/* Runs one statement on the relay's connection. The result (caller
 * PQclear's) or NULL (logged, connection dropped). */
static PGresult *store__relay_run(store_relay *rl, const char *stmt, int nparams, char **values)
{
    store_op op = {.name = stmt, .stmt = stmt, .nparams = nparams};
    for (int i = 0; i < nparams; i++)
        op.params[i] = values[i];
    PGresult *res = NULL;
    if (!store__db_usable(&rl->db))
        return NULL;
    if (store_db_run_one(&rl->db, &op, store_now_ms() + 10000, &res) != STORE_OK) {
        store_db_drop(&rl->db, rl->db.errstr);
        return NULL;
    }
    if (PQresultStatus(res) != PGRES_TUPLES_OK && PQresultStatus(res) != PGRES_COMMAND_OK) {
        log_warn("relay_sql_failed", "stmt=%s err=\"%s\"", stmt, PQresultErrorMessage(res));
        PQclear(res);
        return NULL;
    }
    return res;
}

static bool store__relay_load_position(store_relay *rl)
{
    PGresult *res = store__relay_run(rl, "relay_position", 0, NULL);
    if (!res)
        return false;
    if (PQntuples(res) == 1) {
        int64_t p = strtoll(PQgetvalue(res, 0, 0), NULL, 10);
        /* Never move back over what this process already published. */
        if (p > rl->position)
            rl->position = p;
        rl->saved = p;
        rl->have_position = true;
        log_info("relay_position", "relayed_upto=%" PRId64, rl->position);
    }
    PQclear(res);
    return rl->have_position;
}

static void store__relay_save(store_relay *rl, bool force)
{
    int64_t now = store_now_ms();
    if (rl->position <= rl->saved || (!force && now - rl->saved_at_ms < STORE__RELAY_SAVE_MS))
        return;
    char pos[24];
    char *v[1] = {pos};
    snprintf(pos, sizeof pos, "%" PRId64, rl->position);
    PGresult *res = store__relay_run(rl, "relay_save", 1, v);
    if (res) {
        rl->saved = rl->position;
        rl->saved_at_ms = now;
        PQclear(res);
    }
}

/* Publishes rows [0, n) of a relay page, pipelined. Returns how many were
 * published before the first failure (n when all). */
static int store__relay_publish(store_relay *rl, PGresult *res, int n)
{
    rl->next_probe_ms = store_now_ms() + STORE__RELAY_PROBE_MS; /* this exchange tells */
    if (rpc_redis_ensure(rl->redis) != 0)
        return 0;
    redisContext *c = rpc_redis_context(rl->redis);
    uint8_t *bodies[STORE__RELAY_PAGE];
    int queued = 0, done = 0;
    for (int i = 0; i < n; i++) {
        size_t len;
        unsigned char *raw = PQunescapeBytea((const unsigned char *)PQgetvalue(res, i, 2), &len);
        int64_t id = strtoll(PQgetvalue(res, i, 0), NULL, 10);
        int64_t account = strtoll(PQgetvalue(res, i, 1), NULL, 10);
        char channel[RPC_REDIS_NAME_MAX];
        bodies[i] = raw ? malloc(len + 24) : NULL;
        size_t m = bodies[i] ? store_event_with_id(raw, len, id, bodies[i], len + 24) : 0;
        if (raw)
            PQfreemem(raw);
        if (m == 0 || rpc_redis_event_channel(channel, sizeof channel, account) < 0) {
            /* Unpublishable (OOM, or a bad account id): later rows must
             * not wait behind it; a reader still finds it in the log. */
            log_warn("relay_skip", "id=%" PRId64, id);
            free(bodies[i]);
            bodies[i] = NULL;
            const char *argv[1] = {"PING"};
            redisAppendCommandArgv(c, 1, argv, NULL);
        } else {
            const char *argv[3] = {"PUBLISH", channel, (const char *)bodies[i]};
            size_t argvlen[3] = {7, strlen(channel), m};
            redisAppendCommandArgv(c, 3, argv, argvlen);
        }
        queued++;
    }
    for (; done < queued; done++) {
        void *reply = NULL;
        if (redisGetReply(c, &reply) != REDIS_OK || !reply) {
            log_warn("relay_redis_failed", "err=\"%s\" published=%d of %d", c->errstr, done,
                     queued);
            rpc_redis_broken(rl->redis);
            break;
        }
        redisReply *r = reply;
        if (r->type == REDIS_REPLY_ERROR) {
            /* NOPERM and the like: a configuration error that retrying
             * will not fix soon; count it and keep the order by waiting. */
            log_warn("relay_redis_refused", "err=\"%.*s\"", (int)(r->len > 100 ? 100 : r->len),
                     r->str);
            freeReplyObject(r);
            rpc_redis_broken(rl->redis);
            break;
        }
        freeReplyObject(r);
    }
    for (int i = 0; i < n; i++)
        free(bodies[i]);
    return done;
}

/* One page: returns true when more may follow at once. */
static bool store__relay_page(store_relay *rl)
{
    char pos[24], lim[16];
    char *v[2] = {pos, lim};
    snprintf(pos, sizeof pos, "%" PRId64, rl->position);
    snprintf(lim, sizeof lim, "%d", STORE__RELAY_PAGE);
    PGresult *res = store__relay_run(rl, "relay_page", 2, v);
    if (!res)
        return false;
    int n = PQntuples(res);
    int done = n;
    if (n > 0 && rl->redis)
        done = store__relay_publish(rl, res, n);
    if (done > 0) {
        rl->position = strtoll(PQgetvalue(res, done - 1, 0), NULL, 10);
        if (rl->m_published)
            metric_add(rl->m_published, done);
    }
    if (done < n && rl->m_failures)
        metric_add(rl->m_failures, 1);
    PQclear(res);
    return n == STORE__RELAY_PAGE && done == n;
}

static void store__relay_prune(store_relay *rl)
{
    const store_config *cfg = &rl->srv->cfg;
    char age[24], keep[16], high[24];
    char *v[3] = {age, keep, high};
    snprintf(age, sizeof age, "%d", cfg->events_max_age_ms);
    snprintf(keep, sizeof keep, "%d", cfg->events_keep);
    snprintf(high, sizeof high, "%" PRId64, rl->prune_high);
    PGresult *res = store__relay_run(rl, "prune_events", 3, v);
    if (!res)
        return;
    if (PQntuples(res) == 1) {
        int64_t accounts = strtoll(PQgetvalue(res, 0, 0), NULL, 10);
        rl->prune_high = strtoll(PQgetvalue(res, 0, 1), NULL, 10);
        if (accounts > 0)
            log_info("events_pruned", "accounts=%" PRId64, accounts);
        if (rl->m_pruned)
            metric_add(rl->m_pruned, accounts);
    }
    PQclear(res);
}

static void *store__relay_main(void *arg)
{
    store_relay *rl = arg;
    const store_config *cfg = &rl->srv->cfg;
    rl->next_prune_ms = store_now_ms() + cfg->events_prune_ms;
    for (;;) {
        pthread_mutex_lock(&rl->mu);
        bool stopping = rl->stopping;
        rl->kicked = false;
        pthread_mutex_unlock(&rl->mu);
        if (stopping)
            break;

        bool more = false;
        int wait_ms = STORE__RELAY_POLL_MS;
        if (!store_db_up(&rl->db))
            rl->have_position = false; /* re-read after a reconnect */
        if (rl->have_position || store__relay_load_position(rl)) {
            if (!rl->redis) {
                rl->have_position = true; /* relay off: only the prune runs */
            } else if (rpc_redis_retry_in_ms(rl->redis) > 0) {
                wait_ms = rpc_redis_retry_in_ms(rl->redis);
            } else {
                more = store__relay_page(rl);
                store__relay_save(rl, false);
            }
        } else {
            wait_ms = 200; /* the database is down: retry soon */
        }
        if (rl->redis) {
            if (store_now_ms() >= rl->next_probe_ms) {
                /* Within the backoff the probe fails at once. */
                rpc_redis_probe(rl->redis);
                rl->next_probe_ms = store_now_ms() + STORE__RELAY_PROBE_MS;
            }
            if (rl->m_redis_up)
                metric_set(rl->m_redis_up, rpc_redis_context(rl->redis) != NULL);
        }
        if (store_now_ms() >= rl->next_prune_ms) {
            store__relay_prune(rl);
            rl->next_prune_ms = store_now_ms() + cfg->events_prune_ms;
        }
        if (more)
            continue;

        pthread_mutex_lock(&rl->mu);
        if (!rl->kicked && !rl->stopping) {
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            ts.tv_sec += wait_ms / 1000;
            ts.tv_nsec += (long)(wait_ms % 1000) * 1000000L;
            if (ts.tv_nsec >= 1000000000L) {
                ts.tv_sec++;
                ts.tv_nsec -= 1000000000L;
            }
            pthread_cond_timedwait(&rl->cv, &rl->mu, &ts);
        }
        pthread_mutex_unlock(&rl->mu);
    }
    store__relay_save(rl, true);
    return NULL;
}

store_relay *store_relay_start(store_server *srv, metrics_registry *r)
{
    char err[160];
    store_relay *rl = calloc(1, sizeof *rl);
    if (!rl)
        return NULL;
    rl->srv = srv;
    if (srv->cfg.redis[0]) {
        rl->redis = rpc_redis_create(srv->cfg.redis, RPC_REDIS_USER_PUBLISHER,
                                     srv->cfg.redis_secrets, 1000, err, sizeof err);
        if (!rl->redis) {
            log_error("relay_start_failed", "err=\"%s\"", err);
            free(rl);
            return NULL;
        }
    } else {
        log_warn("relay_off", "%s", "no --redis: events are kept but not published");
    }
    store_db_init(&rl->db, srv->cfg.pg, "relay", false, srv->m.reconnects);
    rl->db.owner = srv;
    if (r) {
        rl->m_published = metrics_counter(r, "store_events_published_total", NULL,
                                          "Events the relay published to Redis");
        rl->m_failures = metrics_counter(r, "store_events_publish_failures_total", NULL,
                                         "Relay pages cut short by a Redis failure (retried)");
        rl->m_pruned = metrics_counter(r, "store_events_pruned_accounts_total", NULL,
                                       "Accounts whose oldest events the prune removed");
        /* The relay's own Postgres connection, beside the writer's and the
         * readers' (same family, server.c). */
        rl->db.up =
            metrics_gauge(r, "store_db_connections_up", "role=\"relay\"", STORE_DB_CONNS_HELP);
        if (rl->redis)
            rl->m_redis_up = metrics_gauge(r, "store_events_redis_up", NULL,
                                           "1 while the event relay's connection to Redis works "
                                           "(checked by every publish, and by a PING each second "
                                           "when idle)");
    }
    pthread_mutex_init(&rl->mu, NULL);
    pthread_cond_init(&rl->cv, NULL);
    if (pthread_create(&rl->thread, NULL, store__relay_main, rl) != 0) {
        pthread_cond_destroy(&rl->cv);
        pthread_mutex_destroy(&rl->mu);
        rpc_redis_destroy(rl->redis);
        free(rl);
        return NULL;
    }
    srv->events_committed_arg = rl;
    srv->events_committed = store__relay_kick;
    return rl;
}

/* Call after store_server_stop: the writer (which calls the hook) is gone. */
void store_relay_stop(store_relay *rl)
{
    if (!rl)
        return;
    pthread_mutex_lock(&rl->mu);
    rl->stopping = true;
    pthread_cond_signal(&rl->cv);
    pthread_mutex_unlock(&rl->mu);
    pthread_join(rl->thread, NULL);
    store_db_close(&rl->db);
    rpc_redis_destroy(rl->redis);
    pthread_cond_destroy(&rl->cv);
    pthread_mutex_destroy(&rl->mu);
    free(rl);
}
