package dev.iomap.cli;

import dev.iomap.api.Capability;
import dev.iomap.api.FormatOptions;
import dev.iomap.api.FsckReport;
import dev.iomap.api.MountOptions;
import dev.iomap.device.BlockDevice;
import dev.iomap.spi.AdapterPlugin;
import dev.iomap.spi.FileSystemAdapter;
import dev.iomap.spi.MountedFileSystem;
import dev.iomap.testkit.snapfs.SnapAdapter;
import java.io.IOException;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Registers {@value #NAME}: snapfs (without DURABLE_FSYNC, as {@link SnapfsWithoutDurableFsyncPlugin})
 * with one adapter option and adapter counters, so that the CLI's {@code -O} and counter reports are
 * tested end to end before an adapter with real ones (gfs2-like) is on the class path. Its mount takes
 * {@code -O weight=N} (default 1) and counts: {@code fsyncs} (its fsync calls),
 * {@code fsyncs.weighted} (that times N) and {@code never} (always 0, for the reports that leave zero
 * counters out). It never claims an image ({@code probe} is the default false), so images stay snapfs's.
 * Listed in {@code src/test/resources/META-INF/services/dev.iomap.spi.AdapterPlugin}.
 */
public final class CountingSnapfsPlugin implements AdapterPlugin {
    /** The adapter's name. */
    static final String NAME = "counting-snapfs";

    /** Found by {@link java.util.ServiceLoader}. */
    public CountingSnapfsPlugin() {
    }

    /** @return the counting adapter */
    @Override
    public List<FileSystemAdapter> adapters() {
        return List.of(new CountingAdapter(SnapAdapter.without(Capability.DURABLE_FSYNC)));
    }

    /** snapfs under another name, its mounts counting creates. */
    private record CountingAdapter(FileSystemAdapter snapfs) implements FileSystemAdapter {
        @Override
        public String name() {
            return NAME;
        }

        @Override
        public String description() {
            return "snapfs counting its fsyncs (CLI tests)";
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
        public MountedFileSystem mount(BlockDevice device, MountOptions options) throws IOException {
            options.checkAdapterOptions(NAME, Set.of("weight"));
            long weight = Long.parseLong(options.adapterOption("weight").orElse("1"));
            MountedFileSystem mount = snapfs.mount(device, options.withAdapterOptions(Map.of()));
            AtomicLong fsyncs = new AtomicLong();
            return (MountedFileSystem) Proxy.newProxyInstance(CountingSnapfsPlugin.class.getClassLoader(),
                    mount.getClass().getInterfaces(), (proxy, method, args) -> {
                        if (method.getName().equals("counters") && method.getParameterCount() == 0) {
                            long count = fsyncs.get();
                            return Map.of("fsyncs", count, "fsyncs.weighted", count * weight, "never", 0L);
                        }
                        if (method.getName().equals("fsync")) {
                            fsyncs.incrementAndGet();
                        }
                        try {
                            // A table the snapfs mount is itself is this proxy's table too.
                            Object result = method.invoke(mount, args);
                            return result == mount ? proxy : result;
                        } catch (InvocationTargetException e) {
                            throw e.getCause();
                        }
                    });
        }

        @Override
        public FsckReport fsck(BlockDevice device) throws IOException {
            return snapfs.fsck(device);
        }
    }
}
