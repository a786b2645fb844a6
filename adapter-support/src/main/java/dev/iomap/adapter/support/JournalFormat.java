package dev.iomap.adapter.support;

import dev.iomap.api.CorruptFilesystemException;
import dev.iomap.api.InvalidRangeException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * The on-device records of {@link Journal}: its superblock, descriptor blocks and commit blocks, all
 * {@link MetadataBlock}s. The layouts are in {@link Journal}'s class comment and the module README.
 * Stateless and thread-safe.
 */
final class JournalFormat {
    static final int SUPERBLOCK_TYPE = MetadataBlock.magic("JSB1");
    static final int DESCRIPTOR_TYPE = MetadataBlock.magic("JDSC");
    static final int COMMIT_TYPE = MetadataBlock.magic("JCMT");
    static final int VERSION = 1;

    /** Descriptor payload bytes before the target list: journal id, count. */
    private static final int DESCRIPTOR_HEADER_BYTES = Long.BYTES + Integer.BYTES;
    private static final int SUPERBLOCK_PAYLOAD_BYTES = 48;
    private static final int COMMIT_PAYLOAD_BYTES = 20;

    private JournalFormat() {
    }

    /**
     * What the journal superblock says.
     *
     * @param blockSize the device block size the journal was made for
     * @param journalId random at format time; every descriptor and commit carries it
     * @param regionStart first block of the region (the superblock's own block)
     * @param regionLength blocks in the region, superblock included
     * @param tailPosition log position of the oldest transaction not yet checkpointed (or of the next
     *     one, if the log is empty)
     * @param tailSequence its sequence number
     */
    record Superblock(int blockSize, long journalId, long regionStart, long regionLength,
            long tailPosition, long tailSequence) {

        ByteBuffer encode() throws InvalidRangeException {
            var payload = BlockWriter.allocate(SUPERBLOCK_PAYLOAD_BYTES, "journal superblock")
                    .putInt(VERSION)
                    .putInt(blockSize)
                    .putLong(journalId)
                    .putLong(regionStart)
                    .putLong(regionLength)
                    .putLong(tailPosition)
                    .putLong(tailSequence)
                    .written();
            return new MetadataBlock(SUPERBLOCK_TYPE, regionStart, tailSequence, payload).encode(blockSize);
        }

        static Superblock decode(MetadataBlock block) throws CorruptFilesystemException {
            BlockReader reader = block.reader();
            int version = reader.getInt();
            if (version != VERSION) {
                throw reader.corrupt("journal format version " + version + "; this build supports version "
                        + VERSION);
            }
            return new Superblock(reader.getInt(), reader.getLong(), reader.getLong(), reader.getLong(),
                    reader.getLong(), reader.getLong());
        }
    }

    /**
     * One descriptor block's content.
     *
     * @param journalId the journal it belongs to
     * @param targets home block numbers of the data blocks that follow it, in order
     */
    record Descriptor(long journalId, List<Long> targets) {

        static int capacity(int blockSize) {
            return (MetadataBlock.maxPayload(blockSize) - DESCRIPTOR_HEADER_BYTES) / Long.BYTES;
        }

        ByteBuffer encode(long blockNo, long sequence, int blockSize) throws InvalidRangeException {
            var payload = BlockWriter.allocate(DESCRIPTOR_HEADER_BYTES + targets.size() * Long.BYTES,
                    "journal descriptor").putLong(journalId).putInt(targets.size());
            for (long target : targets) {
                payload.putLong(target);
            }
            return new MetadataBlock(DESCRIPTOR_TYPE, blockNo, sequence, payload.written()).encode(blockSize);
        }

        static Descriptor decode(MetadataBlock block, int blockSize) throws CorruptFilesystemException {
            BlockReader reader = block.reader();
            long journalId = reader.getLong();
            int count = reader.getInt();
            if (count < 1 || count > capacity(blockSize)) {
                throw reader.corrupt("descriptor lists " + count + " blocks");
            }
            List<Long> targets = new ArrayList<>(count);
            for (int i = 0; i < count; i++) {
                targets.add(reader.getLong());
            }
            return new Descriptor(journalId, targets);
        }
    }

    /**
     * A commit block's content.
     *
     * @param journalId the journal it belongs to
     * @param descriptorBlocks descriptor blocks in the transaction
     * @param dataBlocks data blocks in the transaction
     * @param transactionCrc CRC32C of every descriptor and data block of the transaction, whole blocks,
     *     in log order
     */
    record Commit(long journalId, int descriptorBlocks, int dataBlocks, int transactionCrc) {

        ByteBuffer encode(long blockNo, long sequence, int blockSize) throws InvalidRangeException {
            var payload = BlockWriter.allocate(COMMIT_PAYLOAD_BYTES, "journal commit")
                    .putLong(journalId)
                    .putInt(descriptorBlocks)
                    .putInt(dataBlocks)
                    .putInt(transactionCrc)
                    .written();
            return new MetadataBlock(COMMIT_TYPE, blockNo, sequence, payload).encode(blockSize);
        }

        static Commit decode(MetadataBlock block) throws CorruptFilesystemException {
            BlockReader reader = block.reader();
            return new Commit(reader.getLong(), reader.getInt(), reader.getInt(), reader.getInt());
        }
    }
}
