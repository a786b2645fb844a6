package dev.iomap.core.dio;

import dev.iomap.core.DirectIoAccess;
import dev.iomap.core.IomapIter;
import dev.iomap.spi.Iomap;
import dev.iomap.spi.IomapRequest;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.EnumSet;
import java.util.Set;

/**
 * A direct read, under the inode lock held shared: the read half of the kernel's
 * {@code iomap_dio_rw} with {@code iomap_dio_bio_iter}, {@code iomap_dio_hole_iter} and
 * {@code iomap_dio_inline_iter}.
 *
 * <p>The range is cut at EOF rounded up to a block; dirty cache over it is written back first
 * ({@code kiocb_write_and_wait}). Each mapping is then served: {@code MAPPED} through the adapter's
 * read hook straight into the caller's buffer, {@code HOLE} and {@code UNWRITTEN} as zeroes, and so
 * is {@code DELALLOC} (the kernel WARNs: after the writeback a reservation left over the range holds
 * no data),
 * {@code INLINE} copied from the inline buffer. The bytes past EOF in the last block are zeroed and
 * not counted (the kernel's {@code iomap_dio_complete} trims the count at {@code i_size}).
 */
final class DirectRead {
    private static final Set<IomapRequest> DIRECT_READ = EnumSet.of(IomapRequest.DIRECT);

    private DirectRead() {
    }

    /**
     * Reads {@code dst.remaining()} bytes at {@code pos}, or up to EOF.
     *
     * @param access the file
     * @param pos file offset, block aligned (checked by the caller)
     * @param dst where the bytes go, its remaining length block aligned; its position advances by the
     *     bytes read
     * @return bytes read, or -1 at or past EOF
     * @throws IOException from the adapter or the device; {@code dst}'s position is then unchanged
     */
    static int read(DirectIoAccess access, long pos, ByteBuffer dst) throws IOException {
        access.lockShared();
        try {
            long size = access.inode().size();
            if (pos >= size) {
                return -1;
            }
            int block = access.inode().blockSize();
            long blockEof = (size + block - 1) & -(long) block;
            long end = Math.min(pos + dst.remaining(), blockEof);
            access.writeAndWaitBefore(pos, end);
            int start = dst.position();
            iterate(access, pos, end, dst.slice(start, (int) (end - pos)));
            int count = (int) (Math.min(end, size) - pos);
            // The tail of the last block past EOF holds whatever the device had: the caller never sees it.
            dst.put(start + count, new byte[(int) (end - pos) - count]);
            dst.position(start + count);
            access.countRead(count);
            return count;
        } finally {
            access.unlockShared();
        }
    }

    private static void iterate(DirectIoAccess access, long pos, long end, ByteBuffer out) throws IOException {
        IomapIter iter = new IomapIter(access.inode(), access.ops(), pos, end - pos, DIRECT_READ);
        try {
            while (iter.next()) {
                long at = iter.pos();
                int length = (int) iter.length();
                ByteBuffer part = out.slice((int) (at - pos), length);
                fill(access, iter.iomap(), at, part);
                iter.advance(length);
            }
        } catch (IOException | RuntimeException e) {
            try {
                iter.abort();
            } catch (IOException | RuntimeException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw e;
        }
    }

    private static void fill(DirectIoAccess access, Iomap iomap, long at, ByteBuffer part) throws IOException {
        switch (iomap.type()) {
            case HOLE, UNWRITTEN, DELALLOC -> part.put(0, new byte[part.remaining()]);
            case MAPPED -> {
                if (iomap.has(dev.iomap.spi.IomapFlag.NEW)) {
                    part.put(0, new byte[part.remaining()]);
                } else {
                    access.ops().readOps().readFolioRange(access.inode(), iomap, at, part.duplicate(),
                            access.device());
                }
            }
            case INLINE -> {
                long size = access.inode().size();
                int valid = (int) Math.max(0, Math.min(part.remaining(), size - at));
                part.put(0, iomap.inlineData(), (int) (at - iomap.offset()), valid);
                part.put(valid, new byte[part.remaining() - valid]);
            }
        }
    }
}
