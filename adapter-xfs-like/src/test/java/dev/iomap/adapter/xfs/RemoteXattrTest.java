package dev.iomap.adapter.xfs;

import static dev.iomap.testkit.TestData.pattern;
import static org.assertj.core.api.Assertions.assertThat;

import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.IomapFileSystems;
import dev.iomap.api.XattrMode;
import dev.iomap.api.Xattrs;
import dev.iomap.device.BlockDevice;
import dev.iomap.devices.CutMode;
import dev.iomap.devices.PowerCutDevice;
import dev.iomap.devices.RamBlockDevice;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Extended-attribute chains are written out of the journal, copy-on-write: a 64 KiB value fits the
 * smallest journal (64 blocks, on a 16 MiB device with one allocation group, whose transactions take far fewer blocks than the chain), and a power cut
 * before the commit that switches the inode to the new chain leaves the old value, with fsck clean after the mount that replays the journal.
 */
class RemoteXattrTest {
    private static final Map<String, String> SMALLEST_JOURNAL = Map.of("journalblocks",
            "" + XfsGeometry.MIN_JOURNAL_BLOCKS, "agcount", "1");

    @ParameterizedTest(name = "{0}-byte blocks")
    @ValueSource(ints = {512, 1024, 4096})
    void aLargestValueOnTheSmallestJournalSurvivesRemountAndAPowerCutBeforeCommitKeepsTheOldOne(int blockSize)
            throws Exception {
        byte[] first = pattern(11, 0, Xattrs.MAX_VALUE_BYTES);
        byte[] second = pattern(12, 0, Xattrs.MAX_VALUE_BYTES);
        int chainBlocks = XfsLayout.chainBlocks(4 + 5 + "user.big".length() + Xattrs.MAX_VALUE_BYTES, blockSize);
        try (XfsFixture fx = XfsFixture.createWithPowerCut(blockSize, 16L << 20, SMALLEST_JOURNAL)) {
            fx.fs.create("/f").close();
            fx.fs.sync();
            long free = fx.fs.statfs().freeBlocks();
            fx.fs.setXattr("/f", "user.big", first, XattrMode.CREATE);
            assertThat(fx.fs.statfs().freeBlocks()).isEqualTo(free - chainBlocks);
            fx.remount();
            assertThat(fx.fs.getXattr("/f", "user.big")).isEqualTo(first);
            assertThat(fx.fs.statfs().freeBlocks()).isEqualTo(free - chainBlocks);

            PowerCutDevice power = (PowerCutDevice) fx.device;
            fx.fs.sync();
            int unflushedBefore = power.unflushedWrites();
            fx.fs.setXattr("/f", "user.big", second, XattrMode.REPLACE);
            assertThat(fx.fs.getXattr("/f", "user.big")).isEqualTo(second);
            assertThat(power.unflushedWrites()).as("the new chain is written, not yet flushed")
                    .isEqualTo(unflushedBefore + chainBlocks);
            try (RamBlockDevice lost = power.image(CutMode.LOSE_UNFLUSHED, null);
                    RamBlockDevice some = power.image(CutMode.LOSE_SOME_WRITES, new Random(blockSize))) {
                for (BlockDevice image : List.of(lost, some, fx.copyOfDevice())) {
                    try (IomapFileSystem old = IomapFileSystems.mount("xfs-like", image, XfsFixture.mountOptions())) {
                        assertThat(old.listXattrs("/f")).containsExactly("user.big");
                        assertThat(old.getXattr("/f", "user.big")).isEqualTo(first);
                        assertThat(old.statfs().freeBlocks()).isEqualTo(free - chainBlocks);
                    }
                    XfsFixture.assertClean(image);
                }
            }

            fx.fs.sync();
            RamBlockDevice committed = power.image(CutMode.LOSE_UNFLUSHED, null);
            try (committed) {
                try (IomapFileSystem now = IomapFileSystems.mount("xfs-like", committed, XfsFixture.mountOptions())) {
                    assertThat(now.getXattr("/f", "user.big")).isEqualTo(second);
                    assertThat(now.statfs().freeBlocks()).isEqualTo(free - chainBlocks);
                }
                XfsFixture.assertClean(committed);
            }
            fx.remount();
            assertThat(fx.fs.getXattr("/f", "user.big")).isEqualTo(second);
            fx.fs.removeXattr("/f", "user.big");
            fx.remount();
            assertThat(fx.fs.listXattrs("/f")).isEmpty();
            assertThat(fx.fs.statfs().freeBlocks()).isEqualTo(free);
        }
    }
}
