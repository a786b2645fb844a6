package dev.iomap.core;

import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;

/**
 * Reading files and devices back, and short-copy sources, for the core's tests. Test data itself
 * (bytes that say where they belong) is the test kit's {@link dev.iomap.testkit.TestData}.
 */
final class TestIo {
    private TestIo() {
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
     * they take: every later copy comes back short. Bytes {@linkplain CopySource#revert given back} are
     * offered again, as by a user buffer whose {@code iov_iter} is reverted.
     */
    static CopySource shortSource(byte[] bytes, int limit) {
        return new CopySource() {
            private int consumed;

            @Override
            public int copyTo(MemorySegment dst, long dstOffset, int length) {
                int n = Math.max(0, Math.min(length, limit - consumed));
                MemorySegment.copy(MemorySegment.ofArray(bytes), consumed, dst, dstOffset, n);
                consumed += n;
                return n;
            }

            @Override
            public void revert(int bytesBack) {
                consumed -= bytesBack;
            }
        };
    }
}
