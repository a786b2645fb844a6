package dev.iomap.testkit;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * A buffer that faults part way, the JVM's counterpart of a user buffer that faults in the kernel's copy
 * from user memory: a read-only mapping of a temporary file holding the bytes given, truncated after it
 * was mapped, so that touching the buffer past the bytes kept raises the JVM's {@link InternalError} ("a
 * fault occurred in an unsafe memory access operation") instead of reading. The temporary file is deleted
 * at {@link #close()} (the mapping itself goes with the buffer).
 *
 * <pre>{@code
 * try (FaultingBuffer source = new FaultingBuffer(data, FaultingBuffer.PAGE)) {
 *     int kept = file.write(pos, source.buffer());   // at most PAGE bytes
 * }
 * }</pre>
 */
public final class FaultingBuffer implements AutoCloseable {
    /**
     * 64 KiB: a multiple of every page size Linux uses (4, 16 and 64 KiB), so a buffer kept to a multiple of
     * it faults exactly there on any host.
     */
    public static final int PAGE = 64 << 10;

    private final Path file;
    private final MappedByteBuffer buffer;

    /**
     * @param data the buffer's bytes
     * @param keptBytes bytes that stay readable: a multiple of {@link #PAGE} (or of the host's page size),
     *     at most {@code data.length}
     * @throws IOException if the temporary file cannot be written, mapped or truncated
     * @throws IllegalArgumentException if {@code keptBytes} is negative or past the data
     */
    public FaultingBuffer(byte[] data, int keptBytes) throws IOException {
        if (keptBytes < 0 || keptBytes > data.length) {
            throw new IllegalArgumentException("keptBytes " + keptBytes + " outside [0, " + data.length + "]");
        }
        file = Files.createTempFile("iomap-faulting-buffer", ".bin");
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            ByteBuffer src = ByteBuffer.wrap(data);
            while (src.hasRemaining()) {
                channel.write(src, src.position());
            }
            buffer = channel.map(FileChannel.MapMode.READ_ONLY, 0, data.length);
            channel.truncate(keptBytes);
        } catch (IOException | RuntimeException e) {
            Files.deleteIfExists(file);
            throw e;
        }
    }

    /** @return the mapped buffer, positioned at 0, faulting from the bytes kept on */
    public MappedByteBuffer buffer() {
        return buffer;
    }

    /** Deletes the temporary file. */
    @Override
    public void close() throws IOException {
        Files.deleteIfExists(file);
    }
}
