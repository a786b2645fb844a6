package dev.iomap.it;

import dev.iomap.device.BlockDevice;
import dev.iomap.devices.nbd.LocalNbdServer;
import dev.iomap.devices.nbd.NbdBlockDevice;
import dev.iomap.testkit.AdapterFixture;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.IntStream;

/**
 * A device layer that puts a real nbd-server under the kit: every device the adapter is given is an
 * {@link NbdMirrorDevice}, which does each write, discard and flush both on the kit's device and on an
 * NBD export ({@link NbdBlockDevice} against nbd-server on 127.0.0.1), and reads each range the mount
 * wrote through the export, checking it against the kit's device. The kit's device stays the truth (its
 * power cuts, faults, images and statistics work as without the layer); the export carries all of the
 * adapter's traffic that it can check.
 *
 * <p>The server has {@value #SLOTS} exports, each with one open NBD device that mirrors lend in turn.
 * The kit never closes the devices it mounts (a crashed mount is just dropped), so when every export is
 * lent, the mirror used least recently gives its export back and goes on with the kit's device alone.
 * {@link #close()} closes the NBD devices and stops the server. Thread-safe.
 */
final class NbdMirrorLayer implements AdapterFixture.DeviceLayer, AutoCloseable {
    /** Exports, so NBD devices open at once; more than any kit test mounts at a time. */
    static final int SLOTS = 6;
    /** Bytes per export: room for any kit device. */
    private static final long EXPORT_BYTES = 256L << 20;

    /** One export and the NBD device on it, lent to one mirror at a time. */
    static final class Slot {
        final String name;
        NbdBlockDevice device;
        NbdMirrorDevice borrower;

        Slot(String name) {
            this.name = name;
        }
    }

    private final LocalNbdServer server;
    private final List<Slot> slots = new ArrayList<>();
    private final AtomicLong clock = new AtomicLong();
    private final AtomicLong checkedReads = new AtomicLong();
    private final AtomicLong mirroredWrites = new AtomicLong();

    private NbdMirrorLayer(LocalNbdServer server) {
        this.server = server;
        IntStream.range(0, SLOTS).forEach(i -> slots.add(new Slot("kit" + i)));
    }

    /**
     * @param dir where the exports' files go
     * @return the layer, with nbd-server running
     * @throws IOException if nbd-server does not start
     */
    static NbdMirrorLayer start(Path dir) throws IOException {
        String[] names = IntStream.range(0, SLOTS).mapToObj(i -> "kit" + i).toArray(String[]::new);
        return new NbdMirrorLayer(LocalNbdServer.start(LocalNbdServer.Kind.NBD_SERVER, dir, EXPORT_BYTES, names));
    }

    @Override
    public BlockDevice formatting(BlockDevice device) throws IOException {
        return NbdMirrorDevice.over(device, this);
    }

    @Override
    public BlockDevice opening(BlockDevice device) throws IOException {
        return NbdMirrorDevice.over(device, this);
    }

    /** @return reads that came through an export and matched the kit's device, so far */
    long checkedReads() {
        return checkedReads.get();
    }

    /** @return writes done on an export too, so far */
    long mirroredWrites() {
        return mirroredWrites.get();
    }

    void countCheckedRead() {
        checkedReads.incrementAndGet();
    }

    void countMirroredWrite() {
        mirroredWrites.incrementAndGet();
    }

    /** @return a tick of the layer's clock, for least-recently-used */
    long tick() {
        return clock.incrementAndGet();
    }

    /**
     * Lends an export's NBD device to {@code mirror}, taking it back from the least recently used
     * mirror if every export is lent.
     *
     * @return the device, of the mirror's block size and capacity
     */
    NbdBlockDevice lend(NbdMirrorDevice mirror) throws IOException {
        Slot slot;
        synchronized (this) {
            slot = slots.stream().filter(s -> s.borrower == null).findFirst().orElse(null);
            if (slot == null) {
                slot = slots.stream().min((a, b) -> Long.compare(a.borrower.lastUsed(), b.borrower.lastUsed()))
                        .orElseThrow();
                slot.borrower.giveBack();
            }
            slot.borrower = mirror;
        }
        if (slot.device == null || slot.device.blockSize() != mirror.blockSize()
                || slot.device.capacity() != mirror.capacity()) {
            if (slot.device != null) {
                slot.device.close();
            }
            slot.device = NbdBlockDevice.open(server.export(slot.name), mirror.blockSize(), mirror.capacity());
        }
        return slot.device;
    }

    /** Takes an export back from the mirror it was lent to. */
    synchronized void returned(NbdMirrorDevice mirror) {
        for (Slot slot : slots) {
            if (slot.borrower == mirror) {
                slot.borrower = null;
            }
        }
    }

    /** Closes every NBD device and stops nbd-server. */
    @Override
    public void close() {
        try {
            for (Slot slot : slots) {
                if (slot.device != null) {
                    slot.device.close();
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } finally {
            server.close();
        }
    }
}
