package dev.iomap.cli;

import dev.iomap.api.Capability;
import dev.iomap.spi.FileSystemAdapter;
import java.io.PrintWriter;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.stream.Collectors;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/**
 * {@code iomap adapters}: every adapter on the class path (in {@code iomap.jar}: every adapter module
 * of the repository), by name, with the device it needs, its capabilities and what it models.
 */
@Command(name = "adapters", mixinStandardHelpOptions = true,
        description = "Lists the filesystem adapters: name, the device each needs (any block device, or a"
                + " zoned one), capabilities, what it models.")
final class AdaptersCommand implements Callable<Integer> {

    @Spec
    private CommandSpec spec;

    /**
     * Prints one block per adapter, sorted by name:
     * <pre>
     * NAME (block device|zoned device): DESCRIPTION
     *     capabilities: CAP, CAP, ...
     * </pre>
     * Capabilities are the declared ones with their implications ({@link Capability#withImplied}),
     * in the enum's order; "none" if there are none.
     */
    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        for (FileSystemAdapter adapter : sorted()) {
            out.println(adapter.name() + " (" + device(adapter) + "): " + adapter.description());
            out.println("    capabilities: " + capabilities(adapter));
        }
        out.flush();
        return 0;
    }

    /** @return the adapters on the class path, sorted by name */
    static List<FileSystemAdapter> sorted() {
        return Adapters.all().stream().sorted(Comparator.comparing(FileSystemAdapter::name)).toList();
    }

    /** @return "zoned device" for an adapter that needs one, "block device" otherwise */
    static String device(FileSystemAdapter adapter) {
        return adapter.requiresZonedDevice() ? "zoned device" : "block device";
    }

    /** @return the adapter's capabilities with their implications, comma separated, or "none" */
    static String capabilities(FileSystemAdapter adapter) {
        String list = Capability.withImplied(adapter.capabilities()).stream().sorted()
                .map(Capability::name).collect(Collectors.joining(", "));
        return list.isEmpty() ? "none" : list;
    }
}
