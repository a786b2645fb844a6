package dev.iomap.adapter.xfs;

import static dev.iomap.testkit.TestData.pattern;
import static org.assertj.core.api.Assertions.assertThat;

import dev.iomap.spi.Iomap;
import dev.iomap.spi.IomapFlag;
import dev.iomap.spi.IomapMapping;
import dev.iomap.spi.IomapRequest;
import dev.iomap.spi.IomapType;
import dev.iomap.api.PageCacheOptions;
import dev.iomap.core.CachedInode;
import dev.iomap.core.CopySource;
import java.lang.foreign.MemorySegment;
import java.util.EnumSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

class DelallocTest {
    private static final int BLOCK = 4096;
    private static final Set<IomapRequest> WRITE = EnumSet.of(IomapRequest.WRITE);

    /** Copies at most {@code budget} bytes in all, then nothing: a user copy that faults. */
    private static CopySource faultingAfter(int budget) {
        int[] left = {budget};
        return (MemorySegment dst, long offset, int length) -> {
            int n = Math.min(length, left[0]);
            dst.asSlice(offset, n).fill((byte) 0x77);
            left[0] -= n;
            return n;
        };
    }

    @Test
    void aShortWriteOverDelallocLeavesNoReservation() throws Exception {
        try (DirectMount dm = new DirectMount(64L << 20)) {
            CachedInode inode = dm.create("f");
            DirectMount.write(inode, 0, pattern(1, 0, 2 * BLOCK));
            dm.fsync(inode);
            dm.trimPreallocation(inode);
            long freeBefore = dm.mount.statfs().freeBlocks();
            long[] before = dm.counters();
            // Nothing of the 20 blocks asked for is accepted: the copy faults inside the first folio.
            long written = inode.write(2 * BLOCK, faultingAfter(100), 20 * BLOCK);
            assertThat(written).isZero();
            assertThat(inode.size()).isEqualTo(2 * BLOCK);
            DirectMount.assertNoReservation(dm.counters());
            assertThat(dm.counters()).isEqualTo(before);
            assertThat(dm.mount.statfs().freeBlocks()).isEqualTo(freeBefore);
        }
    }

    @Test
    void aShortWriteKeepsTheReservationOfWhatWasWritten() throws Exception {
        // One-page folios, so the copy fails at a folio boundary and the folios before it count.
        PageCacheOptions small = PageCacheOptions.builder().maxFolioOrder(0).build();
        try (DirectMount dm = new DirectMount(64L << 20, small)) {
            CachedInode inode = dm.create("f");
            long freeBefore = dm.mount.statfs().freeBlocks();
            long written = inode.write(0, faultingAfter(3 * BLOCK), 40 * BLOCK);
            assertThat(written).isEqualTo(3 * BLOCK);
            long writtenBlocks = 3;
            assertThat(dm.counters()[1]).as("reserved").isEqualTo(writtenBlocks);
            dm.fsync(inode);
            DirectMount.assertNoReservation(dm.counters());
            assertThat(freeBefore - dm.mount.statfs().freeBlocks()).isEqualTo(writtenBlocks);
        }
    }

    @Test
    void extendingWritesReserveSpeculativePreallocationReleasedAtUnmount() throws Exception {
        try (DirectMount dm = new DirectMount(64L << 20)) {
            CachedInode inode = dm.create("f");
            long[] start = dm.counters();
            DirectMount.write(inode, 0, pattern(1, 0, 70_000));
            // a file under 64 KiB gets no preallocation (likely its only write): ceil(70000 / 4096) blocks
            assertThat(dm.counters()[1] - start[1]).isEqualTo(18);
            DirectMount.write(inode, 70_000, pattern(2, 0, 10_000));
            // blocks 18 and 19 are new, and min(80000, 1 MiB) / 4096 = 19 past them
            assertThat(dm.counters()[1] - start[1]).isEqualTo(18 + 2 + 19);
            DirectMount.write(inode, 80_000, pattern(3, 0, 5000));
            assertThat(dm.counters()[1] - start[1]).as("inside the preallocation").isEqualTo(39);
            dm.fsync(inode);
            // ceil(85000 / 4096) = 21 blocks written; the other 18 stay reserved past EOF
            assertThat(dm.counters()[1] - start[1]).as("prealloc left after writeback").isEqualTo(18);
            dm.unmount();
            dm.mount();
            DirectMount.assertNoReservation(dm.counters());
            CachedInode reopened = dm.open(inode.ino());
            java.nio.ByteBuffer dst = java.nio.ByteBuffer.allocate(85_000);
            reopened.read(0, dst);
            byte[] expected = new byte[85_000];
            System.arraycopy(pattern(1, 0, 70_000), 0, expected, 0, 70_000);
            System.arraycopy(pattern(2, 0, 10_000), 0, expected, 70_000, 10_000);
            System.arraycopy(pattern(3, 0, 5000), 0, expected, 80_000, 5000);
            assertThat(dst.array()).isEqualTo(expected);
        }
    }

    /**
     * {@code xfs_iomap_prealloc_size}: right after a hole only the minimum (64 KiB), so a sparse writer
     * ({@code cp --sparse}) does not fill the holes it leaves with preallocated blocks.
     */
    @Test
    void aWriteAfterAHolePreallocatesOnlyTheMinimum() throws Exception {
        try (DirectMount dm = new DirectMount(64L << 20)) {
            CachedInode inode = dm.create("f");
            long[] start = dm.counters();
            DirectMount.write(inode, 0, pattern(1, 0, 70_000));
            assertThat(dm.counters()[1] - start[1]).isEqualTo(18);
            DirectMount.write(inode, 1L << 20, pattern(2, 0, 1000));
            // one block for the data, 64 KiB / 4096 = 16 past it; the hole between holds nothing. Zeroing the
            // gap past the old EOF wrote back the block holding it, so count blocks allocated or reserved.
            long[] now = dm.counters();
            assertThat(now[1] - start[1] + start[2] - now[2]).isEqualTo(18 + 1 + 16);
        }
    }

    @Test
    void beginReservesDelallocAndMapBlocksMakesItUnwritten() throws Exception {
        try (DirectMount dm = new DirectMount(64L << 20)) {
            CachedInode inode = dm.create("f");
            IomapMapping mapping = dm.mount.iomapOps().begin(inode, 0, 3 * BLOCK, WRITE);
            Iomap iomap = mapping.iomap();
            assertThat(iomap.type()).isEqualTo(IomapType.DELALLOC);
            assertThat(iomap.has(IomapFlag.NEW)).isTrue();
            assertThat(iomap.length()).isEqualTo(3 * BLOCK);
            assertThat(dm.mount.iomapOps().writeOps().valid(inode, iomap)).isTrue();
            Iomap mapped = ((XfsWritebackOps) dm.mount.writebackOps()).mapBlocks(inode, 0, 3 * BLOCK);
            assertThat(mapped.type()).isEqualTo(IomapType.UNWRITTEN);
            assertThat(mapped.length()).isEqualTo(3 * BLOCK);
            assertThat(dm.mount.iomapOps().writeOps().valid(inode, iomap)).as("cookie after writeback mapped").isFalse();
            Iomap read = dm.mount.iomapOps().begin(inode, 0, 3 * BLOCK, Set.of()).iomap();
            assertThat(read.type()).isEqualTo(IomapType.UNWRITTEN);
            assertThat(read.address()).isEqualTo(mapped.address());
            dm.mount.iomapOps().end(inode, 0, 3 * BLOCK, 0, WRITE, iomap);
            // The unused reservation past the mapping stays until a truncate or unmount drops it.
            dm.mount.setSize(inode, 0);
            DirectMount.assertNoReservation(dm.counters());
        }
    }

    @Test
    void anOverwriteMapsTheWholeExtentAndTheSameMappingServesTheNextOneUntilTheForkChanges() throws Exception {
        try (DirectMount dm = new DirectMount(64L << 20)) {
            CachedInode inode = dm.create("f");
            DirectMount.write(inode, 0, pattern(5, 0, 8 * BLOCK));
            dm.fsync(inode);

            IomapMapping first = dm.mount.iomapOps().begin(inode, 3 * BLOCK + 100, 1000, WRITE);
            dm.mount.iomapOps().end(inode, 3 * BLOCK + 100, 1000, 1000, WRITE, first.iomap());
            IomapMapping second = dm.mount.iomapOps().begin(inode, 6 * BLOCK, BLOCK, WRITE);
            dm.mount.iomapOps().end(inode, 6 * BLOCK, BLOCK, BLOCK, WRITE, second.iomap());

            assertThat(first.iomap().type()).isIn(IomapType.MAPPED, IomapType.UNWRITTEN);
            assertThat(first.iomap().offset()).as("the whole extent, as xfs_bmbt_to_iomap maps it").isZero();
            assertThat(first.iomap().length()).isEqualTo(8 * BLOCK);
            assertThat(second).as("no new mapping while the validity cookie stands").isSameAs(first);
            assertThat(dm.mount.iomapOps().writeOps().valid(inode, first.iomap())).isTrue();

            dm.mount.setSize(inode, 4 * BLOCK);
            IomapMapping after = dm.mount.iomapOps().begin(inode, BLOCK, BLOCK, WRITE);
            dm.mount.iomapOps().end(inode, BLOCK, BLOCK, BLOCK, WRITE, after.iomap());

            assertThat(after).as("the fork changed: a new mapping").isNotSameAs(first);
            assertThat(after.iomap().offset()).isZero();
            assertThat(after.iomap().length()).isEqualTo(4 * BLOCK);
            assertThat(dm.mount.iomapOps().writeOps().valid(inode, first.iomap())).isFalse();
        }
    }

    @Test
    void aWriteToASharedBlockGetsTheCowForkWithTheDataForkAsSource() throws Exception {
        try (DirectMount dm = new DirectMount(64L << 20)) {
            CachedInode src = dm.create("src");
            DirectMount.write(src, 0, pattern(4, 0, 4 * BLOCK));
            dm.fsync(src);
            CachedInode dst = dm.create("dst");
            dst.truncate(4 * BLOCK, () -> dm.mount.setSize(dst, 4 * BLOCK));
            dm.mount.cloneRange(src, 0, dst, 0, 4 * BLOCK);
            long reserved = dm.counters()[1];
            IomapMapping mapping = dm.mount.iomapOps().begin(dst, BLOCK, 100, WRITE);
            assertThat(mapping.iomap().type()).isEqualTo(IomapType.DELALLOC);
            assertThat(mapping.iomap().has(IomapFlag.SHARED)).isTrue();
            assertThat(mapping.srcmap().type()).isEqualTo(IomapType.MAPPED);
            Iomap srcMapping = dm.mount.iomapOps().begin(src, BLOCK, 100, Set.of()).iomap();
            assertThat(mapping.srcmap().address()).isEqualTo(srcMapping.address());
            Iomap cow = ((XfsWritebackOps) dm.mount.writebackOps()).mapBlocks(dst, BLOCK, BLOCK);
            assertThat(cow.has(IomapFlag.SHARED)).isTrue();
            assertThat(cow.address()).isNotEqualTo(srcMapping.address());
            dm.mount.iomapOps().end(dst, BLOCK, BLOCK, BLOCK, WRITE, mapping.iomap());
            assertThat(dm.counters()[1]).as("reserved: the source's preallocation only").isEqualTo(reserved);
        }
    }
    /** {@code xfs_release}: the preallocation past EOF goes with the last close, so a closed file holds its data only. */
    @Test
    void theLastCloseDropsThePreallocationPastEof() throws Exception {
        try (XfsFixture fx = XfsFixture.create()) {
            dev.iomap.api.IomapFile first = fx.fs.create("/f");
            dev.iomap.api.IomapFile second = fx.fs.open("/f");
            first.write(0, java.nio.ByteBuffer.wrap(pattern(1, 0, 70_000)));
            first.write(70_000, java.nio.ByteBuffer.wrap(pattern(2, 0, 10_000)));
            // 20 blocks of data and min(80000, 1 MiB) / 4096 = 19 past them
            assertThat(fx.fs.stat("/f").allocatedBytes()).isEqualTo(39 * BLOCK);
            first.close();
            assertThat(fx.fs.stat("/f").allocatedBytes()).as("another file is still open").isEqualTo(39 * BLOCK);
            second.close();
            assertThat(fx.fs.stat("/f").allocatedBytes()).isEqualTo(20 * BLOCK);
            fx.fs.sync();
            assertThat(fx.fs.stat("/f").allocatedBytes()).isEqualTo(20 * BLOCK);
        }
    }
}
