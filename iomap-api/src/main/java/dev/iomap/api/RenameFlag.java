package dev.iomap.api;

/**
 * How {@link IomapFileSystem#rename(String, String, java.util.Set)} treats the target name: the
 * flags of Linux's {@code renameat2}. The two flags exclude each other (both together is an
 * {@link IllegalArgumentException}, EINVAL as in Linux).
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
    EXCHANGE
}
