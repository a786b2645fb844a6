package dev.iomap.examples.ext2;

import dev.iomap.adapter.support.BlockRange;
import dev.iomap.adapter.support.skeleton.BlockSpace;
import dev.iomap.adapter.support.skeleton.FreeReason;
import dev.iomap.adapter.support.skeleton.Run;
import dev.iomap.adapter.support.skeleton.SkeletonInode;
import dev.iomap.adapter.support.skeleton.SkeletonMount;
import dev.iomap.api.NoSpaceException;
import dev.iomap.spi.IomapInode;
import java.io.IOException;

/**
 * The bugs {@link Ext2PlantedBugsTest} plants in the ext2-like example, one subclass each: the example's
 * main code has none of them. Each is the mistake issue 18 lists, made the way an adapter author makes it.
 */
enum PlantedBugs {
    /** {@code map} extends a run over any mapped block, contiguous on the device or not. */
    RUN_OVER_NON_CONTIGUOUS_BLOCKS,
    /** fsync and fdatasync commit nothing (the core's data write-back and flush still happen). */
    FSYNC_SKIPS_THE_METADATA_COMMIT,
    /** A truncate unmaps nothing and frees nothing. */
    TRUNCATE_NEVER_FREES,
    /** Every third allocation hands out the block the allocation before it handed out, still in use. */
    ALLOCATOR_HANDS_OUT_A_BLOCK_IN_USE,
    /** A freshly allocated run is reported as mapped data, so the core maps it without NEW. */
    NEW_BLOCK_MAPPED_WITHOUT_NEW,
    /** A short write's unfilled blocks stay mapped: no longer NEW, never written, never freed. */
    SHORT_WRITE_DROPS_ITS_BLOCKS_UNFREED,
    /** The indirect block allocated for a write that then finds no data block is neither kept nor freed. */
    ENOSPC_LEAKS_THE_INDIRECT_BLOCK;

    /** @return a new ext2-like adapter with this bug */
    Ext2Adapter adapter() {
        return switch (this) {
            case RUN_OVER_NON_CONTIGUOUS_BLOCKS -> new Ext2Adapter(new Ext2Model() {
                @Override
                protected boolean continues(long first, long next, long count) {
                    return first == 0 ? next == 0 : next != 0;
                }
            });
            case FSYNC_SKIPS_THE_METADATA_COMMIT -> new Ext2Adapter() {
                @Override
                protected SkeletonMount createMount(SkeletonMount.Parts parts) {
                    return new SkeletonMount(parts) {
                        @Override
                        public void fsync(IomapInode file, boolean dataOnly) {
                            // the bug: no commit
                        }
                    };
                }
        };
            case TRUNCATE_NEVER_FREES -> new Ext2Adapter(new Ext2Model() {
            @Override
            public void free(BlockSpace space, SkeletonInode inode, long from, long to, FreeReason reason)
                    throws IOException {
                if (reason != FreeReason.TRUNCATE) {
                    super.free(space, inode, from, to, reason);
                }
            }
        });
            case ALLOCATOR_HANDS_OUT_A_BLOCK_IN_USE -> new Ext2Adapter(new Ext2Model() {
            private long allocations;
            private long previous = -1;
    
            @Override
            protected BlockRange allocateBlocks(BlockSpace space, long near, long count) throws NoSpaceException {
                if (++allocations % 3 == 0 && previous >= 0) {
                    return new BlockRange(previous, 1);
                }
                BlockRange range = super.allocateBlocks(space, near, count);
                previous = range.start();
                return range;
            }
        });
            case NEW_BLOCK_MAPPED_WITHOUT_NEW -> new Ext2Adapter(new Ext2Model() {
            @Override
            protected Run allocated(long fileBlock, BlockRange data) {
                return Run.mapped(fileBlock, data.length(), data.start());
            }
        });
            case SHORT_WRITE_DROPS_ITS_BLOCKS_UNFREED -> new Ext2Adapter(new Ext2Model() {
            @Override
            public void free(BlockSpace space, SkeletonInode inode, long from, long to, FreeReason reason)
                    throws IOException {
                if (reason != FreeReason.SHORT_WRITE) {
                    super.free(space, inode, from, to, reason);
                }
            }
        });
            case ENOSPC_LEAKS_THE_INDIRECT_BLOCK -> new Ext2Adapter(new Ext2Model() {
            @Override
            protected void releaseUnusedIndirect(BlockSpace space, long indirect) {
                // the bug: forgotten
            }
        });
        };
    }
}
