package dev.iomap.adapter.gfs2;

import static org.assertj.core.api.Assertions.assertThat;

import dev.iomap.adapter.support.lock.InProcessLockManager;
import dev.iomap.adapter.support.lock.InProcessLockSpace;
import dev.iomap.api.FormatOptions;
import dev.iomap.api.IomapFile;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.MountOptions;
import dev.iomap.api.PageCacheOptions;
import dev.iomap.core.vfs.CoreRuntime;
import dev.iomap.devices.RamBlockDevice;
import dev.iomap.spi.lock.DemoteCallbacks;
import dev.iomap.spi.lock.LockHandle;
import dev.iomap.spi.lock.LockMode;
import dev.iomap.spi.lock.LockName;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/**
 * Inode glock demotions: another node (a second lock manager over the mount's lock space) takes the
 * inode's glock in EX; the mount's holder runs sync then invalidate before the mode changes.
 */
class GlockTest {
    private static final int BLOCK = 4096;
    private static final DemoteCallbacks NOTHING = new DemoteCallbacks() {
        @Override
        public void sync(LockName name, LockMode from, LockMode to) {
        }

        @Override
        public long invalidate(LockName name, LockMode from, LockMode to) {
            return 0;
        }
    };

    private final InProcessLockSpace space = new InProcessLockSpace();
    private final Gfs2LikeAdapter adapter = new Gfs2LikeAdapter(space);
    private final RamBlockDevice device = new RamBlockDevice(BLOCK, 16L << 20);

    private IomapFileSystem mount() throws IOException {
        adapter.format(device, FormatOptions.blockSize(BLOCK));
        return CoreRuntime.mount(adapter, device, new MountOptions(PageCacheOptions.defaults(), false));
    }

    private static byte[] pattern(int length) {
        byte[] bytes = new byte[length];
        for (int i = 0; i < length; i++) {
            bytes[i] = (byte) (i * 13 + 5);
        }
        return bytes;
    }

    private static byte[] read(IomapFile file, int length) throws IOException {
        ByteBuffer buffer = ByteBuffer.allocate(length);
        file.read(0, buffer);
        return buffer.array();
    }

    /** Takes the inode's glock in EX from another node and gives it back. */
    private void demoteFromAnotherNode(long ino) throws IOException {
        try (InProcessLockManager other = new InProcessLockManager(space, "other node", false)) {
            LockHandle handle = other.acquire(LockName.inode(ino), LockMode.EX, NOTHING, Duration.ofSeconds(30));
            handle.unlock();
            handle.release();
        }
    }

    @Test
    void aGlockDemotionBetweenTwoReadsMakesTheSecondReadComeFromTheDevice() throws IOException {
        byte[] data = pattern(3 * BLOCK);
        try (IomapFileSystem fs = mount(); IomapFile file = fs.create("/a")) {
            file.write(0, ByteBuffer.wrap(data));
            file.fsync();
            assertThat(read(file, data.length)).isEqualTo(data);
            long readsBefore = fs.stats().device().bytesRead();
            assertThat(read(file, data.length)).isEqualTo(data);
            assertThat(fs.stats().device().bytesRead()).as("a cached read reads nothing").isEqualTo(readsBefore);

            demoteFromAnotherNode(file.ino());

            assertThat(fs.stats().adapterCounters()).containsEntry("glock.demotions", 1L);
            assertThat(fs.stats().adapterCounters().get("glock.pagesInvalidated")).isGreaterThanOrEqualTo(1L);
            assertThat(read(file, data.length)).isEqualTo(data);
            assertThat(fs.stats().device().bytesRead() - readsBefore).as("bytes read after the demotion")
                    .isGreaterThanOrEqualTo(data.length);
        }
    }

    @Test
    void aDemotionOfADirtyInodeWritesItsDataBeforeTheLockIsReleased() throws IOException {
        byte[] old = new byte[3 * BLOCK + 17];
        byte[] data = pattern(old.length);
        try (IomapFileSystem fs = mount(); IomapFile file = fs.create("/a")) {
            file.write(0, ByteBuffer.wrap(old));
            file.fsync();
            // An overwrite of allocated blocks: no new block, so no journal commit writes it back; only the
            // demotion's sync does.
            file.write(0, ByteBuffer.wrap(data));
            assertThat(contents(device.copy())).as("before the demotion").isEqualTo(old);

            demoteFromAnotherNode(file.ino());

            assertThat(contents(device.copy())).as("what another node reads once it holds the lock")
                    .isEqualTo(data);
            assertThat(fs.stats().adapterCounters()).containsEntry("glock.demotions", 1L);
        }
    }

    /** @return what a fresh mount of a copy of the image reads from /a (replaying the journal), or null if empty */
    private byte[] contents(RamBlockDevice image) throws IOException {
        try (IomapFileSystem other = CoreRuntime.mount(new Gfs2LikeAdapter(), image, MountOptions.defaults());
                IomapFile file = other.open("/a")) {
            if (file.size() == 0) {
                return null;
            }
            byte[] bytes = read(file, (int) file.size());
            return Arrays.copyOf(bytes, bytes.length);
        }
    }
}
