package dev.iomap.adapter.gfs2;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.iomap.api.CorruptFileSystemException;
import dev.iomap.api.FileType;
import dev.iomap.api.FormatOptions;
import dev.iomap.api.MountOptions;
import dev.iomap.devices.RamBlockDevice;
import java.io.IOException;
import org.junit.jupiter.api.Test;

/** fsck finds damage and leaks; mount refuses a damaged image. */
class Gfs2FsckTest {
    private static final int BLOCK = 1024;

    private final RamBlockDevice device = new RamBlockDevice(BLOCK, 4L << 20);
    private final Gfs2LikeAdapter adapter = new Gfs2LikeAdapter();

    private Gfs2LikeMount mount() throws IOException {
        return (Gfs2LikeMount) adapter.mount(device, MountOptions.defaults());
    }

    @Test
    void aFreshImageIsClean() throws IOException {
        adapter.format(device, FormatOptions.blockSize(BLOCK));
        assertThat(adapter.fsck(device).problems()).isEmpty();
    }

    @Test
    void aDinodeWithABadChecksumIsReportedAndTheMountRefusesTheImage() throws IOException {
        adapter.format(device, FormatOptions.blockSize(BLOCK));
        Gfs2LikeMount mount = mount();
        long ino = mount.create(mount.rootIno(), "f", FileType.REGULAR);
        mount.unmount();
        byte[] one = device.peek(ino * BLOCK + 40, 1);
        device.poke(ino * BLOCK + 40, new byte[] {(byte) (one[0] ^ 0x5a)}, 0, 1);

        assertThat(adapter.fsck(device).problems()).anySatisfy(p -> assertThat(p).contains("inode " + ino));
        assertThatThrownBy(this::mount).isInstanceOf(CorruptFileSystemException.class)
                .hasMessageContaining("run fsck");
    }

    @Test
    void aBlockMarkedUsedThatNothingOwnsIsALeak() throws IOException {
        adapter.format(device, FormatOptions.blockSize(BLOCK));
        Gfs2LikeMount mount = mount();
        long leaked;
        mount.tx.meta.lock();
        try {
            leaked = mount.volume.allocate(mount.rootIno(), mount.rootIno(), 1, ResourceGroup.USED)[0];
        } finally {
            mount.tx.meta.unlock();
        }
        mount.unmount();

        assertThat(adapter.fsck(device).problems())
                .containsExactly("block " + leaked + " is marked used but nothing owns it (a leak)");
    }

    /** Gives a new empty file one data block of its own; returns the block. Caller holds {@code meta}. */
    private static long oneBlock(Gfs2LikeMount mount, long ino) throws IOException {
        Dinode d = mount.volume.dinode(ino);
        mount.unstuff(d, 0);
        d.size = BLOCK;
        return mount.tree.allocate(d, 0, 1).address();
    }

    @Test
    void aBlockTwoFilesPointAtIsNamedWithBothOwners() throws IOException {
        adapter.format(device, FormatOptions.blockSize(BLOCK));
        Gfs2LikeMount mount = mount();
        long f = mount.create(mount.rootIno(), "f", FileType.REGULAR);
        long g = mount.create(mount.rootIno(), "g", FileType.REGULAR);
        long shared;
        mount.tx.meta.lock();
        try {
            shared = oneBlock(mount, f);
            Dinode d = mount.volume.dinode(g);
            mount.unstuff(d, 0);
            d.size = BLOCK;
            d.pointers[0] = shared;
            d.blocks = 1;
            mount.volume.dirtyDinode(d);
        } finally {
            mount.tx.meta.unlock();
        }
        mount.unmount();

        assertThat(adapter.fsck(device).problems())
                .containsExactly("block " + shared + " is used twice: by data of " + f + " and by data of " + g);
    }

    @Test
    void aUsedBlockMarkedFreeIsNamedWithItsOwner() throws IOException {
        adapter.format(device, FormatOptions.blockSize(BLOCK));
        Gfs2LikeMount mount = mount();
        long f = mount.create(mount.rootIno(), "f", FileType.REGULAR);
        long block;
        mount.tx.meta.lock();
        try {
            block = oneBlock(mount, f);
            mount.volume.setState(block, ResourceGroup.FREE);
        } finally {
            mount.tx.meta.unlock();
        }
        mount.unmount();

        assertThat(adapter.fsck(device).problems())
                .containsExactly("block " + block + " is free in its bitmap but used by data of " + f);
    }
}
