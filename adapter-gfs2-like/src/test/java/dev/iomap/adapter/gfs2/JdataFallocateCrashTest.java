package dev.iomap.adapter.gfs2;

import static org.assertj.core.api.Assertions.assertThat;

import dev.iomap.api.IomapFileSystems;
import dev.iomap.devices.CutMode;
import dev.iomap.testkit.AdapterFixture;
import dev.iomap.testkit.Geometry;
import dev.iomap.testkit.crash.CrashConfig;
import dev.iomap.testkit.crash.CrashRunner;
import java.util.stream.LongStream;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A power cut in the middle of a zero range on a {@code data=journal} mount (the kit's crash workload,
 * seed 4818741047191734718, 1 KiB blocks, 64 KiB single-page folios), found cut at device write 417 when
 * new blocks were zeroed one write each; they are zeroed a run at a time now, so the workload makes
 * fewer writes and the test cuts at every one of them, the zeroing of the last op's new blocks among them.
 *
 * <p>The last op, {@code zero f4 234835 45119 extend}, zeroes its partial tail block (file block 273,
 * from byte 279552) through the cache; writing back the range's folio journals that block (a jdata
 * transaction committed and flushed before the home write), so the zeroes are durable; the cut then
 * falls on the op's on-device zeroing of new blocks, and the op fails. Zeroes at 279552 are a legal
 * result of an op in progress: the kit's {@code CrashWorkload} records an op in its model before it
 * runs it, so a cut during the op allows those bytes (a model that recorded the op only once it returned
 * would judge them "not changed since the last fsync").
 */
class JdataFallocateCrashTest {
    /** The workload's device writes, less the last. */
    private static final long WRITES = 88;

    @Test
    void aZeroRangeCutShortMayLeaveItsJournaledEdgeZeroed() throws Exception {
        AdapterFixture fixture = AdapterFixture.of(new Gfs2LikeAdapter(), new Geometry(1024, 65536, 0))
                .withDeviceBlockSizeOfFilesystem()
                .withMounter((adapter, device, options) -> IomapFileSystems.mount(adapter.name(), device,
                        options.withAdapterOptions(Map.of("data", "journal"))));

        CrashRunner.Result result = CrashRunner.run(fixture, CrashConfig.of(fixture, CutMode.LOSE_UNFLUSHED)
                .withSeed(4818741047191734718L).withCrashAt(LongStream.rangeClosed(1, WRITES).boxed().toList()));

        assertThat(result.crashPoints()).isEqualTo((int) WRITES);
        assertThat(result.deviceWrites()).isGreaterThan(WRITES);
    }
}
