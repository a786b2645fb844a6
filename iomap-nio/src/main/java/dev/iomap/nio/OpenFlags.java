package dev.iomap.nio;

import java.nio.file.LinkOption;
import java.nio.file.OpenOption;
import java.nio.file.StandardOpenOption;
import java.util.Set;

/**
 * The {@link OpenOption}s of a channel, checked as the default provider checks them.
 *
 * @param read whether the channel reads
 * @param write whether it writes
 * @param append whether every write goes to the end of the file
 * @param truncateExisting whether an existing file is emptied
 * @param create whether a missing file is created
 * @param createNew whether the file must not exist yet
 * @param deleteOnClose whether the name is removed when the channel closes
 * @param sync whether every write is followed by fsync ({@code SYNC}) or fdatasync ({@code DSYNC})
 * @param dataSyncOnly whether that sync is fdatasync
 * @param noFollowLinks whether a symbolic link as the last name is refused ({@code NOFOLLOW_LINKS},
 *     {@code O_NOFOLLOW})
 * @param direct whether reads and writes are direct I/O ({@code com.sun.nio.file.ExtendedOpenOption.DIRECT},
 *     {@code O_DIRECT}: {@link dev.iomap.api.OpenFlag#DIRECT})
 */
record OpenFlags(boolean read, boolean write, boolean append, boolean truncateExisting, boolean create,
        boolean createNew, boolean deleteOnClose, boolean sync, boolean dataSyncOnly, boolean noFollowLinks,
        boolean direct) {

    /** The JDK's {@code O_DIRECT} option, recognised by name (it lives in {@code jdk.unsupported}). */
    private static final String EXTENDED_OPEN_OPTION = "com.sun.nio.file.ExtendedOpenOption";

    /** @return whether {@code option} is {@code ExtendedOpenOption.DIRECT} */
    static boolean isDirect(OpenOption option) {
        return option instanceof Enum<?> e && e.getDeclaringClass().getName().equals(EXTENDED_OPEN_OPTION)
                && e.name().equals("DIRECT");
    }

    /**
     * @param options the options given
     * @return them, checked
     * @throws IllegalArgumentException for {@code READ} with {@code APPEND}, or {@code APPEND} with
     *     {@code TRUNCATE_EXISTING}
     * @throws UnsupportedOperationException for an option of another kind (of the JDK's extended
     *     options, only {@code DIRECT} is taken)
     */
    static OpenFlags of(Set<? extends OpenOption> options) {
        boolean direct = false;
        for (OpenOption option : options) {
            if (isDirect(option)) {
                direct = true;
            } else if (!(option instanceof StandardOpenOption) && option != LinkOption.NOFOLLOW_LINKS) {
                throw new UnsupportedOperationException("open option " + option + " is not supported");
            }
        }
        boolean append = options.contains(StandardOpenOption.APPEND);
        boolean write = append || options.contains(StandardOpenOption.WRITE);
        boolean read = options.contains(StandardOpenOption.READ) || !write;
        boolean truncate = options.contains(StandardOpenOption.TRUNCATE_EXISTING);
        if (append && options.contains(StandardOpenOption.READ)) {
            throw new IllegalArgumentException("READ + APPEND not allowed");
        }
        if (append && truncate) {
            throw new IllegalArgumentException("APPEND + TRUNCATE_EXISTING not allowed");
        }
        boolean sync = options.contains(StandardOpenOption.SYNC);
        boolean dsync = options.contains(StandardOpenOption.DSYNC);
        return new OpenFlags(read, write, append, write && truncate,
                write && options.contains(StandardOpenOption.CREATE),
                write && options.contains(StandardOpenOption.CREATE_NEW),
                options.contains(StandardOpenOption.DELETE_ON_CLOSE),
                sync || dsync, dsync && !sync, options.contains(LinkOption.NOFOLLOW_LINKS), direct);
    }
}
