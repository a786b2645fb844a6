package dev.iomap.spi.trace;

import java.util.List;
import jdk.jfr.Event;

/** Every event type of this package, for a tool that lists or enables them all ({@code iomap trace}). */
public final class AdapterTraceEvents {
    /** The event classes: gfs2's glock events, then bcachefs-like's. */
    public static final List<Class<? extends Event>> TYPES = List.of(
            GlockStateChangeEvent.class, GlockDemoteRqEvent.class, GlockPromoteEvent.class,
            ChecksumErrorEvent.class, FolioReservationEvent.class);

    private AdapterTraceEvents() {
    }
}
