package dev.iomap.cli;

import dev.iomap.device.BlockDevice;
import dev.iomap.api.CorruptFileSystemException;
import dev.iomap.api.FsckOptions;
import dev.iomap.api.FsckReport;
import dev.iomap.api.IomapFileSystems;
import java.io.PrintWriter;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/**
 * {@code iomap fsck}: checks an unmounted image; exit status 0 if clean, 1 with the problems listed.
 * The first line names the adapter and, where the image's superblock says it, the block size:
 * {@code IMAGE: clean (xfs-like, 4096-byte blocks; checked ...)}.
 */
@Command(name = "fsck", mixinStandardHelpOptions = true, description = "Checks an unmounted image without changing it"
        + " (read-only: other checks may run at once, a mount or mkfs may not). Exit status 0: clean;"
        + " 1: problems found (listed) or the image could not be read.")
final class FsckCommand implements Callable<Integer> {

    @Spec
    private CommandSpec spec;

    @Mixin
    private ImageOptions image;

    @Option(names = "--scrub", description = "Also read every data extent and verify its checksum, listing each bad"
            + " one by inode and file offset (adapters with data checksums: bcachefs-like). Reads the whole image.")
    private boolean scrub;

    @Override
    @SuppressWarnings("try") // the line shows while the check reads
    public Integer call() throws Exception {
        PrintWriter out = spec.commandLine().getOut();
        FsckReport report;
        try (BlockDevice device = image.openReadOnly();
                StatusLine line = StatusLine.start(spec.commandLine().getErr(), (scrub ? "scrubbing " : "checking ")
                        + image.name() + " (bytes read)", () -> device.stats().bytesRead(), 0)) {
            report = IomapFileSystems.fsck(image.adapter(), device, scrub ? FsckOptions.SCRUB : FsckOptions.METADATA);
        } catch (CorruptFileSystemException e) {
            report = new FsckReport(List.of(e.getMessage()), "nothing: the image is not readable as " + image.adapter());
        }
        String format = image.adapter() + image.probedBlockSize().stream()
                .mapToObj(blockSize -> ", " + blockSize + "-byte blocks").findFirst().orElse("");
        if (report.isClean()) {
            out.println(image.name() + ": clean (" + format + "; checked " + report.checked() + ")");
            return 0;
        }
        out.println(image.name() + ": " + report.problems().size() + " problem" + (report.problems().size() == 1 ? "" : "s")
                + " (" + format + "; checked " + report.checked() + "):");
        report.problems().forEach(problem -> out.println("  " + problem));
        return 1;
    }
}
