package dev.iomap.cli;

import dev.iomap.api.IomapFileSystems;
import dev.iomap.api.PageCacheOptions;
import dev.iomap.cli.bench.BenchRunner;
import dev.iomap.cli.bench.BenchSettings;
import dev.iomap.cli.bench.DeviceSpec;
import dev.iomap.cli.bench.ZoneOptions;
import dev.iomap.devices.ZoneLayout;
import dev.iomap.cli.bench.Progress;
import dev.iomap.cli.bench.RunResult;
import dev.iomap.cli.jobfile.BenchPlan;
import dev.iomap.cli.jobfile.JobFile;
import dev.iomap.cli.jobfile.JobFileException;
import dev.iomap.cli.jobfile.JobFileParser;
import dev.iomap.cli.jobfile.JobResolver;
import dev.iomap.cli.report.CompareReport;
import dev.iomap.cli.report.JsonReport;
import dev.iomap.cli.report.TextReport;
import dev.iomap.cli.report.html.BenchHtmlReport;
import dev.iomap.spi.ProbedFormat;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.function.Consumer;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code iomap bench JOBFILE...}: runs fio job files in process against an adapter. */
@Command(name = "bench", mixinStandardHelpOptions = true,
        sortOptions = false,
        description = {
            "Runs fio job files against an adapter and reports write amplification too.",
            "",
            "Formats a fresh device with the adapter, mounts it, and runs the jobs in process as threads with"
                    + " fio's psync engine. Reports what fio reports (IOPS, bandwidth, latency percentiles) plus"
                    + " the page cache's and device's counters: write amplification = device bytes written /"
                    + " bytes the jobs wrote. Each job file is its own reporting group."})
final class BenchCommand implements Callable<Integer> {
    private static final Duration PROGRESS_AFTER = Duration.ofSeconds(2);

    @Spec
    private CommandSpec spec;

    @Parameters(paramLabel = "JOBFILE", arity = "1..*", description = "fio job files, run one after another")
    private List<Path> jobFiles;

    @Option(names = "--adapter", paramLabel = "NAME",
            description = "the filesystem adapter (default: with --device file:PATH, the one whose superblock the"
                    + " image holds; otherwise " + ImageOptions.DEFAULT_ADAPTER + ")")
    private String adapter;

    @Option(names = "--device", defaultValue = "ram", paramLabel = "DEVICE",
            description = "ram, ram:SIZE or file:PATH[,cache=host][,size=SIZE][,prealloc=full] (default: ram, sized for"
                    + " the jobs' files; prealloc=full writes zeroes over the whole image first, so that the host"
                    + " holds it written and the jobs' writes are overwrites there)")
    private String device;

    @Option(names = "--force", description = "with --device file:PATH, reformat PATH even if it holds a filesystem")
    private boolean force;

    @Option(names = "--zones", paramLabel = "ZONES",
            description = "for an adapter that needs a zoned device (zonefs-like): the zones emulated over the"
                    + " device, zone-size=SIZE[,conventional=N,capacity=SIZE,max-open=N] (as many zones as the"
                    + " device holds; default with --device file:PATH holding a zoned image: its zones)")
    private String zones;

    /** The zones of the {@code --device file:} image, if it holds a zoned device; else null. */
    private ZoneLayout imageZones;

    @Option(names = "--page-size", paramLabel = "SIZE",
            description = "page size of the cache, 4k to 64k (default: 4096; blocks larger than a page get folios"
                    + " of at least one block, the kernel's minimum folio order)")
    private String pageSize;

    @Option(names = "--block-size", paramLabel = "SIZE",
            description = "filesystem block size to format with (default: with --device file:PATH, what the"
                    + " image's superblock says; otherwise " + ImageOptions.DEFAULT_BLOCK_SIZE + ")")
    private String blockSize;

    /** The adapter and block size to format with: the options', or the image's once it is probed. */
    private ProbedFormat format;

    @Option(names = "--set", paramLabel = "KEY=VALUE",
            description = "a page-cache option by its PageCacheOptions name, e.g. perBlockDirty=false,"
                    + " maxFolioOrder=0, stateLock=SEPARATE, dirtyLimitBytes=128m (repeatable)")
    private List<String> settings = new ArrayList<>();

    @Option(names = {"-O", "--fs-option"}, paramLabel = "KEY[=VALUE]",
            description = "an option of the adapter, e.g. -O data=journal (repeatable; also a comma list);"
                    + " an adapter refuses options it does not know")
    private List<String> fsOptions = new ArrayList<>();

    @Option(names = "--compare", paramLabel = "KEY=V1,V2",
            description = {"run the jobs once per value, alternating, and print the results side by side in one"
                    + " table (app, data and metadata bytes written, write amplification, adapter counters,"
                    + " speeds) with ratios to the first value. KEY is a --set key (perBlockDirty=false,true),"
                    + " fs.KEY an adapter option (fs.data=ordered,journal), or 'adapter' for adapters, each"
                    + " formatted and mounted with the options after its name separated by ':'"
                    + " (adapter=gfs2-like,gfs2-like:data=journal,xfs-like). -O options apply to every value"})
    private String compare;

    @Option(names = "--repeat", defaultValue = "1", paramLabel = "N",
            description = "with --compare: runs per value (default: ${DEFAULT-VALUE})")
    private int repeat;

    @Option(names = "--warmup", defaultValue = "0", paramLabel = "N",
            description = {"first run the jobs N times, unmeasured, each on a fresh RAM device with the same"
                    + " adapter and page-cache settings, so that the measured run meets a JVM whose compilers"
                    + " have done their work (for a size-bound job fio's ramp_time cannot do it); a fresh image"
                    + " file stays fresh for the measured run (default: ${DEFAULT-VALUE})"})
    private int warmup;

    @Option(names = "--output-format", defaultValue = "normal", paramLabel = "FORMAT",
            description = "normal, json, or normal,json (default: ${DEFAULT-VALUE})")
    private String outputFormat;

    @Option(names = "--output", paramLabel = "FILE", description = "write the report to FILE instead of stdout")
    private Path output;

    @Option(names = "--report", paramLabel = "FILE", description = "also write an HTML report with charts to FILE"
            + " (bandwidth over time, latency percentiles and histogram, write amplification, folio orders;"
            + " self-contained, opens offline)")
    private Path report;

    @Option(names = "--progress", defaultValue = "auto", paramLabel = "WHEN",
            description = "progress line on stderr: auto (when a run lasts over 2 s and stderr is a terminal),"
                    + " always, never (default: ${DEFAULT-VALUE})")
    private String progress;

    @Option(names = "--no-flusher", description = "mount without background writeback (device traffic only"
            + " from syncs, dirty limits and unmount)")
    private boolean noFlusher;

    @Override
    public Integer call() throws Exception {
        Formats formats = Formats.parse(outputFormat);
        BenchPlan plan = plan();
        PrintWriter err = spec.commandLine().getErr();
        plan.notes().forEach(err::println);
        err.flush();
        format = imageOptions(null).formatOfImageOrGiven();
        BenchSettings base = settings();
        BenchRunner.checkDirectIo(plan, format.adapter());
        BenchRunner.checkFileNames(plan);
        if (base.device() instanceof DeviceSpec.ImageFile file) {
            Path image = file.path();
            if (!force) {
                MkfsCommand.refuseFormatted(image);
            }
            format = imageOptions(image).formatOfImageOrGiven();
            imageZones = MkfsCommand.existingZones(image, format.blockSize());
            base = settings();
        } else if (base.device() instanceof DeviceSpec.Nbd nbd && !force) {
            MkfsCommand.refuseFormatted(nbd.export());
        }
        if (warmup < 0) {
            throw new UsageException("--warmup must be at least 0, got " + warmup);
        }
        if (report != null && compare != null) {
            throw new UsageException("--report charts one run; run each variant with its own --report instead of --compare");
        }
        try (Output out = Output.open(output, spec.commandLine().getOut())) {
            boolean failed = compare == null ? runOnce(plan, base, formats, out.writer())
                    : runComparison(plan, formats, out.writer());
            return failed ? 1 : 0;
        }
    }

    private BenchPlan plan() throws JobFileException, IOException {
        JobFileParser parser = new JobFileParser(System.getenv());
        List<JobFile> files = new ArrayList<>();
        for (Path path : jobFiles) {
            files.add(parser.parse(path));
        }
        return new JobResolver().resolve(files);
    }

    /**
     * Runs the jobs {@link #warmup} times on a RAM device of the automatic size with {@code settings}
     * otherwise, discarding the results (a failure still fails the command), then collects the garbage
     * they left, so that the measured run starts from a clean heap and the RAM devices' memory is given
     * back.
     */
    private void warmUp(BenchPlan plan, BenchSettings settings) throws Exception {
        if (warmup == 0) {
            return;
        }
        BenchSettings onRam = new BenchSettings(settings.adapter(), new DeviceSpec.Ram(0), settings.blockSize(),
                settings.pageCache(), settings.backgroundWriteback(), settings.adapterOptions(), settings.zones());
        PrintWriter err = spec.commandLine().getErr();
        for (int i = 1; i <= warmup; i++) {
            err.println("warm-up " + i + "/" + warmup + " on " + onRam.device().describe(
                    onRam.device().capacityFor(plan.fileBytes(), onRam.blockSize())));
            err.flush();
            RunResult run = new BenchRunner(onRam, line -> { }, warnings(), Progress.none()).run(plan);
            reportErrors(run);
            if (run.failed()) {
                throw new UsageException("the warm-up run failed; nothing was measured");
            }
        }
        System.gc();
    }

    private boolean runOnce(BenchPlan plan, BenchSettings settings, Formats formats, PrintWriter out)
            throws Exception {
        warmUp(plan, settings);
        TextReport text = new TextReport(out);
        Consumer<String> notices = line -> { };
        if (formats.normal()) {
            text.preamble(plan, settings, IomapCli.version());
            notices = line -> {
                out.println(line);
                out.flush();
            };
        }
        RunResult run = new BenchRunner(settings, notices, warnings(), progress()).run(plan);
        if (formats.normal()) {
            text.results(run);
        }
        if (formats.json()) {
            out.print(JsonReport.of(run, plan, IomapCli.version()));
        }
        if (report != null) {
            Files.writeString(report, BenchHtmlReport.of(run, IomapCli.version()), StandardCharsets.UTF_8);
        }
        out.flush();
        reportErrors(run);
        return run.failed();
    }

    /** @return lines for standard error, each flushed at once */
    private Consumer<String> warnings() {
        PrintWriter err = spec.commandLine().getErr();
        return line -> {
            err.println(line);
            err.flush();
        };
    }

    private boolean runComparison(BenchPlan plan, Formats formats, PrintWriter out) throws Exception {
        CompareVariants compared = CompareVariants.parse(compare);
        if (compared.comparesAdapters() && adapter != null) {
            throw new UsageException("--adapter " + adapter + " and --compare adapter=... both choose the adapter:"
                    + " give one");
        }
        if (repeat < 1) {
            throw new UsageException("--repeat must be at least 1, got " + repeat);
        }
        List<CompareVariants.Variant> variants = compared.variants();
        for (CompareVariants.Variant variant : variants) {
            Optional<String> unknown = variant.adapter().filter(name -> !IomapFileSystems.adapters().contains(name));
            if (unknown.isPresent()) {
                throw new UsageException("bad --compare '" + compare + "': no adapter named '" + unknown.get()
                        + "' (adapters: " + String.join(", ", IomapFileSystems.adapters()) + ")");
            }
        }
        List<BenchSettings> perValue = new ArrayList<>();
        for (CompareVariants.Variant variant : variants) {
            perValue.add(settings(variant));
        }
        warmUp(plan, perValue.getFirst());
        List<List<RunResult>> runs = new ArrayList<>();
        variants.forEach(variant -> runs.add(new ArrayList<>()));
        PrintWriter err = spec.commandLine().getErr();
        boolean failed = false;
        int total = repeat * variants.size();
        for (int round = 0; round < repeat; round++) {
            for (int v = 0; v < variants.size(); v++) {
                int number = round * variants.size() + v + 1;
                err.println("run " + number + "/" + total + ": " + compared.key() + "=" + variants.get(v).label());
                err.flush();
                RunResult run = new BenchRunner(perValue.get(v), line -> { }, warnings(), progress()).run(plan);
                reportErrors(run);
                failed |= run.failed();
                runs.get(v).add(run);
            }
        }
        CompareReport report = new CompareReport(compared.key(), compared.labels(), runs);
        if (formats.normal()) {
            BenchSettings first = perValue.getFirst();
            out.print(report.text((compared.comparesAdapters() ? "" : "adapter " + first.adapter() + ", ")
                    + "block size " + first.blockSize() + ", page size " + first.pageCache().pageSize() + ", device "
                    + device + (fsOptions.isEmpty() ? "" : ", -O " + FsOptions.format(FsOptions.parse(fsOptions)))));
        }
        if (formats.json()) {
            out.print(report.json(plan, IomapCli.version()));
        }
        out.flush();
        return failed;
    }

    private void reportErrors(RunResult run) {
        PrintWriter err = spec.commandLine().getErr();
        run.groups().forEach(group -> group.threads().forEach(thread -> thread.error().ifPresent(error ->
                err.println("iomap: job " + thread.job().name() + " thread " + thread.thread() + ": " + error))));
        err.flush();
    }

    /** @return the settings from the options alone */
    private BenchSettings settings() throws UsageException {
        return settings(new CompareVariants.Variant("", Optional.empty(), Map.of(), Optional.empty()));
    }

    /**
     * @param variant a {@code --compare} column: its adapter replaces the command's, its adapter options
     *     are added to {@code -O}'s, its page-cache setting is applied after {@code --set}'s
     * @return the settings it runs with
     */
    private BenchSettings settings(CompareVariants.Variant variant) throws UsageException {
        List<CacheSettings.Assignment> assignments = new ArrayList<>();
        for (String setting : settings) {
            assignments.add(CacheSettings.Assignment.parse(setting));
        }
        variant.cacheSetting().ifPresent(assignments::add);
        String pages = pageSize != null ? pageSize : "4096";
        PageCacheOptions cache = CacheSettings.options(pages, assignments);
        Map<String, String> options = new LinkedHashMap<>(FsOptions.parse(fsOptions));
        options.putAll(variant.fsOptions());
        String adapterName = variant.adapter().orElse(format.adapter());
        return new BenchSettings(adapterName, DeviceSpec.parse(device),
                format.blockSize(), cache, !noFlusher, options, zonesFor(adapterName));
    }

    /**
     * @param adapterName the adapter a run formats with
     * @return the zones to emulate for it: {@code --zones}, or the image's own; none for an adapter
     *     that takes a plain device
     * @throws UsageException if an adapter that needs zones has none, or one that does not is given them
     */
    private Optional<ZoneOptions> zonesFor(String adapterName) throws UsageException {
        if (!Adapters.named(adapterName).requiresZonedDevice()) {
            if (zones != null && compare == null) {
                throw new UsageException(adapterName + " takes a plain block device, not zones: leave out --zones");
            }
            return Optional.empty();
        }
        if (zones != null) {
            return Optional.of(ZoneOptions.parse(zones));
        }
        if (imageZones != null) {
            return Optional.of(ZoneOptions.of(imageZones));
        }
        throw new UsageException(adapterName + " needs a zoned device: give --zones zone-size=SIZE[,conventional=N,"
                + "capacity=SIZE,max-open=N]");
    }

    /**
     * @param image the {@code --device file:} image, or null for the options alone
     * @return {@code --adapter} and {@code --block-size} as image options, so that a file device is
     *     probed as fsck, stat and mount probe their image (a disagreeing option refused in one line)
     */
    private ImageOptions imageOptions(Path image) {
        var options = new ImageOptions();
        options.adapter = adapter;
        options.blockSize = blockSize;
        options.image = image;
        return options;
    }

    private Progress progress() throws UsageException {
        PrintWriter terminal = spec.commandLine().getErr();
        return switch (progress.toLowerCase(Locale.ROOT)) {
            case "never" -> Progress.none();
            case "always" -> Progress.terminal(terminal, PROGRESS_AFTER);
            case "auto" -> Terminal.stderrIsTerminal() ? Progress.terminal(terminal, PROGRESS_AFTER) : Progress.none();
            default -> throw new UsageException("bad --progress '" + progress + "': use auto, always or never");
        };
    }

    /** Which reports to print. */
    private record Formats(boolean normal, boolean json) {
        static Formats parse(String text) throws UsageException {
            boolean normal = false;
            boolean json = false;
            for (String part : text.split(",")) {
                switch (part.strip().toLowerCase(Locale.ROOT)) {
                    case "normal" -> normal = true;
                    case "json" -> json = true;
                    default -> throw new UsageException("bad --output-format '" + text + "': use normal, json or"
                            + " normal,json");
                }
            }
            return new Formats(normal, json);
        }
    }

    /** Standard output, or the {@code --output} file. */
    private record Output(PrintWriter writer, boolean ownsWriter) implements AutoCloseable {
        static Output open(Path file, PrintWriter stdout) throws IOException {
            if (file == null) {
                return new Output(stdout, false);
            }
            return new Output(new PrintWriter(Files.newBufferedWriter(file, StandardCharsets.UTF_8)), true);
        }

        @Override
        public void close() {
            writer.flush();
            if (ownsWriter) {
                writer.close();
            }
        }
    }
}
