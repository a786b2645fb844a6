package dev.iomap.testkit.crash;

import dev.iomap.api.Capability;
import dev.iomap.api.FallocateMode;
import dev.iomap.api.IomapFile;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.testkit.Geometry;
import dev.iomap.testkit.TestData;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.Set;

/**
 * The random workload of a crash test, and its model: creates, writes (buffered and mapped),
 * truncates, fallocate modes, fsync, fdatasync, sync, cache drops, unlinks and renames over a few
 * files in the root directory. Names are never reused, so a name found after a crash says which file
 * it is. Every op is logged as a line for the failure report. Not thread-safe.
 */
final class CrashWorkload {
    private static final int MAX_FILES = 6;
    private static final long MAX_FILE_SIZE = 512 << 10;
    private static final int MAX_WRITE = 64 << 10;

    private final Random random;
    private final Set<Capability> capabilities;
    private final Geometry geometry;
    private final List<TrackedFile> files = new ArrayList<>();
    private final List<IomapFile> handles = new ArrayList<>();
    private final List<String> log = new ArrayList<>();
    private List<TrackedFile> beforeDurabilityPoint;
    private int nextName;
    private long nextFill = 1;

    /**
     * Offsets of writes, truncates and fallocates stay below this: {@link #MAX_FILE_SIZE}, or less so that
     * a write of {@link #MAX_WRITE} bytes still fits the mounted filesystem's file-size limit. Set at the
     * first step (the same for every mount of one adapter, so the op sequence is too).
     */
    private long fileLimit = -1;
    private long maxFileSize;

    CrashWorkload(long seed, Set<Capability> capabilities, Geometry geometry) {
        this.random = new Random(seed);
        this.capabilities = capabilities;
        this.geometry = geometry;
    }

    List<String> log() {
        return log;
    }

    /** @return deep copies of every tracked file's state */
    List<TrackedFile> snapshot() {
        List<TrackedFile> copy = new ArrayList<>();
        for (TrackedFile file : files) {
            copy.add(file.snapshot());
        }
        return copy;
    }

    /**
     * The expectation for an image taken while the last step ran: if the step was an fsync,
     * fdatasync or sync, the state before it (its promise held only once it returned), else the
     * state after it (the step's changes count as not yet durable).
     *
     * @return deep copies of every tracked file's state
     */
    List<TrackedFile> snapshotDuringLastStep() {
        return beforeDurabilityPoint != null ? beforeDurabilityPoint : snapshot();
    }

    /**
     * Runs one random op. A write, truncate or fallocate enters the model even when it fails: a power
     * cut fails the op's remaining device writes, but what it wrote before may already be durable (a
     * journal commit in the middle of the op flushes), so its bytes count as changed, not as durable.
     *
     * @param fs the mounted filesystem
     * @throws IOException from the filesystem (after a power cut, expected)
     */
    void step(IomapFileSystem fs) throws IOException {
        if (fileLimit < 0) {
            maxFileSize = fs.maxFileSize();
            fileLimit = Math.max(1, Math.min(MAX_FILE_SIZE, maxFileSize - MAX_WRITE));
        }
        beforeDurabilityPoint = null;
        List<Integer> linked = new ArrayList<>();
        for (int i = 0; i < files.size(); i++) {
            if (files.get(i).name != null) {
                linked.add(i);
            }
        }
        if (linked.isEmpty() || (linked.size() < MAX_FILES && random.nextInt(8) == 0)) {
            create(fs);
            return;
        }
        int index = linked.get(random.nextInt(linked.size()));
        TrackedFile file = files.get(index);
        IomapFile handle = handles.get(index);
        int choice = random.nextInt(100);
        if (choice < 30) {
            write(file, handle);
        } else if (choice < 36 && has(Capability.RANDOM_WRITE) && file.current.size() > 0) {
            mapWrite(file, handle);
        } else if (choice < 42 && has(Capability.TRUNCATE)) {
            long size = random.nextBoolean()
                    ? random.nextLong(file.current.size() + 1) : random.nextLong(fileLimit);
            log.add("truncate " + file.name + " " + size);
            try {
                handle.truncate(size);
            } finally {
                file.truncated(size);
            }
        } else if (choice < 46 && has(Capability.PUNCH_HOLE) && file.current.size() > 0) {
            long offset = random.nextLong(file.current.size());
            long length = 1L + random.nextInt(MAX_WRITE);
            log.add("punch " + file.name + " " + offset + " " + length);
            try {
                handle.fallocate(FallocateMode.PUNCH_HOLE, offset, length, true);
            } finally {
                file.zeroed(offset, length, true);
            }
        } else if (choice < 50 && has(Capability.ZERO_RANGE)) {
            long offset = random.nextLong(fileLimit);
            long length = 1L + random.nextInt(MAX_WRITE);
            boolean keep = random.nextBoolean();
            log.add("zero " + file.name + " " + offset + " " + length + (keep ? " keep" : " extend"));
            try {
                handle.fallocate(FallocateMode.ZERO_RANGE, offset, length, keep);
            } finally {
                file.zeroed(offset, length, keep);
            }
        } else if (choice < 54 && has(Capability.FALLOCATE)) {
            long offset = random.nextLong(fileLimit);
            long length = 1L + random.nextInt(MAX_WRITE);
            boolean keep = random.nextBoolean();
            log.add("fallocate " + file.name + " " + offset + " " + length + (keep ? " keep" : " extend"));
            try {
                handle.fallocate(FallocateMode.ALLOCATE, offset, length, keep);
            } finally {
                if (!keep) {
                    file.extendedTo(offset + length);
                }
            }
        } else if (choice < 68) {
            log.add("fsync " + file.name);
            beforeDurabilityPoint = snapshot();
            handle.fsync();
            file.allDurable();
        } else if (choice < 74) {
            log.add("fdatasync " + file.name);
            beforeDurabilityPoint = snapshot();
            handle.fdatasync();
            file.dataDurable();
        } else if (choice < 79) {
            log.add("sync");
            beforeDurabilityPoint = snapshot();
            fs.sync();
            for (TrackedFile each : files) {
                each.allDurable();
            }
            files.removeIf(each -> each.name == null);
            handles.removeIf(java.util.Objects::isNull);
        } else if (choice < 83) {
            log.add("dropcache");
            fs.dropCleanCache();
        } else if (choice < 87) {
            log.add("unlink " + file.name);
            handle.close();
            handles.set(index, null);
            fs.unlink("/" + file.name);
            file.name = null;
        } else if (choice < 91 && has(Capability.DIRECTORIES)) {
            String target = "f" + nextName++;
            log.add("rename " + file.name + " " + target);
            fs.rename("/" + file.name, "/" + target);
            file.renamed(target);
        } else {
            write(file, handle);
        }
    }

    private void create(IomapFileSystem fs) throws IOException {
        String name = "f" + nextName++;
        log.add("create " + name);
        IomapFile handle = fs.create("/" + name);
        files.add(new TrackedFile(files.size(), name));
        handles.add(handle);
    }

    private void write(TrackedFile file, IomapFile handle) throws IOException {
        long size = file.current.size();
        long offset = has(Capability.RANDOM_WRITE) && random.nextInt(3) > 0 ? random.nextLong(fileLimit) : size;
        int length = 1 + random.nextInt(random.nextBoolean() ? MAX_WRITE : 2 * geometry.blockSize());
        if (offset + length > maxFileSize && has(Capability.RANDOM_WRITE)) {
            // An append that would pass the file-size limit starts over at the beginning instead.
            offset = 0;
        }
        long fill = nextFill++;
        byte[] data = TestData.pattern(fill, offset, length);
        log.add("write " + file.name + " " + offset + " " + length + " " + fill);
        try {
            handle.write(offset, ByteBuffer.wrap(data));
        } finally {
            file.wrote(offset, data);
        }
    }

    private void mapWrite(TrackedFile file, IomapFile handle) throws IOException {
        long size = file.current.size();
        long offset = random.nextLong(size);
        int length = (int) Math.min(1 + random.nextInt(2 * geometry.blockSize()), size - offset);
        long fill = nextFill++;
        byte[] data = TestData.pattern(fill, offset, length);
        log.add("mapwrite " + file.name + " " + offset + " " + length + " " + fill);
        try {
            handle.map().store(offset, ByteBuffer.wrap(data));
        } finally {
            file.wrote(offset, data);
        }
    }

    private boolean has(Capability capability) {
        return capabilities.contains(capability);
    }

    /** A clean unmount returned: everything is durable, unlinked files are gone. */
    void unmounted() {
        for (TrackedFile each : files) {
            each.allDurable();
        }
        files.removeIf(each -> each.name == null);
    }

    /** Closes the open files, ignoring errors (the device may be dead). */
    void closeAll() {
        for (int i = 0; i < handles.size(); i++) {
            IomapFile handle = handles.set(i, null);
            if (handle != null) {
                try {
                    handle.close();
                } catch (IOException | RuntimeException ignored) {
                    // After a power cut closing may fail; nothing to keep.
                }
            }
        }
    }
}
