package dev.iomap.devices;

import static org.assertj.core.api.Assertions.assertThat;

import dev.iomap.device.IoPurpose;
import dev.iomap.device.SyncSubmit;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A file device does a write issued under {@link SyncSubmit#run} in the calling thread. */
class FileSyncSubmitTest {
    private static final int K4 = 4096;

    @TempDir
    Path dir;

    @Test
    void aWriteUnderSyncSubmitRunsInTheCallerAndReturnsCompleted() throws Exception {
        for (boolean direct : new boolean[] {false, true}) {
            Path image = dir.resolve("dev-" + direct + ".img");
            FileBlockDevice device;
            try {
                device = FileBlockDevice.open(image, K4, 1L << 20, direct);
            } catch (dev.iomap.api.NotSupportedException e) {
                continue; // a filesystem without O_DIRECT: the buffered device is enough
            }
            try (device) {
                AtomicReference<CompletableFuture<Void>> inline = new AtomicReference<>();
                AtomicReference<Thread> callbackThread = new AtomicReference<>();
                SyncSubmit.run(() -> {
                    CompletableFuture<Void> write = device.write(K4, block((byte) 7), IoPurpose.DATA);
                    inline.set(write);
                    write.thenRun(() -> callbackThread.set(Thread.currentThread()));
                });
                assertThat(inline.get()).isCompleted();
                assertThat(callbackThread.get()).isSameAs(Thread.currentThread());
                assertThat(device.inlineWrites()).isEqualTo(1);

                device.write(2 * K4, block((byte) 9), IoPurpose.DATA).join();
                assertThat(device.inlineWrites()).as("a write outside SyncSubmit.run goes to the write threads")
                        .isEqualTo(1);

                assertThat(read(device, K4)).containsOnly((byte) 7);
                assertThat(read(device, 2 * K4)).containsOnly((byte) 9);
                assertThat(device.stats().writes()).isEqualTo(2);
                assertThat(device.stats().bytesWritten()).isEqualTo(2L * K4);
            }
        }
    }

    @Test
    void anInterruptedCallerStillWritesInlineAndKeepsItsInterrupt() throws Exception {
        try (FileBlockDevice device = FileBlockDevice.open(dir.resolve("dev.img"), K4, 1L << 20, false)) {
            AtomicReference<CompletableFuture<Void>> inline = new AtomicReference<>();
            Thread.currentThread().interrupt();
            try {
                SyncSubmit.run(() -> inline.set(device.write(0, block((byte) 3), IoPurpose.DATA)));
                assertThat(Thread.currentThread().isInterrupted()).isTrue();
            } finally {
                Thread.interrupted();
            }
            assertThat(inline.get()).isCompleted();
            assertThat(inline.get().isCompletedExceptionally()).isFalse();
            assertThat(read(device, 0)).containsOnly((byte) 3);
            assertThat(device.inlineWrites()).isEqualTo(1);
        }
    }

    @Test
    void aFailedInlineWriteIsTheFuturesException() throws Exception {
        FileBlockDevice device = FileBlockDevice.open(dir.resolve("dev.img"), K4, 1L << 20, false);
        device.close();
        AtomicReference<CompletableFuture<Void>> inline = new AtomicReference<>();
        SyncSubmit.run(() -> inline.set(device.write(0, block((byte) 1), IoPurpose.DATA)));
        assertThat(inline.get()).isCompletedExceptionally();
        assertThat(device.inlineWrites()).isZero();
    }

    @Test
    void theHintHoldsOnlyInsideRun() {
        assertThat(SyncSubmit.callerWaits()).isFalse();
        boolean[] inside = new boolean[2];
        SyncSubmit.run(() -> {
            inside[0] = SyncSubmit.callerWaits();
            SyncSubmit.run(() -> inside[1] = SyncSubmit.callerWaits());
        });
        assertThat(inside).containsExactly(true, true);
        assertThat(SyncSubmit.callerWaits()).isFalse();
    }

    private static ByteBuffer block(byte value) {
        ByteBuffer buffer = ByteBuffer.allocateDirect(K4);
        byte[] bytes = new byte[K4];
        Arrays.fill(bytes, value);
        buffer.put(bytes).flip();
        return buffer;
    }

    private static byte[] read(FileBlockDevice device, long offset) throws Exception {
        ByteBuffer dst = ByteBuffer.allocate(K4);
        device.read(offset, dst);
        return dst.array();
    }
}
