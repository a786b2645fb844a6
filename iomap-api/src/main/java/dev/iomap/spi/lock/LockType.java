package dev.iomap.spi.lock;

/**
 * What a glock protects. The declaration order is the lock order (docs/design-notes.md, "Glocks"):
 * a thread that holds several locks takes the rename lock first, then inode locks by increasing
 * inode number, then resource-group locks by increasing number, then iopen locks; after all glocks it
 * opens its journal transaction, and takes folio locks last. {@link LockName#compareTo} orders names
 * this way.
 */
public enum LockType {
    /** The filesystem-wide rename lock (GFS2's {@code sd_rename_gl}), taken first by a cross-directory rename. */
    RENAME,
    /** One inode: its data, attributes and cached metadata; the number is the inode number. */
    INODE,
    /** One resource group: its header and bitmaps; the number is the resource group's index. */
    RGRP,
    /**
     * Whether an inode is in use on some node (GFS2's iopen glock): a node that has the inode open holds
     * it shared, and the inode's blocks are freed only by a node that gets it exclusively, so an inode
     * unlinked on one node lives on until its last close on every node. The number is the inode number.
     * Taken after the inode's and the resource groups' glocks (freeing the inode holds them).
     */
    IOPEN
}
