package dev.iomap.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.fail;

import dev.iomap.device.IoPurpose;
import dev.iomap.api.IomapFile;
import dev.iomap.api.WritebackException;
import dev.iomap.devices.CountingDevice;
import dev.iomap.devices.Fault;
import dev.iomap.devices.FaultInjectingDevice;
import java.io.IOException;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Device errors: a failed data write surfaces at fsync (once per open file, as the kernel's errseq),
 * a failed read surfaces at the read, a failed flush fails fsync, and nothing else is lost: other
 * files, and this one once rewritten, read back after a remount. A file whose writeback failed must
 * never show another file's stale blocks.
 */
public abstract class FaultContract extends AdapterContract {
    private FaultInjectingDevice faulty;
    private CountingDevice counting;

    @BeforeEach
    void mountOnAFaultInjectingDevice() throws IOException {
        counting = new CountingDevice(device);
        faulty = new FaultInjectingDevice(counting);
        remountOn(faulty);
    }

    /** Leaves stale data (the {@link TestData#STALE_MARKER} byte) in free blocks. */
    private void leaveStaleBlocks() throws IOException {
        IomapFile stale = create("/stale");
        byte[] marker = new byte[(int) withinFileLimit(512L * blockSize())];
        java.util.Arrays.fill(marker, TestData.STALE_MARKER);
        write(stale, 0, marker);
        stale.fsync();
        stale.close();
        fs.unlink("/stale");
        fs.sync();
    }

    @Test
    void aFailedDataWriteSurfacesAtFsyncOnceAndLosesNothingElse() throws IOException {
        leaveStaleBlocks();
        IomapFile keep = create("/keep");
        byte[] kept = writePattern(keep, 0, 20 * blockSize() + 3, 1);
        keep.fsync();
        IomapFile pending = create("/pending");
        byte[] pendingData = writePattern(pending, 0, 5000, 2);
        IomapFile victim = create("/victim");
        IomapFile secondHandle = open("/victim");
        byte[] lost = writePattern(victim, 0, 8 * blockSize() + 100, 3);
        faulty.inject(Fault.dataWrites());
        assertThatThrownBy(victim::fsync).as("fsync after a failed data write").isInstanceOf(IOException.class);
        faulty.clearFaults();
        assertThat(faulty.injected()).as("injected errors").isNotEmpty();
        assertThatThrownBy(secondHandle::fsync).as("fsync of a second open file of the same inode")
                .isInstanceOf(WritebackException.class);
        victim.fsync();
        secondHandle.fsync();
        dropCache();
        byte[] after = read(victim, 0, lost.length);
        for (int i = 0; i < after.length; i++) {
            if (after[i] != 0 && after[i] != lost[i]) {
                fail("byte %d of the file whose writeback failed is %02x: neither zero nor the data written"
                        + " (0x%02x is the stale-data marker)", i, after[i] & 0xff, TestData.STALE_MARKER & 0xff);
            }
        }
        lost = writePattern(victim, 0, lost.length, 4);
        victim.fsync();
        try {
            pending.fsync();
        } catch (WritebackException reported) {
            // An adapter whose journal commit writes back every file with new blocks in the transaction
            // (ordered data: GFS2's gfs2_ordered_write, ext4's data=ordered) wrote /pending in the victim's
            // fsync, under the same fault. Losing it is then allowed, silently never: the error reaches
            // /pending's own fsync, once, and /pending works again afterwards.
            pendingData = writePattern(pending, 0, 5000, 5);
            pending.fsync();
        }
        remountOn(faulty);
        assertContent(open("/keep"), kept);
        assertContent(open("/pending"), pendingData);
        assertContent(open("/victim"), lost);
    }

    @Test
    void aFailedWriteBehindSyncIsReportedAtTheNextFsync() throws IOException {
        IomapFile file = create("/a");
        writePattern(file, 0, 3 * blockSize(), 1);
        faulty.inject(Fault.dataWrites().times(1));
        try {
            fs.sync();
        } catch (IOException reported) {
            // Reporting it here too is allowed.
        }
        faulty.clearFaults();
        assertThat(faulty.injected()).isNotEmpty();
        assertThatThrownBy(file::fsync).as("fsync after a sync whose writeback failed")
                .isInstanceOf(WritebackException.class);
        file.fsync();
    }

    @Test
    void aFailedReadSurfacesAtTheRead() throws IOException {
        IomapFile file = create("/a");
        byte[] data = writePattern(file, 0, 16 * blockSize(), 1);
        // /a's data writes are recorded before /b exists: a commit that writes back every file with new
        // blocks (ordered data) would otherwise write /a's data in /b's fsync.
        counting.clearRequests();
        counting.record(true);
        file.fsync();
        counting.record(false);
        IomapFile other = create("/b");
        byte[] otherData = writePattern(other, 0, 16 * blockSize(), 2);
        other.fsync();
        List<CountingDevice.Request> dataWrites = counting.requests().stream()
                .filter(r -> r.kind() == Fault.Kind.WRITE && r.purpose() == IoPurpose.DATA).toList();
        assertThat(dataWrites).as("data writes of fsync").isNotEmpty();
        for (CountingDevice.Request write : dataWrites) {
            faulty.inject(Fault.reads(write.offset(), write.length()));
        }
        dropCache();
        assertThatThrownBy(() -> readAll(file)).as("a read of blocks the device cannot read")
                .isInstanceOf(IOException.class);
        assertContent(other, otherData);
        faulty.clearFaults();
        assertContent(file, data);
    }

    @Test
    void aFailedFlushFailsFsync() throws IOException {
        IomapFile file = create("/a");
        byte[] data = writePattern(file, 0, 5000, 1);
        faulty.inject(Fault.flushes().times(1));
        assertThatThrownBy(file::fsync).isInstanceOf(IOException.class);
        faulty.clearFaults();
        file.fsync();
        remountOn(faulty);
        assertContent(open("/a"), data);
    }

    @Test
    void aFailedMetadataWriteFailsFsync() throws IOException {
        IomapFile file = create("/a");
        writePattern(file, 0, 5000, 1);
        faulty.inject(Fault.metadataWrites());
        try {
            file.fsync();
            assertThat(faulty.injected()).as("fsync succeeded, so it must not have needed a metadata write that"
                    + " failed").isEmpty();
        } catch (IOException expected) {
            assertThat(faulty.injected()).as("fsync failed, and a metadata write did").isNotEmpty();
        } finally {
            faulty.clearFaults();
            skipFinalCheck();
        }
    }
}
