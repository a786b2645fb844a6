package dev.iomap.devices;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.iomap.device.BlockDevice;
import dev.iomap.device.DeviceIoException;
import dev.iomap.device.DeviceStats;
import dev.iomap.device.DeviceRangeException;
import dev.iomap.device.IoPurpose;
import dev.iomap.api.NotSupportedException;
import dev.iomap.device.Zone;
import dev.iomap.device.ZoneCondition;
import dev.iomap.device.ZoneType;
import dev.iomap.device.ZoneViolationException;
import dev.iomap.device.ZoneViolationException.Reason;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * What the zoned device enforces and reports, over RAM: two conventional zones then six sequential
 * zones of 16 blocks whose capacity is 12 blocks (a ZNS-like capacity below the size), at most
 * two open.
 */
class ZonedDeviceTest {
    static final int BLOCK = 4096;
    static final long ZONE = 16L * BLOCK;
    static final long CAPACITY = 12L * BLOCK;
    static final ZoneLayout LAYOUT = new ZoneLayout(ZONE, CAPACITY, 8, 2, 2);
    static final long SEED = Long.getLong("iomap.test.seed", 0);

    private final Random random = new Random(SEED);
    private ZonedDevice device;

    @BeforeEach
    void create() throws IOException {
        device = ZonedDevice.create(new RamBlockDevice(BLOCK, LAYOUT.backingBytes(BLOCK)), LAYOUT);
    }

    @AfterEach
    void close() throws IOException {
        device.close();
    }

    static long zone(int index) {
        return index * ZONE;
    }

    @Test
    void reportsEveryZone() throws IOException {
        List<Zone> zones = device.zones();

        assertThat(device.capacity()).isEqualTo(8 * ZONE);
        assertThat(device.zoneCount()).isEqualTo(8);
        assertThat(device.maxOpenZones()).isEqualTo(2);
        assertThat(zones).hasSize(8);
        assertThat(zones.get(1)).isEqualTo(new Zone(ZONE, ZONE, ZONE, ZoneType.CONVENTIONAL,
                ZoneCondition.NOT_WRITE_POINTER, Zone.NO_WRITE_POINTER));
        assertThat(zones.get(2)).isEqualTo(new Zone(zone(2), ZONE, CAPACITY, ZoneType.SEQUENTIAL_WRITE_REQUIRED,
                ZoneCondition.EMPTY, zone(2)));
        assertThat(device.zone(7).capacityEnd()).isEqualTo(zone(7) + CAPACITY);
        assertThat(device.zoneIndex(zone(5) + BLOCK)).isEqualTo(5);
        assertThatThrownBy(() -> device.zone(8)).isInstanceOf(DeviceRangeException.class);
    }

    /** What {@code mkfs} checks a format against before it makes the device is what the device reports. */
    @Test
    void theLayoutsZoneReportIsThatOfAFreshDevice() throws IOException {
        assertThat(LAYOUT.zones()).isEqualTo(device.zones());
    }

    @Test
    void writesAtTheWritePointerAdvanceItAndOpenTheZone() throws Exception {
        byte[] data = randomBytes(3 * BLOCK);

        await(device.write(zone(2), ByteBuffer.wrap(data), IoPurpose.DATA));

        Zone zone = device.zone(2);
        assertThat(zone.writePointer()).isEqualTo(zone(2) + 3 * BLOCK);
        assertThat(zone.condition()).isEqualTo(ZoneCondition.IMPLICIT_OPEN);
        assertThat(zone.writtenBytes()).isEqualTo(3L * BLOCK);
        assertThat(read(zone(2), data.length)).isEqualTo(data);
    }

    /** The drive's own error: a sequential zone takes a write only at its write pointer. */
    @Test
    void refusesAWriteThatIsNotAtTheWritePointer() throws Exception {
        await(device.write(zone(3), ByteBuffer.wrap(randomBytes(BLOCK)), IoPurpose.DATA));

        Throwable ahead = failureOf(device.write(zone(3) + 2 * BLOCK, ByteBuffer.allocate(BLOCK), IoPurpose.DATA));
        Throwable behind = failureOf(device.write(zone(3), ByteBuffer.allocate(BLOCK), IoPurpose.DATA));

        for (Throwable refused : List.of(ahead, behind)) {
            assertThat(refused).isInstanceOf(ZoneViolationException.class)
                    .hasMessageContaining("not at its write pointer " + (zone(3) + BLOCK));
            assertThat(((ZoneViolationException) refused).reason()).isEqualTo(Reason.NOT_AT_WRITE_POINTER);
            assertThat(((ZoneViolationException) refused).writePointer()).isEqualTo(zone(3) + BLOCK);
        }
        assertThat(device.zone(3).writePointer()).isEqualTo(zone(3) + BLOCK);
        assertThat(read(zone(3) + 2 * BLOCK, BLOCK)).containsOnly(0);
    }

    @Test
    void refusesAWritePastTheCapacityAndFillsUpToIt() throws Exception {
        Throwable tooLong = failureOf(device.write(zone(4), ByteBuffer.allocate((int) CAPACITY + BLOCK),
                IoPurpose.DATA));
        assertThat(tooLong).isInstanceOf(ZoneViolationException.class);
        assertThat(((ZoneViolationException) tooLong).reason()).isEqualTo(Reason.PAST_CAPACITY);
        assertThat(device.zone(4).condition()).isEqualTo(ZoneCondition.EMPTY);

        await(device.write(zone(4), ByteBuffer.allocate((int) CAPACITY), IoPurpose.DATA));

        assertThat(device.zone(4).condition()).isEqualTo(ZoneCondition.FULL);
        Throwable full = failureOf(device.write(zone(4) + CAPACITY, ByteBuffer.allocate(BLOCK), IoPurpose.DATA));
        assertThat(((ZoneViolationException) full).reason()).isEqualTo(Reason.ZONE_FULL);
    }

    @Test
    void refusesAWriteAcrossAZoneBoundary() throws Exception {
        Throwable refused = failureOf(device.write(zone(2) - BLOCK, ByteBuffer.allocate(2 * BLOCK), IoPurpose.DATA));

        assertThat(((ZoneViolationException) refused).reason()).isEqualTo(Reason.CROSSES_ZONE_BOUNDARY);
        await(device.write(0, ByteBuffer.allocate(2 * (int) ZONE), IoPurpose.DATA));
    }

    @Test
    void conventionalZonesTakeWritesAnywhereButNoZoneOperation() throws Exception {
        byte[] data = randomBytes(2 * BLOCK);
        await(device.write(ZONE + 5 * BLOCK, ByteBuffer.wrap(data), IoPurpose.DATA));
        await(device.write(ZONE + 5 * BLOCK, ByteBuffer.wrap(data, 0, BLOCK), IoPurpose.DATA));

        assertThat(read(ZONE + 5 * BLOCK, data.length)).isEqualTo(data);
        for (ZoneOperation operation : List.<ZoneOperation>of(device::resetZone, device::finishZone,
                device::openZone, device::closeZone)) {
            assertThat(catchThrowable(() -> operation.apply(ZONE)))
                    .isInstanceOfSatisfying(ZoneViolationException.class,
                            e -> assertThat(e.reason()).isEqualTo(Reason.NOT_SEQUENTIAL));
        }
        assertThat(((ZoneViolationException) failureOf(device.append(ZONE, List.of(ByteBuffer.allocate(BLOCK)),
                IoPurpose.DATA))).reason()).isEqualTo(Reason.NOT_SEQUENTIAL);
    }

    @Test
    void readsAtOrPastTheWritePointerAndPastTheCapacityAreZeroes() throws Exception {
        await(device.write(zone(2), ByteBuffer.wrap(randomBytes(2 * BLOCK)), IoPurpose.DATA));
        ByteBuffer whole = ByteBuffer.allocate((int) ZONE);

        device.read(zone(2), whole);

        assertThat(Arrays.copyOfRange(whole.array(), 2 * BLOCK, (int) ZONE)).containsOnly(0);
        assertThat(whole.position()).isEqualTo((int) ZONE);
    }

    @Test
    void appendSaysWhereTheDataLanded() throws Exception {
        await(device.write(zone(5), ByteBuffer.allocate(BLOCK), IoPurpose.DATA));
        byte[] first = randomBytes(2 * BLOCK);
        byte[] second = randomBytes(BLOCK);

        long landedFirst = device.append(zone(5), List.of(ByteBuffer.wrap(first)), IoPurpose.DATA).get();
        long landedSecond = device.append(zone(5), List.of(ByteBuffer.wrap(second)), IoPurpose.DATA).get();

        assertThat(landedFirst).isEqualTo(zone(5) + BLOCK);
        assertThat(landedSecond).isEqualTo(zone(5) + 3 * BLOCK);
        assertThat(read(landedFirst, first.length)).isEqualTo(first);
        assertThat(read(landedSecond, second.length)).isEqualTo(second);
        Throwable tooMuch = failureOf(device.append(zone(5), List.of(ByteBuffer.allocate((int) CAPACITY)),
                IoPurpose.DATA));
        assertThat(((ZoneViolationException) tooMuch).reason()).isEqualTo(Reason.PAST_CAPACITY);
        assertThat(failureOf(device.append(zone(5), List.of(ByteBuffer.allocate(100)), IoPurpose.DATA)))
                .isInstanceOf(DeviceRangeException.class);
        assertThat(failureOf(device.append(zone(5) + BLOCK, List.of(ByteBuffer.allocate(BLOCK)), IoPurpose.DATA)))
                .isInstanceOf(DeviceRangeException.class).hasMessageContaining("not the start of a zone");
    }

    @Test
    void resetEmptiesTheZoneAndFinishFillsIt() throws Exception {
        await(device.write(zone(6), ByteBuffer.wrap(randomBytes(4 * BLOCK)), IoPurpose.DATA));

        device.resetZone(zone(6));

        assertThat(device.zone(6).condition()).isEqualTo(ZoneCondition.EMPTY);
        assertThat(device.zone(6).writePointer()).isEqualTo(zone(6));
        assertThat(read(zone(6), 4 * BLOCK)).containsOnly(0);
        byte[] again = randomBytes(BLOCK);
        await(device.write(zone(6), ByteBuffer.wrap(again), IoPurpose.DATA));

        device.finishZone(zone(6));

        Zone finished = device.zone(6);
        assertThat(finished.condition()).isEqualTo(ZoneCondition.FULL);
        assertThat(finished.writePointer()).isEqualTo(finished.capacityEnd());
        assertThat(read(zone(6), BLOCK)).isEqualTo(again);
        assertThat(read(zone(6) + BLOCK, (int) CAPACITY - BLOCK)).containsOnly(0);
        assertThat(((ZoneViolationException) failureOf(device.write(finished.writePointer() - BLOCK,
                ByteBuffer.allocate(BLOCK), IoPurpose.DATA))).reason()).isEqualTo(Reason.ZONE_FULL);
    }

    /**
     * A reset records the empty zone and writes nothing over it (issue 36, item 8: zonefs-like's mkfs
     * wrote zeroes over every zone): the old bytes stay on the backing device, past the write pointer,
     * where they read as zeroes, also after the device is opened again; a finish then zeroes what it
     * makes readable.
     */
    @Test
    void aResetRecordsTheEmptyZoneWithoutWritingOverIt() throws Exception {
        RamBlockDevice ram = new RamBlockDevice(BLOCK, LAYOUT.backingBytes(BLOCK));
        CountingDevice backing = new CountingDevice(ram);
        byte[] old = randomBytes(4 * BLOCK);
        try (ZonedDevice zoned = ZonedDevice.create(backing, LAYOUT)) {
            await(zoned.write(zone(6), ByteBuffer.wrap(old), IoPurpose.DATA));
            zoned.flush();
            DeviceStats before = backing.stats();

            zoned.resetZone(zone(6));

            DeviceStats reset = backing.stats().minus(before);
            assertThat(reset.discardedBytes()).as("bytes discarded by the reset").isZero();
            assertThat(reset.dataBytesWritten()).as("data bytes written by the reset").isZero();
            long dataStart = LAYOUT.backingBytes(BLOCK) - LAYOUT.zonedBytes();
            assertThat(ram.peek(dataStart + zone(6), 4 * BLOCK)).as("the old bytes, still on the backing device")
                    .isEqualTo(old);
            assertThat(readFrom(zoned, zone(6), 4 * BLOCK)).containsOnly(0);
        }
        try (ZonedDevice reopened = ZonedDevice.open(ram.copy())) {
            assertThat(reopened.zone(6).condition()).isEqualTo(ZoneCondition.EMPTY);
            assertThat(readFrom(reopened, zone(6), 4 * BLOCK)).containsOnly(0);
            reopened.finishZone(zone(6));
            assertThat(readFrom(reopened, zone(6), (int) CAPACITY)).as("a finished zone never written").containsOnly(0);
        }
    }

    /** One reset of every sequential zone, in one zone state write; failed zones are left as they are. */
    @Test
    void resetAllZonesEmptiesEverySequentialZoneInOneStateWrite() throws Exception {
        for (int i = 2; i < 6; i++) {
            await(device.write(zone(i), ByteBuffer.wrap(randomBytes(2 * BLOCK)), IoPurpose.DATA));
            device.closeZone(zone(i));
        }
        device.finishZone(zone(6));
        device.failZone(zone(7), ZoneCondition.READ_ONLY);
        await(device.write(zone(0), ByteBuffer.wrap(randomBytes(BLOCK)), IoPurpose.DATA));
        byte[] conventional = read(zone(0), BLOCK);

        device.resetAllZones();

        for (int i = 2; i < 7; i++) {
            assertThat(device.zone(i).condition()).as("zone %d", i).isEqualTo(ZoneCondition.EMPTY);
            assertThat(read(zone(i), (int) CAPACITY)).as("zone %d", i).containsOnly(0);
        }
        assertThat(device.zone(7).condition()).isEqualTo(ZoneCondition.READ_ONLY);
        assertThat(read(zone(0), BLOCK)).as("a conventional zone keeps its data").isEqualTo(conventional);
    }

    @Test
    void explicitOpensHoldTheOpenZoneResources() throws Exception {
        device.openZone(zone(2));
        device.openZone(zone(3));
        assertThat(device.zone(2).condition()).isEqualTo(ZoneCondition.EXPLICIT_OPEN);

        Throwable refused = failureOf(device.write(zone(4), ByteBuffer.allocate(BLOCK), IoPurpose.DATA));
        assertThat(refused).isInstanceOfSatisfying(ZoneViolationException.class,
                e -> assertThat(e.reason()).isEqualTo(Reason.TOO_MANY_OPEN_ZONES));
        assertThatThrownBy(() -> device.openZone(zone(4))).isInstanceOf(ZoneViolationException.class);
        assertThat(device.zone(4).condition()).isEqualTo(ZoneCondition.EMPTY);

        device.closeZone(zone(3));

        assertThat(device.zone(3).condition()).isEqualTo(ZoneCondition.EMPTY);
        await(device.write(zone(4), ByteBuffer.allocate(BLOCK), IoPurpose.DATA));
        assertThat(device.zone(4).condition()).isEqualTo(ZoneCondition.IMPLICIT_OPEN);
    }

    @Test
    void anImplicitOpenClosesTheOldestImplicitlyOpenZone() throws Exception {
        await(device.write(zone(2), ByteBuffer.allocate(BLOCK), IoPurpose.DATA));
        await(device.write(zone(3), ByteBuffer.allocate(BLOCK), IoPurpose.DATA));

        await(device.write(zone(4), ByteBuffer.allocate(BLOCK), IoPurpose.DATA));

        assertThat(device.zone(2).condition()).isEqualTo(ZoneCondition.CLOSED);
        assertThat(device.zone(3).condition()).isEqualTo(ZoneCondition.IMPLICIT_OPEN);
        assertThat(device.zone(4).condition()).isEqualTo(ZoneCondition.IMPLICIT_OPEN);
        assertThat(device.zones().stream().filter(z -> z.condition().isOpen())).hasSize(2);
        await(device.write(zone(2) + BLOCK, ByteBuffer.allocate(BLOCK), IoPurpose.DATA));
        assertThat(device.zone(3).condition()).isEqualTo(ZoneCondition.CLOSED);
    }

    @Test
    void aFailedZoneRefusesWhatItNoLongerDoes() throws Exception {
        byte[] data = randomBytes(BLOCK);
        await(device.write(zone(2), ByteBuffer.wrap(data), IoPurpose.DATA));

        device.failZone(zone(2), ZoneCondition.READ_ONLY);
        device.failZone(zone(3), ZoneCondition.OFFLINE);

        assertThat(read(zone(2), BLOCK)).isEqualTo(data);
        assertThat(((ZoneViolationException) failureOf(device.write(zone(2) + BLOCK, ByteBuffer.allocate(BLOCK),
                IoPurpose.DATA))).reason()).isEqualTo(Reason.ZONE_READ_ONLY);
        assertThatThrownBy(() -> device.resetZone(zone(2))).isInstanceOf(ZoneViolationException.class);
        assertThatThrownBy(() -> read(zone(3), BLOCK)).isInstanceOfSatisfying(ZoneViolationException.class,
                e -> assertThat(e.reason()).isEqualTo(Reason.ZONE_OFFLINE));
        assertThat(device.zone(3).condition()).isEqualTo(ZoneCondition.OFFLINE);
    }

    @Test
    void discardIsForConventionalZonesOnly() throws Exception {
        await(device.write(0, ByteBuffer.wrap(randomBytes(BLOCK)), IoPurpose.DATA));

        device.discard(0, BLOCK);

        assertThat(read(0, BLOCK)).containsOnly(0);
        assertThatThrownBy(() -> device.discard(zone(2), BLOCK)).isInstanceOf(NotSupportedException.class)
                .hasMessageContaining("reset the zone");
    }

    @Test
    void countsWhatCallersAskedNotTheZoneState() throws Exception {
        await(device.write(zone(2), ByteBuffer.allocate(2 * BLOCK), IoPurpose.DATA));
        device.flush();
        device.read(zone(2), ByteBuffer.allocate(BLOCK));
        device.resetZone(zone(2));

        assertThat(device.stats()).isEqualTo(new DeviceStats(BLOCK, 1, 2L * BLOCK, 0, 1, 1, 0));
    }

    /**
     * A failed write stops the zone where the data stops: the write queued behind it fails too, the
     * write pointer goes back to the end of the last good write, and writing resumes there.
     */
    @Test
    void aFailedWriteRewindsTheWritePointerAndFailsTheWritesQueuedBehindIt() throws Exception {
        var backing = new GatedDevice(new RamBlockDevice(BLOCK, LAYOUT.backingBytes(BLOCK)));
        try (ZonedDevice gated = ZonedDevice.create(backing, LAYOUT)) {
            await(gated.write(zone(2), ByteBuffer.allocate(BLOCK), IoPurpose.DATA));
            backing.hold();
            CompletableFuture<Void> failing = gated.write(zone(2) + BLOCK, ByteBuffer.allocate(BLOCK), IoPurpose.DATA);
            CompletableFuture<Void> queued = gated.write(zone(2) + 2 * BLOCK, ByteBuffer.allocate(BLOCK),
                    IoPurpose.DATA);
            assertThat(gated.zone(2).writePointer()).isEqualTo(zone(2) + 3 * BLOCK);

            backing.releaseFailing();

            assertThat(failureOf(failing)).isInstanceOf(DeviceIoException.class);
            assertThat(failureOf(queued)).isInstanceOfSatisfying(ZoneViolationException.class,
                    e -> assertThat(e).hasMessageContaining("an earlier write failed"));
            assertThat(gated.zone(2).writePointer()).isEqualTo(zone(2) + BLOCK);
            await(gated.write(zone(2) + BLOCK, ByteBuffer.allocate(BLOCK), IoPurpose.DATA));
            assertThat(gated.zone(2).writePointer()).isEqualTo(zone(2) + 2 * BLOCK);
        }
    }

    /** Writes queued while the backing device holds the first still reach it in order. */
    @Test
    void writesQueuedToOneZoneReachTheBackingDeviceInOrder() throws Exception {
        var backing = new GatedDevice(new RamBlockDevice(BLOCK, LAYOUT.backingBytes(BLOCK)));
        try (ZonedDevice gated = ZonedDevice.create(backing, LAYOUT)) {
            backing.hold();
            List<CompletableFuture<Void>> writes = new ArrayList<>();
            for (int i = 0; i < 5; i++) {
                writes.add(gated.write(zone(7) + (long) i * BLOCK, ByteBuffer.allocate(BLOCK), IoPurpose.DATA));
            }
            assertThat(backing.held()).isEqualTo(1);

            backing.release();

            for (var write : writes) {
                await(write);
            }
            long dataStart = LAYOUT.backingBytes(BLOCK) - LAYOUT.zonedBytes();
            assertThat(backing.offsets()).containsExactly(dataStart + zone(7), dataStart + zone(7) + BLOCK,
                    dataStart + zone(7) + 2 * BLOCK, dataStart + zone(7) + 3 * BLOCK, dataStart + zone(7) + 4 * BLOCK);
        }
    }

    @FunctionalInterface
    interface ZoneOperation {
        void apply(long zoneStart) throws IOException;
    }

    private byte[] randomBytes(int length) {
        byte[] bytes = new byte[length];
        random.nextBytes(bytes);
        return bytes;
    }

    private static byte[] readFrom(ZonedDevice zoned, long offset, int length) throws IOException {
        ByteBuffer dst = ByteBuffer.allocate(length);
        zoned.read(offset, dst);
        return dst.array();
    }

    private byte[] read(long offset, int length) throws IOException {
        ByteBuffer dst = ByteBuffer.allocate(length);
        device.read(offset, dst);
        return dst.array();
    }

    static void await(CompletableFuture<?> write) throws Exception {
        write.get(10, TimeUnit.SECONDS);
    }

    static Throwable failureOf(CompletableFuture<?> write) {
        Throwable thrown = catchThrowable(() -> write.get(10, TimeUnit.SECONDS));
        assertThat(thrown).isInstanceOf(ExecutionException.class);
        return thrown.getCause();
    }

    /**
     * A backing device that can hold data writes (those past the zone-state region) until released,
     * and fail the first one held; it records the offsets of the data writes it passed on.
     */
    static final class GatedDevice extends dev.iomap.device.ForwardingBlockDevice {
        private final long dataStart;
        private final List<Long> offsets = new ArrayList<>();
        private final List<Runnable> held = new ArrayList<>();
        private boolean holding;

        GatedDevice(BlockDevice delegate) {
            super(delegate);
            this.dataStart = delegate.capacity() - LAYOUT.zonedBytes();
        }

        synchronized void hold() {
            holding = true;
        }

        synchronized int held() {
            return held.size();
        }

        synchronized List<Long> offsets() {
            return List.copyOf(offsets);
        }

        void release() {
            releaseAll(false);
        }

        void releaseFailing() {
            releaseAll(true);
        }

        private void releaseAll(boolean failFirst) {
            List<Runnable> pending;
            synchronized (this) {
                holding = false;
                pending = new ArrayList<>(held);
                held.clear();
            }
            for (int i = 0; i < pending.size(); i++) {
                if (i == 0 && failFirst) {
                    failNext = true;
                }
                pending.get(i).run();
            }
        }

        private volatile boolean failNext;

        @Override
        public CompletableFuture<Void> write(long offset, List<ByteBuffer> srcs, IoPurpose purpose) {
            if (offset < dataStart) {
                return delegate.write(offset, srcs, purpose);
            }
            var result = new CompletableFuture<Void>();
            Runnable run = () -> {
                if (failNext) {
                    failNext = false;
                    result.completeExceptionally(new DeviceIoException("injected", offset, BLOCK, null));
                    return;
                }
                synchronized (this) {
                    offsets.add(offset);
                }
                delegate.write(offset, srcs, purpose).whenComplete((v, e) -> {
                    if (e == null) {
                        result.complete(null);
                    } else {
                        result.completeExceptionally(e);
                    }
                });
            };
            synchronized (this) {
                if (holding) {
                    held.add(run);
                    return result;
                }
            }
            run.run();
            return result;
        }
    }
}
