package dev.iomap.adapter.bcachefs.store;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.iomap.adapter.support.BlockIo;
import dev.iomap.devices.CountingDevice;
import dev.iomap.devices.CutMode;
import dev.iomap.devices.Fault;
import dev.iomap.device.ForwardingBlockDevice;
import dev.iomap.devices.PowerCutDevice;
import dev.iomap.devices.RamBlockDevice;
import dev.iomap.device.BlockDevice;
import dev.iomap.device.IoPurpose;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.concurrent.CompletableFuture;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/** Where the store writes: copy-on-write nodes, the journal ring and its wrap-around, group commit. */
class StoreWritePatternTest {

    /** @return the node blocks of the tree the newest superblock points to */
    static Set<Long> onDiskNodes(BlockDevice device) throws IOException {
        BcachefsSuperblock sb = BtreeStore.readSuperblock(device);
        Set<Long> blocks = new HashSet<>();
        collect(device, sb.rootBlock(), sb.rootLevel(), blocks);
        return blocks;
    }

    private static void collect(BlockDevice device, long block, int level, Set<Long> out) throws IOException {
        out.add(block);
        Node node = Node.decode(BlockIo.read(device, block, 1), block, level);
        for (int i = 0; level > 0 && i < node.size(); i++) {
            collect(device, node.childBlocks.get(i), level - 1, out);
        }
    }

    /**
     * Checks every write against the tree of the newest superblock on the device at that moment: a
     * node write there would be a write in place.
     */
    private static final class InPlaceWatch extends ForwardingBlockDevice {
        private final long dataStart;
        private long cachedSequence = -1;
        private Set<Long> cached = Set.of();
        int nodeWrites;
        int superblockWrites;
        final List<String> violations = new ArrayList<>();

        InPlaceWatch(BlockDevice inner) throws IOException {
            super(inner);
            this.dataStart = BtreeStore.readSuperblock(inner).dataStart();
        }

        @Override
        public synchronized CompletableFuture<Void> write(long offset, List<ByteBuffer> srcs, IoPurpose purpose) {
            long block = offset / blockSize();
            try {
                BcachefsSuperblock sb = BtreeStore.readSuperblock(delegate);
                if (sb.sequence() != cachedSequence) {
                    cached = onDiskNodes(delegate);
                    cachedSequence = sb.sequence();
                }
            } catch (IOException e) {
                violations.add("cannot read the tree: " + e);
            }
            if (block >= dataStart) {
                nodeWrites++;
                if (cached.contains(block)) {
                    violations.add("node block " + block + " written while superblock " + cachedSequence
                            + " uses it");
                }
            } else if (block < BcachefsSuperblock.COPIES) {
                superblockWrites++;
            }
            return delegate.write(offset, srcs, purpose);
        }
    }

    @Test
    void checkpointsNeverWriteANodeBlockTheDurableTreeUses() throws IOException {
        InPlaceWatch device = new InPlaceWatch(StoreBasicsTest.formatted(1024, 4L << 20));
        Random random = new Random(3);
        try (BtreeStore store = BtreeStore.open(device, false)) {
            for (int round = 0; round < 30; round++) {
                for (int i = 0; i < 60; i++) {
                    int k = random.nextInt(2000);
                    if (random.nextInt(4) == 0) {
                        store.update().delete(StoreBasicsTest.key(k)).commit();
                    } else {
                        store.update().put(StoreBasicsTest.key(k), StoreBasicsTest.value(k)).commit();
                    }
                }
                store.flushAll();
                store.checkpoint();
            }
            assertEquals(List.of(), device.violations);
            assertTrue(device.nodeWrites > 300, "nodes written: " + device.nodeWrites);
            assertEquals(store.stats().checkpoints(), device.superblockWrites);
            assertEquals(device.nodeWrites * 1024L, store.stats().nodeBytes());
        }
    }

    @Test
    void everyStoreWriteIsMetadataInsideItsRegion() throws IOException {
        CountingDevice device = new CountingDevice(StoreBasicsTest.formatted(1024, 4L << 20));
        BcachefsSuperblock sb = BtreeStore.readSuperblock(device);
        device.record(true);
        try (BtreeStore store = BtreeStore.open(device, false)) {
            for (int i = 0; i < 500; i++) {
                store.flush(store.update().put(StoreBasicsTest.key(i), StoreBasicsTest.value(i)).commit());
            }
        }
        device.record(false);
        int journalWrites = 0;
        for (CountingDevice.Request r : device.requests()) {
            if (r.kind() != Fault.Kind.WRITE) {
                continue;
            }
            assertEquals(IoPurpose.METADATA, r.purpose());
            long block = r.offset() / 1024;
            long blocks = r.length() / 1024;
            if (block >= sb.dataStart() || block < sb.journalStart()) {
                assertEquals(1, blocks, "one node or superblock per write at block " + block);
            } else {
                assertTrue(block + blocks <= sb.dataStart(), "journal write inside the ring");
                journalWrites++;
            }
        }
        assertEquals(500, journalWrites);
    }

    @Test
    void groupCommitWritesEverythingPendingInOneJournalWrite() throws IOException {
        CountingDevice device = new CountingDevice(StoreBasicsTest.formatted(4096, 4L << 20));
        try (BtreeStore store = BtreeStore.open(device, false)) {
            long seq = 0;
            for (int i = 0; i < 20; i++) {
                seq = store.update().put(StoreBasicsTest.key(i), new byte[100]).commit();
            }
            device.record(true);
            store.flush(seq - 10);
            store.flush(seq);
            device.record(false);
            List<CountingDevice.Request> requests = device.requests();
            assertEquals(3, requests.size(), requests.toString());
            assertEquals(Fault.Kind.FLUSH, requests.get(0).kind(), "the preflush: data before the keys pointing to it");
            assertEquals(Fault.Kind.WRITE, requests.get(1).kind());
            assertEquals(Fault.Kind.FLUSH, requests.get(2).kind());
            assertEquals(1, store.stats().journalFlushes());
            assertEquals(4096, store.stats().journalBytes(), "20 entries of 146 bytes and a header: one block");
        }
    }

    @Test
    void theJournalRingWrapsManyTimesAndEveryFlushedStateReplays() throws IOException {
        PowerCutDevice device = new PowerCutDevice(StoreBasicsTest.formatted(1024, 1L << 20));
        BcachefsSuperblock sb = BtreeStore.readSuperblock(device);
        assertEquals(64, sb.journalBlocks());
        TreeMap<BKey, byte[]> model = new TreeMap<>();
        int replayedAcrossWrap = 0;
        try (BtreeStore store = BtreeStore.open(device, false)) {
            for (int i = 0; i < 1500; i++) {
                BKey key = new BKey(2, i % 50, 0);
                byte[] value = new byte[(i * 13) % 250];
                java.util.Arrays.fill(value, (byte) i);
                store.flush(store.update().put(key, value).commit());
                model.put(key, value);
                if (i % 23 == 0) {
                    RamBlockDevice image = device.image(CutMode.LOSE_UNFLUSHED, null);
                    BcachefsSuperblock at = BtreeStore.readSuperblock(image);
                    try (BtreeStore replayed = BtreeStore.open(image, true)) {
                        List<KeyValue> all = replayed.scan(new BKey(2, 0, 0), new BKey(3, 0, 0), 100);
                        assertEquals(model.size(), all.size());
                        for (KeyValue kv : all) {
                            assertArrayEquals(model.get(kv.key()), kv.value(), "commit " + i + " key " + kv.key());
                        }
                        if (replayed.lastSeq() > at.checkpointSeq() && replayed.journalHead() < at.journalTail()) {
                            replayedAcrossWrap++;
                        }
                    }
                }
            }
            assertTrue(store.stats().checkpoints() > 20, "checkpoints: " + store.stats().checkpoints());
            assertEquals(1500, store.stats().journalFlushes());
        }
        assertTrue(replayedAcrossWrap > 0, "some replay crossed the end of the ring");
    }
}
