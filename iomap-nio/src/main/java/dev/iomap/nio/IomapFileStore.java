package dev.iomap.nio;

import dev.iomap.api.FsStat;
import java.io.IOException;
import java.nio.file.FileStore;
import java.nio.file.attribute.BasicFileAttributeView;
import java.nio.file.attribute.FileAttributeView;
import java.nio.file.attribute.FileOwnerAttributeView;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.UserDefinedFileAttributeView;
import java.nio.file.attribute.FileStoreAttributeView;

/** The one store of an iomap file system: its image, with space from {@code statfs}. */
final class IomapFileStore extends FileStore {
    private final IomapNioFileSystem fs;

    IomapFileStore(IomapNioFileSystem fs) {
        this.fs = fs;
    }

    @Override
    public String name() {
        return fs.imageUri().location();
    }

    @Override
    public String type() {
        return fs.iomap().adapterName();
    }

    @Override
    public boolean isReadOnly() {
        return false;
    }

    private FsStat statfs() throws IOException {
        fs.ensureOpen();
        return fs.iomap().statfs();
    }

    @Override
    public long getTotalSpace() throws IOException {
        FsStat stat = statfs();
        return stat.totalBlocks() * stat.blockSize();
    }

    @Override
    public long getUsableSpace() throws IOException {
        FsStat stat = statfs();
        return stat.availableBlocks() * stat.blockSize();
    }

    @Override
    public long getUnallocatedSpace() throws IOException {
        FsStat stat = statfs();
        return stat.freeBlocks() * stat.blockSize();
    }

    @Override
    public long getBlockSize() throws IOException {
        return statfs().blockSize();
    }

    /** @return whether the view's name is among {@link IomapNioFileSystem#supportedFileAttributeViews()} */
    @Override
    public boolean supportsFileAttributeView(Class<? extends FileAttributeView> type) {
        String name;
        if (type == BasicFileAttributeView.class) {
            name = "basic";
        } else if (type == PosixFileAttributeView.class) {
            name = "posix";
        } else if (type == FileOwnerAttributeView.class) {
            name = "owner";
        } else if (type == UserDefinedFileAttributeView.class) {
            name = "user";
        } else {
            return false;
        }
        return supportsFileAttributeView(name);
    }

    /** @return whether the view is among {@link IomapNioFileSystem#supportedFileAttributeViews()} */
    @Override
    public boolean supportsFileAttributeView(String name) {
        return fs.supportedFileAttributeViews().contains(name);
    }

    @Override
    public <V extends FileStoreAttributeView> V getFileStoreAttributeView(Class<V> type) {
        return null;
    }

    @Override
    public Object getAttribute(String attribute) {
        throw new UnsupportedOperationException("iomap file stores have no attribute '" + attribute + "'");
    }
}
