package dev.iomap.core.vfs;

import dev.iomap.api.MappedFile;
import dev.iomap.core.MappedRegion;
import java.io.IOException;
import java.nio.ByteBuffer;

/** {@link MappedFile} over the core's {@link MappedRegion}. */
final class CoreMappedFile implements MappedFile {
    private final CoreFile file;
    private final MappedRegion region;

    CoreMappedFile(CoreFile file, MappedRegion region) {
        this.file = file;
        this.region = region;
    }

    @Override
    public void store(long pos, ByteBuffer src) throws IOException {
        file.ensureOpen();
        if (src.hasRemaining()) {
            file.fs().touch(file.inode());
        }
        region.store(pos, src);
    }

    @Override
    public void load(long pos, ByteBuffer dst) throws IOException {
        file.ensureOpen();
        region.load(pos, dst);
    }
}
