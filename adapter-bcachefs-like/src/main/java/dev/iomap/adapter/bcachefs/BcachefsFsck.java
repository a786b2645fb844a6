package dev.iomap.adapter.bcachefs;

import dev.iomap.adapter.bcachefs.store.BKey;
import dev.iomap.adapter.bcachefs.store.KeyStore;
import dev.iomap.adapter.bcachefs.store.KeyValue;
import dev.iomap.adapter.bcachefs.store.RefRun;
import dev.iomap.adapter.support.BlockRange;
import dev.iomap.adapter.support.ns.XattrSet;
import dev.iomap.api.FileType;
import dev.iomap.device.BlockDevice;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * The filesystem's checks on an opened (read-only) store, after the store's own checks of its tree:
 * inodes against directory entries (link counts, parents, entry targets and types), extents against
 * their owners' sizes and against the reference counts of the blocks they hold, blobs that decode;
 * and with {@code scrub}, every checksummed or compressed data extent read and verified.
 */
final class BcachefsFsck {
    private final KeyStore store;
    private final BlockDevice device;
    private final int bs;
    private final List<String> problems = new ArrayList<>();
    private final Map<Long, InodeRecord> inodes = new TreeMap<>();
    private final Set<Long> orphans = new HashSet<>();
    private final Set<Long> truncating = new HashSet<>();
    private final Map<Long, Long> liveBlocks = new HashMap<>();
    /** The physical range of every extent key: each holds one reference on each of its blocks. */
    private final List<BlockRange> held = new ArrayList<>();
    /** Distinct data blocks some extent key holds (known after the checks ran). */
    long heldBlocks;

    private final List<RefRun> refRuns;

    /**
     * @param store the store, opened read-only
     * @param device its device (data extents are read from it for scrub)
     * @param refRuns the store's reference counts
     */
    BcachefsFsck(KeyStore store, BlockDevice device, List<RefRun> refRuns) {
        this.store = store;
        this.refRuns = refRuns;
        this.device = device;
        this.bs = store.blockSize();
    }

    private List<KeyValue> all(int btree) throws IOException {
        return store.scan(new BKey(btree, 0, 0), new BKey(btree + 1, 0, 0), Integer.MAX_VALUE);
    }

    /**
     * Runs the checks.
     *
     * @param scrub whether to read and verify every data extent
     * @return the problems found
     * @throws IOException if the device fails or a node cannot be read
     */
    List<String> check(boolean scrub) throws IOException {
        Config config = store.get(Keys.config()).map(v -> {
            try {
                return Config.decode(v);
            } catch (IOException e) {
                problems.add(e.getMessage());
                return null;
            }
        }).orElse(null);
        if (config == null && problems.isEmpty()) {
            problems.add("the config key is missing");
        }
        for (KeyValue kv : all(Keys.INODES)) {
            try {
                inodes.put(kv.key().inode(), InodeRecord.decode(kv.key().inode(), kv.value()));
            } catch (IOException e) {
                problems.add(e.getMessage());
            }
        }
        checkKeyPositions();
        checkCounters();
        for (KeyValue kv : all(Keys.PENDING)) {
            (kv.key().offset() == Keys.PENDING_ORPHAN ? orphans : truncating).add(kv.key().inode());
        }
        InodeRecord root = inodes.get(Keys.ROOT_INO);
        if (root == null || root.type != FileType.DIRECTORY) {
            problems.add("the root directory (inode " + Keys.ROOT_INO + ") is missing");
        }
        checkNames();
        checkBlobs();
        checkExtents(scrub);
        checkBlockCounts();
        checkRefs();
        return problems;
    }

    /**
     * Keys sit where the format puts them: the config's two keys, inodes and pending keys at their
     * documented offsets, nothing in btrees the format does not use (a forged offset would hide an
     * inode from every lookup while a scan still sees it).
     */
    private void checkKeyPositions() throws IOException {
        for (KeyValue kv : all(Keys.CONFIG)) {
            BKey k = kv.key();
            if (k.inode() != 0 || (k.offset() != Keys.config().offset() && k.offset() != Keys.nextIno().offset())) {
                problems.add("config key " + k + " is not one the format defines");
            }
        }
        for (KeyValue kv : all(Keys.INODES)) {
            if (kv.key().offset() != 0) {
                problems.add("inode key " + kv.key() + " has offset " + kv.key().offset() + ", not 0");
            }
        }
        for (KeyValue kv : all(Keys.PENDING)) {
            long what = kv.key().offset();
            if ((what != Keys.PENDING_ORPHAN && what != Keys.PENDING_TRUNCATE) || kv.value().length != 0) {
                problems.add("pending key " + kv.key() + " is malformed (" + kv.value().length + " value bytes)");
            }
        }
        BKey last = new BKey(BKey.MAX_BTREE, -1L, -1L);
        List<KeyValue> unknown = store.scan(new BKey(Keys.PENDING + 1, 0, 0), last, 1);
        if (!unknown.isEmpty() || store.get(last).isPresent()) {
            BKey k = unknown.isEmpty() ? last : unknown.getFirst().key();
            problems.add("key " + k + " is in btree " + k.btree() + ", which the format does not use");
        }
    }

    private void checkCounters() throws IOException {
        byte[] counters = store.get(Keys.nextIno()).orElse(null);
        if (counters == null || counters.length != 16) {
            problems.add("the inode counter key is missing or malformed");
            return;
        }
        java.nio.ByteBuffer b = java.nio.ByteBuffer.wrap(counters).order(java.nio.ByteOrder.LITTLE_ENDIAN);
        long next = b.getLong();
        long count = b.getLong();
        if (count != inodes.size()) {
            problems.add("the inode counter says " + count + " inodes, the inode tree has " + inodes.size());
        }
        for (long ino : inodes.keySet()) {
            if (ino >= next) {
                problems.add("inode " + ino + " is at or past the next inode number " + next);
            }
        }
    }

    private void checkNames() throws IOException {
        Map<Long, Integer> names = new HashMap<>();
        Map<Long, Integer> subdirs = new HashMap<>();
        Map<Long, Long> parentOf = new HashMap<>();
        for (KeyValue kv : all(Keys.DIRENTS)) {
            Dirents.Dirent d;
            try {
                d = Dirents.decode(kv);
            } catch (IOException e) {
                problems.add(e.getMessage());
                continue;
            }
            long dir = kv.key().inode();
            InodeRecord owner = inodes.get(dir);
            if (owner == null || owner.type != FileType.DIRECTORY) {
                problems.add("directory entry '" + d.name() + "' is in inode " + dir + ", which is not a directory");
            }
            InodeRecord target = inodes.get(d.ino());
            if (target == null) {
                problems.add("directory entry '" + d.name() + "' in directory " + dir + " points at missing inode "
                        + d.ino());
                continue;
            }
            if (target.type != d.type()) {
                problems.add("directory entry '" + d.name() + "' in directory " + dir + " says " + d.type()
                        + ", inode " + d.ino() + " is a " + target.type);
            }
            names.merge(d.ino(), 1, Integer::sum);
            if (target.type == FileType.DIRECTORY) {
                subdirs.merge(dir, 1, Integer::sum);
                parentOf.put(d.ino(), dir);
            }
        }
        for (InodeRecord r : inodes.values()) {
            int n = names.getOrDefault(r.ino, 0);
            if (r.type == FileType.DIRECTORY) {
                int want = 2 + subdirs.getOrDefault(r.ino, 0);
                if (r.nlink != want) {
                    problems.add("directory " + r.ino + " has link count " + r.nlink + ", expected " + want);
                }
                if (r.ino != Keys.ROOT_INO && (n != 1 || parentOf.get(r.ino) != r.parent)) {
                    problems.add("directory " + r.ino + " has " + n + " names and parent " + r.parent);
                }
            } else if (r.nlink != n) {
                problems.add("inode " + r.ino + " has link count " + r.nlink + " but " + n + " names");
            } else if (n == 0 && !orphans.contains(r.ino)) {
                problems.add("inode " + r.ino + " has no name and is not a pending orphan");
            }
        }
        checkTree(names, parentOf);
        for (long ino : orphans) {
            if (!inodes.containsKey(ino)) {
                problems.add("pending orphan " + ino + " has no inode");
            }
        }
        for (long ino : truncating) {
            if (!inodes.containsKey(ino)) {
                problems.add("pending truncate of " + ino + " has no inode");
            }
        }
    }

    /**
     * The directories form a tree under the root: no entry names the root, and the chain of parents
     * (the directory holding each one's entry) of every directory reaches the root, so a walk of the
     * namespace never loops.
     *
     * @param names names per inode
     * @param parentOf the directory holding each directory's (last seen) entry
     */
    private void checkTree(Map<Long, Integer> names, Map<Long, Long> parentOf) {
        int rootNames = names.getOrDefault(Keys.ROOT_INO, 0);
        if (rootNames > 0) {
            problems.add("the root directory (inode " + Keys.ROOT_INO + ") is the target of "
                    + (rootNames == 1 ? "a directory entry" : rootNames + " directory entries") + ": a cycle");
        }
        Set<Long> reachable = new HashSet<>(Set.of(Keys.ROOT_INO));
        Set<Long> unreachable = new HashSet<>();
        for (long dir : parentOf.keySet()) {
            List<Long> walked = new ArrayList<>();
            Set<Long> seen = new HashSet<>();
            Long at = dir;
            while (at != null && !reachable.contains(at) && !unreachable.contains(at) && seen.add(at)) {
                walked.add(at);
                at = parentOf.get(at);
            }
            boolean reaches = at != null && reachable.contains(at);
            (reaches ? reachable : unreachable).addAll(walked);
            if (!reaches && at != null && seen.contains(at)) {
                problems.add("directory " + dir + " is not reachable from the root: its chain of parents loops at"
                        + " directory " + at);
            }
        }
    }

    private void checkBlobs() throws IOException {
        for (InodeRecord r : inodes.values()) {
            byte[] xattrs = blob(Keys.XATTRS, r.ino);
            if (xattrs.length > 0) {
                try {
                    XattrSet.decode(xattrs, "extended attributes of inode " + r.ino);
                } catch (IOException e) {
                    problems.add(e.getMessage());
                }
            }
            if (r.type == FileType.SYMLINK) {
                byte[] target = blob(Keys.SYMLINKS, r.ino);
                if (target.length != r.size || target.length == 0) {
                    problems.add("symbolic link " + r.ino + " has a target of " + target.length + " bytes, size "
                            + r.size);
                }
            }
        }
    }

    private byte[] blob(int btree, long ino) throws IOException {
        List<KeyValue> chunks = store.scan(Keys.first(btree, ino), Keys.past(btree, ino), Integer.MAX_VALUE);
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        for (int i = 0; i < chunks.size(); i++) {
            if (chunks.get(i).key().offset() != i) {
                problems.add("inode " + ino + " btree " + btree + ": chunk " + i + " is missing");
                return new byte[0];
            }
            out.writeBytes(chunks.get(i).value());
        }
        return out.toByteArray();
    }

    private void checkExtents(boolean scrub) throws IOException {
        long lastIno = -1;
        long lastEnd = 0;
        for (KeyValue kv : all(Keys.EXTENTS)) {
            long ino = kv.key().inode();
            BcachefsVolume.Extent e;
            try {
                String where = "extent key (inode " + ino + ", end block " + kv.key().offset() + ")";
                ExtentValue v = ExtentValue.decode(where, kv.value(), bs);
                if (kv.key().offset() < v.logicalBlocks()) {
                    problems.add(where + " starts before block 0");
                    continue;
                }
                e = new BcachefsVolume.Extent(ino, kv.key().offset() - v.logicalBlocks(), kv.key().offset(), v);
            } catch (IOException ex) {
                problems.add(ex.getMessage());
                continue;
            }
            if (ino != lastIno) {
                lastIno = ino;
                lastEnd = 0;
            }
            if (e.start() < lastEnd) {
                problems.add("extent of inode " + ino + " at block " + e.start() + " overlaps the one before (ends "
                        + lastEnd + ")");
            }
            lastEnd = e.end();
            InodeRecord owner = inodes.get(ino);
            if (owner == null || owner.type != FileType.REGULAR) {
                problems.add("extent of inode " + ino + " at block " + e.start() + " has no regular file");
            } else {
                liveBlocks.merge(ino, e.value().liveBlocks(), Long::sum);
            }
            ExtentValue v = e.value();
            if (e.end() > InodeRecord.MAX_SIZE / bs) {
                problems.add("extent of inode " + ino + " at block " + e.start() + " ends at block " + e.end()
                        + ", past the largest file size " + InodeRecord.MAX_SIZE);
            }
            if (v.devStart() + v.physBlocks() > device.capacity() / bs) {
                problems.add("extent of inode " + ino + " at block " + e.start() + " points past the device");
                continue;
            }
            held.add(v.physical());
            if (scrub && !v.narrowable()) {
                try {
                    ExtentReader.load(device, bs, e);
                } catch (ExtentReader.ChecksumException ex) {
                    problems.add("scrub: inode " + ino + " at file offset " + e.start() * bs + " (" + e.blocks() * bs
                            + " bytes): " + ex.getMessage());
                }
            }
        }
    }

    private void checkBlockCounts() {
        for (InodeRecord r : inodes.values()) {
            long live = liveBlocks.getOrDefault(r.ino, 0L);
            if (r.blocks != live) {
                problems.add("inode " + r.ino + " counts " + r.blocks + " blocks, its extents hold " + live);
            }
        }
    }

    /**
     * Compares the reference counts with the extent keys, run by run: every block's count must equal
     * the number of keys whose physical extent covers it, and no block may have a count no key explains
     * (a leak). Memory and time grow with the number of keys and runs, not of blocks.
     */
    private void checkRefs() {
        TreeMap<Long, Integer> expected = new TreeMap<>();
        for (BlockRange range : held) {
            expected.merge(range.start(), 1, Integer::sum);
            expected.merge(range.end(), -1, Integer::sum);
        }
        TreeMap<Long, Integer> actual = new TreeMap<>();
        for (RefRun run : refRuns) {
            actual.merge(run.blocks().start(), run.count(), Integer::sum);
            actual.merge(run.blocks().end(), -run.count(), Integer::sum);
        }
        java.util.TreeSet<Long> cuts = new java.util.TreeSet<>(expected.keySet());
        cuts.addAll(actual.keySet());
        int want = 0;
        int have = 0;
        long leakStart = -1;
        long leakEnd = -1;
        Long from = cuts.isEmpty() ? null : cuts.first();
        for (Long to = from == null ? null : cuts.higher(from); to != null; from = to, to = cuts.higher(to)) {
            want += expected.getOrDefault(from, 0);
            have += actual.getOrDefault(from, 0);
            if (want > 0) {
                heldBlocks += to - from;
            }
            if (want > 0 && want != have) {
                problems.add((to - from == 1 ? "data block " + from : "data blocks " + from + ".." + (to - 1))
                        + " held by " + want + " extent keys " + (to - from == 1 ? "has" : "have")
                        + " reference count " + have);
            }
            if (want == 0 && have > 0) {
                if (from != leakEnd) {
                    reportLeak(leakStart, leakEnd);
                    leakStart = from;
                }
                leakEnd = to;
            }
        }
        reportLeak(leakStart, leakEnd);
    }

    private void reportLeak(long start, long end) {
        if (start >= 0) {
            problems.add("data blocks " + start + ".." + (end - 1) + " have a reference count but no extent key holds"
                    + " them (a leak)");
        }
    }
}
