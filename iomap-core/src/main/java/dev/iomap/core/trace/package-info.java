/**
 * The kernel's iomap tracepoints ({@code fs/iomap/trace.h}) as JDK Flight Recorder events: one event type
 * per tracepoint that has a counterpart here, named {@code iomap.TRACEPOINT} and with the tracepoint's
 * fields (labelled with the kernel's field names). The engine emits each with one line at the place
 * where the kernel calls {@code trace_TRACEPOINT}; {@code docs/kernel-map.md} ("Tracepoints") says which
 * event mirrors which tracepoint.
 *
 * <p>Every event here is {@link jdk.jfr.Enabled disabled} by default and records no stack trace: a
 * recording with JDK's own settings does not pick them up, and an emit with no recording enabling the
 * event costs one {@code shouldCommit()} check of an event object the JIT does not allocate.
 * {@code iomap trace} enables the ones it is asked for, in the mount's own process. There is no
 * {@code dev} field: a mount process serves one mount, and a stream is of one process.
 */
package dev.iomap.core.trace;
