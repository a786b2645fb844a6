package dev.iomap.core.dio;

import dev.iomap.device.BlockDevice;
import dev.iomap.device.IoPurpose;
import dev.iomap.spi.Iomap;
import dev.iomap.spi.WritebackIoend;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * One run of a direct write as the adapter's {@code writebackSubmit} sees it: the caller's bytes for
 * one mapping, written at the mapping's address by {@link #submit} (the kernel's
 * {@code iomap_dio_submit_bio}, or a filesystem's {@code iomap_dio_ops->submit_io}).
 *
 * @param range the run's file range, device address, type and flags
 * @param part the caller's bytes for the run, positioned at 0, {@code range.length()} remaining
 * @param device the filesystem's device
 */
record DirectIoend(Iomap range, ByteBuffer part, BlockDevice device) implements WritebackIoend {

    @Override
    public List<ByteBuffer> data() {
        return List.of(part.asReadOnlyBuffer());
    }

    @Override
    public CompletableFuture<Void> submit() {
        return device.write(range.address(), List.of(part.duplicate()), IoPurpose.DATA);
    }
}
