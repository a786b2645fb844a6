package dev.iomap.adapter.bcachefs.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.iomap.adapter.support.BlockRange;
import dev.iomap.api.NoSpaceException;
import dev.iomap.devices.CutMode;
import dev.iomap.devices.PowerCutDevice;
import dev.iomap.devices.RamBlockDevice;
import java.io.IOException;
import java.util.List;
import org.junit.jupiter.api.Test;

class DataSpaceTest {

    @Test
    void referencesCountUpAndDownAndFreedBlocksWaitForTheFlush() throws IOException {
        RamBlockDevice device = StoreBasicsTest.formatted(4096, 4L << 20);
        try (BtreeStore store = BtreeStore.open(device, false)) {
            DataSpace space = store.space();
            long before = space.available();
            space.reserve(4);
            assertEquals(before - 4, space.available());
            assertEquals(4, space.reserved());
            BlockRange blocks = space.allocate(4, -1);
            assertEquals(4, blocks.length());
            assertEquals(0, space.reserved());
            assertEquals(before - 4, space.available());
            assertEquals(0, space.refCount(blocks.start()));
            store.update().addRefs(blocks, 1).commit();
            store.update().addRefs(blocks, 1).commit();
            assertEquals(2, space.refCount(blocks.start()));
            assertEquals(2, space.refCount(blocks.end() - 1));
            assertEquals(List.of(new RefRun(blocks, 2)), store.refRuns());
            store.update().addRefs(blocks, -1).commit();
            assertEquals(1, space.refCount(blocks.start()));
            long seq = store.update().addRefs(new BlockRange(blocks.start() + 1, 2), -1).commit();
            assertEquals(List.of(new RefRun(new BlockRange(blocks.start(), 1), 1),
                    new RefRun(new BlockRange(blocks.start() + 3, 1), 1)), store.refRuns());
            assertEquals(0, space.refCount(blocks.start() + 1));
            assertEquals(before - 4, space.available(), "zeroed blocks are not free before the flush");
            store.flush(seq);
            assertEquals(before - 2, space.available(), "free once the transaction is durable");
            assertThrows(dev.iomap.api.FileSystemShutdownException.class,
                    () -> store.update().addRefs(new BlockRange(blocks.start() + 1, 1), -1).commit(),
                    "a count dropping below 0 shuts the store down");
            assertEquals(1, space.refCount(blocks.start()));
            assertThrows(dev.iomap.api.FileSystemShutdownException.class,
                    () -> store.update().addRefs(blocks, 1).commit(), "and it refuses every later update");
        }
        try (BtreeStore store = BtreeStore.open(device, false)) {
            assertEquals(1, store.space().refCount(store.refRuns().getFirst().blocks().start()));
            assertEquals(2, store.refRuns().size());
        }
    }

    @Test
    void reservationsCannotTakeTheNodeReserveAndGrowthStopsBeforeCheckpointsCouldFail() throws IOException {
        RamBlockDevice device = StoreBasicsTest.formatted(4096, 4L << 20);
        try (BtreeStore store = BtreeStore.open(device, false)) {
            DataSpace space = store.space();
            long total = space.totalBlocks();
            assertEquals(1024 - 2 - 64, total);
            long reserve = 32;
            assertEquals(total - 1 - reserve, space.available(), "all but the root node and the node reserve");
            NoSpaceException e = assertThrows(NoSpaceException.class, () -> space.reserve(space.available() + 1));
            assertEquals(0, space.reserved(), e.getMessage());
            space.reserve(space.available());
            assertEquals(0, space.available());
            assertThrows(NoSpaceException.class, () -> space.reserve(1));
            BlockRange all = space.allocate(space.reserved() - 10, -1);
            assertEquals(total - 1 - reserve - 10, all.length());
            assertEquals(10, space.reserved(), "kept for writeback below");
            int put = 0;
            NoSpaceException full = null;
            for (; put < 5000 && full == null; put++) {
                try {
                    store.update().put(StoreBasicsTest.key(put), StoreBasicsTest.value(put)).commit();
                } catch (NoSpaceException growth) {
                    full = growth;
                }
            }
            assertTrue(full != null && put > 100, "metadata grew into the reserve, then stopped at put " + put);
            assertEquals(0, space.available());

            // Writeback of reserved data (a key and a reference per transaction) goes on meanwhile.
            for (int i = 0; i < 10; i++) {
                BlockRange block = space.allocate(1, -1);
                store.update().put(new BKey(7, 1, i), new byte[40]).addRefs(block, 1).commit();
                assertEquals(1, space.refCount(block.start()));
            }
            assertEquals(0, space.reserved());
            assertThrows(NoSpaceException.class, () -> store.update().put(new BKey(7, 2, 0), new byte[1]).commit(),
                    "namespace growth stays refused");
            store.checkpoint();
            assertEquals(10, store.scan(new BKey(7, 1, 0), new BKey(7, 2, 0), 100).size());

            for (int i = 0; i < put - 1; i++) {
                store.update().delete(StoreBasicsTest.key(i)).commit();
            }
            for (int i = 0; i < 10; i++) {
                store.update().delete(new BKey(7, 1, i)).commit();
            }
            store.checkpoint();
            assertEquals(1, store.nodeBlocks());
            space.release(all);
            assertEquals(total - 1 - reserve - 10, space.available(), "the 10 referenced blocks stay used");
        }
    }

    @Test
    void allocatedButUnreferencedBlocksAreFreeAfterACrash() throws IOException {
        PowerCutDevice device = new PowerCutDevice(StoreBasicsTest.formatted(4096, 4L << 20));
        BtreeStore store = BtreeStore.open(device, false);
        long before = store.space().available();
        store.space().reserve(10);
        BlockRange kept = store.space().allocate(3, -1);
        store.space().allocate(7, -1);
        store.flush(store.update().addRefs(kept, 1).commit());
        try (BtreeStore after = BtreeStore.open(device.image(CutMode.LOSE_UNFLUSHED, null), false)) {
            assertEquals(before - 3, after.space().available());
            assertEquals(1, after.space().refCount(kept.start()));
        }
        store.close();
    }
}
