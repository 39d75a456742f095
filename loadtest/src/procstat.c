/*
 * procstat.c — see procstat.h.
 */
#include "procstat.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"

int lt_proc_parse_stat(const char *line, pid_t *ppid, uint64_t *ticks, uint64_t *child_ticks)
{
    /* "pid (comm) state ppid ..." — comm may hold spaces and parens: skip to
     * the last ')'. Fields after it: 3 state, 4 ppid, ..., 14 utime,
     * 15 stime, 16 cutime, 17 cstime. */
    const char *p = strrchr(line, ')');
    if (p == NULL)
        return -1;
    p++;
    char state;
    long pp;
    unsigned long long f[17];
    int n = sscanf(p, " %c %ld %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu",
                   &state, &pp, &f[0], &f[1], &f[2], &f[3], &f[4], &f[5], &f[6], &f[7], &f[8],
                   &f[9], &f[10], &f[11], &f[12]);
    if (n < 15)
        return -1;
    /* f[0]=pgrp f[1]=session f[2]=tty f[3]=tpgid f[4]=flags f[5]=minflt
     * f[6]=cminflt f[7]=majflt f[8]=cmajflt f[9]=utime f[10]=stime
     * f[11]=cutime f[12]=cstime */
    *ppid = (pid_t)pp;
    *ticks = f[9] + f[10];
    *child_ticks = f[11] + f[12];
    return 0;
}

unsigned long lt_proc_listen_inode(const char *text, int port)
{
    const char *line = strchr(text, '\n'); /* skip the header */
    while (line && *++line) {
        unsigned int lport, state;
        char laddr[64];
        unsigned long inode;
        /* sl local rem st tx:rx tr:when retr uid timeout inode */
        if (sscanf(line,
                   "%*d: %63[0-9A-Fa-f]:%x %*[0-9A-Fa-f]:%*x %x %*x:%*x %*x:%*x %*x %*u %*u %lu",
                   laddr, &lport, &state, &inode) == 4) {
            if ((int)lport == port && state == 0x0A && inode != 0)
                return inode;
        }
        line = strchr(line, '\n');
    }
    return 0;
}

pid_t lt_proc_pid_of_inode(unsigned long ino)
{
    char want[64];
    snprintf(want, sizeof(want), "socket:[%lu]", ino);
    DIR *d = opendir("/proc");
    if (d == NULL)
        return 0;
    pid_t found = 0, self = getpid();
    struct dirent *e;
    while (!found && (e = readdir(d)) != NULL) {
        if (!isdigit((unsigned char)e->d_name[0]))
            continue;
        pid_t pid = (pid_t)atoi(e->d_name);
        if (pid == self)
            continue;
        char path[64];
        snprintf(path, sizeof(path), "/proc/%d/fd", pid);
        DIR *fd = opendir(path);
        if (fd == NULL)
            continue;
        struct dirent *f;
        while ((f = readdir(fd)) != NULL) {
            if (f->d_name[0] == '.')
                continue;
            char lp[320], target[64];
            snprintf(lp, sizeof(lp), "/proc/%d/fd/%s", pid, f->d_name);
            ssize_t n = readlink(lp, target, sizeof(target) - 1);
            if (n <= 0)
                continue;
            target[n] = '\0';
            if (strcmp(target, want) == 0) {
                found = pid;
                break;
            }
        }
        closedir(fd);
    }
    closedir(d);
    return found;
}

static char *lt_proc__slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    size_t cap = 65536, n = 0;
    char *buf = malloc(cap);
    size_t r;
    while (buf && (r = fread(buf + n, 1, cap - n - 1, f)) > 0) {
        n += r;
        if (n + 1 >= cap) {
            char *nb = realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
            cap *= 2;
        }
    }
    fclose(f);
    if (buf)
        buf[n] = '\0';
    if (len)
        *len = n;
    return buf;
}

static pid_t lt_proc__pid_of_port(int port)
{
    const char *files[] = {"/proc/net/tcp", "/proc/net/tcp6"};
    for (int i = 0; i < 2; i++) {
        char *t = lt_proc__slurp(files[i], NULL);
        if (!t)
            continue;
        unsigned long ino = lt_proc_listen_inode(t, port);
        free(t);
        if (ino)
            return lt_proc_pid_of_inode(ino);
    }
    return 0;
}

int lt_procstat_init(lt_procstat *ps, const char *spec, char *err, size_t errlen)
{
    memset(ps, 0, sizeof(*ps));
    pthread_mutex_init(&ps->mu, NULL);
    ps->step = -1;
    char buf[1024];
    snprintf(buf, sizeof(buf), "%s", spec ? spec : "");
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        while (isspace((unsigned char)*tok))
            tok++;
        if (!*tok)
            continue;
        if (ps->n == LT_PROC_MAX) {
            snprintf(err, errlen, "too many processes (at most %d)", LT_PROC_MAX);
            return -1;
        }
        lt_proc_target *t = &ps->t[ps->n];
        char *eq = strchr(tok, '=');
        if (strcmp(tok, "self") == 0) {
            snprintf(t->name, sizeof(t->name), "loadtest");
            t->pid = getpid();
        } else if (strcmp(tok, "machine") == 0) {
            /* Every CPU's busy time (/proc/stat): minus ours, what others
             * ran on the machine meanwhile. */
            snprintf(t->name, sizeof(t->name), "machine");
            t->machine = true;
            t->pid = 1;
        } else if (eq == NULL || eq == tok) {
            snprintf(err, errlen, "'%s' is not name=port, name=pid:N or self", tok);
            return -1;
        } else {
            *eq = '\0';
            size_t nl = strlen(tok);
            if (tok[nl - 1] == '+') {
                t->children = true;
                tok[nl - 1] = '\0';
            }
            snprintf(t->name, sizeof(t->name), "%s", tok);
            const char *v = eq + 1;
            char *end;
            if (!strncmp(v, "pid:", 4)) {
                t->pid = (pid_t)strtol(v + 4, &end, 10);
                if (end == v + 4 || *end || t->pid <= 0) {
                    snprintf(err, errlen, "'%s': bad pid", v);
                    return -1;
                }
            } else {
                long port = strtol(v, &end, 10);
                if (end == v || *end || port <= 0 || port > 65535) {
                    snprintf(err, errlen, "'%s=%s': bad port", t->name, v);
                    return -1;
                }
                t->port = (int)port;
                t->pid = lt_proc__pid_of_port(t->port);
            }
        }
        ps->n++;
    }
    return 0;
}

/* Ticks (own, plus children's when asked) and RSS bytes of target t. */
static int lt_proc__read_machine(uint64_t *ticks, double *rss)
{
    FILE *f = fopen("/proc/stat", "r");
    if (!f)
        return -1;
    unsigned long long v[8] = {0};
    int n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
                   &v[4], &v[5], &v[6], &v[7]);
    fclose(f);
    if (n < 7)
        return -1;
    /* user nice system [idle iowait] irq softirq steal */
    *ticks = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
    long pages = sysconf(_SC_PHYS_PAGES), avail = sysconf(_SC_AVPHYS_PAGES);
    *rss = (double)(pages - avail) * sysconf(_SC_PAGESIZE);
    return 0;
}

int lt_proc_read(pid_t pid, bool children, uint64_t *ticks, double *rss)
{
    char path[300], line[1024];
    snprintf(path, sizeof(path), "/proc/%d/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    size_t n = fread(line, 1, sizeof(line) - 1, f);
    fclose(f);
    line[n] = '\0';
    pid_t ppid;
    uint64_t own, reaped;
    if (lt_proc_parse_stat(line, &ppid, &own, &reaped) != 0)
        return -1;
    long page = sysconf(_SC_PAGESIZE);
    unsigned long size = 0, resident = 0;
    snprintf(path, sizeof(path), "/proc/%d/statm", pid);
    if ((f = fopen(path, "r")) != NULL) {
        if (fscanf(f, "%lu %lu", &size, &resident) != 2)
            resident = 0;
        fclose(f);
    }
    *ticks = own;
    *rss = (double)resident * page;
    if (!children)
        return 0;
    *ticks += reaped;
    DIR *d = opendir("/proc");
    if (!d)
        return 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (!isdigit((unsigned char)e->d_name[0]))
            continue;
        snprintf(path, sizeof(path), "/proc/%s/stat", e->d_name);
        if ((f = fopen(path, "r")) == NULL)
            continue;
        n = fread(line, 1, sizeof(line) - 1, f);
        fclose(f);
        line[n] = '\0';
        pid_t cp;
        uint64_t ct, cr;
        if (lt_proc_parse_stat(line, &cp, &ct, &cr) != 0 || cp != pid)
            continue;
        *ticks += ct;
        snprintf(path, sizeof(path), "/proc/%s/statm", e->d_name);
        if ((f = fopen(path, "r")) != NULL) {
            if (fscanf(f, "%lu %lu", &size, &resident) == 2)
                *rss += (double)resident * page;
            fclose(f);
        }
    }
    closedir(d);
    return 0;
}

static int lt_proc__read(lt_proc_target *t, uint64_t *ticks, double *rss)
{
    if (t->machine)
        return lt_proc__read_machine(ticks, rss);
    return lt_proc_read(t->pid, t->children, ticks, rss);
}

static void lt_proc__acc(lt_proc_step *s, double cpu, double rss)
{
    s->samples++;
    s->cpu_sum += cpu;
    s->rss_sum += rss;
    if (cpu > s->cpu_peak)
        s->cpu_peak = cpu;
    if (rss > s->rss_peak)
        s->rss_peak = rss;
}

void lt_procstat_sample(lt_procstat *ps)
{
    long hz = sysconf(_SC_CLK_TCK);
    for (int i = 0; i < ps->n; i++) {
        lt_proc_target *t = &ps->t[i];
        if (t->pid <= 0)
            continue;
        uint64_t ticks;
        double rss;
        uint64_t now = lt_now_ns();
        if (lt_proc__read(t, &ticks, &rss) != 0)
            continue;
        pthread_mutex_lock(&ps->mu);
        if (t->last_ns && now - t->last_ns < 100000000ull) {
            /* Too close to the last sample for clock-tick resolution. */
            pthread_mutex_unlock(&ps->mu);
            continue;
        }
        if (t->last_ns) {
            double dt = (now - t->last_ns) / 1e9;
            double cpu = dt > 0 ? ((double)(ticks - t->last_ticks) / (double)hz) / dt : 0;
            t->cpu_now = cpu;
            t->rss_now = rss;
            if (ps->step >= 0 && ps->step < LT_PROC_MAX_STEPS)
                lt_proc__acc(&t->steps[ps->step], cpu, rss);
            if (ps->step >= 0)
                lt_proc__acc(&t->total, cpu, rss);
        }
        t->last_ticks = ticks;
        t->last_ns = now;
        pthread_mutex_unlock(&ps->mu);
    }
}

static void *lt_procstat__main(void *arg)
{
    lt_procstat *ps = arg;
    while (!ps->quit) {
        /* Sleep first: the baseline was taken by lt_procstat_start. */
        for (int i = 0; i < ps->interval_ms / 50 && !ps->quit; i++)
            usleep(50000);
        lt_procstat_sample(ps);
    }
    return NULL;
}

int lt_procstat_start(lt_procstat *ps, int interval_ms)
{
    ps->interval_ms = interval_ms > 0 ? interval_ms : 1000;
    lt_procstat_sample(ps); /* the baseline */
    if (pthread_create(&ps->th, NULL, lt_procstat__main, ps) != 0)
        return -1;
    ps->running = true;
    return 0;
}

void lt_procstat_set_step(lt_procstat *ps, int step)
{
    pthread_mutex_lock(&ps->mu);
    ps->step = step;
    pthread_mutex_unlock(&ps->mu);
}

void lt_procstat_stop(lt_procstat *ps)
{
    if (!ps->running)
        return;
    ps->quit = 1;
    pthread_join(ps->th, NULL);
    ps->running = false;
}

void lt_procstat_snapshot(lt_procstat *ps, lt_proc_target *out, int *n)
{
    pthread_mutex_lock(&ps->mu);
    memcpy(out, ps->t, sizeof(ps->t[0]) * (size_t)ps->n);
    *n = ps->n;
    pthread_mutex_unlock(&ps->mu);
}
