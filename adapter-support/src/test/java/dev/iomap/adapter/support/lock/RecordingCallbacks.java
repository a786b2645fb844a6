package dev.iomap.adapter.support.lock;

import dev.iomap.spi.lock.DemoteCallbacks;
import dev.iomap.spi.lock.LockMode;
import dev.iomap.spi.lock.LockName;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * Callbacks that append "holder.sync FROM>TO" and "holder.invalidate FROM>TO" to a shared event list
 * as the last thing they do, run an optional action first, and report a fixed page count.
 */
final class RecordingCallbacks implements DemoteCallbacks {
    /** What a callback does before recording itself. */
    interface Action {
        void run() throws IOException;
    }

    private final String holder;
    private final List<String> events;
    private final long pages;
    volatile Action beforeSync = () -> { };
    volatile Action beforeInvalidate = () -> { };

    RecordingCallbacks(String holder, List<String> events, long pages) {
        this.holder = holder;
        this.events = events;
        this.pages = pages;
    }

    static List<String> newEventList() {
        return java.util.Collections.synchronizedList(new ArrayList<>());
    }

    @Override
    public void sync(LockName name, LockMode from, LockMode to) throws IOException {
        beforeSync.run();
        events.add(holder + ".sync " + from + ">" + to);
    }

    @Override
    public long invalidate(LockName name, LockMode from, LockMode to) throws IOException {
        beforeInvalidate.run();
        events.add(holder + ".invalidate " + from + ">" + to);
        return pages;
    }
}
