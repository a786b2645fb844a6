package dev.iomap.nio;

import dev.iomap.api.FileStat;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.SymlinkLoopException;
import java.io.IOException;
import java.nio.file.NoSuchFileException;
import java.util.ArrayList;
import java.util.List;

/**
 * Where {@code open(O_CREAT)} creates a file whose name is a dangling symbolic link: at the link's
 * target, as Linux does (following a chain of dangling links, at most
 * {@value IomapFileSystem#MAX_SYMLINK_FOLLOWS}). The target is resolved physically: from the link's
 * directory with every link resolved, a ".." going to the parent of what was reached, each name but
 * the last resolved through {@link IomapFileSystem#realPath} (so it must exist).
 */
final class DanglingLinks {
    private DanglingLinks() {
    }

    /**
     * @param iomap the mounted file system (declaring {@link dev.iomap.api.Capability#SYMLINKS})
     * @param name a path whose last name does not resolve to a file
     * @return the path to create: {@code name} itself if it is not a symbolic link (or does not exist),
     *     else its final target's path, with no link and no "." or ".." in it
     * @throws SymlinkLoopException after {@value IomapFileSystem#MAX_SYMLINK_FOLLOWS} links
     * @throws NoSuchFileException if a directory on a target's way does not exist
     */
    static String createTarget(IomapFileSystem iomap, String name) throws IOException {
        String current = name;
        for (int follows = 0; follows <= IomapFileSystem.MAX_SYMLINK_FOLLOWS; follows++) {
            FileStat stat;
            try {
                stat = iomap.lstat(current);
            } catch (NoSuchFileException missing) {
                return current;
            }
            if (!stat.isSymbolicLink()) {
                return current;
            }
            current = resolve(iomap, iomap.realPath(parent(current)), iomap.readSymbolicLink(current));
        }
        throw new SymlinkLoopException(name);
    }

    private static String parent(String path) {
        int slash = path.lastIndexOf('/');
        return slash == 0 ? "/" : path.substring(0, slash);
    }

    /**
     * @param directory a directory's path with no link in it
     * @param target a link's target, relative to {@code directory} or absolute
     * @return the target's path: every name but the last resolved, the last as given
     */
    private static String resolve(IomapFileSystem iomap, String directory, String target) throws IOException {
        List<String> names = new ArrayList<>();
        for (String part : target.split("/")) {
            if (!part.isEmpty() && !part.equals(".")) {
                names.add(part);
            }
        }
        String reached = target.startsWith("/") ? "/" : directory;
        for (int i = 0; i < names.size(); i++) {
            String part = names.get(i);
            if (part.equals("..")) {
                reached = parent(reached);
            } else if (i == names.size() - 1) {
                return child(reached, part);
            } else {
                reached = iomap.realPath(child(reached, part));
            }
        }
        return reached;
    }

    private static String child(String directory, String name) {
        return directory.equals("/") ? "/" + name : directory + "/" + name;
    }
}
