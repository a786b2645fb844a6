package dev.iomap.adapter.bcachefs.store;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.iomap.adapter.support.BlockRange;
import dev.iomap.api.NoSpaceException;
import dev.iomap.devices.CutMode;
import dev.iomap.devices.PowerCutDevice;
import dev.iomap.devices.RamBlockDevice;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * Seeded random operations against a model (a sorted map of keys and a map of referenced block runs),
 * with flushes, checkpoints, reopens and power cuts. {@code -Dbchstore.seed=N -Dbchstore.ops=M} to run
 * another or a longer sequence.
 */
class StoreModelTest {
    private record State(TreeMap<BKey, byte[]> keys, LinkedHashMap<BlockRange, Integer> refs) {
        State copy() {
            return new State(new TreeMap<>(keys), new LinkedHashMap<>(refs));
        }
    }

    private final long seed = Long.getLong("bchstore.seed", 20261201L);
    private final int ops = Integer.getInteger("bchstore.ops", 1500);
    private final Random random = new Random(seed);
    private State model = new State(new TreeMap<>(), new LinkedHashMap<>());
    /** Model states by sequence, from the durable one on. */
    private final TreeMap<Long, State> history = new TreeMap<>();
    private PowerCutDevice device;
    private BtreeStore store;

    private BKey randomKey() {
        return new BKey(1 + random.nextInt(3), random.nextInt(40), random.nextInt(20));
    }

    private byte[] randomValue() {
        byte[] value = new byte[random.nextInt(4) == 0 ? random.nextInt(StoreLimits.MAX_VALUE_BYTES + 1)
                : random.nextInt(40)];
        random.nextBytes(value);
        return value;
    }

    private void committed(long seq) {
        history.put(seq, model.copy());
        history.headMap(store.durableSeq()).clear();
    }

    /** Opens the store with a tiny leaf cache, so that leaves are unloaded and read again often. */
    private BtreeStore open() throws IOException {
        BtreeStore opened = BtreeStore.open(device, false);
        opened.leafCacheLimit(3);
        return opened;
    }

    @Test
    void randomOperationsMatchTheModelThroughReopensAndPowerCuts() throws IOException {
        String where = "seed " + seed + " (-Dbchstore.seed), ops " + ops;
        device = new PowerCutDevice(StoreBasicsTest.formatted(1024, 2L << 20));
        store = open();
        history.put(store.lastSeq(), model.copy());
        int crashes = 0;
        int noSpace = 0;
        try {
            for (int op = 0; op < ops; op++) {
                String at = where + ", op " + op;
                int dice = random.nextInt(100);
                if (dice < 40) {
                    noSpace += transaction() ? 0 : 1;
                } else if (dice < 50) {
                    allocateAndReference();
                } else if (dice < 62) {
                    changeReference();
                } else if (dice < 68) {
                    store.flushAll();
                } else if (dice < 71) {
                    store.checkpoint();
                } else if (dice < 74) {
                    store.close();
                    store = open();
                    verifyAll(at + " after reopen", true);
                } else if (dice < 76) {
                    crash(at);
                    crashes++;
                } else if (dice < 79) {
                    crashDuringWrites(at);
                    crashes++;
                } else if (dice < 90) {
                    BKey key = randomKey();
                    byte[] expected = model.keys().get(key);
                    byte[] got = store.get(key).orElse(null);
                    assertArrayEquals(expected, got, at + " get " + key);
                } else {
                    BKey from = randomKey();
                    BKey to = randomKey();
                    int limit = 1 + random.nextInt(30);
                    List<KeyValue> got = store.scan(from, to, limit);
                    List<BKey> expected = from.compareTo(to) < 0
                            ? model.keys().subMap(from, to).keySet().stream().limit(limit).toList() : List.of();
                    assertEquals(expected, got.stream().map(KeyValue::key).toList(), at + " scan");
                }
            }
            verifyAll(where + " at the end", false);
        } finally {
            store.close();
        }
        assertTrue(ops < 200 || crashes > 0, "the sequence had power cuts: " + crashes);
        assertTrue(noSpace < ops / 10, "few transactions ran out of space: " + noSpace);
    }

    /** @return false if the store refused it for lack of space */
    private boolean transaction() throws IOException {
        Update update = store.update();
        TreeMap<BKey, byte[]> after = new TreeMap<>(model.keys());
        int n = 1 + random.nextInt(4);
        for (int i = 0; i < n; i++) {
            BKey key = randomKey();
            if (random.nextInt(3) == 0) {
                update.delete(key);
                after.remove(key);
            } else {
                byte[] value = randomValue();
                update.put(key, value);
                after.put(key, value);
            }
        }
        try {
            long seq = update.commit();
            model = new State(after, model.refs());
            committed(seq);
            return true;
        } catch (NoSpaceException e) {
            return false;
        }
    }

    private void allocateAndReference() throws IOException {
        long referenced = model.refs().keySet().stream().mapToLong(BlockRange::length).sum();
        if (referenced > 300) {
            return;
        }
        long want = 1L + random.nextInt(6);
        store.space().reserve(want);
        while (want > 0) {
            BlockRange got = store.space().allocate(want, random.nextBoolean() ? -1 : 100 + random.nextInt(1000));
            want -= got.length();
            if (random.nextInt(5) == 0) {
                store.space().release(got);
                continue;
            }
            long seq = store.update().addRefs(got, 1).commit();
            model.refs().put(got, 1);
            committed(seq);
        }
    }

    private void changeReference() throws IOException {
        if (model.refs().isEmpty()) {
            return;
        }
        List<BlockRange> ranges = new ArrayList<>(model.refs().keySet());
        BlockRange range = ranges.get(random.nextInt(ranges.size()));
        int delta = random.nextInt(3) == 0 ? 1 : -1;
        long seq = store.update().addRefs(range, delta).commit();
        int count = model.refs().get(range) + delta;
        if (count == 0) {
            model.refs().remove(range);
        } else {
            model.refs().put(range, count);
        }
        committed(seq);
    }

    private void crash(String at) throws IOException {
        long durable = store.durableSeq();
        RamBlockDevice image = device.image(CutMode.TEAR_AND_REORDER, random);
        store.close();
        assertEquals(List.of(), StoreCheck.check(image), at + " check after the power cut");
        device = new PowerCutDevice(image);
        store = open();
        assertEquals(durable, store.lastSeq(), at + ": the store comes back at its durable sequence");
        model = history.get(durable).copy();
        history.clear();
        history.put(durable, model.copy());
        verifyAll(at + " after the power cut", true);
    }

    /**
     * A power cut at a random write of a checkpoint or journal flush: the store comes back at some
     * sequence between the durable one before the operation and the last committed one, in exactly
     * the state the model had then.
     */
    private void crashDuringWrites(String at) throws IOException {
        long durableBefore = store.durableSeq();
        long last = store.lastSeq();
        int cutAt = 1 + random.nextInt(6);
        Random imageRandom = new Random(random.nextLong());
        RamBlockDevice[] captured = {null};
        int[] writes = {0};
        device.onWrite(w -> {
            writes[0]++;
            if (writes[0] == cutAt) {
                captured[0] = device.image(CutMode.TEAR_AND_REORDER, imageRandom);
            }
        });
        if (random.nextBoolean()) {
            store.checkpoint();
        } else {
            store.flushAll();
        }
        device.onWrite(w -> { });
        RamBlockDevice image = captured[0] != null ? captured[0] : device.image(CutMode.TEAR_AND_REORDER, imageRandom);
        store.close();
        assertEquals(List.of(), StoreCheck.check(image), at + " check after a cut at write " + cutAt);
        device = new PowerCutDevice(image);
        store = open();
        long back = store.lastSeq();
        assertTrue(back >= durableBefore && back <= last, at + ": back at " + back + ", durable was "
                + durableBefore + ", last " + last);
        model = history.get(back).copy();
        history.clear();
        history.put(back, model.copy());
        verifyAll(at + " after a cut at write " + cutAt, true);
    }

    private void verifyAll(String at, boolean fresh) throws IOException {
        List<KeyValue> all = store.scan(StoreBasicsTest.ALL_FROM, StoreBasicsTest.ALL_TO, Integer.MAX_VALUE);
        assertEquals(model.keys().size(), all.size(), at + ": key count");
        int i = 0;
        for (Map.Entry<BKey, byte[]> e : model.keys().entrySet()) {
            assertEquals(e.getKey(), all.get(i).key(), at);
            assertArrayEquals(e.getValue(), all.get(i).value(), at + " " + e.getKey());
            i++;
        }
        TreeMap<Long, Integer> expectedCounts = new TreeMap<>();
        for (var e : model.refs().entrySet()) {
            for (long b = e.getKey().start(); b < e.getKey().end(); b++) {
                expectedCounts.put(b, e.getValue());
            }
        }
        TreeMap<Long, Integer> counts = new TreeMap<>();
        for (RefRun run : store.refRuns()) {
            for (long b = run.blocks().start(); b < run.blocks().end(); b++) {
                counts.put(b, run.count());
            }
        }
        assertEquals(expectedCounts, counts, at + ": reference counts");
        if (fresh) {
            assertEquals(StoreWritePatternTest.onDiskNodes(device).size(), store.nodeBlocks(), at + ": node blocks");
            long nodeReserve = ((StoreSpace) store.space()).nodeReserve();
            assertEquals(store.space().totalBlocks() - store.nodeBlocks() - counts.size() - nodeReserve,
                    store.space().available(), at + ": free space after open");
        }
    }
}
