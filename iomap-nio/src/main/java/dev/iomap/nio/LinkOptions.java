package dev.iomap.nio;

import java.nio.file.LinkOption;
import java.util.Objects;

/** The {@link LinkOption}s given to an attribute or view method. */
final class LinkOptions {
    private LinkOptions() {
    }

    /**
     * @param options what was given
     * @return whether a symbolic link as the last name is followed: unless {@code NOFOLLOW_LINKS} is given
     * @throws NullPointerException if an option is null
     */
    static boolean follow(LinkOption... options) {
        boolean follow = true;
        for (LinkOption option : options) {
            if (Objects.requireNonNull(option, "option") == LinkOption.NOFOLLOW_LINKS) {
                follow = false;
            }
        }
        return follow;
    }
}
