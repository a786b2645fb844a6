package dev.iomap.testkit.crash;

import dev.iomap.testkit.fsx.FileModel;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * What a crash may leave of one file: the state the last fsync (or sync) made durable, and everything
 * that happened since, which may or may not have reached the device.
 *
 * <p>After a power cut, a byte not changed since the durable point must hold its durable value (zero
 * past the durable size); a byte changed since may hold its durable value, zero, or any value written
 * to it since. The size may be anything between the smallest and largest sizes since the durable
 * point (sizes move as writeback completes), and exactly the durable size if nothing changed.
 */
final class TrackedFile {
    /** One write since the durable point. */
    record Written(long offset, byte[] data) {
    }

    final int id;
    String name;
    FileModel current = new FileModel();
    FileModel durable;
    String durableName;
    Set<String> namesSince = new LinkedHashSet<>();
    List<Written> writesSince = new ArrayList<>();
    Ranges touched = new Ranges();
    long minSize;
    long maxSize;
    boolean changedSince;

    TrackedFile(int id, String name) {
        this.id = id;
        this.name = name;
        namesSince.add(name);
    }

    void wrote(long offset, byte[] data) {
        current.write(offset, data);
        writesSince.add(new Written(offset, data));
        touched.add(offset, offset + data.length);
        sized();
    }

    void truncated(long size) {
        long old = current.size();
        current.truncate(size);
        touched.add(Math.min(old, size), Math.max(old, size));
        sized();
    }

    void zeroed(long offset, long length, boolean keepSize) {
        current.zero(offset, length);
        touched.add(offset, Math.min(offset + length, current.size()));
        if (!keepSize && offset + length > current.size()) {
            current.truncate(offset + length);
        }
        sized();
    }

    void extendedTo(long size) {
        if (size > current.size()) {
            current.truncate(size);
            sized();
        }
    }

    private void sized() {
        changedSince = true;
        minSize = Math.min(minSize, current.size());
        maxSize = Math.max(maxSize, current.size());
    }

    /** fdatasync returned: data and size are durable. */
    void dataDurable() {
        durable = current.copy();
        writesSince.clear();
        touched.clear();
        minSize = maxSize = current.size();
        changedSince = false;
    }

    /** fsync or sync returned: data, size and the name are durable. */
    void allDurable() {
        dataDurable();
        durableName = name;
        namesSince.clear();
        if (name != null) {
            namesSince.add(name);
        }
    }

    void renamed(String newName) {
        name = newName;
        namesSince.add(newName);
    }

    /** @return every name the file may have after a crash */
    Set<String> candidateNames() {
        Set<String> names = new LinkedHashSet<>(namesSince);
        if (durableName != null) {
            names.add(durableName);
        }
        return names;
    }

    /** @return whether a crash must leave the file under its durable name */
    boolean mustExist() {
        return durableName != null && durableName.equals(name) && namesSince.equals(Set.of(durableName));
    }

    /**
     * Checks what a crash left of this file.
     *
     * @param actual the whole file as read after the crash
     * @return null if acceptable, else what is wrong
     */
    String check(byte[] actual) {
        FileModel base = durable != null ? durable : new FileModel();
        long size = actual.length;
        if (!changedSince && size != base.size()) {
            return "size " + size + ", but fsync made size " + base.size() + " durable and nothing changed since";
        }
        long low = Math.min(minSize, base.size());
        long high = Math.max(maxSize, base.size());
        if (changedSince && (size < low || size > high)) {
            return "size " + size + " is outside [" + low + ", " + high + "], the sizes the file had since its"
                    + " last fsync";
        }
        byte[] expected = base.bytes(0, actual.length);
        BitSet changed = touched.bits(actual.length);
        for (int i = 0; i < actual.length; i++) {
            if (actual[i] == expected[i] || (changed.get(i) && (actual[i] == 0 || writtenSince(i, actual[i])))) {
                continue;
            }
            return String.format("byte at %d (0x%x) is %02x; %s %02x%s", i, i, actual[i] & 0xff,
                    changed.get(i) ? "changed since the last fsync; durable value" : "not changed since the last"
                    + " fsync; must be", expected[i] & 0xff,
                    changed.get(i) ? ", zero, or a value written since" : "");
        }
        return null;
    }

    private boolean writtenSince(int offset, byte value) {
        for (Written write : writesSince) {
            long at = offset - write.offset();
            if (at >= 0 && at < write.data().length && write.data()[(int) at] == value) {
                return true;
            }
        }
        return false;
    }

    /** @return a deep copy of the state, for the expectation of one crash image */
    TrackedFile snapshot() {
        TrackedFile copy = new TrackedFile(id, name);
        copy.current = current.copy();
        copy.durable = durable == null ? null : durable.copy();
        copy.durableName = durableName;
        copy.namesSince = new LinkedHashSet<>(namesSince);
        copy.writesSince = new ArrayList<>(writesSince);
        copy.touched = touched.copy();
        copy.minSize = minSize;
        copy.maxSize = maxSize;
        copy.changedSince = changedSince;
        return copy;
    }
}
