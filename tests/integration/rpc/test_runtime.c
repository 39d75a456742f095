/*
 * The runtime end to end over loopback: a real server (in process, on a free
 * port) with a test service, driven by the runtime's own client. Covers
 * unary, deferred replies through a downstream call, server streaming,
 * health Watch, every bad-input class of the foundation issue, client
 * disconnects (ASan checks that nothing leaks) and a loop its caller polls.
 *
 * The test service borrows scrabble.v1.Edge's descriptor: the method names
 * are only labels here.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <ctype.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "grpc/health/v1/health.pb-c.h"
#include "rpc/log.h"
#include "rpc/rpc.h"
#include "scrabble/v1/edge.pb-c.h"

typedef struct test_ctx {
    rpc_server *server;
    rpc_channel *self; /* the server calling itself: the downstream hop */
    int port;
    atomic_int cancels;
    atomic_int stream_calls;
} test_ctx;

static test_ctx T;

/* CheckWord: upper-cases the word. */
static void h_check_word(rpc_call *call, const ProtobufCMessage *msg, void *svc)
{
    const Scrabble__V1__CheckWordRequest *req = (const void *)msg;
    Scrabble__V1__CheckWordReply *r = rpc_arena_alloc(rpc_call_arena(call), sizeof(*r));
    scrabble__v1__check_word_reply__init(r);
    r->word = rpc_arena_strdup(rpc_call_arena(call), req->word);
    for (char *p = r->word; *p; p++)
        *p = (char)toupper((unsigned char)*p);
    r->valid = true;
    r->lexicon = "test";
    rpc_call_reply(call, &r->base);
}

typedef struct deferred {
    rpc_call *call;
    int worker;
} deferred;

static void on_downstream(void *arg, const rpc_status *st, ProtobufCMessage *reply)
{
    deferred *d = arg;
    /* The completion must land on the worker that started the call. */
    if (rpc_current_worker() != d->worker) {
        rpc_call_fail(d->call, GRPC_STATUS_INTERNAL, "wrong_thread",
                      "callback on worker %d, not %d", rpc_current_worker(), d->worker);
        return;
    }
    if (st->code != GRPC_STATUS_OK) {
        rpc_call_fail_status(d->call, st);
        return;
    }
    Scrabble__V1__CheckWordReply *cw = (void *)reply;
    Scrabble__V1__Profile *p = rpc_arena_alloc(rpc_call_arena(d->call), sizeof(*p));
    scrabble__v1__profile__init(p);
    p->handle = cw->word; /* lives in the inbound call's arena */
    p->account_id = 42;
    rpc_call_reply(d->call, &p->base);
}

/* GetProfile: asks CheckWord (on this same server) for the upper-cased
 * handle and finishes in the callback: a deferred reply. */
static void h_get_profile(rpc_call *call, const ProtobufCMessage *msg, void *svc)
{
    const Scrabble__V1__GetProfileRequest *req = (const void *)msg;
    test_ctx *t = svc;
    deferred *d = rpc_arena_alloc(rpc_call_arena(call), sizeof(*d));
    d->call = call;
    d->worker = rpc_current_worker();
    Scrabble__V1__CheckWordRequest cw = SCRABBLE__V1__CHECK_WORD_REQUEST__INIT;
    cw.word = req->handle;
    rpc_client_opts opts = {.parent = call, .arena = rpc_call_arena(call), .timeout_ms = 2000};
    if (rpc_client_unary(t->self, "/scrabble.v1.Edge/CheckWord", &cw.base,
                         &scrabble__v1__check_word_reply__descriptor, &opts, on_downstream,
                         d) != RPC_OK)
        rpc_call_fail(call, GRPC_STATUS_INTERNAL, "internal", "downstream call failed to start");
}

/* ListGames: a domain error with a reason. */
static void h_list_games(rpc_call *call, const ProtobufCMessage *msg, void *svc)
{
    rpc_call_fail(call, GRPC_STATUS_FAILED_PRECONDITION, "test_reason", "always fails: %d", 7);
}

static void on_stream_cancel(rpc_call *call, void *arg)
{
    test_ctx *t = arg;
    atomic_fetch_add(&t->cancels, 1);
    rpc_call_finish(call, GRPC_STATUS_CANCELLED, NULL, "client went away");
}

/* Subscribe: five events, then stays open until the client cancels. */
static void h_subscribe(rpc_call *call, const ProtobufCMessage *msg, void *svc)
{
    test_ctx *t = svc;
    atomic_fetch_add(&t->stream_calls, 1);
    rpc_call_on_cancel(call, on_stream_cancel, t);
    for (int i = 1; i <= 5; i++) {
        Scrabble__V1__Event ev = SCRABBLE__V1__EVENT__INIT;
        ev.type = SCRABBLE__V1__EVENT_TYPE__EVENT_TYPE_NUDGE;
        ev.seq = i;
        assert_int_equal(rpc_stream_send(call, &ev.base), RPC_OK);
    }
}

/* ListChat: never answers; only a deadline or cancel ends it. */
static void h_list_chat(rpc_call *call, const ProtobufCMessage *msg, void *svc)
{
    rpc_call_on_cancel(call, on_stream_cancel, svc);
}

static int setup(void **state)
{
    memset(&T, 0, sizeof(T));
    log_threshold = LOG_LEVEL_WARN;
    rpc_server_config cfg;
    rpc_server_config_defaults(&cfg, 0, 0);
    snprintf(cfg.listen, sizeof(cfg.listen), "127.0.0.1:0");
    cfg.metrics_listen[0] = '\0';
    cfg.max_message_bytes = 1024;
    cfg.shutdown_grace_ms = 1000;
    char err[256];
    T.server = rpc_server_create(&cfg, "test", err, sizeof(err));
    assert_non_null(T.server);
    static const rpc_method_impl impls[] = {
        {"CheckWord", h_check_word}, {"GetProfile", h_get_profile}, {"ListGames", h_list_games},
        {"Subscribe", h_subscribe},  {"ListChat", h_list_chat},     {NULL, NULL},
    };
    assert_int_equal(rpc_server_add_service(T.server, &scrabble__v1__edge__descriptor, impls, &T),
                     RPC_OK);
    T.port = rpc_server_start(T.server, err, sizeof(err));
    assert_true(T.port > 0);
    char target[64];
    snprintf(target, sizeof(target), "127.0.0.1:%d", T.port);
    T.self = rpc_channel_create(target, NULL);
    return 0;
}

static int teardown(void **state)
{
    rpc_server_stop(T.server);
    rpc_channel_destroy(T.self);
    rpc_server_destroy(T.server);
    return 0;
}

static grpc_status_code call_sync(const char *method, const ProtobufCMessage *req,
                                  const ProtobufCMessageDescriptor *desc, int64_t timeout,
                                  ProtobufCMessage **reply, rpc_status *st)
{
    rpc_client_opts opts = {.timeout_ms = timeout};
    return rpc_client_unary_sync(T.self, method, req, desc, &opts, NULL, reply, st);
}

static void test_unary(void **state)
{
    Scrabble__V1__CheckWordRequest req = SCRABBLE__V1__CHECK_WORD_REQUEST__INIT;
    req.word = "quixotic";
    ProtobufCMessage *reply;
    rpc_status st;
    assert_int_equal(call_sync("/scrabble.v1.Edge/CheckWord", &req.base,
                               &scrabble__v1__check_word_reply__descriptor, 2000, &reply, &st),
                     GRPC_STATUS_OK);
    assert_string_equal(((Scrabble__V1__CheckWordReply *)reply)->word, "QUIXOTIC");
    protobuf_c_message_free_unpacked(reply, NULL);
}

static void test_deferred_reply_through_downstream(void **state)
{
    Scrabble__V1__GetProfileRequest req = SCRABBLE__V1__GET_PROFILE_REQUEST__INIT;
    req.handle = "ada";
    ProtobufCMessage *reply;
    rpc_status st;
    assert_int_equal(call_sync("/scrabble.v1.Edge/GetProfile", &req.base,
                               &scrabble__v1__profile__descriptor, 2000, &reply, &st),
                     GRPC_STATUS_OK);
    Scrabble__V1__Profile *p = (void *)reply;
    assert_string_equal(p->handle, "ADA");
    assert_int_equal(p->account_id, 42);
    protobuf_c_message_free_unpacked(reply, NULL);
}

static void test_error_carries_reason(void **state)
{
    Scrabble__V1__ListGamesRequest req = SCRABBLE__V1__LIST_GAMES_REQUEST__INIT;
    ProtobufCMessage *reply;
    rpc_status st;
    assert_int_equal(call_sync("/scrabble.v1.Edge/ListGames", &req.base,
                               &scrabble__v1__list_games_reply__descriptor, 2000, &reply, &st),
                     GRPC_STATUS_FAILED_PRECONDITION);
    assert_string_equal(st.reason, "test_reason");
    assert_string_equal(st.message, "always fails: 7");
    assert_null(reply);
}

static void test_unimplemented(void **state)
{
    /* A method of the service without a handler, and an unknown method. */
    Scrabble__V1__GameRef req = SCRABBLE__V1__GAME_REF__INIT;
    ProtobufCMessage *reply;
    rpc_status st;
    assert_int_equal(call_sync("/scrabble.v1.Edge/GetState", &req.base,
                               &scrabble__v1__game_state__descriptor, 2000, &reply, &st),
                     GRPC_STATUS_UNIMPLEMENTED);
    assert_int_equal(call_sync("/no.Such/Method", &req.base, &scrabble__v1__game_state__descriptor,
                               2000, &reply, &st),
                     GRPC_STATUS_UNIMPLEMENTED);
    assert_string_equal(st.reason, "unimplemented");
}

typedef struct raw_result {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool done;
    rpc_status st;
} raw_result;

static void on_raw(void *arg, const rpc_status *st, grpc_byte_buffer *reply)
{
    raw_result *r = arg;
    if (reply)
        grpc_byte_buffer_destroy(reply);
    pthread_mutex_lock(&r->mu);
    r->st = *st;
    r->done = true;
    pthread_cond_signal(&r->cv);
    pthread_mutex_unlock(&r->mu);
}

static rpc_status raw_call(const char *method, const void *bytes, size_t len)
{
    raw_result r = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};
    grpc_slice s = grpc_slice_from_copied_buffer(bytes, len);
    grpc_byte_buffer *bb = grpc_raw_byte_buffer_create(&s, 1);
    grpc_slice_unref(s);
    rpc_client_opts opts = {.timeout_ms = 2000};
    assert_int_equal(rpc_client_raw(T.self, method, bb, &opts, on_raw, &r), RPC_OK);
    grpc_byte_buffer_destroy(bb);
    pthread_mutex_lock(&r.mu);
    while (!r.done)
        pthread_cond_wait(&r.cv, &r.mu);
    pthread_mutex_unlock(&r.mu);
    return r.st;
}

static void test_invalid_body(void **state)
{
    /* A field-1 string whose length runs past the end. */
    static const unsigned char junk[] = {0x0a, 0x7f, 'a', 'b'};
    rpc_status st = raw_call("/scrabble.v1.Edge/CheckWord", junk, sizeof(junk));
    assert_int_equal(st.code, GRPC_STATUS_INVALID_ARGUMENT);
    assert_string_equal(st.reason, "bad_request");
}

static void test_message_too_large(void **state)
{
    char big[4096];
    memset(big, 'a', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    Scrabble__V1__CheckWordRequest req = SCRABBLE__V1__CHECK_WORD_REQUEST__INIT;
    req.word = big;
    ProtobufCMessage *reply;
    rpc_status st;
    assert_int_equal(call_sync("/scrabble.v1.Edge/CheckWord", &req.base,
                               &scrabble__v1__check_word_reply__descriptor, 2000, &reply, &st),
                     GRPC_STATUS_RESOURCE_EXHAUSTED);
}

static void test_deadline_exceeded(void **state)
{
    int before = atomic_load(&T.cancels);
    Scrabble__V1__ListChatRequest req = SCRABBLE__V1__LIST_CHAT_REQUEST__INIT;
    ProtobufCMessage *reply;
    rpc_status st;
    assert_int_equal(call_sync("/scrabble.v1.Edge/ListChat", &req.base,
                               &scrabble__v1__list_chat_reply__descriptor, 200, &reply, &st),
                     GRPC_STATUS_DEADLINE_EXCEEDED);
    /* The server saw the call end and released it. */
    for (int i = 0; i < 100 && atomic_load(&T.cancels) == before; i++)
        usleep(10000);
    assert_true(atomic_load(&T.cancels) > before);
}

typedef struct stream_result {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int messages;
    int64_t last_seq;
    bool ended;
    rpc_status st;
} stream_result;

static void on_stream_msg(void *arg, ProtobufCMessage *msg)
{
    stream_result *r = arg;
    pthread_mutex_lock(&r->mu);
    r->messages++;
    if (msg->descriptor == &scrabble__v1__event__descriptor)
        r->last_seq = ((Scrabble__V1__Event *)msg)->seq;
    pthread_cond_broadcast(&r->cv);
    pthread_mutex_unlock(&r->mu);
}

static void on_stream_end(void *arg, const rpc_status *st)
{
    stream_result *r = arg;
    pthread_mutex_lock(&r->mu);
    r->ended = true;
    r->st = *st;
    pthread_cond_broadcast(&r->cv);
    pthread_mutex_unlock(&r->mu);
}

static void wait_for(stream_result *r, int messages, bool ended)
{
    pthread_mutex_lock(&r->mu);
    for (int i = 0; i < 500 && (r->messages < messages || (ended && !r->ended)); i++) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 10 * 1000 * 1000;
        if (ts.tv_nsec >= 1000000000) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000;
        }
        pthread_cond_timedwait(&r->cv, &r->mu, &ts);
    }
    pthread_mutex_unlock(&r->mu);
}

static void test_stream_then_client_disconnect(void **state)
{
    stream_result r = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};
    int before = atomic_load(&T.cancels);
    Scrabble__V1__SubscribeRequest req = SCRABBLE__V1__SUBSCRIBE_REQUEST__INIT;
    rpc_client_stream *s = rpc_client_stream_open(T.self, "/scrabble.v1.Edge/Subscribe", &req.base,
                                                  &scrabble__v1__event__descriptor, NULL,
                                                  on_stream_msg, on_stream_end, &r);
    assert_non_null(s);
    wait_for(&r, 5, false);
    assert_int_equal(r.messages, 5);
    assert_int_equal(r.last_seq, 5);
    assert_false(r.ended);
    rpc_client_stream_cancel(s);
    wait_for(&r, 5, true);
    assert_true(r.ended);
    assert_int_equal(r.st.code, GRPC_STATUS_CANCELLED);
    for (int i = 0; i < 100 && atomic_load(&T.cancels) == before; i++)
        usleep(10000);
    assert_true(atomic_load(&T.cancels) > before);
}

static void test_health_check_and_watch(void **state)
{
    Grpc__Health__V1__HealthCheckRequest req = GRPC__HEALTH__V1__HEALTH_CHECK_REQUEST__INIT;
    req.service = "scrabble.v1.Edge";
    ProtobufCMessage *reply;
    rpc_status st;
    assert_int_equal(call_sync("/grpc.health.v1.Health/Check", &req.base,
                               &grpc__health__v1__health_check_response__descriptor, 2000, &reply,
                               &st),
                     GRPC_STATUS_OK);
    assert_int_equal(((Grpc__Health__V1__HealthCheckResponse *)reply)->status,
                     GRPC__HEALTH__V1__HEALTH_CHECK_RESPONSE__SERVING_STATUS__SERVING);
    protobuf_c_message_free_unpacked(reply, NULL);

    req.service = "no.such.Service";
    assert_int_equal(call_sync("/grpc.health.v1.Health/Check", &req.base,
                               &grpc__health__v1__health_check_response__descriptor, 2000, &reply,
                               &st),
                     GRPC_STATUS_NOT_FOUND);

    stream_result r = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};
    req.service = "scrabble.v1.Edge";
    rpc_client_stream *s =
        rpc_client_stream_open(T.self, "/grpc.health.v1.Health/Watch", &req.base,
                               &grpc__health__v1__health_check_response__descriptor, NULL,
                               on_stream_msg, on_stream_end, &r);
    wait_for(&r, 1, false);
    assert_int_equal(r.messages, 1);
    rpc_server_set_serving(T.server, "scrabble.v1.Edge", false);
    wait_for(&r, 2, false);
    assert_int_equal(r.messages, 2);
    rpc_server_set_serving(T.server, "scrabble.v1.Edge", true);
    wait_for(&r, 3, false);
    rpc_client_stream_cancel(s);
    wait_for(&r, 3, true);
    assert_true(r.ended);
}

static void test_many_concurrent_deferred(void **state)
{
    /* 200 async calls in flight at once through the downstream hop. */
    enum { N = 200 };
    static raw_result results[N];
    Scrabble__V1__GetProfileRequest req = SCRABBLE__V1__GET_PROFILE_REQUEST__INIT;
    req.handle = "x";
    size_t len = scrabble__v1__get_profile_request__get_packed_size(&req);
    unsigned char buf[64];
    scrabble__v1__get_profile_request__pack(&req, buf);
    for (int i = 0; i < N; i++) {
        results[i] = (raw_result){.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};
        grpc_slice s = grpc_slice_from_copied_buffer((const char *)buf, len);
        grpc_byte_buffer *bb = grpc_raw_byte_buffer_create(&s, 1);
        grpc_slice_unref(s);
        rpc_client_opts opts = {.timeout_ms = 5000};
        assert_int_equal(
            rpc_client_raw(T.self, "/scrabble.v1.Edge/GetProfile", bb, &opts, on_raw, &results[i]),
            RPC_OK);
        grpc_byte_buffer_destroy(bb);
    }
    for (int i = 0; i < N; i++) {
        pthread_mutex_lock(&results[i].mu);
        while (!results[i].done)
            pthread_cond_wait(&results[i].cv, &results[i].mu);
        pthread_mutex_unlock(&results[i].mu);
        assert_int_equal(results[i].st.code, GRPC_STATUS_OK);
    }
}

/* A polled loop (rpc_loop_create): completions run on the thread that
 * polls, never on another; rpc_loop_stop runs what is still pending. */
typedef struct polled_result {
    int done, ok;
    pthread_t ran_on;
} polled_result;

static void on_polled(void *arg, const rpc_status *st, ProtobufCMessage *reply)
{
    polled_result *r = arg;
    r->done++;
    r->ok += st->code == GRPC_STATUS_OK && reply != NULL &&
             strcmp(((Scrabble__V1__CheckWordReply *)reply)->word, "POLL") == 0;
    r->ran_on = pthread_self();
}

static void test_polled_loop(void **state)
{
    enum { N = 50 };
    static polled_result results[N];
    rpc_loop *loop = rpc_loop_create("test-polled");
    assert_non_null(loop);
    assert_int_equal(rpc_loop_poll(loop, 0), 0); /* nothing pending: returns at once */
    Scrabble__V1__CheckWordRequest req = SCRABBLE__V1__CHECK_WORD_REQUEST__INIT;
    req.word = "poll";
    rpc_client_opts opts = {.timeout_ms = 5000, .loop = loop};
    memset(results, 0, sizeof(results));
    for (int i = 0; i < N; i++)
        assert_int_equal(rpc_client_unary(T.self, "/scrabble.v1.Edge/CheckWord", &req.base,
                                          &scrabble__v1__check_word_reply__descriptor, &opts,
                                          on_polled, &results[i]),
                         RPC_OK);
    /* Nothing runs them until this thread polls. Each poll waits for the
     * next completion; the calls' own deadline bounds the loop. */
    int ran = 0;
    while (ran < N) {
        int n = rpc_loop_poll(loop, 6000000000LL);
        assert_true(n > 0);
        ran += n;
    }
    assert_int_equal(ran, N);
    for (int i = 0; i < N; i++) {
        assert_int_equal(results[i].done, 1);
        assert_int_equal(results[i].ok, 1);
        assert_true(pthread_equal(results[i].ran_on, pthread_self()));
    }
    /* A call still in flight at stop completes inside rpc_loop_stop, here. */
    polled_result last = {0};
    assert_int_equal(rpc_client_unary(T.self, "/scrabble.v1.Edge/CheckWord", &req.base,
                                      &scrabble__v1__check_word_reply__descriptor, &opts, on_polled,
                                      &last),
                     RPC_OK);
    rpc_loop_stop(loop);
    assert_int_equal(last.done, 1);
    assert_true(pthread_equal(last.ran_on, pthread_self()));
}

int main(void)
{
    rpc_init();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unary),
        cmocka_unit_test(test_deferred_reply_through_downstream),
        cmocka_unit_test(test_error_carries_reason),
        cmocka_unit_test(test_unimplemented),
        cmocka_unit_test(test_invalid_body),
        cmocka_unit_test(test_message_too_large),
        cmocka_unit_test(test_deadline_exceeded),
        cmocka_unit_test(test_stream_then_client_disconnect),
        cmocka_unit_test(test_health_check_and_watch),
        cmocka_unit_test(test_many_concurrent_deferred),
        cmocka_unit_test(test_polled_loop),
    };
    int failed = cmocka_run_group_tests(tests, setup, teardown);
    rpc_shutdown();
    return failed;
}
