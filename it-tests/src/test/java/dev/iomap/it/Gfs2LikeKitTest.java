package dev.iomap.it;

import dev.iomap.adapter.gfs2.Gfs2LikeAdapter;
import dev.iomap.testkit.AdapterContractSuite;
import dev.iomap.testkit.AdapterFixture;
import dev.iomap.testkit.Geometry;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * gfs2-like in its default data mode (ordered) through the whole kit on every standard geometry and a block larger than the page (Geometries#forKitRuns). It
 * needs the device's block size to be its own.
 */
@ParameterizedClass(name = "gfs2-like {0}")
@MethodSource("dev.iomap.it.Geometries#forKitRuns")
class Gfs2LikeKitTest extends AdapterContractSuite {
    @Parameter
    Geometry geometry;

    @Override
    protected AdapterFixture fixture() {
        return AdapterFixture.of(new Gfs2LikeAdapter(), geometry)
                .withDeviceBlockSizeOfFilesystem();
    }
}
