package dev.iomap.fuse;

import static org.assertj.core.api.Assertions.assertThat;

import dev.iomap.api.CorruptFileSystemException;
import dev.iomap.api.FileNames;
import dev.iomap.device.DeviceBusyException;
import dev.iomap.device.ReadOnlyDeviceException;
import dev.iomap.api.NoDataException;
import dev.iomap.device.DeviceIoException;
import dev.iomap.api.IomapException;
import dev.iomap.api.InvalidRangeException;
import dev.iomap.api.NoSpaceException;
import dev.iomap.api.NoSuchAttributeException;
import dev.iomap.api.OperationNotPermittedException;
import dev.iomap.api.SymlinkLoopException;
import dev.iomap.api.XattrLimitException;
import dev.iomap.api.NotSupportedException;
import dev.iomap.api.UnrepresentableNameException;
import dev.iomap.api.WritebackException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.ClosedChannelException;
import java.nio.file.AccessDeniedException;
import java.nio.file.ClosedFileSystemException;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.InvalidPathException;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.nio.file.NotLinkException;
import java.util.concurrent.CompletionException;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** The exception-to-errno table, row by row. */
class ErrnoMappingTest {

    static Stream<Arguments> table() {
        return Stream.of(
                row(new NoSuchFileException("/a"), LinuxErrno.ENOENT),
                row(new FileAlreadyExistsException("/a"), LinuxErrno.EEXIST),
                row(new DirectoryNotEmptyException("/d"), LinuxErrno.ENOTEMPTY),
                row(new NotDirectoryException("/f"), LinuxErrno.ENOTDIR),
                row(new AccessDeniedException("/a"), LinuxErrno.EACCES),
                row(new FileSystemException("/d", null, "Is a directory"), LinuxErrno.EISDIR),
                row(new FileSystemException("/a", "/a/b", "Invalid argument (a directory cannot move into itself)"),
                        LinuxErrno.EINVAL),
                row(new FileSystemException("/n", null, "File name too long"), LinuxErrno.ENAMETOOLONG),
                row(new FileSystemException("/a", null, "something else"), LinuxErrno.EIO),
                row(new FileSystemException("/a"), LinuxErrno.EIO),
                row(new NoSpaceException("full"), LinuxErrno.ENOSPC),
                row(new dev.iomap.api.BadAddressException("source faulted", new InternalError("fault")), LinuxErrno.EFAULT),
                row(new NoSuchAttributeException("/a", "user.x"), LinuxErrno.ENODATA),
                row(new XattrLimitException(XattrLimitException.Kind.NAME, "name too long"), LinuxErrno.ERANGE),
                row(new XattrLimitException(XattrLimitException.Kind.VALUE, "value too long"), LinuxErrno.E2BIG),
                row(new SymlinkLoopException("/loop/a"), LinuxErrno.ELOOP),
                row(new OperationNotPermittedException("/d", "hard link to a directory"), LinuxErrno.EPERM),
                row(new NotLinkException("/f"), LinuxErrno.EINVAL),
                row(new NotLinkException("/f", null, "not a symbolic link"), LinuxErrno.EINVAL),
                row(new DeviceBusyException("in use"), LinuxErrno.EBUSY),
                row(new ReadOnlyDeviceException("image opened read-only"), LinuxErrno.EROFS),
                row(new NoDataException("no data at or past the end of the file"), LinuxErrno.ENXIO),
                row(new NotSupportedException("punch hole"), LinuxErrno.EOPNOTSUPP),
                row(new NotSupportedException("append-only", NotSupportedException.Refusal.INVALID_ARGUMENT), LinuxErrno.EINVAL),
                row(new NotSupportedException("truncate of a zone", NotSupportedException.Refusal.NOT_PERMITTED), LinuxErrno.EPERM),
                row(new UnsupportedOperationException("no"), LinuxErrno.EOPNOTSUPP),
                row(new InvalidRangeException("negative offset"), LinuxErrno.EINVAL),
                row(new InvalidPathException("/a/./b", "'.' name"), LinuxErrno.EINVAL),
                row(new UnrepresentableNameException("/caf\uDCC3\uDCA9", "escaped bytes that spell UTF-8"),
                        LinuxErrno.EILSEQ),
                row(thrownBy(() -> FileNames.encode("lone\uD800")), LinuxErrno.EILSEQ),
                row(thrownBy(() -> FileNames.check("n".repeat(256))), LinuxErrno.ENAMETOOLONG),
                row(new InvalidPathException("/" + "n".repeat(256), "name longer than 255 bytes"),
                        LinuxErrno.ENAMETOOLONG),
                row(new IllegalArgumentException("bad"), LinuxErrno.EINVAL),
                row(new CorruptFileSystemException("bad magic"), LinuxErrno.EUCLEAN),
                row(new WritebackException("lost", new IOException("device")), LinuxErrno.EIO),
                row(new DeviceIoException("read", 0, 4096, null), LinuxErrno.EIO),
                row(new dev.iomap.device.DeviceNoSpaceException("write: the host filesystem is full", 0, 4096,
                        new IOException("No space left on device")), LinuxErrno.ENOSPC),
                row(new WritebackException("lost", new dev.iomap.device.DeviceNoSpaceException("host full", 0, 4096,
                        null)), LinuxErrno.ENOSPC),
                row(new WritebackException("lost", new NoSpaceException("no blocks at writeback")),
                        LinuxErrno.ENOSPC),
                row(new WritebackException("lost", new DeviceIoException("write", 0, 4096, null)), LinuxErrno.EIO),
                row(new IomapException("anything else"), LinuxErrno.EIO),
                row(new IOException("plain"), LinuxErrno.EIO),
                row(new ClosedChannelException(), LinuxErrno.EBADF),
                row(new ClosedFileSystemException(), LinuxErrno.EIO),
                row(new IllegalStateException("bug"), LinuxErrno.EIO),
                row(new OutOfMemoryError(), LinuxErrno.ENOMEM),
                row(new StackOverflowError(), LinuxErrno.EIO),
                row(new CompletionException(new NoSpaceException("full")), LinuxErrno.ENOSPC),
                row(new UncheckedIOException(new NoSuchFileException("/a")), LinuxErrno.ENOENT));
    }

    private static Throwable thrownBy(Runnable call) {
        try {
            call.run();
        } catch (RuntimeException e) {
            return e;
        }
        throw new AssertionError("did not throw");
    }

    private static Arguments row(Throwable error, int errno) {
        return Arguments.of(error.getClass().getSimpleName() + " -> " + LinuxErrno.name(errno), error, errno);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("table")
    void mapsEachExceptionToTheKernelsErrno(String row, Throwable error, int errno) {
        assertThat(ErrnoMapping.errno(error)).isEqualTo(errno);
    }

    @Test
    void anErrnoTheBridgeChoseIsItsOwn() {
        assertThat(ErrnoMapping.errno(new ErrnoException(LinuxErrno.ENOTTY, "ioctl"))).isEqualTo(LinuxErrno.ENOTTY);
    }
}
