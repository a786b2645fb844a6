package dev.iomap.api;

import java.util.Set;

/** Checks a set of {@link RenameFlag}s, as {@code renameat2} checks its flags. */
public final class RenameFlags {
    private RenameFlags() {}

    /**
     * @param flags the flags of one rename
     * @throws IllegalArgumentException if they hold {@link RenameFlag#EXCHANGE} with another flag (EINVAL
     *     in Linux)
     */
    public static void check(Set<RenameFlag> flags) {
        if (flags.contains(RenameFlag.EXCHANGE) && flags.size() > 1) {
            throw new IllegalArgumentException("rename flag EXCHANGE excludes " + flags);
        }
    }
}
