package dev.iomap.adapter.xfs;

import static dev.iomap.testkit.TestData.pattern;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.iomap.adapter.support.Extent;
import dev.iomap.api.FileType;
import dev.iomap.api.FileSystemShutdownException;
import dev.iomap.api.IomapFileSystems;
import dev.iomap.core.CachedInode;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/**
 * Runtime verification: in-memory metadata made inconsistent behind the mount's back (as forged
 * metadata that slipped past mount would be) is caught before anything is written on top of it; the
 * filesystem then shuts down: every later operation fails, nothing more reaches the device and the
 * image is left unclean.
 */
class ShutdownTest {
    private static final byte[] VICTIM = pattern(7, 0, 3 * DirectMount.BLOCK);

    /** A mount with /victim (3 blocks, inode 2) fsynced. */
    private static DirectMount withVictim() throws IOException {
        DirectMount dm = new DirectMount(64L << 20);
        CachedInode victim = dm.create("victim");
        DirectMount.write(victim, 0, VICTIM);
        dm.fsync(victim);
        dm.trimPreallocation(victim);
        dm.mount.sync();
        return dm;
    }

    private static Extent victimExtent(DirectMount dm) {
        return dm.mount.volume().inodes.get(2L).data.extents().getFirst();
    }

    /** Pretends the free space says the victim's blocks are free, as a forged leaf would. */
    private static void forgeFree(DirectMount dm, Extent victim) throws IOException {
        XfsVolume volume = dm.mount.volume();
        AllocationGroup group = volume.allocator.group(volume.geometry.agOf(victim.deviceBlock()));
        group.onDisk().free(victim.deviceBlock(), victim.length());
        group.available().free(victim.deviceBlock(), victim.length());
    }

    /** After a shutdown: every operation fails, nothing is written, the image stays unclean. */
    private static void assertShutDown(DirectMount dm, Extent victim) throws IOException {
        long writes = dm.device.stats().writes();
        Throwable create = catchThrowable(() -> dm.mount.create(dm.mount.rootIno(), "late", FileType.REGULAR));
        assertThat(create).isInstanceOf(FileSystemShutdownException.class).hasMessageNotContaining("\n");
        assertThatThrownBy(() -> dm.mount.statfs()).as("statfs, like every operation")
                .isInstanceOf(FileSystemShutdownException.class).hasMessage(create.getMessage());
        assertThatThrownBy(() -> dm.mount.getattr(2)).isInstanceOf(FileSystemShutdownException.class);
        assertThatThrownBy(() -> dm.mount.sync()).isInstanceOf(FileSystemShutdownException.class);
        assertThatThrownBy(() -> dm.mount.unmount()).isInstanceOf(FileSystemShutdownException.class);
        dm.cache.close();
        dm.mount = null;
        assertThat(dm.device.stats().writes()).as("device writes after the shutdown").isEqualTo(writes);
        assertThat(XfsSuperblock.read(dm.device).clean()).as("superblock clean flag").isFalse();
        assertThat(IomapFileSystems.fsck("xfs-like", dm.device).isClean()).isFalse();
        ByteBuffer bytes = ByteBuffer.allocate(VICTIM.length);
        dm.device.read(victim.deviceBlock() * DirectMount.BLOCK, bytes);
        assertThat(Arrays.equals(bytes.array(), VICTIM)).as("the victim's blocks are intact").isTrue();
    }

    @Test
    void handingOutABlockAFileReferencesShutsDownBeforeWritingIt() throws Exception {
        try (DirectMount dm = withVictim()) {
            Extent victim = victimExtent(dm);
            forgeFree(dm, victim);
            // Inode numbers cycle through the groups: one of these starts where the victim lives.
            Throwable failure = null;
            for (int i = 0; i < 8 && failure == null; i++) {
                CachedInode file = dm.create("new" + i);
                DirectMount.write(file, 0, pattern(20 + i, 0, 4 * DirectMount.BLOCK));
                failure = catchThrowable(() -> dm.fsync(file));
            }
            assertThat(dm.mount.volume().isShutDown()).as("shut down").isTrue();
            assertThat(failure).isNotNull();
            assertThatThrownBy(() -> dm.mount.volume().checkMounted())
                    .hasMessageContaining("handed out blocks").hasMessageContaining("inode 2 data fork extent");
            assertShutDown(dm, victim);
        }
    }

    @Test
    void freeingFreeBlocksShutsDown() throws Exception {
        try (DirectMount dm = withVictim()) {
            Extent victim = victimExtent(dm);
            forgeFree(dm, victim);
            dm.mount.unlink(dm.mount.rootIno(), "victim");
            assertThatThrownBy(() -> dm.mount.evict(2)).isInstanceOf(FileSystemShutdownException.class)
                    .hasMessageContaining("free already");
            assertShutDown(dm, victim);
        }
    }

    /**
     * Found by ImageFuzzTest's review of what the runtime throws: a reference count about to go below
     * zero threw IllegalStateException out of the mount instead of shutting it down.
     */
    @Test
    void aReferenceCountThatWouldGoNegativeShutsDown() throws Exception {
        try (DirectMount dm = withVictim()) {
            Extent victim = victimExtent(dm);
            XfsVolume volume = dm.mount.volume();
            // A record no mount loads (counts are at least 2), as a forged leaf that slipped past mount would be.
            volume.allocator.group(volume.geometry.agOf(victim.deviceBlock())).refcounts()
                    .load(new RefcountMap.Record(victim.deviceBlock(), victim.length(), 0));
            dm.mount.unlink(dm.mount.rootIno(), "victim");
            assertThatThrownBy(() -> dm.mount.evict(2)).isInstanceOf(FileSystemShutdownException.class)
                    .hasMessageContaining("reference count record").hasMessageContaining("says 0 owners");
            assertShutDown(dm, victim);
        }
    }

    @Test
    void aNewInodeNumberThatANameStillPointsAtShutsDown() throws Exception {
        try (DirectMount dm = withVictim()) {
            XfsVolume volume = dm.mount.volume();
            InodeState root = volume.inodes.get(XfsGeometry.ROOT_INO);
            root.directory.add("ghost", 3, FileType.REGULAR, 0);
            volume.nameAdded(3);
            assertThatThrownBy(() -> dm.mount.create(dm.mount.rootIno(), "new", FileType.REGULAR))
                    .isInstanceOf(FileSystemShutdownException.class)
                    .hasMessageContaining("free inode 3").hasMessageContaining("still named");
            assertShutDown(dm, victimExtent(dm));
        }
    }
}
