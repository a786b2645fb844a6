package dev.iomap.adapter.bcachefs.store;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.iomap.devices.CountingDevice;
import dev.iomap.devices.CutMode;
import dev.iomap.devices.PowerCutDevice;
import dev.iomap.devices.RamBlockDevice;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

class StoreBasicsTest {
    static final BKey ALL_FROM = new BKey(1, 0, 0);
    static final BKey ALL_TO = new BKey(BKey.MAX_BTREE, -1L, -1L);

    static RamBlockDevice formatted(int blockSize, long bytes) throws IOException {
        RamBlockDevice device = new RamBlockDevice(blockSize, bytes);
        BtreeStore.format(device, StoreFormat.defaults(device));
        return device;
    }

    static byte[] value(long i) {
        int length = (int) (i * 37 % 120);
        byte[] v = new byte[length];
        for (int k = 0; k < length; k++) {
            v[k] = (byte) (i + k);
        }
        return v;
    }

    static BKey key(long i) {
        return new BKey(1 + (int) Math.floorMod(i, 3L), i / 7, i * 1_000_003L);
    }

    static void assertContents(KeyStore store, TreeMap<BKey, byte[]> model) throws IOException {
        List<KeyValue> all = store.scan(ALL_FROM, ALL_TO, Integer.MAX_VALUE);
        assertEquals(model.size(), all.size());
        int i = 0;
        for (Map.Entry<BKey, byte[]> e : model.entrySet()) {
            assertEquals(e.getKey(), all.get(i).key());
            assertArrayEquals(e.getValue(), all.get(i).value(), "value of " + e.getKey());
            i++;
        }
    }

    @ParameterizedTest
    @ValueSource(ints = {1024, 4096})
    void manyKeysSplitMergeAndSurviveReopen(int blockSize) throws IOException {
        RamBlockDevice device = formatted(blockSize, 8L << 20);
        TreeMap<BKey, byte[]> model = new TreeMap<>();
        try (BtreeStore store = BtreeStore.open(device, false)) {
            for (int i = 0; i < 3000; i += 10) {
                Update update = store.update();
                for (int j = i; j < i + 10; j++) {
                    update.put(key(j), value(j));
                    model.put(key(j), value(j));
                }
                update.commit();
            }
            assertTrue(store.rootLevel() >= 1, "the tree split: root level " + store.rootLevel());
            for (int i = 0; i < 3000; i++) {
                assertArrayEquals(value(i), store.get(key(i)).orElseThrow());
            }
            assertEquals(Optional.empty(), store.get(new BKey(1, 5, 6)));
            assertContents(store, model);
            store.checkpoint();
            for (int i = 0; i < 3000; i += 2) {
                store.update().delete(key(i)).commit();
                model.remove(key(i));
            }
            assertContents(store, model);
            List<KeyValue> some = store.scan(new BKey(2, 0, 0), new BKey(3, 0, 0), 5);
            List<BKey> expected = new ArrayList<>(model.subMap(new BKey(2, 0, 0), new BKey(3, 0, 0)).keySet())
                    .subList(0, 5);
            assertEquals(expected, some.stream().map(KeyValue::key).toList());
        }
        try (BtreeStore store = BtreeStore.open(device, false)) {
            assertContents(store, model);
            for (int i = 1; i < 3000; i += 2) {
                store.update().delete(key(i)).commit();
            }
            assertEquals(List.of(), store.scan(ALL_FROM, ALL_TO, 10));
            assertEquals(0, store.rootLevel(), "emptied tree collapsed to one leaf");
        }
        try (BtreeStore store = BtreeStore.open(device, true)) {
            assertEquals(List.of(), store.scan(ALL_FROM, ALL_TO, 10));
        }
    }

    @Test
    void leavesBeyondTheCacheLimitAreUnloadedAfterACheckpointAndReadAgain() throws IOException {
        CountingDevice device = new CountingDevice(formatted(1024, 4L << 20));
        try (BtreeStore store = BtreeStore.open(device, false)) {
            for (int i = 0; i < 1000; i++) {
                store.update().put(key(i), value(i)).commit();
            }
            device.record(true);
            assertArrayEquals(value(500), store.get(key(500)).orElseThrow());
            assertEquals(List.of(), device.requests(), "loaded: fewer leaves than the default limit");
            store.leafCacheLimit(2);
            store.checkpoint();
            device.clearRequests();
            assertArrayEquals(value(500), store.get(key(500)).orElseThrow());
            assertEquals(1, device.requests().size(), "the leaf is read again: " + device.requests());
            assertEquals(dev.iomap.devices.Fault.Kind.READ, device.requests().getFirst().kind());
            device.record(false);
            store.update().delete(key(500)).commit();
        }
        try (BtreeStore store = BtreeStore.open(device, true)) {
            assertTrue(store.get(key(500)).isEmpty());
            assertArrayEquals(value(501), store.get(key(501)).orElseThrow());
        }
    }

    @Test
    void underfullLeavesMergeWithTheirNeighbours() throws IOException {
        RamBlockDevice device = formatted(1024, 8L << 20);
        TreeMap<BKey, byte[]> model = new TreeMap<>();
        try (BtreeStore store = BtreeStore.open(device, false)) {
            for (int i = 0; i < 3000; i++) {
                store.update().put(key(i), value(i)).commit();
                model.put(key(i), value(i));
            }
            store.checkpoint();
            long full = store.nodeBlocks();
            assertTrue(full > 200, "nodes: " + full);
            for (int i = 0; i < 3000; i++) {
                if (i % 10 != 0) {
                    store.update().delete(key(i)).commit();
                    model.remove(key(i));
                }
            }
            store.checkpoint();
            assertTrue(store.nodeBlocks() < full / 3, "nodes after deleting 90% of the keys: "
                    + store.nodeBlocks() + " of " + full);
            assertEquals(StoreWritePatternTest.onDiskNodes(device).size(), store.nodeBlocks());
            assertContents(store, model);
        }
        assertEquals(List.of(), StoreCheck.check(device));
    }

    @Test
    void flushedTransactionsReplayWithoutCheckpointUnflushedOnesAreLost() throws IOException {
        PowerCutDevice device = new PowerCutDevice(formatted(4096, 4L << 20));
        BtreeStore store = BtreeStore.open(device, false);
        long seq = 0;
        for (int i = 0; i < 50; i++) {
            seq = store.update().put(key(i), value(i)).delete(key(i - 1)).commit();
        }
        store.flush(seq);
        store.update().put(key(1000), value(1000)).commit();
        assertEquals(0, store.stats().checkpoints());
        assertEquals(1, store.stats().journalFlushes());
        RamBlockDevice image = device.image(CutMode.LOSE_UNFLUSHED, null);
        try (BtreeStore replayed = BtreeStore.open(image, true)) {
            List<KeyValue> all = replayed.scan(ALL_FROM, ALL_TO, 100);
            assertEquals(List.of(key(49)), all.stream().map(KeyValue::key).toList());
            assertArrayEquals(value(49), all.getFirst().value());
        }
        try (BtreeStore replayed = BtreeStore.open(image, false)) {
            assertEquals(1, replayed.stats().checkpoints(), "a replay is checkpointed at once");
            assertEquals(seq, replayed.lastSeq());
        }
        try (BtreeStore again = BtreeStore.open(image, false)) {
            assertEquals(List.of(key(49)), again.scan(ALL_FROM, ALL_TO, 100).stream().map(KeyValue::key).toList());
            assertEquals(0, again.stats().checkpoints(), "nothing left to replay");
        }
        store.close();
    }

    @Test
    void probeFormatAndTextValues() throws IOException {
        RamBlockDevice blank = new RamBlockDevice(4096, 1L << 20);
        assertFalse(BtreeStore.probe(blank));
        RamBlockDevice device = formatted(4096, 1L << 20);
        assertTrue(BtreeStore.probe(device));
        try (BtreeStore store = BtreeStore.open(device, false)) {
            byte[] hello = "hello".getBytes(StandardCharsets.UTF_8);
            long seq = store.update().put(new BKey(3, -1L, -1L), hello).commit();
            store.flush(seq);
            assertArrayEquals(hello, store.get(new BKey(3, -1L, -1L)).orElseThrow());
            assertEquals(1, store.scan(new BKey(3, -1L, 0), ALL_TO, 10).size());
        }
    }
}
