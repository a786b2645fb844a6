package dev.iomap.it;

import dev.iomap.adapter.bcachefs.BcachefsLikeAdapter;
import dev.iomap.testkit.AdapterContractSuite;
import dev.iomap.testkit.AdapterFixture;
import dev.iomap.testkit.Geometry;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * bcachefs-like with its default format (crc32c checksums, no compression, copy-on-write) through the
 * whole kit, the model checker and the power-cut tests on every standard geometry. It needs the
 * device's block size to be its own.
 */
@ParameterizedClass(name = "bcachefs-like {0}")
@MethodSource("dev.iomap.it.Geometries#standard")
class BcachefsLikeKitTest extends AdapterContractSuite {
    /** Why the fsync after a failed flush fails too. */
    static final String ABORT = "a failed journal flush shuts the store down (it refuses every later update until a"
            + " remount replays the journal), as bcachefs goes emergency read-only on a journal write error";

    @Parameter
    Geometry geometry;

    @Override
    protected AdapterFixture fixture() {
        return AdapterFixture.of(new BcachefsLikeAdapter(), geometry)
                .withDeviceBlockSizeOfFilesystem()
                .withKnownFailure("aFailedFlushFailsFsync", ABORT);
    }
}
