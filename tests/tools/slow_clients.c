/* tests/tools/slow_clients.c - hostile load for the serve scenarios: opens
 * N connections to 127.0.0.1:PORT from ADDRS loopback source addresses
 * (127.0.1.1, 127.0.1.2, ...; N/ADDRS connections each), sends each the
 * start of a request and then one more header byte per second, for SECONDS
 * or until every connection is closed. Prints one line:
 *   opened N refused R cut C first_cut_s F last_cut_s L open O
 * refused: closed by the server within 0.5 s of connecting (a connection
 * limit); cut: closed later (a deadline); open: still open at the end. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: slow_clients PORT N SECONDS ADDRS\n");
        return 2;
    }
    int port = atoi(argv[1]), n = atoi(argv[2]), addrs = atoi(argv[4]);
    double secs = atof(argv[3]);
    if (n <= 0 || addrs <= 0 || addrs > 250)
        return 2;
    struct rlimit rl;
    if (!getrlimit(RLIMIT_NOFILE, &rl)) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    struct pollfd *pf = calloc((size_t)n, sizeof *pf);
    double *t_open = calloc((size_t)n, sizeof *t_open);
    if (!pf || !t_open)
        return 3;
    static const char head[] = "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ";
    int opened = 0, refused = 0, cut = 0, open_now = 0;
    double first = 0, last = 0, t0 = now_s();
    for (int i = 0; i < n; i++) {
        pf[i].fd = -1;
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        if (fd < 0)
            break;
        struct sockaddr_in src = {.sin_family = AF_INET};
        src.sin_addr.s_addr = htonl(0x7f000100u + 1u + (unsigned)(i % addrs));
        struct sockaddr_in dst = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
        dst.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        if (bind(fd, (struct sockaddr *)&src, sizeof src) ||
            connect(fd, (struct sockaddr *)&dst, sizeof dst) ||
            send(fd, head, sizeof head - 1, MSG_NOSIGNAL) != (ssize_t)(sizeof head - 1)) {
            close(fd);
            refused++;
            continue;
        }
        pf[i].fd = fd;
        pf[i].events = POLLIN;
        t_open[i] = now_s();
        opened++;
        open_now++;
    }
    double next_byte = now_s() + 1.0;
    while (open_now > 0 && now_s() - t0 < secs) {
        poll(pf, (nfds_t)n, 100);
        double t = now_s();
        for (int i = 0; i < n; i++) {
            if (pf[i].fd < 0 || !(pf[i].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            char buf[512];
            ssize_t k = read(pf[i].fd, buf, sizeof buf);
            if (k > 0)
                continue; /* an error reply: the close follows */
            close(pf[i].fd);
            pf[i].fd = -1;
            open_now--;
            double age = t - t_open[i];
            if (age < 0.5) {
                refused++;
                continue;
            }
            if (!cut || age < first)
                first = age;
            if (age > last)
                last = age;
            cut++;
        }
        if (t >= next_byte) {
            for (int i = 0; i < n; i++)
                if (pf[i].fd >= 0 && send(pf[i].fd, "a", 1, MSG_NOSIGNAL) != 1 && errno != EAGAIN) {
                    /* reset by the server: counted when poll reports it */
                }
            next_byte += 1.0;
        }
    }
    printf("opened %d refused %d cut %d first_cut_s %.1f last_cut_s %.1f open %d\n", opened,
           refused, cut, first, last, open_now);
    for (int i = 0; i < n; i++)
        if (pf[i].fd >= 0)
            close(pf[i].fd);
    free(pf);
    free(t_open);
    return 0;
}
