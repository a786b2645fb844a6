package dev.iomap.core.vfs;

import dev.iomap.api.FileNames;
import dev.iomap.api.FileType;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.SymlinkLoopException;
import dev.iomap.spi.InodeOps;
import java.io.IOException;
import java.nio.file.NotDirectoryException;
import java.util.ArrayList;
import java.util.List;

/**
 * One path resolution through symbolic links: the chain of inodes (with their names and types) from
 * the root to where it has got, and the count of links followed. Keeping the chain makes a target's
 * {@code ..} physical (the parent of the directory the walk is in), and knowing each step's type costs
 * one {@code getattr} per name. Caller holds the namespace lock.
 */
final class PathWalk {
    private final InodeOps inodes;
    private final String path;
    private final List<Step> chain = new ArrayList<>();
    private int follows;

    /** One inode on the chain, and the name that led to it (null for the root). */
    private record Step(long ino, String name, FileType type) {
    }

    /**
     * @param rootIno the mount's root directory
     * @param inodes the mount's inode operations, which the walk looks names up with
     * @param path the path being resolved, for error messages
     */
    PathWalk(long rootIno, InodeOps inodes, String path) {
        this.inodes = inodes;
        this.path = path;
        chain.add(new Step(rootIno, null, FileType.DIRECTORY));
    }

    /** @return the inode the walk has reached */
    long top() {
        return chain.getLast().ino();
    }

    /** @return the inodes from the root down to {@link #top()} */
    List<Long> inodes() {
        return chain.stream().map(Step::ino).toList();
    }

    /** @throws NotDirectoryException if {@link #top()} is not a directory */
    void requireDirectory() throws NotDirectoryException {
        if (chain.getLast().type() != FileType.DIRECTORY) {
            throw new NotDirectoryException(path);
        }
    }

    /** @return the absolute path of {@link #top()} with no link in it */
    String path() {
        if (chain.size() == 1) {
            return "/";
        }
        StringBuilder result = new StringBuilder();
        for (Step step : chain.subList(1, chain.size())) {
            result.append('/').append(step.name());
        }
        return result.toString();
    }

    /**
     * Walks {@code names} (which may hold "." and "..", from link targets) from {@link #top()}.
     *
     * @param names the names, in order
     * @param followLast whether a link as the last of {@code names} is followed
     */
    void names(List<String> names, boolean followLast) throws IOException {
        for (int i = 0; i < names.size(); i++) {
            String name = names.get(i);
            requireDirectory();
            if (name.equals(".")) {
                continue;
            }
            if (name.equals("..")) {
                if (chain.size() > 1) {
                    chain.removeLast();
                }
                continue;
            }
            long child = inodes.lookup(top(), name);
            FileType type = inodes.getattr(child).type();
            if (type == FileType.SYMLINK && (i < names.size() - 1 || followLast)) {
                follow(child);
            } else {
                chain.add(new Step(child, name, type));
            }
        }
    }

    private void follow(long link) throws IOException {
        if (++follows > IomapFileSystem.MAX_SYMLINK_FOLLOWS) {
            throw new SymlinkLoopException(path);
        }
        String target = FileNames.decode(inodes.readlink(link));
        if (target.startsWith("/")) {
            chain.subList(1, chain.size()).clear();
        }
        List<String> names = new ArrayList<>();
        for (String name : target.split("/")) {
            if (!name.isEmpty()) {
                names.add(name);
            }
        }
        names(names, true);
        if (target.endsWith("/")) {
            requireDirectory(); // as in Linux, a trailing slash names a directory (else ENOTDIR)
        }
    }
}
