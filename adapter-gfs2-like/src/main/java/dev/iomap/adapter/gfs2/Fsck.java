package dev.iomap.adapter.gfs2;

import dev.iomap.adapter.support.Journal;
import dev.iomap.api.FileType;
import dev.iomap.api.FsckReport;
import dev.iomap.device.BlockDevice;
import java.io.IOException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * gfs2-like's fsck: checks every invariant of an image without changing it. The journals are replayed
 * into a {@link ScratchOverlay} (a journal that does not replay is reported), then, on the replayed
 * image: every resource group's header, bitmap and counts; from the root every reachable dinode (its
 * checksum and location, stuffed size, tree shape: each indirect block's level, owner and checksum,
 * the block count), directory entries and link counts; and every
 * block's owner against the bitmap (a block used twice, a used block marked free, a block marked used
 * that nothing owns: a leak).
 */
final class Fsck {
    private static final int MAX_PROBLEMS = 100;

    private final List<String> problems = new ArrayList<>();
    private final Map<Long, String> owners = new HashMap<>();
    private Volume volume;

    private Fsck() {
    }

    /**
     * @param device the image (not changed)
     * @return what is wrong with it
     * @throws IOException if the device fails
     */
    static FsckReport check(BlockDevice device) throws IOException {
        return new Fsck().run(device);
    }

    private void add(String problem) {
        if (problems.size() < MAX_PROBLEMS) {
            problems.add(problem);
        }
    }

    private FsckReport run(BlockDevice raw) throws IOException {
        Layout layout;
        try {
            layout = Layout.read(raw);
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
            return new FsckReport(problems, "the superblock and journals");
        }
        ResourceGroup[] rgs;
        try {
            rgs = Volume.loadRgrps(mine, layout);
        } catch (IOException e) {
            add("resource groups: " + e.getMessage());
            return new FsckReport(problems, "the superblock, journals and resource groups");
        }
        volume = new Volume(device, layout, mine, rgs);
        for (int j = 0; j < layout.journals(); j++) {
            for (long b = layout.journalStart(j); b < layout.journalStart(j) + layout.journalBlocks(); b++) {
                claim(b, "journal " + j);
            }
        }
        for (ResourceGroup rg : rgs) {
            for (long b = rg.start; b < rg.dataStart(); b++) {
                claim(b, "resource group " + rg.index + " header or bitmap");
            }
        }
        int dinodes = walkNamespace(layout.rootIno());
        for (ResourceGroup rg : rgs) {
            for (long b = rg.dataStart(); b < rg.start + rg.length; b++) {
                if (rg.state(b) == ResourceGroup.UNLINKED && !owners.containsKey(b)) {
                    checkDinode(b, true);
                }
            }
        }
        checkBitmaps(rgs);
        return new FsckReport(problems, dinodes + " dinodes, " + layout.totalBlocks() + " blocks in "
                + rgs.length + " resource groups, " + layout.journals() + " journals");
    }

    private void claim(long block, String owner) {
        String earlier = owners.putIfAbsent(block, owner);
        if (earlier != null) {
            add("block " + block + " is used twice: by " + earlier + " and by " + owner);
        }
    }

    private boolean inRgrps(long block, String what) {
        if (block < volume.layout.rgStart() || block >= volume.layout.totalBlocks()) {
            add(what + " points at block " + block + ", outside the resource groups");
            return false;
        }
        return true;
    }

    /** @return dinodes reached */
    private int walkNamespace(long root) {
        Map<Long, Integer> names = new HashMap<>();
        Map<Long, Integer> subdirs = new HashMap<>();
        Map<Long, Dinode> seen = new HashMap<>();
        Deque<Long> dirs = new ArrayDeque<>();
        Dinode rootInode = checkDinode(root, false);
        if (rootInode == null) {
            return 0;
        }
        seen.put(root, rootInode);
        dirs.add(root);
        while (!dirs.isEmpty()) {
            long dirIno = dirs.poll();
            Dinode dir = seen.get(dirIno);
            try {
                for (Map.Entry<String, Entries.Entry> e : Entries.decodeDirectory(dir.content, dirIno).entrySet()) {
                    long ino = e.getValue().ino();
                    names.merge(ino, 1, Integer::sum);
                    if (seen.containsKey(ino)) {
                        if (e.getValue().type() == FileType.DIRECTORY) {
                            add("directory " + ino + " has a second name '" + e.getKey() + "' in " + dirIno);
                        }
                        continue;
                    }
                    if (!inRgrps(ino, "directory " + dirIno + " entry '" + e.getKey() + "'")) {
                        continue;
                    }
                    Dinode d = checkDinode(ino, false);
                    if (d == null) {
                        continue;
                    }
                    seen.put(ino, d);
                    if (d.type != e.getValue().type()) {
                        add("directory " + dirIno + " entry '" + e.getKey() + "' says " + e.getValue().type()
                                + ", inode " + ino + " is a " + d.type);
                    }
                    if (d.type == FileType.DIRECTORY) {
                        subdirs.merge(dirIno, 1, Integer::sum);
                        if (d.parent != dirIno) {
                            add("directory " + ino + " names " + d.parent + " as its parent, but is in " + dirIno);
                        }
                        dirs.add(ino);
                    }
                }
            } catch (IOException ex) {
                add("directory " + dirIno + ": " + ex.getMessage());
            }
        }
        for (Dinode d : seen.values()) {
            int expected = d.type == FileType.DIRECTORY ? 2 + subdirs.getOrDefault(d.ino, 0)
                    : names.getOrDefault(d.ino, 0);
            if (d.nlink != expected) {
                add("inode " + d.ino + " has link count " + d.nlink + "; the namespace gives it " + expected);
            }
        }
        return seen.size();
    }

    /** Checks one dinode and claims its blocks; returns it, or null if it cannot be read. */
    private Dinode checkDinode(long ino, boolean unlinked) {
        Dinode d;
        try {
            d = volume.dinode(ino);
        } catch (IOException e) {
            add("inode " + ino + ": " + e.getMessage());
            return null;
        }
        claim(ino, "dinode " + ino);
        int state = volume.state(ino);
        if (state != (unlinked ? ResourceGroup.UNLINKED : ResourceGroup.DINODE)) {
            add("dinode " + ino + " is marked " + state + " in its bitmap");
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
                claim(b, "content chain of " + ino);
                counted[0]++;
            }
        }
        for (long b : d.xattrChain) {
            claim(b, "attribute chain of " + ino);
            counted[0]++;
        }
        if (counted[0] != d.blocks) {
            add("inode " + ino + " counts " + d.blocks + " blocks; its tree and chains hold " + counted[0]);
        }
        return d;
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
                claim(p, "data of " + d.ino);
                continue;
            }
            claim(p, "indirect block of " + d.ino);
            Indirect i = volume.indirect(p, d.ino);
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
                String owner = owners.get(b);
                if (state == ResourceGroup.FREE && owner != null) {
                    add("block " + b + " is free in its bitmap but used by " + owner);
                } else if (state == ResourceGroup.USED && owner == null) {
                    add("block " + b + " is marked used but nothing owns it (a leak)");
                } else if (state >= ResourceGroup.UNLINKED && owner == null) {
                    add("block " + b + " is marked as a dinode but no directory or unlinked list reaches it");
                }
            }
        }
    }
}
