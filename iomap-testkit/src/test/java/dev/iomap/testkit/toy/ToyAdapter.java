package dev.iomap.testkit.toy;

import dev.iomap.device.BlockDevice;
import dev.iomap.api.Capability;
import dev.iomap.spi.FileSystemAdapter;
import dev.iomap.api.FormatOptions;
import dev.iomap.api.FsckReport;
import dev.iomap.api.MountOptions;
import dev.iomap.spi.MountedFileSystem;
import dev.iomap.api.NotSupportedException;
import dev.iomap.testkit.AdapterFixture;
import dev.iomap.testkit.Geometry;
import dev.iomap.testkit.KitSettings;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;

/** The adapter side of {@link ToyFileSystem}: format and fsck; mounting goes through a fixture's mounter. */
public final class ToyAdapter implements FileSystemAdapter {
    private final Set<Capability> capabilities;

    /** The toy declaring {@link ToyFileSystem#CAPABILITIES}. */
    public ToyAdapter() {
        this(ToyFileSystem.CAPABILITIES);
    }

    /** @param capabilities what the toy declares (it has no holes: {@link Capability#DENSE_FILES} is true of it) */
    public ToyAdapter(Set<Capability> capabilities) {
        this.capabilities = Set.copyOf(capabilities);
    }

    @Override
    public String name() {
        return "toy";
    }

    @Override
    public String description() {
        return "byte arrays and a blob at offset 0 (kit self-tests)";
    }

    @Override
    public Set<Capability> capabilities() {
        return capabilities;
    }

    @Override
    public void format(BlockDevice device, FormatOptions options) throws IOException {
        ToyFileSystem.format(device);
    }

    @Override
    public MountedFileSystem mount(BlockDevice device, MountOptions options) throws IOException {
        throw new NotSupportedException("toy mounts through ToyAdapter.fixture");
    }

    @Override
    public FsckReport fsck(BlockDevice device) throws IOException {
        ToyFileSystem.mount(device, Set.of());
        return new FsckReport(List.of(), "the blob decodes");
    }

    /**
     * @param logDir where failing op logs go
     * @param ops model-checker ops
     * @param bugs bugs to plant
     * @return a fixture mounting the toy with those bugs
     */
    public static AdapterFixture fixture(Path logDir, int ops, ToyFileSystem.Bug... bugs) {
        return fixture(logDir, ops, ToyFileSystem.CAPABILITIES, bugs);
    }

    /**
     * @param logDir where failing op logs go
     * @param ops model-checker ops
     * @param capabilities what the toy declares
     * @param bugs bugs to plant
     * @return a fixture mounting the toy with those capabilities and bugs
     */
    public static AdapterFixture fixture(Path logDir, int ops, Set<Capability> capabilities,
            ToyFileSystem.Bug... bugs) {
        KitSettings settings = new KitSettings(ops, 11, 25, logDir, 8, 60);
        return AdapterFixture.of(new ToyAdapter(capabilities), new Geometry(4096, 4096, 0))
                .withDeviceBytes(16L << 20)
                .withSettings(settings)
                .withMounter((adapter, device, options) -> ToyFileSystem.mount(device, Set.of(bugs), capabilities));
    }
}
