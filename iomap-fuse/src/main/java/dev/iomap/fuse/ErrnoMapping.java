package dev.iomap.fuse;

import static dev.iomap.fuse.LinuxErrno.E2BIG;
import static dev.iomap.fuse.LinuxErrno.EACCES;
import static dev.iomap.fuse.LinuxErrno.EBADF;
import static dev.iomap.fuse.LinuxErrno.EBUSY;
import static dev.iomap.fuse.LinuxErrno.EEXIST;
import static dev.iomap.fuse.LinuxErrno.EINVAL;
import static dev.iomap.fuse.LinuxErrno.EILSEQ;
import static dev.iomap.fuse.LinuxErrno.EIO;
import static dev.iomap.fuse.LinuxErrno.EISDIR;
import static dev.iomap.fuse.LinuxErrno.ELOOP;
import static dev.iomap.fuse.LinuxErrno.ENAMETOOLONG;
import static dev.iomap.fuse.LinuxErrno.ENODATA;
import static dev.iomap.fuse.LinuxErrno.ENOENT;
import static dev.iomap.fuse.LinuxErrno.ENOMEM;
import static dev.iomap.fuse.LinuxErrno.ENOSPC;
import static dev.iomap.fuse.LinuxErrno.ENOTDIR;
import static dev.iomap.fuse.LinuxErrno.ENOTEMPTY;
import static dev.iomap.fuse.LinuxErrno.EOPNOTSUPP;
import static dev.iomap.fuse.LinuxErrno.EPERM;
import static dev.iomap.fuse.LinuxErrno.ENXIO;
import static dev.iomap.fuse.LinuxErrno.ERANGE;
import static dev.iomap.fuse.LinuxErrno.EROFS;
import static dev.iomap.fuse.LinuxErrno.EUCLEAN;

import dev.iomap.api.CorruptFileSystemException;
import dev.iomap.api.FileNames;
import dev.iomap.device.DeviceBusyException;
import dev.iomap.device.ReadOnlyDeviceException;
import dev.iomap.device.DeviceIoException;
import dev.iomap.device.DeviceNoSpaceException;
import dev.iomap.api.InvalidRangeException;
import dev.iomap.api.NoDataException;
import dev.iomap.api.NoSpaceException;
import dev.iomap.api.NoSuchAttributeException;
import dev.iomap.api.OperationNotPermittedException;
import dev.iomap.api.SymlinkLoopException;
import dev.iomap.api.XattrLimitException;
import dev.iomap.api.NotSupportedException;
import dev.iomap.api.UnrepresentableNameException;
import dev.iomap.api.WritebackException;
import java.io.UncheckedIOException;
import java.nio.channels.ClosedChannelException;
import java.nio.file.AccessDeniedException;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.InvalidPathException;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.nio.file.NotLinkException;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;

/**
 * The one place an exception of the iomap API becomes an errno, chosen to match what the kernel's
 * own filesystems return for the same mistake:
 *
 * <table>
 * <caption>exception to errno</caption>
 * <tr><th>exception</th><th>errno</th></tr>
 * <tr><td>{@link ErrnoException} (an errno the bridge chose itself)</td><td>its errno</td></tr>
 * <tr><td>{@link NoSuchFileException}</td><td>ENOENT</td></tr>
 * <tr><td>{@link FileAlreadyExistsException}</td><td>EEXIST</td></tr>
 * <tr><td>{@link DirectoryNotEmptyException}</td><td>ENOTEMPTY</td></tr>
 * <tr><td>{@link NotDirectoryException}</td><td>ENOTDIR</td></tr>
 * <tr><td>{@link AccessDeniedException}</td><td>EACCES</td></tr>
 * <tr><td>{@link NoSuchAttributeException}</td><td>ENODATA</td></tr>
 * <tr><td>{@link SymlinkLoopException}</td><td>ELOOP</td></tr>
 * <tr><td>{@link OperationNotPermittedException}</td><td>EPERM</td></tr>
 * <tr><td>{@link NotLinkException} (readlink of a name that is not a symbolic link)</td><td>EINVAL</td></tr>
 * <tr><td>{@link XattrLimitException} of {@link XattrLimitException.Kind#NAME} /
 *     {@link XattrLimitException.Kind#VALUE}</td><td>ERANGE / E2BIG</td></tr>
 * <tr><td>other {@link FileSystemException}</td><td>by its reason, which is the C library's message
 *     for the errno ("Is a directory" is EISDIR, as the JDK itself words it); EIO otherwise</td></tr>
 * <tr><td>{@link NoSpaceException}; {@link DeviceNoSpaceException} (the host filesystem under the image is
 *     full); a {@link WritebackException} caused by either</td><td>ENOSPC (as the kernel's loop device
 *     reports {@code BLK_STS_NOSPC}, and fsync then returns the errno writeback recorded)</td></tr>
 * <tr><td>{@link dev.iomap.api.BadAddressException} (the caller's buffer faulted)</td><td>EFAULT</td></tr>
 * <tr><td>{@link DeviceBusyException} (an image another user holds)</td><td>EBUSY</td></tr>
 * <tr><td>{@link NotSupportedException}, {@link UnsupportedOperationException}</td><td>EOPNOTSUPP; a
 *     {@link NotSupportedException} whose {@link NotSupportedException#refusal() refusal} says otherwise:
 *     EINVAL ({@code INVALID_ARGUMENT}) or EPERM ({@code NOT_PERMITTED}), e.g. zonefs-like's refusals of a
 *     write that is not an append and of a truncate a sequential zone cannot do, as Linux's zonefs</td></tr>
 * <tr><td>{@link UnrepresentableNameException} (a name that stands for no byte string)</td><td>EILSEQ</td></tr>
 * <tr><td>{@link InvalidPathException} "name longer than 255 bytes" ({@link FileNames#check}'s and
 *     the engine's words)</td><td>ENAMETOOLONG</td></tr>
 * <tr><td>{@link InvalidRangeException}, other {@link InvalidPathException}, other
 *     {@link IllegalArgumentException}</td><td>EINVAL</td></tr>
 * <tr><td>{@link ReadOnlyDeviceException}</td><td>EROFS</td></tr>
 * <tr><td>{@link NoDataException} (no data or hole at or past EOF)</td><td>ENXIO</td></tr>
 * <tr><td>{@link CorruptFileSystemException}</td><td>EUCLEAN (XFS's EFSCORRUPTED)</td></tr>
 * <tr><td>{@link WritebackException}, {@link DeviceIoException}, any other exception</td><td>EIO</td></tr>
 * <tr><td>{@link ClosedChannelException} (a closed or unknown file handle)</td><td>EBADF</td></tr>
 * <tr><td>{@link OutOfMemoryError}</td><td>ENOMEM</td></tr>
 * </table>
 *
 * <p>Wrappers ({@link CompletionException}, {@link ExecutionException}, {@link UncheckedIOException})
 * are looked through.
 */
public final class ErrnoMapping {

    /** The reason of {@link FileNames#check}'s exception for a name over 255 bytes. */
    private static final String NAME_TOO_LONG = "name longer than " + FileNames.MAX_NAME_BYTES + " bytes";

    private ErrnoMapping() {
    }

    /**
     * @param error what an operation threw
     * @return the positive errno to report (the bridge returns it negated)
     */
    public static int errno(Throwable error) {
        Throwable cause = unwrap(error);
        return switch (cause) {
            case ErrnoException e -> e.errno();
            case NoSuchFileException e -> ENOENT;
            case FileAlreadyExistsException e -> EEXIST;
            case DirectoryNotEmptyException e -> ENOTEMPTY;
            case NotDirectoryException e -> ENOTDIR;
            case AccessDeniedException e -> EACCES;
            case NoSuchAttributeException e -> ENODATA;
            case SymlinkLoopException e -> ELOOP;
            case OperationNotPermittedException e -> EPERM;
            case NotLinkException e -> EINVAL;
            case FileSystemException e -> byReason(e.getReason());
            case NoSpaceException e -> ENOSPC;
            case DeviceNoSpaceException e -> ENOSPC;
            case WritebackException e when isNoSpace(e.getCause()) -> ENOSPC;
            case dev.iomap.api.BadAddressException e -> LinuxErrno.EFAULT;
            case XattrLimitException e -> e.kind() == XattrLimitException.Kind.NAME ? ERANGE : E2BIG;
            case DeviceBusyException e -> EBUSY;
            case ReadOnlyDeviceException e -> EROFS;
            case NoDataException e -> ENXIO;
            case NotSupportedException e -> switch (e.refusal()) {
                case UNSUPPORTED -> EOPNOTSUPP;
                case INVALID_ARGUMENT -> EINVAL;
                case NOT_PERMITTED -> EPERM;
            };
            case InvalidRangeException e -> EINVAL;
            case UnrepresentableNameException e -> EILSEQ;
            case InvalidPathException e when NAME_TOO_LONG.equals(e.getReason()) -> ENAMETOOLONG;
            case CorruptFileSystemException e -> EUCLEAN;
            case ClosedChannelException e -> EBADF;
            case UnsupportedOperationException e -> EOPNOTSUPP;
            case IllegalArgumentException e -> EINVAL;
            case OutOfMemoryError e -> ENOMEM;
            default -> EIO;
        };
    }

    /** @return whether {@code cause} (unwrapped) says there was no space: the filesystem's or the host's */
    private static boolean isNoSpace(Throwable cause) {
        Throwable unwrapped = cause == null ? null : unwrap(cause);
        return unwrapped instanceof NoSpaceException || unwrapped instanceof DeviceNoSpaceException;
    }

    private static Throwable unwrap(Throwable error) {
        Throwable current = error;
        while ((current instanceof CompletionException || current instanceof ExecutionException
                || current instanceof UncheckedIOException) && current.getCause() != null) {
            current = current.getCause();
        }
        return current;
    }

    /** The errno whose C library message the reason starts with; EIO for none. */
    private static int byReason(String reason) {
        if (reason == null) {
            return EIO;
        }
        record Message(String text, int errno) {
        }
        for (Message message : new Message[] {
                new Message("Is a directory", EISDIR),
                new Message("Not a directory", ENOTDIR),
                new Message("Directory not empty", ENOTEMPTY),
                new Message("File exists", EEXIST),
                new Message("No such file or directory", ENOENT),
                new Message("Invalid argument", EINVAL),
                new Message("File name too long", ENAMETOOLONG),
                new Message("Read-only file system", EROFS),
                new Message("Operation not permitted", EPERM),
                new Message("No space left on device", ENOSPC)}) {
            if (reason.startsWith(message.text())) {
                return message.errno();
            }
        }
        return EIO;
    }
}
