package dev.iomap.adapter.xfs;

import static dev.iomap.testkit.TestData.pattern;
import static org.assertj.core.api.Assertions.assertThat;

import dev.iomap.core.CachedInode;
import dev.iomap.spi.IomapFlag;
import dev.iomap.spi.IomapType;
import dev.iomap.spi.IoendCompletion;
import dev.iomap.spi.WritebackOps;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * {@code xfs_ioend_needs_wq_completion}: only an ioend into written, unshared blocks within the on-disk
 * size completes without work (on the device's thread); everything that changes metadata does not.
 */
class CompletionWithoutWorkTest {
    private static final int BLOCK = DirectMount.BLOCK;

    @Test
    void onlyOverwritesOfWrittenBlocksWithinTheOnDiskSizeNeedNoCompletionWork() throws Exception {
        try (DirectMount dm = new DirectMount(64L << 20)) {
            CachedInode inode = dm.create("f");
            DirectMount.write(inode, 0, pattern(1, 0, 4 * BLOCK));
            dm.fsync(inode);
            WritebackOps ops = dm.mount.writebackOps();

            assertThat(ops.completesWithoutWork(inode, mapped(0, 2 * BLOCK))).isTrue();
            assertThat(ops.completesWithoutWork(inode, mapped(2 * BLOCK, 2 * BLOCK))).isTrue();
            assertThat(ops.completesWithoutWork(inode, new IoendCompletion(0, BLOCK, IomapType.UNWRITTEN,
                    Set.of(), 0, null))).as("unwritten conversion").isFalse();
            assertThat(ops.completesWithoutWork(inode, new IoendCompletion(0, BLOCK, IomapType.MAPPED,
                    Set.of(IomapFlag.SHARED), 0, null))).as("COW remap").isFalse();

            // the file grows in memory: an ioend past the on-disk size must raise it at completion
            DirectMount.write(inode, 4 * BLOCK, pattern(2, 4 * BLOCK, 2 * BLOCK));
            assertThat(ops.completesWithoutWork(inode, mapped(4 * BLOCK, 2 * BLOCK))).isFalse();
            assertThat(ops.completesWithoutWork(inode, mapped(3 * BLOCK, 2 * BLOCK))).isFalse();
            dm.fsync(inode);
            assertThat(ops.completesWithoutWork(inode, mapped(4 * BLOCK, 2 * BLOCK)))
                    .as("after the size reached the disk").isTrue();
        }
    }

    private static IoendCompletion mapped(long offset, long length) {
        return new IoendCompletion(offset, length, IomapType.MAPPED, Set.of(), 1 << 20, null);
    }
}
