/**
 * Running a plan in process: {@link dev.iomap.cli.bench.BenchRunner} formats and mounts a fresh
 * device, lays files out, and runs one {@link dev.iomap.cli.bench.Worker} thread per job thread
 * (fio's psync engine), measuring completion and sync latencies and the filesystem's counters.
 */
package dev.iomap.cli.bench;
