package dev.iomap.cli.jobfile;

import dev.iomap.cli.Units;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Turns parsed job files into {@link JobSpec}s: a job sees the {@code [global]} sections above it in
 * its own file, then its own lines (the last setting of an option wins), then fio's defaults. Each
 * file after the first starts a new group, as does {@code stonewall}.
 *
 * <p>Stateless and thread-safe.
 */
public final class JobResolver {
    /** fio's default percentiles. */
    public static final List<Double> DEFAULT_PERCENTILES = List.of(
            1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95, 99.99);
    /** fio's default random seed. */
    static final long DEFAULT_SEED = 0xb1899bedL;
    private static final int DEFAULT_BLOCK_SIZE = 4096;
    /**
     * The longest {@code runtime} and {@code ramp_time}: 100 years. A job's deadline is the start plus
     * both on the nanosecond clock, whose differences hold 292 years; each alone within 100 keeps the
     * sum within it.
     */
    static final Duration MAX_TIME = Duration.ofDays(36_500);
    private static final Set<String> SYNC_ENGINES = Set.of("psync", "sync");

    /**
     * @param files the parsed files, in command-line order
     * @return the plan
     * @throws JobFileException if a value is bad or a job cannot run (named with its line)
     */
    public BenchPlan resolve(List<JobFile> files) throws JobFileException {
        List<JobSpec> jobs = new ArrayList<>();
        Map<String, String> globalOptions = new LinkedHashMap<>();
        List<String> notes = new ArrayList<>();
        int group = 0;
        boolean groupHasJobs = false;
        for (JobFile file : files) {
            if (groupHasJobs) {
                group++;
                groupHasJobs = false;
            }
            List<OptionSetting> globals = new ArrayList<>();
            int jobsInFile = 0;
            for (Section section : file.sections()) {
                if (section.isGlobal()) {
                    globals.addAll(section.settings());
                    section.settings().forEach(s -> globalOptions.put(s.key(), s.value()));
                    continue;
                }
                Settings settings = new Settings(section, globals);
                if (settings.bool(FioOption.STONEWALL, false) && groupHasJobs) {
                    group++;
                }
                jobs.add(job(section, settings, group, notes));
                groupHasJobs = true;
                jobsInFile++;
            }
            if (jobsInFile == 0) {
                throw new JobFileException("job file " + file.path() + " defines no job: add a [name] section");
            }
        }
        BenchPlan plan = new BenchPlan(jobs, globalOptions, notes);
        checkFileBytes(plan);
        return plan;
    }

    /**
     * Refuses jobs whose files add up to more bytes than a long holds (numjobs × nrfiles × filesize
     * over 8 EiB), which no device holds either: the sum would otherwise wrap.
     */
    private static void checkFileBytes(BenchPlan plan) throws JobFileException {
        try {
            plan.fileBytes();
        } catch (ArithmeticException e) {
            throw new JobFileException("the jobs' files add up to more than " + Long.MAX_VALUE
                    + " bytes (8 EiB): lower size/filesize, nrfiles or numjobs");
        }
    }

    private static JobSpec job(Section section, Settings settings, int group, List<String> notes)
            throws JobFileException {
        String name = settings.string(FioOption.NAME, section.name());
        JobSpec.IoPattern io = ioPattern(settings);
        JobSpec.FileSet files = fileSet(section, settings, io);
        var sync = new JobSpec.SyncPolicy(
                settings.integer(FioOption.FSYNC, 0, 0, Integer.MAX_VALUE),
                settings.integer(FioOption.FDATASYNC, 0, 0, Integer.MAX_VALUE),
                settings.bool(FioOption.END_FSYNC, false),
                settings.bool(FioOption.FSYNC_ON_CLOSE, false));
        JobSpec.Timing timing = timing(section, settings);
        String engine = settings.string(FioOption.IOENGINE, JobSpec.ENGINE);
        int iodepth = settings.integer(FioOption.IODEPTH, 1, 1, 65536);
        boolean async = JobSpec.ASYNC_ENGINES.contains(engine);
        if (!SYNC_ENGINES.contains(engine) && !async) {
            notes.add(name + ": ioengine=" + engine + " is not supported, using " + JobSpec.ENGINE);
        }
        if (iodepth > 1 && !async) {
            notes.add(name + ": note: both iodepth >= 1 and synchronous I/O engine are selected,"
                    + " queue depth will be capped at 1");
        }
        Map<String, String> own = new LinkedHashMap<>();
        section.settings().forEach(s -> own.put(s.key(), s.value()));
        return new JobSpec(name, group, settings.string(FioOption.DESCRIPTION, ""),
                settings.integer(FioOption.NUMJOBS, 1, 1, 4096), io, files, sync, timing,
                settings.bool(FioOption.GROUP_REPORTING, false), settings.percentiles(), engine, iodepth,
                directIo(settings), settings.bool(FioOption.UNCACHED, false), atomic(settings), own);
    }

    private static JobSpec.IoPattern ioPattern(Settings settings) throws JobFileException {
        ReadWrite rw = ReadWrite.READ;
        OptionSetting rwSetting = settings.get(FioOption.RW);
        if (rwSetting != null) {
            rw = ReadWrite.byFioName(rwSetting.value()).orElseThrow(() -> new JobFileException(
                    "rw=" + rwSetting.value() + " at " + rwSetting.location() + " is not supported (supported: "
                    + Arrays.stream(ReadWrite.values()).map(ReadWrite::fioName).toList() + ")"));
        }
        int rwmixread = settings.integer(FioOption.RWMIXREAD, 50, 0, 100);
        if (settings.get(FioOption.RWMIXWRITE) != null && settings.get(FioOption.RWMIXREAD) == null) {
            rwmixread = 100 - settings.integer(FioOption.RWMIXWRITE, 50, 0, 100);
        }
        int[] blockSizes = settings.blockSizes();
        long seed = settings.bool(FioOption.RANDREPEAT, true)
                ? settings.longValue(FioOption.RANDSEED, DEFAULT_SEED)
                : System.nanoTime();
        return new JobSpec.IoPattern(rw, rwmixread, blockSizes[0], blockSizes[1], seed);
    }

    private static JobSpec.FileSet fileSet(Section section, Settings settings, JobSpec.IoPattern io)
            throws JobFileException {
        List<String> directories = settings.directories();
        List<String> names = settings.fileNames();
        int nrfiles = names.isEmpty() ? settings.integer(FioOption.NRFILES, 1, 1, 1 << 20) : names.size();
        OptionSetting sizeSetting = settings.get(FioOption.SIZE);
        OptionSetting fileSizeSetting = settings.get(FioOption.FILESIZE);
        if (sizeSetting == null && fileSizeSetting == null) {
            throw new JobFileException("job '" + section.name() + "' at " + section.location()
                    + " needs size= (or filesize=): iomap bench creates its files on a fresh filesystem");
        }
        long size = settings.size(FioOption.SIZE, 0);
        long fileSize = fileSizeSetting != null ? settings.size(FioOption.FILESIZE, 0) : size / nrfiles;
        long filesBytes;
        try {
            filesBytes = Math.multiplyExact(fileSize, nrfiles);
        } catch (ArithmeticException e) {
            throw new JobFileException("filesize " + fileSizeSetting.value() + " at " + fileSizeSetting.location()
                    + " times " + nrfiles + " files is more than " + Long.MAX_VALUE + " bytes (8 EiB)");
        }
        long ioSize = settings.size(FioOption.IO_SIZE, sizeSetting != null ? size : filesBytes);
        int largestBlock = Math.max(io.rw().reads() ? io.readBlockSize() : 0,
                io.rw().writes() ? io.writeBlockSize() : 0);
        OptionSetting limiting = fileSizeSetting != null ? fileSizeSetting : sizeSetting;
        if (fileSize < largestBlock) {
            throw new JobFileException("size " + limiting.value() + " at " + limiting.location()
                    + " gives files of " + fileSize + " bytes, smaller than the block size " + largestBlock);
        }
        boolean preRead = settings.bool(FioOption.PRE_READ, false);
        return new JobSpec.FileSet(names, nrfiles, directories, fileSize, ioSize, settings.fallocate(),
                settings.bool(FioOption.OVERWRITE, false), preRead,
                !preRead && settings.bool(FioOption.INVALIDATE, true),
                settings.bool(FioOption.CREATE_FSYNC, true), settings.bool(FioOption.UNLINK, false));
    }

    private static JobSpec.Timing timing(Section section, Settings settings) throws JobFileException {
        Duration runtime = settings.time(FioOption.RUNTIME, Duration.ZERO);
        boolean timeBased = settings.bool(FioOption.TIME_BASED, false);
        if (timeBased && runtime.isZero()) {
            throw new JobFileException("job '" + section.name() + "' at " + section.location()
                    + " is time_based but has no runtime=");
        }
        return new JobSpec.Timing(runtime, timeBased, settings.integer(FioOption.LOOPS, 1, 1, Integer.MAX_VALUE),
                settings.time(FioOption.RAMP_TIME, Duration.ZERO));
    }

    /** @return where {@code atomic=1} was asked for; refused without direct I/O, as fio's RWF_ATOMIC is */
    private static Optional<Location> atomic(Settings settings) throws JobFileException {
        OptionSetting atomic = settings.get(FioOption.ATOMIC);
        if (atomic == null || !settings.bool(FioOption.ATOMIC, false)) {
            return Optional.empty();
        }
        if (directIo(settings).isEmpty()) {
            throw new JobFileException("atomic=1 at " + atomic.location() + " needs direct=1: atomic writes"
                    + " (RWF_ATOMIC) are direct I/O only");
        }
        return Optional.of(atomic.location());
    }

    private static Optional<Location> directIo(Settings settings) throws JobFileException {
        OptionSetting direct = settings.get(FioOption.DIRECT);
        if (direct != null && settings.bool(FioOption.DIRECT, false)) {
            return Optional.of(direct.location());
        }
        OptionSetting buffered = settings.get(FioOption.BUFFERED);
        if (buffered != null && !settings.bool(FioOption.BUFFERED, true)) {
            return Optional.of(buffered.location());
        }
        return Optional.empty();
    }

    /** The effective settings of one job, with typed getters whose errors name value and line. */
    private static final class Settings {
        private final Map<FioOption, OptionSetting> effective = new EnumMap<>(FioOption.class);
        private final int kbBase;

        Settings(Section job, List<OptionSetting> globals) throws JobFileException {
            globals.forEach(s -> effective.put(s.option(), s));
            job.settings().forEach(s -> effective.put(s.option(), s));
            int base = integer(FioOption.KB_BASE, 1024, 1000, 1024);
            if (base != 1000 && base != 1024) {
                OptionSetting s = effective.get(FioOption.KB_BASE);
                throw new JobFileException("bad kb_base '" + s.value() + "' at " + s.location() + ": use 1024 or 1000");
            }
            kbBase = base;
        }

        OptionSetting get(FioOption option) {
            return effective.get(option);
        }

        String string(FioOption option, String fallback) {
            OptionSetting s = effective.get(option);
            return s == null ? fallback : s.value();
        }

        long size(FioOption option, long fallback) throws JobFileException {
            OptionSetting s = effective.get(option);
            if (s == null) {
                return fallback;
            }
            if (s.value().endsWith("%")) {
                throw bad(s, "size", "sizes in percent need existing files; give bytes, e.g. 64m");
            }
            try {
                return Units.parseSize(s.value(), kbBase);
            } catch (IllegalArgumentException e) {
                throw bad(s, "size", e.getMessage());
            }
        }

        Duration time(FioOption option, Duration fallback) throws JobFileException {
            OptionSetting s = effective.get(option);
            if (s == null) {
                return fallback;
            }
            Duration time;
            try {
                time = Units.parseTime(s.value());
            } catch (IllegalArgumentException e) {
                throw bad(s, "time", e.getMessage());
            }
            if (time.compareTo(MAX_TIME) > 0) {
                throw bad(s, "time", "more than " + s.key() + "'s limit of " + MAX_TIME.toDays() + "d (100 years)");
            }
            return time;
        }

        boolean bool(FioOption option, boolean fallback) throws JobFileException {
            OptionSetting s = effective.get(option);
            if (s == null) {
                return fallback;
            }
            try {
                return Units.parseBoolean(s.value());
            } catch (IllegalArgumentException e) {
                throw bad(s, "value", e.getMessage());
            }
        }

        int integer(FioOption option, int fallback, int min, int max) throws JobFileException {
            OptionSetting s = effective.get(option);
            if (s == null) {
                return fallback;
            }
            try {
                return Units.parseInt(s.value(), min, max);
            } catch (IllegalArgumentException e) {
                throw bad(s, "value", e.getMessage());
            }
        }

        long longValue(FioOption option, long fallback) throws JobFileException {
            OptionSetting s = effective.get(option);
            if (s == null) {
                return fallback;
            }
            try {
                return Long.parseLong(s.value().strip());
            } catch (NumberFormatException e) {
                throw bad(s, "value", "not an integer");
            }
        }

        /** fio's {@code bs=R[,W[,T]]}; an empty part keeps the default. */
        int[] blockSizes() throws JobFileException {
            OptionSetting s = effective.get(FioOption.BS);
            int[] sizes = {DEFAULT_BLOCK_SIZE, DEFAULT_BLOCK_SIZE};
            if (s == null) {
                return sizes;
            }
            String[] parts = s.value().split("[,/]", -1);
            for (int i = 0; i < 2; i++) {
                String part = parts[Math.min(i, parts.length - 1)].strip();
                if (part.isEmpty()) {
                    continue;
                }
                if (part.contains("-") || part.contains(":")) {
                    throw bad(s, "block size", "block size ranges are not supported; give one size");
                }
                long bytes;
                try {
                    bytes = Units.parseSize(part, kbBase);
                } catch (IllegalArgumentException e) {
                    throw bad(s, "block size", e.getMessage());
                }
                if (bytes < 1 || bytes > (64 << 20)) {
                    throw bad(s, "block size", "must be from 1 byte to 64 MiB");
                }
                sizes[i] = (int) bytes;
            }
            return sizes;
        }

        List<String> directories() throws JobFileException {
            OptionSetting s = effective.get(FioOption.DIRECTORY);
            if (s == null) {
                return List.of("/");
            }
            List<String> directories = new ArrayList<>();
            for (String part : splitColons(s.value())) {
                directories.add(absolute(s, part));
            }
            return directories;
        }

        List<String> fileNames() throws JobFileException {
            OptionSetting s = effective.get(FioOption.FILENAME);
            if (s == null) {
                return List.of();
            }
            List<String> names = new ArrayList<>();
            for (String part : splitColons(s.value())) {
                if (part.equals("-")) {
                    throw bad(s, "file name", "stdin/stdout ('-') is not a file of the benchmarked filesystem");
                }
                String path = part.startsWith("/") ? absolute(s, part) : relative(s, part);
                names.add(path);
            }
            return names;
        }

        Fallocate fallocate() throws JobFileException {
            OptionSetting s = effective.get(FioOption.FALLOCATE);
            if (s == null) {
                return Fallocate.NATIVE;
            }
            return switch (s.value().strip().toLowerCase(Locale.ROOT)) {
                case "none", "0" -> Fallocate.NONE;
                case "native" -> Fallocate.NATIVE;
                case "posix", "1" -> Fallocate.POSIX;
                case "keep" -> Fallocate.KEEP;
                case "truncate" -> Fallocate.TRUNCATE;
                default -> throw bad(s, "value", "expected none, native, posix, keep or truncate");
            };
        }

        List<Double> percentiles() throws JobFileException {
            OptionSetting s = effective.get(FioOption.PERCENTILE_LIST);
            if (s == null) {
                return DEFAULT_PERCENTILES;
            }
            List<Double> list = new ArrayList<>();
            for (String part : s.value().split(":")) {
                double value;
                try {
                    value = Double.parseDouble(part.strip());
                } catch (NumberFormatException e) {
                    throw bad(s, "percentile list", "'" + part + "' is not a number");
                }
                if (!(value > 0 && value <= 100)) {
                    throw bad(s, "percentile list", value + " is not in (0, 100]");
                }
                list.add(value);
            }
            if (list.size() > 20) {
                throw bad(s, "percentile list", "at most 20 percentiles");
            }
            return list;
        }

        private static String absolute(OptionSetting s, String path) throws JobFileException {
            return "/" + String.join("/", segments(s, path));
        }

        private static String relative(OptionSetting s, String path) throws JobFileException {
            return String.join("/", segments(s, path));
        }

        private static List<String> segments(OptionSetting s, String path) throws JobFileException {
            List<String> segments = new ArrayList<>();
            for (String segment : path.split("/")) {
                if (segment.isEmpty() || segment.equals(".")) {
                    continue;
                }
                if (segment.equals("..")) {
                    throw bad(s, "path", "'..' cannot leave the benchmarked filesystem's root");
                }
                segments.add(segment);
            }
            if (segments.isEmpty() && !path.startsWith("/") && !path.startsWith(".")) {
                throw bad(s, "path", "empty");
            }
            return segments;
        }

        /** fio separates several names with ':' and escapes a ':' in a name with '\'. */
        private static List<String> splitColons(String value) {
            List<String> parts = new ArrayList<>();
            var current = new StringBuilder();
            for (int i = 0; i < value.length(); i++) {
                char c = value.charAt(i);
                if (c == '\\' && i + 1 < value.length() && value.charAt(i + 1) == ':') {
                    current.append(':');
                    i++;
                } else if (c == ':') {
                    parts.add(current.toString());
                    current.setLength(0);
                } else {
                    current.append(c);
                }
            }
            parts.add(current.toString());
            return parts;
        }

        private static JobFileException bad(OptionSetting s, String what, String why) {
            return new JobFileException("bad " + what + " '" + s.value() + "' for " + s.key() + " at "
                    + s.location() + ": " + why);
        }
    }
}
