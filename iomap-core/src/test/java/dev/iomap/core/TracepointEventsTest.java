package dev.iomap.core;

import static org.assertj.core.api.Assertions.assertThat;

import dev.iomap.api.PageCacheOptions;
import dev.iomap.core.trace.AddToIoendEvent;
import dev.iomap.core.trace.CoreTraceEvents;
import dev.iomap.core.trace.InvalidateFolioEvent;
import dev.iomap.core.trace.IterDstmapEvent;
import dev.iomap.core.trace.IterEvent;
import dev.iomap.core.trace.ReadpageEvent;
import dev.iomap.core.trace.WritebackFolioEvent;
import dev.iomap.core.trace.ZeroIterEvent;
import dev.iomap.devices.RamBlockDevice;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.text.ParseException;
import java.util.List;
import jdk.jfr.Configuration;
import jdk.jfr.EventType;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The kernel's iomap tracepoints as JFR events (issue 41 item 1): each is emitted where the kernel
 * traces, with the tracepoint's fields, and none is recorded unless a recording enables it by name.
 */
class TracepointEventsTest {
    private static final long DEVICE = 64L << 20;
    private static final CopySource FILL = (MemorySegment dst, long offset, int length) -> {
        dst.asSlice(offset, length).fill((byte) 0x5a);
        return length;
    };

    @TempDir
    Path dir;

    private final RamBlockDevice device = new RamBlockDevice(4096, DEVICE);

    private CachedInode inode(IomapCache cache) {
        BlockDeviceMapping mapping = new BlockDeviceMapping(device);
        return cache.addInode(5, 4096, 0, DEVICE, mapping, mapping);
    }

    private static IomapCache cache(RamBlockDevice device) {
        return new IomapCache(PageCacheOptions.builder().pageSize(4096).maxFolioOrder(0).build(), device);
    }

    @Test
    void writebackEmitsOneWritebackFolioPerFolioAndOneAddToIoendPerDirtyRun() throws Exception {
        List<RecordedEvent> events;
        try (IomapCache cache = cache(device)) {
            CachedInode file = inode(cache);
            file.write(0, FILL, 8192);
            events = record(List.of(WritebackFolioEvent.NAME, AddToIoendEvent.NAME),
                    () -> file.writeback(0, Long.MAX_VALUE, true));
        }

        assertThat(events).extracting(e -> e.getEventType().getName() + " " + fields(e)).containsExactly(
                "iomap.iomap_writeback_folio ino=5 size=8192 offset=0 length=4096 order=0",
                "iomap.iomap_add_to_ioend ino=5 pos=0 dirtyLen=4096 addr=0 offset=0 length=" + DEVICE
                        + " type=MAPPED flags=",
                "iomap.iomap_writeback_folio ino=5 size=8192 offset=4096 length=4096 order=0",
                "iomap.iomap_add_to_ioend ino=5 pos=4096 dirtyLen=4096 addr=4096 offset=4096 length=" + (DEVICE - 4096)
                        + " type=MAPPED flags=");
        assertThat(events.get(0).getEventType().getLabel()).isEqualTo("iomap_writeback_folio");
    }

    @Test
    void aWriteIteratesOnceWithItsMappingAndEndsWithTheBytesItProcessed() throws Exception {
        List<RecordedEvent> events;
        try (IomapCache cache = cache(device)) {
            CachedInode file = inode(cache);
            events = record(List.of(IterEvent.NAME, IterDstmapEvent.NAME), () -> file.write(0, FILL, 6000));
        }

        // length: what is left of the mapping clipped to the request (the kernel's iomap_length), 0 at the end
        assertThat(events).extracting(e -> e.getEventType().getName() + " " + fields(e)).containsExactly(
                "iomap.iomap_iter ino=5 pos=0 length=0 status=0 flags=WRITE",
                "iomap.iomap_iter_dstmap ino=5 addr=0 offset=0 length=" + DEVICE + " type=MAPPED flags=",
                "iomap.iomap_iter ino=5 pos=6000 length=0 status=6000 flags=WRITE");
    }

    @Test
    void readZeroAndInvalidateEmitTheirTracepoints() throws Exception {
        List<RecordedEvent> events;
        try (IomapCache cache = cache(device)) {
            CachedInode file = inode(cache);
            file.write(0, FILL, 4096);
            file.writeback(0, Long.MAX_VALUE, true);
            file.invalidateCache();
            events = record(List.of(ReadpageEvent.NAME, ZeroIterEvent.NAME, InvalidateFolioEvent.NAME), () -> {
                file.read(0, ByteBuffer.allocate(100));
                file.zeroRange(100, 50);
                file.truncate(0, () -> { });
            });
        }

        assertThat(events).extracting(e -> e.getEventType().getName() + " " + fields(e)).containsExactly(
                "iomap.iomap_readpage ino=5 nrPages=1",
                "iomap.iomap_zero_iter ino=5 size=4096 offset=100 length=50",
                // truncate sets the size before it drops the cache, as truncate_setsize does
                "iomap.iomap_invalidate_folio ino=5 size=0 offset=0 length=4096 order=0");
    }

    @Test
    void noEventIsRecordedByTheJdksOwnSettings() throws Exception {
        Path file = dir.resolve("default.jfr");
        try (IomapCache cache = cache(device); Recording recording = new Recording(Configuration.getConfiguration("default"))) {
            CachedInode inode = inode(cache);
            recording.start();
            inode.write(0, FILL, 8192);
            inode.writeback(0, Long.MAX_VALUE, true);
            recording.stop();
            recording.dump(file);
        }

        List<String> names = CoreTraceEvents.TYPES.stream().map(t -> EventType.getEventType(t).getName()).toList();
        assertThat(names).hasSize(CoreTraceEvents.TYPES.size()).allMatch(name -> name.startsWith("iomap.iomap_"));
        assertThat(RecordingFile.readAllEvents(file)).extracting(e -> e.getEventType().getName())
                .doesNotContainAnyElementsOf(names);
        assertThat(CoreTraceEvents.TYPES).allMatch(t -> !EventType.getEventType(t).isEnabled());
    }

    /** Runs {@code work} under a recording that enables only {@code names}; returns their events in order. */
    private List<RecordedEvent> record(List<String> names, IoAction work) throws IOException, ParseException {
        Path file = dir.resolve("events.jfr");
        try (Recording recording = new Recording()) {
            names.forEach(name -> recording.enable(name));
            recording.start();
            work.run();
            recording.stop();
            recording.dump(file);
        }
        return RecordingFile.readAllEvents(file).stream().filter(e -> names.contains(e.getEventType().getName()))
                .sorted(java.util.Comparator.comparing(RecordedEvent::getStartTime)).toList();
    }

    /** @return the event's tracepoint fields as {@code name=value}, in declaration order */
    private static String fields(RecordedEvent event) {
        StringBuilder text = new StringBuilder();
        event.getFields().stream().filter(f -> !List.of("startTime", "duration", "eventThread", "stackTrace")
                .contains(f.getName())).sorted(java.util.Comparator.comparing(f -> f.getName().equals("order")))
                .forEach(f -> text.append(text.isEmpty() ? "" : " ").append(f.getName()).append('=')
                        .append(text(event, f.getName())));
        return text.toString();
    }

    private static String text(RecordedEvent event, String field) {
        Object value = event.getValue(field);
        return value == null ? "" : value.toString();
    }

    @FunctionalInterface
    private interface IoAction {
        void run() throws IOException;
    }
}
