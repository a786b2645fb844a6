package dev.iomap.adapter.bcachefs;

import dev.iomap.adapter.bcachefs.store.BKey;
import dev.iomap.adapter.support.Crc32c;
import dev.iomap.devices.RamBlockDevice;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;

/**
 * Reads and forges the store's on-device B-tree nodes byte by byte, as the module README documents
 * them, for tests that build damaged images the way an attacker or a stray write would: change bytes,
 * then recompute the node's CRC32C so that only structural checks can tell.
 */
final class NodeBytes {
    private static final int HEADER = 32;
    private static final int KEY = 17;

    /** Where one entry of a node lies. */
    record Entry(long block, int level, int index, BKey key, int keyAt, int valueAt, int valueLength, long child) {
    }

    private NodeBytes() {
    }

    /** @return the root's block and level, from the superblock copy with the higher sequence */
    static long[] root(RamBlockDevice device) throws IOException {
        ByteBuffer best = null;
        for (int copy = 0; copy < 2; copy++) {
            ByteBuffer sb = ByteBuffer.wrap(device.peek((long) copy * device.blockSize(), 128))
                    .order(ByteOrder.LITTLE_ENDIAN);
            if (sb.getLong(0) == BtreeStoreAccess.SUPERBLOCK_MAGIC && (best == null || sb.getLong(16) > best.getLong(16))) {
                best = sb;
            }
        }
        return new long[] {best.getLong(64), best.getInt(72)};
    }

    /** @return every entry of every node reachable from the root, depth first, in key order */
    static List<Entry> entries(RamBlockDevice device) throws IOException {
        long[] root = root(device);
        List<Entry> out = new ArrayList<>();
        walk(device, root[0], (int) root[1], out);
        return out;
    }

    private static void walk(RamBlockDevice device, long block, int level, List<Entry> out) throws IOException {
        ByteBuffer node = block(device, block);
        int count = node.getShort(26) & 0xffff;
        int at = HEADER;
        List<Long> children = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            BKey key = new BKey(node.get(at) & 0xff, node.getLong(at + 1), node.getLong(at + 9));
            if (level == 0) {
                int length = node.getShort(at + KEY) & 0xffff;
                out.add(new Entry(block, 0, i, key, at, at + KEY + 2, length, -1));
                at += KEY + 2 + length;
            } else {
                long child = node.getLong(at + KEY);
                out.add(new Entry(block, level, i, key, at, at + KEY, 8, child));
                children.add(child);
                at += KEY + 8;
            }
        }
        for (long child : children) {
            walk(device, child, level - 1, out);
        }
    }

    /** @return the leaf entry holding {@code key} */
    static Entry leafEntry(RamBlockDevice device, BKey key) throws IOException {
        return entries(device).stream().filter(e -> e.level() == 0 && e.key().equals(key)).findFirst()
                .orElseThrow(() -> new AssertionError("no leaf entry " + key));
    }

    /** @return the block's bytes, little-endian */
    static ByteBuffer block(RamBlockDevice device, long block) throws IOException {
        return ByteBuffer.wrap(device.peek(block * device.blockSize(), device.blockSize())).order(ByteOrder.LITTLE_ENDIAN);
    }

    /** Writes {@code bytes} at {@code offset} of node {@code block}, then recomputes the node's checksum. */
    static void forge(RamBlockDevice device, long block, int offset, byte[] bytes) throws IOException {
        ByteBuffer node = block(device, block);
        node.put(offset, bytes);
        writeSealed(device, block, node);
    }

    /** Writes a node's bytes to {@code block} with the checksum of bytes 8..B-1 recomputed at 4. */
    static void writeSealed(RamBlockDevice device, long block, ByteBuffer node) throws IOException {
        node.putInt(4, Crc32c.of(node, 8, node.capacity() - 8));
        byte[] bytes = new byte[node.capacity()];
        node.get(0, bytes);
        device.poke(block * device.blockSize(), bytes, 0, bytes.length);
    }

    /** @return {@code value} as 8 little-endian bytes */
    static byte[] le64(long value) {
        return ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(value).array();
    }
}
