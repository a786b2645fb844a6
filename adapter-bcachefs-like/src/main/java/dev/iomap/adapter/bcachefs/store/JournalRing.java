package dev.iomap.adapter.bcachefs.store;

import dev.iomap.adapter.support.BlockIo;
import dev.iomap.device.BlockDevice;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;

/**
 * The journal ring's geometry and write position: where the next batch goes and how much of the ring
 * is in use since the last checkpoint; and the replay of the batches after a checkpoint. A batch is
 * contiguous: one that does not fit before the end of the ring starts at its beginning. Not
 * thread-safe: the store's lock guards it.
 */
final class JournalRing {
    private final long start;
    private final long blocks;
    private final int blockSize;
    private final long nonce;
    private long head;
    private long used;

    /** A batch ready to be written. */
    record Batch(long block, ByteBuffer data, long lastSeq) {
    }

    /** What replay found. */
    record Replay(List<JournalCodec.Entry> entries, long head, long usedBlocks) {
    }

    JournalRing(BcachefsSuperblock sb, long head, long used) {
        this.start = sb.journalStart();
        this.blocks = sb.journalBlocks();
        this.blockSize = sb.blockSize();
        this.nonce = sb.nonce();
        this.head = head;
        this.used = used;
    }

    long head() {
        return head;
    }

    long blocks() {
        return blocks;
    }

    long blocksFor(long entryBytes) {
        return (JournalCodec.BATCH_HEADER_BYTES + entryBytes + blockSize - 1) / blockSize;
    }

    /** @return whether a batch of {@code entryBytes} would take the ring past half full */
    boolean wouldPassHalf(long entryBytes) {
        long need = blocksFor(entryBytes);
        long waste = head + need > start + blocks ? start + blocks - head : 0;
        return used + waste + need > blocks / 2;
    }

    /** A checkpoint made everything before the head reusable. */
    void checkpointed() {
        used = 0;
    }

    /**
     * Lays out the pending entries as one batch at the head and advances the head past it.
     *
     * @param entries encoded entries, consecutive sequences starting at {@code firstSeq}
     * @throws IllegalStateException if the ring has no room (the store checkpoints long before)
     */
    Batch build(List<byte[]> entries, long firstSeq) {
        int entryBytes = 0;
        for (byte[] entry : entries) {
            entryBytes += entry.length;
        }
        int need = Math.toIntExact(blocksFor(entryBytes));
        long at = head;
        long waste = 0;
        if (at + need > start + blocks) {
            waste = start + blocks - at;
            at = start;
        }
        if (used + waste + need > blocks) {
            throw new IllegalStateException("journal ring of " + blocks + " blocks is full");
        }
        ByteBuffer data = ByteBuffer.allocate(need * blockSize).order(ByteOrder.LITTLE_ENDIAN);
        JournalCodec.putBatchHeader(data, nonce, firstSeq, entryBytes, need);
        data.position(JournalCodec.BATCH_HEADER_BYTES);
        for (byte[] entry : entries) {
            data.put(entry);
        }
        data.clear();
        used += waste + need;
        head = at + need == start + blocks ? start : at + need;
        return new Batch(at, data, firstSeq + entries.size() - 1);
    }

    /**
     * Reads the batches after the superblock's checkpoint, in order, until one is missing, foreign or
     * torn: every entry returned is whole and checksummed, with consecutive sequences.
     *
     * @throws IOException if the device cannot be read
     */
    static Replay replay(BlockDevice device, BcachefsSuperblock sb) throws IOException {
        long start = sb.journalStart();
        long end = start + sb.journalBlocks();
        long at = sb.journalTail();
        long expected = sb.checkpointSeq() + 1;
        long used = 0;
        List<JournalCodec.Entry> entries = new ArrayList<>();
        while (used < sb.journalBlocks()) {
            ByteBuffer first = BlockIo.read(device, at, 1);
            JournalCodec.BatchHeader header = JournalCodec.readBatchHeader(first, sb.nonce(), expected, end - at);
            long waste = 0;
            if (header == null && at != start) {
                waste = end - at;
                first = BlockIo.read(device, start, 1);
                header = JournalCodec.readBatchHeader(first, sb.nonce(), expected, sb.journalBlocks());
                if (header != null) {
                    at = start;
                }
            }
            if (header == null || used + waste + header.blocks() > sb.journalBlocks()) {
                break;
            }
            ByteBuffer batch = header.blocks() == 1 ? first : BlockIo.read(device, at, header.blocks());
            batch.position(JournalCodec.BATCH_HEADER_BYTES)
                    .limit(JournalCodec.BATCH_HEADER_BYTES + header.entryBytes());
            boolean whole = true;
            while (batch.hasRemaining()) {
                JournalCodec.Entry entry = JournalCodec.decodeEntry(batch, sb.nonce(), expected);
                if (entry == null) {
                    whole = false;
                    break;
                }
                entries.add(entry);
                expected++;
            }
            used += waste + header.blocks();
            at = at + header.blocks() == end ? start : at + header.blocks();
            if (!whole) {
                break;
            }
        }
        return new Replay(entries, at, used);
    }
}
