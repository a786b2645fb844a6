package dev.iomap.adapter.gfs2;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.iomap.adapter.support.Journal;
import dev.iomap.api.CorruptFileSystemException;
import dev.iomap.api.IomapFile;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.MountOptions;
import dev.iomap.core.vfs.CoreRuntime;
import java.io.IOException;
import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;

/**
 * Mount runs fsck's checks after its journal replay: damage in one file's metadata refuses the mount
 * (naming the block) instead of showing when that file is used; a sound image mounts and reads back.
 */
class MountCheckTest {

    @Test
    void aSoundImageMountsAndReadsBack() throws IOException {
        DamagedImage image = new DamagedImage();
        try (IomapFileSystem fs = CoreRuntime.mount(image.adapter, image.device, MountOptions.defaults());
                IomapFile big = fs.open("/big")) {
            ByteBuffer read = ByteBuffer.allocate(image.bigData.length);
            big.read(0, read);
            assertThat(read.array()).isEqualTo(image.bigData);
            assertThat(fs.getXattr("/x", "user.big")).isEqualTo(DamagedImage.pattern(2000));
        }
        assertThat(image.adapter.fsck(image.device).problems()).isEmpty();
    }

    @Test
    void mountRefusesAnImageWithADamagedIndirectBlockOfOneFileNamingTheBlock() throws IOException {
        DamagedImage image = new DamagedImage();
        image.flip(image.indirect, 100);

        assertThatThrownBy(image::mount).isExactlyInstanceOf(CorruptFileSystemException.class)
                .hasMessageStartingWith("gfs2-like image is damaged: inode " + image.bigIno + " tree: metadata block "
                        + image.indirect + " (device offset " + image.indirect * DamagedImage.BLOCK + ")")
                .hasMessageContaining("bad checksum")
                .hasMessageEndingWith("; run fsck");
        assertThat(image.adapter.fsck(image.device).problems().getFirst())
                .startsWith("inode " + image.bigIno + " tree: metadata block " + image.indirect + " ");
    }

    @Test
    void mountRefusesAnImageWithADamagedAttributeChain() throws IOException {
        DamagedImage image = new DamagedImage();
        image.flip(image.xattrBlock, 100);

        assertThatThrownBy(image::mount).isExactlyInstanceOf(CorruptFileSystemException.class)
                .hasMessageStartingWith("gfs2-like image is damaged: inode " + image.xIno + " attributes: metadata block "
                        + image.xattrBlock + " ")
                .hasMessageEndingWith("; run fsck");
    }

    @Test
    void aDamagedAttributeChainLeavesTheDinodeAndItsDataReadable() throws IOException {
        DamagedImage image = new DamagedImage();
        image.flip(image.xattrBlock, 100);
        Gfs2Layout layout = Gfs2Layout.read(image.device);
        Journal journal = Journal.open(image.device, layout.journalStart(0), layout.journalBlocks());
        journal.replay();
        Gfs2Volume volume = new Gfs2Volume(image.device, layout, journal, Gfs2Volume.loadRgrps(journal, layout));

        Dinode x = volume.dinode(image.xIno);
        assertThat(x.size).isEqualTo(image.xData.length);
        assertThat(x.pointers[0]).isNotZero();
        assertThat(x.xattrs).as("attributes not read with the dinode").isNull();
        assertThatThrownBy(() -> volume.loadXattrs(x)).isExactlyInstanceOf(CorruptFileSystemException.class)
                .hasMessageContaining("metadata block " + image.xattrBlock + " ")
                .hasMessageContaining("bad checksum");
    }
}
