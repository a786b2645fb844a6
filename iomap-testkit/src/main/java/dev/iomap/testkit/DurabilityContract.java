package dev.iomap.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.iomap.api.CorruptFilesystemException;
import dev.iomap.api.DirEntry;
import dev.iomap.api.FileStat;
import dev.iomap.api.FileType;
import dev.iomap.api.IomapFile;
import dev.iomap.devices.CountingDevice;
import dev.iomap.devices.RamBlockDevice;
import java.io.IOException;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** fsync, sync, unmount and remount: what was made durable is there after a remount, and fsck agrees. */
public abstract class DurabilityContract extends AdapterContract {

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
        writePattern(file, 0, 10_000, 1);
        long flushes = counting.stats().flushes();
        file.fsync();
        assertThat(counting.stats().flushes()).as("device flushes during fsync").isGreaterThan(flushes);
        assertThat(counting.stats().dataBytesWritten()).as("data bytes written by fsync")
                .isGreaterThanOrEqualTo(10_000);
        flushes = counting.stats().flushes();
        writePattern(file, 10_000, 10, 2);
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
        assertThatThrownBy(() -> kit().mount(blank).close()).isInstanceOf(CorruptFilesystemException.class);
    }

    @Test
    void aGarbageDeviceIsNotAFilesystem() throws IOException {
        RamBlockDevice garbage = kit().newDevice();
        byte[] noise = new byte[1 << 20];
        new Random(42).nextBytes(noise);
        garbage.poke(0, noise, 0, noise.length);
        assertThatThrownBy(() -> kit().mount(garbage).close()).isInstanceOf(CorruptFilesystemException.class);
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
