package dev.iomap.adapter.bcachefs.store;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.iomap.adapter.support.BlockIo;
import dev.iomap.api.CorruptFileSystemException;
import dev.iomap.devices.CutMode;
import dev.iomap.devices.PowerCutDevice;
import dev.iomap.devices.RamBlockDevice;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Flipped bits in nodes and superblocks: detected, named, never followed. */
class StoreCorruptionTest {
    private static final int KEYS = 1500;

    private static RamBlockDevice populated() throws IOException {
        RamBlockDevice device = StoreBasicsTest.formatted(1024, 4L << 20);
        try (BtreeStore store = BtreeStore.open(device, false)) {
            for (int i = 0; i < KEYS; i++) {
                store.update().put(StoreBasicsTest.key(i), StoreBasicsTest.value(i)).commit();
            }
        }
        return device;
    }

    private static Node root(RamBlockDevice device) throws IOException {
        BcachefsSuperblock sb = BtreeStore.readSuperblock(device);
        return Node.decode(BlockIo.read(device, sb.rootBlock(), 1), sb.rootBlock(), sb.rootLevel());
    }

    private static void flipBit(RamBlockDevice device, long block, int byteInBlock) throws IOException {
        long offset = block * device.blockSize() + byteInBlock;
        byte[] b = device.peek(offset, 1);
        b[0] ^= 0x10;
        device.poke(offset, b, 0, 1);
    }

    /** @return the block of the last leaf (highest keys, btree 3) */
    private static long lastLeaf(RamBlockDevice device) throws IOException {
        Node node = root(device);
        while (node.level > 1) {
            long child = node.childBlocks.getLast();
            node = Node.decode(BlockIo.read(device, child, 1), child, node.level - 1);
        }
        return node.childBlocks.getLast();
    }

    @Test
    void aFlippedBitInALeafFailsGetAndScanAndStoreCheckNamesTheBlock() throws IOException {
        RamBlockDevice device = populated();
        assertEquals(List.of(), StoreCheck.check(device));
        long leaf = lastLeaf(device);
        flipBit(device, leaf, 40);
        BKey inLeaf = new BKey(3, Long.MAX_VALUE, 0);
        try (BtreeStore store = BtreeStore.open(device, true)) {
            CorruptFileSystemException get = assertThrows(CorruptFileSystemException.class, () -> store.get(inLeaf));
            assertTrue(get.getMessage().contains("block " + leaf) && get.getMessage().contains("checksum"),
                    get.getMessage());
            CorruptFileSystemException scan = assertThrows(CorruptFileSystemException.class,
                    () -> store.scan(StoreBasicsTest.ALL_FROM, StoreBasicsTest.ALL_TO, Integer.MAX_VALUE));
            assertTrue(scan.getMessage().contains("block " + leaf), scan.getMessage());
            assertArrayEquals(StoreBasicsTest.value(0), store.get(StoreBasicsTest.key(0)).orElseThrow(),
                    "other leaves still read");
        }
        List<String> problems = StoreCheck.check(device);
        assertEquals(1, problems.size(), problems.toString());
        assertTrue(problems.getFirst().startsWith("B-tree node at block " + leaf + ": checksum mismatch"),
                problems.getFirst());
    }

    @Test
    void aFlippedBitInTheRootFailsOpen() throws IOException {
        RamBlockDevice device = populated();
        BcachefsSuperblock sb = BtreeStore.readSuperblock(device);
        assertTrue(sb.rootLevel() >= 1);
        flipBit(device, sb.rootBlock(), 700);
        CorruptFileSystemException e = assertThrows(CorruptFileSystemException.class,
                () -> BtreeStore.open(device, true));
        assertEquals("B-tree node at block " + sb.rootBlock() + ": checksum mismatch", e.getMessage().split(" \\(")[0]);
        List<String> problems = StoreCheck.check(device);
        assertEquals(1, problems.size(), problems.toString());
        assertTrue(problems.getFirst().contains("block " + sb.rootBlock()), problems.getFirst());
    }

    /**
     * Issue 36 items 1 and 2: a parent's key raised above the first key of its child (bytes changed, the
     * checksum recomputed) makes lookups of the keys below it go to the wrong child and find nothing; the
     * read path checks every node it loads against the range its parent gives it and refuses the child.
     */
    @Test
    void aChildHoldingKeysOutsideTheRangeItsParentGivesIsRefusedOnTheReadPath() throws IOException {
        RamBlockDevice device = populated();
        Node parent = root(device);
        while (parent.level > 1) {
            long child = parent.childBlocks.getFirst();
            parent = Node.decode(BlockIo.read(device, child, 1), child, parent.level - 1);
        }
        assertTrue(parent.size() >= 3, "a bottom internal node with three leaves");
        long leafBlock = parent.childBlocks.get(1);
        Node leaf = Node.decode(BlockIo.read(device, leafBlock, 1), leafBlock, 0);
        long checkpoint = BlockIo.read(device, parent.block, 1).order(java.nio.ByteOrder.LITTLE_ENDIAN).getLong(16);
        parent.keys.set(1, leaf.keys.get(1));
        BlockIo.write(device, parent.block, List.of(parent.encode(1024, checkpoint)), dev.iomap.device.IoPurpose.METADATA);
        try (BtreeStore store = BtreeStore.open(device, true)) {
            CorruptFileSystemException e = assertThrows(CorruptFileSystemException.class,
                    () -> store.get(leaf.keys.get(1)));
            assertEquals("B-tree node at block " + leafBlock + ": key 0 " + leaf.keys.getFirst() + " is outside the range ["
                    + leaf.keys.get(1) + ", " + parent.keys.get(2) + ") its parent gives it", e.getMessage());
            assertThrows(CorruptFileSystemException.class,
                    () -> store.scan(StoreBasicsTest.ALL_FROM, StoreBasicsTest.ALL_TO, Integer.MAX_VALUE));
        }
        assertTrue(StoreCheck.check(device).stream().anyMatch(p -> p.contains("outside the node's range")));
    }

    @Test
    void twoBadSuperblocksFailOpenAndProbe() throws IOException {
        RamBlockDevice device = populated();
        flipBit(device, 0, 20);
        flipBit(device, 1, 20);
        assertTrue(!BtreeStore.probe(device));
        CorruptFileSystemException e = assertThrows(CorruptFileSystemException.class,
                () -> BtreeStore.open(device, false));
        assertTrue(e.getMessage().startsWith("no valid store superblock"), e.getMessage());
        assertEquals(List.of(e.getMessage()), StoreCheck.check(device));
    }

    @Test
    void aTornSuperblockWriteFallsBackToThePreviousCheckpointAndItsJournal() throws IOException {
        PowerCutDevice device = new PowerCutDevice(populated());
        List<RamBlockDevice> atSuperblock = new ArrayList<>();
        List<BKey> flushedKeys = new ArrayList<>();
        try (BtreeStore store = BtreeStore.open(device, false)) {
            long seq = 0;
            for (int i = 0; i < 40; i++) {
                seq = store.update().delete(StoreBasicsTest.key(i)).put(new BKey(5, i, i), new byte[] {(byte) i})
                        .commit();
                flushedKeys.add(new BKey(5, i, i));
            }
            store.flush(seq);
            BcachefsSuperblock before = BtreeStore.readSuperblock(device);
            device.onWrite(w -> atSuperblock.add(device.image(CutMode.LOSE_UNFLUSHED, null)));
            store.checkpoint();
            device.onWrite(w -> { });
            RamBlockDevice torn = atSuperblock.getLast();
            long slot = (before.sequence() + 1) % 2;
            assertEquals(before, BtreeStore.readSuperblock(torn));
            byte[] garbage = new byte[1024];
            java.util.Arrays.fill(garbage, (byte) 0x5a);
            torn.poke(slot * 1024, garbage, 0, 1024);
            assertEquals(List.of(), StoreCheck.check(torn));
            try (BtreeStore fallback = BtreeStore.open(torn, false)) {
                for (int i = 0; i < 40; i++) {
                    assertArrayEquals(new byte[] {(byte) i}, fallback.get(flushedKeys.get(i)).orElseThrow());
                    assertTrue(fallback.get(StoreBasicsTest.key(i)).isEmpty());
                }
                assertArrayEquals(StoreBasicsTest.value(KEYS - 1),
                        fallback.get(StoreBasicsTest.key(KEYS - 1)).orElseThrow());
            }
        }
    }

    @Test
    void aTransactionNeverReadsANodeItsPrepareDidNotLoad() throws IOException {
        RamBlockDevice device = populated();
        Node root = root(device);
        while (root.level > 1) {
            long child = root.childBlocks.getLast();
            root = Node.decode(BlockIo.read(device, child, 1), child, root.level - 1);
        }
        assertTrue(root.size() >= 2, "the last bottom internal node has two leaves");
        Node parent = root;
        long sibling = root.childBlocks.get(root.size() - 2);
        long leafBlock = root.childBlocks.getLast();
        Node leaf = Node.decode(BlockIo.read(device, leafBlock, 1), leafBlock, 0);
        flipBit(device, sibling, 50);
        try (BtreeStore store = BtreeStore.open(device, false)) {
            Update update = store.update();
            for (BKey key : leaf.keys) {
                update.delete(key);
            }
            update.put(leaf.keys.getFirst(), new byte[] {42});
            store.flush(update.commit());
            assertArrayEquals(new byte[] {42}, store.get(leaf.keys.getFirst()).orElseThrow());
            assertTrue(store.get(leaf.keys.getLast()).isEmpty());
            assertThrows(CorruptFileSystemException.class, () -> store.get(parent.keys.get(parent.size() - 2)),
                    "the corrupt sibling was never needed");
        }
    }
}
