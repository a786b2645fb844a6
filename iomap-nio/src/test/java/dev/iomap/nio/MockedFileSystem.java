package dev.iomap.nio;

import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.when;

import dev.iomap.api.Capability;
import dev.iomap.api.FileStat;
import dev.iomap.api.FileType;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.device.BlockDevice;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Set;

/**
 * An {@link IomapNioFileSystem} over a Mockito-mocked {@link IomapFileSystem}, so a test can check the
 * exact calls the provider makes, whatever the adapters on the class path declare. Users and groups
 * are named by small passwd and group files in a test's directory.
 */
final class MockedFileSystem {
    static final Instant ATIME = Instant.parse("2026-01-02T03:04:05.123456789Z");
    static final Instant MTIME = Instant.parse("2026-02-03T04:05:06.987654321Z");
    static final Instant CTIME = Instant.parse("2026-03-04T05:06:07.000000001Z");
    static final Instant BTIME = Instant.parse("2025-12-31T23:59:59.5Z");

    final IomapFileSystem iomap = mock(IomapFileSystem.class);
    final IomapNioFileSystem fs;

    /**
     * @param dir where the passwd and group files go
     * @param capabilities what the mocked adapter declares
     */
    MockedFileSystem(Path dir, Set<Capability> capabilities) throws IOException {
        when(iomap.capabilities()).thenReturn(capabilities);
        when(iomap.adapterName()).thenReturn("mocked");
        Path passwd = Files.writeString(dir.resolve("passwd"), "root:x:0:0:root:/root:/bin/sh\n"
                + "# a comment\nalice:x:1000:1000::/home/alice:/bin/sh\nbroken line\n");
        Path group = Files.writeString(dir.resolve("group"), "root:x:0:\nstaff:x:50:alice\n");
        fs = new IomapNioFileSystem(new IomapFileSystemProvider(),
                ImageUri.parse(URI.create("iomap:mocked:" + dir.resolve("mocked.img"))), iomap,
                mock(BlockDevice.class), new IomapUserPrincipalLookupService(passwd, group));
    }

    IomapPath path(String path) {
        return new IomapPath(fs, path);
    }

    /** @return a stat with distinct values in every field */
    static FileStat stat(long ino, FileType type, int mode) {
        return new FileStat(ino, type, 42, 4096, 2, mode, 1000, 50, ATIME, MTIME, CTIME, BTIME);
    }
}
