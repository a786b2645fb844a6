package dev.iomap.nio;

import dev.iomap.api.FileStat;
import dev.iomap.api.IomapFile;
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

/**
 * {@code Files.copy} and {@code Files.move} between paths of iomap file systems (the same one or two
 * different images), with the default provider's semantics: without {@code REPLACE_EXISTING} an
 * existing target is {@link FileAlreadyExistsException}; with it the target is deleted first (a
 * non-empty directory is {@link DirectoryNotEmptyException}), except that a file moved over a file
 * in the same file system is one atomic rename. Copying a directory creates an empty one. Times are
 * not copied ({@code COPY_ATTRIBUTES} is accepted, and has nothing it can copy).
 */
final class CopyMove {
    private static final int CHUNK = 1 << 20;

    private CopyMove() {
    }

    private record Options(boolean replace, boolean atomic) {
        static Options of(CopyOption[] options, boolean forMove) {
            boolean replace = false;
            boolean atomic = false;
            for (CopyOption option : options) {
                if (option == StandardCopyOption.REPLACE_EXISTING) {
                    replace = true;
                } else if (option == StandardCopyOption.ATOMIC_MOVE && forMove) {
                    atomic = true;
                } else if (option != StandardCopyOption.COPY_ATTRIBUTES && option != LinkOption.NOFOLLOW_LINKS) {
                    throw new UnsupportedOperationException("copy option " + option + " is not supported by "
                            + (forMove ? "move" : "copy"));
                }
            }
            return new Options(replace, atomic);
        }
    }

    static void copy(IomapPath source, IomapPath target, CopyOption... options) throws IOException {
        Options flags = Options.of(options, false);
        FileStat stat = source.getFileSystem().stat(source);
        if (sameFile(source, target)) {
            return;
        }
        clearTarget(target, flags.replace());
        String to = target.fsPath();
        if (stat.isDirectory()) {
            target.getFileSystem().iomap().mkdir(to);
            return;
        }
        try (IomapFile in = source.getFileSystem().iomap().open(source.fsPath());
                IomapFile out = target.getFileSystem().iomap().create(to)) {
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

    static void move(IomapPath source, IomapPath target, CopyOption... options) throws IOException {
        Options flags = Options.of(options, true);
        IomapNioFileSystem fs = source.getFileSystem();
        FileStat stat = fs.stat(source);
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
        FileStat existing = statIfExists(target);
        if (existing != null && !flags.atomic()) {
            if (!flags.replace()) {
                throw new FileAlreadyExistsException(to);
            }
            if (existing.isDirectory() || stat.isDirectory()) {
                delete(target, existing);
            }
        }
        fs.iomap().rename(from, to);
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
        copy(source, target, flags.replace() ? new CopyOption[] {StandardCopyOption.REPLACE_EXISTING}
                : new CopyOption[0]);
        delete(source, stat);
    }

    private static boolean sameFile(IomapPath source, IomapPath target) {
        return source.getFileSystem() == target.getFileSystem() && source.normalPath().equals(target.normalPath());
    }

    private static FileStat statIfExists(IomapPath path) throws IOException {
        try {
            return path.getFileSystem().stat(path);
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
