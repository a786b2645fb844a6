package dev.iomap.adapter.support;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.iomap.api.InvalidRangeException;
import dev.iomap.device.IoPurpose;
import dev.iomap.devices.RamBlockDevice;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

class BlockIoTest {
    private final RamBlockDevice device = new RamBlockDevice(512, 8 * 512);

    @Test
    void readsAndWritesWholeBlocksByNumber() throws Exception {
        ByteBuffer two = ByteBuffer.allocate(1024);
        two.put(0, (byte) 1).put(1023, (byte) 2);

        BlockIo.write(device, 3, two, IoPurpose.METADATA);

        assertThat(two.position()).isZero();
        ByteBuffer read = BlockIo.read(device, 3, 2);
        assertThat(read).isEqualTo(two);
        assertThat(read.order()).isEqualTo(ByteOrder.LITTLE_ENDIAN);
        assertThat(device.stats().metadataBytesWritten()).isEqualTo(1024);
    }

    @Test
    void refusesPartialOrOutsideBlocks() {
        assertThatThrownBy(() -> BlockIo.write(device, 0, ByteBuffer.allocate(100), IoPurpose.DATA))
                .isInstanceOf(InvalidRangeException.class)
                .hasMessage("write at block 0: 100 bytes is not a whole number of 512-byte blocks");
        assertThatThrownBy(() -> BlockIo.read(device, 7, 2))
                .isInstanceOf(InvalidRangeException.class)
                .hasMessage("read: blocks [7, +2) are not inside the device's 8 blocks");
        assertThatThrownBy(() -> BlockIo.read(device, -1, 1)).isInstanceOf(InvalidRangeException.class);
    }

    @Test
    void awaitAllWaitsForEveryWriteAndThrowsTheFirstFailure() {
        var first = new IOException("first");
        var second = new IOException("second");
        var writes = List.of(CompletableFuture.<Void>completedFuture(null), CompletableFuture.<Void>failedFuture(first),
                CompletableFuture.<Void>failedFuture(second));

        assertThatThrownBy(() -> BlockIo.awaitAll(writes)).isSameAs(first);
        assertThat(first.getSuppressed()).containsExactly(second);
    }

    @Test
    void awaitUnwrapsUncheckedFailuresAndWrapsOtherCheckedOnes() {
        var unchecked = new IllegalStateException("bug");
        var checked = new Exception("odd");

        assertThatThrownBy(() -> BlockIo.await(CompletableFuture.failedFuture(unchecked))).isSameAs(unchecked);
        assertThatThrownBy(() -> BlockIo.await(CompletableFuture.failedFuture(checked)))
                .isInstanceOf(IOException.class)
                .hasMessage("device write failed")
                .hasCause(checked);
    }

    @Test
    void anInterruptedWaitKeepsTheInterrupt() {
        Thread.currentThread().interrupt();
        try {
            assertThatThrownBy(() -> BlockIo.await(new CompletableFuture<>()))
                    .isInstanceOf(InterruptedIOException.class);
            assertThat(Thread.currentThread().isInterrupted()).isTrue();
        } finally {
            Thread.interrupted();
        }
    }
}
