package dev.iomap.nio;

import dev.iomap.api.AttributeChange;
import dev.iomap.api.Capability;
import dev.iomap.api.FileStat;
import dev.iomap.api.FileType;
import dev.iomap.api.IomapFile;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.NewInodeAttributes;
import dev.iomap.api.RenameFlag;
import dev.iomap.api.XattrMode;
import dev.iomap.api.Xattrs;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.CopyOption;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.StandardCopyOption;
import java.util.Set;

/**
 * {@code Files.copy} and {@code Files.move} between paths of iomap file systems (the same one or two
 * different images), with the default provider's semantics.
 *
 * <p>Copy follows a symbolic link as the source unless {@code NOFOLLOW_LINKS} is given; then the link
 * itself is copied (a new link with the same target). Without {@code REPLACE_EXISTING} an existing
 * target is {@link FileAlreadyExistsException}; with it the target (a link itself, not what it points
 * at) is deleted first (a non-empty directory is {@link DirectoryNotEmptyException}). Copying a
 * directory creates an empty one. {@code COPY_ATTRIBUTES} copies, where the target's adapter keeps
 * them ({@link Capability#POSIX_ATTRIBUTES}), the modification and access times and, where the
 * source's keeps them too, mode (not of a link), owner and group; and where both keep extended
 * attributes ({@link Capability#XATTRS}) the {@code user.} ones of a file or directory.
 *
 * <p>Move never follows a link: it moves the name. Within one file system it is one rename: without
 * {@code REPLACE_EXISTING} with {@link RenameFlag#NOREPLACE}, so an existing target is refused
 * atomically ({@link FileAlreadyExistsException}); {@code ATOMIC_MOVE} is a plain rename (an existing
 * file at the target is replaced); {@code REPLACE_EXISTING} deletes a directory at the target (or
 * anything, when the source is a directory) first. Across file systems it is a copy with attributes
 * and a delete ({@code ATOMIC_MOVE} is {@link AtomicMoveNotSupportedException}).
 */
final class CopyMove {
    private static final int CHUNK = 1 << 20;

    private CopyMove() {
    }

    private record Options(boolean replace, boolean atomic, boolean copyAttributes, boolean follow) {
        static Options of(CopyOption[] options, boolean forMove) {
            boolean replace = false;
            boolean atomic = false;
            boolean attributes = false;
            boolean follow = !forMove;
            for (CopyOption option : options) {
                if (option == StandardCopyOption.REPLACE_EXISTING) {
                    replace = true;
                } else if (option == StandardCopyOption.ATOMIC_MOVE && forMove) {
                    atomic = true;
                } else if (option == StandardCopyOption.COPY_ATTRIBUTES) {
                    attributes = true;
                } else if (option == LinkOption.NOFOLLOW_LINKS) {
                    follow = false;
                } else {
                    throw new UnsupportedOperationException("copy option " + option + " is not supported by "
                            + (forMove ? "move" : "copy"));
                }
            }
            return new Options(replace, atomic, attributes, follow);
        }
    }

    static void copy(IomapPath source, IomapPath target, CopyOption... options) throws IOException {
        copy(source, target, Options.of(options, false));
    }

    private static void copy(IomapPath source, IomapPath target, Options flags) throws IOException {
        FileStat stat = source.getFileSystem().stat(source, flags.follow());
        if (sameFile(source, target)) {
            return;
        }
        IomapNioFileSystem to = target.getFileSystem();
        if (stat.isSymbolicLink()) {
            to.requireForView(Capability.SYMLINKS, "copying a symbolic link");
        }
        clearTarget(target, flags.replace());
        String name = target.fsPath();
        switch (stat.type()) {
            case DIRECTORY -> to.iomap().mkdir(name);
            case SYMLINK -> {
                String link = source.getFileSystem().iomap().readSymbolicLink(source.fsPath());
                to.iomap().createSymbolicLink(name, link, NewInodeAttributes.defaults(FileType.SYMLINK));
            }
            case REGULAR -> copyData(source.getFileSystem().target(source, flags.follow()), source, name, to);
            case FIFO, CHARACTER_DEVICE, BLOCK_DEVICE, SOCKET -> to.iomap().createSpecialFile(name, stat.type(),
                    stat.rdev(), NewInodeAttributes.defaults(stat.type()));
        }
        if (flags.copyAttributes()) {
            copyAttributes(source, flags.follow(), stat, to, name);
        }
    }

    private static void copyData(String from, IomapPath source, String name, IomapNioFileSystem to)
            throws IOException {
        try (IomapFile in = source.getFileSystem().iomap().open(from);
                IomapFile out = to.iomap().create(name)) {
            ByteBuffer buffer = ByteBuffer.allocate(CHUNK);
            long position = 0;
            while (true) {
                buffer.clear();
                int n = in.read(position, buffer);
                if (n < 0) {
                    break;
                }
                buffer.flip();
                out.write(position, buffer);
                position += n;
            }
        }
    }

    /** After the data: extended attributes first, times last, as nothing after them may move them. */
    private static void copyAttributes(IomapPath source, boolean follow, FileStat stat, IomapNioFileSystem to,
            String name) throws IOException {
        IomapNioFileSystem from = source.getFileSystem();
        if (!stat.isSymbolicLink() && from.supports(Capability.XATTRS) && to.supports(Capability.XATTRS)) {
            String file = from.target(source, follow);
            for (String xattr : from.iomap().listXattrs(file)) {
                if (Xattrs.isUser(xattr)) {
                    to.iomap().setXattr(name, xattr, from.iomap().getXattr(file, xattr), XattrMode.ANY);
                }
            }
        }
        if (!to.supports(Capability.POSIX_ATTRIBUTES)) {
            return;
        }
        AttributeChange change = AttributeChange.none().withAtime(stat.atime()).withMtime(stat.mtime());
        if (from.supports(Capability.POSIX_ATTRIBUTES)) {
            change = change.withUid(stat.uid()).withGid(stat.gid());
            if (!stat.isSymbolicLink()) {
                change = change.withMode(stat.mode());
            }
        }
        to.iomap().setAttributes(name, change);
    }

    static void move(IomapPath source, IomapPath target, CopyOption... options) throws IOException {
        Options flags = Options.of(options, true);
        IomapNioFileSystem fs = source.getFileSystem();
        FileStat stat = fs.stat(source, false);
        if (sameFile(source, target)) {
            return;
        }
        if (fs != target.getFileSystem()) {
            moveAcross(source, target, stat, flags);
            return;
        }
        String from = source.fsPath();
        String to = target.fsPath();
        if (stat.isDirectory() && to.startsWith(from + "/")) {
            throw new FileSystemException(from, to, "Invalid argument (a directory cannot move into itself)");
        }
        IomapFileSystem iomap = fs.iomap();
        if (flags.atomic()) {
            iomap.rename(from, to);
            return;
        }
        if (!flags.replace()) {
            iomap.rename(from, to, Set.of(RenameFlag.NOREPLACE));
            return;
        }
        FileStat existing = statIfExists(target);
        if (existing != null && (existing.isDirectory() || stat.isDirectory())) {
            delete(target, existing);
        }
        iomap.rename(from, to);
    }

    private static void moveAcross(IomapPath source, IomapPath target, FileStat stat, Options flags)
            throws IOException {
        if (flags.atomic()) {
            throw new AtomicMoveNotSupportedException(source.toString(), target.toString(),
                    "source and target are in different iomap file systems");
        }
        if (stat.isDirectory() && !source.getFileSystem().iomap().readdir(source.fsPath()).isEmpty()) {
            throw new DirectoryNotEmptyException(source.toString());
        }
        copy(source, target, new Options(flags.replace(), false, true, false));
        delete(source, stat);
    }

    private static boolean sameFile(IomapPath source, IomapPath target) {
        return source.getFileSystem() == target.getFileSystem() && source.normalPath().equals(target.normalPath());
    }

    /** @return what the name itself is (a link is not followed), or null if nothing has it */
    private static FileStat statIfExists(IomapPath path) throws IOException {
        try {
            return path.getFileSystem().stat(path, false);
        } catch (NoSuchFileException e) {
            return null;
        }
    }

    private static void clearTarget(IomapPath target, boolean replace) throws IOException {
        FileStat existing = statIfExists(target);
        if (existing == null) {
            return;
        }
        if (!replace) {
            throw new FileAlreadyExistsException(target.toString());
        }
        delete(target, existing);
    }

    private static void delete(IomapPath path, FileStat stat) throws IOException {
        String name = path.fsPath();
        if (stat.isDirectory()) {
            path.getFileSystem().iomap().rmdir(name);
        } else {
            path.getFileSystem().iomap().unlink(name);
        }
    }
}
