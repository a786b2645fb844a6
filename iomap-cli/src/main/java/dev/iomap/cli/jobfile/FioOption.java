package dev.iomap.cli.jobfile;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Stream;

/**
 * The fio options {@code iomap bench} understands, by fio's name and aliases. Every other key is an
 * error: "unknown option" for a name fio does not have either, "not supported" for one of fio's
 * (the names of fio 3.33, kept in {@code fio-options.txt}).
 */
public enum FioOption {
    NAME("name"),
    DESCRIPTION("description"),
    RW("rw", "readwrite"),
    RWMIXREAD("rwmixread"),
    RWMIXWRITE("rwmixwrite"),
    BS("bs", "blocksize"),
    SIZE("size"),
    FILESIZE("filesize"),
    IO_SIZE("io_size", "io_limit"),
    NUMJOBS("numjobs"),
    NRFILES("nrfiles", "nr_files"),
    FILENAME("filename"),
    DIRECTORY("directory", "dir"),
    FSYNC("fsync"),
    FDATASYNC("fdatasync"),
    END_FSYNC("end_fsync"),
    FSYNC_ON_CLOSE("fsync_on_close"),
    CREATE_FSYNC("create_fsync"),
    RUNTIME("runtime", "timeout"),
    TIME_BASED("time_based"),
    LOOPS("loops", "loop"),
    RAMP_TIME("ramp_time"),
    OVERWRITE("overwrite"),
    PRE_READ("pre_read"),
    INVALIDATE("invalidate"),
    FALLOCATE("fallocate"),
    UNLINK("unlink"),
    GROUP_REPORTING("group_reporting"),
    STONEWALL("stonewall", "wait_for_previous"),
    PERCENTILE_LIST("percentile_list"),
    RANDREPEAT("randrepeat"),
    RANDSEED("randseed"),
    KB_BASE("kb_base"),
    IOENGINE("ioengine"),
    IODEPTH("iodepth"),
    DIRECT("direct"),
    BUFFERED("buffered"),
    /** fio's {@code uncached=1} (newer than fio 3.33, so not in {@code fio-options.txt}): {@code RWF_DONTCACHE}. */
    UNCACHED("uncached"),
    /** fio's {@code atomic=1}: writes with {@code RWF_ATOMIC} (with {@code direct=1} only). */
    ATOMIC("atomic"),
    THREAD("thread");

    private static final Map<String, FioOption> BY_KEY = new HashMap<>();

    static {
        for (FioOption option : values()) {
            for (String key : option.keys) {
                BY_KEY.put(key, option);
            }
        }
    }

    @SuppressWarnings("ImmutableEnumChecker") // Stream.toList(): an unmodifiable list
    private final List<String> keys;

    FioOption(String name, String... aliases) {
        this.keys = Stream.concat(Stream.of(name), Arrays.stream(aliases)).toList();
    }

    /** @return fio's name of the option */
    public String fioName() {
        return keys.getFirst();
    }

    /**
     * @param key a key as written in a job file (case does not matter)
     * @return the option, if {@code iomap bench} supports it
     */
    public static Optional<FioOption> byKey(String key) {
        return Optional.ofNullable(BY_KEY.get(key.toLowerCase(Locale.ROOT)));
    }

    /**
     * @param key a key as written in a job file
     * @return whether fio itself has an option of that name
     */
    public static boolean isFioOption(String key) {
        return FioNames.NAMES.contains(key.toLowerCase(Locale.ROOT));
    }

    /** fio's option names, loaded on first use. */
    private static final class FioNames {
        static final Set<String> NAMES = load();

        private static Set<String> load() {
            Set<String> names = new HashSet<>();
            try (InputStream in = FioOption.class.getResourceAsStream("fio-options.txt")) {
                if (in == null) {
                    throw new IllegalStateException("fio-options.txt is missing from the class path");
                }
                var reader = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8));
                for (String line = reader.readLine(); line != null; line = reader.readLine()) {
                    String name = line.strip();
                    if (!name.isEmpty() && !name.startsWith("#")) {
                        names.add(name);
                    }
                }
            } catch (IOException e) {
                throw new UncheckedIOException("cannot read fio-options.txt", e);
            }
            return Set.copyOf(names);
        }
    }
}
