package dev.iomap.adapter.support;

import dev.iomap.adapter.support.JournalFormat.Commit;
import dev.iomap.adapter.support.JournalFormat.Descriptor;
import dev.iomap.adapter.support.JournalFormat.Superblock;
import dev.iomap.device.BlockDevice;
import dev.iomap.api.CorruptFilesystemException;
import dev.iomap.api.InvalidRangeException;
import dev.iomap.device.IoPurpose;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
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

    JournalLog(BlockDevice device, long start, long length, long journalId) {
        this.device = device;
        this.blockSize = device.blockSize();
        this.start = start;
        this.length = length;
        this.logBlocks = length - 1;
        this.journalId = journalId;
        this.descriptorCapacity = Descriptor.capacity(blockSize);
    }

    /**
     * A complete transaction found in the log.
     *
     * @param images the newest image of each block it logged, in log order; read-only buffers
     * @param imageCount images in it (a block logged twice counts twice)
     * @param logBlocks log blocks it takes
     */
    record Found(Map<Long, ByteBuffer> images, int imageCount, long logBlocks) {
    }

    /** @return blocks in the circular log */
    long logBlocks() {
        return logBlocks;
    }

    /** @return log blocks a transaction of {@code dataBlocks} images takes: descriptors, data, commit */
    long logBlocksFor(long dataBlocks) {
        return Math.ceilDiv(dataBlocks, descriptorCapacity) + dataBlocks + 1;
    }

    /** @return the most data blocks a transaction may have: it must fit in the empty log */
    long maxTransactionBlocks() {
        long data = logBlocks - 2;
        while (logBlocksFor(data) > logBlocks) {
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
     * Writes a transaction at {@code position}: descriptors each followed by their data blocks, then
     * the commit; in two device writes if it wraps. Waits for the writes; does not flush.
     *
     * @param images home block number to image, in the order to log them
     * @return log blocks written
     */
    long append(long position, long sequence, Map<Long, ByteBuffer> images) throws IOException {
        List<ByteBuffer> blocks = encode(position, sequence, images);
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

    private List<ByteBuffer> encode(long position, long sequence, Map<Long, ByteBuffer> images)
            throws InvalidRangeException {
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
        long commitBlockNo = blockNo(position + blocks.size());
        blocks.add(new Commit(journalId, descriptors, targets.size(), (int) crc.getValue())
                .encode(commitBlockNo, sequence, blockSize));
        return blocks;
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
     * lone record with a higher number, damage in stale log space, is not a transaction.)
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
                } catch (CorruptFilesystemException e) {
                    continue;
                }
                if (header.type() == JournalFormat.DESCRIPTOR_TYPE && header.sequence() > sequence
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
        private long used;
        private int imageCount;

        Scanner(long position, long sequence, long room) {
            this.position = position;
            this.sequence = sequence;
            this.room = room;
        }

        Found scan() throws IOException {
            int descriptors = 0;
            while (used < room) {
                long blockNo = blockNo(position + used);
                ByteBuffer raw = nextBlock();
                MetadataBlock header = decodeOrNull(raw, blockNo);
                if (header == null || header.sequence() != sequence) {
                    return null;
                }
                if (header.type() == JournalFormat.DESCRIPTOR_TYPE) {
                    descriptors++;
                    Crc32c.update(crc, raw);
                    if (!readData(header)) {
                        return null;
                    }
                } else if (header.type() == JournalFormat.COMMIT_TYPE) {
                    return isCommitOf(header, descriptors) ? new Found(images, imageCount, used) : null;
                } else {
                    return null;
                }
            }
            return null;
        }

        private boolean readData(MetadataBlock header) throws IOException {
            Descriptor descriptor;
            try {
                descriptor = Descriptor.decode(header, blockSize);
            } catch (CorruptFilesystemException e) {
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

        private boolean isCommitOf(MetadataBlock header, int descriptors) {
            Commit commit;
            try {
                commit = Commit.decode(header);
            } catch (CorruptFilesystemException e) {
                return false;
            }
            return descriptors > 0
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
            } catch (CorruptFilesystemException e) {
                return null;
            }
        }
    }
}
