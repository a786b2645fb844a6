package dev.iomap.adapter.gfs2;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.iomap.device.BlockDevice;
import dev.iomap.device.IoPurpose;
import dev.iomap.device.SyncSubmit;
import dev.iomap.device.ForwardingBlockDevice;
import dev.iomap.devices.RamBlockDevice;
import java.io.IOException;
import java.io.Serial;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * The order of a cluster node's lease check and its device write (issue 35 item 9): the check that
 * counts runs in the thread that hands the write to the device, right before, with the device told to
 * write in that thread ({@link SyncSubmit}); a write that completed after the lease ended fails and is
 * counted late; a refused write never reaches the device.
 */
class FencedDeviceTest {
    private static final int BLOCK = 4096;

    /** What the check throws once the lease is over. */
    private static final class LeaseOver extends IOException {
        @Serial
        private static final long serialVersionUID = 1L;

        LeaseOver() {
            super("lease over");
        }
    }

    /** Records, at each write it gets, which thread checked last and whether it may write in its caller's thread. */
    private static final class Recording extends ForwardingBlockDevice {
        final AtomicReference<Thread> lastCheck = new AtomicReference<>();
        volatile Thread checkedBeforeWrite;
        volatile Thread writer;
        volatile boolean callerWaits;
        volatile Runnable duringWrite = () -> { };

        Recording(BlockDevice below) {
            super(below);
        }

        @Override
        public CompletableFuture<Void> write(long offset, List<ByteBuffer> srcs, IoPurpose purpose) {
            checkedBeforeWrite = lastCheck.get();
            writer = Thread.currentThread();
            callerWaits = SyncSubmit.callerWaits();
            duringWrite.run();
            return delegate.write(offset, srcs, purpose);
        }
    }

    @Test
    void aBackgroundWriteIsCheckedInTheThreadThatHandsItToTheDeviceWhichWritesItThere() throws Exception {
        Recording below = new Recording(new RamBlockDevice(BLOCK, 16 * BLOCK));
        FencedDevice fenced = new FencedDevice(below, () -> below.lastCheck.set(Thread.currentThread()));

        fenced.write(0, ByteBuffer.wrap(block(7)), IoPurpose.DATA).get(10, TimeUnit.SECONDS);

        assertThat(below.checkedBeforeWrite).as("the thread of the last check before the device's write")
                .isSameAs(below.writer);
        assertThat(below.callerWaits).as("the device is told to write in that thread (no queue after the check)")
                .isTrue();
        assertThat(read(below, 0)).isEqualTo(block(7));
    }

    @Test
    void aWriteThatCompletedAfterTheLeaseEndedFailsAndIsCountedLate() {
        Recording below = new Recording(new RamBlockDevice(BLOCK, 16 * BLOCK));
        AtomicBoolean leaseOver = new AtomicBoolean();
        FencedDevice fenced = new FencedDevice(below, () -> {
            if (leaseOver.get()) {
                throw new LeaseOver();
            }
        });
        below.duringWrite = () -> leaseOver.set(true);   // the lease ends while the write is on its way

        CompletableFuture<Void> write = fenced.write(0, ByteBuffer.wrap(block(3)), IoPurpose.METADATA);

        assertThatThrownBy(() -> write.get(10, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
                .cause().isInstanceOf(LeaseOver.class);
        assertThat(fenced.lateWrites()).isEqualTo(1);
        assertThat(fenced.refused()).isZero();
    }

    @Test
    void aWriteFlushOrDiscardRefusedByTheCheckNeverReachesTheDevice() throws Exception {
        Recording below = new Recording(new RamBlockDevice(BLOCK, 16 * BLOCK));
        FencedDevice fenced = new FencedDevice(below, () -> {
            throw new LeaseOver();
        });

        CompletableFuture<Void> write = fenced.write(0, ByteBuffer.wrap(block(5)), IoPurpose.DATA);
        assertThatThrownBy(() -> write.get(10, TimeUnit.SECONDS)).cause().isInstanceOf(LeaseOver.class);
        assertThatThrownBy(fenced::flush).isInstanceOf(LeaseOver.class);
        assertThatThrownBy(() -> fenced.discard(0, BLOCK)).isInstanceOf(LeaseOver.class);

        assertThat(below.writer).as("a write that reached the device").isNull();
        assertThat(below.stats().flushes()).isZero();
        assertThat(fenced.refused()).isEqualTo(3);
        assertThat(read(below, 0)).isEqualTo(new byte[BLOCK]);
    }

    private static byte[] block(int seed) {
        byte[] bytes = new byte[BLOCK];
        Arrays.fill(bytes, (byte) seed);
        return bytes;
    }

    private static byte[] read(BlockDevice device, long offset) throws IOException {
        ByteBuffer dst = ByteBuffer.allocate(BLOCK);
        device.read(offset, dst);
        return dst.array();
    }
}
