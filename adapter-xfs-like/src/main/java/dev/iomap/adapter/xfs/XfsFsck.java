package dev.iomap.adapter.xfs;

import dev.iomap.adapter.support.BlockSizeView;
import dev.iomap.adapter.support.BlockRange;
import dev.iomap.adapter.support.Extent;
import dev.iomap.adapter.support.Journal;
import dev.iomap.adapter.support.ns.DirectoryBlocks;
import dev.iomap.api.CorruptFileSystemException;
import dev.iomap.api.FileType;
import dev.iomap.api.FsckReport;
import dev.iomap.device.BlockDevice;
import java.io.IOException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * The xfs-like consistency check of an unmounted image. Reads only.
 *
 * <p>Checks: the superblock (magic, version, checksum, geometry) and that the image was cleanly unmounted
 * (an empty journal); the journal superblock; every metadata block's checksum, type and block number, and
 * each structure's own rules (via {@link ImageLoader}); then, across structures, that every block is
 * exactly one of free, static metadata, an extent-list, symlink or extended-attribute block of one inode, a
 * COW staging block, or data owned by as many
 * data-fork extents as its reference count says (one without a record); that extents are flagged shared
 * exactly where the reference count is two or more; that every directory entry names a live inode of the
 * right type; that link counts (a file's and a symbolic link's: its names), parent pointers and reachability
 * agree with the directories; and that no
 * inode is allocated without a name and no COW staging extent is left on a clean image. Each problem
 * names its structure and device offset.
 */
final class XfsFsck {
    private static final int MAX_PROBLEMS = 200;

    private final BlockDevice raw;
    private BlockDevice device;
    private final List<String> problems = new ArrayList<>();
    private int dropped;
    private XfsGeometry geometry;
    /** Whether mount runs the checks: inodes with no name and no link are then orphans it frees. */
    private boolean mounting;

    private XfsFsck(BlockDevice raw) {
        this.raw = raw;
    }

    static FsckReport check(BlockDevice device) throws IOException {
        return new XfsFsck(device).run();
    }

    /**
     * Mount's verifier: fsck's checks across structures (block ownership, free space, reference counts,
     * shared flags, directory entries, link counts, parents, reachability) on the image mount loaded
     * (after journal replay), so that mount refuses whatever fsck flags instead of writing on top of it.
     * Inodes with neither a name nor a link are allowed: they are files unlinked while open before a
     * crash, which mount frees; so are COW staging extents, which mount frees too.
     *
     * @throws CorruptFileSystemException naming the first problem, its structure and device offset
     */
    static void verifyForMount(XfsGeometry geometry, ImageLoader.Image image) throws CorruptFileSystemException {
        XfsFsck fsck = new XfsFsck(null);
        fsck.geometry = geometry;
        fsck.mounting = true;
        fsck.checkBlocks(image);
        fsck.checkNamespace(image, false);
        if (fsck.problems.isEmpty()) {
            return;
        }
        int more = fsck.problems.size() - 1 + fsck.dropped;
        throw new CorruptFileSystemException("xfs-like: " + fsck.problems.getFirst()
                + (more > 0 ? " (and " + more + " more problems)" : "") + "; run fsck");
    }

    private FsckReport run() throws IOException {
        XfsSuperblock superblock;
        try {
            superblock = XfsSuperblock.read(raw);
        } catch (CorruptFileSystemException e) {
            return new FsckReport(List.of(e.getMessage()), "the superblock only");
        }
        geometry = superblock.geometry();
        device = BlockSizeView.of(raw, geometry.blockSize());
        if (!superblock.clean()) {
            add("superblock at device offset 0: the image was not cleanly unmounted; the journal at "
                    + XfsLayout.where(geometry.journalStart(), geometry.blockSize())
                    + " may hold transactions: mount it to replay them");
        }
        try {
            Journal.open(device, geometry.journalStart(), geometry.journalBlocks());
        } catch (CorruptFileSystemException e) {
            add("journal: " + e.getMessage());
        }
        ImageLoader loader = new ImageLoader(device, geometry, false);
        ImageLoader.Image image = loader.load();
        loader.problems().forEach(this::add);
        long extents = checkBlocks(image);
        checkNamespace(image, superblock.clean());
        if (dropped > 0) {
            problems.add("... and " + dropped + " more problems");
        }
        return new FsckReport(problems, image.inodes.size() + " inodes, " + extents + " extents, "
                + geometry.totalBlocks() + " blocks in " + geometry.agCount() + " allocation groups");
    }

    private void add(String problem) {
        if (problems.size() < MAX_PROBLEMS) {
            problems.add(problem);
        } else {
            dropped++;
        }
    }

    /** What owns a block range. */
    private enum Kind { STATIC, LIST, DATA, COW, FREE, REFCOUNT }

    private record Claim(long start, long end, Kind kind, String owner, long count, boolean shared) {
    }

    /** The ownership sweep; returns the number of file extents seen. */
    private long checkBlocks(ImageLoader.Image image) {
        List<Claim> claims = new ArrayList<>();
        int bs = geometry.blockSize();
        claims.add(new Claim(0, 1, Kind.STATIC, "superblock", 0, false));
        claims.add(new Claim(geometry.journalStart(), geometry.journalStart() + geometry.journalBlocks(),
                Kind.STATIC, "journal", 0, false));
        claims.add(new Claim(geometry.inodeTableStart(), geometry.dataStart(), Kind.STATIC, "inode table", 0, false));
        for (int agno = 0; agno < geometry.agCount(); agno++) {
            long start = geometry.agStart(agno);
            claims.add(new Claim(start, start + geometry.agHeaderBlocks(agno), Kind.STATIC,
                    "allocation group " + agno + " header and leaves", 0, false));
            for (BlockRange free : image.groups[agno].onDisk().freeExtents()) {
                claims.add(new Claim(free.start(), free.end(), Kind.FREE, "free space of group " + agno, 0, false));
            }
            for (RefcountMap.Record record : image.groups[agno].refcounts().records()) {
                claims.add(new Claim(record.start(), record.end(), Kind.REFCOUNT, "refcount record of group "
                        + agno, record.count(), false));
            }
        }
        image.listBlocks.forEach((block, ino) -> claims.add(new Claim(block, block + 1, Kind.LIST,
                "extent list of inode " + ino, 0, false)));
        long extents = 0;
        for (InodeState inode : image.inodes.values()) {
            for (long block : inode.targetBlocks) {
                claims.add(new Claim(block, block + 1, Kind.LIST, "symlink target of inode " + inode.ino, 0, false));
            }
            for (long block : inode.xattrBlocks) {
                claims.add(new Claim(block, block + 1, Kind.LIST, "extended attributes of inode " + inode.ino, 0,
                        false));
            }
            for (Extent extent : inode.data.extents()) {
                claims.add(new Claim(extent.deviceBlock(), extent.deviceBlock() + extent.length(), Kind.DATA,
                        "inode " + inode.ino + " data fork file block " + extent.fileBlock(), 0, extent.shared()));
                extents++;
            }
            for (Extent extent : inode.cow.extents()) {
                claims.add(new Claim(extent.deviceBlock(), extent.deviceBlock() + extent.length(), Kind.COW,
                        "inode " + inode.ino + " COW fork file block " + extent.fileBlock(), 0, false));
                extents++;
            }
        }
        sweep(claims, bs);
        return extents;
    }

    private void sweep(List<Claim> claims, int bs) {
        TreeSet<Long> bounds = new TreeSet<>(List.of(0L, geometry.totalBlocks()));
        for (Claim claim : claims) {
            bounds.add(claim.start());
            bounds.add(claim.end());
        }
        Long[] points = bounds.toArray(Long[]::new);
        claims.sort(Comparator.comparingLong(Claim::start));
        List<Claim> active = new ArrayList<>();
        int next = 0;
        for (int i = 0; i + 1 < points.length; i++) {
            long from = points[i];
            long to = points[i + 1];
            active.removeIf(claim -> claim.end() <= from);
            while (next < claims.size() && claims.get(next).start() <= from) {
                if (claims.get(next).end() > from) {
                    active.add(claims.get(next));
                }
                next++;
            }
            if (from < geometry.totalBlocks()) {
                checkSegment(from, to, active, bs);
            } else if (!active.isEmpty()) {
                add("blocks [" + from + ", " + to + ") past the end of the filesystem are claimed by "
                        + owners(active));
            }
        }
    }

    private void checkSegment(long from, long to, List<Claim> active, int bs) {
        String where = "blocks [" + from + ", +" + (to - from) + ") (device offset " + from * bs + ")";
        int[] counts = new int[Kind.values().length];
        long refcount = 1;
        for (Claim claim : active) {
            counts[claim.kind().ordinal()]++;
            if (claim.kind() == Kind.REFCOUNT) {
                refcount = claim.count();
            }
        }
        int data = counts[Kind.DATA.ordinal()];
        int other = counts[Kind.STATIC.ordinal()] + counts[Kind.LIST.ordinal()] + counts[Kind.COW.ordinal()];
        int free = counts[Kind.FREE.ordinal()];
        if (free > 0 && data + other > 0) {
            add(where + " are free and also used by " + owners(active));
        } else if (free == 0 && data + other == 0) {
            add(where + " are neither free nor used: leaked");
        }
        if (other > 1 || (other == 1 && data > 0)) {
            add(where + " are owned twice: " + owners(active));
        }
        if (counts[Kind.REFCOUNT.ordinal()] > 0 && data != refcount) {
            add(where + ": the refcount record says " + refcount + " owners, " + data
                    + " data-fork extents own them: " + owners(active));
        } else if (data > 1 && counts[Kind.REFCOUNT.ordinal()] == 0) {
            add(where + " are owned by " + data + " data-fork extents without a refcount record: " + owners(active));
        }
        for (Claim claim : active) {
            if (claim.kind() == Kind.DATA && claim.shared() != data >= 2) {
                add(where + ": " + claim.owner() + " is flagged " + (claim.shared() ? "shared" : "not shared")
                        + " but the blocks have " + data + " owners");
            }
        }
    }

    private static String owners(List<Claim> active) {
        List<String> names = new ArrayList<>();
        for (Claim claim : active) {
            if (claim.kind() != Kind.REFCOUNT && claim.kind() != Kind.FREE) {
                names.add(claim.owner());
            }
        }
        return String.join(", ", names);
    }

    private void checkNamespace(ImageLoader.Image image, boolean clean) {
        Map<Long, InodeState> inodes = image.inodes;
        InodeState root = inodes.get(XfsGeometry.ROOT_INO);
        if (root == null || !root.isDirectory()) {
            add("root directory inode 1 (inode table " + XfsLayout.where(geometry.inodeBlock(1), geometry.blockSize())
                    + ") is missing or not a directory");
            return;
        }
        Map<Long, Integer> names = new HashMap<>();
        Map<Long, Long> containingDir = new HashMap<>();
        Map<Long, Integer> subdirs = new HashMap<>();
        for (InodeState dir : inodes.values()) {
            if (!dir.isDirectory()) {
                continue;
            }
            dir.directory.forEach((name, entry) -> checkEntry(inodes, dir, name, entry, names, containingDir,
                    subdirs));
        }
        for (InodeState inode : inodes.values()) {
            String where = "inode " + inode.ino + " (inode table "
                    + XfsLayout.where(geometry.inodeBlock(inode.ino), geometry.blockSize()) + ")";
            int nameCount = names.getOrDefault(inode.ino, 0);
            if (inode.ino == XfsGeometry.ROOT_INO) {
                nameCount = 1;
                if (inode.parent != XfsGeometry.ROOT_INO) {
                    add(where + ": the root's parent is " + inode.parent);
                }
            } else if (nameCount == 0 && mounting && inode.nlink == 0) {
                continue;
            } else if (nameCount == 0) {
                add(where + " is allocated but no directory names it (link count " + inode.nlink + ")");
                continue;
            }
            if (inode.isDirectory()) {
                int expected = 2 + subdirs.getOrDefault(inode.ino, 0);
                if (nameCount != 1 || inode.nlink != expected) {
                    add(where + ": directory has " + nameCount + " names and link count " + inode.nlink
                            + ", expected 1 name and link count " + expected);
                }
                Long container = containingDir.get(inode.ino);
                if (container != null && inode.parent != container) {
                    add(where + ": parent pointer " + inode.parent + " but directory " + container + " names it");
                }
            } else if (inode.nlink != nameCount) {
                add(where + ": link count " + inode.nlink + " but " + nameCount + " names");
            }
            if (clean && !inode.cow.isEmpty()) {
                add(where + ": COW staging extents " + inode.cow.extents() + " left on a clean image");
            }
            if (inode.diskSize > geometry.maxFileSize()) {
                add(where + ": size " + inode.diskSize + " is past the largest file size");
            }
        }
        checkReachable(inodes);
    }

    private void checkEntry(Map<Long, InodeState> inodes, InodeState dir, String name, DirectoryBlocks.Entry entry,
            Map<Long, Integer> names, Map<Long, Long> containingDir, Map<Long, Integer> subdirs) {
        String where = "directory inode " + dir.ino + " entry '" + name + "' (directory block " + entry.block()
                + " at " + dirBlockWhere(dir, entry.block()) + ")";
        InodeState target = inodes.get(entry.ino());
        if (target == null) {
            add(where + " points at inode " + entry.ino() + ", which is free");
            return;
        }
        if (target.type != entry.type()) {
            add(where + " says " + entry.type() + " but inode " + entry.ino() + " is " + target.type);
        }
        if (entry.ino() == XfsGeometry.ROOT_INO) {
            add(where + " names the root directory");
        }
        names.merge(entry.ino(), 1, Integer::sum);
        if (target.type == FileType.DIRECTORY) {
            containingDir.put(entry.ino(), dir.ino);
            subdirs.merge(dir.ino, 1, Integer::sum);
        }
    }

    private String dirBlockWhere(InodeState dir, int index) {
        try {
            if (dir.data.lookup(index) instanceof Extent extent) {
                return XfsLayout.where(extent.deviceBlockOf(index), geometry.blockSize());
            }
        } catch (IOException e) {
            // Fall through.
        }
        return "an unmapped block";
    }

    private void checkReachable(Map<Long, InodeState> inodes) {
        Set<Long> seen = new HashSet<>(List.of(XfsGeometry.ROOT_INO));
        ArrayDeque<Long> queue = new ArrayDeque<>(List.of(XfsGeometry.ROOT_INO));
        while (!queue.isEmpty()) {
            InodeState dir = inodes.get(queue.poll());
            for (DirectoryBlocks.Entry entry : dir.directory.entries()) {
                InodeState target = inodes.get(entry.ino());
                if (target == null) {
                    continue;
                }
                if (!seen.add(entry.ino())) {
                    if (target.isDirectory()) {
                        add("directory inode " + entry.ino() + " is reachable twice (a directory cycle or hard link)");
                    }
                    continue;
                }
                if (target.isDirectory()) {
                    queue.add(entry.ino());
                }
            }
        }
        for (InodeState inode : inodes.values()) {
            if (inode.isDirectory() && !seen.contains(inode.ino)) {
                add("directory inode " + inode.ino + " (inode table "
                        + XfsLayout.where(geometry.inodeBlock(inode.ino), geometry.blockSize())
                        + ") is not reachable from the root");
            }
        }
    }
}
