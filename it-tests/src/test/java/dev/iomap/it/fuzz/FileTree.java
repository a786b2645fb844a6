package dev.iomap.it.fuzz;

import dev.iomap.api.DirEntry;
import dev.iomap.api.FileStat;
import dev.iomap.api.FileType;
import dev.iomap.api.IomapFile;
import dev.iomap.api.IomapFileSystem;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.Collections;
import java.util.Deque;
import java.util.Map;
import java.util.TreeMap;

/**
 * Every file and directory of a mounted filesystem with each file's bytes, as the application sees
 * them. Reading is bounded (depth, entries, file size), so that a forged directory cycle or a forged
 * huge size cannot make the fuzzer itself hang or run out of memory: past a bound the tree records
 * what it saw, which then differs from the original.
 */
final class FileTree {
    /** Files longer than this are not read (the images' files are far smaller). */
    static final long MAX_READ = 8L << 20;
    private static final int MAX_DEPTH = 16;
    private static final int MAX_ENTRIES = 4096;

    /**
     * One path: a directory, a file with its size and (unless it is too large) its bytes, or a file
     * that could not be read, with the one-line typed error that said so.
     */
    static final class Node {
        private final FileType type;
        private final long ino;
        private final long size;
        private final byte[] content;
        private final String error;

        private Node(FileType type, long ino, long size, byte[] content, String error) {
            this.type = type;
            this.ino = ino;
            this.size = size;
            this.content = content;
            this.error = error;
        }

        static Node directory(long ino) {
            return new Node(FileType.DIRECTORY, ino, 0, null, null);
        }

        static Node file(long ino, byte[] content) {
            return new Node(FileType.REGULAR, ino, content.length, content.clone(), null);
        }

        /** A file over {@link #MAX_READ} bytes, not read. */
        static Node unreadFile(long ino, long size) {
            return new Node(FileType.REGULAR, ino, size, null, null);
        }

        /** A file whose stat, open or read failed with a typed error. */
        static Node unreadable(long ino, String error) {
            return new Node(FileType.REGULAR, ino, -1, null, error);
        }

        /** @return the same file with new content (for a workload's model) */
        Node withContent(byte[] newContent) {
            return file(ino, newContent);
        }

        FileType type() {
            return type;
        }

        /** @return the inode number the directory entry gives */
        long ino() {
            return ino;
        }

        long size() {
            return size;
        }

        /** @return a copy of the file's bytes, null for a directory or an unread file */
        byte[] content() {
            return content == null ? null : content.clone();
        }

        /** @return the error reading the file gave, or null */
        String error() {
            return error;
        }

        boolean isDirectory() {
            return type == FileType.DIRECTORY;
        }

        @Override
        public boolean equals(Object other) {
            return other instanceof Node node && type == node.type && size == node.size
                    && Arrays.equals(content, node.content) && java.util.Objects.equals(error, node.error);
        }

        @Override
        public int hashCode() {
            return type.hashCode() * 31 + Long.hashCode(size);
        }

        @Override
        public String toString() {
            if (error != null) {
                return "file that cannot be read (" + error + ")";
            }
            return type == FileType.DIRECTORY ? "directory" : "file of " + size + " bytes";
        }
    }

    private final Map<String, Node> nodes;

    private FileTree(Map<String, Node> nodes) {
        this.nodes = Collections.unmodifiableMap(new TreeMap<>(nodes));
    }

    static FileTree of(Map<String, Node> nodes) {
        return new FileTree(nodes);
    }

    /** @return path to node, sorted; the root is not listed */
    Map<String, Node> nodes() {
        return nodes;
    }

    /**
     * Reads the whole tree.
     *
     * @throws IOException what the filesystem threw (the caller judges it)
     */
    static FileTree read(IomapFileSystem fs) throws IOException {
        Map<String, Node> nodes = new TreeMap<>();
        Deque<String> directories = new ArrayDeque<>();
        directories.add("/");
        while (!directories.isEmpty()) {
            String directory = directories.poll();
            for (DirEntry entry : fs.readdir(directory)) {
                String path = (directory.equals("/") ? "" : directory) + "/" + entry.name();
                if (nodes.size() >= MAX_ENTRIES) {
                    nodes.put("/(more than " + MAX_ENTRIES + " entries)", Node.directory(-1));
                    return new FileTree(nodes);
                }
                if (entry.type() == FileType.DIRECTORY) {
                    nodes.put(path, Node.directory(entry.ino()));
                    if (depth(path) < MAX_DEPTH) {
                        directories.add(path);
                    }
                } else {
                    nodes.put(path, readFile(fs, path, entry.ino()));
                }
            }
        }
        return new FileTree(nodes);
    }

    private static int depth(String path) {
        return (int) path.chars().filter(c -> c == '/').count();
    }

    /**
     * Reads a file; a typed error (an {@link IOException}) is recorded as the file's state, anything
     * else propagates.
     */
    private static Node readFile(IomapFileSystem fs, String path, long ino) {
        try {
            FileStat stat = fs.stat(path);
            if (stat.isDirectory()) {
                return Node.unreadable(ino, "readdir says a file, stat says a directory");
            }
            long size = stat.size();
            if (size < 0 || size > MAX_READ) {
                return Node.unreadFile(ino, size);
            }
            try (IomapFile file = fs.open(path)) {
                ByteBuffer buffer = ByteBuffer.allocate((int) size);
                while (buffer.hasRemaining()) {
                    if (file.read(buffer.position(), buffer) < 0) {
                        break;
                    }
                }
                return Node.file(ino, Arrays.copyOf(buffer.array(), buffer.position()));
            }
        } catch (IOException e) {
            return Node.unreadable(ino, e.getClass().getSimpleName() + ": " + e.getMessage());
        }
    }
}
