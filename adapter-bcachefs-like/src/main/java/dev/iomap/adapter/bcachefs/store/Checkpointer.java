package dev.iomap.adapter.bcachefs.store;

import dev.iomap.adapter.support.BlockIo;
import dev.iomap.api.NoSpaceException;
import dev.iomap.device.BlockDevice;
import dev.iomap.device.IoPurpose;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * One checkpoint: every dirty node goes to a newly allocated block (never its old one), children
 * before parents; the writes are awaited and flushed; then the superblock copy {@code sequence % 2}
 * points to the new root with the journal tail (and the label); flushed again; only then are the old blocks of
 * rewritten and removed nodes freed. Runs under the store's lock.
 */
final class Checkpointer {
    private final BlockDevice device;
    private final StoreSpace space;
    private final Tree tree;

    /**
     * @param superblock the superblock written
     * @param nodeBytes bytes of nodes written
     */
    record Result(BcachefsSuperblock superblock, long nodeBytes) {
    }

    Checkpointer(BlockDevice device, StoreSpace space, Tree tree) {
        this.device = device;
        this.space = space;
        this.tree = tree;
    }

    /**
     * @param old the superblock on the device now
     * @param label the label the new superblock records (the old one's, or a new one)
     * @param checkpointSeq the last transaction the tree holds
     * @param journalTail where the journal continues
     * @return the new superblock
     * @throws NoSpaceException if there are not enough blocks for the dirty nodes (nothing changed)
     * @throws IOException if a write or flush fails (the old superblock and journal stay valid)
     */
    Result run(BcachefsSuperblock old, String label, long checkpointSeq, long journalTail) throws IOException {
        int blockSize = old.blockSize();
        long sequence = old.sequence() + 1;
        List<Node> dirty = new ArrayList<>();
        postOrder(tree.root(), dirty);
        List<Long> fresh = new ArrayList<>();
        try {
            for (Node node : dirty) {
                fresh.add(space.allocateNode(node.block));
            }
        } catch (NoSpaceException e) {
            for (long block : fresh) {
                space.freeNode(block);
            }
            throw e;
        }
        List<Long> freed = new ArrayList<>(tree.orphanedBlocks());
        for (int i = 0; i < dirty.size(); i++) {
            Node node = dirty.get(i);
            if (node.block >= 0) {
                freed.add(node.block);
            }
            node.block = fresh.get(i);
        }
        List<CompletableFuture<Void>> writes = new ArrayList<>();
        for (Node node : dirty) {
            writes.add(device.write(node.block * blockSize, node.encode(blockSize, sequence), IoPurpose.METADATA));
        }
        BlockIo.awaitAll(writes);
        device.flush();
        Node root = tree.root();
        BcachefsSuperblock next = new BcachefsSuperblock(sequence, blockSize, old.totalBlocks(), old.journalStart(),
                old.journalBlocks(), old.nonce(), root.block, root.level, checkpointSeq, journalTail,
                space.freeBlocks() + freed.size(), old.nodeBlocks() + fresh.size() - freed.size(), label);
        BlockIo.write(device, sequence % BcachefsSuperblock.COPIES, next.encode(), IoPurpose.METADATA);
        device.flush();
        for (Node node : dirty) {
            node.dirty = false;
        }
        tree.checkpointed();
        for (long block : freed) {
            space.freeNode(block);
        }
        return new Result(next, (long) dirty.size() * blockSize);
    }

    private static void postOrder(Node node, List<Node> out) {
        if (!node.dirty) {
            return;
        }
        if (!node.isLeaf()) {
            for (Node child : node.loadedChildren()) {
                postOrder(child, out);
            }
        }
        out.add(node);
    }
}
