package dev.iomap.adapter.bcachefs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.iomap.adapter.bcachefs.store.BKey;
import dev.iomap.adapter.bcachefs.store.BtreeStore;
import dev.iomap.adapter.bcachefs.store.Update;
import dev.iomap.api.CorruptFileSystemException;
import dev.iomap.api.FileType;
import dev.iomap.api.IomapFile;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.devices.RamBlockDevice;
import dev.iomap.testkit.TestData;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Issue 36 items 1 to 5: a mount runs fsck's checks across structures (as xfs-like does) and refuses,
 * in one line and without writing anything, every image fsck flags: a B-tree node copied over another,
 * a root node whose keys no longer bound its children, an allocation run shortened so that live blocks
 * look free, a directory entry pointing at the root, a cycle of directories cut off from the root, an
 * inode larger than the format allows. Each image is forged as an attacker would: bytes changed and
 * the node's checksum recomputed.
 */
class MountChecksTest {
    private static final int BS = 1024;
    private static final int FILES = 40;

    /** A populated image: many files in /d (a tree of several levels at 1 KiB nodes), /a/b, /big.bin. */
    private static RamBlockDevice populated() throws IOException {
        RamBlockDevice device = new RamBlockDevice(BS, 8L << 20);
        Images.format(device, Map.of());
        try (IomapFileSystem fs = Images.mount(device)) {
            fs.mkdir("/d");
            fs.mkdir("/a");
            fs.mkdir("/a/b");
            for (int i = 0; i < FILES; i++) {
                try (IomapFile f = fs.create("/d/file-with-a-longish-name-" + i)) {
                    f.write(0, TestData.buffer(i, 0, 1000 + 700 * i));
                }
            }
            try (IomapFile f = fs.create("/big.bin")) {
                f.write(0, TestData.buffer(99, 0, 200 << 10));
            }
        }
        assertThat(Images.ADAPTER.fsck(device).problems()).as("the pristine image").isEmpty();
        return device;
    }

    /**
     * fsck reports a problem naming {@code expected}; mount refuses the image with one line naming fsck's
     * first problem; and nothing was written.
     */
    private static void refused(RamBlockDevice image, String expected) throws IOException {
        List<String> problems = Images.ADAPTER.fsck(image.copy()).problems();
        assertThat(problems).as("fsck's report of the forged image").anyMatch(p -> p.contains(expected));
        byte[] before = image.peek(0, (int) image.capacity());
        assertThatThrownBy(() -> Images.mount(image).close()).isInstanceOf(CorruptFileSystemException.class)
                .hasMessageStartingWith("bcachefs-like: " + problems.getFirst()).hasMessageEndingWith("; run fsck")
                .satisfies(e -> assertThat(e.getMessage()).doesNotContain("\n"));
        assertThat(Arrays.equals(image.peek(0, (int) image.capacity()), before)).as("the refused mount wrote nothing")
                .isTrue();
    }

    @Test
    void aLeafCopiedOverAnotherIsRefused() throws IOException {
        RamBlockDevice image = populated();
        List<Long> leaves = NodeBytes.entries(image).stream().filter(e -> e.level() == 0).map(NodeBytes.Entry::block)
                .distinct().toList();
        assertThat(leaves).hasSizeGreaterThan(3);
        long source = leaves.get(1);
        long target = leaves.get(leaves.size() - 2);
        ByteBuffer copy = NodeBytes.block(image, source);
        copy.putLong(8, target);
        NodeBytes.writeSealed(image, target, copy);
        refused(image, "B-tree node at block " + target);
    }

    @Test
    void aRootWhoseKeyNoLongerBoundsItsChildIsRefused() throws IOException {
        RamBlockDevice image = populated();
        long[] root = NodeBytes.root(image);
        assertThat(root[1]).as("root level").isPositive();
        List<NodeBytes.Entry> entries = NodeBytes.entries(image);
        NodeBytes.Entry second = entries.stream().filter(e -> e.block() == root[0] && e.index() == 1).findFirst()
                .orElseThrow();
        // The root's key for child 1 raised to the second key below it: child 1's first key is now outside
        // the range the root gives it (and a lookup of it goes to child 0 and finds nothing).
        BKey raised = secondKeyUnder(entries, second.child());
        ByteBuffer key = ByteBuffer.allocate(17).order(ByteOrder.LITTLE_ENDIAN);
        key.put((byte) raised.btree()).putLong(raised.inode()).putLong(raised.offset());
        NodeBytes.forge(image, root[0], second.keyAt(), key.array());
        refused(image, "is outside the node's range");
    }

    /** @return the second key of the first leaf below {@code block} */
    private static BKey secondKeyUnder(List<NodeBytes.Entry> entries, long block) {
        long at = block;
        while (true) {
            long node = at;
            NodeBytes.Entry first = entries.stream().filter(e -> e.block() == node && e.index() == 0).findFirst()
                    .orElseThrow();
            if (first.level() == 0) {
                return entries.stream().filter(e -> e.block() == node && e.index() == 1).findFirst().orElseThrow().key();
            }
            at = first.child();
        }
    }

    @Test
    void anAllocationRunShortenedSoThatLiveBlocksLookFreeIsRefusedBeforeAWriteCouldLandOnThem()
            throws IOException {
        RamBlockDevice image = populated();
        NodeBytes.Entry run = NodeBytes.entries(image).stream()
                .filter(e -> e.level() == 0 && e.key().btree() == 0 && lengthOf(image, e) > 4).findFirst().orElseThrow();
        NodeBytes.forge(image, run.block(), run.valueAt(), NodeBytes.le64(lengthOf(image, run) - 4));
        refused(image, "reference count");
    }

    private static long lengthOf(RamBlockDevice image, NodeBytes.Entry e) {
        try {
            return NodeBytes.block(image, e.block()).getLong(e.valueAt());
        } catch (IOException ex) {
            throw new AssertionError(ex);
        }
    }

    @Test
    void aDirectoryEntryPointingAtTheRootIsRefused() throws IOException {
        RamBlockDevice image = populated();
        NodeBytes.Entry a = direntOf(image, Keys.ROOT_INO, "a");
        NodeBytes.forge(image, a.block(), a.valueAt(), NodeBytes.le64(Keys.ROOT_INO));
        refused(image, "the root directory (inode 1) is the target of a directory entry");
    }

    @Test
    void aCycleOfDirectoriesCutOffFromTheRootIsRefused() throws IOException {
        RamBlockDevice image = populated();
        // /a moved into /a/b, every count kept consistent: each directory has one name, its parent field
        // names the directory holding it and the link counts add up, yet neither is reachable from the root.
        try (BtreeStore store = BtreeStore.open(image, false)) {
            long a = Dirents.find(store, Keys.ROOT_INO, "a").orElseThrow().ino();
            long b = Dirents.find(store, a, "b").orElseThrow().ino();
            InodeRecord root = InodeRecord.decode(Keys.ROOT_INO, store.get(Keys.inode(Keys.ROOT_INO)).orElseThrow());
            InodeRecord ra = InodeRecord.decode(a, store.get(Keys.inode(a)).orElseThrow());
            InodeRecord rb = InodeRecord.decode(b, store.get(Keys.inode(b)).orElseThrow());
            root.nlink--;
            rb.nlink++;
            ra.parent = b;
            Update update = store.update();
            update.delete(Dirents.find(store, Keys.ROOT_INO, "a").orElseThrow().key());
            update.put(Dirents.freeKey(store, b, "a"), Dirents.encode(a, FileType.DIRECTORY, "a"));
            update.put(Keys.inode(Keys.ROOT_INO), root.encode()).put(Keys.inode(a), ra.encode())
                    .put(Keys.inode(b), rb.encode());
            update.commit();
        }
        refused(image, "is not reachable from the root");
    }

    @Test
    void anInodeLargerThanTheFormatAllowsIsReportedByFsckAndRefused() throws IOException {
        RamBlockDevice image = populated();
        long ino;
        try (BtreeStore store = BtreeStore.open(image, true)) {
            ino = Dirents.find(store, Keys.ROOT_INO, "big.bin").orElseThrow().ino();
        }
        NodeBytes.Entry inode = NodeBytes.leafEntry(image, Keys.inode(ino));
        NodeBytes.forge(image, inode.block(), inode.valueAt() + 16, NodeBytes.le64(1L << 62));
        refused(image, "inode " + ino + " has size " + (1L << 62) + ", past the format's largest file size");
    }

    /** Found by the image fuzzer: a pointer whose end overflows was an untyped IllegalArgumentException in fsck. */
    @Test
    void anExtentPointerNearTheLargestBlockNumberIsRefused() throws IOException {
        RamBlockDevice image = populated();
        NodeBytes.Entry extent = NodeBytes.entries(image).stream()
                .filter(e -> e.level() == 0 && e.key().btree() == Keys.EXTENTS).findFirst().orElseThrow();
        NodeBytes.forge(image, extent.block(), extent.valueAt(), NodeBytes.le64(Long.MAX_VALUE));
        refused(image, "inconsistent extent");
    }

    /**
     * Found by the image fuzzer: a superblock copy whose sequence was forged to 2^63 - 1 won over the
     * other copy, and the next checkpoint's sequence wrapped negative: written over the good copy, losing
     * to the forged one at the next mount (whose tree does not hold what was written since), or to block
     * -1. Such a copy is invalid: the mount uses the other one, and every round of writes survives.
     */
    @Test
    void aSuperblockSequenceThatWouldOverflowMakesItsCopyInvalid() throws IOException {
        RamBlockDevice image = populated();
        ByteBuffer sb = ByteBuffer.wrap(image.peek(BS, 128)).order(ByteOrder.LITTLE_ENDIAN);
        sb.putLong(16, Long.MAX_VALUE).putInt(8, 0);
        sb.putInt(8, dev.iomap.adapter.support.Crc32c.of(sb.array(), 0, 128));
        image.poke(BS, sb.array(), 0, 128);
        for (int round = 0; round < 3; round++) {
            try (IomapFileSystem fs = Images.mount(image)) {
                for (int earlier = 0; earlier < round; earlier++) {
                    try (IomapFile f = fs.open("/round-" + earlier)) {
                        ByteBuffer back = ByteBuffer.allocate(3000);
                        f.read(0, back);
                        assertThat(Arrays.equals(back.array(), TestData.pattern(earlier, 0, 3000)))
                                .as("round %d's file in round %d", earlier, round).isTrue();
                    }
                }
                try (IomapFile f = fs.create("/round-" + round)) {
                    f.write(0, TestData.buffer(round, 0, 3000));
                }
            }
        }
        assertThat(Images.ADAPTER.fsck(image).problems()).isEmpty();
    }

    /** @return the leaf entry of {@code name} in directory {@code dir} */
    private static NodeBytes.Entry direntOf(RamBlockDevice image, long dir, String name) throws IOException {
        for (NodeBytes.Entry e : NodeBytes.entries(image)) {
            if (e.level() == 0 && e.key().btree() == Keys.DIRENTS && e.key().inode() == dir) {
                byte[] value = image.peek(e.block() * BS + e.valueAt(), e.valueLength());
                if (new String(value, 10, value.length - 10, StandardCharsets.UTF_8).equals(name)) {
                    return e;
                }
            }
        }
        throw new AssertionError("no entry " + name + " in " + dir);
    }
}
