package dev.iomap.cli;

import dev.iomap.device.BlockDevice;
import dev.iomap.api.FormatOptions;
import dev.iomap.api.FsStat;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.IomapFileSystems;
import dev.iomap.api.MountOptions;
import dev.iomap.devices.FileBlockDevice;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code iomap mkfs}: formats an image file with an adapter's empty filesystem. */
@Command(name = "mkfs", mixinStandardHelpOptions = true, sortOptions = false,
        description = "Formats an image file (created, or resized to --size) with an adapter's empty filesystem.")
final class MkfsCommand implements Callable<Integer> {

    @Spec
    private CommandSpec spec;

    @Mixin
    private ImageOptions image;

    @Option(names = "--size", paramLabel = "SIZE",
            description = "image size, e.g. 256m; needed when IMAGE does not exist (default: its size)")
    private String size;

    @Option(names = "--label", defaultValue = "", paramLabel = "LABEL", description = "the filesystem's label")
    private String label;

    @Option(names = {"-o", "--property"}, paramLabel = "KEY=VALUE",
            description = "an adapter-specific format setting, e.g. agcount=4 (repeatable)")
    private Map<String, String> properties = new LinkedHashMap<>();

    @Override
    public Integer call() throws Exception {
        int blockSize = image.blockSizeBytes();
        FormatOptions options;
        try {
            options = new FormatOptions(blockSize, label, properties);
        } catch (IllegalArgumentException e) {
            throw new UsageException("bad format options: " + e.getMessage());
        }
        long capacity = prepareImage(blockSize);
        PrintWriter out = spec.commandLine().getOut();
        try (BlockDevice device = FileBlockDevice.open(image.image, blockSize, capacity, false)) {
            IomapFileSystems.format(image.adapter, device, options);
            try (IomapFileSystem fs = IomapFileSystems.mount(image.adapter, device, MountOptions.defaults())) {
                FsStat stat = fs.statfs();
                out.println(image.image + ": " + image.adapter + " filesystem, " + capacity + " bytes, block size "
                        + stat.blockSize() + ", " + stat.totalBlocks() + " blocks (" + stat.freeBlocks() + " free)"
                        + (label.isEmpty() ? "" : ", label '" + label + "'"));
            }
        }
        return 0;
    }

    /** @return the capacity: --size, or the existing file's size, in whole blocks */
    private long prepareImage(int blockSize) throws UsageException, IOException {
        long bytes;
        if (size != null) {
            try {
                bytes = Units.parseSize(size, 1024);
            } catch (IllegalArgumentException e) {
                throw new UsageException("bad --size '" + size + "': " + e.getMessage());
            }
            bytes -= bytes % blockSize;
            if (bytes <= 0) {
                throw new UsageException("--size " + size + " is smaller than one block of " + blockSize + " bytes");
            }
            try (var file = new RandomAccessFile(image.image.toFile(), "rw")) {
                file.setLength(bytes);
            }
            return bytes;
        }
        if (!Files.isRegularFile(image.image)) {
            throw new UsageException(image.image + " does not exist: give --size to create it");
        }
        bytes = Files.size(image.image);
        return bytes - bytes % blockSize;
    }
}
