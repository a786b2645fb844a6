package dev.iomap.adapter.bcachefs;

import dev.iomap.testkit.AdapterFixture;
import dev.iomap.testkit.DirectIoContract;
import dev.iomap.testkit.Geometry;
import java.util.Map;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * bcachefs-like through the kit's direct I/O contract on every standard geometry, plain and with
 * compressed extents (direct writes are checksummed and compressed at submission like writeback's).
 */
@ParameterizedClass(name = "bcachefs-like direct {0}")
@MethodSource("dev.iomap.testkit.Geometry#standard")
class BcachefsLikeDirectIoTest extends DirectIoContract {
    @Parameter
    Geometry geometry;

    @Override
    protected AdapterFixture fixture() {
        return AdapterFixture.of(new BcachefsLikeAdapter(), geometry).withDeviceBlockSizeOfFilesystem();
    }

    /** The same with zstd-compressed, crc32c-checksummed extents. */
    @Nested
    class Compressed extends DirectIoContract {
        @Override
        protected AdapterFixture fixture() {
            return BcachefsLikeDirectIoTest.this.fixture()
                    .withFormatProperties(Map.of("compression", "zstd", "checksum", "crc32c"));
        }
    }
}
