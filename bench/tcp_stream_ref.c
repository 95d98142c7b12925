/* A reference for bench/stream_vs_iperf3.py --ref (not part of mtuperf): the smallest
 * TCP bulk transfer, to tell what the kernel gives one stream from what a tool adds.
 * The sender writes BLOCK-sized write() calls from one buffer for SECS seconds, then
 * half-closes and waits for the receiver's close; the receiver reads BLOCK-sized
 * read() calls (the sender says BLOCK in a 4-byte header first) until the end.
 * Nothing else: no clocks in the loop beyond the sender's end check, no counters but
 * the byte count, no other threads.
 *
 * POLL_US > 0 makes the receiver poll as `mtuperf stream --rx-poll` does: a read that
 * finds the socket empty is tried again at once (MSG_DONTWAIT), and only after POLL_US
 * of empty reads does it block until data comes (poll(2)).
 *
 *   cc -O2 -o /tmp/tcp_stream_ref bench/tcp_stream_ref.c
 *   /tmp/tcp_stream_ref serve ADDR PORT [POLL_US]      # serves connections one by one
 *   /tmp/tcp_stream_ref send ADDR PORT SECS BLOCK      # prints: bytes gbit_per_s
 *
 * The rate is bytes over the time from the first write to the receiver's close (all
 * bytes read), as the receiving side of iperf3 and mtuperf count it.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static struct sockaddr_in addr(const char *host, const char *port) {
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(port))};
    if (inet_pton(AF_INET, host, &a.sin_addr) != 1) {
        fprintf(stderr, "bad address %s\n", host);
        exit(2);
    }
    return a;
}

static int read_full(int s, void *p, size_t n) {
    size_t got = 0;
    while (got < n) {
        ssize_t r = read(s, (char *)p + got, n - got);
        if (r <= 0) return -1;
        got += (size_t)r;
    }
    return 0;
}

static void serve_one(int c, double poll_us) {
    uint32_t block;
    if (read_full(c, &block, sizeof block) != 0 || block == 0 || block > (64u << 20)) return;
    char *buf = malloc(block);
    double since = 0;
    int flags = poll_us > 0 ? MSG_DONTWAIT : 0;
    for (;;) {
        ssize_t n = recv(c, buf, block, flags);
        if (n == 0) break;
        if (n > 0) {
            since = 0;
            continue;
        }
        if (errno == EINTR) continue;
        if (errno != EAGAIN) break;
        double t = now();
        if (since == 0) since = t;
        if ((t - since) * 1e6 < poll_us) continue;
        since = 0;
        struct pollfd p = {.fd = c, .events = POLLIN};
        if (poll(&p, 1, 10000) <= 0) break; /* a sender silent for 10 s */
    }
    free(buf);
}

int main(int argc, char **argv) {
    if (argc >= 4 && strcmp(argv[1], "serve") == 0) {
        struct sockaddr_in a = addr(argv[2], argv[3]);
        double poll_us = argc > 4 ? atof(argv[4]) : 0;
        int l = socket(AF_INET, SOCK_STREAM, 0), one = 1;
        setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (bind(l, (struct sockaddr *)&a, sizeof a) != 0 || listen(l, 8) != 0) {
            perror("bind");
            return 1;
        }
        for (;;) {
            int c = accept(l, NULL, NULL);
            if (c < 0) continue;
            serve_one(c, poll_us);
            close(c);
        }
    }
    if (argc == 6 && strcmp(argv[1], "send") == 0) {
        struct sockaddr_in a = addr(argv[2], argv[3]);
        double secs = atof(argv[4]);
        uint32_t block = (uint32_t)atol(argv[5]);
        int s = socket(AF_INET, SOCK_STREAM, 0);
        if (connect(s, (struct sockaddr *)&a, sizeof a) != 0) {
            perror("connect");
            return 1;
        }
        char *buf = malloc(block);
        for (uint32_t i = 0; i < block; i++) buf[i] = (char)(i * 2654435761u >> 24);
        if (write(s, &block, sizeof block) != sizeof block) return 1;
        unsigned long long total = 0;
        double t0 = now(), end = t0 + secs;
        while (now() < end) {
            ssize_t n = write(s, buf, block);
            if (n <= 0) {
                perror("write");
                return 1;
            }
            total += (unsigned long long)n;
        }
        shutdown(s, SHUT_WR);
        struct timeval tv = {.tv_sec = 10}; /* a receiver that never closes ends the run */
        setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        char c;
        if (read(s, &c, 1) < 0) perror("waiting for the receiver's close");
        printf("%llu %.3f\n", total, (double)total * 8 / (now() - t0) / 1e9);
        return 0;
    }
    fprintf(stderr,
            "usage: %s serve ADDR PORT [POLL_US] | %s send ADDR PORT SECS BLOCK\n",
            argv[0], argv[0]);
    return 2;
}
