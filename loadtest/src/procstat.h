/*
 * procstat.h — CPU (cores) and RSS of the named processes of the stack,
 * read from /proc once a second, kept per run step (mean and peak).
 *
 * A process is named by the TCP port it listens on ("gateway=7000"), which
 * picks the right one when several stacks run on one machine; "self" is the
 * driver itself, "pid:N" a fixed pid. With "+" after the name
 * ("postgres+=55432") the process's children count too (Postgres backends),
 * plus the CPU of children already reaped (cutime/cstime). RSS of a group
 * is the sum of resident sets, so shared memory counts more than once.
 * "machine" is the busy time of every CPU (its "RSS" is memory in use): on a
 * shared machine it shows what else ran during a step.
 */
#ifndef LT_PROCSTAT_H
#define LT_PROCSTAT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define LT_PROC_MAX 16
#define LT_PROC_MAX_STEPS 32

typedef struct lt_proc_step {
    uint64_t samples;
    double cpu_sum, cpu_peak; /* cores */
    double rss_sum, rss_peak; /* bytes */
} lt_proc_step;

typedef struct lt_proc_target {
    char name[32];
    int port;  /* 0: pid given */
    pid_t pid; /* 0: not found */
    bool children;
    bool machine; /* the whole machine (/proc/stat), not a process */
    uint64_t last_ticks;
    uint64_t last_ns;
    double cpu_now, rss_now;
    lt_proc_step steps[LT_PROC_MAX_STEPS];
    lt_proc_step total;
} lt_proc_target;

typedef struct lt_procstat {
    lt_proc_target t[LT_PROC_MAX];
    int n;
    int step; /* -1: not sampling into a step */
    pthread_mutex_t mu;
    pthread_t th;
    bool running;
    volatile int quit;
    int interval_ms;
} lt_procstat;

/* Parses "name=port,name+=port,self,name=pid:N" and resolves the pids.
 * Unresolved names stay with pid 0 (reported as absent). Returns 0, or -1
 * on a malformed spec (err). */
int lt_procstat_init(lt_procstat *ps, const char *spec, char *err, size_t errlen);
int lt_procstat_start(lt_procstat *ps, int interval_ms);
void lt_procstat_set_step(lt_procstat *ps, int step);
void lt_procstat_stop(lt_procstat *ps);
/* One sample now (the thread calls this; tests too). */
void lt_procstat_sample(lt_procstat *ps);
/* Copies the targets under the lock (for progress lines and reports). */
void lt_procstat_snapshot(lt_procstat *ps, lt_proc_target *out, int *n);

/* The one /proc reader of the tree (the driver's sampler and the
 * benchmarks use it): CPU time in clock ticks (utime+stime) and resident
 * set in bytes of pid; with children, plus the CPU of its reaped children
 * (cutime+cstime) and the CPU and RSS of its live direct children (Postgres
 * backends under the postmaster). 0, or -1 when pid is gone. */
int lt_proc_read(pid_t pid, bool children, uint64_t *ticks, double *rss);

/* Pure parsers. A /proc/PID/stat line -> ppid, utime+stime, cutime+cstime
 * (clock ticks). Returns 0 or -1. */
int lt_proc_parse_stat(const char *line, pid_t *ppid, uint64_t *ticks, uint64_t *child_ticks);
/* The inode of the socket listening on 127.0.0.1/0.0.0.0/::1 `port` in a
 * /proc/net/tcp{,6} text, or 0. */
unsigned long lt_proc_listen_inode(const char *tcp_text, int port);
/* Which pid holds socket inode `ino`, scanning /proc/PID/fd; 0 if none. */
pid_t lt_proc_pid_of_inode(unsigned long ino);

#endif
