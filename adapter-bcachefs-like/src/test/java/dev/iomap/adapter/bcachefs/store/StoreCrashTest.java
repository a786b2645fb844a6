package dev.iomap.adapter.bcachefs.store;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.iomap.adapter.support.BlockRange;
import dev.iomap.devices.CutMode;
import dev.iomap.devices.PowerCutDevice;
import dev.iomap.devices.RamBlockDevice;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/** Power cuts at every device write of checkpoints and journal flushes. */
class StoreCrashTest {

    /** An image taken at a write, and what it must hold. */
    private record Image(long write, CutMode mode, RamBlockDevice device) {
    }

    @Test
    void aPowerCutAtEveryWriteOfACheckpointLosesNothingFlushed() throws IOException {
        PowerCutDevice device = new PowerCutDevice(StoreBasicsTest.formatted(1024, 2L << 20));
        TreeMap<BKey, byte[]> flushed = new TreeMap<>();
        List<Image> images = new ArrayList<>();
        BlockRange data;
        try (BtreeStore store = BtreeStore.open(device, false)) {
            for (int round = 0; round < 3; round++) {
                for (int i = round * 300; i < round * 300 + 300; i++) {
                    store.update().put(StoreBasicsTest.key(i), StoreBasicsTest.value(i)).commit();
                    flushed.put(StoreBasicsTest.key(i), StoreBasicsTest.value(i));
                }
                store.checkpoint();
            }
            for (int i = 0; i < 900; i += 3) {
                store.update().delete(StoreBasicsTest.key(i)).commit();
                flushed.remove(StoreBasicsTest.key(i));
            }
            store.space().reserve(5);
            data = store.space().allocate(5, -1);
            store.flush(store.update().addRefs(data, 1).commit());
            for (int i = 2000; i < 2006; i++) {
                store.update().put(StoreBasicsTest.key(i), StoreBasicsTest.value(i)).commit();
            }
            long before = device.completedWrites();
            Random random = new Random(7);
            device.onWrite(w -> {
                images.add(new Image(w, CutMode.LOSE_UNFLUSHED, device.image(CutMode.LOSE_UNFLUSHED, null)));
                images.add(new Image(w, CutMode.TEAR_AND_REORDER, device.image(CutMode.TEAR_AND_REORDER, random)));
            });
            store.checkpoint();
            device.onWrite(w -> { });
            assertTrue(device.completedWrites() - before > 3, "the checkpoint wrote nodes and a superblock");
            assertEquals(2 * (device.completedWrites() - before), images.size());
            images.add(new Image(-1, CutMode.LOSE_UNFLUSHED, device.image(CutMode.LOSE_UNFLUSHED, null)));
        }
        int sawNew = 0;
        for (Image image : images) {
            String at = "image at write " + image.write() + " " + image.mode();
            assertEquals(List.of(), StoreCheck.check(image.device()), at);
            try (BtreeStore store = BtreeStore.open(image.device(), false)) {
                List<KeyValue> got = store.scan(StoreBasicsTest.ALL_FROM, StoreBasicsTest.ALL_TO, Integer.MAX_VALUE);
                int newKeys = got.size() - flushed.size();
                assertTrue(newKeys >= 0 && newKeys <= 6, at + ": " + got.size() + " keys");
                TreeMap<BKey, byte[]> expected = new TreeMap<>(flushed);
                for (int n = 2000; n < 2000 + newKeys; n++) {
                    expected.put(StoreBasicsTest.key(n), StoreBasicsTest.value(n));
                }
                if (newKeys == 6) {
                    sawNew++;
                }
                int i = 0;
                for (var e : expected.entrySet()) {
                    assertEquals(e.getKey(), got.get(i).key(), at + ": a prefix of the commits survives");
                    assertArrayEquals(e.getValue(), got.get(i).value(), at);
                    i++;
                }
                assertEquals(List.of(new RefRun(data, 1)), store.refRuns(), at);
            }
        }
        assertTrue(sawNew >= 1 && sawNew < images.size(), "the image after the checkpoint holds it, images before the"
                + " superblock do not: " + sawNew);
    }

    @Test
    void aPowerCutAtEveryJournalWriteKeepsEveryFlushedTransaction() throws IOException {
        PowerCutDevice device = new PowerCutDevice(StoreBasicsTest.formatted(1024, 2L << 20));
        List<Long> durableAtWrite = new ArrayList<>();
        List<RamBlockDevice> images = new ArrayList<>();
        long[] durable = {0};
        Random random = new Random(11);
        device.onWrite(w -> {
            images.add(device.image(CutMode.TEAR_AND_REORDER, random));
            durableAtWrite.add(durable[0]);
        });
        try (BtreeStore store = BtreeStore.open(device, false)) {
            for (int i = 0; i < 400; i++) {
                Update update = store.update().put(StoreBasicsTest.key(i), StoreBasicsTest.value(i));
                if (i > 0) {
                    update.put(StoreBasicsTest.key(i - 1), new byte[] {(byte) i});
                }
                long seq = update.commit();
                if (i % 7 == 0) {
                    store.flush(seq);
                    durable[0] = i;
                }
            }
            device.onWrite(w -> { });
        }
        for (int n = 0; n < images.size(); n++) {
            long mustHave = durableAtWrite.get(n);
            try (BtreeStore store = BtreeStore.open(images.get(n), true)) {
                List<KeyValue> got = store.scan(StoreBasicsTest.ALL_FROM, StoreBasicsTest.ALL_TO, Integer.MAX_VALUE);
                assertTrue(got.size() >= mustHave + 1, "image " + n + ": " + got.size() + " keys, flushed "
                        + (mustHave + 1));
                long last = got.size() - 1L;
                for (long i = 0; i <= last; i++) {
                    byte[] expected = i == last ? StoreBasicsTest.value(i) : new byte[] {(byte) (i + 1)};
                    assertArrayEquals(expected, store.get(StoreBasicsTest.key(i)).orElseThrow(),
                            "image " + n + " key " + i + ": transactions replay whole and in order");
                }
            }
        }
    }
}
