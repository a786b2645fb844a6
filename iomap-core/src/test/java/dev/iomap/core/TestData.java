package dev.iomap.core;

import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;

/** Deterministic bytes and short-copy sources for tests. */
final class TestData {
    private TestData() {
    }

    /** {@code length} bytes whose values depend on the file offset and a tag. */
    static byte[] pattern(long offset, int length, int tag) {
        byte[] bytes = new byte[length];
        for (int i = 0; i < length; i++) {
            bytes[i] = (byte) ((offset + i) * 31 + tag * 7 + 1);
        }
        return bytes;
    }

    static ByteBuffer buffer(byte[] bytes) {
        return ByteBuffer.wrap(bytes);
    }

    static byte[] read(OpenFile file, long pos, int length) throws Exception {
        ByteBuffer dst = ByteBuffer.allocate(length);
        while (dst.hasRemaining()) {
            int n = file.read(pos + dst.position(), dst);
            if (n < 0) {
                break;
            }
        }
        byte[] out = new byte[dst.position()];
        dst.flip().get(out);
        return out;
    }

    static byte[] readDevice(dev.iomap.api.BlockDevice device, long offset, int length) throws Exception {
        ByteBuffer dst = ByteBuffer.allocate(length);
        device.read(offset, dst);
        return dst.array();
    }

    /** A source that copies only the first {@code limit} bytes of {@code bytes}, like a faulting copy. */
    static CopySource shortSource(byte[] bytes, int limit) {
        return (MemorySegment dst, long dstOffset, int length) -> {
            int n = Math.min(length, limit);
            MemorySegment.copy(MemorySegment.ofArray(bytes), 0, dst, dstOffset, n);
            return n;
        };
    }
}
