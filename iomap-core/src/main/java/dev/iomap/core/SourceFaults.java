package dev.iomap.core;

import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;

/**
 * Faults in the memory a write reads from: a mapped file truncated under its mapping, the JVM's
 * counterpart of a user buffer that faults in the kernel. The buffered path copies up to the fault
 * ({@code BufferCopySource}); the direct path, which hands the caller's memory to the device, first finds
 * how much of it can be read, as the kernel's {@code iov_iter_extract_pages} pins user pages up to the
 * first one that faults before a direct write is built from them.
 */
public final class SourceFaults {
    /** The granule probed: the smallest page size Linux uses, so no host page is skipped. */
    private static final int PROBE = 4096;

    /**
     * Where the probe stores each byte it reads: compiled code drops a read whose value is unused (even a
     * volatile one), and with it the fault the probe is for. Racy by design; nothing reads it.
     */
    @SuppressWarnings("unused")
    private static byte sink;

    private SourceFaults() {
    }

    /**
     * @param error an error from a memory access
     * @return whether it is the JVM's report of a faulting access to memory (a mapped file truncated under
     *     it: "a fault occurred in an unsafe memory access operation", or "in a recent unsafe memory access
     *     operation in compiled Java code"), as opposed to any other internal error
     */
    public static boolean isAccessFault(InternalError error) {
        String message = error.getMessage();
        return message != null && message.startsWith("a fault occurred in ")
                && message.contains("unsafe memory access operation");
    }

    /**
     * How many of {@code src}'s remaining bytes can be read without a fault: all of them for a heap
     * buffer; for a direct one, up to the first {@value #PROBE}-byte page (of the address space) whose
     * first byte faults when read. Reads one byte per page (kept in a field, so compiled code cannot drop the read) and delivers a fault the JVM holds pending from
     * compiled code after each ({@link #deliverPending()}), so a compiled probe sees it too; neither the buffer's position nor its
     * contents change. A mapping truncated after this call may still fault later: the kernel pins the
     * pages, the JVM cannot.
     *
     * @param src the buffer
     * @return the readable prefix, 0 to {@code src.remaining()}
     * @throws InternalError for an internal error that is not an access fault
     */
    public static int readablePrefix(ByteBuffer src) {
        int length = src.remaining();
        if (!src.isDirect() || length == 0) {
            return length;
        }
        int start = src.position();
        long address = MemorySegment.ofBuffer(src).address();
        int offset = 0;
        while (offset < length) {
            try {
                sink = src.get(start + offset);
                deliverPending();
            } catch (InternalError e) {
                if (!isAccessFault(e)) {
                    throw e;
                }
                return offset;
            }
            long next = (address + offset + PROBE) & -PROBE;
            offset = (int) Math.min(length, next - address);
        }
        return length;
    }

    /**
     * A native call ({@link Thread#holdsLock}, cheap): the return from native code delivers a fault the JVM
     * holds pending from an unsafe access just made by compiled code, here, rather than wherever compiled
     * code next polls (HotSpot reports a fault in compiled code asynchronously; in the interpreter it is
     * thrown at the access). Call it inside the {@code try} that handles the access's fault.
     *
     * @throws InternalError the pending fault, if there is one
     */
    public static void deliverPending() {
        boolean _ = Thread.holdsLock(SourceFaults.class);
    }
}
