package dev.iomap.it;

import dev.iomap.testkit.AdapterContractSuite;
import dev.iomap.testkit.AdapterFixture;
import dev.iomap.testkit.Geometry;
import dev.iomap.testkit.fsx.FsxRunner;
import dev.iomap.testkit.fsx.OpLog;
import dev.iomap.testkit.snapfs.SnapAdapter;
import java.io.IOException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.MethodSource;

/** snapfs, the kit's example adapter, through the whole kit on every standard geometry and a block larger than the page (Geometries#forKitRuns). */
@ParameterizedClass(name = "snapfs {0}")
@MethodSource("dev.iomap.it.Geometries#forKitRuns")
class SnapfsKitTest extends AdapterContractSuite {
    @Parameter
    Geometry geometry;

    @Override
    protected AdapterFixture fixture() {
        return AdapterFixture.of(new SnapAdapter(), geometry);
    }

    @Test
    void replaysTheFolioEdgesLog() throws IOException {
        FsxRunner.replay(fixture(), OpLog.resource(getClass(), "/fsx/folio-edges.fsxlog"));
    }
}
