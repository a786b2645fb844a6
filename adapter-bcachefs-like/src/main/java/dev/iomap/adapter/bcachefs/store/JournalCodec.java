package dev.iomap.adapter.bcachefs.store;

import dev.iomap.adapter.support.Crc32c;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;

/**
 * Encoding of journal entries (one per transaction) and of the batches that group-commit writes them
 * in (the module README has the byte offsets). Stateless.
 */
final class JournalCodec {
    /** "BCHJ" little-endian. */
    static final int BATCH_MAGIC = 0x4a484342;
    /** Bytes of a batch header. */
    static final int BATCH_HEADER_BYTES = 32;
    /** Bytes of an entry header: length, crc, nonce, seq, op count. */
    static final int ENTRY_HEADER_BYTES = 28;

    private JournalCodec() {
    }

    /** One decoded entry. */
    record Entry(long seq, List<StoreOp> ops) {
    }

    /** A decoded batch header. */
    record BatchHeader(long firstSeq, int entryBytes, int blocks) {
    }

    static int opBytes(StoreOp op) {
        return switch (op) {
            case StoreOp.Put put -> 1 + Node.KEY_BYTES + 2 + put.value().length;
            case StoreOp.Delete ignored -> 1 + Node.KEY_BYTES;
            case StoreOp.AddRefs ignored -> 1 + 8 + 8 + 4;
        };
    }

    /** @return bytes of the entry of a transaction of {@code ops} */
    static int entryBytes(List<StoreOp> ops) {
        int length = ENTRY_HEADER_BYTES;
        for (StoreOp op : ops) {
            length += opBytes(op);
        }
        return length;
    }

    /** @return the entry's bytes, checksummed */
    static byte[] encodeEntry(long nonce, long seq, List<StoreOp> ops) {
        int length = entryBytes(ops);
        ByteBuffer buf = ByteBuffer.allocate(length).order(ByteOrder.LITTLE_ENDIAN);
        buf.putInt(length).putInt(0).putLong(nonce).putLong(seq).putInt(ops.size());
        for (StoreOp op : ops) {
            switch (op) {
                case StoreOp.Put put -> {
                    buf.put(StoreOp.PUT);
                    Node.putKey(buf, put.key());
                    buf.putShort((short) put.value().length).put(put.value());
                }
                case StoreOp.Delete delete -> {
                    buf.put(StoreOp.DELETE);
                    Node.putKey(buf, delete.key());
                }
                case StoreOp.AddRefs refs -> buf.put(StoreOp.ADD_REFS).putLong(refs.start()).putLong(refs.length())
                        .putInt(refs.delta());
            }
        }
        buf.putInt(4, Crc32c.of(buf, 8, length - 8));
        return buf.array();
    }

    /**
     * Decodes the entry at {@code buf}'s position, advancing past it.
     *
     * @return the entry, or null if it is torn, foreign or not the one expected (replay ends there)
     */
    static Entry decodeEntry(ByteBuffer buf, long nonce, long expectedSeq) {
        int start = buf.position();
        if (buf.remaining() < ENTRY_HEADER_BYTES) {
            return null;
        }
        int length = buf.getInt(start);
        if (length < ENTRY_HEADER_BYTES || length > buf.remaining()
                || buf.getInt(start + 4) != Crc32c.of(buf, start + 8, length - 8)
                || buf.getLong(start + 8) != nonce || buf.getLong(start + 16) != expectedSeq) {
            return null;
        }
        ByteBuffer body = buf.slice(start + ENTRY_HEADER_BYTES, length - ENTRY_HEADER_BYTES)
                .order(ByteOrder.LITTLE_ENDIAN);
        int count = buf.getInt(start + 24);
        List<StoreOp> ops = new ArrayList<>();
        try {
            for (int i = 0; i < count; i++) {
                ops.add(decodeOp(body));
            }
        } catch (BufferUnderflowException | IllegalArgumentException e) {
            return null;
        }
        if (body.hasRemaining()) {
            return null;
        }
        buf.position(start + length);
        return new Entry(expectedSeq, ops);
    }

    private static StoreOp decodeOp(ByteBuffer body) {
        byte type = body.get();
        return switch (type) {
            case StoreOp.PUT -> {
                BKey key = readKey(body);
                int length = body.getShort() & 0xFFFF;
                if (length > StoreLimits.MAX_VALUE_BYTES) {
                    throw new IllegalArgumentException("value of " + length + " bytes");
                }
                byte[] value = new byte[length];
                body.get(value);
                yield new StoreOp.Put(key, value);
            }
            case StoreOp.DELETE -> new StoreOp.Delete(readKey(body));
            case StoreOp.ADD_REFS -> {
                long start = body.getLong();
                long length = body.getLong();
                int delta = body.getInt();
                if (start < 0 || length < 1 || (delta != 1 && delta != -1)) {
                    throw new IllegalArgumentException("bad reference change");
                }
                yield new StoreOp.AddRefs(start, length, delta);
            }
            default -> throw new IllegalArgumentException("unknown op type " + type);
        };
    }

    private static BKey readKey(ByteBuffer body) {
        return new BKey(body.get() & 0xFF, body.getLong(), body.getLong());
    }

    /** Writes a checksummed batch header at the start of {@code buf}, a batch of {@code blocks} blocks. */
    static void putBatchHeader(ByteBuffer buf, long nonce, long firstSeq, int entryBytes, int blocks) {
        buf.putInt(0, BATCH_MAGIC);
        buf.putLong(8, nonce);
        buf.putLong(16, firstSeq);
        buf.putInt(24, entryBytes);
        buf.putInt(28, blocks);
        buf.putInt(4, Crc32c.of(buf, 8, BATCH_HEADER_BYTES - 8));
    }

    /**
     * @param block the first block of a would-be batch
     * @param maxBlocks blocks from it to the end of the ring
     * @return its header if it is a valid batch of this store starting with {@code expectedSeq}, else null
     */
    static BatchHeader readBatchHeader(ByteBuffer block, long nonce, long expectedSeq, long maxBlocks) {
        if (block.getInt(0) != BATCH_MAGIC || block.getInt(4) != Crc32c.of(block, 8, BATCH_HEADER_BYTES - 8)
                || block.getLong(8) != nonce || block.getLong(16) != expectedSeq) {
            return null;
        }
        int entryBytes = block.getInt(24);
        int blocks = block.getInt(28);
        long capacity = (long) blocks * block.capacity() - BATCH_HEADER_BYTES;
        if (blocks < 1 || blocks > maxBlocks || entryBytes < 0 || entryBytes > capacity) {
            return null;
        }
        return new BatchHeader(expectedSeq, entryBytes, blocks);
    }
}
