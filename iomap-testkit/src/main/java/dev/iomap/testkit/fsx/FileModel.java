package dev.iomap.testkit.fsx;

import java.util.Arrays;
import java.util.BitSet;

/**
 * What a file must contain: a byte array and a size. Bytes at and past the size are always zero, so
 * growing the file exposes zeroes. Not thread-safe.
 *
 * <p>It also knows which bytes certainly hold data, for seek data and seek hole: every byte written
 * (by a write, a mapped store or a clone of written bytes) and not since cut by truncate, punched
 * or zeroed. A filesystem block holding such a byte is data for any filesystem; every other block may
 * be data or a hole (a filesystem may allocate more than was written, and punched or zeroed edges
 * of blocks keep their blocks), so this is a lower bound of the data, exact only where it says data.
 */
public final class FileModel {
    private byte[] bytes = new byte[0];
    private long size;
    private BitSet written = new BitSet();

    /** @return the size */
    public long size() {
        return size;
    }

    private void ensureCapacity(long length) {
        if (length > bytes.length) {
            bytes = Arrays.copyOf(bytes, (int) Math.max(length, Math.min(Integer.MAX_VALUE - 8, bytes.length * 2L)));
        }
    }

    /**
     * Starts the model from a file's contents, none of them known to be data (an existing file may
     * have holes anywhere).
     *
     * @param contents the whole file
     */
    public void load(byte[] contents) {
        bytes = contents.clone();
        size = contents.length;
        written = new BitSet();
    }

    /**
     * @param offset where
     * @param data bytes, growing the size if they pass it; they are data from now on
     */
    public void write(long offset, byte[] data) {
        ensureCapacity(offset + data.length);
        System.arraycopy(data, 0, bytes, (int) offset, data.length);
        size = Math.max(size, offset + data.length);
        written.set((int) offset, (int) offset + data.length);
    }

    /**
     * Reflinks {@code [source, source + length)} to {@code target}, growing the size if needed: the
     * target gets the source's bytes, and is data exactly where the source was.
     *
     * @param source first source byte
     * @param target first target byte
     * @param length bytes
     */
    public void clone(long source, long target, int length) {
        byte[] data = bytes(source, length);
        BitSet sourceData = written.get((int) source, (int) source + length);
        write(target, data);
        written.clear((int) target, (int) target + length);
        for (int i = sourceData.nextSetBit(0); i >= 0; i = sourceData.nextSetBit(i + 1)) {
            written.set((int) target + i);
        }
    }

    /** @param newSize the new size; bytes past it become zero, and stop being data */
    public void truncate(long newSize) {
        if (newSize < size) {
            Arrays.fill(bytes, (int) newSize, (int) size, (byte) 0);
            written.clear((int) newSize, (int) size);
        } else {
            ensureCapacity(newSize);
        }
        size = newSize;
    }

    /**
     * Zeroes {@code [offset, offset + length)} inside the size; the size does not change.
     *
     * @param offset first byte
     * @param length bytes
     */
    public void zero(long offset, long length) {
        long end = Math.min(size, offset + length);
        if (offset < end) {
            Arrays.fill(bytes, (int) offset, (int) end, (byte) 0);
        }
    }

    /**
     * Forgets that {@code [offset, offset + length)} holds data (punched or zeroed: the filesystem
     * may have freed or unwritten its blocks). The bytes do not change.
     *
     * @param offset first byte
     * @param length bytes
     */
    public void forgetData(long offset, long length) {
        long end = Math.min(size, offset + length);
        if (offset < end) {
            written.clear((int) offset, (int) end);
        }
    }

    /**
     * @param pos an offset below the size
     * @param blockSize the filesystem block size
     * @return whether the block holding {@code pos} certainly holds data
     */
    public boolean isDataBlock(long pos, int blockSize) {
        long start = pos / blockSize * blockSize;
        int next = written.nextSetBit((int) start);
        return next >= 0 && next < Math.min(start + blockSize, size);
    }

    /**
     * @param pos an offset below the size
     * @param blockSize the filesystem block size
     * @return {@code pos} if its block certainly holds data, else the start of the first block after
     *     it that does, or -1 if none does below the size
     */
    public long nextData(long pos, int blockSize) {
        if (isDataBlock(pos, blockSize)) {
            return pos;
        }
        int next = written.nextSetBit((int) pos);
        return next < 0 || next >= size ? -1 : next / blockSize * (long) blockSize;
    }

    /**
     * @param offset first byte
     * @param length bytes wanted
     * @return the bytes, zero past the size (no EOF clamping)
     */
    public byte[] bytes(long offset, int length) {
        byte[] out = new byte[length];
        if (offset < bytes.length) {
            System.arraycopy(bytes, (int) offset, out, 0, (int) Math.min(length, bytes.length - offset));
        }
        return out;
    }

    /**
     * @param offset first byte
     * @param length bytes wanted
     * @return what a read returns: up to EOF
     */
    public byte[] read(long offset, int length) {
        if (offset >= size) {
            return new byte[0];
        }
        return bytes(offset, (int) Math.min(length, size - offset));
    }

    /** @return a deep copy */
    public FileModel copy() {
        FileModel copy = new FileModel();
        copy.bytes = bytes.clone();
        copy.size = size;
        copy.written = (BitSet) written.clone();
        return copy;
    }
}
