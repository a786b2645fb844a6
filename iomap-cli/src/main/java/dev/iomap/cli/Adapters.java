package dev.iomap.cli;

import dev.iomap.api.IomapFileSystems;
import dev.iomap.device.BlockDevice;
import dev.iomap.spi.AdapterPlugin;
import dev.iomap.spi.FileSystemAdapter;
import dev.iomap.spi.ProbedFormat;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.ServiceLoader;

/** The adapters on the class path, as their plugins declare them: what mkfs checks first, what probes images. */
final class Adapters {

    private Adapters() {
    }

    /**
     * @param name an adapter's name
     * @return the adapter
     * @throws UsageException if no adapter has that name
     */
    static FileSystemAdapter named(String name) throws UsageException {
        for (FileSystemAdapter adapter : all()) {
            if (adapter.name().equals(name)) {
                return adapter;
            }
        }
        throw new UsageException("no adapter named '" + name + "' (adapters: "
                + String.join(", ", IomapFileSystems.adapters()) + ")");
    }

    /**
     * @param device an open device
     * @return the names of the adapters whose format the device seems to hold
     * @throws IOException if the device cannot be read
     */
    static List<String> probe(BlockDevice device) throws IOException {
        List<String> found = new ArrayList<>();
        for (FileSystemAdapter adapter : all()) {
            if (adapter.probe(device)) {
                found.add(adapter.name());
            }
        }
        return found;
    }

    /**
     * @param device an open device, usually a 512-byte-block view of an image
     * @return what each adapter whose format the device seems to hold found in its superblock
     * @throws IOException if the device cannot be read
     */
    static List<ProbedFormat> probeFormats(BlockDevice device) throws IOException {
        List<ProbedFormat> found = new ArrayList<>();
        for (FileSystemAdapter adapter : all()) {
            adapter.probeFormat(device).ifPresent(found::add);
        }
        return found;
    }

    /** @return every adapter every plugin on the class path declares, in the order ServiceLoader finds them */
    static List<FileSystemAdapter> all() {
        List<FileSystemAdapter> adapters = new ArrayList<>();
        for (AdapterPlugin plugin : ServiceLoader.load(AdapterPlugin.class)) {
            adapters.addAll(plugin.adapters());
        }
        return adapters;
    }
}
