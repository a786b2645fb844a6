package dev.iomap.fuse;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.MemorySegment;

/**
 * What the mount reads and writes of the kernel's side of {@code /dev/fuse} (linux/fuse.h, protocol
 * 7.38 and later) where libfuse 3.14 has no word for it: the flags of the INIT reply and of open and
 * create replies that libfuse builds only from the capabilities it knows ({@link ReplyFlags} sets them),
 * and the {@code write_flags} of a WRITE request, which libfuse 3.14 does not pass on. The offsets are
 * checked against the installed linux/fuse.h by {@code FuseStructsTest}. These messages are the kernel's
 * ABI: the same on every architecture.
 */
final class KernelAbi {
    /** {@code struct fuse_out_header}: {@code u32 len; s32 error; u64 unique}. */
    static final long OUT_HEADER_BYTES = 16;
    static final long OUT_HEADER_ERROR = 4;
    /** {@code struct fuse_init_out}: {@code flags} and {@code flags2} (the upper 32 flag bits). */
    static final long INIT_OUT_FLAGS = 12;
    static final long INIT_OUT_FLAGS2 = 32;
    /** {@code struct fuse_open_out}: {@code u64 fh; u32 open_flags; ...}. */
    static final long OPEN_OUT_BYTES = 16;
    static final long OPEN_OUT_FLAGS = 8;
    /** {@code struct fuse_entry_out}, which precedes {@code fuse_open_out} in a create reply. */
    static final long ENTRY_OUT_BYTES = 128;
    /** {@code struct fuse_write_in}: {@code u64 fh; u64 offset; u32 size; u32 write_flags; ...}. */
    static final long WRITE_IN_BYTES = 40;
    static final long WRITE_IN_FH = 0;
    static final long WRITE_IN_OFFSET = 8;
    static final long WRITE_IN_SIZE = 16;
    static final long WRITE_IN_WRITE_FLAGS = 20;

    /** INIT flags: {@code FUSE_HANDLE_KILLPRIV_V2} (the file system clears set-user-ID on write, truncate, chown). */
    static final int FUSE_HANDLE_KILLPRIV_V2 = 1 << 28;
    /** INIT flags: {@code FUSE_INIT_EXT} ({@code flags2} is read). */
    static final int FUSE_INIT_EXT = 1 << 30;
    /** INIT {@code flags2}: {@code FUSE_DIRECT_IO_ALLOW_MMAP} is {@code 1ULL << 36}: bit 4 of {@code flags2}. */
    static final int FLAGS2_DIRECT_IO_ALLOW_MMAP = 1 << (36 - 32);
    /** Open flags: {@code FOPEN_DIRECT_IO}. */
    static final int FOPEN_DIRECT_IO = 1;
    /** Open flags: {@code FOPEN_PARALLEL_DIRECT_WRITES} (direct writes to one inode are not serialised). */
    static final int FOPEN_PARALLEL_DIRECT_WRITES = 1 << 6;
    /**
     * Write flags: {@code FUSE_WRITE_CACHE}, a write of the kernel's page cache (writeback of pages a
     * shared mapping dirtied, or of the writeback cache), sent through whichever writable handle of the
     * inode the kernel found ({@code fuse_write_file_get}): it is positional and buffered whatever that
     * handle was opened with.
     */
    static final int FUSE_WRITE_CACHE = 1;
    /** Write flags: {@code FUSE_WRITE_KILL_SUIDGID} (the writer lacks {@code CAP_FSETID}). */
    static final int FUSE_WRITE_KILL_SUIDGID = 1 << 2;

    private KernelAbi() {
    }

    /**
     * Whether the kernel asked a WRITE to clear set-user-ID and set-group-ID. libfuse 3.14 hands the
     * write's data to the file system as a pointer just past the request's {@code struct fuse_write_in}
     * in the buffer it read from {@code /dev/fuse} ({@code do_write}: {@code PARAM(arg)}), and drops
     * {@code write_flags}; so they are read from that struct, and trusted only when its handle, offset and
     * size are those of the request (else false: the kernel's own checks then stand).
     *
     * @param writeIn the {@value #WRITE_IN_BYTES} bytes before the data pointer libfuse passed to
     *     {@code write}
     * @param fh the request's handle
     * @param offset its offset
     * @param size its size
     * @return whether {@code FUSE_WRITE_KILL_SUIDGID} is set
     */
    static boolean killsPrivileges(MemorySegment writeIn, long fh, long offset, long size) {
        return (writeFlags(writeIn, fh, offset, size) & FUSE_WRITE_KILL_SUIDGID) != 0;
    }

    /**
     * Whether a WRITE is the kernel's page cache being written back ({@link #FUSE_WRITE_CACHE}), read as
     * {@link #killsPrivileges} reads its flag.
     *
     * @param writeIn as for {@link #killsPrivileges}
     * @param fh the request's handle
     * @param offset its offset
     * @param size its size
     * @return whether {@code FUSE_WRITE_CACHE} is set
     */
    static boolean fromPageCache(MemorySegment writeIn, long fh, long offset, long size) {
        return (writeFlags(writeIn, fh, offset, size) & FUSE_WRITE_CACHE) != 0;
    }

    /** The request's {@code write_flags}, or 0 where the struct is not the request's own. */
    private static int writeFlags(MemorySegment writeIn, long fh, long offset, long size) {
        if (writeIn.get(JAVA_LONG, WRITE_IN_FH) != fh || writeIn.get(JAVA_LONG, WRITE_IN_OFFSET) != offset
                || Integer.toUnsignedLong(writeIn.get(JAVA_INT, WRITE_IN_SIZE)) != size) {
            return 0;
        }
        return writeIn.get(JAVA_INT, WRITE_IN_WRITE_FLAGS);
    }

    /**
     * Sets {@code FUSE_INIT_EXT}, {@code FUSE_HANDLE_KILLPRIV_V2} and (if asked) {@code FUSE_DIRECT_IO_ALLOW_MMAP}
     * in a successful INIT reply. An older kernel ignores bits it does not know.
     *
     * @param header the {@code struct fuse_out_header}
     * @param initOut the {@code struct fuse_init_out} that follows it
     * @param allowMmap whether to ask for shared mappings of direct-I/O files
     * @return whether the reply was a successful one long enough to hold {@code flags2} (and so was changed)
     */
    static boolean patchInit(MemorySegment header, MemorySegment initOut, boolean allowMmap) {
        if (header.get(JAVA_INT, OUT_HEADER_ERROR) != 0 || initOut.byteSize() < INIT_OUT_FLAGS2 + JAVA_INT.byteSize()) {
            return false;
        }
        initOut.set(JAVA_INT, INIT_OUT_FLAGS, initOut.get(JAVA_INT, INIT_OUT_FLAGS) | FUSE_INIT_EXT
                | FUSE_HANDLE_KILLPRIV_V2);
        if (allowMmap) {
            initOut.set(JAVA_INT, INIT_OUT_FLAGS2, initOut.get(JAVA_INT, INIT_OUT_FLAGS2) | FLAGS2_DIRECT_IO_ALLOW_MMAP);
        }
        return true;
    }

    /**
     * Adds open flags to a successful open or create reply.
     *
     * @param header the {@code struct fuse_out_header}
     * @param body what follows it: a {@code fuse_open_out}, or a {@code fuse_entry_out} and a {@code fuse_open_out}
     * @param flags the open flags to add
     * @return whether the reply was changed
     */
    static boolean patchOpen(MemorySegment header, MemorySegment body, int flags) {
        if (header.get(JAVA_INT, OUT_HEADER_ERROR) != 0) {
            return false;
        }
        long at;
        if (body.byteSize() == OPEN_OUT_BYTES) {
            at = OPEN_OUT_FLAGS;
        } else if (body.byteSize() == ENTRY_OUT_BYTES + OPEN_OUT_BYTES) {
            at = ENTRY_OUT_BYTES + OPEN_OUT_FLAGS;
        } else {
            return false;
        }
        body.set(JAVA_INT, at, body.get(JAVA_INT, at) | flags);
        return true;
    }
}
