/*
 * The test bed's delay line (bench/cluster-hosts.sh delay US): this kernel has no sch_netem, so a host's
 * outgoing frames are delayed in user space instead. In each host's network namespace, tc redirects
 * every frame leaving an interface (clsact egress, u32 match all, mirred redirect) to a tap device this
 * program reads; it holds each frame for the delay and sends it out of the interface through a packet
 * socket with PACKET_QDISC_BYPASS, which skips the egress hook (no loop). One process per namespace,
 * one thread, any number of DEV:TAP pairs; frames keep their order. As netem on every host's interface,
 * a round trip between two hosts gets twice the delay, plus this program's wake-up latency (not
 * measured by the bed: this machine has no ping; ppoll with a 1 ns timer slack keeps it small).
 *
 * Usage: delayline DELAY_MICROSECONDS DEV:TAP [DEV:TAP...]   (prints "ready" once it runs)
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/if_packet.h>
#include <linux/if_tun.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <errno.h>

#define MAXPORTS 8
#define SLOTS 4096
#define FRAME 65600

struct frame { long long due; int len; unsigned char *data; };
struct port { int tap; int out; int head, tail; struct frame q[SLOTS]; };
static struct port ports[MAXPORTS];

static long long now_ns(void) {
    struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000000LL + t.tv_nsec;
}

int main(int argc, char **argv) {
    if (argc < 3) { fprintf(stderr, "usage: delayline DELAY_MICROSECONDS DEV:TAP...\n"); return 2; }
    long long delay = atoll(argv[1]) * 1000LL;
    int n = argc - 2;
    prctl(PR_SET_TIMERSLACK, 1UL);
    struct pollfd pfd[MAXPORTS];
    for (int i = 0; i < n; i++) {
        char dev[IFNAMSIZ], tap[IFNAMSIZ];
        if (sscanf(argv[i + 2], "%15[^:]:%15s", dev, tap) != 2) { fprintf(stderr, "bad %s\n", argv[i + 2]); return 2; }
        struct port *p = &ports[i];
        p->tap = open("/dev/net/tun", O_RDWR | O_NONBLOCK);
        struct ifreq ifr; memset(&ifr, 0, sizeof ifr);
        snprintf(ifr.ifr_name, IFNAMSIZ, "%s", tap); ifr.ifr_flags = IFF_TAP | IFF_NO_PI;
        if (p->tap < 0 || ioctl(p->tap, TUNSETIFF, &ifr) < 0) { perror(tap); return 1; }
        p->out = socket(AF_PACKET, SOCK_RAW, 0);
        int one = 1;
        if (p->out < 0 || setsockopt(p->out, SOL_PACKET, PACKET_QDISC_BYPASS, &one, sizeof one) < 0) { perror("packet"); return 1; }
        struct sockaddr_ll sll; memset(&sll, 0, sizeof sll);
        sll.sll_family = AF_PACKET; sll.sll_ifindex = if_nametoindex(dev);
        if (sll.sll_ifindex == 0 || bind(p->out, (struct sockaddr *) &sll, sizeof sll) < 0) { perror(dev); return 1; }
        for (int s = 0; s < SLOTS; s++) p->q[s].data = malloc(FRAME);
        pfd[i].fd = p->tap; pfd[i].events = POLLIN;
    }
    printf("ready\n"); fflush(stdout);
    for (;;) {
        long long t = now_ns(), due = -1;
        for (int i = 0; i < n; i++) {
            struct port *p = &ports[i];
            while (p->head != p->tail && p->q[p->head].due <= t) {
                if (send(p->out, p->q[p->head].data, p->q[p->head].len, 0) < 0 && errno == ENOBUFS) break;
                p->head = (p->head + 1) % SLOTS;
            }
            if (p->head != p->tail && (due < 0 || p->q[p->head].due < due)) due = p->q[p->head].due;
            pfd[i].events = ((p->tail + 1) % SLOTS == p->head) ? 0 : POLLIN;
        }
        struct timespec ts, *tsp = NULL;
        if (due >= 0) { long long w = due - now_ns(); if (w < 0) w = 0; ts.tv_sec = w / 1000000000LL; ts.tv_nsec = w % 1000000000LL; tsp = &ts; }
        if (ppoll(pfd, n, tsp, NULL) < 0 && errno != EINTR) { perror("ppoll"); return 1; }
        long long arrived = now_ns();
        for (int i = 0; i < n; i++) {
            struct port *p = &ports[i];
            if (!(pfd[i].revents & POLLIN)) continue;
            while ((p->tail + 1) % SLOTS != p->head) {
                struct frame *f = &p->q[p->tail];
                int len = read(p->tap, f->data, FRAME);
                if (len <= 0) break;
                f->len = len; f->due = arrived + delay;
                p->tail = (p->tail + 1) % SLOTS;
            }
        }
    }
}
