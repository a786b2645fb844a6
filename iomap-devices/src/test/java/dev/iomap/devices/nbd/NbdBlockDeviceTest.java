package dev.iomap.devices.nbd;

import static dev.iomap.devices.nbd.NbdProtocol.*;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.iomap.device.DeviceIoException;
import dev.iomap.device.IoPurpose;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * What the NBD device does beyond the device contract: the handshake's results, structured replies,
 * requests in flight together, reconnects (a server killed mid-write and restarted, or not back within
 * the window), the replay of acknowledged writes before a flush is answered, FUA, TLS refused. Against
 * real servers (nbd-server, qemu-nbd) where they can show it, and a {@link FakeNbdServer} where a
 * server must misbehave on cue.
 */
@Timeout(120)
class NbdBlockDeviceTest {
    private static final int BLOCK = 4096;
    private static final long SEED = Long.getLong("iomap.test.seed", 40);

    @TempDir
    Path dir;

    private final Random random = new Random(SEED);

    @Test
    void nbdServerGivesTheExportsSizeAndTheDeviceReadsWhatItWrote() throws Exception {
        try (var server = started(LocalNbdServer.Kind.NBD_SERVER, 4 << 20, "disk");
                var device = NbdBlockDevice.open(server.export("disk"), BLOCK)) {
            assertThat(device.capacity()).isEqualTo(4 << 20);
            assertThat(device.readOnly()).isFalse();
            byte[] data = randomBytes(3 * BLOCK);
            device.write(5L * BLOCK, ByteBuffer.wrap(data), IoPurpose.DATA).get(10, TimeUnit.SECONDS);
            device.flush();

            assertThat(read(device, 5L * BLOCK, data.length)).isEqualTo(data);
            assertThat(Arrays.copyOfRange(Files.readAllBytes(server.file("disk")), 5 * BLOCK, 8 * BLOCK))
                    .isEqualTo(data);
        }
    }

    @Test
    void qemuNbdAnswersWithStructuredRepliesAndHolesReadAsZeroes() throws Exception {
        try (var server = started(LocalNbdServer.Kind.QEMU_NBD, 4 << 20, "disk");
                var device = NbdBlockDevice.open(server.export("disk"), BLOCK)) {
            assertThat(device.structuredReplies()).isTrue();
            byte[] data = randomBytes(2 * BLOCK);
            device.write(64L * BLOCK, ByteBuffer.wrap(data), IoPurpose.DATA).get(10, TimeUnit.SECONDS);

            byte[] expected = new byte[512 * BLOCK];
            System.arraycopy(data, 0, expected, 64 * BLOCK, data.length);
            assertThat(read(device, 0, expected.length)).isEqualTo(expected);
        }
    }

    @Test
    void withoutStructuredRepliesQemuNbdAnswersSimply() throws Exception {
        try (var server = started(LocalNbdServer.Kind.QEMU_NBD, 1 << 20, "disk");
                var device = NbdBlockDevice.open(withOptions(server.export("disk"),
                        NbdOptions.DEFAULTS.withStructuredReplies(false)), BLOCK)) {
            assertThat(device.structuredReplies()).isFalse();
            byte[] data = randomBytes(BLOCK);
            device.write(BLOCK, ByteBuffer.wrap(data), IoPurpose.DATA).get(10, TimeUnit.SECONDS);
            assertThat(read(device, BLOCK, BLOCK)).isEqualTo(data);
        }
    }

    @Test
    void anExportTheServerDoesNotHaveIsRefusedWithItsName() throws Exception {
        try (var server = started(LocalNbdServer.Kind.NBD_SERVER, 1 << 20, "disk")) {
            NbdExport missing = NbdExport.of("127.0.0.1", server.port(), "nosuch");

            assertThatThrownBy(() -> NbdBlockDevice.open(missing, BLOCK))
                    .isInstanceOf(NbdNegotiationException.class)
                    .hasMessageContaining("nbd://127.0.0.1:" + server.port() + "/nosuch")
                    .hasMessageContaining("'nosuch'");
        }
    }

    @Test
    void aServerThatIsNotThereIsAConnectException() throws Exception {
        int port = dev.iomap.devices.LoopbackPorts.reserve();
        assertThatThrownBy(() -> NbdBlockDevice.open(NbdExport.of("127.0.0.1", port, "x"), BLOCK))
                .isInstanceOf(java.net.ConnectException.class)
                .hasMessageContaining("cannot connect");
    }

    @Test
    void aServerThatRequiresTlsIsRefusedWithNbdTlsException() throws Exception {
        try (var server = FakeNbdServer.requiringTls()) {
            assertThatThrownBy(() -> NbdBlockDevice.open(server.export(NbdOptions.DEFAULTS), BLOCK))
                    .isInstanceOf(NbdTlsException.class)
                    .hasMessageContaining("requires TLS (NBD_REP_ERR_TLS_REQD)")
                    .hasMessageContaining("tunnel");
            assertThat(server.commands()).isEmpty();
        }
        assertThatThrownBy(() -> NbdExport.parse("nbds://127.0.0.1/disk"))
                .isInstanceOf(NbdTlsException.class)
                .hasMessageContaining("NBD over TLS is not supported");
    }

    @Test
    void manyWritesInFlightOnOneConnectionAllLand() throws Exception {
        try (var server = started(LocalNbdServer.Kind.NBD_SERVER, 4 << 20, "disk");
                var device = NbdBlockDevice.open(server.export("disk"), BLOCK)) {
            byte[] data = randomBytes(1024 * BLOCK);
            List<CompletableFuture<Void>> writes = new ArrayList<>();
            for (int block = 0; block < 1024; block++) {
                writes.add(device.write((long) block * BLOCK, ByteBuffer.wrap(data, block * BLOCK, BLOCK),
                        IoPurpose.DATA));
            }
            CompletableFuture.allOf(writes.toArray(CompletableFuture[]::new)).get(30, TimeUnit.SECONDS);

            assertThat(read(device, 0, data.length)).isEqualTo(data);
            assertThat(device.reconnects()).isZero();
        }
    }

    /**
     * The server answers nothing until eight requests are in, then answers them newest first: only a
     * client with all eight in flight at once on its one connection, matching answers by handle, gets
     * every one, each with its own data.
     */
    @Test
    void requestsAreInFlightTogetherAndAnswersAreMatchedByHandle() throws Exception {
        try (var server = FakeNbdServer.start(1 << 20, 1 << 20, true);
                var device = NbdBlockDevice.open(server.export(NbdOptions.DEFAULTS), BLOCK)) {
            byte[] data = randomBytes(8 * BLOCK);
            server.holdRepliesUntil(8);
            List<CompletableFuture<Void>> writes = new ArrayList<>();
            for (int block = 0; block < 8; block++) {
                writes.add(device.write((long) block * BLOCK, ByteBuffer.wrap(data, block * BLOCK, BLOCK),
                        IoPurpose.DATA));
            }
            CompletableFuture.allOf(writes.toArray(CompletableFuture[]::new)).get(10, TimeUnit.SECONDS);

            server.holdRepliesUntil(8);
            ExecutorService readers = Executors.newFixedThreadPool(8);
            try {
                List<Future<byte[]>> reads = new ArrayList<>();
                for (int block = 0; block < 8; block++) {
                    long offset = (long) block * BLOCK;
                    reads.add(readers.submit(() -> read(device, offset, BLOCK)));
                }
                for (int block = 0; block < 8; block++) {
                    assertThat(reads.get(block).get(10, TimeUnit.SECONDS))
                            .isEqualTo(Arrays.copyOfRange(data, block * BLOCK, (block + 1) * BLOCK));
                }
            } finally {
                readers.shutdownNow();
            }
            assertThat(device.reconnects()).isZero();
        }
    }

    @Test
    void requestsLongerThanTheServersMaximumGoAsSeveral() throws Exception {
        try (var server = FakeNbdServer.start(1 << 20, 64 << 10, true);
                var device = NbdBlockDevice.open(server.export(NbdOptions.DEFAULTS), BLOCK)) {
            byte[] data = randomBytes(256 << 10);
            device.write(BLOCK, ByteBuffer.wrap(data), IoPurpose.DATA).get(10, TimeUnit.SECONDS);

            assertThat(read(device, BLOCK, data.length)).isEqualTo(data);
            assertThat(server.commands(NBD_CMD_WRITE)).extracting(FakeNbdServer.Command::length)
                    .containsExactly(65536, 65536, 65536, 65536);
            assertThat(server.commands(NBD_CMD_READ)).extracting(FakeNbdServer.Command::length)
                    .containsExactly(65536, 65536, 65536, 65536);
        }
    }

    @Test
    void discardIsWriteZeroesWhereOfferedAndZeroesWrittenElsewhere() throws Exception {
        for (boolean offered : new boolean[] {true, false}) {
            try (var server = FakeNbdServer.start(1 << 20, 1 << 20, offered);
                    var device = NbdBlockDevice.open(server.export(NbdOptions.DEFAULTS), BLOCK)) {
                device.write(0, ByteBuffer.wrap(randomBytes(8 * BLOCK)), IoPurpose.DATA).get(10, TimeUnit.SECONDS);
                device.discard(2L * BLOCK, 3L * BLOCK);
                device.trim(6L * BLOCK, BLOCK);

                assertThat(read(device, 2L * BLOCK, 3 * BLOCK)).containsOnly(0);
                assertThat(server.commands(NBD_CMD_WRITE_ZEROES)).hasSize(offered ? 1 : 0);
                assertThat(server.commands(NBD_CMD_WRITE)).hasSize(offered ? 1 : 2);
                assertThat(server.commands(NBD_CMD_TRIM)).containsExactly(
                        new FakeNbdServer.Command(1, NBD_CMD_TRIM, 0, 6L * BLOCK, BLOCK));
            }
        }
    }

    @Test
    void withFuaEveryWriteCarriesItAndFlushSendsNothing() throws Exception {
        try (var server = FakeNbdServer.start(1 << 20, 1 << 20, true);
                var device = NbdBlockDevice.open(server.export(NbdOptions.DEFAULTS.withForceUnitAccess(true)),
                        BLOCK)) {
            byte[] data = randomBytes(2 * BLOCK);
            device.write(0, ByteBuffer.wrap(data), IoPurpose.DATA).get(10, TimeUnit.SECONDS);
            device.discard(4L * BLOCK, BLOCK);
            device.flush();

            assertThat(server.commands()).extracting(FakeNbdServer.Command::flags).containsOnly(NBD_CMD_FLAG_FUA);
            assertThat(server.commands(NBD_CMD_FLUSH)).isEmpty();
            assertThat(Arrays.copyOf(server.durable(), data.length)).isEqualTo(data);
            assertThat(device.stats().flushes()).isEqualTo(1);
        }
    }

    /**
     * The flush is in flight when the server crashes and loses the write it had acknowledged but not
     * made durable. The flush must not succeed until the write was sent again and a new flush covered it.
     */
    @Test
    void aFlushInFlightAtACrashIsAnsweredOnlyAfterTheAcknowledgedWritesAreReplayed() throws Exception {
        try (var server = FakeNbdServer.start(1 << 20, 1 << 20, true);
                var device = NbdBlockDevice.open(server.export(NbdOptions.DEFAULTS), BLOCK)) {
            byte[] data = randomBytes(2 * BLOCK);
            device.write(3L * BLOCK, ByteBuffer.wrap(data), IoPurpose.DATA).get(10, TimeUnit.SECONDS);
            assertThat(device.replayLogBytes()).isEqualTo(2 * BLOCK);
            server.holdFlushes(true);
            CountDownLatch flushSent = server.nextFlush();
            CompletableFuture<Void> flush = CompletableFuture.runAsync(() -> {
                try {
                    device.flush();
                } catch (IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            });
            FakeNbdServer.await(flushSent);

            server.crash();
            assertThat(Arrays.copyOfRange(server.current(), 3 * BLOCK, 5 * BLOCK)).containsOnly(0);
            server.holdFlushes(false);
            server.restart();
            flush.get(30, TimeUnit.SECONDS);

            assertThat(Arrays.copyOfRange(server.durable(), 3 * BLOCK, 5 * BLOCK)).isEqualTo(data);
            assertThat(device.reconnects()).isEqualTo(1);
            assertThat(device.replayLogBytes()).isZero();
            List<FakeNbdServer.Command> second = server.commands().stream().filter(c -> c.connection() == 2).toList();
            assertThat(second).extracting(FakeNbdServer.Command::type).containsExactly(NBD_CMD_WRITE, NBD_CMD_FLUSH);
        }
    }

    @Test
    void aServerThatStopsAnsweringIsLeftAfterTheReplyTimeoutAndTheRequestSentAgain() throws Exception {
        NbdOptions options = NbdOptions.DEFAULTS.withReplyTimeout(Duration.ofMillis(300));
        try (var server = FakeNbdServer.start(1 << 20, 1 << 20, true);
                var device = NbdBlockDevice.open(server.export(options), BLOCK)) {
            server.silent(true);
            byte[] data = randomBytes(BLOCK);
            CompletableFuture<Void> write = device.write(0, ByteBuffer.wrap(data), IoPurpose.DATA);
            Thread.sleep(100);
            server.silent(false);

            write.get(30, TimeUnit.SECONDS);
            assertThat(device.reconnects()).isEqualTo(1);
            assertThat(Arrays.copyOf(server.current(), BLOCK)).isEqualTo(data);
        }
    }

    @Test
    void eshutdownMakesTheDeviceReconnectAndSendTheRequestAgain() throws Exception {
        try (var server = FakeNbdServer.start(1 << 20, 1 << 20, true);
                var device = NbdBlockDevice.open(server.export(NbdOptions.DEFAULTS), BLOCK)) {
            server.shutdownReplies(1);
            byte[] data = randomBytes(BLOCK);
            device.write(BLOCK, ByteBuffer.wrap(data), IoPurpose.DATA).get(30, TimeUnit.SECONDS);

            assertThat(device.reconnects()).isEqualTo(1);
            assertThat(read(device, BLOCK, BLOCK)).isEqualTo(data);
        }
    }

    /**
     * nbd-server is killed (SIGKILL, with its per-connection child) while writes are in flight, and
     * started again within the reconnect window: every write completes, and after a flush the export
     * holds all of them.
     */
    @Test
    void nbdServerKilledMidWriteAndRestartedWithinTheWindowLosesNothing() throws Exception {
        try (var server = started(LocalNbdServer.Kind.NBD_SERVER, 8 << 20, "disk");
                var device = NbdBlockDevice.open(withOptions(server.export("disk"),
                        NbdOptions.DEFAULTS.withReconnectWindow(Duration.ofSeconds(20))), BLOCK)) {
            int blocks = 2048;
            byte[] data = randomBytes(blocks * BLOCK);
            List<CompletableFuture<Void>> writes = new ArrayList<>();
            for (int block = 0; block < blocks; block++) {
                writes.add(device.write((long) block * BLOCK, ByteBuffer.wrap(data, block * BLOCK, BLOCK),
                        IoPurpose.DATA));
                if (block == blocks / 2) {
                    server.kill();
                    Thread.ofPlatform().start(() -> restartAfter(server, 300));
                }
            }
            CompletableFuture.allOf(writes.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);
            device.flush();

            assertThat(device.reconnects()).isGreaterThanOrEqualTo(1);
            assertThat(read(device, 0, data.length)).isEqualTo(data);
            assertThat(Arrays.copyOf(Files.readAllBytes(server.file("disk")), data.length)).isEqualTo(data);
        }
    }

    /** The server does not come back: everything waiting, and everything later, fails with EIO. */
    @Test
    void aServerNotBackWithinTheWindowFailsEveryWaiterWithConnectionLost() throws Exception {
        try (var server = started(LocalNbdServer.Kind.NBD_SERVER, 1 << 20, "disk")) {
            var device = NbdBlockDevice.open(withOptions(server.export("disk"),
                    NbdOptions.DEFAULTS.withReconnectWindow(Duration.ofMillis(500))), BLOCK);
            device.write(0, ByteBuffer.wrap(randomBytes(BLOCK)), IoPurpose.DATA).get(10, TimeUnit.SECONDS);
            server.kill();

            CompletableFuture<Void> write = device.write(BLOCK, ByteBuffer.wrap(randomBytes(BLOCK)), IoPurpose.DATA);
            assertThatThrownBy(device::flush).isInstanceOf(NbdConnectionLostException.class)
                    .isInstanceOf(DeviceIoException.class)
                    .hasMessageContaining("was lost and not made again within 500 ms");
            Throwable writeFailure = catchThrowable(() -> write.get(10, TimeUnit.SECONDS));
            assertThat(writeFailure).isInstanceOf(ExecutionException.class)
                    .cause().isInstanceOf(NbdConnectionLostException.class);
            assertThatThrownBy(() -> read(device, 0, BLOCK)).isInstanceOf(NbdConnectionLostException.class);
            assertThatThrownBy(device::close).isInstanceOf(DeviceIoException.class)
                    .hasMessageContaining("final flush");
            assertThatThrownBy(() -> read(device, 0, BLOCK)).hasMessageContaining("closed");
        }
    }

    /**
     * The server is away for longer than the window while nothing is at stake on one device (its writes
     * flushed) and an acknowledged, unflushed write is on another: the first connects again for its next
     * request; the second is lost for good, since that write may be gone.
     */
    @Test
    void afterTheWindowOnlyADeviceWithNothingAtStakeConnectsAgain() throws Exception {
        NbdOptions options = NbdOptions.DEFAULTS.withReconnectWindow(Duration.ofMillis(300));
        try (var server = FakeNbdServer.start(1 << 20, 1 << 20, true);
                var idle = NbdBlockDevice.open(server.export(options), BLOCK)) {
            var atStake = NbdBlockDevice.open(server.export(options), BLOCK);
            byte[] data = randomBytes(BLOCK);
            idle.write(0, ByteBuffer.wrap(data), IoPurpose.DATA).get(10, TimeUnit.SECONDS);
            idle.flush();
            atStake.write(BLOCK, ByteBuffer.wrap(randomBytes(BLOCK)), IoPurpose.DATA).get(10, TimeUnit.SECONDS);

            server.crash();
            Thread.sleep(1500);
            server.restart();

            assertThat(read(idle, 0, BLOCK)).isEqualTo(data);
            assertThat(idle.reconnects()).isEqualTo(1);
            assertThatThrownBy(() -> read(atStake, 0, BLOCK)).isInstanceOf(NbdConnectionLostException.class);
            assertThatThrownBy(atStake::close).isInstanceOf(DeviceIoException.class);
        }
    }

    @Test
    void theReplayLogStaysWithinItsLimitByFlushingOnItsOwn() throws Exception {
        NbdOptions options = NbdOptions.DEFAULTS.withReplayLimitBytes(1 << 20);
        try (var server = started(LocalNbdServer.Kind.NBD_SERVER, 8 << 20, "disk");
                var device = NbdBlockDevice.open(withOptions(server.export("disk"), options), BLOCK)) {
            for (int i = 0; i < 64; i++) {
                device.write((long) i * (64 << 10), ByteBuffer.wrap(randomBytes(64 << 10)), IoPurpose.DATA)
                        .get(10, TimeUnit.SECONDS);
            }

            assertThat(device.internalFlushes()).isPositive();
            assertThat(device.replayLogBytes()).isLessThanOrEqualTo((1 << 20) + (64 << 10));
            assertThat(device.stats().flushes()).isZero();
        }
    }

    @Test
    void aReadOnlyDeviceSendsNothingThatWrites() throws Exception {
        try (var server = FakeNbdServer.start(1 << 20, 1 << 20, true)) {
            var device = NbdBlockDevice.openReadOnly(server.export(NbdOptions.DEFAULTS), BLOCK);
            assertThat(device.readOnly()).isTrue();
            assertThat(catchThrowable(() -> device.write(0, ByteBuffer.allocate(BLOCK), IoPurpose.DATA)
                    .get(10, TimeUnit.SECONDS))).cause().isInstanceOf(dev.iomap.device.ReadOnlyDeviceException.class);
            assertThatThrownBy(() -> device.discard(0, BLOCK))
                    .isInstanceOf(dev.iomap.device.ReadOnlyDeviceException.class);
            device.flush();
            read(device, 0, BLOCK);
            device.close();

            assertThat(server.commands()).extracting(FakeNbdServer.Command::type).containsExactly(NBD_CMD_READ);
        }
    }

    private static void restartAfter(LocalNbdServer server, long millis) {
        try {
            Thread.sleep(millis);
            server.restart();
        } catch (IOException | InterruptedException e) {
            throw new IllegalStateException("restarting nbd-server failed", e);
        }
    }

    private LocalNbdServer started(LocalNbdServer.Kind kind, long bytes, String name) throws IOException {
        assumeTrue(kind.installed(), kind + " is not installed");
        return LocalNbdServer.start(kind, dir, bytes, name);
    }

    private static NbdExport withOptions(NbdExport export, NbdOptions options) {
        return new NbdExport(export.host(), export.port(), export.name(), options);
    }

    private static byte[] read(NbdBlockDevice device, long offset, int length) throws IOException {
        ByteBuffer dst = ByteBuffer.allocate(length);
        device.read(offset, dst);
        return dst.array();
    }

    private byte[] randomBytes(int length) {
        byte[] bytes = new byte[length];
        random.nextBytes(bytes);
        return bytes;
    }
}
