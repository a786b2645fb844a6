package dev.iomap.adapter.gfs2;

import dev.iomap.testkit.AdapterFixture;
import dev.iomap.testkit.AtomicWriteContract;
import dev.iomap.testkit.Geometry;

/**
 * gfs2-like declares no atomic writes: the kit's contract checks that they are refused
 * ({@code NotSupportedException}, EOPNOTSUPP) and that files report no limits. Data blocks are written
 * in place (no unwritten extents, no copy-on-write fork), so a power cut between the device writes of a
 * multi-block overwrite leaves a mix; journaled data would be atomic per transaction, but it reaches the
 * journal through the page cache, whose writeback may split one write across transactions.
 */
class Gfs2LikeAtomicWriteTest extends AtomicWriteContract {
    @Override
    protected AdapterFixture fixture() {
        return AdapterFixture.of(new Gfs2LikeAdapter(), new Geometry(4096, 4096, 0)).withDeviceBlockSizeOfFilesystem();
    }
}
