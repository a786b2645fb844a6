package dev.iomap.adapter.support;

import dev.iomap.device.BlockDevice;
import dev.iomap.api.InvalidRangeException;
import dev.iomap.device.IoPurpose;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;

/**
 * Synchronous block reads and writes by block number over a {@link BlockDevice}, whose own writes
 * are asynchronous. What every structure in this package uses to reach the device.
 *
 * <p>Stateless and thread-safe. Nothing here flushes: a write is on the device when the method
 * returns but durable only after the caller's next {@link BlockDevice#flush()}.
 */
public final class BlockIo {
    private BlockIo() {
    }

    /**
     * Reads whole blocks.
     *
     * @param device the device
     * @param blockNo first block
     * @param blocks how many, at least 1
     * @return a new heap buffer of {@code blocks * blockSize} bytes, position 0, little-endian
     * @throws InvalidRangeException if the blocks are not inside the device
     * @throws IOException if the device fails
     */
    public static ByteBuffer read(BlockDevice device, long blockNo, int blocks) throws IOException {
        int blockSize = device.blockSize();
        checkBlocks(device, "read", blockNo, blocks);
        ByteBuffer dst = ByteBuffer.allocate(Math.multiplyExact(blocks, blockSize));
        device.read(blockNo * blockSize, dst);
        return dst.flip().order(ByteOrder.LITTLE_ENDIAN);
    }

    /**
     * Writes whole blocks and waits until the device has them.
     *
     * @param device the device
     * @param blockNo first block
     * @param blocks the data, one after the other; total remaining length a multiple of the block
     *     size; positions unchanged
     * @param purpose data or metadata, for the device's statistics
     * @throws InvalidRangeException if the blocks are not inside the device or not whole
     * @throws IOException if the device fails or the calling thread is interrupted while waiting
     *     ({@link InterruptedIOException}, with the interrupt status kept)
     */
    public static void write(BlockDevice device, long blockNo, List<ByteBuffer> blocks, IoPurpose purpose)
            throws IOException {
        long bytes = 0;
        for (ByteBuffer block : blocks) {
            bytes += block.remaining();
        }
        int blockSize = device.blockSize();
        if (bytes % blockSize != 0) {
            throw new InvalidRangeException("write at block " + blockNo + ": " + bytes
                    + " bytes is not a whole number of " + blockSize + "-byte blocks");
        }
        checkBlocks(device, "write", blockNo, bytes / blockSize);
        await(device.write(blockNo * blockSize, blocks, purpose));
    }

    /**
     * Writes one or more whole blocks from one buffer; see {@link #write(BlockDevice, long, List, IoPurpose)}.
     *
     * @param device the device
     * @param blockNo first block
     * @param block the data, a whole number of blocks; position unchanged
     * @param purpose data or metadata
     * @throws IOException as for the list form
     */
    public static void write(BlockDevice device, long blockNo, ByteBuffer block, IoPurpose purpose)
            throws IOException {
        write(device, blockNo, List.of(block), purpose);
    }

    /**
     * Waits for a device write.
     *
     * @param write the device's future
     * @throws IOException the write's own {@link IOException}, or {@link InterruptedIOException} if the
     *     thread was interrupted while waiting (the interrupt status is kept)
     */
    public static void await(CompletableFuture<Void> write) throws IOException {
        try {
            write.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            var interrupted = new InterruptedIOException("interrupted while waiting for a device write");
            interrupted.initCause(e);
            throw interrupted;
        } catch (ExecutionException e) {
            switch (e.getCause()) {
                case IOException io -> throw io;
                case RuntimeException runtime -> throw runtime;
                case Error error -> throw error;
                case null, default -> throw new IOException("device write failed", e.getCause());
            }
        }
    }

    /**
     * Waits for several device writes, all of them even if some fail.
     *
     * @param writes the device's futures
     * @throws IOException the first failure (as {@link #await} reports it), later ones suppressed
     */
    public static void awaitAll(List<CompletableFuture<Void>> writes) throws IOException {
        IOException first = null;
        for (CompletableFuture<Void> write : writes) {
            try {
                await(write);
            } catch (IOException e) {
                if (first == null) {
                    first = e;
                } else {
                    first.addSuppressed(e);
                }
            }
        }
        if (first != null) {
            throw first;
        }
    }

    /** @return the number of blocks the device holds */
    static long blockCount(BlockDevice device) {
        return device.capacity() / device.blockSize();
    }

    private static void checkBlocks(BlockDevice device, String what, long blockNo, long blocks)
            throws InvalidRangeException {
        long count = blockCount(device);
        if (blockNo < 0 || blocks < 1 || blockNo > count - blocks) {
            throw new InvalidRangeException(what + ": blocks [" + blockNo + ", +" + blocks
                    + ") are not inside the device's " + count + " blocks");
        }
    }
}
