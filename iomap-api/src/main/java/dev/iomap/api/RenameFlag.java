package dev.iomap.api;

/**
 * How {@link IomapFileSystem#rename(String, String, java.util.Set)} treats the target name: the
 * flags of Linux's {@code renameat2}. EXCHANGE excludes the others (together they are an
 * {@link IllegalArgumentException}, EINVAL as in Linux); NOREPLACE and WHITEOUT go together.
 */
public enum RenameFlag {
    /**
     * Refuse with {@link java.nio.file.FileAlreadyExistsException} if the target name exists
     * ({@code RENAME_NOREPLACE}); decided atomically with the rename.
     */
    NOREPLACE,
    /**
     * Swap the two names atomically; both must exist ({@code RENAME_EXCHANGE}). Needs
     * {@link Capability#RENAME_EXCHANGE}.
     */
    EXCHANGE,
    /**
     * Leave a whiteout at the old name ({@code RENAME_WHITEOUT}, overlayfs's): a character device 0:0 with
     * mode 0, made in the same metadata change as the rename, so that a power cut leaves either the old
     * name or the new name and the whiteout. Needs {@link Capability#SPECIAL_FILES}; the whiteout's owner
     * is {@link IomapFileSystem#rename(String, String, java.util.Set, NewInodeAttributes)}'s.
     */
    WHITEOUT
}
