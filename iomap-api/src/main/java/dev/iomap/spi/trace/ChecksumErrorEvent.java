package dev.iomap.spi.trace;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Enabled;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;

/**
 * A data extent failed its checksum on read (bcachefs-like): the read fails with EIO and nothing of the
 * extent is copied. bcachefs has no tracepoint of this name: it logs the error
 * ({@code bch2_csum_err_msg}) and retries the read ({@code read_retry}); this event carries what that
 * message says.
 */
@Name(ChecksumErrorEvent.NAME)
@Label("checksum_error")
@Description("A data extent failed its checksum on read: the inode, the extent's file offset and device"
        + " address, the checksum type, and the checksum stored and the one computed.")
@Category({"iomap4j", "bcachefs"})
@Enabled(false)
@StackTrace(false)
public final class ChecksumErrorEvent extends Event {
    /** The event's name: {@code bcachefs.checksum_error}. */
    public static final String NAME = "bcachefs.checksum_error";

    @Label("inode")
    long inode;

    @Label("offset")
    long offset;

    @Label("dev_offset")
    long deviceOffset;

    @Label("csum_type")
    String checksumType;

    @Label("expected")
    long expected;

    @Label("got")
    long got;

    /**
     * Records the event if a recording enables it; otherwise does nothing and allocates nothing.
     *
     * @param inode the inode
     * @param offset the extent's first file byte
     * @param deviceOffset where the extent lies on the device, in bytes
     * @param checksumType the checksum's name (crc32c, xxhash, ...)
     * @param expected the checksum stored in the extent key
     * @param got the checksum of the data read
     */
    public static void emit(long inode, long offset, long deviceOffset, String checksumType, long expected,
            long got) {
        ChecksumErrorEvent event = new ChecksumErrorEvent();
        if (!event.shouldCommit()) {
            return;
        }
        event.inode = inode;
        event.offset = offset;
        event.deviceOffset = deviceOffset;
        event.checksumType = checksumType;
        event.expected = expected;
        event.got = got;
        event.commit();
    }
}
