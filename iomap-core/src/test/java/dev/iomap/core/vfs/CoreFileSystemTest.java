package dev.iomap.core.vfs;

import static dev.iomap.testkit.TestData.pattern;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.iomap.api.Capability;
import dev.iomap.api.DirEntry;
import dev.iomap.api.FallocateMode;
import dev.iomap.api.FileType;
import dev.iomap.api.FormatOptions;
import dev.iomap.api.IomapFile;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.MountOptions;
import dev.iomap.api.NotSupportedException;
import dev.iomap.api.PageCacheOptions;
import dev.iomap.devices.Fault;
import dev.iomap.devices.FaultInjectingDevice;
import dev.iomap.devices.RamBlockDevice;
import dev.iomap.spi.FileSystemAdapter;
import dev.iomap.testkit.RecordingAdapter;
import dev.iomap.testkit.snapfs.SnapAdapter;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.file.ClosedFileSystemException;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.InvalidPathException;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class CoreFileSystemTest {
    private static final int K1 = 1024;

    private final RamBlockDevice device = new RamBlockDevice(K1, 8L << 20);

    private IomapFileSystem mount(FileSystemAdapter adapter) throws Exception {
        adapter.format(device, FormatOptions.blockSize(K1));
        return CoreRuntime.mount(adapter, device,
                new MountOptions(PageCacheOptions.builder().maxFolioOrder(2).build(), false));
    }

    /** snapfs with every capability it has, its cache hooks recorded. */
    private static RecordingAdapter snapfs() {
        return new RecordingAdapter(new SnapAdapter());
    }

    private static byte[] readAll(IomapFile file) throws Exception {
        ByteBuffer dst = ByteBuffer.allocate((int) file.size());
        while (dst.hasRemaining() && file.read(dst.position(), dst) > 0) {
            // until full or at end of file
        }
        return dst.array();
    }

    @Test
    void namespaceOperationsResolvePathsAndUseNioExceptions() throws Exception {
        try (IomapFileSystem fs = mount(snapfs())) {
            fs.mkdir("/a");
            fs.mkdir("/a/b");
            fs.create("/a/b/f").close();

            assertThat(fs.readdir("/a")).containsExactly(new DirEntry("b", fs.stat("/a/b").ino(), FileType.DIRECTORY));
            assertThat(fs.stat("/a/b/f").type()).isEqualTo(FileType.REGULAR);
            assertThatThrownBy(() -> fs.create("/a/b/f")).isInstanceOf(FileAlreadyExistsException.class);
            assertThatThrownBy(() -> fs.open("/a/missing")).isInstanceOf(NoSuchFileException.class);
            assertThatThrownBy(() -> fs.create("/a/b/f/x")).isInstanceOf(NotDirectoryException.class);
            assertThatThrownBy(() -> fs.readdir("/a/b/f")).isInstanceOf(NotDirectoryException.class);
            assertThatThrownBy(() -> fs.open("/a")).isInstanceOf(FileSystemException.class)
                    .hasMessageContaining("Is a directory");
            assertThatThrownBy(() -> fs.rmdir("/a")).isInstanceOf(DirectoryNotEmptyException.class);
            assertThatThrownBy(() -> fs.open("relative")).isInstanceOf(InvalidPathException.class);
            assertThatThrownBy(() -> fs.open("/a/../a")).isInstanceOf(InvalidPathException.class);
            fs.rename("/a/b/f", "/a/g");
            assertThat(fs.readdir("/a")).extracting(DirEntry::name).containsExactly("b", "g");
        }
    }

    @Test
    void dataWrittenThroughAFileSurvivesRemount() throws Exception {
        RecordingAdapter adapter = snapfs();
        byte[] data = pattern(1, 0, 10_000);
        try (IomapFileSystem fs = mount(adapter); IomapFile file = fs.create("/f")) {
            file.write(0, ByteBuffer.wrap(data));
        }
        try (IomapFileSystem fs = CoreRuntime.mount(adapter, device, MountOptions.defaults());
                IomapFile file = fs.open("/f")) {
            assertThat(file.size()).isEqualTo(10_000);
            assertThat(readAll(file)).isEqualTo(data);
        }
        assertThat(adapter.calls()).contains("unmount");
    }

    /**
     * Unmount order: background writeback stops, then the final sync, then the adapter's unmount.
     * When the flusher stopped only after the adapter's unmount, a background pass could call
     * {@code mapBlocks} on an unmounted volume.
     */
    @Test
    void backgroundWritebackHasStoppedWhenTheAdapterUnmounts() throws Exception {
        RecordingAdapter adapter = snapfs();
        adapter.format(device, FormatOptions.blockSize(K1));
        PageCacheOptions busyFlusher = PageCacheOptions.builder().maxFolioOrder(2)
                .writebackInterval(java.time.Duration.ofMillis(1)).dirtyExpire(java.time.Duration.ofMillis(1))
                .build();
        CoreFileSystem fs = (CoreFileSystem) CoreRuntime.mount(adapter, device, MountOptions.of(busyFlusher));
        List<Boolean> flusherRunningAtUnmount = new ArrayList<>();
        List<Boolean> dirtyAtUnmount = new ArrayList<>();
        adapter.beforeCall("unmount", () -> {
            flusherRunningAtUnmount.add(fs.cache().isBackgroundWritebackRunning());
            dirtyAtUnmount.add(fs.cache().dirtyBytes() > 0);
        });
        assertThat(fs.cache().isBackgroundWritebackRunning()).isTrue();
        try (IomapFile file = fs.create("/f")) {
            file.write(0, ByteBuffer.wrap(pattern(3, 0, 50_000)));
        }

        fs.close();

        assertThat(flusherRunningAtUnmount).containsExactly(false);
        assertThat(dirtyAtUnmount).containsExactly(false);
        assertThat(adapter.calls()).endsWith("unmount");
    }

    @Test
    void fsyncWritesBackBeforeTheAdapterCommits() throws Exception {
        RecordingAdapter adapter = snapfs();
        try (IomapFileSystem fs = mount(adapter); IomapFile file = fs.create("/f")) {
            file.write(0, ByteBuffer.wrap(pattern(2, 0, 3000)));
            file.fdatasync();
            assertThat(adapter.calls()).containsExactly("fdatasync " + file.ino());
            assertThat(device.stats().dataBytesWritten()).isEqualTo(3 * K1);
        }
    }

    @Test
    void truncateGoesThroughTheCacheThenTheAdapter() throws Exception {
        RecordingAdapter adapter = snapfs();
        try (IomapFileSystem fs = mount(adapter); IomapFile file = fs.create("/f")) {
            file.write(0, ByteBuffer.wrap(pattern(3, 0, 8 * K1)));
            file.truncate(3000);
            file.truncate(5000);

            byte[] expected = new byte[5000];
            System.arraycopy(pattern(3, 0, 8 * K1), 0, expected, 0, 3000);
            assertThat(readAll(file)).isEqualTo(expected);
            assertThat(adapter.calls()).containsExactly("setSize " + file.ino() + " 3000",
                    "setSize " + file.ino() + " 5000");
        }
    }

    @Test
    void punchHoleZeroesPartialEdgesAndHandsWholeBlocksToTheAdapter() throws Exception {
        RecordingAdapter adapter = snapfs();
        try (IomapFileSystem fs = mount(adapter); IomapFile file = fs.create("/f")) {
            byte[] data = pattern(4, 0, 16 * K1);
            file.write(0, ByteBuffer.wrap(data));

            file.fallocate(FallocateMode.PUNCH_HOLE, K1 + 10, 5 * K1, false);

            Arrays.fill(data, K1 + 10, 6 * K1 + 10, (byte) 0);
            assertThat(readAll(file)).isEqualTo(data);
            assertThat(file.size()).isEqualTo(16 * K1);
            assertThat(adapter.calls()).containsExactly("fallocate PUNCH_HOLE " + 2 * K1 + " " + 4 * K1);
            file.fsync();
            assertThat(fs.stat("/f").allocatedBytes()).isEqualTo(12 * K1);
        }
    }

    @Test
    void allocateWithoutKeepSizeGrowsTheFile() throws Exception {
        RecordingAdapter adapter = snapfs();
        try (IomapFileSystem fs = mount(adapter); IomapFile file = fs.create("/f")) {
            file.fallocate(FallocateMode.ALLOCATE, 100, 5000, false);
            assertThat(file.size()).isEqualTo(5100);
            file.fallocate(FallocateMode.ALLOCATE, 10_000, 10, true);
            assertThat(file.size()).isEqualTo(5100);
            assertThat(adapter.calls()).startsWith("fallocate ALLOCATE 0 " + 5 * K1);
        }
    }

    @Test
    void anUndeclaredCapabilityFailsWithNotSupported() throws Exception {
        SnapAdapter adapter = new SnapAdapter(Set.of(Capability.TRUNCATE));
        try (IomapFileSystem fs = mount(adapter); IomapFile file = fs.create("/f")) {
            assertThatThrownBy(() -> fs.mkdir("/d")).isInstanceOf(NotSupportedException.class)
                    .hasMessageContaining("DIRECTORIES");
            assertThatThrownBy(() -> file.fallocate(FallocateMode.PUNCH_HOLE, 0, 10, true))
                    .isInstanceOf(NotSupportedException.class).hasMessageContaining("PUNCH_HOLE");
            assertThatThrownBy(() -> file.cloneRange(file, 0, 4096, 4096))
                    .isInstanceOf(NotSupportedException.class).hasMessageContaining("CLONE");
            assertThatThrownBy(() -> file.unshare(0, 10)).isInstanceOf(NotSupportedException.class);
            file.write(0, ByteBuffer.wrap(pattern(5, 0, 10)));
            assertThatThrownBy(() -> file.write(100, ByteBuffer.wrap(pattern(5, 0, 10))))
                    .isInstanceOf(NotSupportedException.class).hasMessageContaining("RANDOM_WRITE");
        }
    }

    @Test
    void anUnlinkedOpenFileStaysUsableUntilItsLastClose() throws Exception {
        RecordingAdapter adapter = snapfs();
        try (IomapFileSystem fs = mount(adapter)) {
            IomapFile file = fs.create("/f");
            file.write(0, ByteBuffer.wrap(pattern(6, 0, 2000)));
            fs.unlink("/f");

            assertThat(readAll(file)).isEqualTo(pattern(6, 0, 2000));
            assertThat(adapter.calls()).doesNotContain("evict " + file.ino());
            file.close();
            assertThat(adapter.calls()).contains("evict " + file.ino());
            assertThatThrownBy(() -> fs.open("/f")).isInstanceOf(NoSuchFileException.class);
            assertThatThrownBy(() -> file.read(0, ByteBuffer.allocate(1))).isInstanceOf(ClosedChannelException.class);
        }
    }

    @Test
    void renameOverAnExistingFileEvictsIt() throws Exception {
        RecordingAdapter adapter = snapfs();
        try (IomapFileSystem fs = mount(adapter)) {
            fs.create("/a").close();
            IomapFile b = fs.create("/b");
            long replaced = b.ino();
            b.close();

            fs.rename("/a", "/b");

            assertThat(adapter.calls()).contains("evict " + replaced);
            assertThat(fs.readdir("/")).extracting(DirEntry::name).containsExactly("b");
        }
    }

    @Test
    void cloneChecksAlignmentAndRanges() throws Exception {
        // snapfs cannot clone: declaring CLONE only gets these calls past the capability check to
        // the engine's own checks, which must refuse every one before the adapter hears of it. (Not
        // ATOMIC_WRITES: a mount refuses an adapter declaring it without atomic write limits.)
        RecordingAdapter adapter = snapfs().declaring(EnumSet.complementOf(EnumSet.of(Capability.ATOMIC_WRITES)));
        try (IomapFileSystem fs = mount(adapter); IomapFile file = fs.create("/f")) {
            file.write(0, ByteBuffer.wrap(pattern(7, 0, 8 * K1)));
            assertThatThrownBy(() -> file.cloneRange(file, 10, 4 * K1, K1))
                    .hasMessageContaining("multiples of the block size");
            assertThatThrownBy(() -> file.cloneRange(file, 0, K1, 2 * K1)).hasMessageContaining("overlap");
            assertThatThrownBy(() -> file.cloneRange(file, 7 * K1, 10 * K1, 2 * K1))
                    .hasMessageContaining("passes its EOF");
            IomapFile other = fs.create("/other");
            other.write(0, ByteBuffer.wrap(pattern(8, 0, 8 * K1)));
            IomapFile shortFile = fs.create("/short");
            shortFile.write(0, ByteBuffer.wrap(pattern(9, 0, K1 + 100)));
            assertThatThrownBy(() -> other.cloneRange(shortFile, 0, 2 * K1, K1 + 100))
                    .isInstanceOf(dev.iomap.api.InvalidRangeException.class)
                    .hasMessageContaining("partial last block");
            assertThat(readAll(other)).isEqualTo(pattern(8, 0, 8 * K1));
            assertThat(adapter.calls()).noneMatch(call -> call.startsWith("cloneRange"));
        }
    }

    @Test
    void unmountReleasesTheMountEvenWhenTheFinalSyncFails() throws Exception {
        RecordingAdapter adapter = snapfs();
        FaultInjectingDevice faulty = new FaultInjectingDevice(device);
        adapter.format(faulty, FormatOptions.blockSize(K1));
        IomapFileSystem fs = CoreRuntime.mount(adapter, faulty, MountOptions.defaults());
        IomapFile file = fs.create("/f");
        file.write(0, ByteBuffer.wrap(pattern(10, 0, 3000)));
        faulty.inject(Fault.flushes());

        assertThatThrownBy(fs::close).isInstanceOf(dev.iomap.device.DeviceIoException.class)
                .hasMessageContaining("injected flush error");

        assertThatThrownBy(() -> fs.create("/g")).isInstanceOf(ClosedFileSystemException.class);
        assertThatThrownBy(() -> file.write(0, ByteBuffer.allocate(1))).isInstanceOf(ClosedFileSystemException.class);
        fs.close();
    }

    @Test
    void aClosedFilesystemRefusesEverything() throws Exception {
        IomapFileSystem fs = mount(snapfs());
        IomapFile file = fs.create("/f");
        fs.close();
        fs.close();

        assertThatThrownBy(() -> fs.create("/g")).isInstanceOf(ClosedFileSystemException.class);
        assertThatThrownBy(() -> file.write(0, ByteBuffer.allocate(1))).isInstanceOf(ClosedFileSystemException.class);
    }
    @Test
    void renameOntoADirectoryAboveTheSourceIsNotEmptyAndIntoItsOwnSubtreeIsInvalid() throws Exception {
        try (IomapFileSystem fs = mount(snapfs())) {
            fs.mkdir("/a");
            fs.mkdir("/a/b");
            fs.create("/a/b/f").close();

            // rename(2): the target "/a" holds the source, so it is not empty (ENOTEMPTY) ...
            assertThatThrownBy(() -> fs.rename("/a/b", "/a")).isInstanceOf(DirectoryNotEmptyException.class);
            assertThatThrownBy(() -> fs.rename("/a/b/f", "/a")).isInstanceOf(DirectoryNotEmptyException.class);
            // ... and moving "/a" below itself is EINVAL
            assertThatThrownBy(() -> fs.rename("/a", "/a/b/c")).isInstanceOf(IllegalArgumentException.class);
            assertThat(fs.stat("/a/b/f").type()).isEqualTo(FileType.REGULAR);
        }
    }
    @Test
    void aTrailingSlashNamesADirectoryOrIsNotADirectory() throws Exception {
        try (IomapFileSystem fs = mount(snapfs())) {
            fs.mkdir("/d");
            fs.create("/f").close();

            assertThat(fs.stat("/d/").type()).isEqualTo(FileType.DIRECTORY);
            assertThat(fs.readdir("/d/")).isEmpty();
            assertThatThrownBy(() -> fs.stat("/f/")).isInstanceOf(NotDirectoryException.class);
            assertThatThrownBy(() -> fs.lstat("/f/")).isInstanceOf(NotDirectoryException.class);
            assertThatThrownBy(() -> fs.open("/f/")).isInstanceOf(NotDirectoryException.class);
            assertThatThrownBy(() -> fs.unlink("/f/")).isInstanceOf(NotDirectoryException.class);
            assertThatThrownBy(() -> fs.create("/g/")).isInstanceOf(FileSystemException.class)
                    .hasMessageContaining("Is a directory");
            assertThat(fs.readdir("/")).extracting(DirEntry::name).containsExactly("d", "f");
            fs.rmdir("/d/");
            assertThat(fs.readdir("/")).extracting(DirEntry::name).containsExactly("f");
        }
    }
}
