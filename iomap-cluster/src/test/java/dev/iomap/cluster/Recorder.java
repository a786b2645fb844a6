package dev.iomap.cluster;

import dev.iomap.spi.lock.DemoteCallbacks;
import dev.iomap.spi.lock.LockMode;
import dev.iomap.spi.lock.LockName;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/** Callbacks that append "holder.sync FROM>TO" and "holder.invalidate FROM>TO" to a shared event list. */
final class Recorder implements DemoteCallbacks {
    private final String holder;
    private final List<String> events;
    private final long pages;

    Recorder(String holder, List<String> events, long pages) {
        this.holder = holder;
        this.events = events;
        this.pages = pages;
    }

    static List<String> newEventList() {
        return Collections.synchronizedList(new ArrayList<>());
    }

    @Override
    public void sync(LockName name, LockMode from, LockMode to) {
        events.add(holder + ".sync " + from + ">" + to);
    }

    @Override
    public long invalidate(LockName name, LockMode from, LockMode to) {
        events.add(holder + ".invalidate " + from + ">" + to);
        return pages;
    }
}
