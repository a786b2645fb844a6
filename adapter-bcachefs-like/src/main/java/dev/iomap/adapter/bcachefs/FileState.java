package dev.iomap.adapter.bcachefs;

import dev.iomap.spi.trace.FolioReservationEvent;
import dev.iomap.api.NoSpaceException;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What the adapter keeps in memory for one cached file: bcachefs's per-sector folio state
 * ({@code struct bch_folio_sector}), here per file block and in the adapter rather than on the
 * core's folio, plus the extent generation that validates mappings and the writes between
 * {@code mapBlocks} and their completion.
 *
 * <p>A block's state says whether it holds one block of the data space's reservation:
 * <ul>
 * <li>{@code UNALLOCATED} (absent): no reservation; clean, or on the device in an extent;
 * <li>{@link State#RESERVED}: a write's {@code begin} reserved it and has not copied into it yet;
 * <li>{@link State#DIRTY_RESERVED}: a write copied into it; writeback will allocate from the reservation.
 * </ul>
 * bcachefs's {@code ALLOCATED} (overwritten in place, no reservation needed) is not a state here: a
 * {@code nocow} overwrite of an unshared block simply takes none. Writeback turns a reserved block
 * back into {@code UNALLOCATED} when it allocates for it. Thread-safe.
 *
 * <p>A write finds out that it has no space before it copies (the kernel's {@code write_begin} rule):
 * its {@code begin} reserves every block of its mapping. Writeback may then take the reservation of a
 * block that was dirty already before the write copies into it; a {@link #take} of a block inside a
 * write mapping that is open ({@link #beginWrite} to {@link #endWrite}) bumps {@link #generation}, so
 * the mapping is stale when the core checks it with the folio locked, and the next {@code begin}
 * reserves again (or fails with ENOSPC) before anything is copied. Writeback elsewhere in the file
 * leaves the mapping alone.
 */
final class FileState {
    /** Reservation state of one block. */
    enum State {
        /** Reserved by a write that has not copied yet. */
        RESERVED,
        /** Dirty, with its reservation. */
        DIRTY_RESERVED
    }

    /** A run {@code mapBlocks} handed out: file blocks from the map key, device blocks from {@code devStart}. */
    record Planned(long fileBlock, long devStart, long blocks, boolean inPlace) {
    }

    /** What {@code writebackSubmit} wrote, for {@code ioendCompleted}: the extent to insert. */
    record Submitted(ExtentValue value, long allocatedBlocks, boolean inPlace) {
    }

    final long ino;
    final AtomicLong generation = new AtomicLong(1);
    /** The block ranges {@code [first, end)} of write mappings being handed out or in use, by first block. */
    private final TreeMap<Long, List<Long>> openWrites = new TreeMap<>();
    /**
     * The runs {@code mapBlocks} handed out, by first file block and first device block: direct writes of
     * one range may be in flight at once (each with blocks of its own), so the file block alone does not
     * say whose run it is.
     */
    final InFlight<PlanKey, Planned> planned = new InFlight<>();
    /**
     * What each ioend in flight was submitted with, by file offset, device address and length (as its
     * completion reports them): two direct writes of one range in flight at once have one offset, and
     * keyed by it alone the second's record replaced the first's, so that the second's completion found
     * none and failed EIO (xfstests generic/113, aio-stress -O -S).
     */
    final InFlight<SubmitKey, Submitted> submitted = new InFlight<>();

    /** A key of {@link #planned}. */
    record PlanKey(long fileBlock, long devStart) {
    }

    /** A key of {@link #submitted}. */
    record SubmitKey(long offset, long address, long length) {
    }

    /**
     * Records of writes in flight by key, first in first out where several share one (in-place runs of one
     * range, which are alike). Thread-safe.
     */
    static final class InFlight<K, V> {
        private final Map<K, ArrayDeque<V>> byKey = new HashMap<>();

        /** Adds a record under {@code key}. */
        synchronized void add(K key, V value) {
            byKey.computeIfAbsent(key, k -> new ArrayDeque<>()).addLast(value);
        }

        /** @return the oldest record under {@code key}, removed; null if there is none */
        synchronized V take(K key) {
            ArrayDeque<V> records = byKey.get(key);
            if (records == null) {
                return null;
            }
            V value = records.pollFirst();
            if (records.isEmpty()) {
                byKey.remove(key);
            }
            return value;
        }
    }
    private final TreeMap<Long, State> states = new TreeMap<>();

    FileState(long ino) {
        this.ino = ino;
    }

    /**
     * Reserves every block of {@code [first, end)} without a reservation, or as many from {@code first}
     * as the space allows.
     *
     * @return the first block past the covered range ({@code end} if all could be)
     * @throws NoSpaceException if {@code first} itself needs a block and none is available
     */
    synchronized long reserve(long first, long end, DataReserve space) throws NoSpaceException {
        long asked = end - first;
        long need = 0;
        for (long b = first; b < end; b++) {
            if (!states.containsKey(b)) {
                need++;
            }
        }
        while (true) {
            try {
                space.reserve(need);
                for (long b = first; b < end; b++) {
                    states.putIfAbsent(b, State.RESERVED);
                }
                FolioReservationEvent.emit(ino, first, asked, end - first, need);
                return end;
            } catch (NoSpaceException e) {
                long available = space.available();
                long b = first;
                long taken = 0;
                while (b < end && (states.containsKey(b) || taken < available)) {
                    if (!states.containsKey(b)) {
                        taken++;
                    }
                    b++;
                }
                if (b == first) {
                    throw new NoSpaceException("bcachefs-like: no space to reserve block " + first + " of inode " + ino);
                }
                end = b;
                need = taken;
            }
        }
    }

    /** Marks the reserved blocks of {@code [first, end)} dirty. */
    synchronized void markDirty(long first, long end) {
        for (Map.Entry<Long, State> e : states.subMap(first, end).entrySet()) {
            e.setValue(State.DIRTY_RESERVED);
        }
    }

    /** @return whether every block of {@code [first, end)} holds a reservation */
    synchronized boolean reserved(long first, long end) {
        return states.subMap(first, end).size() == end - first;
    }

    /**
     * Gives back the reservations of {@code [first, end)}.
     *
     * @return blocks released
     */
    synchronized long release(long first, long end, DataReserve space) {
        long count = 0;
        Iterator<Long> it = states.subMap(first, end).keySet().iterator();
        while (it.hasNext()) {
            it.next();
            it.remove();
            count++;
        }
        if (count > 0) {
            space.unreserve(count);
        }
        return count;
    }

    /**
     * Takes the reservations of up to {@code blocks} blocks from {@code first} for an allocation, reserving
     * now for a block without one (a block written again without being dirtied by a write).
     *
     * @return blocks taken, at least 1
     * @throws NoSpaceException if {@code first} has no reservation and none is available
     */
    synchronized long take(long first, long blocks, DataReserve space) throws NoSpaceException {
        long n = 0;
        boolean tookReservation = false;
        for (; n < blocks; n++) {
            if (states.remove(first + n) != null) {
                tookReservation = true;
                continue;
            }
            try {
                space.reserve(1);
            } catch (NoSpaceException e) {
                if (n == 0) {
                    throw new NoSpaceException("bcachefs-like: block " + first + " of inode " + ino
                            + " has no reservation and the device is full");
                }
                break;
            }
        }
        if (tookReservation && inOpenWrite(first, first + n)) {
            generation.incrementAndGet();
        }
        return n;
    }

    /** @return whether a block of {@code [first, end)} lies in an open write mapping (caller holds the lock) */
    private boolean inOpenWrite(long first, long end) {
        for (Map.Entry<Long, List<Long>> open : openWrites.headMap(end).entrySet()) {
            for (long openEnd : open.getValue()) {
                if (openEnd > first) {
                    return true;
                }
            }
        }
        return false;
    }

    /**
     * Notes a write mapping about to be handed out within {@code [first, end)}; call before reading
     * {@link #generation} for its cookie, and {@link #endWrite} with the same first block once after.
     */
    synchronized void beginWrite(long first, long end) {
        openWrites.computeIfAbsent(first, k -> new ArrayList<>()).add(end);
    }

    /** Notes that a write mapping from {@link #beginWrite} at {@code first} ended (or was never handed out). */
    synchronized void endWrite(long first) {
        List<Long> ends = openWrites.get(first);
        if (ends == null) {
            return;
        }
        ends.removeFirst();
        if (ends.isEmpty()) {
            openWrites.remove(first);
        }
    }

    /** Puts back reservations {@link #take} took that an allocation did not use. */
    synchronized void giveBack(long first, long end) {
        for (long b = first; b < end; b++) {
            states.put(b, State.DIRTY_RESERVED);
        }
    }
}
