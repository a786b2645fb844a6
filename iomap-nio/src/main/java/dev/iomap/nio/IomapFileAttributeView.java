package dev.iomap.nio;

import java.io.IOException;
import java.nio.file.attribute.BasicFileAttributeView;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileTime;

/**
 * The basic view of a path: {@link #readAttributes()} reads them when called (the path need not
 * exist when the view is made). Times cannot be set: the file systems keep their own modification
 * time, so {@link #setTimes} accepts only all-null (no change).
 */
final class IomapFileAttributeView implements BasicFileAttributeView {
    private final IomapPath path;

    IomapFileAttributeView(IomapPath path) {
        this.path = path;
    }

    @Override
    public String name() {
        return "basic";
    }

    @Override
    public BasicFileAttributes readAttributes() throws IOException {
        return path.getFileSystem().readAttributes(path);
    }

    @Override
    public void setTimes(FileTime lastModifiedTime, FileTime lastAccessTime, FileTime createTime) {
        if (lastModifiedTime != null || lastAccessTime != null || createTime != null) {
            throw new UnsupportedOperationException("iomap file systems keep their own modification time;"
                    + " times cannot be set (" + path + ")");
        }
    }
}
