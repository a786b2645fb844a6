package dev.iomap.cli;

import dev.iomap.api.FileExtent;
import dev.iomap.api.IomapFile;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.IomapFileSystems;
import dev.iomap.api.MountOptions;
import dev.iomap.api.PageCacheOptions;
import dev.iomap.device.BlockDevice;
import java.io.PrintWriter;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code iomap fiemap IMAGE PATH}: where a file's data lives on the image, printed as
 * {@code xfs_io -c "fiemap -v"} prints it (or as plain {@code fiemap} with {@code --plain}): offsets
 * and block ranges in 512-byte units, holes as their own lines, the kernel's {@code FIEMAP_EXTENT_*}
 * flags in hex. The image is mounted read-only under an in-memory overlay, as {@code iomap stat} does.
 */
@Command(name = "fiemap", mixinStandardHelpOptions = true, description = "Prints the block mapping of a file"
        + " in an image as xfs_io -c \"fiemap -v\" does: file offsets and device blocks in 512-byte units, holes,"
        + " and the FIEMAP_EXTENT_* flags (0x1 last, 0x4|0x2 delayed allocation, 0x800 unwritten,"
        + " 0x2000 shared, 0x200|0x100 inline). The image is not changed.")
final class FiemapCommand implements Callable<Integer> {
    /** xfs_io asks the kernel for 32 extents at a time and sizes its columns from the first batch. */
    private static final int BATCH = 32;

    @Spec
    private CommandSpec spec;

    @Mixin
    private ImageOptions image;

    @Parameters(index = "1", paramLabel = "PATH", description = "the file in the image, e.g. /dir/file")
    private String path;

    @Option(names = "--plain", description = "one line per extent without columns or flags (xfs_io's fiemap without -v)")
    private boolean plain;

    @Option(names = "--offset", paramLabel = "BYTES", description = "first byte of the range to map (default 0)")
    private String offset;

    @Option(names = "--length", paramLabel = "BYTES", description = "bytes of the range to map (default: to EOF)")
    private String length;

    @Override
    public Integer call() throws Exception {
        long start = offset == null ? 0 : size("--offset", offset);
        long bytes = length == null ? Long.MAX_VALUE - start : size("--length", length);
        if (start < 0 || bytes < 0) {
            throw new UsageException("--offset and --length must not be negative");
        }
        PrintWriter out = spec.commandLine().getOut();
        try (BlockDevice device = image.openReadOnlyForMount()) {
            PageCacheOptions cache = CacheSettings.options("4096", List.of());
            MountOptions options = new MountOptions(cache, true, Map.of());
            try (IomapFileSystem fs = IomapFileSystems.mount(image.adapter(), device, options);
                    IomapFile file = fs.open(path)) {
                List<FileExtent> extents = file.fiemap(start, bytes, true);
                long rangeEnd = bytes >= Long.MAX_VALUE - start ? Long.MAX_VALUE : start + bytes;
                out.print(format(path, extents, start, rangeEnd, file.size(), !plain));
                out.flush();
            }
        }
        return 0;
    }

    private static long size(String option, String text) throws UsageException {
        try {
            return Units.parseSize(text, 1024);
        } catch (IllegalArgumentException e) {
            throw new UsageException(option + ": " + e.getMessage());
        }
    }

    /**
     * The report as xfs_io prints it for a range {@code [start, rangeEnd)} of a file of {@code size}
     * bytes: a line with the name, then (verbose) a header and one line per extent and per hole
     * before it, then the hole from the last extent to the end of the range or EOF, whichever is
     * first. A file without extents prints only its name.
     *
     * @param name the file's name as given
     * @param extents the extents, in file order
     * @param start the first byte asked for
     * @param rangeEnd the byte past the range asked for ({@code Long.MAX_VALUE}: to EOF)
     * @param size the file's size
     * @param verbose the table of {@code fiemap -v}, else the plain lines
     * @return the text, each line ended by a newline
     */
    static String format(String name, List<FileExtent> extents, long start, long rangeEnd, long size,
            boolean verbose) {
        StringBuilder out = new StringBuilder(name).append(":\n");
        int foffWidth = 16;
        int boffWidth = 16;
        int totalWidth = 5;
        int flagsWidth = 5;
        for (int i = 0; i < Math.min(extents.size(), BATCH); i++) {
            FileExtent e = extents.get(i);
            long logical = units(e.logical());
            long len = units(e.length());
            long block = units(e.physical());
            foffWidth = Math.max(foffWidth, ("[" + logical + ".." + (logical + len - 1) + "]").length());
            boffWidth = Math.max(boffWidth, (block + ".." + (block + len - 1)).length());
            totalWidth = Math.max(totalWidth, Long.toString(len).length());
            flagsWidth = Math.max(flagsWidth, Integer.toHexString(e.fiemapFlags()).length());
            if (e.has(FileExtent.Flag.LAST)) {
                break;
            }
        }
        String holeLine = "%4d: %-" + foffWidth + "s %-" + boffWidth + "s %" + totalWidth + "d\n";
        String extentLine = "%4d: %-" + foffWidth + "s %-" + boffWidth + "s %" + totalWidth + "d %" + flagsWidth + "s\n";
        int line = 0;
        long last = start;
        for (FileExtent e : extents) {
            long llast = units(last);
            long lstart = units(e.logical());
            long len = units(e.length());
            long block = units(e.physical());
            if (verbose && line == 0) {
                out.append(String.format(Locale.ROOT, "%4s: %-" + foffWidth + "s %-" + boffWidth + "s %" + totalWidth
                        + "s %" + flagsWidth + "s\n", "EXT", "FILE-OFFSET", "BLOCK-RANGE", "TOTAL", "FLAGS"));
            }
            if (lstart > llast) {
                hole(out, verbose, holeLine, line++, llast, lstart);
            }
            String range = "[" + lstart + ".." + (lstart + len - 1) + "]:";
            String blocks = block + ".." + (block + len - 1);
            if (verbose) {
                out.append(String.format(Locale.ROOT, extentLine, line++, range, blocks, len,
                        "0x" + Integer.toHexString(e.fiemapFlags())));
            } else {
                out.append(String.format(Locale.ROOT, "\t%d: %s %s\n", line++, range, blocks));
            }
            last = e.end();
        }
        long end = Math.min(rangeEnd, size);
        if (line > 0 && last < end) {
            hole(out, verbose, holeLine, line, units(last), units(end));
        }
        return out.toString();
    }

    private static void hole(StringBuilder out, boolean verbose, String holeLine, int line, long from, long to) {
        String range = "[" + from + ".." + (to - 1) + "]:";
        if (verbose) {
            out.append(String.format(Locale.ROOT, holeLine, line, range, "hole", to - from));
        } else {
            out.append(String.format(Locale.ROOT, "\t%d: %s hole\n", line, range));
        }
    }

    /** @return {@code bytes} in 512-byte units, rounded down (xfs_io's {@code BTOBBT}) */
    private static long units(long bytes) {
        return bytes >>> 9;
    }
}
