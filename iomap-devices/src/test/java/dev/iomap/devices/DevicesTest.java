package dev.iomap.devices;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.iomap.device.DeviceIoException;
import dev.iomap.device.DeviceRangeException;
import dev.iomap.device.IoPurpose;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.api.Test;

class DevicesTest {

    private static ByteBuffer filled(int length, int value) {
        byte[] bytes = new byte[length];
        Arrays.fill(bytes, (byte) value);
        return ByteBuffer.wrap(bytes);
    }

    private static byte[] read(dev.iomap.device.BlockDevice device, long offset, int length) throws IOException {
        ByteBuffer dst = ByteBuffer.allocate(length);
        device.read(offset, dst);
        assertThat(dst.hasRemaining()).isFalse();
        return dst.array();
    }

    @Test
    void ramDeviceReadsWhatWasWrittenAndZeroesElsewhere() throws IOException {
        RamBlockDevice device = new RamBlockDevice(512, 1 << 20);
        ByteBuffer src = filled(1024, 7);
        device.write(65536 - 512, src, IoPurpose.DATA).join();
        assertThat(src.position()).as("the source position is left alone").isZero();
        assertThat(read(device, 65536 - 512, 1024)).containsOnly(7);
        assertThat(read(device, 0, 512)).containsOnly(0);
        device.discard(65536, 512);
        assertThat(read(device, 65536, 512)).containsOnly(0);
        assertThat(device.stats().dataBytesWritten()).isEqualTo(1024);
        assertThat(device.stats().discardedBytes()).isEqualTo(512);
    }

    @Test
    void ramDeviceRefusesBadRangesAndIoAfterCloseButKeepsItsImage() throws IOException {
        RamBlockDevice device = new RamBlockDevice(512, 4096);
        assertThatThrownBy(() -> device.read(1, ByteBuffer.allocate(512))).isInstanceOf(DeviceRangeException.class);
        assertThatThrownBy(() -> device.read(4096, ByteBuffer.allocate(512))).isInstanceOf(DeviceRangeException.class);
        assertThatThrownBy(() -> device.write(0, ByteBuffer.allocate(100), IoPurpose.DATA).join())
                .isInstanceOf(CompletionException.class).hasCauseInstanceOf(DeviceRangeException.class);
        device.write(0, filled(512, 1), IoPurpose.DATA).join();
        device.close();
        assertThatThrownBy(device::flush).isInstanceOf(IOException.class);
        assertThat(device.peek(0, 512)).containsOnly(1);
        RamBlockDevice copy = device.copy();
        copy.write(0, filled(512, 2), IoPurpose.DATA).join();
        assertThat(device.peek(0, 512)).as("a copy is independent").containsOnly(1);
    }

    /** @return a power-cut device whose first sector holds 1s durably and 2s not yet flushed */
    private static PowerCutDevice oneFlushedOneNot() throws IOException {
        PowerCutDevice device = new PowerCutDevice(new RamBlockDevice(512, 8192));
        device.write(0, filled(512, 1), IoPurpose.DATA).join();
        device.flush();
        device.write(0, filled(512, 2), IoPurpose.DATA).join();
        return device;
    }

    @Test
    void aPowerCutKeepsExactlyWhatWasFlushed() throws IOException {
        PowerCutDevice device = oneFlushedOneNot();
        device.write(512, filled(512, 3), IoPurpose.METADATA).join();
        assertThat(read(device, 0, 512)).as("reads see unflushed writes").containsOnly(2);
        assertThat(device.unflushedWrites()).isEqualTo(2);
        RamBlockDevice image = device.cut(CutMode.LOSE_UNFLUSHED, new Random(1));
        assertThat(image.peek(0, 512)).containsOnly(1);
        assertThat(image.peek(512, 512)).containsOnly(0);
        assertThatThrownBy(() -> device.read(0, ByteBuffer.allocate(512))).isInstanceOf(DeviceIoException.class);
        assertThatThrownBy(() -> device.write(0, filled(512, 1), IoPurpose.DATA).join())
                .hasCauseInstanceOf(DeviceIoException.class);
        assertThatThrownBy(device::flush).isInstanceOf(DeviceIoException.class);
    }

    @Test
    void tornImagesHoldOnlyOldOrNewSectorsAndReproduceFromTheSeed() throws IOException {
        PowerCutDevice device = new PowerCutDevice(new RamBlockDevice(512, 1 << 16));
        device.write(0, filled(1 << 16, 1), IoPurpose.DATA).join();
        device.flush();
        for (int i = 0; i < 8; i++) {
            device.write(i * 8192L, filled(8192, 10 + i), IoPurpose.DATA).join();
        }
        RamBlockDevice first = device.image(CutMode.TEAR_AND_REORDER, new Random(42));
        RamBlockDevice again = device.image(CutMode.TEAR_AND_REORDER, new Random(42));
        assertThat(first.peek(0, 1 << 16)).isEqualTo(again.peek(0, 1 << 16));
        boolean sawOld = false;
        boolean sawNew = false;
        for (int sector = 0; sector < 128; sector++) {
            byte[] bytes = first.peek(sector * 512L, 512);
            int expectedNew = 10 + sector / 16;
            assertThat(bytes[0] == 1 || bytes[0] == expectedNew).as("sector %d", sector).isTrue();
            assertThat(bytes).as("a sector is written whole or not at all").containsOnly(bytes[0]);
            sawOld |= bytes[0] == 1;
            sawNew |= bytes[0] != 1;
        }
        assertThat(sawOld && sawNew).as("some writes kept, some lost").isTrue();
    }

    @Test
    void theWriteListenerSeesEveryCompletedWrite() {
        PowerCutDevice device = new PowerCutDevice(new RamBlockDevice(512, 8192));
        List<Long> seen = new java.util.ArrayList<>();
        device.onWrite(seen::add);
        device.write(0, filled(512, 1), IoPurpose.DATA).join();
        device.write(512, List.of(filled(512, 2), filled(512, 3)), IoPurpose.DATA).join();
        assertThat(seen).containsExactly(1L, 2L);
        assertThat(device.completedWrites()).isEqualTo(2);
    }

    @Test
    void theFlushListenerHearsEachFlushBeforeItMakesAnythingDurable() throws IOException {
        PowerCutDevice device = new PowerCutDevice(new RamBlockDevice(512, 8192));
        List<Long> seen = new java.util.ArrayList<>();
        List<RamBlockDevice> images = new java.util.ArrayList<>();
        device.onFlush(count -> {
            seen.add(count);
            images.add(device.image(CutMode.LOSE_UNFLUSHED, new Random(0)));
        });
        device.write(0, filled(512, 1), IoPurpose.DATA).join();
        device.flush();
        device.flush();
        assertThat(seen).containsExactly(1L, 2L);
        assertThat(images.get(0).peek(0, 512)).as("cut inside the first flush").containsOnly(0);
        assertThat(images.get(1).peek(0, 512)).containsOnly(1);

        device.onFlush(count -> device.cut(CutMode.LOSE_UNFLUSHED, new Random(0)));
        device.write(0, filled(512, 2), IoPurpose.DATA).join();
        assertThatThrownBy(device::flush).isInstanceOf(DeviceIoException.class);
        assertThat(device.unflushedWrites()).as("a flush the power went out in made nothing durable").isOne();
    }

    @Test
    void losingSomeWritesKeepsEachWriteWholeAndReproducesFromTheSeed() throws IOException {
        PowerCutDevice device = new PowerCutDevice(new RamBlockDevice(512, 1 << 16));
        for (int i = 0; i < 16; i++) {
            device.write(i * 4096L, filled(4096, 10 + i), IoPurpose.DATA).join();
        }
        int kept = 0;
        for (int seed = 0; seed < 20; seed++) {
            RamBlockDevice image = device.image(CutMode.LOSE_SOME_WRITES, new Random(seed));
            assertThat(image.peek(0, 1 << 16))
                    .isEqualTo(device.image(CutMode.LOSE_SOME_WRITES, new Random(seed)).peek(0, 1 << 16));
            for (int i = 0; i < 16; i++) {
                byte[] bytes = image.peek(i * 4096L, 4096);
                assertThat(bytes[0] == 0 || bytes[0] == 10 + i).as("seed %d, write %d", seed, i).isTrue();
                assertThat(bytes).as("a write is kept whole or not at all").containsOnly(bytes[0]);
                kept += bytes[0] == 0 ? 0 : 1;
            }
        }
        assertThat(kept).as("some writes kept, some lost").isBetween(1, 20 * 16 - 1);
    }

    @Test
    void losingSomeBlocksTearsWritesAtBlocksInWriteOrder() throws IOException {
        PowerCutDevice device = new PowerCutDevice(new RamBlockDevice(512, 8192));
        device.write(0, filled(4096, 1), IoPurpose.DATA).join();
        device.write(4096, filled(4096, 2), IoPurpose.DATA).join();
        RamBlockDevice image = device.image(CutMode.LOSE_SOME_BLOCKS, new Random(7));
        boolean sawKept = false;
        boolean sawLost = false;
        for (int sector = 0; sector < 16; sector++) {
            byte[] bytes = image.peek(sector * 512L, 512);
            assertThat(bytes[0] == 0 || bytes[0] == 1 + sector / 8).as("sector %d", sector).isTrue();
            assertThat(bytes).as("a block is written whole or not at all").containsOnly(bytes[0]);
            sawKept |= bytes[0] != 0;
            sawLost |= bytes[0] == 0;
        }
        assertThat(sawKept && sawLost).as("writes torn").isTrue();
    }

    @Test
    void aDiscardIsOneUnflushedChangeOfZeroes() throws IOException {
        PowerCutDevice device = new PowerCutDevice(new RamBlockDevice(4096, 4 << 20));
        device.write(0, filled(3 << 20, 1), IoPurpose.DATA).join();
        device.flush();
        device.discard(4096, 2 << 20);
        assertThat(read(device, 4096, 4096)).containsOnly(0);
        assertThat(device.unflushedWrites()).isOne();
        assertThat(device.image(CutMode.LOSE_UNFLUSHED, new Random(0)).peek(4096, 4096)).containsOnly(1);
        RamBlockDevice kept = device.image(CutMode.LOSE_SOME_WRITES, new Random(1));
        assertThat(kept.peek(4096, 2 << 20)).as("whole or not at all").containsOnly(kept.peek(4096, 1)[0]);
        device.flush();
        assertThat(device.image(CutMode.LOSE_UNFLUSHED, new Random(0)).peek(4096, 2 << 20)).containsOnly(0);
        assertThat(device.stats().discardedBytes()).isEqualTo(2 << 20);
    }

    @Test
    void aRestartedDeviceHoldsTheImageAndWorksAgain() throws IOException {
        PowerCutDevice device = oneFlushedOneNot();
        device.cut(CutMode.LOSE_UNFLUSHED, new Random(1));
        assertThat(device.isPowerOff()).isTrue();

        device.restart(CutMode.LOSE_UNFLUSHED, new Random(1));

        assertThat(device.isPowerOff()).isFalse();
        assertThat(device.unflushedWrites()).isZero();
        assertThat(read(device, 0, 512)).containsOnly(1);
        device.write(512, filled(512, 3), IoPurpose.DATA).join();
        device.flush();
        assertThat(device.image(CutMode.LOSE_UNFLUSHED, new Random(1)).peek(512, 512)).containsOnly(3);
        assertThat(device.stats().writes()).as("counters stay").isEqualTo(3);
    }

    @Test
    void pokeDamagesWhatReadsSeeAndWhatACutKeeps() throws IOException {
        PowerCutDevice device = new PowerCutDevice(new RamBlockDevice(512, 8192));
        device.write(0, filled(512, 1), IoPurpose.DATA).join();
        device.poke(1000, new byte[] {7, 7}, 0, 2);
        assertThat(device.peek(999, 4)).containsExactly(0, 7, 7, 0);
        assertThat(device.peek(0, 2)).containsExactly(1, 1);
        assertThat(device.image(CutMode.LOSE_UNFLUSHED, new Random(0)).peek(999, 4)).containsExactly(0, 7, 7, 0);
        assertThat(device.stats().writes()).as("not counted").isOne();
        assertThatThrownBy(() -> device.peek(8192, 1)).isInstanceOf(DeviceRangeException.class);
    }

    @Test
    void faultsHitMatchingRequestsTheRightNumberOfTimes() throws IOException {
        RamBlockDevice inner = new RamBlockDevice(512, 1 << 16);
        FaultInjectingDevice device = new FaultInjectingDevice(inner);
        device.inject(Fault.writes(4096, 512).times(1));
        device.inject(Fault.metadataWrites());
        device.inject(Fault.reads(8192, 1024));
        device.write(0, filled(512, 1), IoPurpose.DATA).join();
        assertThatThrownBy(() -> device.write(3584, filled(1024, 1), IoPurpose.DATA).join())
                .hasCauseInstanceOf(DeviceIoException.class);
        device.write(3584, filled(1024, 1), IoPurpose.DATA).join();
        assertThatThrownBy(() -> device.write(0, filled(512, 1), IoPurpose.METADATA).join())
                .hasCauseInstanceOf(DeviceIoException.class);
        assertThatThrownBy(() -> device.read(8704, ByteBuffer.allocate(512)))
                .isInstanceOf(DeviceIoException.class).hasMessageContaining("device offset 8704");
        device.read(9216, ByteBuffer.allocate(512));
        assertThat(device.injected()).hasSize(3);
        device.clearFaults();
        device.write(0, filled(512, 1), IoPurpose.METADATA).join();
    }

    @Test
    void aFaultAfterSomeRequestsLetsThemPassAndFailsTheRest() throws IOException {
        FaultInjectingDevice device = new FaultInjectingDevice(new RamBlockDevice(512, 1 << 16));
        device.inject(Fault.writes(0, Long.MAX_VALUE).after(2));
        device.inject(Fault.flushes().after(1).times(1));
        device.write(0, filled(512, 1), IoPurpose.DATA).join();
        device.write(512, filled(512, 1), IoPurpose.METADATA).join();
        for (int i = 0; i < 2; i++) {
            assertThatThrownBy(() -> device.write(1024, filled(512, 1), IoPurpose.DATA).join())
                    .hasCauseInstanceOf(DeviceIoException.class);
        }
        device.flush();
        assertThatThrownBy(device::flush).isInstanceOf(DeviceIoException.class);
        device.flush();
        assertThat(device.injected()).extracting(FaultInjectingDevice.Injected::kind)
                .containsExactly(Fault.Kind.WRITE, Fault.Kind.WRITE, Fault.Kind.FLUSH);
        assertThat(device.stats().writes()).isEqualTo(2);
        assertThatThrownBy(() -> Fault.flushes().after(-1)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void aTornFaultWritesWhatPrecedesTheFailingRange() throws IOException {
        RamBlockDevice inner = new RamBlockDevice(512, 1 << 16);
        FaultInjectingDevice device = new FaultInjectingDevice(inner);
        device.inject(Fault.writes(1024, 512).torn());
        assertThatThrownBy(() -> device.write(0, filled(2048, 9), IoPurpose.DATA).join())
                .hasCauseInstanceOf(DeviceIoException.class);
        assertThat(inner.peek(0, 1024)).containsOnly(9);
        assertThat(inner.peek(1024, 1024)).containsOnly(0);
    }

    @Test
    void theCountingDeviceRecordsRequests() throws IOException {
        CountingDevice device = new CountingDevice(new RamBlockDevice(512, 1 << 16));
        device.write(0, filled(512, 1), IoPurpose.DATA).join();
        device.record(true);
        device.write(1024, filled(1024, 1), IoPurpose.METADATA).join();
        device.flush();
        device.read(0, ByteBuffer.allocate(512));
        assertThat(device.requests()).containsExactly(
                new CountingDevice.Request(Fault.Kind.WRITE, 1024, 1024, IoPurpose.METADATA),
                new CountingDevice.Request(Fault.Kind.FLUSH, 0, 0, null),
                new CountingDevice.Request(Fault.Kind.READ, 0, 512, null));
        assertThat(device.stats().writes()).isEqualTo(2);
        assertThat(device.stats().flushes()).isEqualTo(1);
    }
}
