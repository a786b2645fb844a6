package dev.iomap.adapter.support.skeleton;

import dev.iomap.api.CorruptFileSystemException;
import dev.iomap.api.FileType;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Map;
import java.util.TreeMap;

/**
 * The inode table's records: type (0 free, 1 regular, 2 directory), link count, size, modification time,
 * then the model's slots. Encodes and decodes whole inode-table blocks. Not thread-safe.
 */
final class InodeTable {
    private InodeTable() {
    }

    /** Decodes the in-use inodes of inode-table block {@code index} into {@code inodes}. */
    static void decodeBlock(Layout layout, long index, ByteBuffer block, Map<Long, SkeletonInode> inodes)
            throws CorruptFileSystemException {
        int recordBytes = Layout.recordBytes(layout.slots());
        for (int r = 0; r < layout.recordsPerBlock(); r++) {
            long ino = index * layout.recordsPerBlock() + r + 1;
            ByteBuffer rec = block.duplicate().order(ByteOrder.LITTLE_ENDIAN).position(r * recordBytes);
            int typeCode = rec.get() & 0xff;
            rec.position(rec.position() + 3);
            if (typeCode == 0) {
                continue;
            }
            if (typeCode > 2) {
                throw new CorruptFileSystemException("inode " + ino + " has type code " + typeCode + " (inode block "
                        + (layout.inodeStart() + index) + ")");
            }
            int links = rec.getInt();
            long size = rec.getLong();
            long mtime = rec.getLong();
            rec.getLong();
            long[] slots = new long[layout.slots()];
            for (int s = 0; s < slots.length; s++) {
                slots[s] = rec.getLong();
            }
            SkeletonInode inode = new SkeletonInode(ino, typeCode == 1 ? FileType.REGULAR : FileType.DIRECTORY,
                    slots.length);
            inode.load(size, links, mtime, slots);
            inodes.put(ino, inode);
        }
    }

    /** Encodes inode-table block {@code index} from the in-use inodes (the others as free records). */
    static ByteBuffer encodeBlock(Layout layout, long index, TreeMap<Long, SkeletonInode> inodes) {
        ByteBuffer block = ByteBuffer.allocate(layout.blockSize()).order(ByteOrder.LITTLE_ENDIAN);
        int recordBytes = Layout.recordBytes(layout.slots());
        long first = index * layout.recordsPerBlock() + 1;
        for (SkeletonInode inode : inodes.subMap(first, first + layout.recordsPerBlock()).values()) {
            block.position((int) (inode.ino() - first) * recordBytes);
            block.put((byte) (inode.type() == FileType.REGULAR ? 1 : 2)).put(new byte[3]);
            block.putInt(inode.links()).putLong(inode.size()).putLong(inode.mtimeMillis()).putLong(0);
            for (int s = 0; s < inode.slotCount(); s++) {
                block.putLong(inode.slot(s));
            }
        }
        return block.clear();
    }
}
