package dev.iomap.cli.plugins;

import dev.iomap.api.Capability;
import dev.iomap.api.FormatOptions;
import dev.iomap.api.FsckReport;
import dev.iomap.api.MountOptions;
import dev.iomap.device.BlockDevice;
import dev.iomap.spi.AdapterPlugin;
import dev.iomap.spi.FileSystemAdapter;
import dev.iomap.spi.MountedFileSystem;
import dev.iomap.spi.ProbedFormat;
import dev.iomap.testkit.snapfs.SnapAdapter;
import java.io.IOException;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * A third party's adapter plugin, for {@code PluginAdaptersTest}: snapfs under the name {@value #NAME},
 * claiming snapfs images as its own. No services file of the tests lists it: the test packs it into a
 * plugin jar with its own {@code META-INF/services/dev.iomap.spi.AdapterPlugin}, which is the only way
 * the CLI finds it.
 */
public final class ThirdPartyPlugin implements AdapterPlugin {
    /** The adapter's name. */
    public static final String NAME = "third-party-snapfs";

    /** Found by {@link java.util.ServiceLoader}. */
    public ThirdPartyPlugin() {
    }

    /** @return the adapter */
    @Override
    public List<FileSystemAdapter> adapters() {
        return List.of(new ThirdPartyAdapter(new SnapAdapter()));
    }

    /** snapfs under another name. */
    private record ThirdPartyAdapter(FileSystemAdapter snapfs) implements FileSystemAdapter {
        @Override
        public String name() {
            return NAME;
        }

        @Override
        public String description() {
            return "snapfs from a plugin jar (CLI tests)";
        }

        @Override
        public Set<Capability> capabilities() {
            return snapfs.capabilities();
        }

        @Override
        public void format(BlockDevice device, FormatOptions options) throws IOException {
            snapfs.format(device, options);
        }

        @Override
        public boolean probe(BlockDevice device) throws IOException {
            return snapfs.probe(device);
        }

        @Override
        public Optional<ProbedFormat> probeFormat(BlockDevice device) throws IOException {
            return snapfs.probeFormat(device).map(found -> ProbedFormat.of(NAME, found.blockSize()));
        }

        @Override
        public MountedFileSystem mount(BlockDevice device, MountOptions options) throws IOException {
            return snapfs.mount(device, options);
        }

        @Override
        public FsckReport fsck(BlockDevice device) throws IOException {
            return snapfs.fsck(device);
        }
    }
}
