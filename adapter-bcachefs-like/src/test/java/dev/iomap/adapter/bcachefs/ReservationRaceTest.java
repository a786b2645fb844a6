package dev.iomap.adapter.bcachefs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.iomap.api.FileType;
import dev.iomap.api.MountOptions;
import dev.iomap.api.NoSpaceException;
import dev.iomap.devices.RamBlockDevice;
import dev.iomap.spi.Iomap;
import dev.iomap.spi.IomapRequest;
import java.io.IOException;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Issue 35 item 4: a write must not find out that it has no space after it copied. Writeback can take
 * the reservation of a dirty block between a write's {@code begin} (which found the block reserved)
 * and the copy into its folio; a {@code putFolio} that reserved again would, on a full device, fail
 * the write with ENOSPC after the bytes were in the file. The kernel's rule: ENOSPC comes from
 * {@code write_begin}, before anything is copied. So the mapping goes stale ({@code valid} is checked
 * with the folio locked, after writeback of that folio is done taking), and the core's new
 * {@code begin} reserves, or fails with ENOSPC, before the copy.
 *
 * <p>Driven through the adapter's data path directly, in the order the race takes.
 */
class ReservationRaceTest {

    @Test
    void aWriteWhoseReservationWritebackTookGoesStaleBeforeItCopiesAndItsNewBeginFailsWithEnospc()
            throws IOException {
        int bs = 4096;
        RamBlockDevice device = new RamBlockDevice(bs, 4L << 20);
        Images.format(device, Map.of());
        BcachefsLikeMount mount = (BcachefsLikeMount) Images.ADAPTER.mount(device, MountOptions.defaults());
        try {
            long ino = mount.create(mount.rootIno(), "f", FileType.REGULAR);
            DataPathInode inode = new DataPathInode(ino, bs, bs);
            DataPath data = (DataPath) mount.iomapOps();
            Set<IomapRequest> write = Set.of(IomapRequest.WRITE);

            // A first write dirties block 0 with its reservation.
            Iomap first = data.begin(inode, 0, bs, write).iomap();
            data.putFolio(inode, 0, bs, first, () -> null);
            data.end(inode, 0, bs, bs, write, first);

            // A second write over it finds the block reserved already; then, before its copy, writeback
            // of the block takes that reservation for its allocation, and other writes take the rest.
            Iomap second = data.begin(inode, 0, bs, write).iomap();
            data.mapBlocks(inode, 0, bs, false);
            mount.volume.reserve.reserve(mount.volume.reserve.available());

            assertThat(data.valid(inode, second))
                    .as("the mapping of a write whose block lost its reservation to writeback is stale").isFalse();
            assertThatThrownBy(() -> data.begin(inode, 0, bs, write)).isInstanceOf(NoSpaceException.class);
        } finally {
            mount.unmount();
        }
    }

    /** Writeback of blocks outside an open write mapping leaves that mapping valid (no needless lookups). */
    @Test
    void writebackElsewhereInTheFileLeavesAWriteMappingValid() throws IOException {
        int bs = 4096;
        RamBlockDevice device = new RamBlockDevice(bs, 4L << 20);
        Images.format(device, Map.of());
        BcachefsLikeMount mount = (BcachefsLikeMount) Images.ADAPTER.mount(device, MountOptions.defaults());
        try {
            long ino = mount.create(mount.rootIno(), "f", FileType.REGULAR);
            DataPathInode inode = new DataPathInode(ino, 8L * bs, bs);
            DataPath data = (DataPath) mount.iomapOps();
            Set<IomapRequest> write = Set.of(IomapRequest.WRITE);
            Iomap first = data.begin(inode, 0, bs, write).iomap();
            data.putFolio(inode, 0, bs, first, () -> null);
            data.end(inode, 0, bs, bs, write, first);

            Iomap later = data.begin(inode, 4L * bs, 2L * bs, write).iomap();
            data.mapBlocks(inode, 0, bs, false);
            assertThat(data.valid(inode, later)).isTrue();
            data.end(inode, 4L * bs, 2L * bs, 0, write, later);
        } finally {
            mount.unmount();
        }
    }
}
