package dev.iomap.core.trace;

import java.util.List;
import jdk.jfr.Event;

/** Every event type of this package, for a tool that lists or enables them all ({@code iomap trace}). */
public final class CoreTraceEvents {
    /** The event classes, in the order of {@code fs/iomap/trace.h}. */
    public static final List<Class<? extends Event>> TYPES = List.of(
            ReadpageEvent.class, ReadaheadEvent.class,
            WritebackFolioEvent.class, ReleaseFolioEvent.class, InvalidateFolioEvent.class,
            DioInvalidateFailEvent.class, ZeroIterEvent.class,
            IterDstmapEvent.class, IterSrcmapEvent.class, AddToIoendEvent.class, IterEvent.class,
            DioRwBeginEvent.class, DioCompleteEvent.class);

    private CoreTraceEvents() {
    }
}
