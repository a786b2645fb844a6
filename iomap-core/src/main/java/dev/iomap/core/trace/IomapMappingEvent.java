package dev.iomap.core.trace;

import dev.iomap.spi.Iomap;
import dev.iomap.spi.IomapInode;
import jdk.jfr.Category;
import jdk.jfr.Enabled;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.StackTrace;

/**
 * The kernel's {@code iomap_class}: a mapping an adapter returned for an inode. Abstract: each
 * tracepoint of the class is a subclass.
 */
@Category({"iomap4j", "iomap"})
@Enabled(false)
@StackTrace(false)
public abstract class IomapMappingEvent extends Event {
    /** The inode number ({@code ino}). */
    @Label("ino")
    long ino;

    /** The device address in bytes, -1 for none ({@code addr}; the kernel's is in bytes too). */
    @Label("addr")
    long addr;

    /** The mapping's first file byte ({@code offset}). */
    @Label("offset")
    long offset;

    /** The mapping's length in bytes ({@code length}). */
    @Label("length")
    long length;

    /** The mapping's type: HOLE, DELALLOC, MAPPED, UNWRITTEN or INLINE ({@code type}). */
    @Label("type")
    String type;

    /** The mapping's flags joined by {@code |}, e.g. {@code NEW|BOUNDARY} ({@code flags}). */
    @Label("flags")
    String flags;

    IomapMappingEvent() {
    }

    /** Fills the fields: the kernel's {@code TP_fast_assign} of the class. */
    final void set(IomapInode inode, Iomap iomap) {
        this.ino = inode.ino();
        this.addr = iomap.address();
        this.offset = iomap.offset();
        this.length = iomap.length();
        this.type = iomap.type().name();
        this.flags = TraceNames.flags(iomap.flags());
    }
}
