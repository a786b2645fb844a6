package dev.iomap.it;

import dev.iomap.adapter.bcachefs.BcachefsLikeAdapter;
import dev.iomap.testkit.AdapterContractSuite;
import dev.iomap.testkit.AdapterFixture;
import dev.iomap.testkit.Geometry;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * bcachefs-like with compressed extents through the whole kit, the model checker and the power-cut
 * tests on every standard geometry: lz4 with xxhash64 checksums on half of them and zstd with crc32c
 * on the other half, so that each compressor and each checksum runs on both block sizes, both page
 * sizes and both folio orders.
 */
@ParameterizedClass(name = "bcachefs-like {1} {0}")
@MethodSource("geometries")
class BcachefsLikeCompressedKitTest extends AdapterContractSuite {
    @Parameter(0)
    Geometry geometry;

    @Parameter(1)
    String compression;

    static Stream<Arguments> geometries() {
        List<Geometry> all = Geometries.standard();
        return java.util.stream.IntStream.range(0, all.size())
                .mapToObj(i -> Arguments.of(all.get(i), i % 4 == 0 || i % 4 == 3 ? "lz4" : "zstd"));
    }

    @Override
    protected AdapterFixture fixture() {
        return AdapterFixture.of(new BcachefsLikeAdapter(), geometry)
                .withDeviceBlockSizeOfFilesystem()
                .withFormatProperties(Map.of("compression", compression,
                        "checksum", compression.equals("lz4") ? "xxhash64" : "crc32c"));
    }
}
