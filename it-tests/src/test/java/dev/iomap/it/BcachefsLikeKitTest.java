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
 * whole kit, the model checker and the power-cut tests on every standard geometry and a block larger than the page (Geometries#forKitRuns). It needs the
 * device's block size to be its own.
 */
@ParameterizedClass(name = "bcachefs-like {0}")
@MethodSource("dev.iomap.it.Geometries#forKitRuns")
class BcachefsLikeKitTest extends AdapterContractSuite {
    @Parameter
    Geometry geometry;

    @Override
    protected AdapterFixture fixture() {
        return AdapterFixture.of(new BcachefsLikeAdapter(), geometry)
                .withDeviceBlockSizeOfFilesystem();
    }
}
