package dev.iomap.adapter.bcachefs.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.iomap.api.CorruptFileSystemException;
import dev.iomap.devices.RamBlockDevice;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Journal entries that are whole (nonce, sequence and CRC32C all right) but whose ops no store could
 * have written: replay refuses them with {@link CorruptFileSystemException}, and the store's check
 * reports them, instead of failing with an untyped exception.
 */
class JournalDamageTest {

    /** Appends one whole batch of one entry of {@code ops} after the cleanly closed store's checkpoint. */
    private static void appendEntry(RamBlockDevice device, List<StoreOp> ops) throws IOException {
        BcachefsSuperblock sb = BtreeStore.readSuperblock(device);
        long seq = sb.checkpointSeq() + 1;
        byte[] entry = JournalCodec.encodeEntry(sb.nonce(), seq, ops);
        JournalRing.Batch batch = new JournalRing(sb, sb.journalTail(), 0).build(List.of(entry), seq);
        ByteBuffer data = batch.data();
        byte[] bytes = new byte[data.remaining()];
        data.get(bytes);
        device.poke(batch.block() * device.blockSize(), bytes, 0, bytes.length);
    }

    private static void assertRefused(RamBlockDevice device, String expected) throws IOException {
        CorruptFileSystemException open = assertThrows(CorruptFileSystemException.class,
                () -> BtreeStore.open(device, false).close());
        assertTrue(open.getMessage().contains(expected), open.getMessage());
        List<String> problems = StoreCheck.check(device);
        assertEquals(1, problems.size(), problems.toString());
        assertTrue(problems.getFirst().startsWith("journal replay after checkpoint")
                && problems.getFirst().contains(expected), problems.getFirst());
    }

    @Test
    void aReferenceChangeWhoseEndOverflowsIsCorruptionNotAnIllegalArgument() throws IOException {
        RamBlockDevice device = StoreBasicsTest.formatted(1024, 2L << 20);
        BcachefsSuperblock sb = BtreeStore.readSuperblock(device);
        appendEntry(device, List.of(new StoreOp.AddRefs(sb.dataStart(), Long.MAX_VALUE, 1)));
        assertRefused(device, "reference change on blocks [" + sb.dataStart() + ", +" + Long.MAX_VALUE + ")");
    }

    @Test
    void aReferenceChangePastTheDeviceIsCorruption() throws IOException {
        RamBlockDevice device = StoreBasicsTest.formatted(1024, 2L << 20);
        BcachefsSuperblock sb = BtreeStore.readSuperblock(device);
        appendEntry(device, List.of(new StoreOp.AddRefs(sb.totalBlocks() - 1, 2, 1)));
        assertRefused(device, "outside the data region");
    }

    @Test
    void aJournaledPutIntoTheAllocationTreeIsCorruptionAtMountNotAfterTheNextCheckpoint() throws IOException {
        RamBlockDevice device = StoreBasicsTest.formatted(1024, 2L << 20);
        appendEntry(device, List.of(new StoreOp.Put(new BKey(RefCounts.BTREE, 3, 0), new byte[] {1, 2, 3})));
        assertRefused(device, "journal op on BKey[btree=0, inode=3, offset=0]");
    }

    @Test
    void aJournaledDeleteFromTheAllocationTreeIsCorruption() throws IOException {
        RamBlockDevice device = StoreBasicsTest.formatted(1024, 2L << 20);
        appendEntry(device, List.of(new StoreOp.Delete(new BKey(RefCounts.BTREE, 3, 0))));
        assertRefused(device, "journal op on BKey[btree=0, inode=3, offset=0]");
    }
}
