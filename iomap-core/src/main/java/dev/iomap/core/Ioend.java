package dev.iomap.core;

import dev.iomap.spi.Iomap;
import dev.iomap.spi.IomapFlag;
import dev.iomap.spi.IomapType;
import dev.iomap.spi.IoendCompletion;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * A contiguous file range going to a contiguous device range through mappings of one type and one
 * set of flags: the kernel's {@code struct iomap_ioend} with its bio. Built by one writeback thread,
 * completed on the device's completion thread.
 */
final class Ioend {
    private final IomapType type;
    private final Set<IomapFlag> flags;
    private final long offset;
    private final long address;
    private final List<Segment> segments = new ArrayList<>();
    private long length;

    /** One piece of one folio. */
    record Segment(Folio folio, int offset, int length) {
    }

    Ioend(Iomap iomap, long offset) {
        this.type = iomap.type();
        this.flags = iomap.flags();
        this.offset = offset;
        this.address = iomap.deviceAddress(offset);
    }

    /**
     * Whether {@code length} bytes at file offset {@code pos}, mapped by {@code iomap}, can extend this
     * ioend: same type and flags, contiguous in the file and on the device, no boundary, within the cap.
     */
    boolean canAppend(long pos, long bytes, Iomap iomap, long maxBytes) {
        if (iomap.type() != type || !iomap.flags().equals(flags)) {
            return false;
        }
        if (iomap.has(IomapFlag.BOUNDARY) && pos == iomap.offset()) {
            return false;
        }
        return pos == offset + length
                && iomap.deviceAddress(pos) == address + length
                && length + bytes <= maxBytes;
    }

    void append(Folio folio, int folioOffset, int bytes) {
        int last = segments.size() - 1;
        if (last >= 0 && segments.get(last).folio() == folio
                && segments.get(last).offset() + segments.get(last).length() == folioOffset) {
            Segment prev = segments.get(last);
            segments.set(last, new Segment(folio, prev.offset(), prev.length() + bytes));
        } else {
            segments.add(new Segment(folio, folioOffset, bytes));
        }
        folio.addWritebackPending(bytes);
        length += bytes;
    }

    long address() {
        return address;
    }

    long length() {
        return length;
    }

    List<ByteBuffer> buffers() {
        List<ByteBuffer> buffers = new ArrayList<>(segments.size());
        for (Segment segment : segments) {
            buffers.add(segment.folio().buffer(segment.offset(), segment.length()));
        }
        return buffers;
    }

    IoendCompletion completion(IOException error) {
        return new IoendCompletion(offset, length, type, flags, address, error);
    }

    /** Ends writeback of every segment's bytes. */
    void finishFolios() {
        for (Segment segment : segments) {
            segment.folio().finishWriteback(segment.length());
        }
    }
}
