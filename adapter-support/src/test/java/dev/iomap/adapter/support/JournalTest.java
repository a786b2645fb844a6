package dev.iomap.adapter.support;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.iomap.api.CorruptFileSystemException;
import dev.iomap.device.BlockDevice;
import dev.iomap.device.DeviceIoException;
import dev.iomap.device.DeviceNoSpaceException;
import dev.iomap.device.DeviceRangeException;
import dev.iomap.devices.CutMode;
import dev.iomap.devices.Fault;
import dev.iomap.devices.FaultInjectingDevice;
import dev.iomap.devices.PowerCutDevice;
import dev.iomap.devices.RamBlockDevice;
import dev.iomap.api.InvalidRangeException;
import dev.iomap.api.IomapException;
import dev.iomap.api.NoSpaceException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class JournalTest {
    private static final long SEED = Long.getLong("iomap.test.seed", 0);
    private static final int OPS = Integer.getInteger("iomap.test.ops", 400);
    private static final int BLOCK = 512;
    /** Journal region of the small device: superblock at 200, log positions 0..14 at blocks 201..215. */
    private static final long START = 200;
    private static final long LENGTH = 16;
    private static final long ID = 0x1234;

    private final PowerCutDevice power = new PowerCutDevice(new RamBlockDevice(BLOCK, 256L * BLOCK));
    /** What the journals run on: {@link #power} behind injected faults. */
    private final FaultInjectingDevice device = new FaultInjectingDevice(power);

    @Test
    void aFreshJournalReplaysNothing() throws Exception {
        Journal.format(device, START, LENGTH, ID);
        Journal journal = Journal.open(device, START, LENGTH);

        assertThat(journal.replay()).isEqualTo(new Journal.ReplayResult(0, 0, 0, 0, 16));
        assertThat(journal.stats()).isEqualTo(new Journal.Stats(0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 15, 0));
        assertThat(journal.maxTransactionBlocks()).isEqualTo(13);
        assertThat(journal.journalId()).isEqualTo(ID);
        assertThat(power.unflushedWrites()).isZero();
    }

    @Test
    void theSuperblockHoldsRegionTailAndSequenceAtTheDocumentedOffsets() throws Exception {
        Journal.format(device, START, LENGTH, ID);

        ByteBuffer block = ByteBuffer.wrap(durableBlock(power, START)).order(java.nio.ByteOrder.LITTLE_ENDIAN);

        assertThat(new String(durableBlock(power, START), 0, 4, java.nio.charset.StandardCharsets.US_ASCII))
                .isEqualTo("JSB1");
        assertThat(block.getInt(4)).as("payload length").isEqualTo(48);
        assertThat(block.getLong(8)).as("home block").isEqualTo(START);
        assertThat(block.getLong(16)).as("header sequence").isEqualTo(1);
        assertThat(block.getInt(24)).as("version").isEqualTo(2);
        assertThat(block.getInt(28)).as("block size").isEqualTo(BLOCK);
        assertThat(block.getLong(32)).as("journal id").isEqualTo(ID);
        assertThat(block.getLong(40)).as("region start").isEqualTo(START);
        assertThat(block.getLong(48)).as("region length").isEqualTo(LENGTH);
        assertThat(block.getLong(56)).as("tail position").isZero();
        assertThat(block.getLong(64)).as("tail sequence").isEqualTo(1);
        assertThat(block.getInt(72)).as("checksum").isEqualTo(Crc32c.of(durableBlock(power, START), 0, 72));
    }

    @Test
    void commitWritesDescriptorDataAndCommitThenFlushesAndLeavesHomeBlocksAlone() throws Exception {
        Journal journal = formatted();
        var before = device.stats();

        commit(journal, Map.of(10L, fill(0xA1), 11L, fill(0xB2), 50L, fill(0xC3)));

        var written = device.stats().minus(before);
        assertThat(written.writes()).isEqualTo(1);
        assertThat(written.metadataBytesWritten()).isEqualTo(5 * BLOCK);
        assertThat(written.flushes()).isEqualTo(1);
        assertThat(power.unflushedWrites()).isZero();
        MetadataBlock descriptor = MetadataBlock.read(device, 201, JournalFormat.DESCRIPTOR_TYPE);
        assertThat(descriptor.sequence()).isEqualTo(16);
        BlockReader listed = descriptor.reader();
        assertThat(listed.getLong()).isEqualTo(ID);
        assertThat(listed.getInt()).isEqualTo(3);
        long[] targets = {listed.getLong(), listed.getLong(), listed.getLong()};
        assertThat(targets).containsExactlyInAnyOrder(10, 11, 50);
        for (int i = 0; i < 3; i++) {
            assertThat(block(power, 202 + i)).isEqualTo(fill(0xA1 + 0x11 * (int) indexOf(targets[i])));
        }
        MetadataBlock commit = MetadataBlock.read(device, 205, JournalFormat.COMMIT_TYPE);
        BlockReader fields = commit.reader();
        assertThat(fields.getLong()).isEqualTo(ID);
        assertThat(fields.getInt()).as("descriptor blocks").isEqualTo(1);
        assertThat(fields.getInt()).as("data blocks").isEqualTo(3);
        assertThat(fields.getInt()).as("transaction checksum").isEqualTo(crcOfBlocks(201, 4));
        assertThat(block(power, 10)).isEqualTo(new byte[BLOCK]);
        assertThat(journal.stats()).isEqualTo(new Journal.Stats(1, 3, 0, 5, 1, 0, 0, 0, 0, 0, 15, 5));
    }

    @Test
    void replayAfterAPowerCutAppliesCommittedTransactionsExactly() throws Exception {
        Journal journal = formatted();
        commit(journal, Map.of(10L, fill(0xA1), 11L, fill(0xB2)));
        commit(journal, Map.of(11L, fill(0xB3), 12L, fill(0xC4)));

        power.restart(CutMode.LOSE_UNFLUSHED, null);
        Journal reopened = Journal.open(device, START, LENGTH);

        assertThat(reopened.replay()).isEqualTo(new Journal.ReplayResult(2, 4, 0, 0, 18 + 15));
        assertThat(block(power, 10)).isEqualTo(fill(0xA1));
        assertThat(block(power, 11)).isEqualTo(fill(0xB3));
        assertThat(block(power, 12)).isEqualTo(fill(0xC4));
        assertThat(block(power, 13)).isEqualTo(new byte[BLOCK]);
        assertThat(reopened.latest(11)).isEmpty();
        assertThat(reopened.stats().transactionsReplayed()).isEqualTo(2);
        assertThat(reopened.stats().blocksReplayed()).isEqualTo(4);
        assertThat(reopened.stats().blocksCheckpointed()).isEqualTo(3);
        assertThat(Journal.open(device, START, LENGTH).replay().transactions()).isZero();
    }

    @Test
    void aPowerCutBeforeTheCommitFlushLosesTheWholeTransaction() throws Exception {
        Journal journal = formatted();
        commit(journal, Map.of(10L, fill(0xA1)));
        device.inject(Fault.flushes());

        assertThatThrownBy(() -> commit(journal, Map.of(10L, fill(0xA2), 11L, fill(0xB2))))
                .isInstanceOf(DeviceIoException.class)
                .hasMessageStartingWith("injected flush error");
        assertThat(power.unflushedWrites()).isOne();

        power.restart(CutMode.LOSE_UNFLUSHED, null);
        device.clearFaults();
        Journal reopened = Journal.open(device, START, LENGTH);

        assertThat(reopened.replay().transactions()).isEqualTo(1);
        assertThat(block(power, 10)).isEqualTo(fill(0xA1));
        assertThat(block(power, 11)).isEqualTo(new byte[BLOCK]);
    }

    @Test
    void anIoErrorAbortsTheJournal() throws Exception {
        Journal journal = formatted();
        device.inject(Fault.writes(0, Long.MAX_VALUE));
        assertThatThrownBy(() -> commit(journal, Map.of(10L, fill(1)))).isInstanceOf(DeviceIoException.class);
        device.clearFaults();

        assertThatThrownBy(() -> commit(journal, Map.of(10L, fill(2))))
                .isInstanceOf(IomapException.class)
                .hasMessage("Journal[blocks 200+16, id 1234] was aborted by an I/O error; remount to replay it")
                .hasCauseInstanceOf(DeviceIoException.class);
        assertThatThrownBy(journal::checkpoint).isInstanceOf(IomapException.class);
        assertThat(Journal.open(device, START, LENGTH).replay().transactions()).isZero();
    }

    /**
     * Issue 36, item 12: a host filesystem that fills under an image refuses writes part way
     * ({@link DeviceNoSpaceException}). A commit or checkpoint it fails changes nothing and does not abort
     * the journal: the same work succeeds once the host has room, and a power cut after it replays every
     * committed transaction, never the refused one.
     */
    @Test
    void aWriteRefusedForLackOfHostSpaceFailsTheCommitOrCheckpointWithoutAborting() throws Exception {
        HostThatFills host = new HostThatFills(device);
        Journal.format(host, START, LENGTH, ID);
        Journal journal = Journal.open(host, START, LENGTH);
        journal.replay();
        commit(journal, Map.of(10L, fill(1)));

        host.full = true;
        assertThatThrownBy(() -> commit(journal, Map.of(10L, fill(2), 11L, fill(3))))
                .isInstanceOf(DeviceNoSpaceException.class);
        assertThat(journal.abortCause()).isEmpty();
        assertThat(bytes(journal.readBlock(10))).as("the refused transaction is not visible").isEqualTo(fill(1));
        host.full = false;
        commit(journal, Map.of(11L, fill(4)));
        commit(journal, Map.of(12L, fill(5)));

        host.full = true;
        assertThatThrownBy(journal::checkpoint).isInstanceOf(DeviceNoSpaceException.class);
        assertThat(journal.abortCause()).isEmpty();
        assertThat(bytes(journal.readBlock(12))).as("still in the overlay").isEqualTo(fill(5));
        host.full = false;
        journal.checkpoint();
        commit(journal, Map.of(13L, fill(6)));

        power.restart(CutMode.LOSE_UNFLUSHED, null);
        Journal.open(device, START, LENGTH).replay();
        assertThat(block(power, 10)).isEqualTo(fill(1));
        assertThat(block(power, 11)).isEqualTo(fill(4));
        assertThat(block(power, 12)).isEqualTo(fill(5));
        assertThat(block(power, 13)).isEqualTo(fill(6));
    }

    /** While {@link #full}, writes only the first block of each write and fails it as a full host does. */
    private static final class HostThatFills extends dev.iomap.device.ForwardingBlockDevice {
        volatile boolean full;

        HostThatFills(BlockDevice delegate) {
            super(delegate);
        }

        @Override
        public java.util.concurrent.CompletableFuture<Void> write(long offset, java.util.List<ByteBuffer> srcs,
                dev.iomap.device.IoPurpose purpose) {
            if (!full) {
                return delegate.write(offset, srcs, purpose);
            }
            ByteBuffer first = srcs.getFirst().duplicate();
            first.limit(first.position() + blockSize());
            delegate.write(offset, java.util.List.of(first), purpose).join();
            return java.util.concurrent.CompletableFuture.failedFuture(new DeviceNoSpaceException(
                    "write: the host filesystem is full", offset, blockSize(), null));
        }
    }

    /**
     * Damage to one block of the middle transaction: only the last transaction can be torn (each
     * commit is flushed before the next starts), so a damaged one followed by a complete later one is
     * refused, nothing applied or written, rather than dropped with every committed one after it (as
     * replay did until ImageFuzzTest's crash images showed fsynced files losing their data). Damage to
     * the last transaction is a torn tail: it alone is dropped, for good.
     */
    @ParameterizedTest(name = "damaged log block {0}")
    @ValueSource(longs = {204, 205, 207})
    void aDamagedMiddleTransactionIsRefusedAndADamagedLastOneIsDroppedForGood(long damagedBlock) throws Exception {
        Journal journal = formatted();
        commit(journal, Map.of(10L, fill(1)));                         // positions 0..2: blocks 201..203
        commit(journal, ordered(11L, fill(2), 12L, fill(3)));          // positions 3..6: blocks 204..207
        commit(journal, Map.of(13L, fill(4)));                         // positions 7..9: blocks 208..210
        byte[] intact = block(power, damagedBlock);
        power.poke(damagedBlock * BLOCK + 40, new byte[] {(byte) 0xEE}, 0, 1);
        var before = device.stats();

        assertThatThrownBy(() -> Journal.open(device, START, LENGTH).replay())
                .isInstanceOf(CorruptFileSystemException.class)
                .hasMessage("journal transaction 17 at log position 3 (block 204) is damaged, yet transaction 18 was "
                        + "committed after it: replaying would lose committed transactions; nothing was replayed");
        assertThat(device.stats().minus(before).writes()).as("writes").isZero();
        assertThat(block(power, 10)).isEqualTo(new byte[BLOCK]);

        power.poke(damagedBlock * BLOCK, intact, 0, BLOCK);
        power.poke(209L * BLOCK + 40, new byte[] {(byte) 0xEE}, 0, 1);
        Journal reopened = Journal.open(device, START, LENGTH);
        assertThat(reopened.replay().transactions()).isEqualTo(2);
        assertThat(block(power, 11)).isEqualTo(fill(2));
        assertThat(block(power, 13)).isEqualTo(new byte[BLOCK]);

        commit(reopened, Map.of(21L, fill(5)));
        power.restart(CutMode.LOSE_UNFLUSHED, null);
        assertThat(Journal.open(device, START, LENGTH).replay().transactions()).isEqualTo(1);
        assertThat(block(power, 21)).isEqualTo(fill(5));
        assertThat(block(power, 13)).as("the torn third transaction must not come back").isEqualTo(new byte[BLOCK]);
    }

    @Test
    void readsSeeCommittedImagesThroughTheOverlayUntilCheckpoint() throws Exception {
        Journal journal = formatted();
        commit(journal, Map.of(10L, fill(0xA1)));

        assertThat(block(power, 10)).isEqualTo(new byte[BLOCK]);
        assertThat(bytes(journal.readBlock(10))).isEqualTo(fill(0xA1));
        assertThat(journal.latest(10).map(JournalTest::bytes)).contains(fill(0xA1));
        assertThat(journal.latest(11)).isEmpty();
        try (Journal.Transaction tx = journal.begin()) {
            tx.log(10, ByteBuffer.wrap(fill(0xA2)));
            assertThat(bytes(tx.read(10))).isEqualTo(fill(0xA2));
            assertThat(bytes(journal.readBlock(10))).as("uncommitted images are private").isEqualTo(fill(0xA1));
        }
        assertThat(bytes(journal.readBlock(10))).as("a closed transaction is dropped").isEqualTo(fill(0xA1));

        journal.checkpoint();

        assertThat(journal.latest(10)).isEmpty();
        assertThat(block(power, 10)).isEqualTo(fill(0xA1));
        assertThat(power.unflushedWrites()).isZero();
        assertThat(journal.stats().logUsedBlocks()).isZero();
        ByteBuffer copy = journal.readBlock(10);
        copy.put(0, (byte) 0);
        assertThat(bytes(journal.readBlock(10))).as("callers own what they read").isEqualTo(fill(0xA1));
    }

    @Test
    void aFullLogForcesACheckpoint() throws Exception {
        Journal journal = formatted();
        commit(journal, blocks(0, 5, 1));                              // 7 log blocks
        commit(journal, blocks(5, 5, 2));                              // 14 log blocks
        assertThat(block(power, 0)).isEqualTo(new byte[BLOCK]);

        commit(journal, blocks(10, 5, 3));                             // does not fit in the last one

        Journal.Stats stats = journal.stats();
        assertThat(stats.forcedCheckpoints()).isEqualTo(1);
        assertThat(stats.checkpoints()).isEqualTo(2);
        assertThat(stats.blocksCheckpointed()).isEqualTo(10);
        assertThat(stats.logUsedBlocks()).isEqualTo(7);
        assertThat(block(power, 9)).isEqualTo(fill(2 + 4));
        assertThat(block(power, 10)).isEqualTo(new byte[BLOCK]);
        power.restart(CutMode.LOSE_UNFLUSHED, null);
        Journal.open(device, START, LENGTH).replay();
        assertThat(block(power, 14)).isEqualTo(fill(3 + 4));
    }

    @Test
    void aCommitThatWrapsIsWrittenInTwoPiecesAndReplays() throws Exception {
        Journal journal = formatted();
        commit(journal, blocks(0, 12, 1));                             // positions 0..13
        journal.checkpoint();
        var before = device.stats();

        commit(journal, blocks(20, 3, 2));                             // positions 14, 0..3

        assertThat(device.stats().minus(before).writes()).isEqualTo(2);
        assertThat(MetadataBlock.read(device, 215, JournalFormat.DESCRIPTOR_TYPE).sequence()).isEqualTo(17);
        assertThat(MetadataBlock.read(device, 204, JournalFormat.COMMIT_TYPE).sequence()).isEqualTo(17);
        power.restart(CutMode.LOSE_UNFLUSHED, null);
        assertThat(Journal.open(device, START, LENGTH).replay().blocks()).isEqualTo(3);
        assertThat(block(power, 22)).isEqualTo(fill(2 + 2));
    }

    @Test
    void aTransactionLargerThanTheLogIsRefusedWithoutHarm() throws Exception {
        Journal journal = formatted();
        Journal.Transaction tx = journal.begin();
        for (long block = 0; block < 13; block++) {
            tx.log(block, ByteBuffer.wrap(fill((int) block)));
        }

        assertThatThrownBy(() -> tx.log(13, ByteBuffer.wrap(fill(13))))
                .isInstanceOf(NoSpaceException.class)
                .hasMessage("journal: a transaction of 14 blocks needs 16 log blocks (with descriptors and commit)"
                        + " but the whole log is 15 blocks; split it (at most 13 blocks per transaction)");
        tx.log(12, ByteBuffer.wrap(fill(0x12)));
        assertThat(tx.blocks()).isEqualTo(13);
        tx.commit();
        assertThat(journal.stats().logBlocksWritten()).isEqualTo(15);
        assertThat(bytes(journal.readBlock(12))).isEqualTo(fill(0x12));
    }

    @Test
    void aTransactionCanSpanSeveralDescriptorBlocks() throws Exception {
        var big = new PowerCutDevice(new RamBlockDevice(BLOCK, 512L * BLOCK));
        Journal.format(big, 300, 200, ID);
        Journal journal = Journal.open(big, 300, 200);
        journal.replay();

        commit(journal, blocks(0, 130, 7));                            // 59 + 59 + 12 per descriptor

        assertThat(journal.stats().logBlocksWritten()).isEqualTo(3 + 130 + 1);
        BlockReader second = MetadataBlock.read(big, 301 + 60, JournalFormat.DESCRIPTOR_TYPE).reader();
        second.skip(Long.BYTES);
        assertThat(second.getInt()).as("blocks listed by the second descriptor").isEqualTo(59);
        big.restart(CutMode.LOSE_UNFLUSHED, null);
        assertThat(Journal.open(big, 300, 200).replay().blocks()).isEqualTo(130);
        for (long block = 0; block < 130; block++) {
            assertThat(block(big, block)).isEqualTo(fill(7 + (int) block));
        }
    }

    @Test
    void transactionsOfAnEarlierFormatAreNeverReplayed() throws Exception {
        Journal journal = formatted();
        commit(journal, Map.of(10L, fill(1)));

        Journal.format(device, START, LENGTH, ID + 1);

        assertThat(Journal.open(device, START, LENGTH).replay().transactions()).isZero();
        assertThat(block(power, 10)).isEqualTo(new byte[BLOCK]);
    }

    @Test
    void refusesMisuse() throws Exception {
        Journal.format(device, START, LENGTH, ID);
        Journal journal = Journal.open(device, START, LENGTH);
        assertThatThrownBy(journal::begin)
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("must be replayed");
        journal.replay();
        Journal.Transaction tx = journal.begin();

        assertThatThrownBy(() -> tx.log(205, ByteBuffer.wrap(fill(1))))
                .isInstanceOf(InvalidRangeException.class)
                .hasMessage("journal: cannot log block 205: it is inside the journal region [200, +16)");
        assertThatThrownBy(() -> tx.log(256, ByteBuffer.wrap(fill(1))))
                .isInstanceOf(InvalidRangeException.class)
                .hasMessage("journal: cannot log block 256: it is outside the device's 256 blocks");
        assertThatThrownBy(() -> tx.log(1, ByteBuffer.allocate(100)))
                .isInstanceOf(InvalidRangeException.class)
                .hasMessage("journal: the image of block 1 is 100 bytes, not one 512-byte block");
        tx.commit();
        assertThat(power.unflushedWrites()).as("an empty commit writes nothing").isZero();
        assertThatThrownBy(tx::commit).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> tx.log(1, ByteBuffer.wrap(fill(1)))).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void refusesABadRegionOrSuperblock() throws Exception {
        assertThatThrownBy(() -> Journal.format(device, 254, 4, ID))
                .isInstanceOf(InvalidRangeException.class)
                .hasMessage("journal region [254, +4) must be at least 4 blocks inside the device's 256 blocks");
        assertThatThrownBy(() -> Journal.open(device, START, LENGTH))
                .isInstanceOf(CorruptFileSystemException.class)
                .hasMessage("metadata block 200 (device offset 102400): expected a 0x3142534a \"JSB1\" block,"
                        + " found magic 0x00000000");
        Journal.format(device, START, LENGTH, ID);
        assertThatThrownBy(() -> Journal.open(device, START, LENGTH - 1))
                .isInstanceOf(CorruptFileSystemException.class)
                .hasMessage("journal superblock at block 200 describes the region [200, +16), not [200, +15)");
    }

    /**
     * Found by ImageFuzzTest: a tail sequence forged (checksum recomputed) to Long.MAX_VALUE was
     * accepted and the numbering overflowed to negative sequences, so the image a clean unmount left
     * was refused at the next mount; one forged above the log's transactions (on a crash image) made
     * replay find nothing and silently drop every committed transaction. The superblock's header
     * carries the tail sequence too, so a forged one disagrees with it; and a sequence past 2^62 is
     * refused even when both agree.
     */
    @Test
    void refusesATailSequenceForgedOrThatWouldOverflow() throws Exception {
        Journal.format(device, START, LENGTH, ID);
        forgeTailSequence(4096, 1);
        assertThatThrownBy(() -> Journal.open(device, START, LENGTH))
                .isInstanceOf(CorruptFileSystemException.class)
                .hasMessage("journal superblock at block 200: its header says sequence 1 and its payload tail "
                        + "sequence 4096; they are written equal");
        forgeTailSequence(Journal.MAX_SEQUENCE, Journal.MAX_SEQUENCE);
        Journal.open(device, START, LENGTH).replay();
        forgeTailSequence(Long.MAX_VALUE, Long.MAX_VALUE);
        assertThatThrownBy(() -> Journal.open(device, START, LENGTH))
                .isInstanceOf(CorruptFileSystemException.class)
                .hasMessage("journal superblock at block 200: bad tail position 0 or sequence " + Long.MAX_VALUE);
    }

    /** Rewrites the journal superblock's tail sequence (payload offset 40) and header sequence, checksum valid. */
    private void forgeTailSequence(long sequence, long headerSequence) throws IOException {
        MetadataBlock superblock = MetadataBlock.read(device, START, JournalFormat.SUPERBLOCK_TYPE);
        ByteBuffer payload = ByteBuffer.allocate(superblock.payload().remaining()).order(ByteOrder.LITTLE_ENDIAN);
        payload.put(superblock.payload().duplicate()).putLong(40, sequence).clear();
        MetadataBlock.write(device, START, JournalFormat.SUPERBLOCK_TYPE, headerSequence, payload);
        device.flush();
    }

    @Test
    void concurrentCommittersAndReadersSeeTheirOwnLatestImages() throws Exception {
        Journal journal = formatted();
        int threads = 4;
        int commits = 60;
        try (var pool = java.util.concurrent.Executors.newFixedThreadPool(threads)) {
            var results = new java.util.ArrayList<java.util.concurrent.Future<Void>>();
            for (int t = 0; t < threads; t++) {
                long first = 20L * t;
                results.add(pool.submit(() -> {
                    for (int i = 1; i <= commits; i++) {
                        commit(journal, ordered(first, fill(i), first + 1, fill(i)));
                        assertThat(bytes(journal.readBlock(first))).isEqualTo(fill(i));
                        assertThat(bytes(journal.readBlock(first + 1))).isEqualTo(fill(i));
                    }
                    return null;
                }));
            }
            for (var result : results) {
                result.get();
            }
        }

        assertThat(journal.stats().transactionsCommitted()).isEqualTo((long) threads * commits);
        assertThat(journal.stats().forcedCheckpoints()).isPositive();
        power.restart(CutMode.LOSE_UNFLUSHED, null);
        Journal.open(device, START, LENGTH).replay();
        for (int t = 0; t < threads; t++) {
            assertThat(block(power, 20L * t)).isEqualTo(fill(commits));
            assertThat(block(power, 20L * t + 1)).isEqualTo(fill(commits));
        }
    }

    /**
     * Random transactions, checkpoints, clean remounts and crashes in the middle of commits and
     * checkpoints (a write or flush fails, then a power cut keeps a random half of the unflushed
     * blocks), against a model of what each block must hold. The small log wraps many times.
     */
    @Test
    void randomWorkloadWithCrashesMatchesTheModel() throws Exception {
        Random random = new Random(SEED);
        var disk = new PowerCutDevice(new RamBlockDevice(BLOCK, 128L * BLOCK));
        var faulty = new FaultInjectingDevice(disk);
        Journal.format(faulty, 96, 24, ID);
        Journal journal = remount(faulty);
        Map<Long, byte[]> model = new LinkedHashMap<>();
        long logBlocksWritten = 0;
        for (int op = 0; op < OPS; op++) {
            int choice = random.nextInt(100);
            if (choice < 60) {
                Map<Long, byte[]> tx = randomTransaction(random, op);
                commit(journal, tx);
                model.putAll(tx);
            } else if (choice < 68) {
                journal.checkpoint();
            } else if (choice < 80) {
                long block = random.nextInt(96);
                assertThat(bytes(journal.readBlock(block))).as("block %d after op %d", block, op)
                        .isEqualTo(model.getOrDefault(block, new byte[BLOCK]));
            } else if (choice < 88) {
                logBlocksWritten += journal.stats().logBlocksWritten();
                disk.restart(CutMode.LOSE_UNFLUSHED, null);
                journal = remount(faulty);
            } else {
                logBlocksWritten += journal.stats().logBlocksWritten();
                Map<Long, byte[]> tx = randomTransaction(random, op);
                boolean committed = crashDuring(journal, tx, faulty, random);
                journal = remount(faulty);
                boolean applied = tx.entrySet().stream()
                        .allMatch(e -> Arrays.equals(block(disk, e.getKey()), e.getValue()));
                boolean untouched = tx.keySet().stream()
                        .allMatch(b -> Arrays.equals(block(disk, b), model.getOrDefault(b, new byte[BLOCK])));
                assertThat(applied || untouched).as("transaction of op %d is all or nothing", op).isTrue();
                assertThat(applied || !committed).as("committed transaction of op %d survives", op).isTrue();
                if (applied) {
                    model.putAll(tx);
                }
            }
        }
        logBlocksWritten += journal.stats().logBlocksWritten();
        disk.restart(CutMode.LOSE_UNFLUSHED, null);
        remount(faulty);
        for (long block = 0; block < 96; block++) {
            assertThat(block(disk, block)).as("block %d", block).isEqualTo(model.getOrDefault(block, new byte[BLOCK]));
        }
        assertThat(logBlocksWritten).as("the log wrapped").isGreaterThan(3 * 23L);
    }

    /** @return whether the commit returned normally before the injected failure */
    private static boolean crashDuring(Journal journal, Map<Long, byte[]> tx, FaultInjectingDevice disk,
            Random random) {
        if (random.nextBoolean()) {
            disk.inject(Fault.flushes().after(random.nextInt(3)));
        } else {
            disk.inject(Fault.writes(0, Long.MAX_VALUE).after(random.nextInt(3)));
        }
        boolean committed = false;
        try {
            commit(journal, tx);
            committed = true;
            journal.checkpoint();
        } catch (IOException expected) {
            // the crash
        }
        disk.clearFaults();
        ((PowerCutDevice) disk.inner()).restart(CutMode.LOSE_SOME_BLOCKS, random);
        return committed;
    }

    @Test
    void inspectShowsWhatReplayWouldApplyAndWritesNothing() throws Exception {
        Journal journal = formatted();
        commit(journal, blocks(10, 3, 1));
        commit(journal, ordered(11, fill(40), 20, fill(41)));
        try (Journal.Transaction tx = journal.begin()) {
            tx.revoke(12);
            tx.log(21, ByteBuffer.wrap(fill(42)));
            tx.commit();
        }
        // A crash before any checkpoint: a second look at the device sees three transactions.
        Journal reopened = Journal.open(device, START, LENGTH);
        var before = device.stats();
        Journal.Pending pending = reopened.inspect();

        assertThat(device.stats().bytesWritten()).as("bytes written by inspect").isEqualTo(before.bytesWritten());
        assertThat(device.stats().flushes()).as("flushes by inspect").isEqualTo(before.flushes());
        assertThat(pending.isEmpty()).isFalse();
        assertThat(pending.transactions()).isEqualTo(3);
        assertThat(pending.blocks()).isEqualTo(6);
        assertThat(pending.revokes()).isEqualTo(1);
        assertThat(pending.images().keySet()).as("block 12 revoked by a later transaction").containsExactly(10L, 11L,
                20L, 21L);
        assertThat(bytes(pending.images().get(10L))).isEqualTo(fill(1));
        assertThat(bytes(pending.images().get(11L))).as("the newest image").isEqualTo(fill(40));
        assertThat(bytes(pending.images().get(21L))).isEqualTo(fill(42));
        assertThat(block(power, 11)).as("home block untouched").isNotEqualTo(fill(40));

        Journal.ReplayResult replayed = reopened.replay();
        assertThat(replayed.transactions()).isEqualTo(pending.transactions());
        assertThat(block(power, 11)).isEqualTo(fill(40));
        assertThat(reopened.inspect().isEmpty()).as("nothing pending after replay").isTrue();
    }

    private static Journal remount(BlockDevice disk) throws IOException {
        Journal journal = Journal.open(disk, 96, 24);
        journal.replay();
        return journal;
    }

    private static Map<Long, byte[]> randomTransaction(Random random, int op) {
        Map<Long, byte[]> tx = new LinkedHashMap<>();
        int count = 1 + random.nextInt(8);
        while (tx.size() < count) {
            long block = random.nextInt(96);
            byte[] contents = new byte[BLOCK];
            random.nextBytes(contents);
            ByteBuffer.wrap(contents).putInt(op).putLong(block);
            tx.put(block, contents);
        }
        return tx;
    }

    private Journal formatted() throws IOException {
        Journal.format(device, START, LENGTH, ID);
        Journal journal = Journal.open(device, START, LENGTH);
        journal.replay();
        return journal;
    }

    private static void commit(Journal journal, Map<Long, byte[]> images) throws IOException {
        try (Journal.Transaction tx = journal.begin()) {
            for (var entry : images.entrySet()) {
                tx.log(entry.getKey(), ByteBuffer.wrap(entry.getValue()));
            }
            tx.commit();
        }
    }

    /** @return {@code count} blocks from {@code first}, block {@code first + i} filled with {@code seed + i} */
    private static Map<Long, byte[]> blocks(long first, int count, int seed) {
        Map<Long, byte[]> images = new LinkedHashMap<>();
        for (int i = 0; i < count; i++) {
            images.put(first + i, fill(seed + i));
        }
        return images;
    }

    private static Map<Long, byte[]> ordered(long block1, byte[] image1, long block2, byte[] image2) {
        Map<Long, byte[]> images = new LinkedHashMap<>();
        images.put(block1, image1);
        images.put(block2, image2);
        return images;
    }

    private static long indexOf(long target) {
        return target == 10 ? 0 : target == 11 ? 1 : 2;
    }

    private int crcOfBlocks(long first, int count) {
        java.util.zip.CRC32C crc = new java.util.zip.CRC32C();
        for (int i = 0; i < count; i++) {
            crc.update(block(power, first + i));
        }
        return (int) crc.getValue();
    }

    /** @return block {@code blockNo} as reads see it (not counted) */
    private static byte[] block(PowerCutDevice disk, long blockNo) {
        try {
            return disk.peek(blockNo * BLOCK, BLOCK);
        } catch (DeviceRangeException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** @return block {@code blockNo} as a power cut now would leave it */
    private static byte[] durableBlock(PowerCutDevice disk, long blockNo) throws IOException {
        return disk.image(CutMode.LOSE_UNFLUSHED, null).peek(blockNo * BLOCK, BLOCK);
    }

    static byte[] fill(int value) {
        byte[] bytes = new byte[BLOCK];
        Arrays.fill(bytes, (byte) value);
        return bytes;
    }

    static byte[] bytes(ByteBuffer buffer) {
        byte[] bytes = new byte[buffer.remaining()];
        buffer.duplicate().get(bytes);
        return bytes;
    }
}
