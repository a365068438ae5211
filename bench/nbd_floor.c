/* The floor of an NBD server's CPU per request on this machine: the least
 * a server can do and still serve fio's nbd engine. Written by hand for
 * the bench because no library is this minimal: one thread per
 * connection, a blocking recv() into a 128 KiB buffer, every whole request
 * in it answered, every reply of that recv() sent by ONE writev() (header
 * plus the data of a READ straight from a zeroed static page, no copy in
 * user space, no locks, no accounting, no latency record). iolab's target
 * does all of that and more (a buffer per request filled from the export,
 * in-flight limits, the per-request latency record); what this server
 * spends per request is what the kernel's socket path, system calls and
 * wake-ups cost here, which no server on this host can go below with a
 * copying send. bench/nbd_floor.py runs it beside `iolab target` and
 * nbdkit; docs/performance.md, "The floor" (issue 25 part 4).
 *
 * NBD (fixed newstyle): NBD_OPT_GO / NBD_OPT_INFO / NBD_OPT_EXPORT_NAME
 * for any export name, every other option answered NBD_REP_ERR_UNSUP;
 * simple replies; READ answers zeros, WRITE / FLUSH / TRIM are consumed and
 * acknowledged, DISC ends the connection.
 *
 *   cc -O2 -o /tmp/nbd_floor bench/nbd_floor.c -lpthread
 *   /tmp/nbd_floor SOCKET_PATH SIZE_BYTES
 */
#define _GNU_SOURCE
#include <endian.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

#define BUF (128 * 1024)
#define MAX_REPLIES 512
#define MAX_DATA (32u << 20)

static uint64_t size_bytes;
static char zeros[MAX_DATA];

static int full_read(int fd, void *p, size_t n) {
    char *c = p;
    while (n) {
        ssize_t r = read(fd, c, n);
        if (r <= 0) return -1;
        c += r, n -= (size_t)r;
    }
    return 0;
}

static int full_write(int fd, const void *p, size_t n) {
    const char *c = p;
    while (n) {
        ssize_t r = write(fd, c, n);
        if (r <= 0) return -1;
        c += r, n -= (size_t)r;
    }
    return 0;
}

static int opt_reply(int fd, uint32_t opt, uint32_t type, const void *data, uint32_t len) {
    unsigned char h[20];
    uint64_t m = htobe64(0x3e889045565a9ULL);
    uint32_t o = htobe32(opt), t = htobe32(type), l = htobe32(len);
    memcpy(h, &m, 8), memcpy(h + 8, &o, 4), memcpy(h + 12, &t, 4), memcpy(h + 16, &l, 4);
    if (full_write(fd, h, 20)) return -1;
    return len ? full_write(fd, data, len) : 0;
}

/* Handshake; 0 when the transmission phase begins. */
static int handshake(int fd) {
    unsigned char g[18] = "NBDMAGICIHAVEOPT";
    g[16] = 0, g[17] = 3; /* FIXED_NEWSTYLE | NO_ZEROES */
    uint32_t cflags;
    if (full_write(fd, g, 18) || full_read(fd, &cflags, 4)) return -1;
    int no_zeroes = be32toh(cflags) & 2;
    for (;;) {
        unsigned char h[16];
        if (full_read(fd, h, 16)) return -1;
        uint32_t opt, len;
        memcpy(&opt, h + 8, 4), memcpy(&len, h + 12, 4);
        opt = be32toh(opt), len = be32toh(len);
        if (len > 65536) return -1;
        char data[65536];
        if (len && full_read(fd, data, len)) return -1;
        uint64_t sz = htobe64(size_bytes);
        uint16_t fl = htobe16(1 | 4 | 32); /* HAS_FLAGS | SEND_FLUSH | SEND_TRIM */
        if (opt == 1) { /* EXPORT_NAME: old-style end of negotiation */
            unsigned char e[10 + 124] = {0};
            memcpy(e, &sz, 8), memcpy(e + 8, &fl, 2);
            return full_write(fd, e, no_zeroes ? 10 : sizeof e);
        }
        if (opt == 6 || opt == 7) { /* INFO, GO */
            unsigned char info[12];
            uint16_t type = 0; /* NBD_INFO_EXPORT */
            memcpy(info, &type, 2), memcpy(info + 2, &sz, 8), memcpy(info + 10, &fl, 2);
            if (opt_reply(fd, opt, 3, info, 12) || opt_reply(fd, opt, 1, NULL, 0)) return -1;
            if (opt == 7) return 0;
            continue;
        }
        if (opt == 2) return -1; /* ABORT */
        if (opt_reply(fd, opt, 0x80000001u, NULL, 0)) return -1; /* ERR_UNSUP */
    }
}

static void *serve(void *arg) {
    int fd = (int)(intptr_t)arg;
    static _Thread_local char in[BUF];
    static _Thread_local unsigned char heads[MAX_REPLIES][16];
    static _Thread_local struct iovec iov[2 * MAX_REPLIES];
    if (handshake(fd)) goto out;
    size_t have = 0;
    for (;;) {
        ssize_t r = recv(fd, in + have, BUF - have, 0);
        if (r <= 0) goto out;
        have += (size_t)r;
        size_t at = 0;
        int n = 0, replies = 0;
        while (have - at >= 28 && replies < MAX_REPLIES) {
            const unsigned char *q = (const unsigned char *)in + at;
            uint16_t type;
            uint32_t len;
            memcpy(&type, q + 6, 2), memcpy(&len, q + 24, 4);
            type = be16toh(type), len = be32toh(len);
            size_t need = 28 + (type == 1 ? len : 0);
            if (type == 1 && need > BUF) goto out; /* writes this big: not served */
            if (have - at < need) break;
            if (type == 2) goto out; /* DISC */
            unsigned char *h = heads[replies++];
            uint32_t magic = htobe32(0x67446698u), err = 0;
            memcpy(h, &magic, 4), memcpy(h + 4, &err, 4), memcpy(h + 8, q + 8, 8);
            iov[n].iov_base = h, iov[n++].iov_len = 16;
            if (type == 0) {
                if (len > MAX_DATA) goto out;
                iov[n].iov_base = zeros, iov[n++].iov_len = len;
            }
            at += need;
        }
        memmove(in, in + at, have - at);
        have -= at;
        /* One writev for every reply this recv brought (short writes go on). */
        struct iovec *v = iov;
        while (n > 0) {
            ssize_t w = writev(fd, v, n > 1024 ? 1024 : n);
            if (w <= 0) goto out;
            while (n > 0 && (size_t)w >= v->iov_len) w -= (ssize_t)v->iov_len, v++, n--;
            if (n > 0) v->iov_base = (char *)v->iov_base + w, v->iov_len -= (size_t)w;
        }
    }
out:
    close(fd);
    return NULL;
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: nbd_floor SOCKET_PATH SIZE_BYTES\n");
        return 2;
    }
    size_bytes = strtoull(argv[2], NULL, 10);
    int s = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    snprintf(a.sun_path, sizeof a.sun_path, "%s", argv[1]);
    unlink(argv[1]);
    if (bind(s, (struct sockaddr *)&a, sizeof a) || listen(s, 64)) {
        perror("nbd_floor: bind/listen");
        return 1;
    }
    for (;;) {
        int c = accept(s, NULL, NULL);
        if (c < 0) continue;
        pthread_t t;
        pthread_create(&t, NULL, serve, (void *)(intptr_t)c);
        pthread_detach(t);
    }
}
