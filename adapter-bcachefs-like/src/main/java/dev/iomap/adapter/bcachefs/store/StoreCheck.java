package dev.iomap.adapter.bcachefs.store;

import dev.iomap.adapter.support.BlockIo;
import dev.iomap.adapter.support.BlockRange;
import dev.iomap.api.CorruptFileSystemException;
import dev.iomap.device.BlockDevice;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Offline check of a store (the store's part of fsck): the superblocks, every node of the tree
 * (checksum, header, level, key order inside the node and across nodes, keys inside the range the
 * parent gives the child), that no block is used twice (node and node, node and referenced data) and
 * that nodes and data lie outside the superblock and journal regions, that the allocation runs are
 * well formed, and that the journal replays. Reads only; a corrupt structure is reported and never
 * followed.
 */
public final class StoreCheck {
    private final BlockDevice device;
    private final BcachefsSuperblock sb;
    private final List<String> problems = new ArrayList<>();
    /** Node block to a description of where it was found. */
    private final Map<Long, String> nodeBlocks = new HashMap<>();
    /** Allocation runs by start block. */
    private final TreeMap<Long, RefRun> runs = new TreeMap<>();
    private BKey lastLeafKey;

    private StoreCheck(BlockDevice device, BcachefsSuperblock sb) {
        this.device = device;
        this.sb = sb;
    }

    /**
     * @param device the device (not written)
     * @return the problems found, each naming the block and structure; empty if the store is sound
     * @throws IOException only if the device cannot be read
     */
    public static List<String> check(BlockDevice device) throws IOException {
        BcachefsSuperblock sb;
        try {
            sb = BtreeStore.readSuperblock(device);
        } catch (CorruptFileSystemException e) {
            return List.of(e.getMessage());
        }
        StoreCheck check = new StoreCheck(device, sb);
        check.walk(sb.rootBlock(), sb.rootLevel(), Node.MIN_KEY, null, "the superblock's root");
        check.checkRuns();
        if (check.problems.isEmpty()) {
            check.checkReplay();
        }
        return List.copyOf(check.problems);
    }

    /**
     * The reference counts the store holds, with the journal replayed (in memory): what the
     * filesystem's fsck compares with the references of its extent keys.
     *
     * @param device the device (not written)
     * @return the runs of blocks with a non-zero count, ascending
     * @throws CorruptFileSystemException if the store cannot be opened
     * @throws IOException if the device cannot be read
     */
    public static List<RefRun> refCounts(BlockDevice device) throws IOException {
        try (BtreeStore store = BtreeStore.open(device, true)) {
            return store.refRuns();
        }
    }

    private void walk(long block, int level, BKey low, BKey high, String from) throws IOException {
        String where = "B-tree node at block " + block + " (level " + level + ", from " + from + ")";
        if (block < sb.dataStart() || block >= sb.totalBlocks()) {
            problems.add(where + ": outside the node and data region [" + sb.dataStart() + ", "
                    + sb.totalBlocks() + ")");
            return;
        }
        String previous = nodeBlocks.putIfAbsent(block, where);
        if (previous != null) {
            problems.add(where + ": block already used by " + previous);
            return;
        }
        Node node;
        try {
            node = Node.decode(BlockIo.read(device, block, 1), block, level);
        } catch (CorruptFileSystemException e) {
            problems.add(e.getMessage());
            return;
        }
        for (int i = 0; i < node.size(); i++) {
            BKey key = node.keys.get(i);
            boolean belowLow = (node.isLeaf() || i > 0) && key.compareTo(low) < 0;
            if (belowLow || (high != null && key.compareTo(high) >= 0)) {
                problems.add(where + ": key " + i + " " + key + " is outside the node's range [" + low + ", "
                        + (high == null ? "end" : high) + ")");
            }
        }
        if (node.isLeaf()) {
            checkLeaf(node, where);
            return;
        }
        for (int i = 0; i < node.size(); i++) {
            BKey childLow = i == 0 ? low : node.keys.get(i);
            BKey childHigh = i + 1 < node.size() ? node.keys.get(i + 1) : high;
            walk(node.childBlocks.get(i), level - 1, childLow, childHigh, "block " + block + " entry " + i);
        }
    }

    private void checkLeaf(Node leaf, String where) {
        for (int i = 0; i < leaf.size(); i++) {
            BKey key = leaf.keys.get(i);
            if (lastLeafKey != null && key.compareTo(lastLeafKey) <= 0) {
                problems.add(where + ": key " + key + " is not above " + lastLeafKey + " of the leaf before");
            }
            lastLeafKey = key;
            if (key.btree() != RefCounts.BTREE) {
                continue;
            }
            try {
                RefRun run = RefCounts.decode(key, leaf.values.get(i), where);
                runs.put(run.blocks().start(), run);
            } catch (CorruptFileSystemException e) {
                problems.add(e.getMessage());
            }
        }
    }

    private void checkRuns() {
        RefRun previous = null;
        for (RefRun run : runs.values()) {
            BlockRange blocks = run.blocks();
            if (blocks.start() < sb.dataStart() || blocks.end() > sb.totalBlocks()) {
                problems.add("allocation run " + run + " lies outside the node and data region ["
                        + sb.dataStart() + ", " + sb.totalBlocks() + ")");
            }
            if (previous != null && previous.blocks().end() > blocks.start()) {
                problems.add("allocation runs " + previous + " and " + run + " overlap");
            }
            if (previous != null && previous.blocks().end() == blocks.start() && previous.count() == run.count()) {
                problems.add("allocation runs " + previous + " and " + run + " touch with equal counts (unmerged)");
            }
            previous = run;
        }
        for (var node : nodeBlocks.entrySet()) {
            var holder = runs.floorEntry(node.getKey());
            if (holder != null && holder.getValue().blocks().contains(node.getKey())) {
                problems.add(node.getValue() + ": block is also referenced data, run " + holder.getValue());
            }
        }
    }

    private void checkReplay() throws IOException {
        try (BtreeStore store = BtreeStore.open(device, true)) {
            store.lastSeq();
        } catch (CorruptFileSystemException e) {
            problems.add("journal replay after checkpoint " + sb.checkpointSeq() + " (tail block "
                    + sb.journalTail() + ") fails: " + e.getMessage());
        }
    }
}
