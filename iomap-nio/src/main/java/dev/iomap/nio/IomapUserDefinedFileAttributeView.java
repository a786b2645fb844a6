package dev.iomap.nio;

import dev.iomap.api.XattrMode;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.FileSystemException;
import java.nio.file.attribute.UserDefinedFileAttributeView;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * The "user" view of a path, offered where the adapter declares {@link dev.iomap.api.Capability#XATTRS}:
 * the file's extended attributes in the {@code user.} namespace, named here without that prefix (the
 * view's "mime_type" is the attribute {@code user.mime_type}), as the JDK's Linux view does. A symbolic
 * link as the last name is followed or not as {@link IomapFileAttributeView} says; Linux keeps
 * {@code user.} attributes off links themselves (writing one is EPERM).
 *
 * <p>{@link #write} creates or replaces; {@link #read} and {@link #size} of a missing attribute, and
 * {@link #delete} of one, throw {@link dev.iomap.api.NoSuchAttributeException} (ENODATA, a
 * {@link FileSystemException}). Names are checked as Linux checks them ({@link dev.iomap.api.Xattrs}):
 * at most 255 bytes with the prefix, values at most 64 KiB.
 */
final class IomapUserDefinedFileAttributeView implements UserDefinedFileAttributeView {
    private static final String PREFIX = "user.";

    private final IomapPath path;
    private final boolean follow;

    /**
     * @param path the path
     * @param follow whether a symbolic link as the last name is followed
     */
    IomapUserDefinedFileAttributeView(IomapPath path, boolean follow) {
        this.path = path;
        this.follow = follow;
    }

    @Override
    public String name() {
        return "user";
    }

    private String file() throws IOException {
        return path.getFileSystem().target(path, follow);
    }

    /** @return the names, without the prefix, sorted by their bytes */
    @Override
    public List<String> list() throws IOException {
        List<String> names = new ArrayList<>();
        for (String name : path.getFileSystem().iomap().listXattrs(file())) {
            if (name.startsWith(PREFIX)) {
                names.add(name.substring(PREFIX.length()));
            }
        }
        return names;
    }

    @Override
    public int size(String name) throws IOException {
        return get(name).length;
    }

    private byte[] get(String name) throws IOException {
        return path.getFileSystem().iomap().getXattr(file(), PREFIX + Objects.requireNonNull(name, "name"));
    }

    /**
     * Puts the whole value at the buffer's position, and advances it.
     *
     * @throws IllegalArgumentException if the buffer is read-only
     * @throws FileSystemException "Insufficient space in buffer" if the value does not fit in what
     *     remains of it (the buffer is left unchanged)
     */
    @Override
    public int read(String name, ByteBuffer dst) throws IOException {
        if (dst.isReadOnly()) {
            throw new IllegalArgumentException("Read-only buffer");
        }
        byte[] value = get(name);
        if (value.length > dst.remaining()) {
            throw new FileSystemException(path.toString(), null, "Insufficient space in buffer: the value of '" + name
                    + "' is " + value.length + " bytes, " + dst.remaining() + " remain");
        }
        dst.put(value);
        return value.length;
    }

    /** Creates or replaces the attribute with the buffer's remaining bytes, and advances its position. */
    @Override
    public int write(String name, ByteBuffer src) throws IOException {
        Objects.requireNonNull(name, "name");
        byte[] value = new byte[src.remaining()];
        src.duplicate().get(value);
        path.getFileSystem().iomap().setXattr(file(), PREFIX + name, value, XattrMode.ANY);
        src.position(src.position() + value.length);
        return value.length;
    }

    @Override
    public void delete(String name) throws IOException {
        path.getFileSystem().iomap().removeXattr(file(), PREFIX + Objects.requireNonNull(name, "name"));
    }
}
