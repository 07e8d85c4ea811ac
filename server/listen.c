/*
 * listen.c — see listen.h.
 */
#define _GNU_SOURCE
#include "listen.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* Room for a burst of connections while the pool accepts them; the kernel
 * caps it at net.core.somaxconn. */
#define LISTEN_BACKLOG 4096

int xpv_listen_is_loopback(const char *host)
{
    return strncmp(host, "127.", 4) == 0 || strcmp(host, "::1") == 0 ||
           strcmp(host, "localhost") == 0;
}

static int bound_port_of(int fd)
{
    struct sockaddr_storage ss;
    socklen_t len = sizeof ss;
    if (getsockname(fd, (struct sockaddr *)&ss, &len) != 0) return 0;
    if (ss.ss_family == AF_INET) return ntohs(((struct sockaddr_in *)&ss)->sin_port);
    if (ss.ss_family == AF_INET6) return ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
    return 0;
}

int xpv_listen_open(const char *host, int port, int *ipv6, int *bound_port, int *busy, xpv_err *err)
{
    struct addrinfo hints, *res = NULL;
    char service[16];
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE;
    snprintf(service, sizeof service, "%d", port);
    *busy = 0;
    int gai = getaddrinfo(host, service, &hints, &res);
    if (gai != 0) return xpv_err_set(err, "cannot use address '%s': %s", host, gai_strerror(gai));
    int fd = -1, last_errno = 0;
    for (struct addrinfo *ai = res; ai && fd < 0; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
        if (fd < 0) {
            last_errno = errno;
            continue;
        }
        int one = 1;
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 || listen(fd, LISTEN_BACKLOG) != 0) {
            last_errno = errno;
            close(fd);
            fd = -1;
            continue;
        }
        *ipv6 = ai->ai_family == AF_INET6;
    }
    freeaddrinfo(res);
    if (fd < 0) {
        *busy = last_errno == EADDRINUSE;
        if (*busy)
            return xpv_err_set(err,
                               "port %d on %s is already in use (is another xprof-view or "
                               "TensorBoard running?); choose another with --port",
                               port, host);
        return xpv_err_set(err, "cannot listen on %s:%d: %s", host, port, strerror(last_errno));
    }
    *bound_port = bound_port_of(fd);
    return fd;
}
