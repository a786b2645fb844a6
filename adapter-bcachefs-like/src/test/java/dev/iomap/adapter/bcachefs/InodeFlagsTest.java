package dev.iomap.adapter.bcachefs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.iomap.adapter.bcachefs.store.BtreeStore;
import dev.iomap.adapter.bcachefs.store.Update;
import dev.iomap.api.Capability;
import dev.iomap.api.CorruptFileSystemException;
import dev.iomap.api.FileFlag;
import dev.iomap.api.FileType;
import dev.iomap.api.IomapFile;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.MountOptions;
import dev.iomap.api.NewInodeAttributes;
import dev.iomap.api.NotSupportedException;
import dev.iomap.api.OpenFlag;
import dev.iomap.devices.CutMode;
import dev.iomap.devices.PowerCutDevice;
import dev.iomap.devices.RamBlockDevice;
import dev.iomap.spi.MountedFileSystem;
import dev.iomap.testkit.TestData;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Instant;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Inode flags ({@code chattr}) on bcachefs-like: kept in the inode value's flags field (bcachefs's
 * {@code bi_flags}), through a remount and through a power cut after an fsync of the file opened read-only
 * (xfstests generic/507); {@link FileFlag#JOURNAL_DATA} refused; new files and directories inherit their
 * parent's inheritable flags, other types none; an image written before flags were kept reads as no
 * flags; unknown bits are damage.
 */
class InodeFlagsTest {
    private static final int BS = 4096;
    /** The flags bcachefs-like keeps. */
    private static final List<FileFlag> KEPT = List.of(FileFlag.SYNC, FileFlag.IMMUTABLE, FileFlag.APPEND,
            FileFlag.NO_DUMP, FileFlag.NO_ATIME, FileFlag.DAX);
    private static final int LENGTH = 3 * BS + 123;

    private static RamBlockDevice formatted() throws IOException {
        RamBlockDevice device = new RamBlockDevice(BS, 16L << 20);
        Images.format(device, Map.of());
        return device;
    }

    private static void writeFile(IomapFileSystem fs, String path, int seed) throws IOException {
        try (IomapFile f = fs.create(path)) {
            f.write(0, TestData.buffer(seed, 0, LENGTH));
            f.fsync();
        }
    }

    private static void assertContent(IomapFileSystem fs, String path, int seed) throws IOException {
        try (IomapFile f = fs.open(path, Set.of(OpenFlag.READ_ONLY))) {
            ByteBuffer back = ByteBuffer.allocate(LENGTH);
            f.read(0, back);
            assertThat(back.array()).as("data of %s", path).isEqualTo(TestData.pattern(seed, 0, LENGTH));
        }
    }

    private static void assertClean(RamBlockDevice device) throws IOException {
        assertThat(Images.ADAPTER.fsck(device).problems()).as("fsck").isEmpty();
    }

    /** Opens the file read-only and fsyncs it: how generic/507 makes a flag change durable. */
    private static void fsyncReadOnly(IomapFileSystem fs, String path) throws IOException {
        try (IomapFile f = fs.open(path, Set.of(OpenFlag.READ_ONLY))) {
            f.fsync();
        }
    }

    @Test
    void theAdapterDeclaresInodeFlags() {
        assertThat(Images.ADAPTER.capabilities()).contains(Capability.INODE_FLAGS)
                .doesNotContain(Capability.JOURNALED_DATA);
    }

    @Test
    void everyFlagAloneAndAllTogetherSurviveARemountAndClearingSurvivesToo() throws IOException {
        RamBlockDevice device = formatted();
        try (IomapFileSystem fs = Images.mount(device)) {
            for (FileFlag flag : KEPT) {
                writeFile(fs, "/" + flag, flag.ordinal());
                fs.mkdir("/dir-" + flag);
                assertThat(fs.getFileFlags("/" + flag)).isEmpty();
                fs.setFileFlags("/" + flag, Set.of(flag));
                fs.setFileFlags("/dir-" + flag, Set.of(flag));
                assertThat(fs.getFileFlags("/" + flag)).containsExactly(flag);
            }
            writeFile(fs, "/all", 99);
            fs.setFileFlags("/all", EnumSet.copyOf(KEPT));
            Instant before = fs.stat("/all").ctime();
            fs.setFileFlags("/all", EnumSet.copyOf(KEPT));
            assertThat(fs.stat("/all").ctime()).as("a flag change sets the ctime").isAfterOrEqualTo(before);
        }
        assertClean(device);
        try (IomapFileSystem fs = Images.mount(device)) {
            for (FileFlag flag : KEPT) {
                assertThat(fs.getFileFlags("/" + flag)).as("file with %s after a remount", flag)
                        .containsExactly(flag);
                assertThat(fs.getFileFlags("/dir-" + flag)).as("directory with %s after a remount", flag)
                        .containsExactly(flag);
                assertContent(fs, "/" + flag, flag.ordinal());
            }
            assertThat(fs.getFileFlags("/all")).containsExactlyInAnyOrderElementsOf(KEPT);
            assertContent(fs, "/all", 99);
            for (FileFlag flag : KEPT) {
                fs.setFileFlags("/" + flag, Set.of());
                fs.setFileFlags("/dir-" + flag, Set.of());
            }
            fs.setFileFlags("/all", Set.of(FileFlag.NO_DUMP));
        }
        assertClean(device);
        try (IomapFileSystem fs = Images.mount(device)) {
            for (FileFlag flag : KEPT) {
                assertThat(fs.getFileFlags("/" + flag)).as("file once with %s after a remount", flag).isEmpty();
                assertThat(fs.getFileFlags("/dir-" + flag)).isEmpty();
                fs.unlink("/" + flag);
                fs.rmdir("/dir-" + flag);
            }
            assertThat(fs.getFileFlags("/all")).containsExactly(FileFlag.NO_DUMP);
        }
        assertClean(device);
    }

    /**
     * xfstests generic/507: chattr +i, fsync of the file opened read-only, power cut, mount: the flag is
     * there; then chattr -i the same way: gone after the next power cut.
     */
    @ParameterizedTest(name = "{0}")
    @EnumSource(value = CutMode.class, names = {"LOSE_UNFLUSHED", "TEAR_AND_REORDER"})
    void immutableSetAndClearedSurvivePowerCutsAfterAnFsyncOfTheFileOpenedReadOnly(CutMode mode)
            throws IOException {
        Random random = new Random(507);
        PowerCutDevice device = new PowerCutDevice(formatted());
        RamBlockDevice crashed;
        try (IomapFileSystem fs = Images.mount(device)) {
            writeFile(fs, "/foo", 7);
            fs.setFileFlags("/foo", Set.of(FileFlag.IMMUTABLE));
            RamBlockDevice unsynced = device.image(CutMode.LOSE_UNFLUSHED, null);
            try (IomapFileSystem before = Images.mount(unsynced)) {
                assertThat(before.getFileFlags("/foo")).as("the flag before the fsync is not durable yet").isEmpty();
            }
            fsyncReadOnly(fs, "/foo");
            crashed = device.image(mode, random); // what a power cut now leaves
        }
        PowerCutDevice again = new PowerCutDevice(crashed);
        RamBlockDevice cleared;
        try (IomapFileSystem fs = Images.mount(again)) {
            assertThat(fs.getFileFlags("/foo")).as("+i after the power cut").containsExactly(FileFlag.IMMUTABLE);
            assertContent(fs, "/foo", 7);
            fs.setFileFlags("/foo", Set.of());
            fsyncReadOnly(fs, "/foo");
            cleared = again.image(mode, random);
        }
        assertClean(crashed);
        try (IomapFileSystem fs = Images.mount(cleared)) {
            assertThat(fs.getFileFlags("/foo")).as("-i after the second power cut").isEmpty();
            assertContent(fs, "/foo", 7);
            fs.unlink("/foo");
        }
        assertClean(cleared);
    }

    @Test
    void journaledDataIsRefusedAndChangesNothing() throws IOException {
        RamBlockDevice device = formatted();
        try (IomapFileSystem fs = Images.mount(device)) {
            writeFile(fs, "/f", 1);
            fs.setFileFlags("/f", Set.of(FileFlag.NO_ATIME));
            assertThatThrownBy(() -> fs.setFileFlags("/f", Set.of(FileFlag.JOURNAL_DATA)))
                    .isInstanceOf(NotSupportedException.class);
            assertThat(fs.getFileFlags("/f")).containsExactly(FileFlag.NO_ATIME);
        }
        // The adapter's own refusal, below the core's capability check.
        MountedFileSystem mount = Images.ADAPTER.mount(device, MountOptions.defaults());
        try {
            long ino = mount.inodeOps().lookup(mount.rootIno(), "f");
            assertThatThrownBy(() -> mount.inodeOps().setflags(ino, Optional.empty(),
                    EnumSet.of(FileFlag.SYNC, FileFlag.JOURNAL_DATA))).isInstanceOf(NotSupportedException.class)
                    .hasMessageContaining("JOURNAL_DATA");
            assertThat(mount.inodeOps().getflags(ino)).containsExactly(FileFlag.NO_ATIME);
        } finally {
            mount.superOps().unmount();
        }
        assertClean(device);
    }

    @Test
    void newFilesAndDirectoriesInheritTheInheritableFlagsAndOtherTypesNone() throws IOException {
        RamBlockDevice device = formatted();
        Set<FileFlag> inherited = EnumSet.of(FileFlag.DAX, FileFlag.NO_ATIME, FileFlag.SYNC, FileFlag.NO_DUMP);
        try (IomapFileSystem fs = Images.mount(device)) {
            fs.mkdir("/d");
            fs.setFileFlags("/d", EnumSet.of(FileFlag.DAX, FileFlag.NO_ATIME, FileFlag.SYNC, FileFlag.NO_DUMP,
                    FileFlag.APPEND));
            writeFile(fs, "/d/f", 3);
            fs.mkdir("/d/sub");
            fs.mkdir("/d/sub/deeper");
            fs.createSymbolicLink("/d/link", "f", NewInodeAttributes.defaults(FileType.SYMLINK));
            fs.createSpecialFile("/d/fifo", FileType.FIFO, 0, NewInodeAttributes.defaults(FileType.FIFO));
            writeFile(fs, "/plain", 4);
            assertThat(fs.getFileFlags("/d/f")).containsExactlyInAnyOrderElementsOf(inherited);
            assertThat(fs.getFileFlags("/d/sub")).containsExactlyInAnyOrderElementsOf(inherited);
            assertThat(fs.getFileFlags("/d/sub/deeper")).containsExactlyInAnyOrderElementsOf(inherited);
            assertThat(fs.getFileFlags("/d/fifo")).isEmpty();
            assertThat(fs.getFileFlags("/plain")).isEmpty();
        }
        assertClean(device);
        try (IomapFileSystem fs = Images.mount(device)) {
            assertThat(fs.getFileFlags("/d")).hasSize(5);
            assertThat(fs.getFileFlags("/d/f")).containsExactlyInAnyOrderElementsOf(inherited);
            assertThat(fs.getFileFlags("/d/sub")).containsExactlyInAnyOrderElementsOf(inherited);
            assertContent(fs, "/d/f", 3);
        }
        // The symbolic link's own record (getFileFlags follows the link): no flags.
        try (BtreeStore store = BtreeStore.open(device, true)) {
            long d = Dirents.find(store, Keys.ROOT_INO, "d").orElseThrow().ino();
            long link = Dirents.find(store, d, "link").orElseThrow().ino();
            InodeRecord r = InodeRecord.decode(link, store.get(Keys.inode(link)).orElseThrow());
            assertThat(r.type).isEqualTo(FileType.SYMLINK);
            assertThat(r.flags).as("the symbolic link's flags field").isZero();
            long f = Dirents.find(store, d, "f").orElseThrow().ino();
            assertThat(InodeRecord.decode(f, store.get(Keys.inode(f)).orElseThrow()).flags)
                    .isEqualTo(InodeRecord.FLAG_DAX | InodeRecord.FLAG_NO_ATIME | InodeRecord.FLAG_SYNC
                            | InodeRecord.FLAG_NO_DUMP);
        }
    }

    /**
     * The inode value as the format wrote it before flags were kept: the same 84 bytes with the flags
     * field always 0 (written here field by field, not through {@link InodeRecord#encode}).
     */
    private static byte[] oldValue(InodeRecord r) {
        ByteBuffer b = ByteBuffer.allocate(84).order(ByteOrder.LITTLE_ENDIAN);
        b.put((byte) (r.type == FileType.DIRECTORY ? 2 : 1)).put((byte) 0).putShort((short) r.mode);
        b.putInt(r.uid).putInt(r.gid).putInt(r.nlink).putLong(r.size);
        for (Instant t : new Instant[] {r.atime, r.mtime, r.ctime, r.btime}) {
            b.putLong(t.getEpochSecond() * 1_000_000_000L + t.getNano());
        }
        b.putInt(0).putLong(r.generation).putLong(r.parent).putLong(r.blocks);
        return b.array();
    }

    @Test
    void anImageWrittenBeforeFlagsWereKeptReadsAsNoFlags() throws IOException {
        RamBlockDevice device = formatted();
        try (IomapFileSystem fs = Images.mount(device)) {
            fs.mkdir("/old-dir");
            writeFile(fs, "/old-dir/old-file", 5);
            fs.setFileFlags("/old-dir", EnumSet.copyOf(KEPT));
            fs.setFileFlags("/old-dir/old-file", EnumSet.copyOf(KEPT));
        }
        try (BtreeStore store = BtreeStore.open(device, false)) {
            long dir = Dirents.find(store, Keys.ROOT_INO, "old-dir").orElseThrow().ino();
            long file = Dirents.find(store, dir, "old-file").orElseThrow().ino();
            Update update = store.update();
            for (long ino : new long[] {Keys.ROOT_INO, dir, file}) {
                byte[] old = oldValue(InodeRecord.decode(ino, store.get(Keys.inode(ino)).orElseThrow()));
                assertThat(InodeRecord.fileFlags(InodeRecord.decode(ino, old).flags)).isEmpty();
                update.put(Keys.inode(ino), old);
            }
            update.commit();
            store.flushAll();
            store.checkpoint();
        }
        assertClean(device);
        try (IomapFileSystem fs = Images.mount(device)) {
            assertThat(fs.getFileFlags("/")).isEmpty();
            assertThat(fs.getFileFlags("/old-dir")).isEmpty();
            assertThat(fs.getFileFlags("/old-dir/old-file")).isEmpty();
            assertContent(fs, "/old-dir/old-file", 5);
            writeFile(fs, "/old-dir/new-file", 6); // no flags to inherit
            assertThat(fs.getFileFlags("/old-dir/new-file")).isEmpty();
            fs.setFileFlags("/old-dir/old-file", Set.of(FileFlag.SYNC));
        }
        assertClean(device);
        try (IomapFileSystem fs = Images.mount(device)) {
            assertThat(fs.getFileFlags("/old-dir/old-file")).containsExactly(FileFlag.SYNC);
        }
    }

    @Test
    void anUnknownFlagBitIsDamageThatFsckReportsAndMountRefuses() throws IOException {
        RamBlockDevice device = formatted();
        try (IomapFileSystem fs = Images.mount(device)) {
            writeFile(fs, "/f", 2);
            fs.setFileFlags("/f", Set.of(FileFlag.APPEND));
        }
        long ino;
        try (BtreeStore store = BtreeStore.open(device, true)) {
            ino = Dirents.find(store, Keys.ROOT_INO, "f").orElseThrow().ino();
        }
        // bit 5: bcachefs's i_size_dirty, which this format does not keep
        NodeBytes.Entry inode = NodeBytes.leafEntry(device, Keys.inode(ino));
        NodeBytes.forge(device, inode.block(), inode.valueAt() + 56,
                ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt(InodeRecord.FLAG_APPEND | 1 << 5).array());
        List<String> problems = Images.ADAPTER.fsck(device.copy()).problems();
        assertThat(problems).anyMatch(p -> p.contains("inode " + ino + " has flags 0x24 (unknown bits 0x20)"));
        assertThatThrownBy(() -> Images.mount(device).close()).isInstanceOf(CorruptFileSystemException.class)
                .hasMessageContaining("unknown bits 0x20");
        InodeRecord forged = new InodeRecord(ino);
        forged.type = FileType.REGULAR;
        forged.mode = 0644;
        forged.nlink = 1;
        forged.atime = forged.mtime = forged.ctime = forged.btime = Instant.now();
        forged.flags = 1 << 31;
        byte[] value = forged.encode();
        assertThatThrownBy(() -> InodeRecord.decode(ino, value)).isInstanceOf(CorruptFileSystemException.class)
                .hasMessageContaining("unknown bits 0x80000000");
    }
}
