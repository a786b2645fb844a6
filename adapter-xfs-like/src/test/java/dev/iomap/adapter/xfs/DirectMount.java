package dev.iomap.adapter.xfs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.iomap.api.FileType;
import dev.iomap.api.FormatOptions;
import dev.iomap.api.MountOptions;
import dev.iomap.api.PageCacheOptions;
import dev.iomap.core.CachedInode;
import dev.iomap.core.IomapCache;
import dev.iomap.devices.RamBlockDevice;
import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * The adapter driven through the core's page cache without the VFS, for tests that need what the
 * public API does not reach: short copies, the space counters, the validity cookie. {@link #close()}
 * unmounts and asserts fsck finds the image clean.
 */
final class DirectMount implements AutoCloseable {
    static final int BLOCK = 4096;

    final RamBlockDevice device;
    final XfsLikeAdapter adapter = new XfsLikeAdapter();
    final PageCacheOptions options;
    XfsLikeMount mount;
    IomapCache cache;

    DirectMount(long bytes) throws IOException {
        this(bytes, PageCacheOptions.defaults());
    }

    DirectMount(long bytes, PageCacheOptions options) throws IOException {
        this.options = options;
        device = new RamBlockDevice(BLOCK, bytes);
        adapter.format(device, FormatOptions.blockSize(BLOCK));
        mount();
    }

    void mount() throws IOException {
        mount = (XfsLikeMount) adapter.mount(device, MountOptions.defaults());
        cache = new IomapCache(options, device);
    }

    CachedInode create(String name) throws IOException {
        long ino = mount.create(mount.rootIno(), name, FileType.REGULAR);
        return open(ino);
    }

    CachedInode open(long ino) throws IOException {
        CachedInode cached = cache.inode(ino);
        if (cached != null) {
            return cached;
        }
        return cache.addInode(ino, BLOCK, mount.getattr(ino).size(), mount.maxFileSize(), mount.iomapOps(),
                mount.writebackOps());
    }

    static long write(CachedInode inode, long pos, byte[] data) throws IOException {
        return inode.write(pos, dev.iomap.core.CopySource.of(ByteBuffer.wrap(data)), data.length);
    }

    void fsync(CachedInode inode) throws IOException {
        inode.writeAndWait(0, Long.MAX_VALUE);
        mount.fsync(inode, false);
        device.flush();
    }

    /** @return free blocks the space account has, blocks reserved, free blocks of the allocators */
    long[] counters() {
        return mount.spaceCounters();
    }

    /** Truncates to the current size: drops the speculative preallocation past EOF. */
    void trimPreallocation(CachedInode inode) throws IOException {
        long size = inode.size();
        inode.truncate(size, () -> mount.setSize(inode, size));
    }

    void unmount() throws IOException {
        cache.syncAll();
        mount.unmount();
        cache.close();
        mount = null;
        XfsFixture.assertClean(device);
    }

    @Override
    public void close() throws IOException {
        try {
            if (mount != null) {
                unmount();
            }
        } finally {
            device.close();
        }
    }

    static void assertNoReservation(long[] counters) {
        assertThat(counters[1]).as("blocks reserved").isZero();
        assertThat(counters[0]).as("space account free = allocator free").isEqualTo(counters[2]);
    }
}
