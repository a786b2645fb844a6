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

    static byte[] readDevice(dev.iomap.device.BlockDevice device, long offset, int length) throws Exception {
        ByteBuffer dst = ByteBuffer.allocate(length);
        device.read(offset, dst);
        return dst.array();
    }

    /**
     * A source over {@code bytes} that faults after {@code limit} bytes in total, however many copies
     * they take: every later copy comes back short.
     */
    static CopySource shortSource(byte[] bytes, int limit) {
        int[] consumed = {0};
        return (MemorySegment dst, long dstOffset, int length) -> {
            int n = Math.max(0, Math.min(length, limit - consumed[0]));
            MemorySegment.copy(MemorySegment.ofArray(bytes), consumed[0], dst, dstOffset, n);
            consumed[0] += n;
            return n;
        };
    }
}
