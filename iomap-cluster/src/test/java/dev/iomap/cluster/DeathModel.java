package dev.iomap.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import dev.iomap.api.IomapFileSystem;
import java.io.IOException;
import java.nio.file.NoSuchFileException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The model of a few files that several gfs2-like nodes change, one of which (the victim) may die, and
 * the rule for what the survivors must find afterwards.
 *
 * <p><b>The rule.</b> A file the victim changed is <i>settled</i> again when it is made durable: the
 * victim fsync'd it, or another node did anything with it (which takes its inode glock, so the victim's
 * demotion committed its journal and wrote the file's data back). For a file not settled when the
 * victim died, the survivors may find any of the states it passed through since it was last settled
 * (the victim's unsynced changes may be partly on the device): it exists if one of them has it; its
 * size is one of theirs; and every byte is that byte of one of them (zero past a state's end). Every
 * other file is exactly as the model says. So every byte the victim fsync'd is there, and nothing older
 * than what it fsync'd comes back.
 */
final class DeathModel {
    /** Each file as the operations left it. */
    final Map<String, byte[]> current = new TreeMap<>();
    /** For files the victim changed since they were last settled: the states since then, oldest first (null: absent). */
    private final Map<String, List<byte[]>> unsettled = new HashMap<>();
    private final int victim;

    /** @param victim the node that will die, or -1 */
    DeathModel(int victim) {
        this.victim = victim;
    }

    /**
     * Node {@code node} did something with {@code name} (any operation that finds or creates it).
     * Called before {@link #changed}.
     */
    void touched(int node, String name) {
        if (node != victim) {
            unsettled.remove(name);
        }
    }

    /** Node {@code node} changed {@code name} to {@code next} (null: unlinked); {@code synced}: and fsync'd it. */
    void changed(int node, String name, byte[] next, boolean synced) {
        byte[] before = current.get(name);
        if (next == null) {
            current.remove(name);
        } else {
            current.put(name, next);
        }
        if (node != victim || synced) {
            unsettled.remove(name);
            return;
        }
        unsettled.computeIfAbsent(name, k -> {
            List<byte[]> states = new ArrayList<>();
            states.add(before);
            return states;
        }).add(next);
    }

    /**
     * Checks every file on a survivor after the victim died, by the rule above, and takes what it found
     * as the model from now on.
     *
     * @param survivor a surviving node
     * @param where for messages
     */
    void checkAfterDeath(IomapFileSystem survivor, String where) throws IOException {
        TreeSet<String> names = new TreeSet<>(current.keySet());
        names.addAll(unsettled.keySet());
        for (String name : names) {
            List<byte[]> allowed = unsettled.getOrDefault(name, java.util.Collections.singletonList(current.get(name)));
            byte[] found;
            try {
                found = Gfs2ZkFenceTest.readAll(survivor, "/" + name);
            } catch (NoSuchFileException e) {
                found = null;
            }
            String what = where + ": /" + name + " after the death (allowed states: " + describe(allowed) + ")";
            if (found == null) {
                assertThat(allowed).as(what + ": absent").containsNull();
                current.remove(name);
                continue;
            }
            List<byte[]> present = allowed.stream().filter(java.util.Objects::nonNull).toList();
            assertThat(present).as(what + ": present").isNotEmpty();
            int size = found.length;
            assertThat(present.stream().map(s -> s.length).toList()).as(what + ": size").contains(size);
            for (int i = 0; i < size; i++) {
                boolean ok = false;
                for (byte[] state : present) {
                    if ((i < state.length ? state[i] : 0) == found[i]) {
                        ok = true;
                        break;
                    }
                }
                if (!ok) {
                    throw new AssertionError(what + ": byte " + i + " is " + found[i] + ", in no allowed state");
                }
            }
            current.put(name, found);
        }
        unsettled.clear();
    }

    private static String describe(List<byte[]> states) {
        return states.stream().map(s -> s == null ? "absent" : s.length + " bytes").toList().toString();
    }

}
