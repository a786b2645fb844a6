package dev.iomap.adapter.gfs2;

import dev.iomap.adapter.support.Journal;
import dev.iomap.adapter.support.ns.XattrSet;
import dev.iomap.api.CorruptFileSystemException;
import dev.iomap.api.FileType;
import dev.iomap.api.FsckReport;
import dev.iomap.device.BlockDevice;
import java.io.IOException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * gfs2-like's fsck: checks every invariant of an image without changing it. The journals are replayed
 * into a {@link ScratchOverlay} (a journal that does not replay is reported), then, on the replayed
 * image: every resource group's header, bitmap and counts; from the root every reachable dinode (its
 * checksum and location, stuffed size, tree shape: each indirect block's level, owner, checksum and
 * pointers, the block count), its content and attribute chains (each block's checksum, owner and share
 * of the bytes), directory entries, link targets, encoded attributes and link counts; every unlinked
 * dinode the same way; and every block's owner against the bitmap (a block used twice, a used block
 * marked free, a block marked used that nothing owns: a leak).
 *
 * <p>Mount runs the same checks ({@link #verifyForMount}) after replaying its journal. One pass: each
 * metadata block is read once (nothing is cached: only the directories waiting to be walked are kept),
 * the work is linear in the metadata and the blocks, and the memory in the blocks used: one bit per
 * block up to the last one used in each resource group (a group's header and bitmap blocks are its own
 * and need none), so that an empty filesystem of a terabyte is checked in a small heap. Which file
 * owned a block first is not kept; only if a block was claimed twice, or is used but free in its
 * bitmap, does a second walk of the same metadata name its first owner for the message.
 */
final class Gfs2Fsck {
    private static final int MAX_PROBLEMS = 100;
    /** Problems a refused mount names. */
    private static final int NAMED_AT_MOUNT = 3;

    /** Owner kinds, in the top bits of an owner code; the rest is the id (group index or inode). */
    private static final int RGRP = 1;
    private static final int DINODE = 2;
    private static final int DATA = 3;
    private static final int INDIRECT = 4;
    private static final int CONTENT = 5;
    private static final int XATTR = 6;
    private static final int KIND_SHIFT = 60;

    private final List<String> problems = new ArrayList<>();
    private int dropped;
    private Gfs2Volume volume;
    /** Per resource group, the data blocks claimed (bit {@code block - start}); null until the first. */
    private BitSet[] claimed;
    /** Dinodes claimed that could not be read, reported once: later names of them are skipped. */
    private final Set<Long> unreadable = new HashSet<>();
    /** Unlinked dinodes checked, in order, for the second walk. */
    private final List<Long> unlinkedChecked = new ArrayList<>();
    /** Blocks claimed a second time, with the second owner's code; at most {@link #MAX_PROBLEMS}. */
    private final Map<Long, Long> claimedTwice = new LinkedHashMap<>();
    /** Blocks claimed but free in their bitmap; at most {@link #MAX_PROBLEMS}. */
    private final List<Long> usedButFree = new ArrayList<>();
    /** The second walk: the first owner of each block of {@link #claimedTwice} and {@link #usedButFree}; null in the first. */
    private Map<Long, Long> firstOwners;

    private Gfs2Fsck() {
    }

    /**
     * @param device the image (not changed)
     * @return what is wrong with it
     * @throws IOException if the device fails
     */
    static FsckReport check(BlockDevice device) throws IOException {
        return new Gfs2Fsck().run(device);
    }

    /**
     * Mount's verifier: fsck's structural checks (everything but the other nodes' journals) on the image
     * as the mount sees it after replaying its journal, so that mount refuses what fsck flags instead of
     * failing later when the damaged file is used. Reads through {@code volume}'s journal without
     * filling its caches.
     *
     * @param volume the mount's volume, resource groups loaded
     * @throws CorruptFileSystemException naming the first problems; the message ends with "run fsck"
     * @throws IOException if the device fails
     */
    static void verifyForMount(Gfs2Volume volume) throws IOException {
        Gfs2Fsck fsck = new Gfs2Fsck();
        fsck.checkVolume(volume);
        if (fsck.problems.isEmpty()) {
            return;
        }
        List<String> named = fsck.problems.subList(0, Math.min(NAMED_AT_MOUNT, fsck.problems.size()));
        int more = fsck.problems.size() + fsck.dropped - named.size();
        throw new CorruptFileSystemException("gfs2-like image is damaged: " + String.join("; ", named)
                + (more > 0 ? " (and " + more + " more problems)" : "") + "; run fsck");
    }

    private void add(String problem) {
        if (firstOwners != null) {
            return; // the second walk only names owners; it found its problems in the first
        }
        if (problems.size() < MAX_PROBLEMS) {
            problems.add(problem);
        } else {
            dropped++;
        }
    }

    private FsckReport run(BlockDevice raw) throws IOException {
        Gfs2Layout layout;
        try {
            layout = Gfs2Layout.read(raw);
        } catch (IOException e) {
            return new FsckReport(List.of(e.getMessage()), "the superblock only");
        }
        ScratchOverlay device = new ScratchOverlay(raw);
        Journal mine = null;
        for (int j = 0; j < layout.journals(); j++) {
            try {
                Journal journal = Journal.open(device, layout.journalStart(j), layout.journalBlocks());
                journal.replay();
                mine = j == 0 ? journal : mine;
            } catch (IOException e) {
                add("journal " + j + " cannot be replayed: " + e.getMessage());
            }
        }
        if (mine == null) {
            return report(new FsckReport(problems, "the superblock and journals"));
        }
        ResourceGroup[] rgs;
        try {
            rgs = Gfs2Volume.loadRgrps(mine, layout);
        } catch (IOException e) {
            add("resource groups: " + e.getMessage());
            return report(new FsckReport(problems, "the superblock, journals and resource groups"));
        }
        int dinodes = checkVolume(new Gfs2Volume(device, layout, mine, rgs));
        return report(new FsckReport(problems, dinodes + " dinodes, " + layout.totalBlocks() + " blocks in "
                + rgs.length + " resource groups, " + layout.journals() + " journals"));
    }

    private FsckReport report(FsckReport report) {
        if (dropped > 0) {
            List<String> all = new ArrayList<>(report.problems());
            all.add("... and " + dropped + " more problems");
            return new FsckReport(all, report.checked());
        }
        return report;
    }

    /** Checks everything after the resource groups loaded; returns the dinodes reached. */
    private int checkVolume(Gfs2Volume v) {
        volume = v;
        claimed = new BitSet[v.rgs.length];
        int dinodes = walkNamespace(v.layout.rootIno());
        for (ResourceGroup rg : v.rgs) {
            for (long b = rg.dataStart(); b < rg.start + rg.length; b++) {
                if (rg.state(b) == ResourceGroup.UNLINKED && !isClaimed(b)) {
                    unlinkedChecked.add(b);
                    checkDinode(b, true);
                }
            }
        }
        checkBitmaps(v.rgs);
        if (!claimedTwice.isEmpty() || !usedButFree.isEmpty()) {
            nameFirstOwners(v.layout.rootIno());
        }
        return dinodes;
    }

    /**
     * Walks the same metadata again in the same order, reporting nothing, to learn who claimed each
     * contested block first, then reports the blocks claimed twice and the used blocks marked free.
     */
    private void nameFirstOwners(long root) {
        firstOwners = new HashMap<>();
        claimedTwice.keySet().forEach(b -> firstOwners.put(b, 0L));
        usedButFree.forEach(b -> firstOwners.put(b, 0L));
        unreadable.clear();
        walkNamespace(root);
        unlinkedChecked.forEach(b -> checkDinode(b, true));
        Map<Long, Long> first = firstOwners;
        firstOwners = null;
        claimedTwice.forEach((b, second) -> add("block " + b + " is used twice: by " + describe(first.get(b))
                + " and by " + describe(second)));
        usedButFree.forEach(b -> add("block " + b + " is free in its bitmap but used by " + describe(first.get(b))));
    }

    /** @return whether {@code block} (inside the resource groups) has an owner: its group, or a claim */
    private boolean isClaimed(long block) {
        ResourceGroup rg = volume.rg(block);
        if (block < rg.dataStart()) {
            return true;
        }
        BitSet bits = claimed[rg.index];
        return bits != null && bits.get((int) (block - rg.start));
    }

    /** Records the owner of a block inside the resource groups; a second owner is a problem. */
    private void claim(long block, int kind, long id) {
        if (firstOwners != null) {
            firstOwners.replace(block, 0L, code(kind, id));
            return;
        }
        ResourceGroup rg = volume.rg(block);
        if (block < rg.dataStart()) {
            add("block " + block + " is used twice: by " + describe(code(RGRP, rg.index)) + " and by "
                    + describe(code(kind, id)));
            return;
        }
        int i = (int) (block - rg.start);
        if (claimed[rg.index] == null) {
            claimed[rg.index] = new BitSet();
        }
        if (!claimed[rg.index].get(i)) {
            claimed[rg.index].set(i);
        } else if (claimedTwice.size() < MAX_PROBLEMS) {
            claimedTwice.putIfAbsent(block, code(kind, id));
        } else {
            dropped++;
        }
    }

    private static long code(int kind, long id) {
        return ((long) kind << KIND_SHIFT) | id;
    }

    private static String describe(long code) {
        long id = code & ((1L << KIND_SHIFT) - 1);
        return switch ((int) (code >>> KIND_SHIFT)) {
            case RGRP -> "resource group " + id + " header or bitmap";
            case DINODE -> "dinode " + id;
            case DATA -> "data of " + id;
            case INDIRECT -> "indirect block of " + id;
            case CONTENT -> "content chain of " + id;
            default -> "attribute chain of " + id;
        };
    }

    private boolean inRgrps(long block, String what) {
        if (!volume.layout.inDataArea(block)) {
            add(what + " points at block " + block + ", outside the resource groups' data blocks");
            return false;
        }
        return true;
    }

    /** @return dinodes reached */
    private int walkNamespace(long root) {
        Map<Long, Integer> names = new HashMap<>();
        Map<Long, Integer> subdirs = new HashMap<>();
        // type (ordinal) and link count of every dinode reached
        Map<Long, long[]> seen = new HashMap<>();
        Deque<Dinode> dirs = new ArrayDeque<>();
        Dinode rootInode = checkDinode(root, false);
        if (rootInode == null) {
            return 0;
        }
        if (rootInode.type != FileType.DIRECTORY) {
            add("root inode " + root + " is a " + rootInode.type);
            return 1;
        }
        seen.put(root, new long[] {FileType.DIRECTORY.ordinal(), rootInode.nlink});
        dirs.add(rootInode);
        while (!dirs.isEmpty()) {
            Dinode dir = dirs.poll();
            long dirIno = dir.ino;
            try {
                for (Map.Entry<String, Entries.Entry> e : Entries.decodeDirectory(dir.content, dirIno).entrySet()) {
                    long ino = e.getValue().ino();
                    String name = Entries.printable(e.getKey());
                    names.merge(ino, 1, Integer::sum);
                    if (seen.containsKey(ino)) {
                        if (e.getValue().type() == FileType.DIRECTORY) {
                            add("directory " + ino + " has a second name '" + name + "' in " + dirIno);
                        }
                        continue;
                    }
                    if (!inRgrps(ino, "directory " + dirIno + " entry '" + name + "'")
                            || unreadable.contains(ino)) {
                        continue; // outside, or an unreadable dinode reported when first reached
                    }
                    Dinode d = checkDinode(ino, false);
                    if (d == null) {
                        continue;
                    }
                    seen.put(ino, new long[] {d.type.ordinal(), d.nlink});
                    if (d.type != e.getValue().type()) {
                        add("directory " + dirIno + " entry '" + name + "' says " + e.getValue().type()
                                + ", inode " + ino + " is a " + d.type);
                    }
                    if (d.type == FileType.DIRECTORY) {
                        subdirs.merge(dirIno, 1, Integer::sum);
                        if (d.parent != dirIno) {
                            add("directory " + ino + " names " + d.parent + " as its parent, but is in " + dirIno);
                        }
                        dirs.add(d);
                    }
                }
            } catch (IOException ex) {
                add(ex.getMessage()); // names the directory
            }
        }
        for (Map.Entry<Long, long[]> e : seen.entrySet()) {
            long ino = e.getKey();
            boolean directory = e.getValue()[0] == FileType.DIRECTORY.ordinal();
            int expected = directory ? 2 + subdirs.getOrDefault(ino, 0) : names.getOrDefault(ino, 0);
            if (e.getValue()[1] != expected) {
                add("inode " + ino + " has link count " + e.getValue()[1] + "; the namespace gives it " + expected);
            }
        }
        return seen.size();
    }

    /**
     * Checks one dinode and claims its blocks; returns it, or null if it cannot be read. The block is
     * claimed as a dinode even then, so an unreadable dinode is reported once, not also as unreached.
     */
    private Dinode checkDinode(long ino, boolean unlinked) {
        claim(ino, DINODE, ino);
        int state = volume.state(ino);
        if (state != (unlinked ? ResourceGroup.UNLINKED : ResourceGroup.DINODE)) {
            add("dinode " + ino + " is marked " + state + " in its bitmap");
        }
        Dinode d;
        try {
            d = volume.readDinode(ino);
        } catch (IOException e) {
            add("inode " + ino + ": " + e.getMessage());
            unreadable.add(ino);
            return null;
        }
        int capacity = volume.layout.stuffedCapacity();
        long[] counted = {0};
        if (d.type == FileType.REGULAR) {
            if (d.stuffed() && d.size > capacity) {
                add("stuffed inode " + ino + " has size " + d.size + " > " + capacity);
            }
            try {
                checkTree(d, d.pointers, d.height, counted);
            } catch (IOException e) {
                add("inode " + ino + " tree: " + e.getMessage());
            }
        } else {
            for (long b : d.contentChain) {
                claim(b, CONTENT, ino);
                counted[0]++;
            }
            if (d.type == FileType.SYMLINK && (d.content.length == 0 || indexOfNul(d.content) >= 0)) {
                add("symbolic link " + ino + " has an empty target or a NUL in it");
            }
        }
        try {
            volume.loadXattrs(d);
            for (long b : d.xattrChain) {
                claim(b, XATTR, ino);
                counted[0]++;
            }
            if (d.xattrs.length > 0) {
                XattrSet.decode(d.xattrs, "extended attributes of inode " + ino);
            }
        } catch (IOException e) {
            add("inode " + ino + " attributes: " + e.getMessage());
        }
        if (counted[0] != d.blocks) {
            add("inode " + ino + " counts " + d.blocks + " blocks; its tree and chains hold " + counted[0]);
        }
        return d;
    }

    private static int indexOfNul(byte[] bytes) {
        for (int i = 0; i < bytes.length; i++) {
            if (bytes[i] == 0) {
                return i;
            }
        }
        return -1;
    }

    private void checkTree(Dinode d, long[] ptrs, int level, long[] counted) throws IOException {
        if (level == 0) {
            return;
        }
        for (long p : ptrs) {
            if (p == 0 || !inRgrps(p, "inode " + d.ino)) {
                continue;
            }
            counted[0]++;
            if (level == 1) {
                claim(p, DATA, d.ino);
                continue;
            }
            claim(p, INDIRECT, d.ino);
            Indirect i = volume.readIndirect(p, d.ino);
            if (i.level != level - 1) {
                add("indirect block " + p + " of inode " + d.ino + " has level " + i.level + ", expected " + (level - 1));
            }
            checkTree(d, i.pointers, level - 1, counted);
        }
    }

    private void checkBitmaps(ResourceGroup[] rgs) {
        for (ResourceGroup rg : rgs) {
            for (long b = rg.start; b < rg.start + rg.length; b++) {
                int state = rg.state(b);
                boolean owned = isClaimed(b);
                if (state == ResourceGroup.FREE && owned && b < rg.dataStart()) {
                    add("block " + b + " is free in its bitmap but used by " + describe(code(RGRP, rg.index)));
                } else if (state == ResourceGroup.FREE && owned) {
                    if (usedButFree.size() < MAX_PROBLEMS) {
                        usedButFree.add(b);
                    } else {
                        dropped++;
                    }
                } else if (state == ResourceGroup.USED && !owned) {
                    add("block " + b + " is marked used but nothing owns it (a leak)");
                } else if (state >= ResourceGroup.UNLINKED && !owned) {
                    add("block " + b + " is marked as a dinode but no directory or unlinked list reaches it");
                }
            }
        }
    }
}
