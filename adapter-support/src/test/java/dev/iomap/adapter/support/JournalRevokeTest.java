package dev.iomap.adapter.support;

import static dev.iomap.adapter.support.JournalTest.bytes;
import static dev.iomap.adapter.support.JournalTest.fill;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.iomap.api.InvalidRangeException;
import dev.iomap.api.NoSpaceException;
import dev.iomap.device.DeviceRangeException;
import dev.iomap.device.IoPurpose;
import dev.iomap.devices.CutMode;
import dev.iomap.devices.Fault;
import dev.iomap.devices.FaultInjectingDevice;
import dev.iomap.devices.PowerCutDevice;
import dev.iomap.devices.RamBlockDevice;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Revoke records ({@link Journal.Transaction#revoke}): a block logged, then freed and reused in place,
 * must never get its old image back from replay or checkpoint. Same small device as
 * {@link JournalTest}: journal superblock at block 200, log positions 0..14 at blocks 201..215, the
 * first transaction after format has sequence 16.
 */
class JournalRevokeTest {
    private static final int BLOCK = 512;
    private static final long START = 200;
    private static final long LENGTH = 16;
    private static final long ID = 0x1234;
    private static final byte[] ZERO = new byte[BLOCK];

    private final PowerCutDevice power = new PowerCutDevice(new RamBlockDevice(BLOCK, 256L * BLOCK));
    private final FaultInjectingDevice device = new FaultInjectingDevice(power);

    @Test
    void aRevokeIsAJrvkBlockBeforeTheCommitCoveredByTheTransactionChecksum() throws Exception {
        Journal journal = formatted();
        commit(journal, 10, fill(0xA1));                               // blocks 201..203, sequence 16

        try (Journal.Transaction tx = journal.begin()) {
            tx.revoke(10);
            tx.revoke(99);                                             // never logged: allowed
            tx.revoke(10);                                             // recorded once
            tx.log(11, ByteBuffer.wrap(fill(0xB2)));
            assertThat(tx.blocks()).isOne();
            assertThat(tx.revokes()).isEqualTo(2);
            tx.commit();                                               // blocks 204..207, sequence 17
        }

        MetadataBlock revoke = MetadataBlock.read(device, 206, JournalFormat.REVOKE_TYPE);
        assertThat(new String(block(power, 206), 0, 4, java.nio.charset.StandardCharsets.US_ASCII)).isEqualTo("JRVK");
        assertThat(revoke.sequence()).isEqualTo(17);
        assertThat(revoke.payload().remaining()).isEqualTo(12 + 16);
        BlockReader listed = revoke.reader();
        assertThat(listed.getLong()).as("journal id").isEqualTo(ID);
        assertThat(listed.getInt()).as("count").isEqualTo(2);
        assertThat(listed.getLong()).isEqualTo(10);
        assertThat(listed.getLong()).isEqualTo(99);
        BlockReader commit = MetadataBlock.read(device, 207, JournalFormat.COMMIT_TYPE).reader();
        assertThat(commit.getLong()).isEqualTo(ID);
        assertThat(commit.getInt()).as("descriptor blocks").isEqualTo(1);
        assertThat(commit.getInt()).as("data blocks").isEqualTo(1);
        assertThat(commit.getInt()).as("transaction checksum over descriptor, data and revoke block")
                .isEqualTo(crcOfBlocks(204, 3));
        assertThat(journal.latest(10)).isEmpty();
        assertThat(bytes(journal.readBlock(10))).as("the home block again").isEqualTo(ZERO);
        assertThat(journal.stats()).isEqualTo(new Journal.Stats(2, 2, 2, 7, 1, 0, 0, 0, 0, 0, 15, 7));
    }

    @Test
    void replaySkipsARevokedImageAndKeepsWhatWasWrittenInPlace() throws Exception {
        Journal journal = formatted();
        commit(journal, 10, fill(0xA1));
        revoke(journal, 10);
        BlockIo.write(device, 10, ByteBuffer.wrap(fill(0xC3)), IoPurpose.DATA);   // the new owner
        device.flush();

        power.restart(CutMode.LOSE_UNFLUSHED, null);
        Journal reopened = Journal.open(device, START, LENGTH);

        assertThat(reopened.replay()).isEqualTo(new Journal.ReplayResult(2, 1, 1, 1, 18 + 15));
        assertThat(block(power, 10)).isEqualTo(fill(0xC3));
        assertThat(reopened.stats().imagesRevokedAtReplay()).isOne();
        assertThat(reopened.stats().blocksCheckpointed()).isZero();
    }

    @Test
    void revokeAfterLogInOneTransactionDropsTheImage() throws Exception {
        Journal journal = formatted();
        try (Journal.Transaction tx = journal.begin()) {
            tx.log(10, ByteBuffer.wrap(fill(0xA1)));
            tx.revoke(10);
            assertThat(tx.blocks()).isZero();
            assertThat(bytes(tx.read(10))).as("the transaction's own view: the home block").isEqualTo(ZERO);
            tx.commit();
        }

        assertThat(journal.stats().logBlocksWritten()).as("one revoke block and the commit").isEqualTo(2);
        assertThat(MetadataBlock.read(device, 201, JournalFormat.REVOKE_TYPE).sequence()).isEqualTo(16);
        power.restart(CutMode.LOSE_UNFLUSHED, null);
        assertThat(Journal.open(device, START, LENGTH).replay()).isEqualTo(new Journal.ReplayResult(1, 0, 1, 0, 32));
        assertThat(block(power, 10)).isEqualTo(ZERO);
    }

    @Test
    void logAfterRevokeInTheSameTransactionReplaysTheNewImage() throws Exception {
        Journal journal = formatted();
        commit(journal, 10, fill(0xA1));
        try (Journal.Transaction tx = journal.begin()) {
            tx.revoke(10);
            tx.log(10, ByteBuffer.wrap(fill(0xB2)));
            assertThat(tx.blocks()).isOne();
            assertThat(tx.revokes()).isOne();
            tx.commit();
        }
        assertThat(bytes(journal.readBlock(10))).isEqualTo(fill(0xB2));

        power.restart(CutMode.LOSE_UNFLUSHED, null);
        assertThat(Journal.open(device, START, LENGTH).replay()).isEqualTo(new Journal.ReplayResult(2, 2, 1, 1, 33));
        assertThat(block(power, 10)).isEqualTo(fill(0xB2));
    }

    @Test
    void logInALaterTransactionReplaysTheNewestImage() throws Exception {
        Journal journal = formatted();
        commit(journal, 10, fill(0xA1));
        revoke(journal, 10);
        assertThat(journal.latest(10)).isEmpty();
        commit(journal, 10, fill(0xB2));
        assertThat(bytes(journal.readBlock(10))).isEqualTo(fill(0xB2));

        power.restart(CutMode.LOSE_UNFLUSHED, null);
        assertThat(Journal.open(device, START, LENGTH).replay()).isEqualTo(new Journal.ReplayResult(3, 2, 1, 1, 34));
        assertThat(block(power, 10)).isEqualTo(fill(0xB2));
    }

    /**
     * The revoked image lies before the end of the log, the revoking transaction wraps: with an image
     * (descriptor at position 14, data, revoke block and commit at 0..2) or revoke-only (revoke block
     * at 14, commit at 0).
     */
    @ParameterizedTest(name = "revoking transaction also logs an image: {0}")
    @ValueSource(booleans = {true, false})
    void aRevokeAcrossTheWrapSuppressesTheImageBeforeIt(boolean withImage) throws Exception {
        Journal journal = formatted();
        commit(journal, blocks(30, 9));                                 // positions 0..10
        journal.checkpoint();
        commit(journal, 10, fill(0xA1));                               // positions 11..13, sequence 17
        var before = device.stats();

        try (Journal.Transaction tx = journal.begin()) {
            if (withImage) {
                tx.log(11, ByteBuffer.wrap(fill(0xB2)));
            }
            tx.revoke(10);
            tx.commit();                                               // sequence 18
        }

        assertThat(device.stats().minus(before).writes()).as("written in two pieces").isEqualTo(2);
        long revokeBlock = withImage ? 202 : 215;
        assertThat(MetadataBlock.read(device, revokeBlock, JournalFormat.REVOKE_TYPE).sequence()).isEqualTo(18);
        assertThat(MetadataBlock.read(device, withImage ? 203 : 201, JournalFormat.COMMIT_TYPE).sequence())
                .isEqualTo(18);
        BlockIo.write(device, 10, ByteBuffer.wrap(fill(0xC3)), IoPurpose.DATA);
        device.flush();
        power.restart(CutMode.LOSE_UNFLUSHED, null);
        assertThat(Journal.open(device, START, LENGTH).replay())
                .isEqualTo(new Journal.ReplayResult(2, withImage ? 2 : 1, 1, 1, 19 + 15));
        assertThat(block(power, 10)).isEqualTo(fill(0xC3));
        assertThat(block(power, 11)).isEqualTo(withImage ? fill(0xB2) : ZERO);
    }

    /** Each block of the revoking transaction lost in turn (a lost write): it is torn, T1 replays. */
    @ParameterizedTest(name = "lost log block {0}")
    @ValueSource(longs = {204, 205, 206, 207})
    void aTornTransactionsRevokesAreIgnored(long lostBlock) throws Exception {
        Journal journal = formatted();
        commit(journal, 10, fill(0xA1));                               // blocks 201..203
        try (Journal.Transaction tx = journal.begin()) {
            tx.log(11, ByteBuffer.wrap(fill(0xB2)));
            tx.revoke(10);
            tx.commit();                                               // blocks 204..207
        }
        power.poke(lostBlock * BLOCK, ZERO, 0, BLOCK);

        assertThat(Journal.open(device, START, LENGTH).replay()).isEqualTo(new Journal.ReplayResult(1, 1, 0, 0, 32));
        assertThat(block(power, 10)).isEqualTo(fill(0xA1));
        assertThat(block(power, 11)).isEqualTo(ZERO);
    }

    /**
     * Readers see the committed image until the revoking transaction commits; the checkpoint after it
     * writes nothing to the revoked block (any write touching it would fail the checkpoint), so the
     * bytes its new owner wrote in place stay.
     */
    @Test
    void checkpointAfterARevokeNeverWritesTheStaleImage() throws Exception {
        Journal journal = formatted();
        commit(journal, blocks(10, 3));                                // 10, 11, 12
        try (Journal.Transaction tx = journal.begin()) {
            tx.revoke(11);
            assertThat(bytes(journal.readBlock(11))).as("not yet committed").isEqualTo(fill(11));
            assertThat(bytes(tx.read(11))).as("the revoking transaction reads home").isEqualTo(ZERO);
            tx.commit();
        }
        assertThat(journal.latest(11)).isEmpty();
        BlockIo.write(device, 11, ByteBuffer.wrap(fill(0xC3)), IoPurpose.DATA);
        device.flush();
        device.inject(Fault.writes(11 * BLOCK, BLOCK));

        journal.checkpoint();

        assertThat(block(power, 10)).isEqualTo(fill(10));
        assertThat(block(power, 11)).isEqualTo(fill(0xC3));
        assertThat(block(power, 12)).isEqualTo(fill(12));
        assertThat(journal.stats().blocksCheckpointed()).isEqualTo(2);
        assertThat(bytes(journal.readBlock(11))).isEqualTo(fill(0xC3));
    }

    /**
     * An image of the device at every write and at the start of every flush of: the revoking commit
     * (which wraps: two writes, one flush), the new owner's in-place write and its flush, and the
     * checkpoint after it; each image as a power cut would leave it (unflushed writes all lost, or a
     * seeded random part kept, whole blocks or torn and reordered). After replay, block 10 (logged
     * with A in T1, revoked in T2) and block 11 (logged with B in T2) must be: before the commit
     * returned, T2 all or nothing ({@code 10 = A, 11 = 0} or {@code 10 = 0, 11 = B}); after it, never
     * A ({@code 10} is 0 or C, the owner's bytes, and C once they were flushed; {@code 11 = B}).
     */
    @Test
    void aPowerCutAtEveryWriteOfARevokingCommitNeverBringsTheOldImageBack() throws Exception {
        Journal journal = formatted();
        commit(journal, blocks(30, 9));                                 // positions 0..10
        journal.checkpoint();
        commit(journal, 10, fill(0xA1));                               // positions 11..13
        int[] phase = {0};                                              // 0 committing, 1 committed, 2 C durable
        List<Snapshot> snapshots = new ArrayList<>();
        power.onWrite(count -> snapshots.addAll(snapshots(phase[0])));
        power.onFlush(count -> snapshots.addAll(snapshots(phase[0])));

        try (Journal.Transaction tx = journal.begin()) {
            tx.revoke(10);
            tx.log(11, ByteBuffer.wrap(fill(0xB2)));
            tx.commit();                                               // positions 14, 0..2
        }
        phase[0] = 1;
        BlockIo.write(device, 10, ByteBuffer.wrap(fill(0xC3)), IoPurpose.DATA);
        device.flush();
        phase[0] = 2;
        journal.checkpoint();
        power.onWrite(count -> { });
        power.onFlush(count -> { });

        int[] outcomes = new int[4];
        for (Snapshot snapshot : snapshots) {
            Journal.open(snapshot.image(), START, LENGTH).replay();
            byte[] at10 = snapshot.image().peek(10L * BLOCK, BLOCK);
            byte[] at11 = snapshot.image().peek(11L * BLOCK, BLOCK);
            String what = "snapshot in phase " + snapshot.phase() + " (" + snapshot.mode() + ")";
            switch (snapshot.phase()) {
                case 0 -> {
                    boolean before = Arrays.equals(at10, fill(0xA1)) && Arrays.equals(at11, ZERO);
                    boolean after = Arrays.equals(at10, ZERO) && Arrays.equals(at11, fill(0xB2));
                    assertThat(before || after).as(what + ": all or nothing").isTrue();
                    outcomes[before ? 0 : 1]++;
                }
                case 1 -> {
                    assertThat(at10).as(what).isIn(ZERO, fill(0xC3));
                    assertThat(at11).as(what).isEqualTo(fill(0xB2));
                    outcomes[2]++;
                }
                default -> {
                    assertThat(at10).as(what).isEqualTo(fill(0xC3));
                    assertThat(at11).as(what).isEqualTo(fill(0xB2));
                    outcomes[3]++;
                }
            }
        }
        assertThat(outcomes).as("every outcome was reached").doesNotContain(0);
    }

    @Test
    void revokesCountTowardsTheTransactionLimitAndAreCheckedLikeLoggedBlocks() throws Exception {
        Journal journal = formatted();
        Journal.Transaction tx = journal.begin();
        for (long block = 0; block < 13; block++) {
            tx.log(block, ByteBuffer.wrap(fill((int) block)));
        }

        assertThatThrownBy(() -> tx.revoke(99))
                .isInstanceOf(NoSpaceException.class)
                .hasMessage("journal: a transaction of 13 blocks and 1 revokes needs 16 log blocks (with descriptors,"
                        + " revoke blocks and commit) but the whole log is 15 blocks; split it (at most 13 blocks per"
                        + " transaction)");
        assertThat(tx.revokes()).isZero();
        tx.revoke(12);                                                 // drops an image: fits
        assertThatThrownBy(() -> tx.log(12, ByteBuffer.wrap(fill(12)))).isInstanceOf(NoSpaceException.class);
        assertThatThrownBy(() -> tx.revoke(205))
                .isInstanceOf(InvalidRangeException.class)
                .hasMessage("journal: cannot revoke block 205: it is inside the journal region [200, +16)");
        assertThatThrownBy(() -> tx.revoke(256))
                .isInstanceOf(InvalidRangeException.class)
                .hasMessage("journal: cannot revoke block 256: it is outside the device's 256 blocks");
        tx.commit();
        assertThat(journal.stats().logBlocksWritten()).isEqualTo(15);
        assertThatThrownBy(() -> tx.revoke(1)).isInstanceOf(IllegalStateException.class);
        assertThat(journal.maxTransactionRevokes()).isEqualTo(14 * 59);
    }

    @Test
    void aRevokeOnlyTransactionSpansSeveralRevokeBlocks() throws Exception {
        Journal journal = formatted();
        commit(journal, blocks(0, 5));                                 // positions 0..6
        try (Journal.Transaction tx = journal.begin()) {
            for (long block = 0; block < 70; block++) {
                tx.revoke(block);
            }
            tx.commit();                                               // 59 + 11 listed, commit: 7..9
        }
        BlockReader second = MetadataBlock.read(device, 209, JournalFormat.REVOKE_TYPE).reader();
        second.skip(Long.BYTES);
        assertThat(second.getInt()).isEqualTo(11);

        power.restart(CutMode.LOSE_UNFLUSHED, null);
        assertThat(Journal.open(device, START, LENGTH).replay()).isEqualTo(new Journal.ReplayResult(2, 5, 70, 5, 33));
        for (long block = 0; block < 5; block++) {
            assertThat(block(power, block)).isEqualTo(ZERO);
        }
    }

    @Test
    void aVersionOneJournalIsReplayedAndBecomesVersionTwo() throws Exception {
        Journal journal = formatted();
        commit(journal, 10, fill(0xA1));
        MetadataBlock superblock = MetadataBlock.read(device, START, JournalFormat.SUPERBLOCK_TYPE);
        ByteBuffer payload = ByteBuffer.allocate(superblock.payload().remaining()).order(ByteOrder.LITTLE_ENDIAN);
        payload.put(superblock.payload().duplicate()).putInt(0, 1).clear();
        MetadataBlock.write(device, START, JournalFormat.SUPERBLOCK_TYPE, superblock.sequence(), payload);
        device.flush();

        assertThat(Journal.open(device, START, LENGTH).replay().transactions()).isOne();
        assertThat(block(power, 10)).isEqualTo(fill(0xA1));
        assertThat(MetadataBlock.read(device, START, JournalFormat.SUPERBLOCK_TYPE).payload().getInt(0)).isEqualTo(2);
    }

    private record Snapshot(int phase, String mode, RamBlockDevice image) {
    }

    /**
     * Called under the device lock: images only, no I/O. Besides the cut modes, the image that keeps
     * every unflushed write (what reads see), so both outcomes of a commit cut short are reached.
     */
    private List<Snapshot> snapshots(int phase) {
        List<Snapshot> taken = new ArrayList<>();
        taken.add(new Snapshot(phase, "LOSE_UNFLUSHED", power.image(CutMode.LOSE_UNFLUSHED, null)));
        try {
            RamBlockDevice everything = new RamBlockDevice(BLOCK, power.capacity());
            byte[] live = power.peek(0, (int) power.capacity());
            everything.poke(0, live, 0, live.length);
            taken.add(new Snapshot(phase, "keep every write", everything));
        } catch (DeviceRangeException e) {
            throw new UncheckedIOException(e);
        }
        for (int seed = 0; seed < 8; seed++) {
            for (CutMode mode : List.of(CutMode.LOSE_SOME_BLOCKS, CutMode.LOSE_SOME_WRITES, CutMode.TEAR_AND_REORDER)) {
                taken.add(new Snapshot(phase, mode + " seed " + seed, power.image(mode, new Random(seed))));
            }
        }
        return taken;
    }

    private Journal formatted() throws IOException {
        Journal.format(device, START, LENGTH, ID);
        Journal journal = Journal.open(device, START, LENGTH);
        journal.replay();
        return journal;
    }

    private static void commit(Journal journal, long blockNo, byte[] image) throws IOException {
        try (Journal.Transaction tx = journal.begin()) {
            tx.log(blockNo, ByteBuffer.wrap(image));
            tx.commit();
        }
    }

    /** Commits one transaction logging each block {@code b} of {@code blockNumbers} filled with {@code b}. */
    private static void commit(Journal journal, List<Long> blockNumbers) throws IOException {
        try (Journal.Transaction tx = journal.begin()) {
            for (long blockNo : blockNumbers) {
                tx.log(blockNo, ByteBuffer.wrap(fill((int) blockNo)));
            }
            tx.commit();
        }
    }

    private static List<Long> blocks(long first, int count) {
        List<Long> blockNumbers = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            blockNumbers.add(first + i);
        }
        return blockNumbers;
    }

    private static void revoke(Journal journal, long blockNo) throws IOException {
        try (Journal.Transaction tx = journal.begin()) {
            tx.revoke(blockNo);
            tx.commit();
        }
    }

    private int crcOfBlocks(long first, int count) {
        CRC32C crc = new CRC32C();
        for (int i = 0; i < count; i++) {
            crc.update(block(power, first + i));
        }
        return (int) crc.getValue();
    }

    private static byte[] block(PowerCutDevice disk, long blockNo) {
        try {
            return disk.peek(blockNo * BLOCK, BLOCK);
        } catch (DeviceRangeException e) {
            throw new UncheckedIOException(e);
        }
    }
}
