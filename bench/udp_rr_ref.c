/* A reference for bench/rr_vs_ref.sh (not part of mtuperf): the smallest closed-loop
 * UDP request/response that does what `mtuperf rr` does for one client: a request of
 * REQUEST bytes, answered by a datagram of BLOCK bytes, one in flight, blocking
 * send/recv on connected sockets, and one clock read on each side of the round trip
 * (CLOCK_MONOTONIC, vDSO). Nothing else: no histogram (the round trips go to a
 * pre-allocated array, sorted at the end), no sequence checks, no timeouts beyond a
 * 1 s receive deadline that ends the run if the server is gone.
 *
 * The server and the client are two threads of this process (MODE "thread", the
 * default) or two processes (MODE "process": the server is a forked child, as
 * mtuperf's agent is a process of its own, so each round trip switches address
 * spaces twice); both are pinned to CPU (the layout of `rr --cpu C --agent-cpu C`),
 * or left to the scheduler with -1.
 *
 *   cc -O2 -o /tmp/udp_rr_ref bench/udp_rr_ref.c -lpthread
 *   /tmp/udp_rr_ref SECONDS CPU [REQUEST [BLOCK [PORT [MODE]]]]
 *   # prints: round_trips p50_ns p99_ns mean_ns
 *
 * REQUEST and BLOCK are datagram payloads, so they match mtuperf's sizes plus its
 * 40-byte header: `rr --request 128 --block 8K` sends 168 and 8232 bytes (defaults).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int cpu = -1;
static size_t request = 168, block = 8232;
static int port = 17990;
static volatile int done;

static void pin(void) {
    if (cpu < 0) return;
    cpu_set_t s;
    CPU_ZERO(&s);
    CPU_SET(cpu, &s);
    if (pthread_setaffinity_np(pthread_self(), sizeof s, &s) != 0) {
        perror("pin");
        exit(1);
    }
}

static uint64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static int udp_socket(void) {
    int s = socket(AF_INET, SOCK_DGRAM, 0);
    if (s < 0) {
        perror("socket");
        exit(1);
    }
    struct timeval tv = {.tv_sec = 1};
    setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    return s;
}

static void *server(void *arg) {
    int s = *(int *)arg;
    pin();
    char *in = calloc(1, 65536), *out = calloc(1, block);
    struct sockaddr_in from;
    socklen_t len;
    while (!done) {
        len = sizeof from;
        ssize_t n = recvfrom(s, in, 65536, 0, (struct sockaddr *)&from, &len);
        if (n < 0) continue; /* the 1 s deadline: look at `done` again */
        sendto(s, out, block, 0, (struct sockaddr *)&from, len);
    }
    return NULL;
}

static int cmp(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: %s SECONDS CPU [REQUEST [BLOCK [PORT [thread|process]]]]\n",
                argv[0]);
        return 2;
    }
    double secs = atof(argv[1]);
    cpu = atoi(argv[2]);
    if (argc > 3) request = (size_t)atol(argv[3]);
    if (argc > 4) block = (size_t)atol(argv[4]);
    if (argc > 5) port = atoi(argv[5]);
    int forked = argc > 6 && strcmp(argv[6], "process") == 0;

    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int srv = udp_socket();
    if (bind(srv, (struct sockaddr *)&a, sizeof a) != 0) {
        perror("bind");
        return 1;
    }
    pthread_t t;
    pid_t child = -1;
    if (forked) {
        child = fork();
        if (child < 0) {
            perror("fork");
            return 1;
        }
        if (child == 0) {
            prctl(PR_SET_PDEATHSIG, SIGKILL); /* never outlive a parent that failed */
            server(&srv);                     /* until the parent kills it */
            _exit(0);
        }
        close(srv);
    } else {
        pthread_create(&t, NULL, server, &srv);
    }

    pin();
    int cli = udp_socket();
    if (connect(cli, (struct sockaddr *)&a, sizeof a) != 0) {
        perror("connect");
        return 1;
    }
    size_t cap = (size_t)(secs * 200000) + 1024, n = 0;
    uint64_t *rtt = malloc(cap * sizeof *rtt);
    char *req = calloc(1, request), *in = calloc(1, 65536);
    uint64_t end = now_ns() + (uint64_t)(secs * 1e9);
    for (;;) {
        uint64_t t0 = now_ns();
        if (t0 >= end || n == cap) break;
        if (send(cli, req, request, 0) < 0) {
            perror("send");
            return 1;
        }
        if (recv(cli, in, 65536, 0) < 0) {
            perror("recv (server gone?)");
            return 1;
        }
        rtt[n++] = now_ns() - t0;
    }
    done = 1;
    if (forked) {
        kill(child, SIGTERM);
        waitpid(child, NULL, 0);
    } else {
        pthread_join(t, NULL);
    }
    if (n == 0) return 1;
    uint64_t sum = 0;
    for (size_t i = 0; i < n; i++) sum += rtt[i];
    qsort(rtt, n, sizeof *rtt, cmp);
    printf("%zu %llu %llu %llu\n", n, (unsigned long long)rtt[n / 2],
           (unsigned long long)rtt[(size_t)(n * 0.99)], (unsigned long long)(sum / n));
    return 0;
}
