/*
 * conn_guard.c — the stream-abuse guard: live calls bounded per client
 * connection and per process, connections that cancel calls much faster
 * than they complete them shut down, and their address refused for a while
 * (the penalty box). docs/SECURITY.md, "Stream abuse and the HTTP
 * endpoints", tells the story for operators.
 *
 * Why the runtime needs it. The C core 1.51 predates the upstream fix for
 * HTTP/2 rapid reset (CVE-2023-44487): a stream the client resets no longer
 * counts against MAX_CONCURRENT_STREAMS, yet the core has already built a
 * server call for it and parks that call in its queue of calls waiting for
 * a grpc_server_request_call; the call reaches the runtime only when one of
 * our requests matches it, and costs a full arrival, a status batch and its
 * memory all the same. One client can thus create calls far faster than the
 * workers retire them. The guard cannot see the core's queue, but it sees
 * every call as it arrives and as it ends, which is enough to cut the source.
 *
 * A connection is known by its peer string (grpc_call_get_peer,
 * "ipv4:a.b.c.d:port"): one listening port per server, so the peer address
 * and port name exactly one TCP connection. The guard keeps, per
 * connection, its live calls and the calls the client cancelled before
 * their deadline and the calls that completed, both halving every 10 s.
 *
 * How a connection is closed. The public API of core 1.51 has no way to
 * close one connection. Two ways were weighed:
 * (a) accept TCP ourselves and hand each socket to the core with
 *     grpc_server_add_channel_from_fd: in 1.51 that function refuses any
 *     credentials but insecure ones, so TLS ports (the services' mutual
 *     TLS) would need a second, different path;
 * (b) find the core's socket for the peer among the process's descriptors
 *     (/proc/self/fd, matching getpeername to the peer and getsockname to
 *     our port) and shutdown(fd, SHUT_RDWR) it. The core owns the
 *     descriptor, so it is never closed here: shutdown makes the core see
 *     end-of-stream, fail every stream of the transport and close the
 *     socket itself. It works the same for plaintext and TLS.
 * We use (b): one mechanism for every port, no change to how the core
 * accepts. Its costs: a scan of the descriptor table per closed connection
 * (microseconds at hundreds of descriptors, milliseconds at 20,000), and a
 * new connection from a penalised address is cut at its first call rather
 * than refused at accept, so it costs one call (refused cheaply) before it
 * goes. The scan matches both ends of the socket; a descriptor number the
 * core closes and reuses between our getpeername and shutdown could in
 * principle be hit, a window of microseconds we accept.
 *
 * Threading: one mutex guards both tables; every worker takes it twice per
 * call (arrival, end) for a hash lookup. The descriptor scan runs outside
 * it.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <grpc/support/alloc.h>
#include <malloc.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "rpc/log.h"
#include "rpc/metrics.h"

#define RPC__GUARD_BUCKETS 8192
#define RPC__GUARD_WINDOW_NS 1000000000LL
#define RPC__GUARD_DECAY_NS (10 * RPC__GUARD_WINDOW_NS)
/* A call refused on a closing connection shuts the socket down again at
 * most this often: the client may have reconnected from the same source
 * port (a bind() to a source address reuses ports quickly) while the
 * old connection's entry is still here. */
#define RPC__GUARD_RECUT_NS (100 * 1000000LL)
/* While any address is in the penalty box, the descriptor table is
 * searched this often for connections from those addresses. */
#define RPC__GUARD_BOX_SCAN_NS (100 * 1000000LL)
/* A connection with no live call and no activity for this long is
 * forgotten: it is not attacking. */
#define RPC__GUARD_IDLE_NS (3 * RPC__GUARD_WINDOW_NS)
#define RPC__GUARD_PEER_MAX 96

struct rpc__guard_conn {
    struct rpc__guard_conn *next;
    uint64_t hash;
    char peer[RPC__GUARD_PEER_MAX];
    int live;
    int resets, completed; /* in the window that started at win_start_ns */
    int64_t win_start_ns;
    int64_t last_ns;
    bool closing;   /* shut down for abuse: every later call is refused */
    int64_t cut_ns; /* when its socket was last shut down */
    /* A call was refused for abuse or the penalty box: shut the socket down
     * when that call ends, so its status (and reason) reaches the client
     * first. */
    bool cut_pending;
    bool cut_penalty; /* ... and the reason was the penalty box */
};

/* An address in the penalty box. */
typedef struct rpc__guard_addr {
    struct rpc__guard_addr *next;
    uint64_t hash;
    char addr[RPC__GUARD_PEER_MAX];
    int64_t until_ns;
} rpc__guard_addr;

struct rpc__guard {
    pthread_mutex_t mu;
    rpc__guard_conn **conns; /* RPC__GUARD_BUCKETS chains */
    rpc__guard_addr **boxed; /* RPC__GUARD_BUCKETS chains */
    int nboxed;
    int64_t admitted; /* calls let through and not yet freed */
    int64_t last_sweep_ns;
    _Atomic int64_t last_box_scan_ns;
    /* The trimmer: after an attack (a connection shut down for abuse, or
     * bulk requests) has stopped for RPC__GUARD_IDLE_NS, hand the freed
     * memory back (rpc__guard_trimmer). Guarded by trim_mu, which may be
     * taken under mu, never the other way round. */
    pthread_mutex_t trim_mu;
    pthread_cond_t trim_cv;
    pthread_t trim_thread;
    bool trim_started, trim_stop, trim_idle;
    int64_t last_abuse_ns; /* 0: nothing to hand back */
    int port;              /* our listening port, to match the core's sockets */
    int max_per_conn, max_calls, max_resets;
    int64_t penalty_ns;
    metric *refused[RPC__GUARD_NREASONS];
    metric *closed_abuse;
    metric *boxed_gauge;
    metric *resets_total;
};

/* The refusals: the scrabble-reason token and status of each (read by
 * proto/contract/scan_reasons.py; the tokens are contract, reasons.txt). */
static const struct {
    const char *reason;
    grpc_status_code code;
} rpc__guard_refusals[RPC__GUARD_NREASONS] = {
    [RPC__GUARD_CONN_LIMIT] = {"conn_calls_limit", GRPC_STATUS_RESOURCE_EXHAUSTED},
    [RPC__GUARD_SERVER_LIMIT] = {"server_calls_limit", GRPC_STATUS_RESOURCE_EXHAUSTED},
    [RPC__GUARD_ABUSE] = {"stream_abuse", GRPC_STATUS_RESOURCE_EXHAUSTED},
    [RPC__GUARD_PENALTY] = {"penalty_box", GRPC_STATUS_RESOURCE_EXHAUSTED},
};

const char *rpc__guard_reason_name(rpc__guard_reason r)
{
    return (r >= 0 && r < RPC__GUARD_NREASONS) ? rpc__guard_refusals[r].reason : "unknown";
}

grpc_status_code rpc__guard_reason_code(rpc__guard_reason r)
{
    return (r >= 0 && r < RPC__GUARD_NREASONS) ? rpc__guard_refusals[r].code
                                               : GRPC_STATUS_RESOURCE_EXHAUSTED;
}

static int64_t rpc__guard_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* FNV-1a: short strings, no adversarial concern beyond chain length (an
 * attacker controls only its source port, and chains are swept). */
static uint64_t rpc__guard_hash(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)s[i];
        h *= 1099511628211ULL;
    }
    return h;
}

/* An attack leaves the core's and our freed call memory in malloc's free
 * lists, which glibc keeps; once it has stopped for a few seconds, the
 * trimmer hands that memory back so RSS returns to where it was. A thread
 * of its own, asleep without a timeout until there is something to hand
 * back: no call has to arrive after the attack for RSS to come down, and an
 * idle server pays no wakeup for it. */
static void *rpc__guard_trimmer(void *arg)
{
    rpc__guard *g = arg;
    pthread_mutex_lock(&g->trim_mu);
    while (!g->trim_stop) {
        if (g->last_abuse_ns == 0) {
            g->trim_idle = true;
            pthread_cond_wait(&g->trim_cv, &g->trim_mu);
            g->trim_idle = false;
            continue;
        }
        int64_t due = g->last_abuse_ns + RPC__GUARD_IDLE_NS;
        if (rpc__guard_now_ns() < due) {
            struct timespec ts = {.tv_sec = due / 1000000000LL, .tv_nsec = due % 1000000000LL};
            pthread_cond_timedwait(&g->trim_cv, &g->trim_mu, &ts);
            continue;
        }
        g->last_abuse_ns = 0;
        pthread_mutex_unlock(&g->trim_mu);
        malloc_trim(0);
        pthread_mutex_lock(&g->trim_mu);
    }
    pthread_mutex_unlock(&g->trim_mu);
    return NULL;
}

/* Something left memory to hand back (see rpc__guard_trimmer). Only an idle
 * trimmer is woken: a busy one re-reads last_abuse_ns when its wait ends. */
static void rpc__guard_waste(rpc__guard *g, int64_t now)
{
    pthread_mutex_lock(&g->trim_mu);
    g->last_abuse_ns = now;
    if (g->trim_idle)
        pthread_cond_signal(&g->trim_cv);
    pthread_mutex_unlock(&g->trim_mu);
}

rpc__guard *rpc__guard_create(const rpc_server_config *cfg, metrics_registry *m)
{
    rpc__guard *g = calloc(1, sizeof(*g));
    if (g == NULL)
        return NULL;
    g->conns = calloc(RPC__GUARD_BUCKETS, sizeof(*g->conns));
    g->boxed = calloc(RPC__GUARD_BUCKETS, sizeof(*g->boxed));
    if (g->conns == NULL || g->boxed == NULL)
        goto fail;
    pthread_mutex_init(&g->mu, NULL);
    g->max_per_conn = cfg->max_calls_per_connection > 0 ? cfg->max_calls_per_connection : 1000;
    g->max_calls = cfg->max_calls > 0 ? cfg->max_calls : 20000;
    g->max_resets = cfg->max_resets;
    g->penalty_ns = (int64_t)cfg->abuse_penalty_ms * 1000000;
    for (int r = 0; r < RPC__GUARD_NREASONS; r++) {
        char labels[64];
        snprintf(labels, sizeof(labels), "reason=\"%s\"", rpc__guard_refusals[r].reason);
        g->refused[r] = metrics_counter(m, "rpc_server_calls_refused_total", labels,
                                        "Calls refused before any handler work, by reason");
        if (g->refused[r] == NULL)
            goto fail;
    }
    g->closed_abuse =
        metrics_counter(m, "rpc_server_conns_closed_abuse_total", NULL,
                        "Client connections shut down for cancelling calls much faster than "
                        "completing them");
    g->boxed_gauge = metrics_gauge(m, "rpc_server_penalty_box_addresses", NULL,
                                   "Client addresses whose calls are refused for now");
    g->resets_total = metrics_counter(m, "rpc_server_calls_reset_total", NULL,
                                      "Calls the client cancelled before their deadline");
    if (g->closed_abuse == NULL || g->boxed_gauge == NULL || g->resets_total == NULL)
        goto fail;
    pthread_mutex_init(&g->trim_mu, NULL);
    /* CLOCK_MONOTONIC, the clock of rpc__guard_now_ns. */
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&g->trim_cv, &ca);
    pthread_condattr_destroy(&ca);
    if (pthread_create(&g->trim_thread, NULL, rpc__guard_trimmer, g) != 0) {
        pthread_cond_destroy(&g->trim_cv);
        pthread_mutex_destroy(&g->trim_mu);
        goto fail;
    }
    g->trim_started = true;
    return g;
fail:
    free(g->conns);
    free(g->boxed);
    free(g);
    return NULL;
}

void rpc__guard_set_port(rpc__guard *g, int port)
{
    g->port = port;
}

void rpc__guard_destroy(rpc__guard *g)
{
    if (g == NULL)
        return;
    if (g->trim_started) {
        pthread_mutex_lock(&g->trim_mu);
        g->trim_stop = true;
        pthread_cond_signal(&g->trim_cv);
        pthread_mutex_unlock(&g->trim_mu);
        pthread_join(g->trim_thread, NULL);
        pthread_cond_destroy(&g->trim_cv);
        pthread_mutex_destroy(&g->trim_mu);
    }
    for (int b = 0; b < RPC__GUARD_BUCKETS; b++) {
        for (rpc__guard_conn *c = g->conns[b], *next; c; c = next) {
            next = c->next;
            free(c);
        }
        for (rpc__guard_addr *a = g->boxed[b], *next; a; a = next) {
            next = a->next;
            free(a);
        }
    }
    free(g->conns);
    free(g->boxed);
    pthread_mutex_destroy(&g->mu);
    free(g);
}

/* Forgets idle connections and expired penalties. Caller holds g->mu. */
static void rpc__guard_sweep_locked(rpc__guard *g, int64_t now)
{
    g->last_sweep_ns = now;
    for (int b = 0; b < RPC__GUARD_BUCKETS; b++) {
        rpc__guard_conn **pc = &g->conns[b];
        while (*pc) {
            rpc__guard_conn *c = *pc;
            if (c->live == 0 && now - c->last_ns > RPC__GUARD_IDLE_NS) {
                *pc = c->next;
                free(c);
            } else {
                pc = &c->next;
            }
        }
        if (g->nboxed == 0)
            continue;
        rpc__guard_addr **pa = &g->boxed[b];
        while (*pa) {
            rpc__guard_addr *a = *pa;
            if (a->until_ns <= now) {
                *pa = a->next;
                free(a);
                g->nboxed--;
            } else {
                pa = &a->next;
            }
        }
    }
    metric_set(g->boxed_gauge, g->nboxed);
}

/* The address part of a peer string: "ipv4:1.2.3.4:5678" -> "ipv4:1.2.3.4",
 * "ipv6:[::1]:5678" -> "ipv6:[::1]". Returns its length. */
static size_t rpc__guard_addr_len(const char *peer)
{
    const char *colon = strrchr(peer, ':');
    return colon ? (size_t)(colon - peer) : strlen(peer);
}

static rpc__guard_addr *rpc__guard_boxed_find_locked(rpc__guard *g, const char *addr, size_t n,
                                                     uint64_t h)
{
    for (rpc__guard_addr *a = g->boxed[h % RPC__GUARD_BUCKETS]; a; a = a->next)
        if (a->hash == h && strncmp(a->addr, addr, n) == 0 && a->addr[n] == '\0')
            return a;
    return NULL;
}

static void rpc__guard_box_locked(rpc__guard *g, const char *peer, int64_t now)
{
    if (g->penalty_ns <= 0)
        return;
    size_t n = rpc__guard_addr_len(peer);
    uint64_t h = rpc__guard_hash(peer, n);
    rpc__guard_addr *a = rpc__guard_boxed_find_locked(g, peer, n, h);
    if (a == NULL) {
        a = calloc(1, sizeof(*a));
        if (a == NULL)
            return;
        a->hash = h;
        memcpy(a->addr, peer, n < sizeof(a->addr) ? n : sizeof(a->addr) - 1);
        a->next = g->boxed[h % RPC__GUARD_BUCKETS];
        g->boxed[h % RPC__GUARD_BUCKETS] = a;
        g->nboxed++;
        metric_set(g->boxed_gauge, g->nboxed);
    }
    a->until_ns = now + g->penalty_ns;
}

/* Copies the core's peer string into out, with the brackets of an IPv6
 * address as brackets: the core writes "ipv6:%5B::1%5D:port". Returns the
 * length. */
static size_t rpc__guard_peer_normalize(const char *in, char *out, size_t len)
{
    size_t n = 0;
    while (*in && n + 1 < len) {
        if (in[0] == '%' && in[1] == '5' && (in[2] == 'B' || in[2] == 'b')) {
            out[n++] = '[';
            in += 3;
        } else if (in[0] == '%' && in[1] == '5' && (in[2] == 'D' || in[2] == 'd')) {
            out[n++] = ']';
            in += 3;
        } else {
            out[n++] = *in++;
        }
    }
    out[n] = '\0';
    return n;
}

/* Parses "ipv4:a.b.c.d:port" or "ipv6:[addr]:port". 0, or -1 for anything
 * else (unix sockets, in-process transports): those are never shut down. */
static int rpc__guard_parse_peer(const char *peer, struct sockaddr_storage *ss)
{
    char host[64];
    const char *colon = strrchr(peer, ':');
    if (colon == NULL)
        return -1;
    int port = atoi(colon + 1);
    memset(ss, 0, sizeof(*ss));
    if (strncmp(peer, "ipv4:", 5) == 0) {
        size_t n = (size_t)(colon - (peer + 5));
        if (n >= sizeof(host))
            return -1;
        memcpy(host, peer + 5, n);
        host[n] = '\0';
        struct sockaddr_in *sin = (struct sockaddr_in *)ss;
        sin->sin_family = AF_INET;
        sin->sin_port = htons((uint16_t)port);
        return inet_pton(AF_INET, host, &sin->sin_addr) == 1 ? 0 : -1;
    }
    if (strncmp(peer, "ipv6:[", 6) == 0 && colon > peer + 6 && colon[-1] == ']') {
        size_t n = (size_t)(colon - 1 - (peer + 6));
        if (n >= sizeof(host))
            return -1;
        memcpy(host, peer + 6, n);
        host[n] = '\0';
        struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;
        sin6->sin6_family = AF_INET6;
        sin6->sin6_port = htons((uint16_t)port);
        return inet_pton(AF_INET6, host, &sin6->sin6_addr) == 1 ? 0 : -1;
    }
    return -1;
}

/* The core listens on AF_INET6 sockets where it can and reports an IPv4
 * peer of such a socket as "ipv4:": compare ::ffff:a.b.c.d as a.b.c.d. */
static void rpc__guard_unmap_v4(struct sockaddr_storage *ss)
{
    struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;
    if (ss->ss_family != AF_INET6 || !IN6_IS_ADDR_V4MAPPED(&s6->sin6_addr))
        return;
    struct sockaddr_in v4 = {.sin_family = AF_INET, .sin_port = s6->sin6_port};
    memcpy(&v4.sin_addr, &s6->sin6_addr.s6_addr[12], 4);
    memset(ss, 0, sizeof(*ss));
    memcpy(ss, &v4, sizeof(v4));
}

static bool rpc__guard_same_peer(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
    if (a->ss_family != b->ss_family)
        return false;
    if (a->ss_family == AF_INET) {
        const struct sockaddr_in *x = (const void *)a, *y = (const void *)b;
        return x->sin_port == y->sin_port && x->sin_addr.s_addr == y->sin_addr.s_addr;
    }
    const struct sockaddr_in6 *x = (const void *)a, *y = (const void *)b;
    return x->sin6_port == y->sin6_port &&
           memcmp(&x->sin6_addr, &y->sin6_addr, sizeof(x->sin6_addr)) == 0;
}

static int rpc__guard_local_port(int fd)
{
    struct sockaddr_storage ss;
    socklen_t len = sizeof(ss);
    if (getsockname(fd, (struct sockaddr *)&ss, &len) != 0)
        return -1;
    if (ss.ss_family == AF_INET)
        return ntohs(((struct sockaddr_in *)&ss)->sin_port);
    if (ss.ss_family == AF_INET6)
        return ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
    return -1;
}

int rpc__guard_shutdown_peer(const char *core_peer, int local_port)
{
    struct sockaddr_storage want;
    char peer[RPC__GUARD_PEER_MAX];
    rpc__guard_peer_normalize(core_peer, peer, sizeof(peer));
    if (rpc__guard_parse_peer(peer, &want) != 0)
        return -1;
    DIR *d = opendir("/proc/self/fd");
    if (d == NULL)
        return -1;
    int dfd = dirfd(d), found = -1;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (de->d_name[0] < '0' || de->d_name[0] > '9')
            continue;
        int fd = atoi(de->d_name);
        if (fd == dfd)
            continue;
        struct sockaddr_storage ss;
        socklen_t len = sizeof(ss);
        if (getpeername(fd, (struct sockaddr *)&ss, &len) != 0)
            continue;
        rpc__guard_unmap_v4(&ss);
        if (!rpc__guard_same_peer(&ss, &want))
            continue;
        if (local_port > 0 && rpc__guard_local_port(fd) != local_port)
            continue;
        /* A peer that already went away (its calls all end cancelled at
         * once, which looks like a burst of resets) is not an abuser: say
         * so, so its address is not penalised. */
        struct tcp_info ti;
        socklen_t tl = sizeof(ti);
        bool established = getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &tl) == 0 &&
                           ti.tcpi_state == TCP_ESTABLISHED;
        /* Never close(): the descriptor is the core's. */
        shutdown(fd, SHUT_RDWR);
        found = established ? fd : -2;
        break;
    }
    closedir(d);
    return found;
}

/* "ipv4:1.2.3.4" / "ipv6:[::1]" of a socket's peer, or -1. */
static int rpc__guard_peer_addr(int fd, char *out, size_t len)
{
    struct sockaddr_storage ss;
    socklen_t sl = sizeof(ss);
    char host[INET6_ADDRSTRLEN];
    if (getpeername(fd, (struct sockaddr *)&ss, &sl) != 0)
        return -1;
    rpc__guard_unmap_v4(&ss);
    if (ss.ss_family == AF_INET &&
        inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr, host, sizeof(host)))
        snprintf(out, len, "ipv4:%s", host);
    else if (ss.ss_family == AF_INET6 &&
             inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&ss)->sin6_addr, host, sizeof(host)))
        snprintf(out, len, "ipv6:[%s]", host);
    else
        return -1;
    return 0;
}

/* Shuts down every connection on our port whose address is in the penalty
 * box. A new connection from a penalised address is otherwise seen only
 * when its first call reaches us, and the core hands calls over in arrival
 * order: behind a backlog of calls still queued from earlier connections,
 * that can be seconds in which it keeps opening streams. At most one scan
 * per RPC__GUARD_BOX_SCAN_NS, by whichever worker gets there first. */
static void rpc__guard_box_scan(rpc__guard *g, int64_t now)
{
    int64_t last = atomic_load(&g->last_box_scan_ns);
    if (now - last < RPC__GUARD_BOX_SCAN_NS ||
        !atomic_compare_exchange_strong(&g->last_box_scan_ns, &last, now))
        return;
    DIR *d = opendir("/proc/self/fd");
    if (d == NULL)
        return;
    int dfd = dirfd(d), cut = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (de->d_name[0] < '0' || de->d_name[0] > '9')
            continue;
        int fd = atoi(de->d_name);
        char addr[RPC__GUARD_PEER_MAX];
        if (fd == dfd || rpc__guard_peer_addr(fd, addr, sizeof(addr)) != 0 ||
            rpc__guard_local_port(fd) != g->port)
            continue;
        size_t n = strlen(addr);
        pthread_mutex_lock(&g->mu);
        rpc__guard_addr *a = rpc__guard_boxed_find_locked(g, addr, n, rpc__guard_hash(addr, n));
        bool boxed = a && a->until_ns > now;
        pthread_mutex_unlock(&g->mu);
        /* Only established ones: a socket already shut down stays in the
         * table until the core closes it, and is not cut (or counted) twice. */
        struct tcp_info ti;
        socklen_t tl = sizeof(ti);
        if (boxed && getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &tl) == 0 &&
            ti.tcpi_state == TCP_ESTABLISHED) {
            shutdown(fd, SHUT_RDWR);
            cut++;
        }
    }
    closedir(d);
    if (cut > 0) {
        metric_add(g->closed_abuse, cut);
        log_warn("conn_closed_abuse", "why=penalty_box_scan conns=%d", cut);
    }
}

/* Shuts a connection down for abuse (outside the mutex). */
static void rpc__guard_close(rpc__guard *g, const char *peer, const char *why)
{
    int fd = rpc__guard_shutdown_peer(peer, g->port);
    if (fd < 0) {
        /* Gone already (or never a TCP peer): its calls were cancelled by
         * its death, not by a hostile client. No penalty. */
        log_info("conn_resets_gone", "peer=%s why=%s", peer, why);
        return;
    }
    pthread_mutex_lock(&g->mu);
    rpc__guard_box_locked(g, peer, rpc__guard_now_ns());
    pthread_mutex_unlock(&g->mu);
    metric_add(g->closed_abuse, 1);
    log_warn("conn_closed_abuse", "peer=%s why=%s fd=%d penalty_ms=%lld", peer, why, fd,
             (long long)(g->penalty_ns / 1000000));
}

rpc__guard_reason rpc__guard_admit(rpc__guard *g, grpc_call *call, rpc__guard_conn **out)
{
    *out = NULL;
    char *core_peer = grpc_call_get_peer(call);
    if (core_peer == NULL)
        return RPC__GUARD_OK;
    char peer[RPC__GUARD_PEER_MAX];
    size_t plen = rpc__guard_peer_normalize(core_peer, peer, sizeof(peer));
    gpr_free(core_peer);
    uint64_t h = rpc__guard_hash(peer, plen);
    int64_t now = rpc__guard_now_ns();
    rpc__guard_reason verdict = RPC__GUARD_OK;
    bool flooding = false;

    pthread_mutex_lock(&g->mu);
    if (now - g->last_sweep_ns > RPC__GUARD_WINDOW_NS)
        rpc__guard_sweep_locked(g, now);
    rpc__guard_conn *c = g->conns[h % RPC__GUARD_BUCKETS];
    while (c && !(c->hash == h && strncmp(c->peer, peer, plen) == 0 && c->peer[plen] == '\0'))
        c = c->next;
    if (c == NULL) {
        c = calloc(1, sizeof(*c));
        if (c == NULL) {
            pthread_mutex_unlock(&g->mu);
            return RPC__GUARD_OK; /* out of memory: let the call through unguarded */
        }
        c->hash = h;
        memcpy(c->peer, peer, plen);
        c->win_start_ns = now;
        c->next = g->conns[h % RPC__GUARD_BUCKETS];
        g->conns[h % RPC__GUARD_BUCKETS] = c;
        /* A new connection from a penalised address is cut at its first
         * call: the core gives no say at accept time. */
        if (g->nboxed > 0) {
            size_t an = rpc__guard_addr_len(peer);
            rpc__guard_addr *a =
                rpc__guard_boxed_find_locked(g, peer, an, rpc__guard_hash(peer, an));
            if (a && a->until_ns > now) {
                c->closing = true;
                c->cut_ns = now;
                c->cut_pending = true;
                c->cut_penalty = true;
                verdict = RPC__GUARD_PENALTY;
            }
        }
    }
    c->live++;
    c->last_ns = now;
    if (verdict == RPC__GUARD_OK) {
        if (c->closing) {
            verdict = RPC__GUARD_ABUSE;
            if (now - c->cut_ns > RPC__GUARD_RECUT_NS) {
                c->cut_ns = now;
                c->cut_pending = true;
            }
        } else if (c->live > 2 * g->max_per_conn) {
            /* Refused calls are live too until their status is out; a
             * connection holding twice its bound keeps sending calls it was
             * told to stop: shut it down rather than refuse without end. */
            c->closing = true;
            c->cut_ns = now;
            flooding = true;
            verdict = RPC__GUARD_ABUSE;
        } else if (c->live > g->max_per_conn) {
            verdict = RPC__GUARD_CONN_LIMIT;
        } else if (g->admitted >= g->max_calls) {
            /* Counts admitted calls only: refusals (another connection's
             * flood) must not crowd out well-behaved clients. */
            verdict = RPC__GUARD_SERVER_LIMIT;
        }
    }
    if (verdict == RPC__GUARD_OK)
        g->admitted++;
    bool scan = g->nboxed > 0;
    pthread_mutex_unlock(&g->mu);

    *out = c;
    if (verdict != RPC__GUARD_OK)
        metric_add(g->refused[verdict], 1);
    if (flooding) {
        char why[64];
        snprintf(why, sizeof(why), "live_calls>%d", 2 * g->max_per_conn);
        rpc__guard_close(g, peer, why);
    }
    if (scan)
        rpc__guard_box_scan(g, now);
    return verdict;
}

void rpc__guard_end(rpc__guard *g, rpc__guard_conn *c, bool client_cancelled, bool admitted)
{
    if (c == NULL)
        return;
    int64_t now = rpc__guard_now_ns();
    bool cut = false, recut = false, penalty = false;
    char peer[RPC__GUARD_PEER_MAX];
    int resets = 0, completed = 0;

    if (client_cancelled)
        metric_add(g->resets_total, 1);
    pthread_mutex_lock(&g->mu);
    if (admitted)
        g->admitted--;
    c->live--;
    c->last_ns = now;
    if (c->cut_pending) {
        c->cut_pending = false;
        recut = true;
        penalty = c->cut_penalty;
        c->cut_penalty = false;
        memcpy(peer, c->peer, sizeof(peer));
    }
    /* Both counts halve every RPC__GUARD_DECAY_NS: old history fades, and
     * the rule does not depend on how fast the workers retire calls (a
     * starved server may see an attacker's resets slower than any
     * per-second threshold, while the core queues them by the thousand). */
    for (int i = 0; i < 32 && now - c->win_start_ns >= RPC__GUARD_DECAY_NS; i++) {
        c->win_start_ns += RPC__GUARD_DECAY_NS;
        c->resets /= 2;
        c->completed /= 2;
    }
    if (now - c->win_start_ns >= RPC__GUARD_DECAY_NS)
        c->win_start_ns = now;
    if (client_cancelled)
        c->resets++;
    else
        c->completed++;
    if (!c->closing && g->max_resets > 0 && c->resets > g->max_resets && c->resets > c->completed) {
        c->closing = true;
        c->cut_ns = now;
        cut = true;
        resets = c->resets;
        completed = c->completed;
        memcpy(peer, c->peer, sizeof(peer));
    }
    pthread_mutex_unlock(&g->mu);
    if (cut || recut)
        rpc__guard_waste(g, now);

    if (recut) {
        /* Counted and logged only when a live socket was found: a call
         * queued in the core from a connection already gone finds none. */
        int fd = rpc__guard_shutdown_peer(peer, g->port);
        if (fd >= 0) {
            metric_add(g->closed_abuse, 1);
            log_warn("conn_closed_abuse", "peer=%s why=%s fd=%d", peer,
                     penalty ? "penalty_box" : "reconnected", fd);
        }
        return;
    }
    if (cut) {
        char why[64];
        snprintf(why, sizeof(why), "resets=%d,completed=%d", resets, completed);
        rpc__guard_close(g, peer, why);
    }
}

/* A flood of 4 MiB requests (refused by size, by token, or by a throttle)
 * leaves tens of MB of the core's receive buffers in glibc's free lists
 * after it stops: the same trim as after a stream-abuse attack brings RSS
 * back. Legitimate bulk requests only delay the trim until they stop. */
void rpc__guard_note_bulk(rpc__guard *g)
{
    rpc__guard_waste(g, rpc__guard_now_ns());
}
