package dev.iomap.it.fuzz;

import dev.iomap.api.FsckReport;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.IomapFileSystems;
import dev.iomap.api.MountOptions;
import dev.iomap.device.BlockDevice;
import dev.iomap.devices.RamBlockDevice;
import java.io.IOException;
import java.io.Serial;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Predicate;

/**
 * Runs one mutant through every check and says what became of it (see {@link ImageFuzzTest} for the
 * rules). Not thread-safe; one instance per mutant.
 */
final class MutantRun {

    /** How the write workload on a mounted mutant ended. */
    enum WorkloadEnd {
        /** The mutant did not mount, or broke a rule first. */
        NOT_RUN,
        /** Every step and the unmount succeeded. */
        COMPLETED,
        /** A step or the unmount failed with a one-line typed error (a shutdown, no space...). */
        STOPPED
    }

    /**
     * @param outcome what became of the mutant
     * @param violation the rule broken, one line, or null
     * @param workload how its workload ended
     */
    record Verdict(Outcome outcome, String violation, WorkloadEnd workload) {
    }

    /** A broken rule, with what was seen. */
    static final class Violation extends Exception {
        @Serial
        private static final long serialVersionUID = 1L;

        Violation(String message) {
            super(message);
        }
    }

    /**
     * What fsck said.
     *
     * @param clean whether it reported nothing but what the pristine image has too
     * @param silent whether it reported nothing at all (for a crash image, fsck reports that it was not
     *     cleanly unmounted: it does not pass it)
     * @param first the first problem beyond the pristine image's, or the one-line refusal
     */
    private record Fsck(boolean clean, boolean silent, String first) {
    }

    private final FuzzTarget target;
    private final BaseImage base;
    private final Mutation mutation;
    private final MountOptions options;
    private final Map<String, List<long[]>> mutatedRanges = new TreeMap<>();
    /** The regular file whose own metadata field was forged, or null. */
    private final String forgedFile;
    private boolean changedInMutatedFile;
    /** Whether a file owning a damaged data block failed its read (an adapter that checksums data). */
    private boolean checksumFailedInMutatedFile;
    /** What the files held before the damage: the pristine tree, or the previous one if rolled back. */
    private FileTree original;
    private boolean changedInForgedFile;
    private WorkloadEnd workloadEnd = WorkloadEnd.NOT_RUN;

    MutantRun(BaseImage base, Mutation mutation) {
        this.target = base.target();
        this.base = base;
        this.mutation = mutation;
        this.original = base.tree();
        this.options = target.mountGeometry().mountOptions(false);
        int blockSize = base.map().blockSize();
        for (long block = mutation.firstBlock(blockSize); block <= mutation.lastBlock(blockSize); block++) {
            for (ImageMap.Owner owner : base.map().ownersOf(block)) {
                long from = owner.fileBlock() * blockSize;
                mutatedRanges.computeIfAbsent(owner.path(), k -> new ArrayList<>())
                        .add(new long[] {from, from + blockSize});
            }
        }
        forgedFile = mutation.forgedOwner() < 0 ? null : base.tree().nodes().entrySet().stream()
                .filter(e -> e.getValue().ino() == mutation.forgedOwner() && !e.getValue().isDirectory())
                .map(Map.Entry::getKey).findFirst().orElse(null);
    }

    Verdict run() {
        try {
            return check();
        } catch (Violation violation) {
            return new Verdict(Outcome.VIOLATION, violation.getMessage(), workloadEnd);
        } catch (IOException | RuntimeException e) {
            return new Verdict(Outcome.VIOLATION, "the fuzzer itself failed: " + describe(e), workloadEnd);
        }
    }

    private Verdict check() throws Violation, IOException {
        RamBlockDevice image = base.image().copy();
        mutation.apply(image);
        Fsck before = fsck(image.copy(), "of the mutant", base.problems());
        BlockDevice device;
        IomapFileSystem fs;
        try {
            device = target.opening(image);
        } catch (Throwable t) {
            return refused(before, "opening the device", typed(t, "opening the device"));
        }
        try {
            fs = IomapFileSystems.mount(target.adapter(), device, options);
        } catch (Throwable t) {
            String message = typed(t, "mount");
            release(device);
            return refused(before, "mount", message);
        }
        if (target.mountRefusesWhatFsckFlags() && !before.clean()) {
            closeAfterViolation(fs);
            release(device);
            throw new Violation("fsck flags the mutant (" + before.first() + ") yet mount accepted it");
        }
        FileTree tree = read(fs, "the mounted mutant");
        String damage = compare(base.tree(), tree, path -> false);
        boolean rolledBack = false;
        if (damage != null && inLastTransaction() && compare(base.previousTree(), tree, path -> false) == null) {
            original = base.previousTree();
            rolledBack = true;
        } else if (damage != null) {
            closeAfterViolation(fs);
            throw new Violation("the mutant mounted and reads back different data: " + damage);
        }
        Outcome outcome = rolledBack ? Outcome.ROLLED_BACK_LAST_TRANSACTION
                : changedInForgedFile ? Outcome.CHANGED_IN_FORGED_FILE_ONLY
                : checksumFailedInMutatedFile ? Outcome.CHECKSUM_FAILED_IN_FLIPPED_FILE_ONLY
                : changedInMutatedFile ? Outcome.DATA_CHANGED_IN_FLIPPED_FILE_ONLY
                : before.clean() ? Outcome.SAME_DATA : Outcome.REFUSED_BY_FSCK;
        String stopped = runWorkload(fs);
        String unmountError = null;
        try {
            fs.close();
        } catch (Throwable t) {
            unmountError = typed(t, "unmount after the workload");
        }
        release(device);
        workloadEnd = stopped == null && unmountError == null ? WorkloadEnd.COMPLETED : WorkloadEnd.STOPPED;
        if (unmountError != null && target.cleanFlag(image) == FuzzTarget.CleanFlag.CLEAN) {
            throw new Violation("unmount failed (" + unmountError + ") yet left the image marked clean");
        }
        afterWorkload(image.copy(), before, stopped, unmountError);
        return new Verdict(outcome, null, workloadEnd);
    }

    /** @return whether every damaged block is one of a crash image's last journal transaction */
    private boolean inLastTransaction() {
        int blockSize = base.map().blockSize();
        for (long block = mutation.firstBlock(blockSize); block <= mutation.lastBlock(blockSize); block++) {
            if (!base.lastTransaction().contains(block)) {
                return false;
            }
        }
        return base.previousTree() != null;
    }

    private Verdict refused(Fsck before, String what, String message) throws Violation {
        if (before.silent()) {
            throw new Violation(what + " refused the mutant (" + message + ") but fsck found nothing");
        }
        return new Verdict(Outcome.REFUSED_AT_MOUNT, null, workloadEnd);
    }

    /** @return null if every step succeeded, else the failed step and its one-line error */
    private String runWorkload(IomapFileSystem fs) throws Violation {
        for (Workload.Step step : base.workload().steps()) {
            try {
                step.action().run(fs);
            } catch (Throwable t) {
                return step.name() + ": " + typed(t, "workload step '" + step.name() + "'");
            }
        }
        return null;
    }

    /**
     * Remounts the image the workload left and checks it: a cleanly unmounted image mounts again; a
     * refused one is one fsck sees; the files the workload did not touch are intact (and the ones it
     * touched are as the model says, if it completed); the remount unmounts; fsck then finds nothing
     * new.
     */
    private void afterWorkload(RamBlockDevice image, Fsck before, String stopped, String unmountError)
            throws Violation, IOException {
        String how = stopped == null && unmountError == null ? "the completed workload"
                : "the workload that stopped (" + (stopped != null ? stopped : unmountError) + ")";
        Fsck after = fsck(image.copy(), "after " + how, List.of());
        BlockDevice device;
        IomapFileSystem fs;
        try {
            device = target.opening(image);
            fs = IomapFileSystems.mount(target.adapter(), device, options);
        } catch (Throwable t) {
            String message = typed(t, "remount after " + how);
            if (unmountError == null) {
                throw new Violation("the image cleanly unmounted after " + how + " is refused at remount: " + message);
            }
            if (after.silent()) {
                throw new Violation("fsck passes the image left by " + how + " but mount refuses it: " + message);
            }
            return;
        }
        boolean completed = workloadEnd == WorkloadEnd.COMPLETED;
        FileTree expected = completed ? base.workload().expected(original) : original;
        Predicate<String> ignored = completed ? path -> false : base.workload().touches();
        FileTree tree = read(fs, "the remount after " + how);
        String damage = compare(expected, tree, ignored);
        if (damage != null) {
            closeAfterViolation(fs);
            throw new Violation("after " + how + " and a remount: " + damage);
        }
        String remountError = null;
        try {
            fs.close();
        } catch (Throwable t) {
            remountError = typed(t, "unmount of the remount");
        }
        release(device);
        if (remountError != null && unmountError == null) {
            throw new Violation("the remount of the image cleanly unmounted after " + how + " failed to unmount: "
                    + remountError);
        }
        Fsck last = fsck(image.copy(), "after " + how + " and a remount", List.of());
        if (before.clean() && !last.clean()) {
            throw new Violation("fsck after " + how + " and a remount reports new damage: " + last.first());
        }
    }

    private FileTree read(IomapFileSystem fs, String what) throws Violation {
        try {
            FileTree tree = FileTree.read(fs);
            for (Map.Entry<String, FileTree.Node> entry : tree.nodes().entrySet()) {
                if (entry.getValue().error() != null) {
                    oneLine(entry.getValue().error(), "reading " + entry.getKey() + " of " + what + " failed and");
                }
            }
            return tree;
        } catch (Violation violation) {
            closeAfterViolation(fs);
            throw violation;
        } catch (Throwable t) {
            String message = typed(t, "reading " + what);
            closeAfterViolation(fs);
            throw new Violation("reading " + what + " failed: " + message);
        }
    }

    /**
     * @param expected problems the pristine image has too (a crash image's "not cleanly unmounted"):
     *     fsck is clean if it reports nothing else
     */
    private Fsck fsck(RamBlockDevice image, String when, List<String> expected) throws Violation {
        BlockDevice device;
        try {
            device = target.opening(image);
        } catch (Throwable t) {
            return new Fsck(false, false, typed(t, "opening the device for fsck " + when));
        }
        try {
            FsckReport report = IomapFileSystems.fsck(target.adapter(), device);
            for (String problem : report.problems()) {
                oneLine(problem, "fsck " + when + " reported");
            }
            List<String> unexpected = report.problems().stream().filter(p -> !expected.contains(p)).toList();
            String first = unexpected.isEmpty() ? null : unexpected.getFirst();
            return new Fsck(unexpected.isEmpty(), report.isClean(), first);
        } catch (Throwable t) {
            return new Fsck(false, false, typed(t, "fsck " + when));
        } finally {
            release(device);
        }
    }

    private void release(BlockDevice device) throws Violation {
        try {
            target.release(device);
        } catch (Throwable t) {
            var _ = typed(t, "releasing the device");
        }
    }

    private static void closeAfterViolation(IomapFileSystem fs) {
        try {
            fs.close();
        } catch (Throwable t) {
            // Already failing with the violation found first.
        }
    }

    /**
     * Compares two trees; a difference is allowed only in the content of a file owning a mutated data
     * block, inside that block (for an adapter that checksums data, also a read of that file that fails
     * with a one-line typed error).
     *
     * @return null if they agree (up to allowed differences), else the first difference
     */
    private String compare(FileTree expected, FileTree actual, Predicate<String> ignored) {
        TreeSet<String> paths = new TreeSet<>(expected.nodes().keySet());
        paths.addAll(actual.nodes().keySet());
        for (String path : paths) {
            if (ignored.test(path)) {
                continue;
            }
            FileTree.Node want = expected.nodes().get(path);
            FileTree.Node found = actual.nodes().get(path);
            if (isForgedFile(path, found) && (want == null || !want.equals(found))) {
                changedInForgedFile = true;
                continue;
            }
            if (want == null) {
                return "unexpected " + path + " (" + found + ")";
            }
            if (found == null) {
                return path + " (" + want + ") is missing";
            }
            if (found.error() != null && !want.isDirectory() && target.checksumsData()
                    && mutatedRanges.containsKey(path)) {
                // A damaged data block of a checksummed extent fails the read of its file (one line, checked
                // when the tree was read).
                checksumFailedInMutatedFile = true;
                continue;
            }
            if (want.type() != found.type() || want.size() != found.size()) {
                return path + ": expected a " + want + ", found a " + found;
            }
            String difference = compareContent(path, want, found);
            if (difference != null) {
                return difference;
            }
        }
        return null;
    }

    /**
     * @return whether {@code path} is the file whose own field was forged: its original path, another
     *     original name of its inode (a hard link), or a new name of its inode (a forged name byte)
     */
    private boolean isForgedFile(String path, FileTree.Node found) {
        FileTree.Node original = base.tree().nodes().get(path);
        return forgedFile != null && (path.equals(forgedFile)
                || (original != null && !original.isDirectory() && original.ino() == mutation.forgedOwner())
                || (found != null && !found.isDirectory() && found.ino() == mutation.forgedOwner()
                && original == null));
    }

    private String compareContent(String path, FileTree.Node want, FileTree.Node found) {
        byte[] expected = want.content();
        byte[] actual = found.content();
        if (expected == null || actual == null) {
            return expected == actual ? null : path + ": one of the two versions was too large to read";
        }
        int from = 0;
        while (true) {
            int at = Arrays.mismatch(expected, from, expected.length, actual, from, actual.length);
            if (at < 0) {
                return null;
            }
            long offset = from + (long) at;
            if (!inMutatedBlock(path, offset)) {
                return path + " differs at offset " + offset + " (expected " + (expected[(int) offset] & 0xff)
                        + ", found " + (actual[(int) offset] & 0xff) + "), outside any mutated block of it";
            }
            changedInMutatedFile = true;
            from = (int) offset + 1;
        }
    }

    private boolean inMutatedBlock(String path, long offset) {
        for (long[] range : mutatedRanges.getOrDefault(path, List.of())) {
            if (offset >= range[0] && offset < range[1]) {
                return true;
            }
        }
        return false;
    }

    /**
     * @return the one-line message of a typed error
     * @throws Violation if it is not an {@link IOException} with a one-line message
     */
    static String typed(Throwable t, String what) throws Violation {
        if (!(t instanceof IOException)) {
            throw new Violation(what + " threw an untyped " + describe(t));
        }
        String message = t.getMessage();
        if (message == null || message.isBlank()) {
            throw new Violation(what + " threw " + t.getClass().getName() + " without a message");
        }
        oneLine(message, what + " threw " + t.getClass().getSimpleName() + " whose message");
        return message;
    }

    private static void oneLine(String message, String what) throws Violation {
        if (message.contains("\n") || message.contains("\r") || message.contains("\tat ")) {
            throw new Violation(what + " is not one line: " + message.replace('\n', '|').replace('\r', '|'));
        }
    }

    /** @return class, message and the top frames, one line */
    static String describe(Throwable t) {
        StringBuilder out = new StringBuilder(t.getClass().getName()).append(": ").append(t.getMessage());
        StackTraceElement[] frames = t.getStackTrace();
        for (int i = 0; i < Math.min(frames.length, 6); i++) {
            out.append(i == 0 ? " at " : " <- ").append(frames[i]);
        }
        if (t.getCause() != null && t.getCause() != t) {
            out.append("; caused by ").append(describe(t.getCause()));
        }
        return out.toString().replace('\n', '|');
    }
}
