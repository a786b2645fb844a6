package dev.iomap.adapter.gfs2;

import static org.assertj.core.api.Assertions.assertThat;

import dev.iomap.api.FileType;
import dev.iomap.api.FormatOptions;
import dev.iomap.api.MountOptions;
import dev.iomap.api.PageCacheOptions;
import dev.iomap.core.CachedInode;
import dev.iomap.core.CopySource;
import dev.iomap.core.IomapCache;
import dev.iomap.devices.RamBlockDevice;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/**
 * A short write through the core's page cache (a source that ends early) into blocks its {@code begin}
 * allocated: {@code end} punches the blocks it did not reach.
 */
class ShortWriteTest {
    private static final int BLOCK = 1024;
    private static final byte STALE = (byte) 0xd5;

    @Test
    void aShortWriteIntoNewlyAllocatedBlocksLeavesNoUnwrittenBlockReadableAndNoLeakedBlock() throws IOException {
        RamBlockDevice device = new RamBlockDevice(BLOCK, 8L << 20);
        Gfs2LikeAdapter adapter = new Gfs2LikeAdapter();
        adapter.format(device, FormatOptions.blockSize(BLOCK));
        Gfs2LikeMount mount = (Gfs2LikeMount) adapter.mount(device, MountOptions.defaults());
        IomapCache cache = new IomapCache(PageCacheOptions.defaults(), device);
        try {
            long root = mount.rootIno();
            long staleIno = mount.create(root, "stale", FileType.REGULAR);
            CachedInode stale = cache.addInode(staleIno, BLOCK, 0, mount.maxFileSize(), mount.iomapOps(),
                    mount.writebackOps());
            byte[] marker = new byte[64 * BLOCK];
            Arrays.fill(marker, STALE);
            stale.write(0, CopySource.of(ByteBuffer.wrap(marker)), marker.length);
            stale.writeAndWait(0, Long.MAX_VALUE);
            mount.fsync(stale, false);
            cache.removeInode(staleIno);
            mount.unlink(root, "stale");
            mount.evict(staleIno);
            mount.sync();
            long freeBefore = mount.statfs().freeBlocks();

            long ino = mount.create(root, "v", FileType.REGULAR);
            CachedInode v = cache.addInode(ino, BLOCK, 0, mount.maxFileSize(), mount.iomapOps(), mount.writebackOps());
            byte[] data = new byte[BLOCK + 476];
            Arrays.fill(data, (byte) 0x11);
            // From offset 100: the first folio is partly written, so the core zeroes the rest of its new
            // blocks and keeps the short copy (a short copy into a folio that is not uptodate keeps nothing).
            long written = v.write(100, CopySource.of(ByteBuffer.wrap(data)), 8L * BLOCK);

            assertThat(written).as("bytes the short write copied").isEqualTo(data.length);
            assertThat(freeBefore - mount.statfs().freeBlocks()).as("blocks held: the dinode and two data blocks")
                    .isEqualTo(3);
            v.writeAndWait(0, Long.MAX_VALUE);
            mount.fsync(v, false);
            v.truncate(8L * BLOCK, () -> mount.setSize(v, 8L * BLOCK));
            ByteBuffer all = ByteBuffer.allocate(8 * BLOCK);
            v.read(0, all);
            byte[] expected = new byte[8 * BLOCK];
            System.arraycopy(data, 0, expected, 100, data.length);
            assertThat(all.array()).as("the file: the bytes written, then zeroes (never the stale marker)")
                    .isEqualTo(expected);
            cache.syncAll();
            mount.unmount();
        } finally {
            cache.close();
        }
        assertThat(adapter.fsck(device).problems()).as("fsck: no leaked block").isEmpty();
    }
}
