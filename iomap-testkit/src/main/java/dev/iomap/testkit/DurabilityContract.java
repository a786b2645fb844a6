package dev.iomap.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.iomap.api.Capability;
import dev.iomap.api.CorruptFileSystemException;
import dev.iomap.api.DirEntry;
import dev.iomap.api.FileStat;
import dev.iomap.api.FileType;
import dev.iomap.api.IomapFile;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.devices.CountingDevice;
import dev.iomap.devices.CutMode;
import dev.iomap.devices.PowerCutDevice;
import dev.iomap.devices.RamBlockDevice;
import java.io.IOException;
import java.util.HashMap;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * fsync, sync, unmount and remount: what was made durable is there after a remount, and fsck agrees.
 * A clean unmount commits everything whatever fsync did, so with {@link Capability#DURABLE_FSYNC} each of
 * fsync, fdatasync and sync is also followed by a power cut (only flushed writes survive) and a remount of
 * what the device holds: an fsync that skips the metadata commit fails here, not only in the crash suite.
 */
public abstract class DurabilityContract extends AdapterContract {

    /** What runs on the mount whose power is cut right after it; returns what must survive, by path. */
    @FunctionalInterface
    private interface BeforeTheCut {
        Map<String, byte[]> run(IomapFileSystem crashing) throws IOException;
    }

    /**
     * Mounts a freshly formatted device, runs {@code work}, cuts the power ({@link CutMode#LOSE_UNFLUSHED}),
     * mounts what the device holds (which replays a journal) and checks that every file {@code work}
     * returned has exactly its bytes; then fsck, after the remount, since an adapter's fsck may refuse an
     * image whose journal still needs replay.
     */
    private void survivesAPowerCutAndRemount(BeforeTheCut work) throws IOException {
        PowerCutDevice power = new PowerCutDevice(kit().newFormattedDevice());
        IomapFileSystem crashing = kit().mount(power);
        Map<String, byte[]> durable = work.run(crashing);
        RamBlockDevice image = power.cut(CutMode.LOSE_UNFLUSHED, new Random(1));
        try {
            crashing.close();
        } catch (IOException expected) {
            // The power is off.
        }
        try (IomapFileSystem recovered = kit().mount(image)) {
            for (Map.Entry<String, byte[]> file : durable.entrySet()) {
                try (IomapFile recoveredFile = recovered.open(file.getKey())) {
                    assertContent(recoveredFile, file.getValue());
                }
            }
        }
        assertThat(kit().fsck(image).problems()).as("fsck after the remount that recovered the power cut").isEmpty();
    }

    @Test
    void fsyncedDataSurvivesAPowerCutAndRemount() throws IOException {
        assumeCapable(Capability.DURABLE_FSYNC);
        survivesAPowerCutAndRemount(crashing -> {
            try (IomapFile file = crashing.create("/a")) {
                byte[] data = writePattern(file, 0, 3 * pageSize() + 11, 1);
                file.fsync();
                return Map.of("/a", data);
            }
        });
    }

    @Test
    void fdatasyncedDataAndSizeSurviveAPowerCutAndRemount() throws IOException {
        assumeCapable(Capability.DURABLE_FSYNC);
        survivesAPowerCutAndRemount(crashing -> {
            try (IomapFile file = crashing.create("/a")) {
                file.fsync();
                byte[] data = writePattern(file, 0, 2 * blockSize() + 1, 2);
                file.fdatasync();
                return Map.of("/a", data);
            }
        });
    }

    @Test
    void syncedFilesSurviveAPowerCutAndRemount() throws IOException {
        assumeCapable(Capability.DURABLE_FSYNC);
        survivesAPowerCutAndRemount(crashing -> {
            Map<String, byte[]> files = new HashMap<>();
            for (int i = 0; i < 3; i++) {
                try (IomapFile file = crashing.create("/f" + i)) {
                    files.put("/f" + i, writePattern(file, 0, 1000 * (i + 1) + i, 3 + i));
                }
            }
            crashing.sync();
            return files;
        });
    }

    @Test
    void fsyncedDataSurvivesRemount() throws IOException {
        IomapFile file = create("/a");
        byte[] model = writePattern(file, 0, 3 * pageSize() + 11, 1);
        file.fsync();
        remountChecked();
        assertContent(open("/a"), model);
    }

    @Test
    void fdatasyncedDataAndSizeSurviveRemount() throws IOException {
        IomapFile file = create("/a");
        byte[] model = writePattern(file, 0, 2 * blockSize() + 1, 1);
        file.fdatasync();
        remountChecked();
        assertContent(open("/a"), model);
    }

    @Test
    void unmountWritesBackWhatWasNotSynced() throws IOException {
        byte[] a = writePattern(create("/a"), 0, 5000, 1);
        byte[] b = writePattern(create("/b"), 0, 3 * pageSize(), 2);
        remountChecked();
        assertContent(open("/a"), a);
        assertContent(open("/b"), b);
    }

    @Test
    void syncWritesBackEveryFile() throws IOException {
        byte[][] models = new byte[5][];
        for (int i = 0; i < models.length; i++) {
            models[i] = writePattern(create("/f" + i), 0, 1000 * (i + 1), i);
        }
        fs.sync();
        dropCache();
        for (int i = 0; i < models.length; i++) {
            assertContent(open("/f" + i), models[i]);
        }
        remountChecked();
        for (int i = 0; i < models.length; i++) {
            assertContent(open("/f" + i), models[i]);
        }
    }

    @Test
    void fsyncFlushesTheDevice() throws IOException {
        CountingDevice counting = new CountingDevice(device);
        remountOn(counting);
        IomapFile file = create("/a");
        // more than a block, so that no format keeps it inline (gfs2 stuffs a file smaller than a block)
        int length = Math.max(10_000, 2 * blockSize());
        writePattern(file, 0, length, 1);
        long flushes = counting.stats().flushes();
        file.fsync();
        assertThat(counting.stats().flushes()).as("device flushes during fsync").isGreaterThan(flushes);
        assertThat(counting.stats().dataBytesWritten()).as("data bytes written by fsync")
                .isGreaterThanOrEqualTo(length);
        flushes = counting.stats().flushes();
        writePattern(file, length, 10, 2);
        file.fdatasync();
        assertThat(counting.stats().flushes()).as("device flushes during fdatasync").isGreaterThan(flushes);
        flushes = counting.stats().flushes();
        fs.sync();
        assertThat(counting.stats().flushes()).as("device flushes during sync").isGreaterThan(flushes);
    }

    @Test
    void aFileGrowsOverManyRemounts() throws IOException {
        byte[] model = new byte[0];
        create("/a");
        Random random = new Random(kit().settings().seedFor(kit().label() + "/remounts"));
        for (int round = 0; round < 8; round++) {
            IomapFile file = open("/a");
            int length = 1 + random.nextInt(3 * blockSize());
            model = apply(model, model.length, writePattern(file, model.length, length, round));
            if (round % 2 == 0) {
                file.fsync();
            }
            remountChecked();
        }
        assertContent(open("/a"), model);
    }

    @Test
    void attributesSurviveRemount() throws IOException {
        IomapFile file = create("/a");
        writePattern(file, 0, 12_345, 1);
        file.fsync();
        FileStat before = file.stat();
        remountChecked();
        FileStat after = fs.stat("/a");
        assertThat(after.type()).isEqualTo(FileType.REGULAR);
        assertThat(after.size()).isEqualTo(12_345);
        assertThat(after.ino()).isEqualTo(before.ino());
        assertThat(after.linkCount()).isEqualTo(1);
        // Speculative preallocation past EOF may be trimmed at unmount (XFS does), so allocation may
        // shrink, but never below the data.
        long dataBytes = (12_345 + blockSize() - 1) / blockSize() * (long) blockSize();
        assertThat(after.allocatedBytes()).isBetween(dataBytes, Math.max(dataBytes, before.allocatedBytes()));
        assertThat(fs.readdir("/")).extracting(DirEntry::name, DirEntry::ino)
                .containsExactly(org.assertj.core.groups.Tuple.tuple("a", before.ino()));
    }

    @Test
    void aBlankDeviceIsNotAFilesystem() throws IOException {
        RamBlockDevice blank = kit().newDevice();
        assertThatThrownBy(() -> kit().mount(blank).close()).isInstanceOf(CorruptFileSystemException.class);
    }

    @Test
    void aGarbageDeviceIsNotAFilesystem() throws IOException {
        RamBlockDevice garbage = kit().newDevice();
        byte[] noise = new byte[1 << 20];
        new Random(42).nextBytes(noise);
        garbage.poke(0, noise, 0, noise.length);
        assertThatThrownBy(() -> kit().mount(garbage).close()).isInstanceOf(CorruptFileSystemException.class);
    }

    @Test
    void theImageOfAnUnmountedFilesystemDoesNotChangeOnFsck() throws IOException {
        writePattern(create("/a"), 0, 5000, 1);
        fs.close();
        RamBlockDevice before = device.copy();
        kit().fsck(device);
        byte[] first = before.peek(0, (int) Math.min(device.capacity(), 4 << 20));
        assertBytes(device.peek(0, first.length), first, 0);
        remount();
    }
}
