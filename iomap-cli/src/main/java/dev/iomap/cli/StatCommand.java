package dev.iomap.cli;

import dev.iomap.device.BlockDevice;
import dev.iomap.api.FsStat;
import dev.iomap.api.IoStats;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.IomapFileSystems;
import dev.iomap.api.MountOptions;
import dev.iomap.api.PageCacheOptions;
import dev.iomap.cli.report.FioFormat;
import java.io.IOException;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code iomap stat}: mounts an image and prints its UUID (if its format has one), geometry, usage and the mount's
 * cache statistics. The image
 * is opened read-only under an in-memory overlay, so what the mount writes (its mounted flag, a journal replay)
 * never reaches it, and other read-only commands may run at once.
 */
@Command(name = "stat", mixinStandardHelpOptions = true, description = "Mounts an image and prints the adapter, block size, space and inode"
        + " usage (statfs), the root directory, and the page cache's options and statistics of the mount."
        + " The image is not changed: what the mount writes stays in memory.")
final class StatCommand implements Callable<Integer> {

    @Spec
    private CommandSpec spec;

    @Mixin
    private ImageOptions image;

    @Option(names = "--page-size", paramLabel = "SIZE",
            description = "page size of the mount's cache (default: 4096, also under larger blocks: their folios"
                    + " hold at least one block)")
    private String pageSize;

    @Option(names = "--set", paramLabel = "KEY=VALUE", description = "a page-cache option of the mount (repeatable)")
    private List<String> settings = new ArrayList<>();

    @Option(names = {"-O", "--fs-option"}, paramLabel = "KEY[=VALUE]",
            description = "an option of the adapter, e.g. -O data=journal (repeatable; also a comma list);"
                    + " an adapter refuses options it does not know")
    private List<String> fsOptions = new ArrayList<>();

    @Override
    public Integer call() throws Exception {
        Map<String, String> adapterOptions = FsOptions.parse(fsOptions);
        List<CacheSettings.Assignment> assignments = new ArrayList<>();
        for (String setting : settings) {
            assignments.add(CacheSettings.Assignment.parse(setting));
        }
        PageCacheOptions cache = CacheSettings.options(pageSize == null ? "4096" : pageSize, assignments);
        PrintWriter out = spec.commandLine().getOut();
        try (BlockDevice device = image.openReadOnlyForMount()) {
            report(out, device, new MountOptions(cache, true, adapterOptions), adapterOptions);
        }
        return 0;
    }

    /** Prints the report; {@code givenOptions} are the {@code -O} options in the order given (MountOptions' copy has none). */
    private void report(PrintWriter out, BlockDevice device, MountOptions options, Map<String, String> givenOptions)
            throws IOException {
        PageCacheOptions cache = options.pageCache();
        try (IomapFileSystem fs = IomapFileSystems.mount(image.adapter(), device, options)) {
            FsStat stat = fs.statfs();
            long used = stat.totalBlocks() - stat.freeBlocks();
            out.println("image        : " + image.name() + " (" + device.capacity() + " bytes)");
            fs.uuid().ifPresent(uuid -> out.println("uuid         : " + uuid));
            out.println("adapter      : " + fs.adapterName() + " (capabilities: " + fs.capabilities() + ")");
            if (!givenOptions.isEmpty()) {
                out.println("fs options   : " + FsOptions.format(givenOptions));
            }
            out.println("block size   : " + stat.blockSize());
            out.println(String.format(Locale.ROOT, "blocks       : %d total, %d free, %d used (%.1f%%), %s of %s",
                    stat.totalBlocks(), stat.freeBlocks(), used,
                    stat.totalBlocks() == 0 ? 0.0 : 100.0 * used / stat.totalBlocks(),
                    bytes(used * stat.blockSize()), bytes(stat.totalBlocks() * stat.blockSize())));
            out.println("inodes       : " + count(stat.totalInodes()) + " total, " + count(stat.freeInodes()) + " free");
            out.println("root         : " + fs.readdir("/").size() + " entries");
            out.println("page cache   : page size " + cache.pageSize() + ", folios up to "
                    + FioFormat.exactBytes(cache.maxFolioSize()) + ", order hints " + cache.orderHints() + ", per-block dirty "
                    + cache.perBlockDirty() + ", state lock " + cache.stateLock() + ", budget "
                    + FioFormat.exactBytes(cache.cacheBudgetBytes()));
            printStats(out, fs.stats());
        }
    }

    private static void printStats(PrintWriter out, IoStats stats) {
        var device = stats.device();
        out.println("cache stats  : since mount: app written " + bytes(stats.appBytesWritten()) + ", app read "
                + bytes(stats.appBytesRead()) + ", map_blocks " + stats.mapBlocksCalls() + ", ioends " + stats.ioends()
                + ", folio states " + stats.folioStatesAllocated());
        out.println("device stats : read " + bytes(device.bytesRead()) + " in " + device.reads() + " reads, written "
                + bytes(device.bytesWritten()) + " (metadata " + bytes(device.metadataBytesWritten()) + ") in "
                + device.writes() + " writes, " + device.flushes() + " flushes");
        List<String> orders = new ArrayList<>();
        long[] byOrder = stats.foliosByOrder();
        for (int order = 0; order < byOrder.length; order++) {
            if (byOrder[order] > 0) {
                orders.add("order " + order + "=" + byOrder[order]);
            }
        }
        out.println("folios       : " + (orders.isEmpty() ? "none created" : String.join(", ", orders)));
        if (!stats.adapterCounters().isEmpty()) {
            out.println("adapter ctrs : " + counters(stats.adapterCounters()));
        }
    }

    /** @return {@code name=value} pairs, in the map's (sorted) order */
    static String counters(Map<String, Long> counters) {
        List<String> pairs = new ArrayList<>();
        counters.forEach((name, value) -> pairs.add(name + "=" + value));
        return String.join(", ", pairs);
    }

    private static String bytes(long value) {
        return FioFormat.num2str(value, 4, true, "B");
    }

    private static String count(long value) {
        return value == Long.MAX_VALUE ? "unbounded" : Long.toString(value);
    }
}
