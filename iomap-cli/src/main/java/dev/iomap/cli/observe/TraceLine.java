package dev.iomap.cli.observe;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import jdk.jfr.Timespan;
import jdk.jfr.ValueDescriptor;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedThread;

/**
 * One trace event as one line, in trace-cmd's layout: the thread and its id, seconds since the mount
 * started, the tracepoint's name and its fields as the kernel's {@code TP_printk} prints them (file
 * offsets, lengths, sizes, addresses and inode numbers in hexadecimal), e.g.
 * <pre>  iomap-flusher-31    [000]    12.345678: iomap_writeback_folio: ino 0x2 size 0x100000 offset 0x0 length 0x10000 order 4</pre>
 */
public final class TraceLine {
    /** Fields the kernel prints in hexadecimal. */
    private static final Set<String> HEX = Set.of("ino", "size", "offset", "length", "addr", "pos", "dirty_len",
            "done_before");
    /** Fields every event has that are not the tracepoint's. */
    private static final Set<String> HEADER = Set.of("startTime", "duration", "eventThread", "stackTrace");

    private TraceLine() {
    }

    /**
     * @param event a recorded event of a trace type
     * @param since when the mount started: timestamps are seconds from here
     * @return the line
     */
    public static String format(RecordedEvent event, Instant since) {
        StringBuilder line = new StringBuilder();
        RecordedThread thread = event.getThread();
        String task = thread == null ? "<unknown>" : thread.getJavaName();
        long tid = thread == null ? 0 : thread.getJavaThreadId();
        double seconds = Duration.between(since, event.getStartTime()).toNanos() / 1e9;
        line.append(String.format(Locale.ROOT, "%16s-%-7d [000] %12.6f: %s:", task, tid, seconds,
                event.getEventType().getLabel()));
        // JFR lists a subclass's own fields before the inherited ones: put the glock's identity first and
        // the folio's order last, as the kernel's TP_printk does.
        List<ValueDescriptor> fields = new ArrayList<>(event.getFields());
        fields.removeIf(field -> HEADER.contains(field.getName()));
        fields.sort(Comparator.comparingInt(TraceLine::place));
        for (ValueDescriptor field : fields) {
            String label = field.getLabel() != null ? field.getLabel() : field.getName();
            line.append(' ').append(label).append(' ').append(value(event, field, label));
        }
        return line.toString();
    }

    /** @return 0 for the fields that say which glock, 2 for a folio's order, 1 for the rest */
    private static int place(ValueDescriptor field) {
        return switch (field.getName()) {
            case "node", "glType", "glNumber" -> 0;
            case "order" -> 2;
            default -> 1;
        };
    }

    private static String value(RecordedEvent event, ValueDescriptor field, String label) {
        Object value = event.getValue(field.getName());
        if (field.getAnnotation(Timespan.class) != null && value instanceof Long nanos) {
            return String.format(Locale.ROOT, "%.3fms", nanos / 1e6);
        }
        if (value instanceof Long number && HEX.contains(label)) {
            return number < 0 ? Long.toString(number) : "0x" + Long.toHexString(number);
        }
        if (value instanceof String text && text.isEmpty()) {
            return "0";
        }
        return String.valueOf(value);
    }

    /**
     * @param event a recorded event
     * @param inode an inode number
     * @return whether the event is about that inode: its {@code ino} or {@code inode} field, or an inode's
     *     glock ({@code gltype} INODE or IOPEN, {@code glnum})
     */
    public static boolean isAbout(RecordedEvent event, long inode) {
        if (event.hasField("ino")) {
            return event.getLong("ino") == inode;
        }
        if (event.hasField("inode")) {
            return event.getLong("inode") == inode;
        }
        if (event.hasField("glType")) {
            String type = event.getString("glType");
            return ("INODE".equals(type) || "IOPEN".equals(type)) && event.getLong("glNumber") == inode;
        }
        return false;
    }
}
