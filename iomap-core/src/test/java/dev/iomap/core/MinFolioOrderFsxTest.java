package dev.iomap.core;

import static org.assertj.core.api.Assertions.assertThat;

import dev.iomap.testkit.AdapterFixture;
import dev.iomap.testkit.Geometry;
import dev.iomap.testkit.KitSettings;
import dev.iomap.testkit.fsx.FsxRunner;
import dev.iomap.testkit.snapfs.SnapAdapter;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The kit's model checker (fsx: writes, reads, truncates, punches, mapped stores, fsync, cache drops
 * and remounts against an in-memory model) over the core on geometries whose block is larger than the
 * page, through snapfs: every folio the core creates there has the mapping's minimum order. 2,000
 * operations each, a full comparison every 50.
 */
class MinFolioOrderFsxTest {

    static List<Geometry> largeBlocks() {
        return List.of(Geometry.largeBlock(), Geometry.largeFolios(16384, 4096), new Geometry(65536, 4096, 0));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("largeBlocks")
    void theModelCheckerAgreesOnABlockLargerThanThePage(Geometry geometry) throws IOException {
        KitSettings settings = new KitSettings(2000, 39, 50, Path.of("target", "fsx-logs"), 5, 60);

        FsxRunner.Result result = FsxRunner.run(AdapterFixture.of(new SnapAdapter(), geometry).withSettings(settings));

        assertThat(result.ops()).isEqualTo(2000);
    }
}
