package dev.iomap.cli.observe;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.iomap.api.FormatOptions;
import dev.iomap.api.IomapFile;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.IomapFileSystems;
import dev.iomap.api.MountOptions;
import dev.iomap.devices.RamBlockDevice;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import javax.management.ObjectName;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A mount seen from outside (issue 41 items 2, 3): its trace events streamed through its socket, its
 * samples once a second, its counters over HTTP in Prometheus' text format and over JMX, and its socket
 * closed to other users. The mount is in this process, without FUSE: what is observed is the file system.
 */
class MountObservationTest {
    @TempDir
    Path dir;

    private final ExecutorService reader = Executors.newSingleThreadExecutor();
    private RamBlockDevice device;
    private IomapFileSystem fs;
    private MountRuntime runtime;
    private Path mountPoint;
    private MountObservation observation;

    @BeforeEach
    void mount() throws IOException {
        device = new RamBlockDevice(4096, 64L << 20);
        IomapFileSystems.format("xfs-like", device, FormatOptions.blockSize(4096));
        fs = IomapFileSystems.mount("xfs-like", device, MountOptions.defaults());
        runtime = MountRuntime.at(dir.resolve("run"));
        mountPoint = Files.createDirectory(dir.resolve("mnt"));
        observation = MountObservation.start(fs, mountPoint, "127.0.0.1:0", runtime);
    }

    @AfterEach
    void unmount() throws IOException {
        reader.shutdownNow();
        try {
            observation.close();
        } finally {
            fs.close();
            device.close();
        }
    }

    private void writeAndFsync(String path, int bytes) throws IOException {
        boolean exists = fs.readdir("/").stream().anyMatch(entry -> ("/" + entry.name()).equals(path));
        try (IomapFile file = exists ? fs.open(path) : fs.create(path)) {
            file.write(0, ByteBuffer.allocate(bytes));
            file.fsync();
        }
    }

    @Test
    void traceStreamsTheWritebackOfAnFsyncedFileLineByLine() throws Exception {
        try (ObservationClient client = ObservationClient.connect(runtime, mountPoint)) {
            client.requestTrace("iomap_writeback_folio,iomap:iomap_add_to_ioend", -1);
            assertThat(client.readLine()).isEqualTo("# tracing iomap:iomap_writeback_folio,iomap:iomap_add_to_ioend");
            Future<List<String>> lines = reader.submit(() -> List.of(client.readLine(), client.readLine()));

            writeAndFsync("/f", 8192);

            assertThat(lines.get(30, TimeUnit.SECONDS)).satisfiesExactly(
                    line -> assertThat(line).matches(" *\\S+-\\d+ +\\[000\\] +\\d+\\.\\d{6}: iomap_writeback_folio: ino 0x[0-9a-f]+"
                            + " size 0x2000 offset 0x0 length 0x2000 order 1"),
                    line -> assertThat(line).matches(".*: iomap_add_to_ioend: ino 0x[0-9a-f]+ pos 0x0 dirty_len 0x2000 addr"
                            + " 0x[0-9a-f]+ offset 0x0 length 0x[0-9a-f]+ type (MAPPED|UNWRITTEN) flags .*"));
        }
    }

    @Test
    void traceOfAnInodeLeavesOtherInodesOut() throws Exception {
        writeAndFsync("/other", 4096);
        writeAndFsync("/mine", 4096);
        long mine = fs.stat("/mine").ino();
        try (ObservationClient client = ObservationClient.connect(runtime, mountPoint)) {
            client.requestTrace("iomap_writeback_folio", mine);
            assertThat(client.readLine()).isEqualTo("# tracing iomap:iomap_writeback_folio of inode " + mine);
            Future<String> line = reader.submit(client::readLine);
            writeAndFsync("/other", 4096);
            writeAndFsync("/mine", 4096);

            assertThat(line.get(30, TimeUnit.SECONDS)).contains("ino 0x" + Long.toHexString(mine) + " ");
        }
    }

    @Test
    @SuppressWarnings("try") // the observation serves while the test writes
    void aGfs2LikeMountTracesItsGlocksWithTheGlockFirstAsTheKernelPrintsIt() throws Exception {
        RamBlockDevice gfs2Device = new RamBlockDevice(4096, 64L << 20);
        IomapFileSystems.format("gfs2-like", gfs2Device, FormatOptions.blockSize(4096));
        Path gfs2Mount = Files.createDirectory(dir.resolve("gfs2"));
        try (gfs2Device; IomapFileSystem gfs2 = IomapFileSystems.mount("gfs2-like", gfs2Device, MountOptions.defaults());
                MountObservation watched = MountObservation.start(gfs2, gfs2Mount, null, runtime);
                ObservationClient client = ObservationClient.connect(runtime, gfs2Mount)) {
            client.requestTrace("gfs2:gfs2_promote", -1);
            assertThat(client.readLine()).isEqualTo("# tracing gfs2:gfs2_promote");
            Future<String> line = reader.submit(client::readLine);
            try (IomapFile file = gfs2.create("/g")) {
                file.write(0, ByteBuffer.allocate(100));
            }

            assertThat(line.get(30, TimeUnit.SECONDS)).matches(".*: gfs2_promote: node \\S+ gltype [A-Z]+ glnum \\d+"
                    + " state (SH|EX) wait \\d+\\.\\d{3}ms");
        }
    }

    @Test
    void anUnknownEventIsRefusedWithTheListOfEvents() throws Exception {
        try (ObservationClient client = ObservationClient.connect(runtime, mountPoint)) {
            client.requestTrace("nosuch_*", -1);
            assertThatThrownBy(client::readLine).isInstanceOf(ObservationClient.ServerException.class)
                    .hasMessageStartingWith("no trace event matches 'nosuch_*'; the events: iomap:iomap_readpage,")
                    .hasMessageContaining("gfs2:gfs2_glock_state_change");
        }
    }

    @Test
    void topSendsTheSamplesEverySecond() throws Exception {
        try (ObservationClient client = ObservationClient.connect(runtime, mountPoint)) {
            client.requestTop();
            Map<String, Double> first = client.readSamples();
            writeAndFsync("/f", 8192);
            Map<String, Double> later = client.readSamples();
            while (later.get("iomap_app_written_bytes_total") < 8192) {
                later = client.readSamples();
            }

            assertThat(first).containsEntry("iomap_app_written_bytes_total", 0.0)
                    .containsKeys("iomap_cache_dirty_bytes", "iomap_cache_writeback_bytes",
                            "iomap_device_written_bytes_total{purpose=\"data\"}", "iomap_ioends_total");
            assertThat(later).containsEntry("iomap_app_written_bytes_total", 8192.0)
                    .containsEntry("iomap_cache_dirty_bytes", 0.0);
        }
    }

    @Test
    void theCountersAreServedInPrometheusTextFormatAndOverJmx() throws Exception {
        writeAndFsync("/f", 8192);
        long data = fs.stats().device().dataBytesWritten();
        HttpResponse<String> response = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                URI.create("http://127.0.0.1:" + observation.metricsPort() + "/metrics")).build(),
                HttpResponse.BodyHandlers.ofString());

        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(response.body().lines()).contains(
                "# TYPE iomap_device_written_bytes_total counter",
                "iomap_app_written_bytes_total 8192.0",
                "iomap_device_written_bytes_total{purpose=\"data\"} " + (double) data,
                "iomap_cache_dirty_bytes 0.0",
                "# TYPE iomap_write_amplification_ratio gauge");
        ObjectName bean = new ObjectName("dev.iomap:type=Mount,name=" + ObjectName.quote(mountPoint.toRealPath().toString()));
        assertThat(ManagementFactory.getPlatformMBeanServer().getAttribute(bean, "AppWrittenBytes")).isEqualTo(8192L);
        assertThat(ManagementFactory.getPlatformMBeanServer().getAttribute(bean, "DirtyBytes")).isEqualTo(0L);
    }

    @Test
    void theRuntimeFileNamesTheProcessAndGoesAtUnmount() throws Exception {
        MountInfo info = runtime.find(mountPoint);
        assertThat(info.pid()).isEqualTo(ProcessHandle.current().pid());
        assertThat(info.metrics()).contains("127.0.0.1:" + observation.metricsPort());

        observation.close();

        assertThat(runtime.directory()).isEmptyDirectory();
        assertThatThrownBy(() -> runtime.find(mountPoint)).isInstanceOf(MountRuntime.NoMountException.class)
                .hasMessageContaining("no iomap mount of");
        observation = MountObservation.start(fs, mountPoint, null, runtime);
    }

    /**
     * The mount server: after {@code umount} then {@code mount} at the same mount point, the new mount's
     * observation starts while the old one's has not closed yet; the old one, closing, takes nothing of the
     * new one's (its JMX bean, its runtime file, its socket).
     */
    @Test
    void aMountFollowingOneStillClosingAtItsMountPointKeepsItsBeanFileAndSocket() throws Exception {
        MountObservation following = MountObservation.start(fs, mountPoint, null, runtime);
        try {
            Path followingSocket = runtime.find(mountPoint).socket();
            ObjectName second = new ObjectName("dev.iomap:type=Mount,name="
                    + ObjectName.quote(mountPoint.toRealPath().toString()) + ",generation=2");
            assertThat(ManagementFactory.getPlatformMBeanServer().isRegistered(second)).isTrue();

            observation.close();

            assertThat(runtime.find(mountPoint).socket()).as("the runtime file names the following mount")
                    .isEqualTo(followingSocket);
            assertThat(followingSocket).exists();
            assertThat(ManagementFactory.getPlatformMBeanServer().isRegistered(second)).isTrue();
            writeAndFsync("/g", 4096);
            assertThat(ManagementFactory.getPlatformMBeanServer().getAttribute(second, "AppWrittenBytes")).isEqualTo(4096L);
        } finally {
            following.close();
            observation = MountObservation.start(fs, mountPoint, null, runtime);
        }
        assertThat(runtime.find(mountPoint).socket()).exists();
    }

    @Test
    void anotherUserIsRefusedByThePeerCredentialsEvenWhereItCouldReachTheSocket() throws Exception {
        // Open the way on purpose (the runtime directory normally stops other users before the socket):
        // the server's own check must still refuse.
        Files.setPosixFilePermissions(runtime.directory(), PosixFilePermissions.fromString("rwxr-xr-x"));
        Path socket = runtime.find(mountPoint).socket();
        Files.setPosixFilePermissions(socket, PosixFilePermissions.fromString("rw-rw-rw-"));
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxr-xr-x"));
        // reads what the server says on connecting, to the end (it refuses before any request)
        String script = "import socket,sys\ns=socket.socket(socket.AF_UNIX)\ns.connect(sys.argv[1])\n"
                + "data=b''\nwhile True:\n    chunk=s.recv(4096)\n    if not chunk: break\n    data+=chunk\n"
                + "print(data.decode().strip())\n";
        Process nobody = new ProcessBuilder("runuser", "-u", "nobody", "--", "/usr/bin/python3", "-c", script,
                socket.toString()).redirectErrorStream(true).start();
        String answer = new String(nobody.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
        assertThat(nobody.waitFor()).as(answer).isZero();

        assertThat(answer).isEqualTo("error: refused: the mount belongs to " + MountRuntime.currentUser()
                + ", and nobody may not attach");
    }

    @Test
    void aRuntimeDirectoryOthersMayEnterIsRefused() throws Exception {
        Path open = Files.createDirectory(dir.resolve("open"), PosixFilePermissions.asFileAttribute(
                PosixFilePermissions.fromString("rwxrwxrwx")));
        Files.setPosixFilePermissions(open, PosixFilePermissions.fromString("rwxrwxrwx"));

        assertThatThrownBy(() -> MountRuntime.at(open)).isInstanceOf(IOException.class)
                .hasMessageContaining("may be entered by other users (mode rwxrwxrwx)");
    }
}
