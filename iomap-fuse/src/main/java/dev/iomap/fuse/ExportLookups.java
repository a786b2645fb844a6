package dev.iomap.fuse;

import dev.iomap.api.DirEntry;
import dev.iomap.api.FileStat;
import dev.iomap.api.FileType;
import dev.iomap.api.IomapFileSystem;
import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.NoSuchFileException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

/**
 * The search behind {@code FUSE_EXPORT_SUPPORT}'s lookup of "{@code .}" ({@link FuseBridge#lookup}): a
 * name for an inode number the node table no longer holds. Files have no parent pointers, so the tree is
 * walked breadth first from the root, one listing per directory, and the names from the root to the inode
 * are remembered in the table without a lookup count ({@link Nodes#passedThrough}), so that the inode has
 * a path while the kernel holds it. Called with the table's namespace read lock held, so no rename moves
 * what is walked.
 */
final class ExportLookups {
    private final IomapFileSystem fs;
    private final Nodes nodes;
    private final InodeOperations inodes;

    /**
     * @param fs the mounted file system
     * @param nodes the mount's node table
     * @param inodes the mount's attribute operations (for generations)
     */
    ExportLookups(IomapFileSystem fs, Nodes nodes, InodeOperations inodes) {
        this.fs = fs;
        this.nodes = nodes;
        this.inodes = inodes;
    }

    /**
     * @param ino an inode number
     * @return whether a name of it was found (and its path is now in the table)
     * @throws IOException as the file system's listings
     */
    boolean findByNumber(long ino) throws IOException {
        ArrayDeque<String> directories = new ArrayDeque<>();
        directories.add("/");
        while (!directories.isEmpty()) {
            String directory = directories.poll();
            List<DirEntry> listing;
            try {
                listing = fs.readdir(directory);
            } catch (NoSuchFileException | AccessDeniedException gone) {
                continue;
            }
            for (DirEntry child : listing) {
                String path = directory.equals("/") ? "/" + child.name() : directory + "/" + child.name();
                if (child.ino() == ino) {
                    rememberNames(path);
                    return true;
                }
                if (child.type() == FileType.DIRECTORY) {
                    directories.add(path);
                }
            }
        }
        return false;
    }

    /** Remembers every name of {@code path} but the root, each under its parent's node, in one step. */
    private void rememberNames(String path) throws IOException {
        List<Nodes.Step> chain = new ArrayList<>();
        long parent = Nodes.ROOT;
        StringBuilder prefix = new StringBuilder();
        for (String name : path.substring(1).split("/")) {
            prefix.append('/').append(name);
            FileStat stat = inodes.lstat(prefix.toString());
            long nodeid = nodes.nodeid(stat.ino());
            chain.add(new Nodes.Step(nodeid, inodes.generation(stat), new Nodes.Name(parent, name)));
            parent = nodeid;
        }
        nodes.passedThrough(chain);
    }
}
