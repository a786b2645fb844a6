package dev.iomap.nio;

import dev.iomap.api.AttributeChange;
import dev.iomap.api.Capability;
import java.io.IOException;
import java.nio.file.attribute.BasicFileAttributeView;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileTime;

/**
 * The basic view of a path: {@link #readAttributes()} reads them when called (the path need not
 * exist when the view is made). With {@code follow} a symbolic link as the last name is followed
 * ({@code stat}, and changes act on what it points at), without it the link itself is read and
 * changed ({@code lstat}, {@code utimensat} with {@code AT_SYMLINK_NOFOLLOW}).
 *
 * <p>{@link #setTimes} sets the modification and access times (with nanoseconds) where the adapter
 * declares {@link Capability#POSIX_ATTRIBUTES}; the creation (birth) time never changes, and is
 * ignored as Linux ignores it. Without that capability the file systems keep their own modification
 * time and {@link #setTimes} accepts only all-null (no change), throwing
 * {@link UnsupportedOperationException} otherwise.
 */
class IomapFileAttributeView implements BasicFileAttributeView {
    final IomapPath path;
    final boolean follow;

    /**
     * @param path the path
     * @param follow whether a symbolic link as the last name is followed
     */
    IomapFileAttributeView(IomapPath path, boolean follow) {
        this.path = path;
        this.follow = follow;
    }

    @Override
    public String name() {
        return "basic";
    }

    @Override
    public BasicFileAttributes readAttributes() throws IOException {
        return path.getFileSystem().readAttributes(path, follow);
    }

    @Override
    public void setTimes(FileTime lastModifiedTime, FileTime lastAccessTime, FileTime createTime) throws IOException {
        if (lastModifiedTime == null && lastAccessTime == null) {
            path.getFileSystem().ensureOpen();
            return;
        }
        IomapNioFileSystem fs = path.getFileSystem();
        if (!fs.supports(Capability.POSIX_ATTRIBUTES)) {
            throw new UnsupportedOperationException("this iomap file system keeps its own modification time;"
                    + " times cannot be set (" + path + ")");
        }
        AttributeChange change = AttributeChange.none();
        if (lastModifiedTime != null) {
            change = change.withMtime(lastModifiedTime.toInstant());
        }
        if (lastAccessTime != null) {
            change = change.withAtime(lastAccessTime.toInstant());
        }
        fs.setAttributes(path, follow, change);
    }
}
