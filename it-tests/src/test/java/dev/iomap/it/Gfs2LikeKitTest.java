package dev.iomap.it;

import dev.iomap.adapter.gfs2.Gfs2LikeAdapter;
import dev.iomap.testkit.AdapterContractSuite;
import dev.iomap.testkit.AdapterFixture;
import dev.iomap.testkit.Geometry;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * gfs2-like in its default data mode (ordered) through the whole kit on every standard geometry. It
 * needs the device's block size to be its own.
 */
@ParameterizedClass(name = "gfs2-like {0}")
@MethodSource("dev.iomap.it.Geometries#standard")
class Gfs2LikeKitTest extends AdapterContractSuite {
    /** Why the kit's unwritten-extent expectations do not hold here. */
    static final String NO_UNWRITTEN = "gfs2 has no unwritten extents: fallocate allocates and zeroes, so"
            + " preallocated blocks are data for seek (the kit assumes FALLOCATE means unwritten extents)";
    /** Why fsync of the second file finds its data already written. */
    static final String ORDERED_COMMIT = "ordered mode: the journal commit of the other file's fsync writes back"
            + " every inode with new blocks in the transaction (gfs2_ordered_write), so this file's fsync has"
            + " no data left to write and the test finds no data blocks to fail";

    /** Why a data write fault during one file's fsync reaches another file's data. */
    static final String ORDERED_FAULT = "ordered mode: the victim's fsync commits the running transaction, which"
            + " writes back /pending's new blocks too (gfs2_ordered_write); the injected fault fails those writes as"
            + " well, so /pending's fsync reports the error and its data is lost like the victim's";

    @Parameter
    Geometry geometry;

    @Override
    protected AdapterFixture fixture() {
        return AdapterFixture.of(new Gfs2LikeAdapter(), geometry)
                .withDeviceBlockSizeOfFilesystem()
                .withKnownFailure("preallocatedSpaceIsAHoleUntilWritten", NO_UNWRITTEN)
                .withKnownFailure("aPartlyWrittenPreallocationIsDataOnlyInTheBlocksWritten", NO_UNWRITTEN)
                .withKnownFailure("aFailedReadSurfacesAtTheRead", ORDERED_COMMIT)
                .withKnownFailure("aFailedDataWriteSurfacesAtFsyncOnceAndLosesNothingElse", ORDERED_FAULT);
    }
}
