/* bench/serve_client.h - the plain HTTP/1.1 client of the `berth serve`
 * benchmarks (bench_serve.c, bench_serve_replicated.c): the monotonic
 * clock they time requests with, loopback connections, one request /
 * reply on a keep-alive socket and the cluster their clients create. Included by one benchmark each (static
 * functions, no state).
 *
 * Threads: every function is safe from any thread on its own fd. */
#ifndef BENCH_SERVE_CLIENT_H
#define BENCH_SERVE_CLIENT_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static inline double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A TCP_NODELAY connection to 127.0.0.1:port, from loopback address src
 * (127.0.x.y) when src is not 0; -1 when it fails. */
static inline int connect_loopback(unsigned port, uint32_t src)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0)
        return -1;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    struct sockaddr_in b = {.sin_family = AF_INET};
    b.sin_addr.s_addr = htonl(src);
    if ((src && bind(fd, (struct sockaddr *)&b, sizeof b)) ||
        connect(fd, (struct sockaddr *)&a, sizeof a)) {
        close(fd);
        return -1;
    }
    return fd;
}

static inline int write_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t k = write(fd, p, n);
        if (k <= 0)
            return -1;
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

/* One request on fd; returns the status or -1. buf is scratch. */
static inline int http(int fd, const char *method, const char *path, const char *body,
                       size_t blen, char *buf, size_t size)
{
    char head[256];
    int h = snprintf(head, sizeof head,
                     "%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: %zu\r\n\r\n", method,
                     path, blen);
    if (h < 0 || (size_t)h >= sizeof head || write_all(fd, head, (size_t)h) ||
        write_all(fd, body, blen))
        return -1;
    size_t got = 0;
    char *end = NULL;
    while (!end) {
        if (got + 1 >= size)
            return -1;
        ssize_t k = read(fd, buf + got, size - 1 - got);
        if (k <= 0)
            return -1;
        got += (size_t)k;
        buf[got] = 0;
        end = strstr(buf, "\r\n\r\n");
    }
    int status = atoi(buf + 9);
    const char *cl = strcasestr(buf, "Content-Length:");
    size_t want = cl ? strtoul(cl + 15, NULL, 10) : 0;
    size_t have = got - (size_t)(end + 4 - buf);
    while (have < want) {
        size_t chunk = size - 1;
        ssize_t k = read(fd, buf, want - have < chunk ? want - have : chunk);
        if (k <= 0)
            return -1;
        have += (size_t)k;
    }
    return status;
}

/* The small KubernetesCluster every placement client creates (a control
 * plane node and a pool of two), named <tag><run>-<id>-<i>, in body; its
 * length. */
static inline int cluster_body(char *body, size_t size, char tag, int run, int id, int i)
{
    return snprintf(body, size,
                    "{\"kind\": \"KubernetesCluster\", \"metadata\": {\"name\": \"%c%d-%d-%d\"},"
                    " \"spec\": {\"controlPlaneNodeConfiguration\": {\"count\": 1, "
                    "\"vmSkuName\": \"NC_G2_8_v1\"}, \"initialAgentPoolConfigurations\": "
                    "[{\"name\": \"p\", \"count\": 2, \"vmSkuName\": \"NC_G6_28_v1\"}]}}",
                    tag, run, id, i);
}

#endif
