package dev.iomap.it;

import dev.iomap.device.BlockDevice;
import dev.iomap.device.DeviceIoException;
import dev.iomap.device.DeviceStats;
import dev.iomap.device.IoPurpose;
import dev.iomap.devices.nbd.NbdBlockDevice;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * The kit's device, mirrored onto an NBD export while the export is lent to it ({@link NbdMirrorLayer}).
 * Writes and discards go to both and complete when both did (the kit's failure first, then the
 * export's); a flush flushes both. A read is the kit's device's (so its faults show), and where every
 * block of it was written through this mirror and no write to it is in flight, the same range is read
 * from the export too and must be the same bytes, else the read fails with a {@link DeviceIoException}
 * saying so. Blocks the mount did not write (what earlier mounts left) are read from the kit's device
 * alone: nothing put them on the export. Statistics, geometry and read-only are the kit's device's.
 * Thread-safe.
 */
final class NbdMirrorDevice implements BlockDevice {
    private final BlockDevice kit;
    private final NbdMirrorLayer layer;
    private final Object lock = new Object();
    /** Blocks whose bytes are the same on the export as on the kit's device; guarded by {@link #lock}. */
    private final BitSet same = new BitSet();
    /** Ranges {start, end} of writes and discards in flight; guarded by {@link #lock}. */
    private final List<long[]> inFlight = new ArrayList<>();
    /** The lent NBD device, or null once given back; guarded by {@link #lock}. */
    private NbdBlockDevice nbd;
    /** Operations using {@link #nbd} now; guarded by {@link #lock}. */
    private int users;
    private volatile long lastUsed;

    private NbdMirrorDevice(BlockDevice kit, NbdMirrorLayer layer) {
        this.kit = kit;
        this.layer = layer;
    }

    /**
     * @param kit the kit's device
     * @param layer where the export comes from
     * @return a mirror with an export lent to it
     * @throws IOException if the export's device cannot be opened
     */
    static NbdMirrorDevice over(BlockDevice kit, NbdMirrorLayer layer) throws IOException {
        var mirror = new NbdMirrorDevice(kit, layer);
        NbdBlockDevice lent = layer.lend(mirror);
        synchronized (mirror.lock) {
            mirror.nbd = lent;
            mirror.lastUsed = layer.tick();
        }
        return mirror;
    }

    /** @return the layer's clock when this mirror was last used */
    long lastUsed() {
        return lastUsed;
    }

    /** Gives the export back, once no operation uses it: from then on the kit's device alone serves. */
    void giveBack() {
        boolean interrupted = false;
        synchronized (lock) {
            while (users > 0) {
                try {
                    lock.wait();
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
            nbd = null;
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public int blockSize() {
        return kit.blockSize();
    }

    @Override
    public long capacity() {
        return kit.capacity();
    }

    @Override
    public boolean readOnly() {
        return kit.readOnly();
    }

    @Override
    public void read(long offset, ByteBuffer dst) throws IOException {
        int length = dst.remaining();
        NbdBlockDevice export = use(offset, length, true);
        try {
            ByteBuffer kitBytes = dst.duplicate();
            kit.read(offset, dst);
            if (export == null) {
                return;
            }
            ByteBuffer exportBytes = ByteBuffer.allocate(length);
            export.read(offset, exportBytes);
            if (!exportBytes.flip().equals(kitBytes.limit(kitBytes.position() + length))) {
                throw new DeviceIoException("the NBD export returned other bytes than the kit's device wrote",
                        offset, length, null);
            }
            layer.countCheckedRead();
        } finally {
            release(export, null);
        }
    }

    @Override
    public CompletableFuture<Void> write(long offset, List<ByteBuffer> srcs, IoPurpose purpose) {
        long length = 0;
        for (ByteBuffer src : srcs) {
            length += src.remaining();
        }
        long[] range = {offset, offset + length};
        NbdBlockDevice export = use(range, false);
        CompletableFuture<Void> onKit = kit.write(offset, srcs, purpose);
        if (export == null) {
            return onKit;
        }
        layer.countMirroredWrite();
        CompletableFuture<Void> onExport = export.write(offset, srcs, purpose);
        var both = new CompletableFuture<Void>();
        onKit.whenComplete((ok, kitFailure) -> onExport.whenComplete((ok2, exportFailure) -> {
            boolean bothDone = kitFailure == null && exportFailure == null;
            release(export, bothDone ? range : null, range);
            if (kitFailure != null) {
                both.completeExceptionally(kitFailure);
            } else if (exportFailure != null) {
                both.completeExceptionally(exportFailure);
            } else {
                both.complete(null);
            }
        }));
        return both;
    }

    @Override
    public void flush() throws IOException {
        NbdBlockDevice export = use(0, 0, false);
        try {
            kit.flush();
            if (export != null) {
                export.flush();
            }
        } finally {
            release(export, null);
        }
    }

    @Override
    public void discard(long offset, long length) throws IOException {
        long[] range = {offset, offset + length};
        NbdBlockDevice export = use(range, false);
        boolean done = false;
        try {
            kit.discard(offset, length);
            if (export != null) {
                export.discard(offset, length);
            }
            done = true;
        } finally {
            release(export, done ? range : null, range);
        }
    }

    @Override
    public DeviceStats stats() {
        return kit.stats();
    }

    /** Gives the export back and closes the kit's device, as closing it would without the layer. */
    @Override
    public void close() throws IOException {
        giveBack();
        layer.returned(this);
        kit.close();
    }

    @Override
    public String toString() {
        return "NbdMirrorDevice[" + kit + "]";
    }

    /** @return the export if a read of the range can be checked on it (or, for a write, done on it too) */
    private NbdBlockDevice use(long offset, long length, boolean read) {
        synchronized (lock) {
            lastUsed = layer.tick();
            if (nbd == null) {
                return null;
            }
            if (read && (!allSame(offset, length) || writing(offset, offset + length))) {
                return null;
            }
            users++;
            return nbd;
        }
    }

    /** As {@link #use(long, long, boolean)} for a write: the range is in flight until released. */
    private NbdBlockDevice use(long[] range, boolean read) {
        synchronized (lock) {
            NbdBlockDevice export = use(range[0], range[1] - range[0], read);
            if (export != null) {
                inFlight.add(range);
            }
            return export;
        }
    }

    /**
     * Ends an operation that used the export.
     *
     * @param export what {@code use} returned (nothing to do if null)
     * @param nowSame a range now the same on both (done on both), or null
     * @param wrote the write's range in flight, if any
     */
    private void release(NbdBlockDevice export, long[] nowSame, long[]... wrote) {
        if (export == null) {
            return;
        }
        synchronized (lock) {
            for (long[] range : wrote) {
                inFlight.remove(range);
                if (range != nowSame) {
                    same.clear(block(range[0]), block(range[1] + blockSize() - 1));
                }
            }
            if (nowSame != null) {
                same.set(block(nowSame[0]), block(nowSame[1] + blockSize() - 1));
            }
            users--;
            lock.notifyAll();
        }
    }

    private boolean allSame(long offset, long length) {
        int first = block(offset);
        int end = block(offset + length + blockSize() - 1);
        return length > 0 && same.nextClearBit(first) >= end;
    }

    private boolean writing(long start, long end) {
        for (long[] range : inFlight) {
            if (range[0] < end && start < range[1]) {
                return true;
            }
        }
        return false;
    }

    private int block(long offset) {
        return Math.toIntExact(offset / blockSize());
    }
}
