package dev.iomap.adapter.gfs2;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.iomap.api.Capability;
import dev.iomap.api.FileFlag;
import dev.iomap.api.FileType;
import dev.iomap.api.FormatOptions;
import dev.iomap.api.IomapFile;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.MountOptions;
import dev.iomap.api.OpenFlag;
import dev.iomap.api.OperationNotPermittedException;
import dev.iomap.core.vfs.CoreRuntime;
import dev.iomap.devices.CutMode;
import dev.iomap.devices.PowerCutDevice;
import dev.iomap.devices.RamBlockDevice;
import dev.iomap.testkit.AdapterFixture;
import dev.iomap.testkit.Geometry;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.EnumSet;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The chattr flags ({@link Capability#INODE_FLAGS}) in the dinode's flags word: kept across a remount and
 * a power cut after fsync, beside {@link FileFlag#JOURNAL_DATA}, inherited by new files and directories,
 * at GFS2's bit values; fsck stays clean.
 */
class InodeFlagsTest {
    private static final int BLOCK = 1024;
    private static final Set<OpenFlag> READ_ONLY = Set.of(OpenFlag.READ_ONLY);

    private final Gfs2LikeAdapter adapter = new Gfs2LikeAdapter();
    private final RamBlockDevice device = new RamBlockDevice(BLOCK, 8L << 20);

    private IomapFileSystem mount() throws IOException {
        return CoreRuntime.mount(adapter, device, MountOptions.defaults());
    }

    private void assertClean() throws IOException {
        assertThat(adapter.fsck(device).problems()).isEmpty();
    }

    private static AdapterFixture fixture() {
        return AdapterFixture.of(new Gfs2LikeAdapter(), new Geometry(BLOCK, 4096, 0))
                .withDeviceBlockSizeOfFilesystem()
                .withDeviceBytes(8L << 20);
    }

    private static String name(FileFlag flag) {
        return "/" + flag.name().toLowerCase(java.util.Locale.ROOT);
    }

    private static byte[] read(IomapFileSystem fs, String path) throws IOException {
        try (IomapFile file = fs.open(path, READ_ONLY)) {
            ByteBuffer buffer = ByteBuffer.allocate((int) file.size());
            while (buffer.hasRemaining() && file.read(buffer.position(), buffer) > 0) {
                // keep reading
            }
            return buffer.array();
        }
    }

    @Test
    void theAdapterDeclaresInodeFlags() {
        assertThat(adapter.capabilities()).contains(Capability.INODE_FLAGS, Capability.JOURNALED_DATA);
    }

    @Test
    void theFlagsWordHoldsGfs2sBitsAndAnOldWordReadsTheSame() {
        assertThat(Dinode.flagBits(Set.of(FileFlag.JOURNAL_DATA))).isEqualTo(0x0001);
        assertThat(Dinode.flagBits(Set.of(FileFlag.IMMUTABLE))).isEqualTo(0x0020);
        assertThat(Dinode.flagBits(Set.of(FileFlag.APPEND))).isEqualTo(0x0040);
        assertThat(Dinode.flagBits(Set.of(FileFlag.NO_ATIME))).isEqualTo(0x0080);
        assertThat(Dinode.flagBits(Set.of(FileFlag.SYNC))).isEqualTo(0x0100);
        assertThat(Dinode.flagBits(Set.of(FileFlag.NO_DUMP))).isEqualTo(0x0800);
        assertThat(Dinode.flagBits(Set.of(FileFlag.DAX))).isEqualTo(0x1000);
        assertThat(Dinode.flagBits(EnumSet.allOf(FileFlag.class))).isEqualTo(Dinode.FILE_FLAG_BITS);
        for (FileFlag flag : FileFlag.values()) {
            assertThat(Dinode.keeps(flag)).as(flag.name()).isTrue();
        }
    }

    @Test
    void eachFlagSurvivesARemountAndIsClearedAgain() throws IOException {
        adapter.format(device, FormatOptions.blockSize(BLOCK));
        try (IomapFileSystem fs = mount()) {
            for (FileFlag flag : FileFlag.values()) {
                fs.create(name(flag)).close();
                fs.setFileFlags(name(flag), Set.of(flag));
                assertThat(fs.getFileFlags(name(flag))).as(flag.name()).containsExactly(flag);
            }
            fs.mkdir("/all");
            fs.setFileFlags("/all", EnumSet.allOf(FileFlag.class));
        }
        assertClean();
        Gfs2LikeMount raw = (Gfs2LikeMount) adapter.mount(device, MountOptions.defaults());
        try {
            for (FileFlag flag : FileFlag.values()) {
                long ino = raw.lookup(raw.rootIno(), name(flag).substring(1));
                assertThat(raw.volume.dinode(ino).flags).as("the flags word of " + flag)
                        .isEqualTo(Dinode.flagBits(Set.of(flag)));
            }
        } finally {
            raw.unmount();
        }
        try (IomapFileSystem fs = mount()) {
            for (FileFlag flag : FileFlag.values()) {
                assertThat(fs.getFileFlags(name(flag))).as(flag.name() + " after a remount").containsExactly(flag);
                fs.setFileFlags(name(flag), Set.of());
            }
            assertThat(fs.getFileFlags("/all")).isEqualTo(EnumSet.allOf(FileFlag.class));
            fs.setFileFlags("/all", Set.of());
        }
        try (IomapFileSystem fs = mount()) {
            for (FileFlag flag : FileFlag.values()) {
                assertThat(fs.getFileFlags(name(flag))).as(flag.name() + " cleared, after a remount").isEmpty();
            }
            assertThat(fs.getFileFlags("/all")).isEmpty();
        }
        assertClean();
    }

    @Test
    void settingAFlagChangesTheCtime() throws IOException {
        adapter.format(device, FormatOptions.blockSize(BLOCK));
        try (IomapFileSystem fs = mount()) {
            fs.create("/f").close();
            java.time.Instant before = fs.stat("/f").ctime();
            java.util.concurrent.locks.LockSupport.parkNanos(2_000_000);
            fs.setFileFlags("/f", Set.of(FileFlag.NO_DUMP));
            assertThat(fs.stat("/f").ctime()).isAfter(before);
        }
    }

    /** xfstests generic/507: set the flag, fsync the file opened read-only, power cut, mount: the flag is there. */
    @Test
    void anImmutableFlagFsyncedThroughAReadOnlyOpenSurvivesAPowerCut() throws IOException {
        adapter.format(device, FormatOptions.blockSize(BLOCK));
        PowerCutDevice power = new PowerCutDevice(device.copy());
        IomapFileSystem fs = CoreRuntime.mount(adapter, power, MountOptions.defaults());
        RamBlockDevice image;
        try {
            try (IomapFile file = fs.create("/f")) {
                file.write(0, ByteBuffer.wrap(new byte[] {1, 2, 3}));
            }
            fs.sync();
            fs.setFileFlags("/f", Set.of(FileFlag.IMMUTABLE));
            try (IomapFile file = fs.open("/f", READ_ONLY)) {
                file.fsync();
            }
            image = power.cut(CutMode.LOSE_UNFLUSHED, new Random(507));
        } finally {
            try {
                fs.close();
            } catch (IOException | RuntimeException expected) {
                // The power is off.
            }
        }
        PowerCutDevice again = new PowerCutDevice(image);
        IomapFileSystem remounted = CoreRuntime.mount(adapter, again, MountOptions.defaults());
        try {
            assertThat(remounted.getFileFlags("/f")).containsExactly(FileFlag.IMMUTABLE);
            assertThat(read(remounted, "/f")).containsExactly(1, 2, 3);
            assertThatThrownBy(() -> remounted.open("/f").close())
                    .isInstanceOf(OperationNotPermittedException.class);
            // and cleared the same way
            remounted.setFileFlags("/f", Set.of());
            try (IomapFile file = remounted.open("/f", READ_ONLY)) {
                file.fsync();
            }
            image = again.cut(CutMode.LOSE_UNFLUSHED, new Random(508));
        } finally {
            try {
                remounted.close();
            } catch (IOException | RuntimeException expected) {
                // The power is off.
            }
        }
        try (IomapFileSystem recovered = CoreRuntime.mount(adapter, image, MountOptions.defaults())) {
            assertThat(recovered.getFileFlags("/f")).isEmpty();
        }
        assertThat(adapter.fsck(image).problems()).isEmpty();
    }

    @Test
    void aFlagChangeCutAtEveryDeviceWriteShowsTheOldOrTheNewFlags() throws IOException {
        int images = Cuts.everyWrite(fixture(),
                fs -> {
                    fs.create("/f").close();
                    fs.setFileFlags("/f", Set.of(FileFlag.NO_DUMP));
                },
                fs -> fs.setFileFlags("/f", EnumSet.of(FileFlag.IMMUTABLE, FileFlag.SYNC, FileFlag.DAX)),
                fs -> {
                    try (IomapFile file = fs.open("/f", READ_ONLY)) {
                        file.fsync();
                    }
                },
                fs -> {
                    Set<FileFlag> now = fs.getFileFlags("/f");
                    return now.equals(Set.of(FileFlag.NO_DUMP)) ? "old"
                            : now.equals(EnumSet.of(FileFlag.IMMUTABLE, FileFlag.SYNC, FileFlag.DAX)) ? "new"
                            : "flags " + now;
                });
        assertThat(images).isGreaterThan(1);
    }

    @Test
    void journaledDataAndImmutableCoexist() throws IOException {
        adapter.format(device, FormatOptions.blockSize(BLOCK));
        byte[] data = new byte[3 * BLOCK + 17];
        for (int i = 0; i < data.length; i++) {
            data[i] = (byte) (i * 13 + 5);
        }
        try (IomapFileSystem fs = mount()) {
            fs.create("/f").close();
            fs.setFileFlags("/f", Set.of(FileFlag.JOURNAL_DATA));
            try (IomapFile file = fs.open("/f")) {
                file.write(0, ByteBuffer.wrap(data));
            }
            fs.setFileFlags("/f", EnumSet.of(FileFlag.JOURNAL_DATA, FileFlag.IMMUTABLE));
            assertThat(fs.getFileFlags("/f")).containsExactlyInAnyOrder(FileFlag.JOURNAL_DATA, FileFlag.IMMUTABLE);
            assertThatThrownBy(() -> fs.open("/f").close()).isInstanceOf(OperationNotPermittedException.class);
            assertThat(read(fs, "/f")).isEqualTo(data);
        }
        assertClean();
        Gfs2LikeMount raw = (Gfs2LikeMount) adapter.mount(device, MountOptions.defaults());
        try {
            Dinode d = raw.volume.dinode(raw.lookup(raw.rootIno(), "f"));
            assertThat(d.flags).isEqualTo(Dinode.FLAG_JDATA | Dinode.FLAG_IMMUTABLE);
            assertThat(d.jdata()).isTrue();
            assertThat(raw.jdata(d)).isTrue();
        } finally {
            raw.unmount();
        }
        try (IomapFileSystem fs = mount()) {
            assertThat(fs.getFileFlags("/f")).containsExactlyInAnyOrder(FileFlag.JOURNAL_DATA, FileFlag.IMMUTABLE);
            assertThat(read(fs, "/f")).isEqualTo(data);
            fs.setFileFlags("/f", Set.of(FileFlag.JOURNAL_DATA));
            try (IomapFile file = fs.open("/f")) {
                file.write(0, ByteBuffer.wrap(new byte[] {9}));
                file.fsync();
            }
            data[0] = 9;
            assertThat(fs.getFileFlags("/f")).containsExactly(FileFlag.JOURNAL_DATA);
        }
        try (IomapFileSystem fs = mount()) {
            assertThat(read(fs, "/f")).isEqualTo(data);
            assertThat(fs.getFileFlags("/f")).containsExactly(FileFlag.JOURNAL_DATA);
        }
        assertClean();
    }

    @Test
    void newFilesAndDirectoriesInheritTheInheritedFlags() throws IOException {
        adapter.format(device, FormatOptions.blockSize(BLOCK));
        Set<FileFlag> inherited = EnumSet.of(FileFlag.DAX, FileFlag.NO_ATIME, FileFlag.SYNC, FileFlag.NO_DUMP);
        try (IomapFileSystem fs = mount()) {
            fs.mkdir("/d");
            fs.setFileFlags("/d", EnumSet.of(FileFlag.DAX, FileFlag.NO_ATIME, FileFlag.SYNC, FileFlag.NO_DUMP,
                    FileFlag.APPEND));
            fs.create("/d/f").close();
            fs.mkdir("/d/sub");
            assertThat(fs.getFileFlags("/d/f")).isEqualTo(inherited);
            assertThat(fs.getFileFlags("/d/sub")).isEqualTo(inherited);
            fs.create("/d/sub/g").close();
            assertThat(fs.getFileFlags("/d/sub/g")).isEqualTo(inherited);

            // JOURNAL_DATA is inherited as before, beside the others; IMMUTABLE is not
            fs.mkdir("/j");
            fs.setFileFlags("/j", EnumSet.of(FileFlag.JOURNAL_DATA, FileFlag.NO_ATIME));
            fs.create("/j/f").close();
            fs.mkdir("/j/sub");
            assertThat(fs.getFileFlags("/j/f")).containsExactlyInAnyOrder(FileFlag.JOURNAL_DATA, FileFlag.NO_ATIME);
            assertThat(fs.getFileFlags("/j/sub")).containsExactlyInAnyOrder(FileFlag.JOURNAL_DATA, FileFlag.NO_ATIME);

            // a plain directory passes nothing on
            fs.mkdir("/plain");
            fs.create("/plain/f").close();
            assertThat(fs.getFileFlags("/plain/f")).isEmpty();
        }
        try (IomapFileSystem fs = mount()) {
            assertThat(fs.getFileFlags("/d")).isEqualTo(EnumSet.of(FileFlag.DAX, FileFlag.NO_ATIME, FileFlag.SYNC,
                    FileFlag.NO_DUMP, FileFlag.APPEND));
            assertThat(fs.getFileFlags("/d/f")).isEqualTo(inherited);
            assertThat(fs.getFileFlags("/d/sub")).isEqualTo(inherited);
            assertThat(fs.getFileFlags("/d/sub/g")).isEqualTo(inherited);
            assertThat(fs.getFileFlags("/j/f")).containsExactlyInAnyOrder(FileFlag.JOURNAL_DATA, FileFlag.NO_ATIME);
        }
        assertClean();
        Gfs2LikeMount raw = (Gfs2LikeMount) adapter.mount(device, MountOptions.defaults());
        try {
            long d = raw.lookup(raw.rootIno(), "d");
            long f = raw.lookup(d, "f");
            assertThat(raw.volume.dinode(f).type).isEqualTo(FileType.REGULAR);
            assertThat(raw.volume.dinode(f).flags).isEqualTo(Dinode.FLAG_DAX | Dinode.FLAG_NO_ATIME
                    | Dinode.FLAG_SYNC | Dinode.FLAG_NO_DUMP);
        } finally {
            raw.unmount();
        }
    }

    @Test
    void theInheritedFlagsAreInTheTransactionThatCreatesTheFile() throws IOException {
        int images = Cuts.everyWrite(fixture(),
                fs -> {
                    fs.mkdir("/d");
                    fs.setFileFlags("/d", EnumSet.of(FileFlag.NO_ATIME, FileFlag.DAX));
                },
                fs -> fs.create("/d/f").close(),
                IomapFileSystem::sync,
                fs -> {
                    boolean exists = fs.readdir("/d").stream().anyMatch(e -> e.name().equals("f"));
                    if (!exists) {
                        return "old";
                    }
                    Set<FileFlag> now = fs.getFileFlags("/d/f");
                    return now.equals(EnumSet.of(FileFlag.NO_ATIME, FileFlag.DAX)) ? "new" : "/d/f has " + now;
                });
        assertThat(images).isGreaterThan(1);
    }
}
