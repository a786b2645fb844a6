package dev.iomap.it;

import dev.iomap.adapter.gfs2.Gfs2LikeAdapter;
import dev.iomap.api.IomapFileSystems;
import dev.iomap.testkit.AdapterContractSuite;
import dev.iomap.testkit.AdapterFixture;
import dev.iomap.testkit.Geometry;
import java.util.Map;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * gfs2-like with the whole mount in journaled-data mode ({@code -o data=journal}: every regular file's
 * data is logged by putFolio and, for writeback, journaled and committed before its home write) through
 * the whole kit on every standard geometry.
 */
@ParameterizedClass(name = "gfs2-like data=journal {0}")
@MethodSource("dev.iomap.it.Geometries#standard")
class Gfs2LikeJdataKitTest extends AdapterContractSuite {
    /** Why a failed flush is not recovered from without a remount here. */
    static final String ABORT = "with journaled data the first flush after the write is the journal's own (the"
            + " data transaction committed before the home write); a failed journal flush aborts the journal, as"
            + " jbd2 does, and every later commit fails until a remount replays it";

    @Parameter
    Geometry geometry;

    @Override
    protected AdapterFixture fixture() {
        return AdapterFixture.of(new Gfs2LikeAdapter(), geometry)
                .withDeviceBlockSizeOfFilesystem()
                .withMounter((adapter, device, options) -> IomapFileSystems.mount(adapter.name(), device,
                        options.withAdapterOptions(Map.of("data", "journal"))))
                .withKnownFailure("aFailedFlushFailsFsync", ABORT);
    }
}
