package dev.iomap.adapter.bcachefs.store;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.iomap.api.FileSystemShutdownException;
import dev.iomap.device.DeviceIoException;
import dev.iomap.device.ReadOnlyDeviceException;
import dev.iomap.devices.CountingDevice;
import dev.iomap.devices.Fault;
import dev.iomap.devices.FaultInjectingDevice;
import dev.iomap.devices.RamBlockDevice;
import java.io.IOException;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Failed preflushes, journal and checkpoint writes, and read-only stores. */
class StoreFailureTest {
    private static final BKey A = new BKey(1, 1, 1);
    private static final BKey B = new BKey(1, 2, 2);

    @Test
    void aFailedJournalWriteShutsTheStoreDownAndKeepsWhatWasDurable() throws IOException {
        RamBlockDevice ram = StoreBasicsTest.formatted(1024, 2L << 20);
        BcachefsSuperblock sb = BtreeStore.readSuperblock(ram);
        FaultInjectingDevice device = new FaultInjectingDevice(ram);
        try (BtreeStore store = BtreeStore.open(device, false)) {
            store.flush(store.update().put(A, new byte[] {1}).commit());
            long seq = store.update().put(B, new byte[] {2}).commit();
            device.inject(Fault.writes(sb.journalStart() * 1024, sb.journalBlocks() * 1024).times(1));
            assertThrows(DeviceIoException.class, () -> store.flush(seq));
            assertThrows(FileSystemShutdownException.class, () -> store.update().put(A, new byte[] {3}).commit());
            assertThrows(FileSystemShutdownException.class, () -> store.flush(seq));
            assertThrows(FileSystemShutdownException.class, store::checkpoint);
            assertArrayEquals(new byte[] {2}, store.get(B).orElseThrow(), "reads go on");
        }
        try (BtreeStore store = BtreeStore.open(ram, false)) {
            assertArrayEquals(new byte[] {1}, store.get(A).orElseThrow());
            assertTrue(store.get(B).isEmpty(), "never durable");
        }
    }

    @Test
    void aFailedPreflushChangesNothingAndTheNextFlushWritesTheEntries() throws IOException {
        RamBlockDevice ram = StoreBasicsTest.formatted(1024, 2L << 20);
        FaultInjectingDevice device = new FaultInjectingDevice(ram);
        try (BtreeStore store = BtreeStore.open(device, false)) {
            long seq = store.update().put(A, new byte[] {1}).commit();
            device.inject(Fault.flushes().times(1));
            IOException failed = assertThrows(IOException.class, () -> store.flush(seq));
            assertTrue(!(failed instanceof FileSystemShutdownException), failed.toString());
            assertEquals(List.of(Fault.Kind.FLUSH), device.injected().stream().map(i -> i.kind()).toList(),
                    "nothing but the preflush was tried");
            long next = store.update().put(B, new byte[] {2}).commit();
            store.flush(next);
            assertEquals(1, store.stats().journalFlushes(), "both entries went in one batch");
        }
        try (BtreeStore store = BtreeStore.open(ram, false)) {
            assertArrayEquals(new byte[] {1}, store.get(A).orElseThrow());
            assertArrayEquals(new byte[] {2}, store.get(B).orElseThrow());
        }
        assertEquals(List.of(), StoreCheck.check(ram));
    }

    @Test
    void aFailedCheckpointLeavesThePreviousCheckpointAndTheJournalValid() throws IOException {
        RamBlockDevice ram = StoreBasicsTest.formatted(1024, 2L << 20);
        BcachefsSuperblock sb = BtreeStore.readSuperblock(ram);
        FaultInjectingDevice device = new FaultInjectingDevice(ram);
        try (BtreeStore store = BtreeStore.open(device, false)) {
            for (int i = 0; i < 100; i++) {
                store.update().put(StoreBasicsTest.key(i), StoreBasicsTest.value(i)).commit();
            }
            store.flushAll();
            device.inject(Fault.writes(sb.dataStart() * 1024, Long.MAX_VALUE).after(2).times(1));
            assertThrows(DeviceIoException.class, store::checkpoint);
            assertThrows(FileSystemShutdownException.class, () -> store.update().delete(A).commit());
        }
        assertEquals(List.of(), StoreCheck.check(ram));
        try (BtreeStore store = BtreeStore.open(ram, false)) {
            for (int i = 0; i < 100; i++) {
                assertArrayEquals(StoreBasicsTest.value(i), store.get(StoreBasicsTest.key(i)).orElseThrow());
            }
        }
    }

    @Test
    void aReadOnlyStoreReplaysInMemoryAndWritesNothing() throws IOException {
        RamBlockDevice ram = StoreBasicsTest.formatted(1024, 2L << 20);
        BtreeStore writer = BtreeStore.open(ram, false);
        writer.flush(writer.update().put(A, new byte[] {7}).commit());
        RamBlockDevice image = ram.copy();
        writer.close();
        CountingDevice counting = new CountingDevice(image);
        counting.record(true);
        try (BtreeStore store = BtreeStore.open(counting, true)) {
            assertArrayEquals(new byte[] {7}, store.get(A).orElseThrow());
            assertThrows(ReadOnlyDeviceException.class, () -> store.update().put(B, new byte[0]).commit());
            assertThrows(ReadOnlyDeviceException.class, store::checkpoint);
            assertThrows(dev.iomap.api.NoSpaceException.class, () -> store.space().reserve(1));
            assertEquals(0, store.space().available());
        }
        assertTrue(counting.requests().stream().allMatch(r -> r.kind() == Fault.Kind.READ), counting.requests()
                .toString());
        try (BtreeStore store = BtreeStore.open(image, false)) {
            assertEquals(1, store.stats().checkpoints(), "the journal was still there to replay");
        }
    }
}
