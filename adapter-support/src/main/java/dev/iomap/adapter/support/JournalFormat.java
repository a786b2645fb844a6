package dev.iomap.adapter.support;

import dev.iomap.api.CorruptFileSystemException;
import dev.iomap.api.InvalidRangeException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * The on-device records of {@link Journal}: its superblock, descriptor blocks, revoke blocks and commit
 * blocks, all {@link MetadataBlock}s. The layouts are in {@link Journal}'s class comment and the module README.
 * Stateless and thread-safe.
 */
final class JournalFormat {
    static final int SUPERBLOCK_TYPE = MetadataBlock.magic("JSB1");
    static final int DESCRIPTOR_TYPE = MetadataBlock.magic("JDSC");
    static final int COMMIT_TYPE = MetadataBlock.magic("JCMT");
    static final int REVOKE_TYPE = MetadataBlock.magic("JRVK");
    /**
     * The format version {@link Superblock#encode()} writes. Version 2 added revoke blocks; a version 1
     * log has none and is otherwise the same, so it is read as well (and becomes version 2 at the next
     * superblock write), while a build that knows only version 1 refuses a version 2 journal instead
     * of stopping its replay at the first revoke block and dropping committed transactions.
     */
    static final int VERSION = 2;
    /** The oldest format version this build reads. */
    static final int OLDEST_VERSION = 1;

    /** Descriptor and revoke payload bytes before the block list: journal id, count. */
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

        static Superblock decode(MetadataBlock block) throws CorruptFileSystemException {
            BlockReader reader = block.reader();
            int version = reader.getInt();
            if (version < OLDEST_VERSION || version > VERSION) {
                throw reader.corrupt("journal format version " + version + "; this build supports versions "
                        + OLDEST_VERSION + " to " + VERSION);
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

        /** @return the most block numbers one descriptor (or revoke block) lists */
        static int capacity(int blockSize) {
            return (MetadataBlock.maxPayload(blockSize) - DESCRIPTOR_HEADER_BYTES) / Long.BYTES;
        }

        ByteBuffer encode(long blockNo, long sequence, int blockSize) throws InvalidRangeException {
            return encodeList(DESCRIPTOR_TYPE, "journal descriptor", journalId, targets, blockNo, sequence, blockSize);
        }

        static Descriptor decode(MetadataBlock block, int blockSize) throws CorruptFileSystemException {
            BlockReader reader = block.reader();
            return new Descriptor(reader.getLong(), decodeList(reader, blockSize));
        }
    }

    /**
     * One revoke block's content: blocks whose images in earlier transactions must not be replayed.
     * Same layout as a descriptor, with no data blocks after it.
     *
     * @param journalId the journal it belongs to
     * @param blocks home block numbers revoked by the transaction
     */
    record Revoke(long journalId, List<Long> blocks) {

        ByteBuffer encode(long blockNo, long sequence, int blockSize) throws InvalidRangeException {
            return encodeList(REVOKE_TYPE, "journal revoke block", journalId, blocks, blockNo, sequence, blockSize);
        }

        static Revoke decode(MetadataBlock block, int blockSize) throws CorruptFileSystemException {
            BlockReader reader = block.reader();
            return new Revoke(reader.getLong(), decodeList(reader, blockSize));
        }
    }

    private static ByteBuffer encodeList(int type, String what, long journalId, List<Long> blockNumbers,
            long blockNo, long sequence, int blockSize) throws InvalidRangeException {
        var payload = BlockWriter.allocate(DESCRIPTOR_HEADER_BYTES + blockNumbers.size() * Long.BYTES, what)
                .putLong(journalId).putInt(blockNumbers.size());
        for (long listed : blockNumbers) {
            payload.putLong(listed);
        }
        return new MetadataBlock(type, blockNo, sequence, payload.written()).encode(blockSize);
    }

    /** Reads the count and the block numbers after the journal id. */
    private static List<Long> decodeList(BlockReader reader, int blockSize) throws CorruptFileSystemException {
        int count = reader.getInt();
        if (count < 1 || count > Descriptor.capacity(blockSize)) {
            throw reader.corrupt("lists " + count + " blocks");
        }
        List<Long> listed = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            listed.add(reader.getLong());
        }
        return listed;
    }

    /**
     * A commit block's content.
     *
     * @param journalId the journal it belongs to
     * @param descriptorBlocks descriptor blocks in the transaction
     * @param dataBlocks data blocks in the transaction
     * @param transactionCrc CRC32C of every descriptor, data and revoke block of the transaction, whole
     *     blocks, in log order
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

        static Commit decode(MetadataBlock block) throws CorruptFileSystemException {
            BlockReader reader = block.reader();
            return new Commit(reader.getLong(), reader.getInt(), reader.getInt(), reader.getInt());
        }
    }
}
