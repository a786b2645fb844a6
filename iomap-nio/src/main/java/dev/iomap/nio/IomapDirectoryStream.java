package dev.iomap.nio;

import dev.iomap.api.DirEntry;
import java.io.IOException;
import java.nio.file.DirectoryIteratorException;
import java.nio.file.DirectoryStream;
import java.nio.file.Path;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;

/**
 * The entries of a directory as they were when the stream was opened, each resolved against the
 * directory's path, in the byte order of their names (names in {@link dev.iomap.api.FileNames}' form,
 * as readdir gives them). One iterator per stream; after {@link #close()} the iterator returns no more
 * entries.
 */
final class IomapDirectoryStream implements DirectoryStream<Path> {
    private final Path dir;
    private final List<DirEntry> entries;
    private final Filter<? super Path> filter;
    private volatile boolean closed;
    private boolean iterated;

    IomapDirectoryStream(Path dir, List<DirEntry> entries, Filter<? super Path> filter) {
        this.dir = dir;
        this.entries = entries;
        this.filter = filter;
    }

    @Override
    public synchronized Iterator<Path> iterator() {
        if (closed) {
            throw new IllegalStateException("directory stream of " + dir + " is closed");
        }
        if (iterated) {
            throw new IllegalStateException("directory stream of " + dir + " already gave its iterator");
        }
        iterated = true;
        return new Iterator<>() {
            private int index;
            private Path next;

            @Override
            public boolean hasNext() {
                while (next == null && !closed && index < entries.size()) {
                    Path candidate = dir.resolve(entries.get(index++).name());
                    try {
                        if (filter == null || filter.accept(candidate)) {
                            next = candidate;
                        }
                    } catch (IOException e) {
                        throw new DirectoryIteratorException(e);
                    }
                }
                return next != null;
            }

            @Override
            public Path next() {
                if (!hasNext()) {
                    throw new NoSuchElementException();
                }
                Path result = next;
                next = null;
                return result;
            }
        };
    }

    @Override
    public void close() {
        closed = true;
    }
}
