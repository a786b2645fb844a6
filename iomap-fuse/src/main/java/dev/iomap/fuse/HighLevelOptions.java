package dev.iomap.fuse;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * The {@code -o} options of libfuse's high-level API ({@code struct fuse_config}), which fstab lines and
 * scripts written for a high-level mount pass and {@code fuse_session_new} refuses: those that still mean something become the
 * mount's {@link CacheMode} ({@code attr_timeout}, {@code entry_timeout}, {@code direct_io},
 * {@code writeback_cache}); those the low-level binding makes moot ({@code use_ino}, {@code readdir_ino},
 * {@code hard_remove}: node ids are inode numbers and no name is ever hidden; {@code kernel_cache},
 * {@code auto_cache}, {@code noauto_cache}, {@code negative_timeout}, {@code ac_attr_timeout},
 * {@code remember}, {@code noforget}, {@code nopath}, {@code intr}, {@code intr_signal}) are dropped with
 * a note in the log; the atime options the mount applies itself ({@link AtimePolicy}) are taken out.
 * Everything else goes to libfuse as before.
 *
 * @param libfuse the options left for {@code fuse_session_new}, one per element
 * @param attributeTimeout {@code attr_timeout} in seconds, or null
 * @param entryTimeout {@code entry_timeout} in seconds, or null
 * @param directIo whether {@code direct_io} was given (every open direct)
 * @param writebackCache whether {@code writeback_cache} was given
 */
record HighLevelOptions(List<String> libfuse, Double attributeTimeout, Double entryTimeout, boolean directIo,
        boolean writebackCache) {
    private static final System.Logger LOG = System.getLogger(HighLevelOptions.class.getName());
    private static final Set<String> MOOT = Set.of("use_ino", "readdir_ino", "hard_remove", "kernel_cache", "auto_cache",
            "noauto_cache", "negative_timeout", "ac_attr_timeout", "remember", "noforget", "nopath", "intr",
            "intr_signal");
    /**
     * Atime options libfuse does not take ({@code noatime} it passes to the kernel):
     * the mount applies them itself ({@link AtimePolicy}), as the kernel leaves a FUSE file's access time to
     * its file system.
     */
    private static final Set<String> ATIME = Set.of("atime", "relatime", "norelatime", "strictatime",
            "nostrictatime", "diratime", "nodiratime", "lazytime", "nolazytime");

    /**
     * @param options {@code -o} options as given, each possibly a comma list
     * @return them split into libfuse's and the high-level ones
     * @throws IllegalArgumentException for a timeout that is not a number of seconds, at least 0
     */
    static HighLevelOptions of(List<String> options) {
        List<String> libfuse = new ArrayList<>();
        Double attribute = null;
        Double entry = null;
        boolean direct = false;
        boolean writeback = false;
        for (String list : options) {
            for (String option : list.split(",")) {
                String key = option.contains("=") ? option.substring(0, option.indexOf('=')) : option;
                String value = option.substring(key.length() + (option.contains("=") ? 1 : 0));
                switch (key) {
                    case "attr_timeout" -> attribute = seconds(option, value);
                    case "entry_timeout" -> entry = seconds(option, value);
                    case "direct_io" -> direct = true;
                    case "writeback_cache" -> writeback = true;
                    case "" -> { }
                    default -> {
                        if (ATIME.contains(key)) {
                            continue;
                        }
                        if (MOOT.contains(key)) {
                            LOG.log(System.Logger.Level.INFO, "-o " + option + ": not needed on libfuse's"
                                    + " low-level API (node ids are inode numbers, no name is hidden); ignored");
                        } else {
                            libfuse.add(option);
                        }
                    }
                }
            }
        }
        return new HighLevelOptions(List.copyOf(libfuse), attribute, entry, direct, writeback);
    }

    private static double seconds(String option, String value) {
        try {
            double seconds = Double.parseDouble(value);
            if (seconds >= 0 && Double.isFinite(seconds)) {
                return seconds;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new IllegalArgumentException("-o " + option + ": the timeout must be a number of seconds, at least 0");
    }
}
