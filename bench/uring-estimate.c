/*
 * Issue 37, item 3: the parts of a FUSE request's round trip that FUSE over io_uring could save, measured
 * on this machine (bench/uring-estimate.sh runs it).
 *
 *   syscall   one null system call (getppid), ns: io_uring's COMMIT_AND_FETCH replaces the server's
 *             read(2) of the next request and writev(2) of the reply by one io_uring_enter(2) (or none
 *             with SQPOLL), so at most one or two of these per request
 *   same      p50 round trip of a pipe ping-pong between two threads pinned to the same CPU, ns
 *   cross     the same with the threads on two CPUs, ns: two wake-ups across CPUs per round trip, as
 *             a request and its reply on /dev/fuse can take; io_uring's per-CPU queues serve a request
 *             on the CPU that issued it, so at most (cross - same) per request
 *
 * Prints "syscall_ns same_p50_ns cross_p50_ns".
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define ROUNDS 20000

static int ping[2], pong[2];
static int other_cpu;

static uint64_t now_ns(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t) ts.tv_sec * 1000000000u + ts.tv_nsec;
}

static void pin(int cpu) {
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

static void *echo(void *unused) {
	char c;
	(void) unused;
	pin(other_cpu);
	for (int i = 0; i < ROUNDS; i++) {
		if (read(ping[0], &c, 1) != 1 || write(pong[1], &c, 1) != 1) {
			exit(1);
		}
	}
	return NULL;
}

static int compare(const void *a, const void *b) {
	uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;
	return x < y ? -1 : x > y;
}

static uint64_t round_trip_p50(int cpu, int echo_cpu) {
	static uint64_t samples[ROUNDS];
	pthread_t thread;
	char c = 'x';
	if (pipe(ping) || pipe(pong)) {
		exit(1);
	}
	other_cpu = echo_cpu;
	pin(cpu);
	pthread_create(&thread, NULL, echo, NULL);
	for (int i = 0; i < ROUNDS; i++) {
		uint64_t start = now_ns();
		if (write(ping[1], &c, 1) != 1 || read(pong[0], &c, 1) != 1) {
			exit(1);
		}
		samples[i] = now_ns() - start;
	}
	pthread_join(thread, NULL);
	close(ping[0]); close(ping[1]); close(pong[0]); close(pong[1]);
	qsort(samples, ROUNDS, sizeof(samples[0]), compare);
	return samples[ROUNDS / 2];
}

int main(void) {
	uint64_t start = now_ns();
	for (int i = 0; i < 1000000; i++) {
		syscall(SYS_getppid);
	}
	uint64_t syscall_ns = (now_ns() - start) / 1000000;
	uint64_t same = round_trip_p50(0, 0);
	uint64_t cross = round_trip_p50(0, sysconf(_SC_NPROCESSORS_ONLN) > 1 ? 1 : 0);
	printf("%llu %llu %llu\n", (unsigned long long) syscall_ns, (unsigned long long) same,
	       (unsigned long long) cross);
	return 0;
}
