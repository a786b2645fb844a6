package dev.iomap.adapter.xfs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.iomap.device.BlockDevice;
import dev.iomap.api.FormatOptions;
import dev.iomap.api.FsckReport;
import dev.iomap.device.IoPurpose;
import dev.iomap.api.IomapFile;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.IomapFileSystems;
import dev.iomap.api.MountOptions;
import dev.iomap.api.PageCacheOptions;
import dev.iomap.devices.PowerCutDevice;
import dev.iomap.devices.RamBlockDevice;
import dev.iomap.testkit.TestData;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * A RAM device with an xfs-like filesystem, mounted end to end through the core's VFS with the flusher
 * off (deterministic device traffic). {@link #close()} unmounts and asserts that fsck finds the image
 * clean, so every test that uses it ends with an fsck.
 */
final class XfsFixture implements AutoCloseable {
    static final int BLOCK = 4096;
    static final long DEVICE_BYTES = 64L << 20;

    final BlockDevice device;
    IomapFileSystem fs;
    private final List<BlockDevice> extraDevices = new ArrayList<>();

    private XfsFixture(BlockDevice device) {
        this.device = device;
    }

    /** A formatted, mounted 64 MiB device of 4 KiB blocks. */
    static XfsFixture create() throws IOException {
        return create(DEVICE_BYTES, Map.of());
    }

    static XfsFixture create(long bytes, Map<String, String> properties) throws IOException {
        return create(BLOCK, bytes, properties);
    }

    static XfsFixture create(int blockSize, long bytes, Map<String, String> properties) throws IOException {
        return create(new RamBlockDevice(blockSize, bytes), properties);
    }

    /** A filesystem on a device with a volatile cache, for crash tests. */
    static XfsFixture createWithPowerCut(int blockSize, long bytes, Map<String, String> properties)
            throws IOException {
        return createWithPowerCut(blockSize, blockSize, bytes, properties);
    }

    /** A filesystem of {@code blockSize} blocks on a device of {@code sectorSize} blocks with a volatile cache. */
    static XfsFixture createWithPowerCut(int sectorSize, int blockSize, long bytes, Map<String, String> properties)
            throws IOException {
        RamBlockDevice poisoned = new RamBlockDevice(sectorSize, bytes);
        byte[] poison = new byte[1 << 20];
        java.util.Arrays.fill(poison, POISON);
        for (long offset = 0; offset < bytes; offset += poison.length) {
            poisoned.poke(offset, poison, 0, (int) Math.min(poison.length, bytes - offset));
        }
        return create(new PowerCutDevice(poisoned), blockSize, properties);
    }

    private static XfsFixture create(BlockDevice device, Map<String, String> properties) throws IOException {
        return create(device, device.blockSize(), properties);
    }

    private static XfsFixture create(BlockDevice device, int blockSize, Map<String, String> properties)
            throws IOException {
        XfsFixture fixture = new XfsFixture(device);
        IomapFileSystems.format("xfs-like", fixture.device, new FormatOptions(blockSize, "test", properties));
        fixture.mount();
        return fixture;
    }

    static MountOptions mountOptions() {
        return new MountOptions(PageCacheOptions.defaults(), false);
    }

    /** @return {@link #mountOptions()}, with pages as large as the device's blocks where they are larger */
    static MountOptions mountOptions(BlockDevice device) {
        if (device.blockSize() <= PageCacheOptions.defaults().pageSize()) {
            return mountOptions();
        }
        return new MountOptions(PageCacheOptions.builder().pageSize(device.blockSize()).build(), false);
    }

    void mount() throws IOException {
        fs = IomapFileSystems.mount("xfs-like", device, mountOptions(device));
    }

    void remount() throws IOException {
        unmountAndCheck();
        mount();
    }

    void unmountAndCheck() throws IOException {
        fs.close();
        fs = null;
        assertClean(device);
    }

    static void assertClean(BlockDevice device) throws IOException {
        FsckReport report = IomapFileSystems.fsck("xfs-like", device);
        assertThat(report.problems()).as("fsck: " + report.checked()).isEmpty();
    }

    /** A new RAM device holding what this one holds now: what a power cut after the last flush leaves. */
    BlockDevice copyOfDevice() throws IOException {
        RamBlockDevice copy = new RamBlockDevice(device.blockSize(), device.capacity());
        long chunk = 4L << 20;
        for (long offset = 0; offset < device.capacity(); offset += chunk) {
            ByteBuffer buffer = ByteBuffer.allocate((int) Math.min(chunk, device.capacity() - offset));
            device.read(offset, buffer);
            copy.write(offset, buffer.flip(), IoPurpose.METADATA).join();
        }
        extraDevices.add(copy);
        return copy;
    }

    IomapFile write(String path, byte[] data) throws IOException {
        IomapFile file = fs.create(path);
        writeAt(file, 0, data);
        return file;
    }

    static void writeAt(IomapFile file, long pos, byte[] data) throws IOException {
        ByteBuffer src = ByteBuffer.wrap(data);
        while (src.hasRemaining()) {
            file.write(pos + src.position(), src);
        }
    }

    static byte[] readAll(IomapFile file) throws IOException {
        return read(file, 0, Math.toIntExact(file.size()));
    }

    static byte[] read(IomapFile file, long pos, int length) throws IOException {
        ByteBuffer dst = ByteBuffer.allocate(length);
        while (dst.hasRemaining()) {
            int n = file.read(pos + dst.position(), dst);
            if (n < 0) {
                break;
            }
        }
        byte[] result = new byte[dst.position()];
        dst.flip().get(result);
        return result;
    }

    byte[] readFile(String path) throws IOException {
        return readFile(fs, path);
    }

    static byte[] readFile(IomapFileSystem fs, String path) throws IOException {
        try (IomapFile file = fs.open(path)) {
            return readAll(file);
        }
    }

    /**
     * What never-written blocks of a poisoned device hold: the kit's stale-data marker, a byte
     * {@link TestData#pattern} never produces.
     */
    static final byte POISON = TestData.STALE_MARKER;

    @Override
    public void close() throws IOException {
        try {
            if (fs != null) {
                unmountAndCheck();
            }
        } finally {
            device.close();
            for (BlockDevice extra : extraDevices) {
                extra.close();
            }
        }
    }
}
