package dev.iomap.adapter.support;

import dev.iomap.adapter.support.JournalFormat.Commit;
import dev.iomap.adapter.support.JournalFormat.Descriptor;
import dev.iomap.adapter.support.JournalFormat.Revoke;
import dev.iomap.adapter.support.JournalFormat.Superblock;
import dev.iomap.device.BlockDevice;
import dev.iomap.api.CorruptFileSystemException;
import dev.iomap.api.InvalidRangeException;
import dev.iomap.api.NoSpaceException;
import dev.iomap.device.IoPurpose;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SortedMap;
import java.util.concurrent.CompletableFuture;
import java.util.zip.CRC32C;

/**
 * The device side of {@link Journal}: where log positions are, how a transaction is laid out and
 * written, how one is found again, and the writes of superblock and home blocks. Holds no mutable
 * state; thread-safe, though {@link Journal} calls it under its lock. Nothing here flushes.
 */
final class JournalLog {
    private final BlockDevice device;
    private final int blockSize;
    private final long start;
    private final long length;
    private final long logBlocks;
    private final long journalId;
    private final int descriptorCapacity;
    /** {@link #maxTransactionBlocks()}, computed once: it is asked before every metadata change commits. */
    private final long maxTransactionBlocks;

    JournalLog(BlockDevice device, long start, long length, long journalId) {
        this.device = device;
        this.blockSize = device.blockSize();
        this.start = start;
        this.length = length;
        this.logBlocks = length - 1;
        this.journalId = journalId;
        this.descriptorCapacity = Descriptor.capacity(blockSize);
        this.maxTransactionBlocks = fittingDataBlocks();
    }

    /**
     * A complete transaction found in the log.
     *
     * @param images the newest image of each block it logged, in log order; read-only buffers
     * @param imageCount images in it (a block logged twice counts twice)
     * @param revokes the blocks it revoked
     * @param revokeCount revoke records in it (a block revoked twice counts twice)
     * @param logBlocks log blocks it takes
     */
    record Found(Map<Long, ByteBuffer> images, int imageCount, Set<Long> revokes, int revokeCount, long logBlocks) {
    }

    /** @return blocks in the circular log */
    long logBlocks() {
        return logBlocks;
    }

    /**
     * @return log blocks a transaction of {@code dataBlocks} images and {@code revokes} revoke records
     *     takes: descriptors, data, revoke blocks, commit
     */
    long logBlocksFor(long dataBlocks, long revokes) {
        return Math.ceilDiv(dataBlocks, descriptorCapacity) + dataBlocks + Math.ceilDiv(revokes, descriptorCapacity)
                + 1;
    }

    /** @return the most revoke records a transaction of no images may have: it must fit in the empty log */
    long maxTransactionRevokes() {
        return (logBlocks - 1) * descriptorCapacity;
    }

    /** @return the most data blocks a transaction of no revokes may have: it must fit in the empty log */
    long maxTransactionBlocks() {
        return maxTransactionBlocks;
    }

    private long fittingDataBlocks() {
        long data = logBlocks - 2;
        while (logBlocksFor(data, 0) > logBlocks) {
            data--;
        }
        return data;
    }

    /** @return whether {@code blockNo} is on the device and outside the journal region */
    boolean isValidTarget(long blockNo) {
        return blockNo >= 0 && blockNo < BlockIo.blockCount(device) && !isInRegion(blockNo);
    }

    boolean isInRegion(long blockNo) {
        return blockNo >= start && blockNo < start + length;
    }

    /**
     * @param verb what the caller wants to do with the block, for the message ("log", "revoke")
     * @throws InvalidRangeException if {@code blockNo} is inside the journal or outside the device
     */
    void checkTarget(long blockNo, String verb) throws InvalidRangeException {
        if (isInRegion(blockNo)) {
            throw new InvalidRangeException("journal: cannot " + verb + " block " + blockNo
                    + ": it is inside the journal region [" + start + ", +" + length + ")");
        }
        if (!isValidTarget(blockNo)) {
            throw new InvalidRangeException("journal: cannot " + verb + " block " + blockNo
                    + ": it is outside the device's " + BlockIo.blockCount(device) + " blocks");
        }
    }

    /** @return the error for a transaction of {@code dataBlocks} images and {@code revokes} revokes */
    NoSpaceException tooLarge(long dataBlocks, long revokes) {
        String what = revokes == 0 ? dataBlocks + " blocks" : dataBlocks + " blocks and " + revokes + " revokes";
        return new NoSpaceException("journal: a transaction of " + what + " needs "
                + logBlocksFor(dataBlocks, revokes) + " log blocks (with descriptors"
                + (revokes == 0 ? "" : ", revoke blocks") + " and commit) but the whole log is "
                + logBlocks + " blocks; split it (at most " + maxTransactionBlocks() + " blocks per transaction)");
    }

    /**
     * Writes a transaction at {@code position}: descriptors each followed by their data blocks, then
     * the revoke blocks, then the commit; in two device writes if it wraps. Waits for the writes; does
     * not flush.
     *
     * @param images home block number to image, in the order to log them
     * @param revokes home block numbers revoked, in the order to list them
     * @return log blocks written
     */
    long append(long position, long sequence, Map<Long, ByteBuffer> images, Collection<Long> revokes)
            throws IOException {
        List<ByteBuffer> blocks = encode(position, sequence, images, List.copyOf(revokes));
        int beforeWrap = (int) Math.min(blocks.size(), logBlocks - position);
        List<CompletableFuture<Void>> writes = new ArrayList<>();
        writes.add(device.write(blockNo(position) * blockSize, blocks.subList(0, beforeWrap), IoPurpose.METADATA));
        if (beforeWrap < blocks.size()) {
            writes.add(device.write(blockNo(0) * blockSize, blocks.subList(beforeWrap, blocks.size()),
                    IoPurpose.METADATA));
        }
        BlockIo.awaitAll(writes);
        return blocks.size();
    }

    private List<ByteBuffer> encode(long position, long sequence, Map<Long, ByteBuffer> images,
            List<Long> revokes) throws InvalidRangeException {
        List<Long> targets = new ArrayList<>(images.keySet());
        List<ByteBuffer> blocks = new ArrayList<>();
        CRC32C crc = new CRC32C();
        int descriptors = 0;
        for (int first = 0; first < targets.size(); first += descriptorCapacity) {
            List<Long> listed = targets.subList(first, Math.min(targets.size(), first + descriptorCapacity));
            long blockNo = blockNo(position + blocks.size());
            ByteBuffer descriptor = new Descriptor(journalId, listed).encode(blockNo, sequence, blockSize);
            Crc32c.update(crc, descriptor);
            blocks.add(descriptor);
            descriptors++;
            for (long target : listed) {
                ByteBuffer image = images.get(target);
                Crc32c.update(crc, image);
                blocks.add(image.duplicate());
            }
        }
        for (int first = 0; first < revokes.size(); first += descriptorCapacity) {
            List<Long> listed = revokes.subList(first, Math.min(revokes.size(), first + descriptorCapacity));
            long blockNo = blockNo(position + blocks.size());
            ByteBuffer revoke = new Revoke(journalId, listed).encode(blockNo, sequence, blockSize);
            Crc32c.update(crc, revoke);
            blocks.add(revoke);
        }
        long commitBlockNo = blockNo(position + blocks.size());
        blocks.add(new Commit(journalId, descriptors, targets.size(), (int) crc.getValue())
                .encode(commitBlockNo, sequence, blockSize));
        return blocks;
    }

    /**
     * One scan of the log from the tail.
     *
     * @param applied the images replay would write home, revokes applied
     * @param transactions complete transactions found
     * @param position the log position the scan stopped at
     * @param sequence the sequence number the transaction there would have had
     * @param scanned log blocks the complete transactions take
     */
    record LogScan(RevokeTable.Applied applied, int transactions, long position, long sequence, long scanned) {
    }

    /**
     * Scans from the tail to the first transaction that is not complete.
     *
     * @param tailPosition log position of the tail
     * @param tailSequence sequence number of the transaction at the tail
     * @return what was found
     * @throws CorruptFileSystemException if the transaction the scan stopped at is followed by a later
     *     one of this journal (damaged, not torn)
     * @throws IOException if the device fails
     */
    LogScan scanFrom(long tailPosition, long tailSequence) throws IOException {
        long position = tailPosition;
        long sequence = tailSequence;
        long scanned = 0;
        List<Found> transactions = new ArrayList<>();
        RevokeTable revoked = new RevokeTable();
        while (true) {
            Found found = scan(position, sequence, logBlocks - scanned);
            if (found == null) {
                break;
            }
            transactions.add(found);
            revoked.add(found, sequence);
            scanned += found.logBlocks();
            position = (position + found.logBlocks()) % logBlocks;
            sequence++;
        }
        long later = laterTransaction(sequence);
        if (later >= 0) {
            throw new CorruptFileSystemException("journal transaction " + sequence + " at log position " + position
                    + " (block " + blockNo(position) + ") is damaged, yet transaction " + later
                    + " was committed after it: replaying would lose committed transactions; nothing was replayed");
        }
        return new LogScan(revoked.apply(transactions, tailSequence), transactions.size(), position, sequence,
                scanned);
    }

    /**
     * @param position log position to look at
     * @param sequence the sequence number the transaction there must have
     * @param room log blocks it may take at most (it may not run into the tail)
     * @return the complete transaction there, or null if there is none
     */
    Found scan(long position, long sequence, long room) throws IOException {
        return new Scanner(position, sequence, room).scan();
    }

    /**
     * Looks through the whole log for a complete transaction of this journal with a sequence number
     * above {@code sequence}. Commits are written one after the other, each flushed before the next
     * starts, and sequence numbers never go back; so if the transaction {@code sequence} is not
     * complete and a later one is found, it was not torn by a power cut but damaged afterwards. (A
     * lone record with a higher number, damage in stale log space, is not a transaction.) A transaction
     * starts with a descriptor, or with a revoke block if it logged no images.
     *
     * @param sequence the sequence number of the transaction the scan stopped at
     * @return the later sequence number found, or -1
     * @throws IOException if the device fails
     */
    long laterTransaction(long sequence) throws IOException {
        int chunk = 256;
        for (long first = 0; first < logBlocks; first += chunk) {
            int blocks = (int) Math.min(chunk, logBlocks - first);
            ByteBuffer read = BlockIo.read(device, blockNo(first), blocks);
            for (int i = 0; i < blocks; i++) {
                ByteBuffer block = read.slice(i * blockSize, blockSize);
                MetadataBlock header;
                try {
                    header = MetadataBlock.decodeAnyType(block, blockNo(first + i));
                } catch (CorruptFileSystemException e) {
                    continue;
                }
                boolean starts = header.type() == JournalFormat.DESCRIPTOR_TYPE
                        || header.type() == JournalFormat.REVOKE_TYPE;
                if (starts && header.sequence() > sequence
                        && header.payload().remaining() >= Long.BYTES && header.payload().getLong(0) == journalId
                        && scan(first + i, header.sequence(), logBlocks) != null) {
                    return header.sequence();
                }
            }
        }
        return -1;
    }

    /** Writes the journal superblock; waits, does not flush. */
    void writeSuperblock(long tailPosition, long tailSequence) throws IOException {
        Superblock superblock = new Superblock(blockSize, journalId, start, length, tailPosition, tailSequence);
        BlockIo.write(device, start, superblock.encode(), IoPurpose.METADATA);
    }

    /** Writes images home, one device write per run of consecutive blocks, all in flight at once. */
    void writeHome(SortedMap<Long, ByteBuffer> images) throws IOException {
        List<CompletableFuture<Void>> writes = new ArrayList<>();
        List<ByteBuffer> run = new ArrayList<>();
        long runStart = -1;
        for (var entry : images.entrySet()) {
            if (!run.isEmpty() && entry.getKey() != runStart + run.size()) {
                writes.add(device.write(runStart * blockSize, List.copyOf(run), IoPurpose.METADATA));
                run.clear();
            }
            if (run.isEmpty()) {
                runStart = entry.getKey();
            }
            run.add(entry.getValue().duplicate());
        }
        if (!run.isEmpty()) {
            writes.add(device.write(runStart * blockSize, List.copyOf(run), IoPurpose.METADATA));
        }
        BlockIo.awaitAll(writes);
    }

    /** @return the device block of log position {@code position} (taken modulo the log size) */
    long blockNo(long position) {
        return start + 1 + position % logBlocks;
    }

    /** Reads one transaction; single use. */
    private final class Scanner {
        private final long position;
        private final long sequence;
        private final long room;
        private final CRC32C crc = new CRC32C();
        private final Map<Long, ByteBuffer> images = new LinkedHashMap<>();
        private final Set<Long> revokes = new LinkedHashSet<>();
        private long used;
        private int imageCount;
        private int revokeCount;

        Scanner(long position, long sequence, long room) {
            this.position = position;
            this.sequence = sequence;
            this.room = room;
        }

        /** Reads {@code [descriptor, data...]... [revoke...] commit}; anything else is no transaction. */
        Found scan() throws IOException {
            int descriptors = 0;
            int revokeBlocks = 0;
            while (used < room) {
                long blockNo = blockNo(position + used);
                ByteBuffer raw = nextBlock();
                MetadataBlock header = decodeOrNull(raw, blockNo);
                if (header == null || header.sequence() != sequence) {
                    return null;
                }
                if (header.type() == JournalFormat.DESCRIPTOR_TYPE && revokeBlocks == 0) {
                    descriptors++;
                    Crc32c.update(crc, raw);
                    if (!readData(header)) {
                        return null;
                    }
                } else if (header.type() == JournalFormat.REVOKE_TYPE) {
                    revokeBlocks++;
                    Crc32c.update(crc, raw);
                    if (!readRevokes(header)) {
                        return null;
                    }
                } else if (header.type() == JournalFormat.COMMIT_TYPE) {
                    return isCommitOf(header, descriptors, revokeBlocks)
                            ? new Found(images, imageCount, revokes, revokeCount, used)
                            : null;
                } else {
                    return null;
                }
            }
            return null;
        }

        private boolean readRevokes(MetadataBlock header) {
            Revoke revoke;
            try {
                revoke = Revoke.decode(header, blockSize);
            } catch (CorruptFileSystemException e) {
                return false;
            }
            if (revoke.journalId() != journalId || !revoke.blocks().stream().allMatch(JournalLog.this::isValidTarget)) {
                return false;
            }
            revokes.addAll(revoke.blocks());
            revokeCount += revoke.blocks().size();
            return true;
        }

        private boolean readData(MetadataBlock header) throws IOException {
            Descriptor descriptor;
            try {
                descriptor = Descriptor.decode(header, blockSize);
            } catch (CorruptFileSystemException e) {
                return false;
            }
            if (descriptor.journalId() != journalId || descriptor.targets().size() > room - used) {
                return false;
            }
            for (long target : descriptor.targets()) {
                if (!isValidTarget(target)) {
                    return false;
                }
                ByteBuffer image = nextBlock();
                Crc32c.update(crc, image);
                images.put(target, image.asReadOnlyBuffer());
                imageCount++;
            }
            return true;
        }

        private boolean isCommitOf(MetadataBlock header, int descriptors, int revokeBlocks) {
            Commit commit;
            try {
                commit = Commit.decode(header);
            } catch (CorruptFileSystemException e) {
                return false;
            }
            return descriptors + revokeBlocks > 0
                    && commit.journalId() == journalId
                    && commit.descriptorBlocks() == descriptors
                    && commit.dataBlocks() == imageCount
                    && commit.transactionCrc() == (int) crc.getValue();
        }

        private ByteBuffer nextBlock() throws IOException {
            ByteBuffer block = BlockIo.read(device, blockNo(position + used), 1);
            used++;
            return block;
        }

        private static MetadataBlock decodeOrNull(ByteBuffer raw, long blockNo) {
            try {
                return MetadataBlock.decodeAnyType(raw, blockNo);
            } catch (CorruptFileSystemException e) {
                return null;
            }
        }
    }
}
