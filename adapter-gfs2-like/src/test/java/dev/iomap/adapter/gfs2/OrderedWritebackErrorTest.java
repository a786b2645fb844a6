package dev.iomap.adapter.gfs2;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.iomap.api.FormatOptions;
import dev.iomap.api.IomapFile;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.IomapFileSystems;
import dev.iomap.api.MountOptions;
import dev.iomap.api.WritebackException;
import dev.iomap.devices.Fault;
import dev.iomap.devices.FaultInjectingDevice;
import dev.iomap.devices.RamBlockDevice;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/**
 * A commit whose ordered data write-back fails (issue 35, item 6) goes ahead, as gfs2's log flush does
 * ({@code gfs2_ordered_wait} leaves the error in the mapping) and jbd2's commit without
 * {@code data_err=abort}: the transaction commits, the blocks the failed write had allocated in it are
 * freed again so the committed file never shows their stale bytes, and the error reaches the next fsync
 * of the file whose data was lost, once per open file.
 */
class OrderedWritebackErrorTest {
    private static final int BLOCK = 4096;
    private static final byte STALE = (byte) 0x5a;

    @Test
    void aFailedOrderedWriteIsReportedByItsFileAndTheCommitGoesAhead() throws IOException {
        RamBlockDevice ram = new RamBlockDevice(BLOCK, 64L << 20);
        IomapFileSystems.format("gfs2-like", ram, FormatOptions.blockSize(BLOCK));
        FaultInjectingDevice faulty = new FaultInjectingDevice(ram);
        byte[] lost = pattern(3, 8 * BLOCK);
        try (IomapFileSystem fs = IomapFileSystems.mount("gfs2-like", faulty, MountOptions.defaults())) {
            leaveStaleBlocks(fs);
            IomapFile victim = fs.create("/victim");
            IomapFile other = fs.open("/victim");
            victim.write(0, ByteBuffer.wrap(lost));
            faulty.inject(Fault.dataWrites());
            try (IomapFile committed = fs.create("/committed")) {
                // The commit of /committed's creation writes /victim's ordered data first; that fails.
                committed.fsync();
            }
            faulty.clearFaults();
            assertThat(faulty.injected()).as("the ordered write was attempted and failed").isNotEmpty();

            assertThatThrownBy(victim::fsync).isInstanceOf(WritebackException.class);
            assertThatThrownBy(other::fsync).as("a second open file of the same inode").isInstanceOf(WritebackException.class);
            victim.fsync();
            assertZeroOrWritten(read(victim, lost.length), lost);
            victim.close();
            other.close();
        }
        assertThat(IomapFileSystems.fsck("gfs2-like", ram).problems()).isEmpty();
        try (IomapFileSystem fs = IomapFileSystems.mount("gfs2-like", ram, MountOptions.defaults())) {
            fs.open("/committed").close();
            try (IomapFile victim = fs.open("/victim")) {
                assertThat(victim.size()).isEqualTo(lost.length);
                assertZeroOrWritten(read(victim, lost.length), lost);
            }
        }
    }

    /** Writes the stale marker over many blocks, then frees them, so that new files get those blocks. */
    private static void leaveStaleBlocks(IomapFileSystem fs) throws IOException {
        byte[] marker = new byte[256 * BLOCK];
        Arrays.fill(marker, STALE);
        try (IomapFile stale = fs.create("/stale")) {
            stale.write(0, ByteBuffer.wrap(marker));
            stale.fsync();
        }
        fs.unlink("/stale");
        fs.sync();
    }

    /** Each byte of the file whose write-back failed is zero or what was written there, never stale. */
    private static void assertZeroOrWritten(byte[] bytes, byte[] written) {
        for (int i = 0; i < bytes.length; i++) {
            if (bytes[i] != 0) {
                assertThat(bytes[i]).as("byte %d of the file whose write-back failed", i).isEqualTo(written[i]);
            }
        }
    }

    private static byte[] read(IomapFile file, int length) throws IOException {
        ByteBuffer buffer = ByteBuffer.allocate(length);
        while (buffer.hasRemaining() && file.read(buffer.position(), buffer) > 0) {
            // keep reading
        }
        return buffer.array();
    }

    private static byte[] pattern(int seed, int length) {
        byte[] bytes = new byte[length];
        for (int i = 0; i < length; i++) {
            bytes[i] = (byte) (1 + (seed * 31 + i * 7) % 64);
        }
        return bytes;
    }
}
