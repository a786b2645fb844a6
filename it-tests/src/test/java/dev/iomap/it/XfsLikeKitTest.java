package dev.iomap.it;

import dev.iomap.adapter.xfs.XfsLikeAdapter;
import dev.iomap.testkit.AdapterContractSuite;
import dev.iomap.testkit.AdapterFixture;
import dev.iomap.testkit.Geometry;
import dev.iomap.testkit.fsx.FsxRunner;
import dev.iomap.testkit.fsx.OpLog;
import java.io.IOException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * xfs-like through the whole kit on every standard geometry and a block larger than the page (Geometries#forKitRuns). It needs the device's block size to be
 * its own, so its devices have blocks of the geometry's block size.
 */
@ParameterizedClass(name = "xfs-like {0}")
@MethodSource("dev.iomap.it.Geometries#forKitRuns")
class XfsLikeKitTest extends AdapterContractSuite {
    @Parameter
    Geometry geometry;

    @Override
    protected AdapterFixture fixture() {
        return AdapterFixture.of(new XfsLikeAdapter(), geometry)
                .withDeviceBlockSizeOfFilesystem();
    }

    @Test
    void replaysTheFolioEdgesLog() throws IOException {
        FsxRunner.replay(fixture(), OpLog.resource(getClass(), "/fsx/folio-edges.fsxlog"));
    }
}
