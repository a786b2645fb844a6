package dev.iomap.testkit.toy;

import dev.iomap.device.BlockDevice;
import dev.iomap.api.Capability;
import dev.iomap.spi.FilesystemAdapter;
import dev.iomap.api.FormatOptions;
import dev.iomap.api.FsckReport;
import dev.iomap.api.MountOptions;
import dev.iomap.spi.MountedFilesystem;
import dev.iomap.api.NotSupportedException;
import dev.iomap.testkit.AdapterFixture;
import dev.iomap.testkit.Geometry;
import dev.iomap.testkit.KitSettings;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;

/** The adapter side of {@link ToyFileSystem}: format and fsck; mounting goes through a fixture's mounter. */
public final class ToyAdapter implements FilesystemAdapter {

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
        return ToyFileSystem.CAPABILITIES;
    }

    @Override
    public void format(BlockDevice device, FormatOptions options) throws IOException {
        ToyFileSystem.format(device);
    }

    @Override
    public MountedFilesystem mount(BlockDevice device, MountOptions options) throws IOException {
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
        KitSettings settings = new KitSettings(ops, 11, 25, logDir, 8, 60);
        return AdapterFixture.of(new ToyAdapter(), new Geometry(4096, 4096, 0))
                .withDeviceBytes(16L << 20)
                .withSettings(settings)
                .withMounter((adapter, device, options) -> ToyFileSystem.mount(device, Set.of(bugs)));
    }
}
