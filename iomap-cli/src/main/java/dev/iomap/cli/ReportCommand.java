package dev.iomap.cli;

import dev.iomap.cli.report.html.VsKernelHtmlReport;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code iomap report vs-kernel RESULTS --output FILE}: turns {@code bench/vs-kernel.sh}'s per-run result
 * lines into its HTML report (the script calls it for {@code --report}). Hidden: a tool of the scripts.
 */
@Command(name = "report", hidden = true, mixinStandardHelpOptions = true,
        description = "Writes the HTML report of bench/vs-kernel.sh's results (used by its --report).")
final class ReportCommand implements Callable<Integer> {

    @Parameters(index = "0", paramLabel = "KIND", description = "vs-kernel")
    private String kind;

    @Parameters(index = "1", paramLabel = "RESULTS", description = "the script's results file: WORKLOAD ROUND"
            + " SYSTEM MiB/s IOPS p50us p99us WA, tab-separated, one run a line")
    private Path results;

    @Option(names = "--header", paramLabel = "FILE", description = "lines to show above the charts")
    private Path header;

    @Option(names = {"-o", "--output"}, paramLabel = "FILE", required = true, description = "the HTML file to write")
    private Path output;

    @Override
    public Integer call() throws Exception {
        if (!kind.equals("vs-kernel")) {
            throw new UsageException("iomap report knows vs-kernel only, not " + kind);
        }
        List<VsKernelHtmlReport.Run> runs = new ArrayList<>();
        for (String line : Files.readAllLines(results, StandardCharsets.UTF_8)) {
            if (!line.isBlank()) {
                runs.add(VsKernelHtmlReport.Run.parse(line));
            }
        }
        String top = header == null ? "" : Files.readString(header, StandardCharsets.UTF_8);
        Files.writeString(output, VsKernelHtmlReport.of(runs, top), StandardCharsets.UTF_8);
        return 0;
    }
}
