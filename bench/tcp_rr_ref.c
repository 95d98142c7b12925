/* A reference for bench/rr_scale_ref.sh (not part of mtuperf): the smallest closed-loop
 * TCP request/response over loopback that does what `mtuperf rr --proto tcp` does per
 * block, with nothing else: N connections, each with one 128-byte request in flight,
 * answered by an 8 KiB block; one client thread and one server thread, each on one
 * edge-triggered epoll; no clock reads, no histogram, no checks. Its CPU per block is
 * the kernel's TCP cost at N connections plus a few hundred instructions, so how it
 * grows from 16 to 4096 connections is how the kernel's cost grows, whatever tool
 * drives it.
 *
 * With PAIRS >= 2 (at most the CPUs) it is PAIRS such loops side by side, each with
 * its own listener and share of the connections, pair k's client and server threads
 * both pinned to CPU k: every connection's packets, reads and wakeups stay on one
 * CPU, the layout mtuperf's TCP steering makes by default (the kernel's best case).
 *
 *   cc -O2 -o /tmp/tcp_rr_ref bench/tcp_rr_ref.c -lpthread
 *   /tmp/tcp_rr_ref CONNECTIONS SECONDS [PAIRS]   # prints: conns blocks/s cli_us srv_us
 *
 * cli_us and srv_us: each thread's user + system CPU (RUSAGE_THREAD) per block, µs.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define REQ 128
#define BLOCK 8192
#define EVENTS 256
#define MAX_PAIRS 64

struct pair {
    int cpu; /* -1: unpinned */
    long conns;
    int listener;
    struct sockaddr_in addr;
    double cli_cpu, srv_cpu;
    unsigned long long cli_blocks, srv_blocks;
};

static volatile int stop, go;
static double secs;

static double thread_cpu(void) {
    struct rusage r;
    getrusage(RUSAGE_THREAD, &r);
    return r.ru_utime.tv_sec + r.ru_stime.tv_sec + (r.ru_utime.tv_usec + r.ru_stime.tv_usec) / 1e6;
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static void die(const char *what) {
    perror(what);
    exit(1);
}

static void pin(int cpu) {
    if (cpu < 0) return;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

static void watch(int ep, int fd, unsigned long long data) {
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    struct epoll_event ev = {.events = EPOLLIN | EPOLLET, .data.u64 = data};
    if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev)) die("epoll_ctl");
}

static void *server(void *arg) {
    struct pair *p = arg;
    pin(p->cpu);
    int ep = epoll_create1(0);
    char req[2 * REQ], block[BLOCK];
    memset(block, 0x5a, sizeof block);
    struct epoll_event evs[EVENTS];
    for (long i = 0; i < p->conns; i++) {
        int s = accept(p->listener, NULL, NULL);
        if (s < 0) die("accept");
        watch(ep, s, (unsigned long long)s);
    }
    while (!go) usleep(1000);
    double c0 = thread_cpu();
    unsigned long long n = 0;
    while (!stop) {
        int k = epoll_wait(ep, evs, EVENTS, 50);
        for (int i = 0; i < k; i++) {
            int s = (int)evs[i].data.u64;
            /* one request in flight per connection: one short read drains it */
            ssize_t got = recv(s, req, sizeof req, MSG_DONTWAIT);
            if (got == REQ && send(s, block, BLOCK, 0) == BLOCK) n++;
        }
    }
    p->srv_cpu = thread_cpu() - c0;
    p->srv_blocks = n;
    return NULL;
}

static void *client(void *arg) {
    struct pair *p = arg;
    pin(p->cpu);
    int *fds = calloc(p->conns, sizeof *fds);
    int *got = calloc(p->conns, sizeof *got);
    static __thread char req[REQ], buf[65536];
    int ep = epoll_create1(0);
    for (long i = 0; i < p->conns; i++) {
        fds[i] = socket(AF_INET, SOCK_STREAM, 0);
        if (connect(fds[i], (struct sockaddr *)&p->addr, sizeof p->addr)) die("connect");
        watch(ep, fds[i], (unsigned long long)i);
    }
    while (!go) usleep(1000);
    struct epoll_event evs[EVENTS];
    double t0 = now(), c0 = thread_cpu();
    unsigned long long n = 0;
    for (long i = 0; i < p->conns; i++) send(fds[i], req, REQ, 0);
    while (now() - t0 < secs) {
        int k = epoll_wait(ep, evs, EVENTS, 50);
        for (int e = 0; e < k; e++) {
            long i = (long)evs[e].data.u64;
            for (;;) {
                ssize_t r = recv(fds[i], buf, sizeof buf, MSG_DONTWAIT);
                if (r <= 0) break;
                got[i] += (int)r;
                if (got[i] == BLOCK) {
                    got[i] = 0;
                    n++;
                    send(fds[i], req, REQ, 0);
                    break;
                }
            }
        }
    }
    p->cli_cpu = thread_cpu() - c0;
    p->cli_blocks = n;
    return NULL;
}

int main(int argc, char **argv) {
    if (argc != 3 && argc != 4) {
        fprintf(stderr, "usage: %s CONNECTIONS SECONDS [PAIRS]\n", argv[0]);
        return 2;
    }
    long conns = atol(argv[1]);
    secs = atof(argv[2]);
    int pairs = argc == 4 ? atoi(argv[3]) : 1;
    if (pairs < 1 || pairs > MAX_PAIRS || pairs > conns) {
        fprintf(stderr, "PAIRS must be 1 to %d and at most CONNECTIONS\n", MAX_PAIRS);
        return 2;
    }
    static struct pair ps[MAX_PAIRS];
    pthread_t th[2 * MAX_PAIRS];
    for (int k = 0; k < pairs; k++) {
        struct pair *p = &ps[k];
        p->cpu = pairs > 1 ? k : -1;
        p->conns = conns / pairs + (k < conns % pairs);
        p->addr = (struct sockaddr_in){.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        p->listener = socket(AF_INET, SOCK_STREAM, 0);
        socklen_t al = sizeof p->addr;
        if (bind(p->listener, (struct sockaddr *)&p->addr, sizeof p->addr) || listen(p->listener, 4096) ||
            getsockname(p->listener, (struct sockaddr *)&p->addr, &al))
            die("listen");
        pthread_create(&th[2 * k], NULL, server, p);
        pthread_create(&th[2 * k + 1], NULL, client, p);
    }
    sleep(1 + conns / 2048); /* every connection set up and accepted before the clock */
    double t0 = now();
    go = 1;
    for (int k = 0; k < pairs; k++) pthread_join(th[2 * k + 1], NULL);
    double wall = now() - t0;
    stop = 1;
    double cc = 0, sc = 0;
    unsigned long long cb = 0, sb = 0;
    for (int k = 0; k < pairs; k++) {
        pthread_join(th[2 * k], NULL);
        cc += ps[k].cli_cpu, sc += ps[k].srv_cpu, cb += ps[k].cli_blocks, sb += ps[k].srv_blocks;
    }
    printf("%ld %.0f %.2f %.2f\n", conns, cb / wall, cc * 1e6 / cb, sc * 1e6 / sb);
    return 0;
}
