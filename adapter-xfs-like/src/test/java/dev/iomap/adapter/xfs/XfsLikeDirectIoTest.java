package dev.iomap.adapter.xfs;

import dev.iomap.testkit.AdapterFixture;
import dev.iomap.testkit.DirectIoContract;
import dev.iomap.testkit.Geometry;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * xfs-like through the kit's direct I/O contract on every standard geometry (the same suite runs as
 * {@code AdapterContractSuite.DirectIo} in it-tests; this runs it with the adapter's own module).
 */
@ParameterizedClass(name = "xfs-like direct {0}")
@MethodSource("dev.iomap.testkit.Geometry#standard")
class XfsLikeDirectIoTest extends DirectIoContract {
    @Parameter
    Geometry geometry;

    @Override
    protected AdapterFixture fixture() {
        return AdapterFixture.of(new XfsLikeAdapter(), geometry).withDeviceBlockSizeOfFilesystem();
    }
}
