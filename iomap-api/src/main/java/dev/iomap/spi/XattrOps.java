package dev.iomap.spi;

import dev.iomap.api.FileNames;
import dev.iomap.api.NotSupportedException;
import dev.iomap.api.XattrMode;
import java.io.IOException;
import java.util.List;

/**
 * The mount's extended attributes, the kernel's {@code xattr_handler}s. Reached through
 * {@link MountedFileSystem#xattrOps()}; the core calls it only for an adapter that declares
 * {@link dev.iomap.api.Capability#XATTRS}, with names checked by {@link dev.iomap.api.Xattrs#checkName}
 * and values by {@link dev.iomap.api.Xattrs#checkValue}, under its namespace lock. Every method's
 * default throws {@link NotSupportedException}; {@link #NONE} is the table of an adapter without them.
 */
public interface XattrOps {

    /** The table of an adapter without extended attributes: every operation is refused. */
    XattrOps NONE = new XattrOps() { };

    /**
     * @param ino the inode
     * @param name the attribute's full name, checked
     * @return its value
     * @throws IOException {@link dev.iomap.api.NoSuchAttributeException} if absent
     */
    default byte[] getxattr(long ino, String name) throws IOException {
        throw new NotSupportedException("extended attributes are not supported");
    }

    /**
     * @param ino the inode
     * @return its attribute names in {@link FileNames#BYTE_ORDER}
     * @throws IOException on a device error
     */
    default List<String> listxattr(long ino) throws IOException {
        throw new NotSupportedException("extended attributes are not supported");
    }

    /**
     * Creates or replaces an attribute as {@code mode} says and sets ctime. Atomic: after a power cut
     * the old or the new value is there, never a mix.
     *
     * @param ino the inode
     * @param name the attribute's full name, checked
     * @param value the value, checked
     * @param mode create, replace or either
     * @throws IOException {@link java.nio.file.FileAlreadyExistsException},
     *     {@link dev.iomap.api.NoSuchAttributeException}, {@link dev.iomap.api.NoSpaceException} if it
     *     does not fit
     */
    default void setxattr(long ino, String name, byte[] value, XattrMode mode) throws IOException {
        throw new NotSupportedException("extended attributes are not supported");
    }

    /**
     * Removes an attribute and sets ctime.
     *
     * @param ino the inode
     * @param name the attribute's full name, checked
     * @throws IOException {@link dev.iomap.api.NoSuchAttributeException} if absent
     */
    default void removexattr(long ino, String name) throws IOException {
        throw new NotSupportedException("extended attributes are not supported");
    }
}
