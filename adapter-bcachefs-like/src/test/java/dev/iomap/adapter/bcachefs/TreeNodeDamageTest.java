package dev.iomap.adapter.bcachefs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.iomap.api.CorruptFileSystemException;
import dev.iomap.api.IomapFile;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.devices.RamBlockDevice;
import dev.iomap.testkit.TestData;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A flipped bit in a B-tree node is refused at mount or reported by fsck, never followed: for every
 * block that starts with the node magic (the live nodes and stale copies a checkpoint left behind), a
 * copy of the image with one bit flipped in the middle of that block either fails to mount with a
 * corruption error, or is reported by fsck, or (a stale copy, not part of the tree) reads back every
 * file exactly with fsck clean.
 */
class TreeNodeDamageTest {

    @Test
    void aFlippedBitInATreeNodeIsRefusedAtMountOrReportedByFsckNeverFollowed() throws IOException {
        RamBlockDevice device = new RamBlockDevice(1024, 8L << 20);
        Images.format(device, Map.of());
        int files = 40;
        try (IomapFileSystem fs = Images.mount(device)) {
            fs.mkdir("/d");
            for (int i = 0; i < files; i++) {
                try (IomapFile f = fs.create("/d/file-with-a-longish-name-" + i)) {
                    f.write(0, TestData.buffer(i, 0, 1000 + 700 * i));
                }
            }
        }
        List<Long> nodes = Images.nodeMagicBlocks(device);
        assertThat(nodes).as("node blocks").hasSizeGreaterThan(2);
        int refused = 0;
        int reported = 0;
        for (long block : nodes) {
            RamBlockDevice copy = device.copy();
            long at = block * 1024 + 512;
            byte[] one = copy.peek(at, 1);
            copy.poke(at, new byte[] {(byte) (one[0] ^ 0x04)}, 0, 1);
            boolean fsckFound = !Images.ADAPTER.fsck(copy.copy()).problems().isEmpty();
            try (IomapFileSystem fs = Images.mount(copy)) {
                for (int i = 0; i < files; i++) {
                    try (IomapFile f = fs.open("/d/file-with-a-longish-name-" + i)) {
                        ByteBuffer back = ByteBuffer.allocate(1000 + 700 * i);
                        f.read(0, back);
                        assertThat(back.array()).as("file %d with block %d damaged (fsck found %s)", i, block, fsckFound)
                                .isEqualTo(TestData.pattern(i, 0, 1000 + 700 * i));
                    }
                }
                reported += fsckFound ? 1 : 0;
            } catch (CorruptFileSystemException e) {
                assertThat(e.getMessage()).as("one line").doesNotContain("\n");
                refused++;
            } catch (IOException e) {
                assertThat(fsckFound).as("block %d: %s surfaced on a read although fsck was clean", block, e).isTrue();
                reported++;
            }
        }
        assertThat(refused + reported).as("damaged live nodes refused or reported").isGreaterThan(0);
    }
}
