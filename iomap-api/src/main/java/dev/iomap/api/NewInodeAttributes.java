package dev.iomap.api;

/**
 * The attributes a new file, directory or symbolic link starts with; its four times are the time of
 * creation. The caller has applied its umask. A symbolic link's mode is always {@code 0777}, whatever
 * is asked.
 *
 * @param mode permission bits, {@code 07777} at most
 * @param uid owner
 * @param gid group
 */
public record NewInodeAttributes(int mode, int uid, int gid) {

    /** The largest permission bits: set-user-ID, set-group-ID, sticky and rwx for all three. */
    public static final int MODE_MASK = 07777;

    /** @throws IllegalArgumentException if {@code mode} has bits outside {@link #MODE_MASK} */
    public NewInodeAttributes {
        checkMode(mode);
    }

    /**
     * @param type what is created
     * @return {@code 0644} for a file or a special file, {@code 0755} for a directory, {@code 0777} for a
     *     symbolic link
     */
    public static int defaultMode(FileType type) {
        return switch (type) {
            case REGULAR, FIFO, CHARACTER_DEVICE, BLOCK_DEVICE, SOCKET -> 0644;
            case DIRECTORY -> 0755;
            case SYMLINK -> 0777;
        };
    }

    /**
     * @param type what is created
     * @return {@link #defaultMode(FileType)}, owned by the running process's user and group (0 where
     *     the platform does not say)
     */
    public static NewInodeAttributes defaults(FileType type) {
        return new NewInodeAttributes(defaultMode(type), ProcessIdentity.UID, ProcessIdentity.GID);
    }

    /**
     * @param mode permission bits
     * @return {@code mode}
     * @throws IllegalArgumentException if it has bits outside {@link #MODE_MASK}
     */
    public static int checkMode(int mode) {
        if ((mode & ~MODE_MASK) != 0) {
            throw new IllegalArgumentException("mode 0" + Integer.toOctalString(mode)
                    + " has bits outside 07777 (the type is not part of the mode)");
        }
        return mode;
    }
}
