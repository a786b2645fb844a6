package dev.iomap.adapter.zonefs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.iomap.device.BlockDevice;
import dev.iomap.api.FormatOptions;
import dev.iomap.api.IomapFile;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.IomapFileSystems;
import dev.iomap.api.MountOptions;
import dev.iomap.api.PageCacheOptions;
import dev.iomap.devices.RamBlockDevice;
import dev.iomap.devices.ZoneLayout;
import dev.iomap.devices.ZonedDevice;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Random;

/**
 * The zoned devices and mounts the tests use: 512-byte device blocks, zones of 64 KiB whose
 * sequential ones can take 48 KiB (a capacity below the size, as on ZNS), formatted with 4 KiB or
 * 1 KiB filesystem blocks, mounted through {@link IomapFileSystems} by name (the plugin is found on
 * the class path) with the flusher off unless asked.
 */
final class ZonefsFixture {
    static final int SECTOR = 512;
    static final long ZONE = 64 << 10;
    static final long SEQ_CAPACITY = 48 << 10;
    static final long SEED = Long.getLong("iomap.test.seed", 0);
    /** Zone 0 (superblock) and two more conventional zones, then five sequential zones; three may be open. */
    static final ZoneLayout LAYOUT = new ZoneLayout(ZONE, SEQ_CAPACITY, 8, 3, 3);

    private ZonefsFixture() {
    }

    static ZonedDevice newDevice(ZoneLayout layout) throws IOException {
        return ZonedDevice.create(new RamBlockDevice(SECTOR, layout.backingBytes(SECTOR)), layout);
    }

    static ZonedDevice newFormattedDevice(int blockSize) throws IOException {
        ZonedDevice device = newDevice(LAYOUT);
        format(device, blockSize);
        return device;
    }

    static void format(BlockDevice device, int blockSize) throws IOException {
        IomapFileSystems.format(ZonefsLikeAdapter.NAME, device, FormatOptions.blockSize(blockSize));
    }

    static PageCacheOptions cacheOptions() {
        return PageCacheOptions.builder().pageSize(4096).maxFolioOrder(4).poisonNewFolios(true).build();
    }

    static IomapFileSystem mount(BlockDevice device) throws IOException {
        return mount(device, cacheOptions(), false);
    }

    static IomapFileSystem mount(BlockDevice device, PageCacheOptions options, boolean flusher) throws IOException {
        return IomapFileSystems.mount(ZonefsLikeAdapter.NAME, device, new MountOptions(options, flusher));
    }

    static byte[] randomBytes(Random random, int length) {
        byte[] bytes = new byte[length];
        random.nextBytes(bytes);
        return bytes;
    }

    /** @return the whole file, read through the cache */
    static byte[] readAll(IomapFile file) throws IOException {
        ByteBuffer dst = ByteBuffer.allocate((int) file.size());
        while (dst.hasRemaining()) {
            int n = file.read(dst.position(), dst);
            assertThat(n).isPositive();
        }
        return dst.array();
    }

    static byte[] read(IomapFile file, long pos, int length) throws IOException {
        ByteBuffer dst = ByteBuffer.allocate(length);
        file.read(pos, dst);
        return dst.array();
    }

    static void write(IomapFile file, long pos, byte[] data) throws IOException {
        assertThat(file.write(pos, ByteBuffer.wrap(data))).isEqualTo(data.length);
    }
}
