package dev.iomap.api;

import java.io.Closeable;
import java.io.IOException;
import java.util.List;
import java.util.Set;

/**
 * A mounted filesystem: an adapter's on-device format behind iomap4j's page cache.
 *
 * <p>Paths are absolute, '/'-separated ({@code "/dir/file"}). A name is a byte string, as in Linux,
 * carried in {@link FileNames}' form: UTF-8 where the bytes are valid UTF-8, every other byte as the
 * lone surrogate {@code U+DC00 + byte}; so the names of bytes {@code caf\xe9} and {@code caf\xe8}
 * are the two strings "caf" + U+DCE9 and "caf" + U+DCE8, and names compare byte for byte. Refused with
 * {@link java.nio.file.InvalidPathException} (unchecked, before anything changes): a relative path;
 * an empty name, "." or ".."; a NUL; a name longer than {@value FileNames#MAX_NAME_BYTES} bytes
 * (counted in {@link FileNames#encode}'s bytes, not in chars: the message says "name longer than 255
 * bytes"); and, as its subclass {@link UnrepresentableNameException} (EILSEQ), a name that stands for
 * no byte string (a lone surrogate that is not an escaped byte, or escaped bytes that spell valid
 * UTF-8, which would be a second spelling of another name). Errors
 * use the {@code java.nio.file} exceptions where one fits ({@link java.nio.file.NoSuchFileException},
 * {@link java.nio.file.FileAlreadyExistsException}, {@link java.nio.file.DirectoryNotEmptyException},
 * {@link java.nio.file.NotDirectoryException}), {@link NoSpaceException} when the device is full and
 * {@link NotSupportedException} for an operation the adapter does not have.
 *
 * <p>Thread-safe. After {@link #close()} (unmount: everything written back and the image left clean)
 * every method fails with {@link java.nio.file.ClosedFileSystemException}.
 */
public interface IomapFileSystem extends Closeable {

    /** @return the adapter's name */
    String adapterName();

    /** @return what the adapter can do */
    java.util.Set<Capability> capabilities();

    /**
     * Creates an empty regular file and opens it.
     *
     * @param path where, in an existing directory
     * @return the open file
     * @throws IOException if the name exists, the parent is missing, or there is no space
     */
    IomapFile create(String path) throws IOException;

    /**
     * Opens an existing regular file.
     *
     * @param path the file
     * @return the open file
     * @throws IOException if it does not exist or is a directory
     */
    IomapFile open(String path) throws IOException;

    /**
     * Creates a directory.
     *
     * @param path where, in an existing directory
     * @throws IOException if the name exists or the parent is missing
     */
    void mkdir(String path) throws IOException;

    /**
     * Lists a directory.
     *
     * @param path the directory
     * @return its entries, their names in {@link FileNames}' form, sorted by
     *     {@link FileNames#BYTE_ORDER} (the bytes, unsigned)
     * @throws IOException if it does not exist or is not a directory
     */
    List<DirEntry> readdir(String path) throws IOException;

    /**
     * Removes a file's name. An open file stays readable and writable until closed.
     *
     * @param path the file
     * @throws IOException if it does not exist or is a directory
     */
    void unlink(String path) throws IOException;

    /**
     * Removes an empty directory.
     *
     * @param path the directory
     * @throws IOException if it does not exist, is not a directory, or is not empty
     */
    void rmdir(String path) throws IOException;

    /**
     * Renames, replacing an existing regular file at the target.
     *
     * @param from the existing name
     * @param to the new name
     * @throws IOException if {@code from} is missing, or {@code to} is a non-empty directory
     */
    void rename(String from, String to) throws IOException;

    /**
     * Renames with {@code renameat2} flags. No flags is {@link #rename(String, String)}.
     * {@link RenameFlag#NOREPLACE}: refused with {@link java.nio.file.FileAlreadyExistsException} if
     * {@code to} exists, decided atomically with the rename (no other namespace change in between).
     * {@link RenameFlag#EXCHANGE}: both names must exist ({@link java.nio.file.NoSuchFileException}
     * otherwise) and are swapped atomically, for files and directories, across directories (a moved
     * directory's parent follows); exchanging a directory with a name inside its own subtree is an
     * {@link IllegalArgumentException} (EINVAL); exchanging a name with itself changes nothing.
     * Without {@link Capability#RENAME_EXCHANGE}, EXCHANGE is a {@link NotSupportedException}.
     *
     * <p>This default serves implementations that know no flags: it renames when {@code flags} is
     * empty and throws {@link NotSupportedException} otherwise.
     *
     * @param from the existing name
     * @param to the new name, or the other existing name for EXCHANGE
     * @param flags at most one flag
     * @throws IllegalArgumentException if {@code flags} holds both flags
     * @throws IOException as {@link #rename(String, String)}, and as the flags say
     */
    default void rename(String from, String to, Set<RenameFlag> flags) throws IOException {
        RenameFlags.check(flags);
        if (!flags.isEmpty()) {
            throw new NotSupportedException("rename with " + flags + " is not supported here");
        }
        rename(from, to);
    }

    /**
     * @param path a file or directory
     * @return what it is
     * @throws IOException if it does not exist
     */
    FileStat stat(String path) throws IOException;

    /**
     * @return space and inode counts
     * @throws IOException on a device error
     */
    FsStat statfs() throws IOException;

    /**
     * Writes back every file and makes all metadata durable (the kernel's {@code syncfs}).
     *
     * @throws IOException on a device error
     */
    void sync() throws IOException;

    /**
     * Drops every clean cached folio of the mount (the kernel's {@code drop_caches}); dirty data and
     * data under writeback stay. Later reads come from the device.
     *
     * @return bytes of cache freed
     */
    long dropCleanCache();

    /** @return what the page cache and device did since mount */
    IoStats stats();

    /**
     * Unmounts: syncs, leaves a clean image and releases the cache. Idempotent. Open files become
     * unusable. The mount is released even when the final sync fails (then the image may not be
     * clean, and the error is thrown).
     *
     * @throws IOException if the final sync fails
     */
    @Override
    void close() throws IOException;
}
