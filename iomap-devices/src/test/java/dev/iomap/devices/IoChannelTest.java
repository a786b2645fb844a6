package dev.iomap.devices;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.OpenOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The calls of a device's channel survive an interrupt that closes it, in every thread it cuts short. */
class IoChannelTest {
    private static final OpenOption[] OPTIONS = {StandardOpenOption.READ, StandardOpenOption.WRITE};

    @TempDir
    Path dir;
    private Path file;
    private IoChannel channel;

    @BeforeEach
    void open() throws IOException {
        file = dir.resolve("file");
        Files.write(file, new byte[] {1, 2, 3, 4, 5, 6, 7, 8});
        channel = new IoChannel(file, FileChannel.open(file, OPTIONS), 0, null, OPTIONS);
    }

    @AfterEach
    void close() throws IOException {
        channel.close();
        Thread.interrupted();
    }

    @Test
    void anInterruptBeforeTheCallNeverReachesTheChannelAndIsKept() throws IOException {
        Thread.currentThread().interrupt();

        byte[] read = read(0, 4);

        assertThat(read).containsExactly(1, 2, 3, 4);
        assertThat(channel.reopens()).isZero();
        assertThat(Thread.interrupted()).as("interrupt kept").isTrue();
    }

    @Test
    void anInterruptInsideTheCallClosesTheChannelWhichIsOpenedAgainAndTheCallRepeated() throws IOException {
        var attempts = new AtomicInteger();

        byte[] read = channel.call((io, file) -> {
            ByteBuffer dst = ByteBuffer.allocate(4);
            if (attempts.incrementAndGet() == 1) {
                Thread.currentThread().interrupt(); // as if it arrived now: the read closes the channel
            }
            io.read(2, dst);
            return dst.array();
        });

        assertThat(read).containsExactly(3, 4, 5, 6);
        assertThat(attempts).hasValue(2);
        assertThat(channel.reopens()).isEqualTo(1);
        assertThat(Thread.interrupted()).as("interrupt kept").isTrue();
        assertThat(read(0, 2)).containsExactly(1, 2);
    }

    @Test
    void aCallCutShortByAnotherThreadsInterruptIsRepeatedOnTheReopenedChannel() throws IOException {
        var attempts = new AtomicInteger();

        channel.call((io, file) -> {
            if (attempts.incrementAndGet() == 1) {
                file.close(); // what another thread's interrupt does to the channel under this call
            }
            io.write(0, ByteBuffer.wrap(new byte[] {9, 9}));
            file.force(false);
            return null;
        });

        assertThat(attempts).hasValue(2);
        assertThat(channel.reopens()).isEqualTo(1);
        assertThat(Thread.currentThread().isInterrupted()).isFalse();
        assertThat(Files.readAllBytes(file)).containsExactly(9, 9, 3, 4, 5, 6, 7, 8);
    }

    @Test
    void afterCloseCallsFailAndNothingIsOpenedAgain() throws IOException {
        channel.close();

        assertThatThrownBy(() -> read(0, 1)).isInstanceOf(ClosedChannelException.class);
        assertThat(channel.reopens()).isZero();
    }

    private byte[] read(long position, int length) throws IOException {
        return channel.call((io, file) -> {
            ByteBuffer dst = ByteBuffer.allocate(length);
            io.read(position, dst);
            return dst.array();
        });
    }
}
