/**
 * JDK Flight Recorder events that adapters and lock managers emit, named after the kernel's tracepoints:
 * gfs2's glock tracepoints ({@code fs/gfs2/trace_gfs2.h}: {@code gfs2_glock_state_change},
 * {@code gfs2_demote_rq}, {@code gfs2_promote}) and bcachefs-like's checksum errors and space
 * reservations. They live in the API because every lock manager (in-process in {@code adapter-support},
 * ZooKeeper in {@code iomap-cluster}) and every adapter sees it, and none may see the engine; the
 * engine's own events are in {@code dev.iomap.core.trace}.
 *
 * <p>Every event here is {@link jdk.jfr.Enabled disabled} by default and records no stack trace; an emit
 * with no recording enabling it costs one {@code shouldCommit()} check. {@code docs/kernel-map.md}
 * ("Tracepoints") says which event mirrors which tracepoint.
 */
package dev.iomap.spi.trace;
