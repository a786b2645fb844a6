package dev.iomap.devices;

import dev.iomap.device.BlockDevice;
import dev.iomap.device.DeviceStats;
import dev.iomap.device.DeviceRangeException;
import dev.iomap.device.IoPurpose;
import dev.iomap.device.ReadOnlyDeviceException;
import dev.iomap.api.CorruptFileSystemException;
import dev.iomap.api.NotSupportedException;
import dev.iomap.device.Zone;
import dev.iomap.device.ZoneCondition;
import dev.iomap.device.ZoneViolationException;
import dev.iomap.device.ZoneViolationException.Reason;
import dev.iomap.device.ZonedBlockDevice;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A zoned device emulated over any {@link BlockDevice} (RAM, file, or a test wrapper that cuts the
 * power): the zones of a {@link ZoneLayout}, with the write pointers, conditions and open-zone limit
 * a host-managed drive enforces (see {@link ZonedBlockDevice} for the rules).
 *
 * <p><b>Where the zone state lives.</b> A real drive keeps its write pointers itself; this emulation
 * keeps them on the backing device, in a geometry block and two copies ("slots") of the zone state in
 * front of the zone data ({@link ZoneStateTable}), so that a file-backed zoned device can be closed and opened
 * again ({@link #open}), and so that a power cut of the backing device cuts the zone state with the
 * data. The state written is the <em>durable</em> one: {@link #flush()} first flushes the backing
 * device, then records for each sequential zone the end of the writes that had completed before it,
 * then flushes again. After a power cut each write pointer is therefore the durable one, and every
 * byte below it was flushed. Zone operations ({@link #resetZone}, {@link #finishZone},
 * {@link #failZone}) persist the same way before they return, so they also make every write that
 * completed before them durable, as a flush does. Every state is written to both slots, each write
 * flushed, before a flush returns: one damaged slot, torn by a power cut or hit later, leaves the
 * other with every state a flush returned for ({@link #stateProblems()} reports the damage), and two
 * damaged slots make {@link #open} refuse. Open and closed conditions are not
 * persistent: after {@link #open} a partly written zone is {@link ZoneCondition#CLOSED}, as after a
 * drive's power cycle. Reads at or past a write pointer (or past a zone's capacity) return zeroes
 * whatever the backing device holds there.
 *
 * <p><b>Ordering (the zone write plug).</b> A write to a sequential zone is checked against the
 * write pointer when {@link #write} is called, and the write pointer moves past it at once. The
 * writes accepted for one zone then go to the backing device one at a time, each after the previous
 * one completed ({@link ZoneWritePlug}, like the kernel's zone write plugging); so completions, and
 * the write pointer that {@link #flush()} makes durable, follow acceptance order even over a backing
 * device that completes writes in any order ({@link FileBlockDevice}). Writes to conventional zones
 * go straight through.
 *
 * <p>Thread-safe: zone state is guarded by one lock held only for bookkeeping, never across backing
 * I/O or callbacks. Statistics count what callers asked (reads, writes, flushes, discards), not the
 * zone-state writes. {@link #close()} persists the zone state and closes the backing device, which
 * this device owns. Do not call a zone operation from a completion callback of a write to the same
 * zone: it waits for that write.
 *
 * <p>Over a {@link BlockDevice#readOnly() read-only} backing device (an image opened read-only to
 * check it) the zoned device is read-only too: reads and zone reports work; every write, append and
 * discard, and every reset, finish, open and failure of a zone, fails with
 * {@link ReadOnlyDeviceException} before anything changes; and the zone state is never written, not
 * even to repair a damaged copy at {@link #close()}.
 *
 * <p>Bad requests (negative, unaligned, overflowing or past the end, a zone number or zone start that
 * does not exist) get {@link DeviceRangeException}; a request that breaks a zone's rules gets
 * {@link ZoneViolationException} (for writes and appends: as the future's exception). After
 * {@link #close()} every read, write, append, flush, discard, zone report and zone operation fails
 * with {@link IOException}; the geometry, {@link #layout()} and {@link #stats()} still answer.
 */
public final class ZonedDevice implements ZonedBlockDevice {
    private final BlockDevice backing;
    private final ZoneLayout layout;
    private final int blockSize;
    private final long dataStart;
    private final EmulatedZone[] zones;
    /** Guards the state of every zone and of the open-zone limit. */
    private final Object lock = new Object();
    private final OpenZoneLimit openZones;
    private final ZoneWritePlug plug;
    private final ReentrantLock persistLock = new ReentrantLock();
    private final DeviceCounters counters = new DeviceCounters();
    private final AtomicBoolean closed = new AtomicBoolean();
    private ZoneStateTable.State persisted;
    /** Whether the next persist writes both slots even if the state did not change (they differed at open). */
    private boolean rewriteSlots;
    private final List<String> stateProblems;

    private ZonedDevice(BlockDevice backing, ZoneLayout layout, ZoneStateTable.Slots slots) {
        this.backing = backing;
        this.layout = layout;
        this.blockSize = backing.blockSize();
        this.dataStart = ZoneStateTable.dataStart(layout.zoneCount(), blockSize);
        this.zones = new EmulatedZone[layout.zoneCount()];
        this.openZones = new OpenZoneLimit(layout.maxOpenZones(), zones);
        this.plug = new ZoneWritePlug(lock, backing, dataStart, openZones);
        this.persisted = slots.state();
        this.rewriteSlots = !slots.identical();
        this.stateProblems = slots.problems();
        ZoneStateTable.State state = slots.state();
        long[] pointers = state.writePointers();
        int[] flags = state.flags();
        for (int i = 0; i < zones.length; i++) {
            zones[i] = restore(i, pointers[i], flags[i]);
        }
    }

    /** Rebuilds a zone from a slot's entry, whose ranges {@link ZoneStateTable} checked. */
    private EmulatedZone restore(int index, long pointer, int flags) {
        boolean sequential = layout.isSequential(index);
        long start = index * layout.zoneSize();
        long capacity = sequential ? layout.zoneCapacity() : layout.zoneSize();
        EmulatedZone zone = new EmulatedZone(index, start, start + capacity, sequential);
        zone.writePointer = sequential ? start + pointer : Zone.NO_WRITE_POINTER;
        zone.completed = zone.writePointer;
        if ((flags & ZoneStateTable.FLAG_OFFLINE) != 0) {
            zone.condition = ZoneCondition.OFFLINE;
        } else if ((flags & ZoneStateTable.FLAG_READ_ONLY) != 0) {
            zone.condition = ZoneCondition.READ_ONLY;
        } else if (!sequential) {
            zone.condition = ZoneCondition.NOT_WRITE_POINTER;
        } else {
            zone.condition = zone.restingCondition();
        }
        return zone;
    }

    /**
     * Makes a new zoned device over {@code backing}: every sequential zone empty, conventional zones
     * holding whatever the backing device holds there. The zone state is durable when this returns.
     *
     * @param backing the device to emulate zones on; owned by the result from now on
     * @param layout the zones; its sizes must be multiples of the backing block size
     * @return the zoned device
     * @throws IllegalArgumentException if the zone sizes are not block aligned
     * @throws DeviceRangeException if the backing device is smaller than
     *     {@link ZoneLayout#backingBytes}
     * @throws IOException if the backing device fails
     */
    public static ZonedDevice create(BlockDevice backing, ZoneLayout layout) throws IOException {
        int blockSize = backing.blockSize();
        if (layout.zoneSize() % blockSize != 0 || layout.zoneCapacity() % blockSize != 0) {
            throw new IllegalArgumentException("zone size " + layout.zoneSize() + " and capacity "
                    + layout.zoneCapacity() + " must be multiples of the block size " + blockSize);
        }
        checkFits(backing, layout);
        long[] pointers = new long[layout.zoneCount()];
        for (int i = 0; i < pointers.length; i++) {
            pointers[i] = layout.isSequential(i) ? 0 : -1;
        }
        int[] flags = new int[layout.zoneCount()];
        ZoneStateTable.writeGeometry(backing, layout);
        // Both slots (writeState writes both), so that an older image's slots cannot outrank the new state.
        var state = new ZoneStateTable.State(1, pointers, flags);
        ZoneStateTable.writeState(backing, layout, state);
        return new ZonedDevice(backing, layout, new ZoneStateTable.Slots(state, List.of(), true));
    }

    /**
     * Opens a zoned device made earlier by {@link #create} on the same backing contents (a reopened
     * file, or the image left by a power cut). Each sequential zone's write pointer is its durable one.
     * If one of the two copies of the zone state is damaged, the other holds every state a flush
     * returned for (see {@link ZoneStateTable}): the device opens with it, lists the damage in
     * {@link #stateProblems()}, and writes both copies again at its next flush or close. Nothing is
     * written by the open itself.
     *
     * @param backing the device holding the zones; owned by the result from now on
     * @return the zoned device
     * @throws dev.iomap.api.CorruptFileSystemException if the backing device holds no zoned device,
     *     or both copies of its zone state are damaged (one line)
     * @throws IOException if the backing device fails
     */
    public static ZonedDevice open(BlockDevice backing) throws IOException {
        ZoneLayout layout = ZoneStateTable.readGeometry(backing);
        checkFits(backing, layout);
        return new ZonedDevice(backing, layout, ZoneStateTable.readState(backing, layout));
    }

    /**
     * Whether {@code backing} holds a zoned device made by {@link #create}: its geometry block, with
     * an intact checksum, at offset 0. Reads that block only; writes nothing. {@link #open} then needs
     * a backing device of the block size the zoned device was made with.
     *
     * @param backing any device
     * @return true if {@link #open} would find a zoned device there (or refuse a damaged zone state)
     * @throws IOException if the backing device cannot be read
     */
    public static boolean holdsZones(BlockDevice backing) throws IOException {
        return ZoneStateTable.recordedBlockSize(backing) != 0;
    }

    /**
     * Opens the zoned device {@code backing} holds, if any, for a caller that must change nothing,
     * such as {@code mkfs} looking for a filesystem before it formats: read-only (see the class
     * comment), over a view of {@code backing} with the block size the zoned device was made with.
     * The result does not own {@code backing}: closing it leaves {@code backing} open.
     *
     * @param backing any device whose block size is at most the zoned device's (512-byte blocks
     *     find every one)
     * @return the zoned device, read-only; empty if {@code backing} holds none
     * @throws dev.iomap.api.CorruptFileSystemException if it holds one that cannot be opened: a block
     *     size smaller than {@code backing}'s, a layout larger than it, or both copies of the zone
     *     state damaged (one line)
     * @throws IOException if the backing device cannot be read
     */
    public static Optional<ZonedDevice> probe(BlockDevice backing) throws IOException {
        int recorded = ZoneStateTable.recordedBlockSize(backing);
        if (recorded == 0) {
            return Optional.empty();
        }
        if (recorded < backing.blockSize() || Integer.bitCount(recorded) != 1) {
            throw new CorruptFileSystemException("the zoned device on " + backing + " has " + recorded
                    + "-byte blocks, which a device of " + backing.blockSize() + "-byte blocks cannot show");
        }
        var view = new ReadOnlyView(backing, recorded);
        try {
            return Optional.of(open(view));
        } catch (DeviceRangeException e) {
            throw new CorruptFileSystemException("the zoned device on " + backing + " does not fit it: "
                    + e.getMessage());
        }
    }

    /**
     * What {@link #open} found wrong with the two copies of the zone state, one line each (which slot,
     * what is wrong, which slot's state is used); the device recovered from it exactly. Empty for a
     * device made by {@link #create} or whose copies were sound. Answers after close too.
     *
     * @return the problems, unmodifiable
     */
    @Override
    public List<String> stateProblems() {
        return stateProblems;
    }

    private static void checkFits(BlockDevice backing, ZoneLayout layout) throws DeviceRangeException {
        long needed = layout.backingBytes(backing.blockSize());
        if (backing.capacity() < needed) {
            throw new DeviceRangeException("a backing device of " + backing.capacity() + " bytes is too small for "
                    + layout + ": it needs " + needed);
        }
    }

    /** @return the zones this device emulates */
    public ZoneLayout layout() {
        return layout;
    }

    /** @return the backing device's block size; answers after close too */
    @Override
    public int blockSize() {
        return blockSize;
    }

    /** @return bytes of all zones ({@link ZoneLayout#zonedBytes()}); answers after close too */
    @Override
    public long capacity() {
        return layout.zonedBytes();
    }

    /** @return the layout's zone count; answers after close too */
    @Override
    public int zoneCount() {
        return zones.length;
    }

    /** @return the layout's zone size; answers after close too */
    @Override
    public long zoneSize() {
        return layout.zoneSize();
    }

    /** @return the layout's open-zone limit, 0 for none; answers after close too */
    @Override
    public int maxOpenZones() {
        return layout.maxOpenZones();
    }

    /**
     * @return every zone's state, one consistent snapshot (unmodifiable)
     * @throws IOException if the device is closed
     */
    @Override
    public List<Zone> zones() throws IOException {
        ensureOpen();
        List<Zone> report = new ArrayList<>(zones.length);
        synchronized (lock) {
            for (EmulatedZone zone : zones) {
                report.add(zone.describe(layout.zoneSize()));
            }
        }
        return List.copyOf(report);
    }

    /**
     * @param index a zone number
     * @return that zone's state now
     * @throws DeviceRangeException if there is no such zone
     * @throws IOException if the device is closed
     */
    @Override
    public Zone zone(int index) throws IOException {
        ensureOpen();
        if (index < 0 || index >= zones.length) {
            throw new DeviceRangeException("zone " + index + " does not exist; the device has " + zones.length);
        }
        synchronized (lock) {
            return zones[index].describe(layout.zoneSize());
        }
    }

    /**
     * Reads from the backing device; bytes at or past a sequential zone's write pointer, and past a
     * zone's capacity, read as zeroes.
     *
     * @throws ZoneViolationException if the range touches an offline zone
     */
    @Override
    public void read(long offset, ByteBuffer dst) throws IOException {
        ensureOpen();
        if (dst.isReadOnly()) {
            throw new IllegalArgumentException("read: the destination buffer is read-only");
        }
        int length = dst.remaining();
        DeviceCounters.checkRequest("read", offset, length, blockSize, capacity());
        if (length == 0) {
            counters.countRead(0);
            return;
        }
        long end = offset + length;
        int first = zoneOf(offset);
        int last = zoneOf(end - 1);
        long[] readableEnds = new long[last - first + 1];
        synchronized (lock) {
            for (int i = first; i <= last; i++) {
                EmulatedZone zone = zones[i];
                zone.checkReadable();
                readableEnds[i - first] = zone.sequential ? zone.writePointer : zone.capacityEnd;
            }
        }
        int position = dst.position();
        backing.read(dataStart + offset, dst);
        MemorySegment bytes = MemorySegment.ofBuffer(dst.slice(position, length));
        for (int i = first; i <= last; i++) {
            long zeroFrom = Math.max(offset, readableEnds[i - first]);
            long zeroTo = Math.min(end, (i + 1) * layout.zoneSize());
            if (zeroFrom < zeroTo) {
                bytes.asSlice(zeroFrom - offset, zeroTo - zeroFrom).fill((byte) 0);
            }
        }
        counters.countRead(length);
    }

    /**
     * Checks the write against the zones' rules and moves a sequential zone's write pointer past it
     * at once; the data then reaches the backing device in acceptance order per zone. Never throws:
     * a bad range ({@link DeviceRangeException}), a broken zone rule
     * ({@link ZoneViolationException}), a closed device or a backing failure is the future's exception.
     *
     * @return a future completing when the backing device has the data
     */
    @Override
    public CompletableFuture<Void> write(long offset, List<ByteBuffer> srcs, IoPurpose purpose) {
        try {
            ensureOpen();
            Objects.requireNonNull(purpose, "purpose");
            List<ByteBuffer> data = srcs.stream().map(ByteBuffer::duplicate).toList();
            ensureWritable("write");
            long length = DeviceCounters.totalRemaining(data);
            DeviceCounters.checkRequest("write", offset, length, blockSize, capacity());
            if (length == 0) {
                counters.countWrite(0, purpose);
                return CompletableFuture.completedFuture(null);
            }
            ZoneWritePlug.Ticket ticket = acceptWrite(offset, length);
            counters.countWrite(length, purpose);
            if (ticket == null) {
                return backing.write(dataStart + offset, data, purpose);
            }
            return plug.submit(ticket, data, purpose);
        } catch (IOException | RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /** @return the ticket of a write to a sequential zone, or null for conventional zones */
    private ZoneWritePlug.Ticket acceptWrite(long offset, long length) throws ZoneViolationException {
        int first = zoneOf(offset);
        int last = zoneOf(offset + length - 1);
        synchronized (lock) {
            for (int i = first; i <= last; i++) {
                EmulatedZone zone = zones[i];
                if (first != last && zone.sequential) {
                    throw zone.violation(Reason.CROSSES_ZONE_BOUNDARY, "write [" + offset + ", +" + length
                            + ") crosses into or out of sequential zone " + i);
                }
                zone.checkWritable("write");
            }
            EmulatedZone zone = zones[first];
            if (!zone.sequential) {
                return null;
            }
            if (offset != zone.writePointer) {
                throw zone.violation(Reason.NOT_AT_WRITE_POINTER, "write at " + offset + " to sequential zone "
                        + zone.index + " is not at its write pointer " + zone.writePointer);
            }
            return plug.accept(zone, length);
        }
    }

    /**
     * Zone append: the device chooses the offset (the write pointer when the append is accepted).
     * Never throws: a zone start that is not one or a length that is not a positive number of blocks
     * ({@link DeviceRangeException}), a broken zone rule ({@link ZoneViolationException}), a closed
     * device or a backing failure is the future's exception.
     *
     * @return a future completing with the device offset the data landed at
     */
    @Override
    public CompletableFuture<Long> append(long zoneStart, List<ByteBuffer> srcs, IoPurpose purpose) {
        try {
            ensureOpen();
            Objects.requireNonNull(purpose, "purpose");
            List<ByteBuffer> data = srcs.stream().map(ByteBuffer::duplicate).toList();
            ensureWritable("append");
            long length = DeviceCounters.totalRemaining(data);
            EmulatedZone zone = zoneStartingAt(zoneStart);
            if (length == 0 || length % blockSize != 0) {
                throw new DeviceRangeException("append of " + length + " bytes to zone " + zone.index
                        + ": the length must be a positive multiple of the block size " + blockSize);
            }
            ZoneWritePlug.Ticket ticket;
            synchronized (lock) {
                zone.requireSequential("append");
                zone.checkWritable("append");
                ticket = plug.accept(zone, length);
            }
            counters.countWrite(length, purpose);
            long landed = ticket.offset();
            return plug.submit(ticket, data, purpose).thenApply(ignored -> landed);
        } catch (IOException | RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /**
     * Empties a sequential zone after the writes accepted before it complete; durable on return. Only
     * the zone state changes: the old bytes stay on the backing device, past the write pointer, where
     * reads return zeroes, until writes at the write pointer replace them ({@link #finishZone} zeroes
     * what it makes readable), so a reset costs the same whatever the zone's size.
     *
     * @throws DeviceRangeException if {@code zoneStart} is not the start of a zone
     * @throws ZoneViolationException if the zone is conventional, read-only or offline
     * @throws IOException if the device is closed or the backing device fails
     */
    @Override
    public void resetZone(long zoneStart) throws IOException {
        EmulatedZone zone = quiesce(zoneStart, "reset");
        synchronized (lock) {
            empty(zone);
        }
        persist();
    }

    /**
     * Empties every sequential zone that is neither read-only nor offline, after the writes accepted
     * before it complete, and records them all in one zone state write: durable on return, and as
     * cheap for a million zones as for one.
     *
     * @throws IOException if the device is closed or read-only, or the backing device fails
     */
    @Override
    public void resetAllZones() throws IOException {
        ensureOpen();
        ensureWritable("reset");
        List<CompletableFuture<Void>> pending = new ArrayList<>();
        synchronized (lock) {
            for (EmulatedZone zone : zones) {
                pending.add(zone.tail);
            }
        }
        pending.forEach(CompletableFuture::join);
        synchronized (lock) {
            for (EmulatedZone zone : zones) {
                if (zone.sequential && !zone.hasFailed()) {
                    empty(zone);
                }
            }
        }
        persist();
    }

    /** A reset's change of a zone's state; the caller holds {@link #lock}. */
    private void empty(EmulatedZone zone) {
        openZones.release(zone);
        zone.generation++;
        zone.writePointer = zone.start;
        zone.completed = zone.start;
        zone.condition = ZoneCondition.EMPTY;
    }

    /**
     * Makes a sequential zone full after the writes accepted before it complete; durable on return.
     *
     * @throws DeviceRangeException if {@code zoneStart} is not the start of a zone
     * @throws ZoneViolationException if the zone is conventional, read-only or offline
     * @throws IOException if the device is closed or the backing device fails
     */
    @Override
    public void finishZone(long zoneStart) throws IOException {
        EmulatedZone zone = quiesce(zoneStart, "finish");
        long written;
        synchronized (lock) {
            written = zone.completed;
        }
        // Before the state: what becomes readable below the new write pointer must be zeroes.
        if (written < zone.capacityEnd) {
            backing.discard(dataStart + written, zone.capacityEnd - written);
        }
        synchronized (lock) {
            openZones.release(zone);
            zone.generation++;
            zone.writePointer = zone.capacityEnd;
            zone.completed = zone.capacityEnd;
            zone.condition = ZoneCondition.FULL;
        }
        persist();
    }

    /** Checks a reset or finish is allowed and waits for the writes accepted before it. */
    private EmulatedZone quiesce(long zoneStart, String operation) throws IOException {
        ensureOpen();
        ensureWritable(operation);
        EmulatedZone zone = zoneStartingAt(zoneStart);
        CompletableFuture<Void> pending;
        synchronized (lock) {
            zone.requireSequential(operation);
            zone.requireUsable(operation);
            pending = zone.tail;
        }
        pending.join();
        return zone;
    }

    /**
     * Opens a sequential zone explicitly (not persistent).
     *
     * @throws DeviceRangeException if {@code zoneStart} is not the start of a zone
     * @throws ZoneViolationException if the zone is conventional, full, read-only or offline, or no
     *     open-zone resource is free
     * @throws IOException if the device is closed
     */
    @Override
    public void openZone(long zoneStart) throws IOException {
        ensureOpen();
        ensureWritable("open");
        EmulatedZone zone = zoneStartingAt(zoneStart);
        synchronized (lock) {
            zone.requireSequential("open");
            zone.checkWritable("open");
            if (zone.condition == ZoneCondition.IMPLICIT_OPEN) {
                zone.condition = ZoneCondition.EXPLICIT_OPEN;
            } else if (zone.condition != ZoneCondition.EXPLICIT_OPEN) {
                openZones.open(zone, ZoneCondition.EXPLICIT_OPEN);
            }
        }
    }

    /**
     * Gives back a sequential zone's open-zone resource (not persistent).
     *
     * @throws DeviceRangeException if {@code zoneStart} is not the start of a zone
     * @throws ZoneViolationException if the zone is conventional or offline
     * @throws IOException if the device is closed
     */
    @Override
    public void closeZone(long zoneStart) throws IOException {
        ensureOpen();
        EmulatedZone zone = zoneStartingAt(zoneStart);
        synchronized (lock) {
            zone.requireSequential("close");
            zone.checkReadable();
            openZones.release(zone);
        }
    }

    /**
     * Fault injection: the zone goes {@link ZoneCondition#READ_ONLY} (readable, never written again)
     * or {@link ZoneCondition#OFFLINE} (no I/O at all), as the zones of a failing drive do. Persistent.
     *
     * @param zoneStart device offset of a zone's start
     * @param condition {@code READ_ONLY} or {@code OFFLINE}
     * @throws IllegalArgumentException for another condition
     * @throws IOException if the state cannot be persisted
     */
    public void failZone(long zoneStart, ZoneCondition condition) throws IOException {
        if (condition != ZoneCondition.READ_ONLY && condition != ZoneCondition.OFFLINE) {
            throw new IllegalArgumentException("a zone fails to READ_ONLY or OFFLINE, not " + condition);
        }
        ensureOpen();
        ensureWritable("fail");
        EmulatedZone zone = zoneStartingAt(zoneStart);
        synchronized (lock) {
            openZones.release(zone);
            zone.condition = condition;
        }
        persist();
    }

    /**
     * Makes every write that completed before the call durable, with the write pointers covering them.
     */
    @Override
    public void flush() throws IOException {
        ensureOpen();
        persist();
        counters.countFlush();
    }

    /**
     * Flushes the backing device, then writes the zone state to both slots, flushing after each, if it
     * changed since it was last written (or the slots differed at open): the state recorded never runs
     * ahead of the data, and both slots hold it before this returns. Over a read-only backing device
     * only flushes it: nothing can have changed.
     */
    private void persist() throws IOException {
        if (backing.readOnly()) {
            backing.flush();
            return;
        }
        persistLock.lock();
        try {
            long[] pointers = new long[zones.length];
            int[] flags = new int[zones.length];
            synchronized (lock) {
                for (EmulatedZone zone : zones) {
                    pointers[zone.index] = zone.sequential ? zone.completed - zone.start : -1;
                    flags[zone.index] = switch (zone.condition) {
                        case READ_ONLY -> ZoneStateTable.FLAG_READ_ONLY;
                        case OFFLINE -> ZoneStateTable.FLAG_OFFLINE;
                        default -> 0;
                    };
                }
            }
            backing.flush();
            var next = new ZoneStateTable.State(persisted.sequence() + 1, pointers, flags);
            if (rewriteSlots || !next.sameZones(persisted)) {
                ZoneStateTable.writeState(backing, layout, next);
                persisted = next;
                rewriteSlots = false;
            }
        } finally {
            persistLock.unlock();
        }
    }

    /** Conventional zones only: a sequential zone is emptied with {@link #resetZone}. */
    @Override
    public void discard(long offset, long length) throws IOException {
        ensureOpen();
        ensureWritable("discard");
        DeviceCounters.checkRequest("discard", offset, length, blockSize, capacity());
        if (length > 0) {
            synchronized (lock) {
                for (int i = zoneOf(offset); i <= zoneOf(offset + length - 1); i++) {
                    if (zones[i].sequential) {
                        throw new NotSupportedException("discard of sequential zone " + i
                                + " of a zoned device: reset the zone instead");
                    }
                    zones[i].checkWritable("discard");
                }
            }
            backing.discard(dataStart + offset, length);
        }
        counters.countDiscard(length);
    }

    /** @return what callers asked of this device (not the zone-state writes); answers after close too */
    @Override
    public DeviceStats stats() {
        return counters.snapshot();
    }

    /** Persists the zone state (unless read-only) and closes the backing device. Idempotent. */
    @Override
    public void close() throws IOException {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        try {
            persist();
        } finally {
            backing.close();
        }
    }

    /** @return the layout and the backing device, for messages */
    @Override
    public String toString() {
        return "ZonedDevice[" + layout + " over " + backing + "]";
    }

    private int zoneOf(long offset) {
        return (int) (offset / layout.zoneSize());
    }

    private EmulatedZone zoneStartingAt(long zoneStart) throws DeviceRangeException {
        if (zoneStart < 0 || zoneStart >= capacity() || zoneStart % layout.zoneSize() != 0) {
            throw new DeviceRangeException("offset " + zoneStart + " is not the start of a zone (zones are "
                    + layout.zoneSize() + " bytes, " + zones.length + " of them)");
        }
        return zones[zoneOf(zoneStart)];
    }

    private void ensureOpen() throws IOException {
        if (closed.get()) {
            throw new IOException(this + " is closed");
        }
    }

    /** @return whether the backing device is read-only, and with it this device */
    @Override
    public boolean readOnly() {
        return backing.readOnly();
    }

    /** @param operation the refused write or zone operation, for the message */
    private void ensureWritable(String operation) throws ReadOnlyDeviceException {
        if (backing.readOnly()) {
            throw new ReadOnlyDeviceException(operation + " on " + this + " refused: the backing device is"
                    + " open read-only");
        }
    }
}
