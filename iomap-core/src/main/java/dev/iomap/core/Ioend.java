package dev.iomap.core;

import dev.iomap.core.mm.Folio;
import dev.iomap.device.BlockDevice;
import dev.iomap.device.IoPurpose;
import dev.iomap.spi.Iomap;
import dev.iomap.spi.IomapFlag;
import dev.iomap.spi.IomapType;
import dev.iomap.spi.IoendCompletion;
import dev.iomap.spi.WritebackIoend;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

/**
 * A contiguous file range going to a contiguous device range through mappings of one type and one
 * set of flags: the kernel's {@code struct iomap_ioend} with its bio, submitted as one device write.
 *
 * <p>Built by one writeback pass ({@link Writeback}), which owns it until it submits it; after that it
 * is not changed. Completion ({@link #completion} for the adapter, then {@link #finishFolios}) runs on
 * the thread that submitted it when the device finished the write before returning, else on the
 * cache's {@code iomap-ioend-N} completion threads, never on the device's own threads.
 */
final class Ioend implements WritebackIoend {
    private final IomapType type;
    private final Set<IomapFlag> flags;
    private final long offset;
    private final long address;
    private final long validityCookie;
    private final BlockDevice device;
    private final List<Segment> segments = new ArrayList<>();
    private long length;

    /** One piece of one folio. */
    record Segment(Folio folio, int offset, int length) {
    }

    /**
     * Starts an empty ioend at file {@code offset} (the kernel's {@code iomap_alloc_ioend} and
     * {@code iomap_init_ioend}).
     */
    Ioend(Iomap iomap, long offset, BlockDevice device) {
        this.device = device;
        this.type = iomap.type();
        this.flags = iomap.flags();
        this.offset = offset;
        this.address = iomap.deviceAddress(offset);
        this.validityCookie = iomap.validityCookie();
    }

    /**
     * Whether {@code bytes} at file offset {@code pos}, mapped by {@code iomap}, can extend this ioend
     * (the kernel's {@code iomap_can_add_to_ioend}): same type and flags, contiguous in the file and on
     * the device, not the first byte of a {@link IomapFlag#BOUNDARY} mapping, and at most
     * {@code maxBytes} in all. The kernel compares only the {@code IOMAP_IOEND_NOMERGE_FLAGS}
     * ({@code IOMAP_IOEND_SHARED}, {@code IOMAP_IOEND_UNWRITTEN}); this compares every flag.
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

    /**
     * Adds {@code bytes} of a folio under writeback, merging with the last segment when it continues it
     * (the kernel's {@code bio_add_folio} in {@code iomap_add_to_ioend}); the folio's writeback then
     * waits for these bytes too.
     */
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

    @Override
    public Iomap range() {
        return new Iomap(offset, length, type, flags, address, null, validityCookie);
    }

    @Override
    public List<ByteBuffer> data() {
        List<ByteBuffer> views = new ArrayList<>(segments.size());
        for (Segment segment : segments) {
            views.add(segment.folio().buffer(segment.offset(), segment.length()).asReadOnlyBuffer());
        }
        return List.copyOf(views);
    }

    /** Writes the folios' bytes at the ioend's address: the kernel's {@code iomap_ioend_writeback_submit}. */
    @Override
    public CompletableFuture<Void> submit() {
        List<ByteBuffer> buffers = new ArrayList<>(segments.size());
        for (Segment segment : segments) {
            buffers.add(segment.folio().buffer(segment.offset(), segment.length()));
        }
        return device.write(address, buffers, IoPurpose.DATA);
    }

    /** @return what the adapter's {@code ioendCompleted} is told about this ioend */
    IoendCompletion completion(IOException error) {
        return new IoendCompletion(offset, length, type, flags, address, error);
    }

    /**
     * Ends writeback of every segment's bytes (the kernel's {@code iomap_finish_ioend_buffered_write},
     * reached through {@code iomap_finish_ioends}).
     */
    void finishFolios() {
        for (Segment segment : segments) {
            segment.folio().finishWriteback(segment.length());
        }
    }
}
