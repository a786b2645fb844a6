package dev.iomap.cli.bench;

import java.nio.ByteBuffer;
import java.util.SplittableRandom;

/** Write buffers: random bytes, as fio fills its buffers, so no layer can shortcut zeroes. */
final class Filler {

    private Filler() {
    }

    /**
     * @param size bytes
     * @param random where the bytes come from
     * @return a direct buffer of {@code size} random bytes, position 0, limit {@code size}
     */
    static ByteBuffer buffer(int size, SplittableRandom random) {
        ByteBuffer buffer = ByteBuffer.allocateDirect(size);
        while (buffer.remaining() >= Long.BYTES) {
            buffer.putLong(random.nextLong());
        }
        while (buffer.hasRemaining()) {
            buffer.put((byte) random.nextInt());
        }
        return buffer.flip();
    }
}
