package dev.iomap.it;

import dev.iomap.adapter.xfs.XfsLikeAdapter;
import dev.iomap.testkit.AdapterContractSuite;
import dev.iomap.testkit.AdapterFixture;
import dev.iomap.testkit.Geometry;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * xfs-like extra: the whole kit on a 32 MiB device with the smallest journal (64 blocks) and one
 * allocation group, so the journal wraps and checkpoints many times per test (crash points land in
 * the middle of that) and space runs out sooner. Two geometries: the smallest folios and the largest.
 */
@ParameterizedClass(name = "xfs-like small journal {0}")
@MethodSource("geometries")
class XfsLikeSmallJournalKitTest extends AdapterContractSuite {
    @Parameter
    Geometry geometry;

    static List<Geometry> geometries() {
        return List.of(new Geometry(1024, 4096, 0), Geometry.largeFolios(4096, 65536));
    }

    @Override
    protected AdapterFixture fixture() {
        return AdapterFixture.of(new XfsLikeAdapter(), geometry)
                .withDeviceBlockSizeOfFilesystem()
                .withDeviceBytes(32L << 20)
                .withFormatProperties(Map.of("journalblocks", "64", "agcount", "1"));
    }
}
