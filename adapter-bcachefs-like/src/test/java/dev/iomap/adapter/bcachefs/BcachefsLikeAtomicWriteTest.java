package dev.iomap.adapter.bcachefs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.iomap.api.AtomicWriteLimits;
import dev.iomap.testkit.AdapterFixture;
import dev.iomap.testkit.AtomicWriteContract;
import dev.iomap.testkit.Geometry;
import dev.iomap.testkit.crash.MetadataCuts;
import java.io.IOException;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * bcachefs-like's atomic writes (new blocks, every extent key and the size in one btree transaction)
 * through the kit's contract on every standard geometry: copy on write as formatted by default, with
 * extents of one block (so that an atomic write is several runs), and {@code nocow}, where a plain
 * direct overwrite goes in place and the crash scenario tears it while an atomic write still does not.
 */
@ParameterizedClass(name = "bcachefs-like atomic {0}")
@MethodSource("dev.iomap.testkit.Geometry#standard")
class BcachefsLikeAtomicWriteTest extends AtomicWriteContract {
    @Parameter
    Geometry geometry;

    @Override
    protected AdapterFixture fixture() {
        return AdapterFixture.of(new BcachefsLikeAdapter(), geometry).withDeviceBlockSizeOfFilesystem();
    }

    @Test
    void theLimitsAreOneToSixteenBlocks() throws IOException {
        create("/a");
        assertThat(fs.stat("/a").atomicWrite())
                .isEqualTo(AtomicWriteLimits.of(geometry.blockSize(), 16 * geometry.blockSize()));
    }

    /** Extents of one block: every atomic write of more than a block is several runs, one transaction. */
    @Nested
    class OneBlockExtents extends AtomicWriteContract {
        @Override
        protected AdapterFixture fixture() {
            return BcachefsLikeAtomicWriteTest.this.fixture()
                    .withFormatProperties(Map.of("extentmax", Integer.toString(geometry.blockSize())));
        }
    }

    /** Overwrites in place: atomic writes still go out of place. */
    @Nested
    class Nocow extends AtomicWriteContract {
        @Override
        protected AdapterFixture fixture() {
            return BcachefsLikeAtomicWriteTest.this.fixture().withFormatProperties(Map.of("nocow", "true"));
        }

        @Test
        void aPowerCutCanTearAPlainDirectOverwrite() throws IOException {
            List<MetadataCuts.Image> images = cutsAroundAnOverwrite(false);
            assertThat(images).extracting(MetadataCuts.Image::state).anyMatch(state -> state.startsWith("mixed"));
            assertThat(images).extracting(MetadataCuts.Image::state).allMatch(state -> !state.startsWith("damaged"));
        }
    }
}
