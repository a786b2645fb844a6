package dev.iomap.nio;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.iomap.api.FormatOptions;
import dev.iomap.api.IomapFileSystems;
import dev.iomap.devices.nbd.LocalNbdServer;
import dev.iomap.devices.nbd.NbdBlockDevice;
import java.net.URI;
import java.nio.file.FileSystem;
import java.nio.file.FileSystemAlreadyExistsException;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * An NBD export as the image of an NIO file system, {@code iomap:xfs-like:nbd://127.0.0.1:PORT/EXPORT},
 * on a real nbd-server the test starts and stops.
 */
class NbdFileSystemTest {
    @TempDir
    Path dir;

    @Test
    void anNbdExportMountsAsAFileSystemAndKeepsWhatWasWritten() throws Exception {
        assumeTrue(LocalNbdServer.Kind.NBD_SERVER.installed(), "nbd-server is not installed");
        try (var server = LocalNbdServer.start(LocalNbdServer.Kind.NBD_SERVER, dir, 32L << 20, "disk")) {
            try (var device = NbdBlockDevice.open(server.export("disk"), 4096)) {
                IomapFileSystems.format("xfs-like", device, new FormatOptions(4096, "nbd", Map.of()));
            }
            URI uri = URI.create("iomap:xfs-like:nbd://127.0.0.1:" + server.port() + "/disk");

            try (FileSystem fs = FileSystems.newFileSystem(uri, Map.of())) {
                Files.writeString(fs.getPath("/hello.txt"), "hello over NBD");
                assertThat(fs.getPath("/hello.txt").toUri().toString())
                        .isEqualTo("iomap:xfs-like:nbd%3A//127.0.0.1%3A" + server.port() + "/disk!/hello.txt");
                assertThat(Files.getFileStore(fs.getPath("/")).name())
                        .isEqualTo("nbd://127.0.0.1:" + server.port() + "/disk");
                assertThatThrownBy(() -> FileSystems.newFileSystem(uri, Map.of()))
                        .isInstanceOf(FileSystemAlreadyExistsException.class);
            }
            try (FileSystem fs = FileSystems.newFileSystem(uri, Map.of())) {
                assertThat(Files.readString(fs.getPath("/hello.txt"))).isEqualTo("hello over NBD");
                assertThat(Path.of(fs.getPath("/hello.txt").toUri())).isEqualTo(fs.getPath("/hello.txt"));
            }
        }
    }

    @Test
    void anNbdAddressThisClientCannotUseIsAnIllegalArgument() {
        assertThatThrownBy(() -> FileSystems.newFileSystem(URI.create("iomap:xfs-like:nbds://127.0.0.1/disk"),
                Map.of())).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("NBD over TLS is not supported");
    }
}
