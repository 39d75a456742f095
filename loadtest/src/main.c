/*
 * main.c — `loadtest seed|cleanup|run|ghz|hold [options]`.
 *
 * rpc_init() blocks SIGINT/SIGTERM in every thread; one small thread waits
 * for them and raises the stop flag, so a run ends cleanly and still writes
 * its report. The open-file soft limit is raised to the hard limit: one
 * connection per simulated player needs thousands of descriptors.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "lt.h"
#include "rpc/log.h"
#include "rpc/rpc.h"

typedef struct lt_sigwatch {
    lt_stop *stop;
    atomic_int quit;
} lt_sigwatch;

void lt_stop_wake(lt_stop *s)
{
    lt_mailbox *mb = atomic_load(&s->wake);
    if (mb && atomic_exchange(&s->wake_posted, 1) == 0)
        lt_mailbox_post(mb, &s->wake_msg);
}

static void *lt_sigwatch_main(void *arg)
{
    lt_sigwatch *w = arg;
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    struct timespec tick = {0, 200 * 1000 * 1000};
    int hits = 0;
    while (!atomic_load(&w->quit)) {
        int sig = sigtimedwait(&set, NULL, &tick);
        if (sig != SIGINT && sig != SIGTERM)
            continue;
        if (++hits == 1)
            fprintf(stderr,
                    "\nloadtest: stopping (signal %d); finishing in-flight calls and writing the "
                    "report\n",
                    sig);
        else
            fprintf(
                stderr,
                "loadtest: still stopping; a third signal is ignored too — wait a few seconds\n");
        atomic_store(&w->stop->stop, 1);
        lt_stop_wake(w->stop);
    }
    return NULL;
}

static void lt_usage(FILE *f)
{
    fprintf(f, "usage: loadtest COMMAND [options]   (COMMAND --help for its options)\n"
               "  seed      create N tagged accounts with live sessions in Postgres (COPY)\n"
               "  cleanup   remove a seeded population and its games\n"
               "  run       the game-playing scenario against the gateway\n"
               "  ghz       one method, ghz's options and reports\n"
               "  hold      many idle Subscribe streams held open, every event accounted for\n");
}

int main(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
        lt_usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? LT_EXIT_USAGE : LT_EXIT_OK;
    }
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    log_set_service("loadtest");
    log_threshold = LOG_LEVEL_WARN;
    rpc_init();
    static lt_stop stop; /* lives for the whole process; only atomics inside */
    lt_sigwatch w = {.stop = &stop};
    pthread_t th;
    pthread_create(&th, NULL, lt_sigwatch_main, &w);

    int rc;
    const char *cmd = argv[1];
    if (!strcmp(cmd, "ghz"))
        rc = lt_cmd_ghz(argc - 1, argv + 1, &stop);
    else if (!strcmp(cmd, "seed"))
        rc = lt_cmd_seed(argc - 1, argv + 1, &stop);
    else if (!strcmp(cmd, "cleanup"))
        rc = lt_cmd_cleanup(argc - 1, argv + 1, &stop);
    else if (!strcmp(cmd, "run"))
        rc = lt_cmd_run(argc - 1, argv + 1, &stop);
    else if (!strcmp(cmd, "hold"))
        rc = lt_cmd_hold(argc - 1, argv + 1, &stop);
    else {
        fprintf(stderr, "loadtest: unknown command '%s'\n", cmd);
        lt_usage(stderr);
        rc = LT_EXIT_USAGE;
    }
    atomic_store(&w.quit, 1);
    pthread_join(th, NULL);
    rpc_shutdown();
    return rc;
}
