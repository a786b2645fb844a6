package dev.iomap.testkit.fsx;

import java.util.Arrays;

/**
 * What a file must contain: a byte array and a size. Bytes at and past the size are always zero, so
 * growing the file exposes zeroes. Not thread-safe.
 */
public final class FileModel {
    private byte[] bytes = new byte[0];
    private long size;

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
     * @param offset where
     * @param data bytes, growing the size if they pass it
     */
    public void write(long offset, byte[] data) {
        ensureCapacity(offset + data.length);
        System.arraycopy(data, 0, bytes, (int) offset, data.length);
        size = Math.max(size, offset + data.length);
    }

    /** @param newSize the new size; bytes past it become zero */
    public void truncate(long newSize) {
        if (newSize < size) {
            Arrays.fill(bytes, (int) newSize, (int) size, (byte) 0);
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
        return copy;
    }
}
