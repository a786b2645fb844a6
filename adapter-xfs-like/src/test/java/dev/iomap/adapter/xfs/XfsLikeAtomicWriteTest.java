package dev.iomap.adapter.xfs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.iomap.api.AtomicWriteLimits;
import dev.iomap.testkit.AdapterFixture;
import dev.iomap.testkit.AtomicWriteContract;
import dev.iomap.testkit.Geometry;
import dev.iomap.testkit.crash.MetadataCuts;
import java.io.IOException;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * xfs-like's atomic writes (staged in the COW fork, remapped in one transaction) through the kit's
 * contract on every standard geometry, and the proof that the contract's crash scenario can fail: the
 * same cuts around a plain direct overwrite, which xfs-like writes in place, tear it.
 */
@ParameterizedClass(name = "xfs-like atomic {0}")
@MethodSource("dev.iomap.testkit.Geometry#standard")
class XfsLikeAtomicWriteTest extends AtomicWriteContract {
    @Parameter
    Geometry geometry;

    @Override
    protected AdapterFixture fixture() {
        return AdapterFixture.of(new XfsLikeAdapter(), geometry).withDeviceBlockSizeOfFilesystem();
    }

    @Test
    void theLimitsAreOneToSixteenBlocks() throws IOException {
        create("/a");
        assertThat(fs.stat("/a").atomicWrite())
                .isEqualTo(AtomicWriteLimits.of(geometry.blockSize(), 16 * geometry.blockSize()));
    }

    @Test
    void aPowerCutCanTearAPlainDirectOverwrite() throws IOException {
        List<MetadataCuts.Image> images = cutsAroundAnOverwrite(false);
        assertThat(images).extracting(MetadataCuts.Image::state).anyMatch(state -> state.startsWith("mixed"));
        assertThat(images).extracting(MetadataCuts.Image::state).allMatch(state -> !state.startsWith("damaged"));
    }
}
