package dev.iomap.adapter.gfs2;

import static org.assertj.core.api.Assertions.assertThat;

import dev.iomap.api.FormatOptions;
import dev.iomap.api.IomapFile;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.IomapFileSystems;
import dev.iomap.api.MountOptions;
import dev.iomap.devices.RamBlockDevice;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Writeback of a journaled file logs an ioend larger than the whole log in several transactions: a
 * 1 MiB file written back in one ioend through a 64-block journal. The ioend was logged in one
 * transaction, which the journal refused ("a transaction of 62 blocks needs 64 log blocks ... but the
 * whole log is 63 blocks"), so the fsync failed and the data was lost.
 */
class JdataWritebackTest {
    private static final int BLOCK = 4096;

    @Test
    void anIoendLargerThanTheLogIsJournaledInSeveralTransactions() throws IOException {
        RamBlockDevice ram = new RamBlockDevice(BLOCK, 16L << 20);
        IomapFileSystems.format("gfs2-like", ram, new FormatOptions(BLOCK, "", Map.of("journalblocks", "64")));
        byte[] data = BigTransactionTest.pattern(4, 1 << 20);
        MountOptions options = MountOptions.defaults().withAdapterOptions(Map.of("data", "journal"));
        try (IomapFileSystem fs = IomapFileSystems.mount("gfs2-like", ram, options)) {
            try (IomapFile file = fs.create("/big")) {
                file.write(0, ByteBuffer.wrap(data));
                file.fsync();
            }
        }
        assertThat(IomapFileSystems.fsck("gfs2-like", ram).problems()).isEmpty();
        try (IomapFileSystem fs = IomapFileSystems.mount("gfs2-like", ram, MountOptions.defaults())) {
            assertThat(BigTransactionTest.readAll(fs, "/big")).isEqualTo(data);
        }
    }
}
