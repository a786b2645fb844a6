package dev.iomap.core.trace;

import dev.iomap.spi.IomapInode;
import jdk.jfr.Category;
import jdk.jfr.Enabled;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.StackTrace;

/**
 * The kernel's {@code iomap_range_class}: a byte range of one inode, with the inode's size when the
 * event happened. Abstract: each tracepoint of the class is a subclass.
 */
@Category({"iomap4j", "iomap"})
@Enabled(false)
@StackTrace(false)
public abstract class IomapRangeEvent extends Event {
    /** The inode number ({@code ino}); -1 for a folio of a cache with no inode (tests). */
    @Label("ino")
    long ino;

    /** The file size ({@code size}, the kernel's {@code i_size_read}). */
    @Label("size")
    long size;

    /** The first byte of the range ({@code offset}). */
    @Label("offset")
    long offset;

    /** The range's length in bytes ({@code length}). */
    @Label("length")
    long length;

    IomapRangeEvent() {
    }

    /** Fills the fields: the kernel's {@code TP_fast_assign} of the class; a null inode records ino -1. */
    final void set(IomapInode inode, long offset, long length) {
        this.ino = inode == null ? -1 : inode.ino();
        this.size = inode == null ? -1 : inode.size();
        this.offset = offset;
        this.length = length;
    }
}
