package dev.iomap.devices;

import dev.iomap.device.BlockDevice;
import dev.iomap.device.IoPurpose;
import dev.iomap.device.ZoneCondition;
import dev.iomap.device.ZoneViolationException;
import dev.iomap.device.ZoneViolationException.Reason;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * The writes of a {@link ZonedDevice}'s sequential zones, like the kernel's zone write plugging: a
 * write is accepted (checked against and moving the write pointer) when it is called, then sent to
 * the backing device only once the zone's previous write is done, so each zone's writes complete in
 * the order they were accepted whatever order the backing device completes writes in. When one
 * fails, the write pointer goes back to the end of the last good write, and the writes queued behind
 * it fail when their turn comes: they are no longer at the write pointer.
 *
 * <p>Bookkeeping happens under the device's lock; backing I/O and completion callbacks never run
 * under it.
 */
final class ZoneWritePlug {
    private final Object lock;
    private final BlockDevice backing;
    private final long dataStart;
    private final OpenZoneLimit openZones;

    /** A write accepted for a sequential zone, waiting for its turn. */
    record Ticket(EmulatedZone zone, long generation, long offset, long length,
            CompletableFuture<Void> previous, CompletableFuture<Void> settled) {
    }

    ZoneWritePlug(Object lock, BlockDevice backing, long dataStart, OpenZoneLimit openZones) {
        this.lock = lock;
        this.backing = backing;
        this.dataStart = dataStart;
        this.openZones = openZones;
    }

    /**
     * Accepts {@code length} bytes at the zone's write pointer: opens the zone if needed, moves the
     * write pointer, queues the write behind the zone's last. Caller holds the lock and has checked
     * the zone is writable.
     *
     * @throws ZoneViolationException if the write would pass the capacity or no open-zone resource is free
     */
    Ticket accept(EmulatedZone zone, long length) throws ZoneViolationException {
        long offset = zone.writePointer;
        if (offset + length > zone.capacityEnd) {
            throw zone.violation(Reason.PAST_CAPACITY, "write of " + length + " bytes at " + offset + " passes the"
                    + " capacity of zone " + zone.index + " (ends at " + zone.capacityEnd + ")");
        }
        if (!zone.condition.isOpen()) {
            openZones.open(zone, ZoneCondition.IMPLICIT_OPEN);
        }
        zone.writePointer += length;
        if (zone.writePointer == zone.capacityEnd) {
            openZones.release(zone);
        }
        CompletableFuture<Void> previous = zone.tail;
        CompletableFuture<Void> settled = new CompletableFuture<>();
        zone.tail = settled;
        return new Ticket(zone, zone.generation, offset, length, previous, settled);
    }

    /**
     * Sends an accepted write to the backing device once the zone's previous write is done. Caller does
     * not hold the lock.
     */
    CompletableFuture<Void> submit(Ticket ticket, List<ByteBuffer> data, IoPurpose purpose) {
        CompletableFuture<Void> result = new CompletableFuture<>();
        ticket.previous().whenComplete((ignored, failure) -> dispatch(ticket, data, purpose, result));
        return result;
    }

    private void dispatch(Ticket ticket, List<ByteBuffer> data, IoPurpose purpose, CompletableFuture<Void> result) {
        EmulatedZone zone = ticket.zone();
        ZoneViolationException refused = null;
        synchronized (lock) {
            if (ticket.generation() != zone.generation) {
                refused = zone.violation(Reason.NOT_AT_WRITE_POINTER, "write at " + ticket.offset() + " to zone "
                        + zone.index + " was overtaken by a reset or finish of the zone");
            } else if (ticket.offset() != zone.completed) {
                refused = zone.violation(Reason.NOT_AT_WRITE_POINTER, "write at " + ticket.offset() + " to zone "
                        + zone.index + " is no longer at the write pointer: an earlier write failed");
            }
        }
        if (refused != null) {
            settle(ticket, result, refused);
            return;
        }
        CompletableFuture<Void> write;
        try {
            write = backing.write(dataStart + ticket.offset(), data, purpose);
        } catch (RuntimeException e) {
            write = CompletableFuture.failedFuture(e);
        }
        write.whenComplete((ignored, failure) -> completed(ticket, failure, result));
    }

    private void completed(Ticket ticket, Throwable failure, CompletableFuture<Void> result) {
        EmulatedZone zone = ticket.zone();
        synchronized (lock) {
            if (ticket.generation() == zone.generation) {
                if (failure == null) {
                    zone.completed = ticket.offset() + ticket.length();
                } else {
                    // The drive stops at the failed write: later accepted writes no longer fit.
                    zone.writePointer = zone.completed;
                    openZones.release(zone);
                    if (!zone.hasFailed()) {
                        zone.condition = zone.restingCondition();
                    }
                }
            }
        }
        settle(ticket, result, failure);
    }

    private static void settle(Ticket ticket, CompletableFuture<Void> result, Throwable failure) {
        if (failure == null) {
            result.complete(null);
        } else {
            result.completeExceptionally(failure instanceof CompletionException && failure.getCause() != null
                    ? failure.getCause() : failure);
        }
        ticket.settled().complete(null);
    }
}
