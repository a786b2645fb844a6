package dev.iomap.cli.observe;

import dev.iomap.core.trace.CoreTraceEvents;
import dev.iomap.spi.trace.AdapterTraceEvents;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Pattern;
import jdk.jfr.Event;
import jdk.jfr.EventType;
import jdk.jfr.FlightRecorder;

/**
 * Every trace event a mount may emit, and the choice of some by name as {@code trace-cmd -e} makes it: a
 * comma-separated list of globs ({@code *}, {@code ?}), each matched against {@code SYSTEM:NAME} (e.g.
 * {@code iomap:iomap_writeback_folio}, {@code gfs2:*}) and against the bare {@code NAME}
 * ({@code iomap_*}).
 */
public final class TraceEvents {
    private TraceEvents() {
    }

    /** @return the event classes: the engine's, then the adapters' */
    public static List<Class<? extends Event>> all() {
        List<Class<? extends Event>> all = new ArrayList<>(CoreTraceEvents.TYPES);
        all.addAll(AdapterTraceEvents.TYPES);
        return all;
    }

    /**
     * Registers every event class with the flight recorder (so a stream can enable one that was never
     * emitted yet) and returns the JFR names of those {@code globs} selects.
     *
     * @param globs the selection; null or blank for all
     * @return JFR event names such as {@code iomap.iomap_writeback_folio}
     * @throws IllegalArgumentException if the selection matches no event
     */
    public static List<String> select(String globs) {
        List<String> names = new ArrayList<>();
        for (Class<? extends Event> type : all()) {
            FlightRecorder.register(type);
            String name = EventType.getEventType(type).getName();
            if (matches(globs, name)) {
                names.add(name);
            }
        }
        if (names.isEmpty()) {
            throw new IllegalArgumentException("no trace event matches '" + globs + "'; the events: "
                    + String.join(", ", all().stream().map(t -> displayName(EventType.getEventType(t).getName())).toList()));
        }
        return names;
    }

    /**
     * @param globs a comma-separated list of globs; null or blank for all
     * @param jfrName a JFR event name, {@code SYSTEM.NAME}
     * @return whether one of the globs matches {@code SYSTEM:NAME} or {@code NAME}
     */
    static boolean matches(String globs, String jfrName) {
        if (globs == null || globs.isBlank()) {
            return true;
        }
        String display = displayName(jfrName);
        String bare = display.substring(display.indexOf(':') + 1);
        for (String glob : globs.split(",")) {
            Pattern pattern = toPattern(glob.strip());
            if (pattern.matcher(display).matches() || pattern.matcher(bare).matches()) {
                return true;
            }
        }
        return false;
    }

    /** @return {@code SYSTEM:NAME} for the JFR name {@code SYSTEM.NAME}, as trace-cmd names it */
    static String displayName(String jfrName) {
        int dot = jfrName.indexOf('.');
        return dot < 0 ? jfrName : jfrName.substring(0, dot) + ":" + jfrName.substring(dot + 1);
    }

    private static Pattern toPattern(String glob) {
        StringBuilder regex = new StringBuilder();
        for (char c : glob.toLowerCase(Locale.ROOT).toCharArray()) {
            switch (c) {
                case '*' -> regex.append(".*");
                case '?' -> regex.append('.');
                default -> regex.append(Pattern.quote(String.valueOf(c)));
            }
        }
        return Pattern.compile(regex.toString(), Pattern.CASE_INSENSITIVE);
    }
}
