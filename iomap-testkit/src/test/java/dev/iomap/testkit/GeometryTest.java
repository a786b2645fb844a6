package dev.iomap.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import dev.iomap.api.Capability;
import dev.iomap.api.FormatOptions;
import dev.iomap.api.FsckReport;
import dev.iomap.api.MountOptions;
import dev.iomap.api.NotSupportedException;
import dev.iomap.device.BlockDevice;
import dev.iomap.spi.FileSystemAdapter;
import dev.iomap.spi.MountedFileSystem;
import dev.iomap.testkit.snapfs.SnapAdapter;
import java.io.IOException;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The geometries an adapter declares are the standard ones its format check accepts. */
class GeometryTest {
    /** What {@link FormatCheck} asks: the device's block size and the filesystem's. */
    @FunctionalInterface
    private interface FormatCheck {
        void check(int deviceBlockSize, int blockSize) throws IOException;
    }

    /** An adapter that is only its format check; nothing else is called. */
    private record CheckOnly(FormatCheck check) implements FileSystemAdapter {
        @Override
        public String name() {
            return "check-only";
        }

        @Override
        public String description() {
            return "a format check";
        }

        @Override
        public Set<Capability> capabilities() {
            return Set.of();
        }

        @Override
        public void checkFormat(int deviceBlockSize, long capacity, FormatOptions options) throws IOException {
            check.check(deviceBlockSize, options.blockSize());
        }

        @Override
        public void format(BlockDevice device, FormatOptions options) {
            throw new UnsupportedOperationException("not called");
        }

        @Override
        public MountedFileSystem mount(BlockDevice device, MountOptions options) {
            throw new UnsupportedOperationException("not called");
        }

        @Override
        public FsckReport fsck(BlockDevice device) {
            throw new UnsupportedOperationException("not called");
        }
    }

    @Test
    void aBlockMayBeLargerThanThePageAndSetsTheMinimumFolioOrder() {
        Geometry large = Geometry.largeBlock();

        assertThat(large.name()).isEqualTo("b16k-p4k-o0");
        assertThat(large.minFolioOrder()).isEqualTo(2);
        assertThat(large.maxFolioSize()).isEqualTo(16384);
        assertThat(large.pageCacheOptions().pageSize()).isEqualTo(4096);
        assertThat(new Geometry(65536, 4096, 0).minFolioOrder()).isEqualTo(4);
        assertThat(new Geometry(1024, 4096, 0).minFolioOrder()).isZero();
        assertThat(Geometry.moreLargeBlocks()).extracting(Geometry::name)
                .containsExactly("b16k-p4k-o9", "b64k-p4k-o0", "b64k-p4k-o9");
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> new Geometry(131072, 4096, 0))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("512 to 65536");
    }

    @Test
    void kitRunsAreTheStandardEightAndOneLargeBlockUnlessAllGeometriesAreAskedFor() {
        String before = System.getProperty(Geometry.ALL_GEOMETRIES_PROPERTY);
        try {
            System.clearProperty(Geometry.ALL_GEOMETRIES_PROPERTY);
            assertThat(Geometry.forKitRuns()).hasSize(9).endsWith(Geometry.largeBlock())
                    .startsWith(Geometry.standard().toArray(Geometry[]::new));
            System.setProperty(Geometry.ALL_GEOMETRIES_PROPERTY, "true");
            assertThat(Geometry.forKitRuns()).hasSize(12).endsWith(Geometry.moreLargeBlocks().toArray(Geometry[]::new));
            System.setProperty(Geometry.GEOMETRY_PROPERTY, "b64k-p4k-o0, b1k-p4k-o0");
            assertThat(Geometry.forKitRuns()).extracting(Geometry::name).containsExactly("b1k-p4k-o0", "b64k-p4k-o0");
        } finally {
            System.clearProperty(Geometry.GEOMETRY_PROPERTY);
            if (before == null) {
                System.clearProperty(Geometry.ALL_GEOMETRIES_PROPERTY);
            } else {
                System.setProperty(Geometry.ALL_GEOMETRIES_PROPERTY, before);
            }
        }
    }

    @Test
    void anAdapterThatFormatsEveryBlockSizeRunsAllEightGeometries() {
        assertThat(Geometry.supportedBy(new SnapAdapter())).isEqualTo(Geometry.standard());
    }

    @Test
    void anAdapterThatRefusesOneKibBlocksRunsOnlyTheFourKibGeometries() {
        var fourKibOnly = new CheckOnly((deviceBlockSize, blockSize) -> {
            if (blockSize != 4096) {
                throw new NotSupportedException("4 KiB blocks only");
            }
        });

        assertThat(Geometry.supportedBy(fourKibOnly))
                .hasSize(4)
                .containsExactlyElementsOf(Geometry.standard().stream().filter(g -> g.blockSize() == 4096).toList());
    }

    @Test
    void anAdapterThatNeedsSectorsOfItsBlockSizeStillDeclaresThem() {
        var sectorsOfBlockSize = new CheckOnly((deviceBlockSize, blockSize) -> {
            if (deviceBlockSize != blockSize) {
                throw new NotSupportedException("the device's blocks must be the filesystem's");
            }
        });

        assertThat(Geometry.supportedBy(sectorsOfBlockSize)).isEqualTo(Geometry.standard());
    }

    @Test
    void anAdapterThatFormatsNothingDeclaresNoGeometry() {
        assertThat(Geometry.supportedBy(new CheckOnly((deviceBlockSize, blockSize) -> {
            throw new NotSupportedException("nothing");
        }))).isEmpty();
    }
}
