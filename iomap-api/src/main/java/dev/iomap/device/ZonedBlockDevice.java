package dev.iomap.device;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * A block device split into zones (host-managed SMR disks, NVMe ZNS SSDs): the kernel's zoned block
 * device with its zone report and zone management operations.
 *
 * <p>The device is {@link #zoneCount()} zones of {@link #zoneSize()} bytes each, back to back from
 * offset 0, so {@link #capacity()} is {@code zoneCount() * zoneSize()}. Each zone is
 * {@link ZoneType#CONVENTIONAL} (an ordinary block range) or
 * {@link ZoneType#SEQUENTIAL_WRITE_REQUIRED}. On top of the {@link BlockDevice} contract, the device
 * enforces what a drive enforces, refusing with {@link ZoneViolationException} (as the future's
 * exception for writes and appends, thrown for the zone operations), before writing anything:
 * <ul>
 *   <li>a write to a sequential zone must start exactly at its write pointer, must not pass its
 *       capacity, and must stay inside the zone; the zone must not be full, read-only or offline;</li>
 *   <li>a write that would open a zone ({@link ZoneCondition#EMPTY} or {@link ZoneCondition#CLOSED})
 *       needs an open-zone resource: with {@link #maxOpenZones()} zones open, the device closes an
 *       implicitly opened zone to make room, and refuses if every open zone was opened explicitly;</li>
 *   <li>{@link #discard} is refused on sequential zones: {@link #resetZone} is their discard.</li>
 * </ul>
 *
 * <p>Ordering: the device accepts writes to a sequential zone in the order of the {@link #write} and
 * {@link #append} calls. A write is checked against the write pointer when it is called, and the
 * write pointer moves past it at once, so a caller may queue several writes to one zone without
 * waiting, provided it calls them in offset order. Writes to one zone complete in the order they were
 * accepted; if one fails, the write pointer goes back to where it ended and every write queued behind
 * it in that zone fails with {@link ZoneViolationException.Reason#NOT_AT_WRITE_POINTER}.
 *
 * <p>Durability: {@link #flush()} makes durable every write that completed before it and the write
 * pointers that cover them; a zone operation ({@link #resetZone}, {@link #finishZone}, ...) is
 * durable when it returns. After a power cut each sequential zone's write pointer is its durable one,
 * and reads at or past a write pointer return zeroes.
 *
 * <p>Thread-safe. Zone arguments are the device offset of a zone's start; an offset that is not one
 * gets {@link DeviceRangeException}.
 */
public interface ZonedBlockDevice extends BlockDevice {

    /** @return this device */
    @Override
    default Optional<ZonedBlockDevice> zoned() {
        return Optional.of(this);
    }

    /** @return how many zones the device has, at least 1 */
    int zoneCount();

    /** @return bytes per zone, a multiple of {@link #blockSize()}; every zone has this size */
    long zoneSize();

    /**
     * @return how many zones may be open (implicitly or explicitly) at once; 0 means no limit
     */
    int maxOpenZones();

    /**
     * The zone report: every zone in offset order.
     *
     * @return a snapshot of the zones
     * @throws IOException if the device is closed
     */
    List<Zone> zones() throws IOException;

    /**
     * One zone of the report.
     *
     * @param index the zone number, from 0
     * @return a snapshot of the zone
     * @throws DeviceRangeException if there is no such zone
     * @throws IOException if the device is closed
     */
    Zone zone(int index) throws IOException;

    /**
     * What the device found wrong with its own persistent state (an emulation's copies of the zone
     * state, say) when it was opened, and recovered from exactly: one line per problem, for fsck to
     * report and mount to warn about. A state it cannot recover exactly is not a problem listed here:
     * the device refuses to open instead.
     *
     * @return the problems, unmodifiable; empty by default (a drive keeps its own state)
     */
    default List<String> stateProblems() {
        return List.of();
    }

    /**
     * @param offset a device byte offset in {@code [0, capacity())}
     * @return the number of the zone holding it
     * @throws DeviceRangeException if the offset is outside the device
     */
    default int zoneIndex(long offset) throws DeviceRangeException {
        if (offset < 0 || offset >= capacity()) {
            throw new DeviceRangeException("offset " + offset + " is outside the zoned device of "
                    + capacity() + " bytes");
        }
        return (int) (offset / zoneSize());
    }

    /**
     * Writes at the zone's write pointer, wherever it is when the device accepts the command, and
     * says where the data landed (the kernel's {@code REQ_OP_ZONE_APPEND}): several appends to one
     * zone may be in flight without the caller tracking the write pointer.
     *
     * @param zoneStart device offset of a sequential zone's start
     * @param srcs the data; total remaining length block aligned and at most the zone's free capacity
     * @param purpose data or metadata, for the statistics
     * @return a future completing with the device offset of the first byte written, or exceptionally
     *     with {@link ZoneViolationException} (conventional, full, read-only or offline zone, or not
     *     enough capacity left) or another {@link IOException}
     */
    CompletableFuture<Long> append(long zoneStart, List<ByteBuffer> srcs, IoPurpose purpose);

    /**
     * Empties a sequential zone: write pointer back to its start, data gone (reads return zeroes),
     * open-zone resource released. Waits for writes to the zone accepted before the call. Durable when
     * it returns.
     *
     * @param zoneStart device offset of a sequential zone's start
     * @throws ZoneViolationException for a conventional, read-only or offline zone
     * @throws IOException on a device error
     */
    void resetZone(long zoneStart) throws IOException;

    /**
     * Empties every sequential zone at once, as {@link #resetZone} does one (the kernel's
     * {@code REQ_OP_ZONE_RESET_ALL}, ZBC's reset with the ALL bit): conventional zones, and read-only
     * and offline ones, are left as they are. Waits for the writes accepted before the call. Durable
     * when it returns. The default resets the zones one by one; a device that can record them all in
     * one step overrides it.
     *
     * @throws IOException on a device error
     */
    default void resetAllZones() throws IOException {
        for (Zone zone : zones()) {
            if (zone.isSequential() && zone.condition() != ZoneCondition.READ_ONLY
                    && zone.condition() != ZoneCondition.OFFLINE) {
                resetZone(zone.start());
            }
        }
    }

    /**
     * Opens a sequential zone explicitly: it holds an open-zone resource until closed, finished or
     * reset. Opening an open zone makes it explicitly open.
     *
     * @param zoneStart device offset of a sequential zone's start
     * @throws ZoneViolationException for a conventional, full, read-only or offline zone, or
     *     {@link ZoneViolationException.Reason#TOO_MANY_OPEN_ZONES}
     * @throws IOException on a device error
     */
    void openZone(long zoneStart) throws IOException;

    /**
     * Closes an open sequential zone: {@link ZoneCondition#CLOSED} if it holds data, else
     * {@link ZoneCondition#EMPTY}. Closing a zone that is not open does nothing.
     *
     * @param zoneStart device offset of a sequential zone's start
     * @throws ZoneViolationException for a conventional or offline zone
     * @throws IOException on a device error
     */
    void closeZone(long zoneStart) throws IOException;

    /**
     * Makes a sequential zone {@link ZoneCondition#FULL}: write pointer to its capacity (the unwritten
     * rest reads as zeroes), open-zone resource released. Waits for writes to the zone accepted before
     * the call. Durable when it returns.
     *
     * @param zoneStart device offset of a sequential zone's start
     * @throws ZoneViolationException for a conventional, read-only or offline zone
     * @throws IOException on a device error
     */
    void finishZone(long zoneStart) throws IOException;
}
