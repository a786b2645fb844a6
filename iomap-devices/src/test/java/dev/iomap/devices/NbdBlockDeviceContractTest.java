package dev.iomap.devices;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.iomap.device.BlockDevice;
import dev.iomap.devices.nbd.LocalNbdServer;
import dev.iomap.devices.nbd.NbdBlockDevice;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.TestInstance;

/**
 * The device contract on {@link NbdBlockDevice}, against real servers on 127.0.0.1: Debian's nbd-server
 * (simple replies; one server for the class, a fresh sparse export per test, since it takes seconds to
 * greet its first client) and qemu-nbd (structured replies; a server per test).
 */
class NbdBlockDeviceContractTest {
    /** Exports the nbd-server of a class serves: more than the contract has tests. */
    private static final int EXPORTS = 40;

    /** Opens the device on a fresh export; stops the servers after each test, or after the class. */
    @TestInstance(TestInstance.Lifecycle.PER_CLASS)
    abstract static class OnServer extends BlockDeviceContractTest {
        /** The exports' directory, for the whole class (a {@code TempDir} field would be emptied per test). */
        private Path dir;
        private LocalNbdServer server;
        private int exportsUsed;

        abstract LocalNbdServer.Kind kind();

        @Override
        protected BlockDevice open(int blockSize, long capacity) throws IOException {
            assumeTrue(kind().installed(), kind() + " is not installed");
            if (dir == null) {
                dir = Files.createTempDirectory("iomap-nbd-contract-");
            }
            if (kind() == LocalNbdServer.Kind.QEMU_NBD) {
                server = LocalNbdServer.start(kind(), dir, capacity, "e" + exportsUsed);
            } else if (server == null) {
                server = LocalNbdServer.start(kind(), dir, capacity,
                        IntStream.range(0, EXPORTS).mapToObj(i -> "e" + i).toArray(String[]::new));
            }
            if (exportsUsed == EXPORTS) {
                throw new IllegalStateException("the contract has more tests than the server has exports");
            }
            return NbdBlockDevice.open(server.export("e" + exportsUsed++), blockSize);
        }

        /** Runs before the contract's own close: the device is closed while its server still runs. */
        @AfterEach
        void closeDeviceFirst() throws IOException {
            try {
                if (device != null) {
                    device.close();
                }
            } finally {
                if (server != null && kind() == LocalNbdServer.Kind.QEMU_NBD) {
                    server.close();
                }
            }
        }

        @AfterAll
        void stopServerAndDeleteTheExports() throws IOException {
            try {
                if (server != null) {
                    server.close();
                }
            } finally {
                if (dir != null) {
                    try (Stream<Path> files = Files.walk(dir)) {
                        for (Path file : files.sorted(Comparator.reverseOrder()).toList()) {
                            Files.delete(file);
                        }
                    }
                }
            }
        }
    }

    @Nested
    class NbdServer extends OnServer {
        @Override
        LocalNbdServer.Kind kind() {
            return LocalNbdServer.Kind.NBD_SERVER;
        }
    }

    @Nested
    class QemuNbd extends OnServer {
        @Override
        LocalNbdServer.Kind kind() {
            return LocalNbdServer.Kind.QEMU_NBD;
        }
    }
}
