package dev.iomap.api;

/**
 * One name in a directory.
 *
 * <p>The name is a byte string carried in {@link FileNames}' form: UTF-8 where the bytes are valid
 * UTF-8, each other byte as the lone surrogate {@code U+DC00 + byte}. Two entries of one directory
 * never have equal names, and a directory's entries come sorted by {@link FileNames#BYTE_ORDER}.
 *
 * @param name the name, in {@link FileNames}' form, without slashes or NUL, never "." or "..", 1 to
 *     {@value FileNames#MAX_NAME_BYTES} bytes
 * @param ino the inode it points at
 * @param type what the inode is
 */
public record DirEntry(String name, long ino, FileType type) {

    /**
     * @return the bytes the name stands for ({@link FileNames#encode}); a new array each call
     * @throws UnrepresentableNameException if an adapter put a name that is not in {@link FileNames}'
     *     form into this entry
     */
    public byte[] nameBytes() {
        return FileNames.encode(name);
    }
}
