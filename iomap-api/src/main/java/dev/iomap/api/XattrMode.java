package dev.iomap.api;

/** How {@link IomapFileSystem#setXattr} treats an existing attribute ({@code setxattr(2)}'s flags). */
public enum XattrMode {
    /** Create or replace (flags 0). */
    ANY,
    /** Only create: an existing attribute is a {@link java.nio.file.FileAlreadyExistsException} (EEXIST). */
    CREATE,
    /** Only replace: a missing attribute is a {@link NoSuchAttributeException} (ENODATA). */
    REPLACE
}
