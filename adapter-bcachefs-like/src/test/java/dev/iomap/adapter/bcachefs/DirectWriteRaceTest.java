package dev.iomap.adapter.bcachefs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.iomap.api.FileType;
import dev.iomap.api.MountOptions;
import dev.iomap.devices.RamBlockDevice;
import dev.iomap.spi.Iomap;
import dev.iomap.spi.IomapRequest;
import dev.iomap.spi.IoendCompletion;
import dev.iomap.spi.WritebackIoend;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * Two direct writes of one range in flight at once (aio-stress -O in xfstests generic/113 has many): each
 * gets blocks of its own at {@code begin}, is checksummed and recorded at {@code writebackSubmit}, and its
 * key is committed at {@code ioendCompleted}. The records were kept by file offset alone, so the second
 * write's replaced the first's: the first completion took the second's record, and the second completion
 * found none and failed EIO ("ioend at ... completed without being submitted"). Driven through the
 * adapter's data path directly, in the order the race takes.
 */
class DirectWriteRaceTest {
    private static final int BS = 4096;
    private static final Set<IomapRequest> DIRECT = Set.of(IomapRequest.WRITE, IomapRequest.DIRECT);

    @Test
    void twoDirectWritesOfOneRangeInFlightAtOnceBothCompleteAndTheLastCompletedIsTheFiles() throws IOException {
        RamBlockDevice device = new RamBlockDevice(BS, 4L << 20);
        Images.format(device, Map.of());
        BcachefsLikeMount mount = (BcachefsLikeMount) Images.ADAPTER.mount(device, MountOptions.defaults());
        long ino;
        try {
            ino = mount.create(mount.rootIno(), "f", FileType.REGULAR);
            DataPathInode inode = new DataPathInode(ino, 4L * BS, BS);
            DataPath data = (DataPath) mount.iomapOps();

            Iomap first = data.begin(inode, 0, 4L * BS, DIRECT).iomap();
            Iomap second = data.begin(inode, 0, 4L * BS, DIRECT).iomap();
            assertThat(second.offset()).isEqualTo(first.offset());
            assertThat(second.address()).as("blocks of its own").isNotEqualTo(first.address());

            CompletableFuture<Void> one = data.writebackSubmit(inode, new Ioend(first, fill(first, 1)));
            CompletableFuture<Void> two = data.writebackSubmit(inode, new Ioend(second, fill(second, 2)));
            one.join();
            two.join();
            data.ioendCompleted(inode, completion(first));
            data.ioendCompleted(inode, completion(second));
            data.end(inode, 0, 4L * BS, first.length(), DIRECT, first);
            data.end(inode, 0, 4L * BS, second.length(), DIRECT, second);

            BcachefsVolume.Extent extent = mount.volume.extentAtOrAfter(ino, 0).orElseThrow();
            assertThat(extent.value().devStart()).as("the file maps the write completed last")
                    .isEqualTo(second.address() / BS);
        } finally {
            mount.unmount();
        }
        assertThat(Images.ADAPTER.fsck(device, true).problems()).as("the first write's blocks freed, none lost")
                .isEmpty();
    }

    private static ByteBuffer fill(Iomap iomap, int value) {
        byte[] bytes = new byte[(int) iomap.length()];
        Arrays.fill(bytes, (byte) value);
        return ByteBuffer.wrap(bytes);
    }

    private static IoendCompletion completion(Iomap iomap) {
        return new IoendCompletion(iomap.offset(), iomap.length(), iomap.type(), iomap.flags(), iomap.address(), null);
    }

    /** A direct write's run as the core hands it to {@code writebackSubmit}: the adapter writes it itself. */
    private record Ioend(Iomap range, ByteBuffer bytes) implements WritebackIoend {
        @Override
        public List<ByteBuffer> data() {
            return List.of(bytes.duplicate());
        }

        @Override
        public CompletableFuture<Void> submit() {
            throw new UnsupportedOperationException("bcachefs-like writes its ioends itself");
        }
    }
}
