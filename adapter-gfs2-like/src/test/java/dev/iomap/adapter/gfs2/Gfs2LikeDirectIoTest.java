package dev.iomap.adapter.gfs2;

import dev.iomap.api.IomapFileSystems;
import dev.iomap.testkit.AdapterFixture;
import dev.iomap.testkit.DirectIoContract;
import dev.iomap.testkit.Geometry;
import java.util.Map;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * gfs2-like through the kit's direct I/O contract on every standard geometry, in ordered and in
 * journaled-data mode (where every direct write falls back to the page cache, as GFS2's does).
 */
@ParameterizedClass(name = "gfs2-like direct {0}")
@MethodSource("dev.iomap.testkit.Geometry#standard")
class Gfs2LikeDirectIoTest extends DirectIoContract {
    @Parameter
    Geometry geometry;

    @Override
    protected AdapterFixture fixture() {
        return AdapterFixture.of(new Gfs2LikeAdapter(), geometry).withDeviceBlockSizeOfFilesystem();
    }

    /** The same with {@code -o data=journal}. */
    @Nested
    class Jdata extends DirectIoContract {
        @Override
        protected AdapterFixture fixture() {
            return Gfs2LikeDirectIoTest.this.fixture()
                    .withMounter((adapter, device, options) -> IomapFileSystems.mount(adapter.name(), device,
                            options.withAdapterOptions(Map.of("data", "journal"))));
        }
    }
}
