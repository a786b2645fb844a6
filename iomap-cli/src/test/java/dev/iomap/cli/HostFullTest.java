package dev.iomap.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.iomap.api.IomapFile;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.IomapFileSystems;
import dev.iomap.api.MountOptions;
import dev.iomap.devices.FileBlockDevice;
import dev.iomap.fuse.ErrnoMapping;
import dev.iomap.fuse.LinuxErrno;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Issue 36, item 12: the host filesystem holding a mounted image fills up. Programs get ENOSPC (never
 * EIO), the filesystem stays mounted and usable, works again once the host has room, and nothing
 * fsync'd is lost: the unmount is clean and fsck finds nothing. The host is a 24 MiB tmpfs this test
 * mounts (as root; skipped where it cannot) under a 64 MiB sparse image; 40 MiB of writes fill it.
 */
class HostFullTest {
    private static final long IMAGE_BYTES = 64L << 20;
    private static final int KEPT_BYTES = 100_000;

    private Path host;
    private boolean mounted;
    private final List<LogRecord> deviceLog = new ArrayList<>();
    private final Handler capture = new Handler() {
        @Override
        public void publish(LogRecord record) {
            synchronized (deviceLog) {
                deviceLog.add(record);
            }
        }

        @Override
        public void flush() {
        }

        @Override
        public void close() {
        }
    };
    private final Logger deviceLogger = Logger.getLogger(FileBlockDevice.class.getName());

    @BeforeEach
    void mountASmallHost() throws Exception {
        host = Files.createTempDirectory("iomap-host-full-");
        int status = run("mount", "-t", "tmpfs", "-o", "size=24m", "tmpfs", host.toString());
        mounted = status == 0;
        Assumptions.assumeTrue(mounted, "cannot mount a tmpfs (needs root on Linux): mount exited " + status);
        deviceLogger.addHandler(capture);
    }

    @AfterEach
    void removeTheHost() throws Exception {
        deviceLogger.removeHandler(capture);
        if (mounted && run("umount", host.toString()) != 0) {
            run("umount", "-l", host.toString());
        }
        try (Stream<Path> paths = Files.walk(host)) {
            for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(path);
            }
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"xfs-like", "gfs2-like", "bcachefs-like"})
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void aFullHostIsEnospcToProgramsAndTheMountCarriesOnOnceThereIsRoom(String adapter) throws Exception {
        Path image = host.resolve("image");
        Cli mkfs = Cli.run("mkfs", "--adapter=" + adapter, "--size=" + IMAGE_BYTES, image.toString());
        assertThat(mkfs.status()).as(mkfs.err()).isZero();
        byte[] kept = bytes(KEPT_BYTES, 1);
        byte[] later = bytes(4096, 2);
        try (FileBlockDevice device = FileBlockDevice.open(image, 4096, false);
                IomapFileSystem fs = IomapFileSystems.mount(adapter, device, MountOptions.defaults())) {
            writeAndFsync(fs, "/kept", kept);

            Throwable full = catchThrowable(() -> writeAndFsync(fs, "/big", bytes(40 << 20, 3)));
            assertThat(full).as("writing 40 MiB over a 24 MiB host").isNotNull();
            assertThat(ErrnoMapping.errno(full)).as("errno of %s", full).isEqualTo(LinuxErrno.ENOSPC);
            Throwable more = catchThrowable(() -> writeAndFsync(fs, "/more", later));
            if (more != null) {
                assertThat(ErrnoMapping.errno(more)).as("errno of %s", more).isEqualTo(LinuxErrno.ENOSPC);
            }
            assertThat(deviceLog).as("what the device logged").isNotEmpty().allSatisfy(record -> {
                assertThat(record.getLevel()).isEqualTo(Level.WARNING);
                assertThat(record.getThrown()).as("a stack trace").isNull();
                assertThat(record.getMessage()).isEqualTo(image + ": the host filesystem holding the image is full;"
                        + " writes to the image fail with ENOSPC until it has space again");
            });

            assertThat(run("mount", "-o", "remount,size=128m", host.toString())).as("growing the host").isZero();
            writeAndFsync(fs, "/after", later);
            assertThat(read(fs, "/kept", KEPT_BYTES)).isEqualTo(kept);
        }
        try (FileBlockDevice device = FileBlockDevice.openReadOnly(image, 4096, false)) {
            assertThat(IomapFileSystems.fsck(adapter, device).problems()).as("fsck after the unmount").isEmpty();
        }
        try (FileBlockDevice device = FileBlockDevice.open(image, 4096, false);
                IomapFileSystem fs = IomapFileSystems.mount(adapter, device, MountOptions.defaults())) {
            assertThat(read(fs, "/kept", KEPT_BYTES)).as("fsync'd before the host filled").isEqualTo(kept);
            assertThat(read(fs, "/after", later.length)).as("fsync'd after it had room again").isEqualTo(later);
        }
    }

    private static void writeAndFsync(IomapFileSystem fs, String path, byte[] data) throws IOException {
        try (IomapFile file = fs.create(path)) {
            ByteBuffer src = ByteBuffer.wrap(data);
            while (src.hasRemaining()) {
                file.write(src.position(), src);
            }
            file.fsync();
        }
    }

    private static byte[] read(IomapFileSystem fs, String path, int length) throws IOException {
        try (IomapFile file = fs.open(path)) {
            ByteBuffer dst = ByteBuffer.allocate(length);
            while (dst.hasRemaining() && file.read(dst.position(), dst) > 0) {
                // reads until full or EOF
            }
            return Arrays.copyOf(dst.array(), dst.position());
        }
    }

    private static byte[] bytes(int length, int seed) {
        byte[] data = new byte[length];
        new java.util.Random(seed).nextBytes(data);
        return data;
    }

    private static int run(String... command) throws IOException, InterruptedException {
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        process.getInputStream().readAllBytes();
        return process.waitFor();
    }
}
