package dev.iomap.it;

import static org.assertj.core.api.Assertions.assertThat;

import dev.iomap.adapter.zonefs.ZonefsLikeAdapter;
import dev.iomap.device.BlockDevice;
import dev.iomap.api.Capability;
import dev.iomap.devices.ZoneLayout;
import dev.iomap.devices.ZonedDevice;
import dev.iomap.testkit.AdapterFixture;
import dev.iomap.testkit.AttributesContract;
import dev.iomap.testkit.CapabilityContract;
import dev.iomap.testkit.FiemapContract;
import dev.iomap.testkit.Geometry;
import dev.iomap.testkit.LinksContract;
import dev.iomap.testkit.InodeFlagsContract;
import dev.iomap.testkit.SpecialFilesContract;
import dev.iomap.testkit.NamesContract;
import dev.iomap.testkit.RenameFlagsContract;
import dev.iomap.testkit.SeekContract;
import dev.iomap.testkit.XattrContract;
import dev.iomap.testkit.fsx.FsxConfig;
import dev.iomap.testkit.fsx.FsxFile;
import dev.iomap.testkit.fsx.FsxRunner;
import java.io.IOException;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * zonefs-like through the parts of the kit that fit it, on every standard geometry and a block larger than the page (Geometries#forKitRuns). Its namespace is
 * fixed (no create) and its rules differ by kind of file, so the contract suites that create their
 * files do not apply. What does:
 *
 * <ul>
 *   <li>the model checker, driving an existing file under that file's rules: a conventional zone file
 *       (fixed size, overwritten anywhere, mapped stores) and a sequential one (appends of whole
 *       blocks, truncate to 0 or the capacity, no mapped stores);
 *   <li>the names suite, on its fixed namespace: byte names that are no zone file are absent, and
 *       unrepresentable or too long names are refused;
 *   <li>the capability suite on an existing file of each zone type ({@link AdapterFixture.ExistingFiles}):
 *       every capability zonefs declares absent is refused on both, TRUNCATE works to the sizes each
 *       allows, RANDOM_WRITE works on the conventional file and is refused on the sequential one;
 *   <li>the seek and extent-report (fiemap) suites on an existing file of each zone type, where they
 *       need no file of its own;
 *   <li>the links, attributes and extended-attribute suites, which prove their calls refused
 *       (zonefs-like declares none of their capabilities) and skip the rest naming the capability.
 * </ul>
 *
 * <p>The zoned device is {@code iomap-devices}' {@code ZonedDevice} emulation over the kit's device,
 * rebuilt from it at every mount.
 */
@ParameterizedClass(name = "zonefs-like {0}")
@MethodSource("dev.iomap.it.Geometries#forKitRuns")
class ZonefsLikeKitTest {
    /** Zone 0 (superblock) and two conventional zones, then nine sequential zones of 3 MiB capacity. */
    private static final ZoneLayout LAYOUT = new ZoneLayout(4L << 20, 3L << 20, 12, 3, 4);

    @Parameter
    Geometry geometry;

    private AdapterFixture fixture() {
        return AdapterFixture.of(new ZonefsLikeAdapter(), geometry)
                .withDeviceBytes(LAYOUT.backingBytes(AdapterFixture.SECTOR_SIZE))
                .withDeviceLayer(new AdapterFixture.DeviceLayer() {
                    @Override
                    public BlockDevice formatting(BlockDevice device) throws IOException {
                        return ZonedDevice.create(device, LAYOUT);
                    }

                    @Override
                    public BlockDevice opening(BlockDevice device) throws IOException {
                        return ZonedDevice.open(device);
                    }
                });
    }

    /** The capability suite on conventional zone files: TRUNCATE to their own fixed size (the zone size). */
    @Nested
    class ConventionalCapabilities extends CapabilityContract {
        @Override
        protected AdapterFixture fixture() {
            return ZonefsLikeKitTest.this.fixture().withExistingFiles(
                    AdapterFixture.ExistingFiles.of("/cnv/0", "/cnv/1").truncatingTo(LAYOUT.zoneSize()));
        }
    }

    /** The capability suite on sequential zone files: TRUNCATE to 0 (zone reset), no RANDOM_WRITE. */
    @Nested
    class SequentialCapabilities extends CapabilityContract {
        @Override
        protected AdapterFixture fixture() {
            return ZonefsLikeKitTest.this.fixture().withExistingFiles(
                    AdapterFixture.ExistingFiles.of("/seq/0", "/seq/1").truncatingTo(0)
                            .refusing(Capability.RANDOM_WRITE));
        }
    }

    /** File names on the fixed namespace: any other byte name is absent, and the listing is in byte order. */
    @Nested
    class Names extends NamesContract {
        @Override
        protected AdapterFixture fixture() {
            return ZonefsLikeKitTest.this.fixture().withExistingFiles(AdapterFixture.ExistingFiles.of("/cnv/0", "/seq/0"));
        }
    }

    /** rename flags on the fixed namespace: refused, since zonefs-like declares neither DIRECTORIES nor exchange. */
    @Nested
    class RenameFlags extends RenameFlagsContract {
        @Override
        protected AdapterFixture fixture() {
            return ZonefsLikeKitTest.this.fixture().withExistingFiles(AdapterFixture.ExistingFiles.of("/cnv/0", "/seq/0"));
        }
    }

    /** Links: zonefs-like declares neither SYMLINKS nor HARD_LINKS, so every test but the refusal skips. */
    @Nested
    class Links extends LinksContract {
        @Override
        protected AdapterFixture fixture() {
            return ZonefsLikeKitTest.this.fixture();
        }
    }

    /** Inode flags: zonefs-like does not declare INODE_FLAGS, so every test but the refusal skips. */
    @Nested
    class InodeFlags extends InodeFlagsContract {
        @Override
        protected AdapterFixture fixture() {
            return ZonefsLikeKitTest.this.fixture();
        }
    }

        /** Special files: zonefs-like does not declare SPECIAL_FILES, so every test but the refusal skips. */
    @Nested
    class SpecialFiles extends SpecialFilesContract {
        @Override
        protected AdapterFixture fixture() {
            return ZonefsLikeKitTest.this.fixture();
        }
    }

    /** Attributes: zonefs-like does not declare POSIX_ATTRIBUTES, so every test but the refusal skips. */
    @Nested
    class Attributes extends AttributesContract {
        @Override
        protected AdapterFixture fixture() {
            return ZonefsLikeKitTest.this.fixture();
        }
    }

    /** Extended attributes: zonefs-like does not declare XATTRS, so every test but the refusal skips. */
    @Nested
    class Xattr extends XattrContract {
        @Override
        protected AdapterFixture fixture() {
            return ZonefsLikeKitTest.this.fixture();
        }
    }

    /** Seek on a conventional zone file: all of it is allocated, its only hole is at EOF. */
    @Nested
    class ConventionalSeek extends SeekContract {
        @Override
        protected AdapterFixture fixture() {
            return ZonefsLikeKitTest.this.fixture()
                    .withExistingFiles(AdapterFixture.ExistingFiles.of("/cnv/0", "/cnv/1"));
        }
    }

    /** Seek on a sequential zone file: data up to the write pointer, nothing past it. */
    @Nested
    class SequentialSeek extends SeekContract {
        @Override
        protected AdapterFixture fixture() {
            return ZonefsLikeKitTest.this.fixture()
                    .withExistingFiles(AdapterFixture.ExistingFiles.of("/seq/0", "/seq/1"));
        }
    }

    /** The extent report on a conventional zone file: one extent over all of it, the data at its place. */
    @Nested
    class ConventionalFiemap extends FiemapContract {
        @Override
        protected AdapterFixture fixture() {
            return ZonefsLikeKitTest.this.fixture()
                    .withExistingFiles(AdapterFixture.ExistingFiles.of("/cnv/0", "/cnv/1"));
        }
    }

    /** The extent report on a sequential zone file: the data up to the write pointer, at its place. */
    @Nested
    class SequentialFiemap extends FiemapContract {
        @Override
        protected AdapterFixture fixture() {
            return ZonefsLikeKitTest.this.fixture()
                    .withExistingFiles(AdapterFixture.ExistingFiles.of("/seq/0", "/seq/1"));
        }
    }

    private static FsxFile conventional() {
        return FsxFile.existing("/cnv/0").keepingItsSize();
    }

    private FsxFile sequential() {
        return FsxFile.existing("/seq/0")
                .appendingOnly(geometry.blockSize())
                .withoutMappedWrites()
                .truncatingOnlyTo(0L, LAYOUT.zoneCapacity())
                .growingTo(LAYOUT.zoneCapacity());
    }

    private static void run(AdapterFixture fixture, FsxFile file, String what) throws IOException {
        FsxConfig config = FsxConfig.of(fixture).withFile(file)
                .withSeed(fixture.settings().seedFor(fixture.label() + file.path()));
        FsxRunner.Result result = FsxRunner.run(fixture, config);
        assertThat(result.ops()).isEqualTo(fixture.settings().fsxOps());
        System.out.println("fsx " + result.label() + " " + what + " " + file.path() + ": " + result.ops()
                + " ops, seed " + result.seed() + ", " + result.opCounts());
    }

    @Test
    void conventionalZoneFileMatchesTheModel() throws IOException {
        run(fixture(), conventional(), "conventional");
    }

    @Test
    void sequentialZoneFileMatchesTheModel() throws IOException {
        run(fixture(), sequential(), "sequential");
    }

    @Test
    void conventionalZoneFileUnderMemoryPressure() throws IOException {
        run(fixture().underMemoryPressure(), conventional(), "conventional");
    }

    @Test
    void sequentialZoneFileUnderMemoryPressure() throws IOException {
        run(fixture().underMemoryPressure(), sequential(), "sequential");
    }
}
