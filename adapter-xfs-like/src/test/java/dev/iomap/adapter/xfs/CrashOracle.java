package dev.iomap.adapter.xfs;

import dev.iomap.device.BlockDevice;
import dev.iomap.api.IomapFile;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.IomapFileSystems;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;

/**
 * What a power cut may leave of each file of a model check: a file fsynced and unchanged since must be
 * exactly as it was; any other file may show, block by block, any version it had since its last fsync,
 * or zeroes, but never a block of the device that was never written (the device is poisoned before
 * mkfs). Not thread-safe.
 */
final class CrashOracle {
    private static final int MAX_VERSIONS = 64;

    private final int blockSize;
    private final byte[][] synced;
    private final List<List<byte[]>> history = new ArrayList<>();

    CrashOracle(int files, int blockSize) {
        this.blockSize = blockSize;
        this.synced = new byte[files][];
        for (int i = 0; i < files; i++) {
            history.add(new ArrayList<>(List.of(new byte[0])));
            synced[i] = new byte[0];
        }
    }

    /** File {@code f} is durable as {@code content}. */
    void durable(int f, byte[] content) {
        synced[f] = content.clone();
        history.set(f, new ArrayList<>(List.of(synced[f])));
    }

    /** File {@code f} changed to {@code content} (not yet durable). */
    void changed(int f, byte[] content) {
        synced[f] = null;
        List<byte[]> versions = history.get(f);
        if (versions != null) {
            versions.add(content.clone());
            if (versions.size() > MAX_VERSIONS) {
                history.set(f, null);
            }
        }
    }

    /**
     * Mounts a crash image and checks every file, then fsck; closes the image.
     *
     * @param inFlight files an operation was changing when the power went: not held to their last fsync
     */
    void check(BlockDevice image, Set<Integer> inFlight) throws Exception {
        try (IomapFileSystem crashed = IomapFileSystems.mount("xfs-like", image, XfsFixture.mountOptions())) {
            for (int i = 0; i < synced.length; i++) {
                try (IomapFile file = crashed.open("/f" + i)) {
                    byte[] content = XfsFixture.readAll(file);
                    if (synced[i] != null && !inFlight.contains(i)) {
                        ModelCheckTest.assertSame(content, synced[i], "crashed copy of fsynced f" + i);
                    }
                    checkBlocks(i, content);
                }
            }
        }
        XfsFixture.assertClean(image);
        image.close();
    }

    private void checkBlocks(int f, byte[] content) {
        for (int at = 0; at < content.length; at++) {
            if (content[at] == XfsFixture.POISON) {
                throw new AssertionError("crashed copy of f" + f + " shows never-written device bytes at " + at);
            }
        }
        List<byte[]> versions = history.get(f);
        if (versions == null) {
            return;
        }
        byte[] zero = new byte[blockSize];
        for (int from = 0; from < content.length; from += blockSize) {
            int to = Math.min(content.length, from + blockSize);
            boolean seen = Arrays.equals(content, from, to, zero, 0, to - from);
            for (int v = 0; v < versions.size() && !seen; v++) {
                seen = sameBlock(content, from, to, versions.get(v));
            }
            if (!seen) {
                throw new AssertionError("crashed copy of f" + f + ": block at " + from
                        + " matches none of its " + versions.size() + " versions since its last fsync"
                        + whereElse(content, from, to));
            }
        }
    }

    /** Whether {@code content[from, to)} equals the version's bytes there, the version read as zero past its end. */
    private static boolean sameBlock(byte[] content, int from, int to, byte[] version) {
        int inside = Math.max(from, Math.min(to, version.length));
        if (inside > from && !Arrays.equals(content, from, inside, version, from, inside)) {
            return false;
        }
        for (int at = inside; at < to; at++) {
            if (content[at] != 0) {
                return false;
            }
        }
        return true;
    }

    /** For a failure message: which file version holds the bytes of a block, if any. */
    private String whereElse(byte[] content, int from, int to) {
        for (int g = 0; g < history.size(); g++) {
            List<byte[]> versions = history.get(g);
            if (versions == null) {
                continue;
            }
            for (int v = 0; v < versions.size(); v++) {
                byte[] version = versions.get(v);
                for (int at = 0; at + (to - from) <= version.length; at += blockSize) {
                    if (Arrays.equals(content, from, to, version, at, at + to - from)) {
                        return "; the bytes are those of f" + g + " version " + v + " at " + at;
                    }
                }
            }
        }
        return "; the bytes are in no file version";
    }
}
