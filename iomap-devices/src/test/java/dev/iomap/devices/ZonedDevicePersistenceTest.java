package dev.iomap.devices;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.iomap.device.BlockDevice;
import dev.iomap.api.CorruptFileSystemException;
import dev.iomap.device.IoPurpose;
import dev.iomap.device.Zone;
import dev.iomap.device.ZoneCondition;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The zone state survives a close and reopen of a file-backed zoned device, and a power cut leaves
 * every write pointer at its durable value with the flushed bytes below it; over a file, whose
 * writes complete on two threads in any order, writes queued to one zone still land in order.
 */
class ZonedDevicePersistenceTest {
    static final int BLOCK = 4096;
    static final long ZONE = 64L * BLOCK;
    static final ZoneLayout LAYOUT = new ZoneLayout(ZONE, ZONE, 6, 1, 0);
    static final long SEED = Long.getLong("iomap.test.seed", 0);

    @TempDir
    Path dir;
    private final Random random = new Random(SEED);

    @Test
    void aReopenedFileDeviceHasItsZonesBack() throws Exception {
        Path image = dir.resolve("zoned.img");
        byte[] data = randomBytes(5 * BLOCK);
        byte[] conventional = randomBytes(BLOCK);
        try (ZonedDevice device = ZonedDevice.create(FileBlockDevice.open(image, BLOCK, LAYOUT.backingBytes(BLOCK),
                false), LAYOUT)) {
            device.write(ZONE, ByteBuffer.wrap(data), IoPurpose.DATA).get();
            device.write(3 * BLOCK, ByteBuffer.wrap(conventional), IoPurpose.DATA).get();
            device.finishZone(3 * ZONE);
            device.openZone(4 * ZONE);
        }

        try (ZonedDevice device = ZonedDevice.open(FileBlockDevice.open(image, BLOCK, false))) {
            assertThat(device.layout()).isEqualTo(LAYOUT);
            assertThat(device.zone(1).writePointer()).isEqualTo(ZONE + data.length);
            assertThat(device.zone(1).condition()).isEqualTo(ZoneCondition.CLOSED);
            assertThat(device.zone(3).condition()).isEqualTo(ZoneCondition.FULL);
            assertThat(device.zone(4).condition()).isEqualTo(ZoneCondition.EMPTY);
            assertThat(read(device, ZONE, data.length)).isEqualTo(data);
            assertThat(read(device, 3 * BLOCK, BLOCK)).isEqualTo(conventional);
            device.write(ZONE + data.length, ByteBuffer.allocate(BLOCK), IoPurpose.DATA).get();
        }
    }

    @Test
    void aDeviceThatWasNeverZonedIsRefused() throws IOException {
        try (RamBlockDevice blank = new RamBlockDevice(BLOCK, LAYOUT.backingBytes(BLOCK))) {
            assertThatThrownBy(() -> ZonedDevice.open(blank)).isInstanceOf(CorruptFileSystemException.class)
                    .hasMessageContaining("not a zoned device");
        }
    }

    /**
     * Power cuts at every stage: what was flushed is there up to the durable write pointer; what was
     * written after is gone, whichever of the unflushed writes (data or zone state) the cut kept.
     */
    @Test
    void afterAPowerCutEachWritePointerIsTheDurableOne() throws Exception {
        for (int round = 0; round < 50; round++) {
            var backing = new PowerCutDevice(new RamBlockDevice(BLOCK, LAYOUT.backingBytes(BLOCK)));
            ZonedDevice device = ZonedDevice.create(backing, LAYOUT);
            byte[] durable = randomBytes(3 * BLOCK);
            device.write(2 * ZONE, ByteBuffer.wrap(durable), IoPurpose.DATA).get();
            device.write(4 * ZONE, ByteBuffer.allocate(2 * BLOCK), IoPurpose.DATA).get();
            device.flush();
            device.resetZone(4 * ZONE);
            device.write(2 * ZONE + durable.length, ByteBuffer.wrap(randomBytes(2 * BLOCK)), IoPurpose.DATA).get();
            device.write(4 * ZONE, ByteBuffer.wrap(randomBytes(BLOCK)), IoPurpose.DATA).get();
            if (round % 2 == 1) {
                device.write(3 * ZONE, ByteBuffer.allocate(BLOCK), IoPurpose.DATA).get();
            }

            try (ZonedDevice after = ZonedDevice.open(backing.image(CutMode.LOSE_SOME_WRITES, random))) {
                Zone zone = after.zone(2);
                assertThat(zone.writePointer()).as("round %d", round).isEqualTo(2 * ZONE + durable.length);
                assertThat(read(after, 2 * ZONE, (int) ZONE)).startsWith(durable);
                assertThat(Arrays.copyOfRange(read(after, 2 * ZONE, (int) ZONE), durable.length, (int) ZONE))
                        .containsOnly(0);
                assertThat(after.zone(3).writePointer()).isEqualTo(3 * ZONE);
                // The reset was durable when it returned (a zone operation flushes); the write after it was not.
                assertThat(after.zone(4).writePointer()).isEqualTo(4 * ZONE);
                after.write(2 * ZONE + durable.length, ByteBuffer.allocate(BLOCK), IoPurpose.DATA).get();
            }
        }
    }

    /**
     * Either copy of the zone state damaged after a flush: the device opens with the flushed write
     * pointers, reports the damaged slot, and its next flush writes both copies again. Both damaged:
     * refused in one line.
     */
    @Test
    void aDamagedStateSlotIsReportedAndNeverRollsBackAFlush() throws Exception {
        int slotBytes = ZoneStateTable.slotBytes(LAYOUT.zoneCount(), BLOCK);
        for (int damaged = 0; damaged < 2; damaged++) {
            var backing = new PowerCutDevice(new RamBlockDevice(BLOCK, LAYOUT.backingBytes(BLOCK)));
            ZonedDevice device = ZonedDevice.create(backing, LAYOUT);
            byte[] data = randomBytes(3 * BLOCK);
            device.write(2 * ZONE, ByteBuffer.wrap(data), IoPurpose.DATA).get();
            device.flush();
            RamBlockDevice image = backing.image(CutMode.LOSE_UNFLUSHED, null);
            flipByte(image, BLOCK + (long) damaged * slotBytes + 30);

            RamBlockDevice reopened = image.copy();
            try (ZonedDevice after = ZonedDevice.open(reopened)) {
                assertThat(after.zone(2).writtenBytes()).as("slot %d damaged", damaged).isEqualTo(data.length);
                assertThat(read(after, 2 * ZONE, data.length)).isEqualTo(data);
                assertThat(after.stateProblems()).singleElement().asString()
                        .contains("zone state slot " + damaged).contains("bad checksum").doesNotContain("\n");
                after.flush();
                try (ZonedDevice repaired = ZonedDevice.open(reopened.copy())) {
                    assertThat(repaired.stateProblems()).isEmpty();
                }
            }
            flipByte(image, BLOCK + (long) (1 - damaged) * slotBytes + 30);
            assertThatThrownBy(() -> ZonedDevice.open(image.copy())).isInstanceOf(CorruptFileSystemException.class)
                    .hasMessageContaining("no intact zone state").hasMessageNotContaining("\n");
        }
    }

    /** A checksum-valid slot whose write pointer is out of range does not verify: the other slot is used. */
    @Test
    void aSlotWithAWritePointerOutOfRangeDoesNotVerify() throws Exception {
        var backing = new PowerCutDevice(new RamBlockDevice(BLOCK, LAYOUT.backingBytes(BLOCK)));
        ZonedDevice device = ZonedDevice.create(backing, LAYOUT);
        device.write(2 * ZONE, ByteBuffer.allocate(BLOCK), IoPurpose.DATA).get();
        device.flush();
        RamBlockDevice image = backing.image(CutMode.LOSE_UNFLUSHED, null);
        // A newer slot 0, checksum and all, giving zone 2 a write pointer past its capacity.
        var scratch = new RamBlockDevice(BLOCK, LAYOUT.backingBytes(BLOCK));
        long[] pointers = {-1, 0, ZONE + BLOCK, 0, 0, 0};
        ZoneStateTable.writeState(scratch, LAYOUT, new ZoneStateTable.State(100, pointers, new int[6]));
        int slotBytes = ZoneStateTable.slotBytes(LAYOUT.zoneCount(), BLOCK);
        image.poke(BLOCK, scratch.peek(BLOCK, slotBytes), 0, slotBytes);

        try (ZonedDevice after = ZonedDevice.open(image)) {
            assertThat(after.zone(2).writtenBytes()).isEqualTo(BLOCK);
            assertThat(after.stateProblems()).singleElement().asString().contains("zone state slot 0")
                    .contains("outside its capacity");
        }
    }

    private static void flipByte(RamBlockDevice image, long at) throws IOException {
        byte[] one = image.peek(at, 1);
        one[0] ^= 0x5a;
        image.poke(at, one, 0, 1);
    }

    @Test
    void manyWritesQueuedToOneZoneOfAFileLandInOrder() throws Exception {
        try (ZonedDevice device = ZonedDevice.create(FileBlockDevice.open(dir.resolve("queued.img"), BLOCK,
                LAYOUT.backingBytes(BLOCK), false), LAYOUT)) {
            byte[] data = randomBytes((int) ZONE);
            List<CompletableFuture<Void>> writes = new ArrayList<>();
            for (int block = 0; block < ZONE / BLOCK; block++) {
                writes.add(device.write(5 * ZONE + (long) block * BLOCK, ByteBuffer.wrap(data, block * BLOCK, BLOCK),
                        IoPurpose.DATA));
                if (block == 30) {
                    device.flush();
                }
            }
            for (var write : writes) {
                write.get(10, TimeUnit.SECONDS);
            }

            assertThat(device.zone(5).condition()).isEqualTo(ZoneCondition.FULL);
            assertThat(read(device, 5 * ZONE, data.length)).isEqualTo(data);
        }
    }

    @Test
    void concurrentAppendsEachLandWhereTheyAreToldTheyDid() throws Exception {
        int threads = 4;
        int appendsEach = 16;
        try (ZonedDevice device = ZonedDevice.create(FileBlockDevice.open(dir.resolve("append.img"), BLOCK,
                LAYOUT.backingBytes(BLOCK), false), LAYOUT);
                ExecutorService pool = Executors.newFixedThreadPool(threads)) {
            List<Future<List<long[]>>> results = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int thread = t;
                results.add(pool.submit(() -> {
                    List<long[]> landed = new ArrayList<>();
                    for (int i = 0; i < appendsEach; i++) {
                        long tag = thread * 1000L + i;
                        ByteBuffer block = ByteBuffer.allocate(BLOCK).putLong(0, tag);
                        landed.add(new long[] {tag, device.append(ZONE, List.of(block), IoPurpose.DATA).get()});
                    }
                    return landed;
                }));
            }
            List<Long> offsets = new ArrayList<>();
            for (var result : results) {
                for (long[] landed : result.get(30, TimeUnit.SECONDS)) {
                    offsets.add(landed[1]);
                    assertThat(ByteBuffer.wrap(read(device, landed[1], BLOCK)).getLong(0)).isEqualTo(landed[0]);
                }
            }
            assertThat(offsets).doesNotHaveDuplicates().allMatch(o -> o >= ZONE && o < 2 * ZONE);
            assertThat(device.zone(1).writePointer()).isEqualTo(ZONE + (long) threads * appendsEach * BLOCK);
        }
    }

    private byte[] randomBytes(int length) {
        byte[] bytes = new byte[length];
        random.nextBytes(bytes);
        return bytes;
    }

    static byte[] read(BlockDevice device, long offset, int length) throws IOException {
        ByteBuffer dst = ByteBuffer.allocate(length);
        device.read(offset, dst);
        return dst.array();
    }
}
