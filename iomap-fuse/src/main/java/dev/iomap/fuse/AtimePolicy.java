package dev.iomap.fuse;

import dev.iomap.api.FileStat;
import java.time.Duration;
import java.time.Instant;
import java.util.List;

/**
 * When a read updates a file's access time, as Linux decides it for a mount ({@code atime_needs_update}
 * and {@code relatime_need_update} in fs/inode.c). The kernel leaves a FUSE file's access time to the
 * file system (it sends no request for it; after a read it only drops the atime it cached), so the mount
 * applies the mount's atime options itself, on each read and each directory listing it serves:
 *
 * <ul>
 *   <li>{@code strictatime}: every access updates it;
 *   <li>{@code relatime} (the default, as for {@code mount(8)}): only when the access time is not after
 *       the modification or change time, or is a day old or more;
 *   <li>{@code noatime}: never; {@code nodiratime}: never for directories (files as the mode says).
 * </ul>
 *
 * <p>Reads served from the kernel's page cache never reach the mount and update nothing; under
 * {@code relatime} the first read after a change is not one of them (a change through the mount drops the
 * kernel's cached pages). So a {@code strictatime} mount makes read-only opens direct I/O too
 * ({@link IomapMount}); with {@code --kernel-cache} or {@code --writeback-cache}, repeated reads of cached
 * pages still leave the access time as it was.
 *
 * @param mode the mount's atime mode
 * @param noDirectoryAtime whether directory listings never update it ({@code nodiratime})
 */
public record AtimePolicy(Mode mode, boolean noDirectoryAtime) {

    /** How reads update access times. */
    public enum Mode {
        /** Every access ({@code strictatime}). */
        STRICT,
        /** Once after each change, or once a day ({@code relatime}). */
        RELATIVE,
        /** Never ({@code noatime}). */
        NONE
    }

    /** relatime's age after which an access updates the access time anyway: a day, as Linux. */
    static final Duration RELATIME_MAX_AGE = Duration.ofDays(1);

    /** The default: {@code relatime}, directories included. */
    public static final AtimePolicy DEFAULT = new AtimePolicy(Mode.RELATIVE, false);

    /**
     * @param options mount options, each possibly a comma list, in the order given (a later one wins, as
     *     for {@code mount(8)}); only the atime ones are read
     * @return the policy they ask for ({@link #DEFAULT} unless one says otherwise)
     */
    public static AtimePolicy of(List<String> options) {
        Mode mode = Mode.RELATIVE;
        boolean noDirectories = false;
        for (String list : options) {
            for (String option : list.split(",")) {
                switch (option) {
                    case "strictatime" -> mode = Mode.STRICT;
                    case "relatime", "nostrictatime" -> mode = Mode.RELATIVE;
                    case "norelatime" -> mode = mode == Mode.RELATIVE ? Mode.STRICT : mode;
                    case "noatime" -> mode = Mode.NONE;
                    case "atime" -> mode = mode == Mode.NONE ? Mode.RELATIVE : mode;
                    case "nodiratime" -> noDirectories = true;
                    case "diratime" -> noDirectories = false;
                    default -> { }
                }
            }
        }
        return new AtimePolicy(mode, noDirectories);
    }

    /**
     * @param stat the file or directory as it is
     * @param directory whether the access lists a directory
     * @param now the time of the access
     * @return whether the access updates the access time to {@code now}
     */
    public boolean needsUpdate(FileStat stat, boolean directory, Instant now) {
        if (mode == Mode.NONE || (directory && noDirectoryAtime)) {
            return false;
        }
        Instant atime = stat.atime();
        if (!now.isAfter(atime)) {
            return false;   // the kernel: timespec64_equal(&atime, &now) means nothing to do
        }
        if (mode == Mode.STRICT) {
            return true;
        }
        return !atime.isAfter(stat.mtime()) || !atime.isAfter(stat.ctime())
                || !atime.plus(RELATIME_MAX_AGE).isAfter(now);
    }
}
