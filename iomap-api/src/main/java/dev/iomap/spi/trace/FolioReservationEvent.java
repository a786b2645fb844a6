package dev.iomap.spi.trace;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Enabled;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;

/**
 * A write took space reservations for the blocks it dirties (bcachefs-like, at {@code write()} time):
 * bcachefs's {@code bch2_folio_reservation_get}, which has no tracepoint of its own. {@code reserved} is
 * how many blocks needed a new reservation (the others had one), {@code covered} how many of those asked
 * for the space allowed (fewer means a short write; a write that gets none fails with ENOSPC and records
 * nothing).
 */
@Name(FolioReservationEvent.NAME)
@Label("folio_reservation_get")
@Description("A write reserved space for the blocks it dirties: inode, first block, blocks asked for,"
        + " blocks covered, new reservations taken.")
@Category({"iomap4j", "bcachefs"})
@Enabled(false)
@StackTrace(false)
public final class FolioReservationEvent extends Event {
    /** The event's name: {@code bcachefs.folio_reservation_get}. */
    public static final String NAME = "bcachefs.folio_reservation_get";

    @Label("inode")
    long inode;

    @Label("block")
    long block;

    @Label("blocks")
    long blocks;

    @Label("covered")
    long covered;

    @Label("reserved")
    long reserved;

    /**
     * Records the event if a recording enables it; otherwise does nothing and allocates nothing.
     *
     * @param inode the inode
     * @param block the first block of the range
     * @param blocks the blocks asked for
     * @param covered the blocks from {@code block} that hold a reservation now
     * @param reserved the new reservations taken
     */
    public static void emit(long inode, long block, long blocks, long covered, long reserved) {
        FolioReservationEvent event = new FolioReservationEvent();
        if (!event.shouldCommit()) {
            return;
        }
        event.inode = inode;
        event.block = block;
        event.blocks = blocks;
        event.covered = covered;
        event.reserved = reserved;
        event.commit();
    }
}
