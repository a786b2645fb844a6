package dev.iomap.api;

import java.util.Set;

/** Checks a set of {@link RenameFlag}s, as {@code renameat2} checks its flags. */
public final class RenameFlags {
    private RenameFlags() {}

    /**
     * @param flags the flags of one rename
     * @throws IllegalArgumentException if they hold both {@link RenameFlag#NOREPLACE} and
     *     {@link RenameFlag#EXCHANGE} (EINVAL in Linux)
     */
    public static void check(Set<RenameFlag> flags) {
        if (flags.contains(RenameFlag.NOREPLACE) && flags.contains(RenameFlag.EXCHANGE)) {
            throw new IllegalArgumentException("rename flags NOREPLACE and EXCHANGE exclude each other");
        }
    }
}
