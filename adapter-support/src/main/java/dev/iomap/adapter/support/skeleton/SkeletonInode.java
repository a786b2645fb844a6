package dev.iomap.adapter.support.skeleton;

import dev.iomap.api.FileType;

/**
 * One inode of a skeleton filesystem, in memory: type, size on the device, link count, modification
 * time and the model's slots. Guarded by the mount's lock; every change marks the inode for the next
 * commit.
 */
public final class SkeletonInode {
    private final long ino;
    private final FileType type;
    private final long[] slots;
    private long size;
    private int links;
    private long mtimeMillis;
    private long cookie;
    private boolean dirty;

    SkeletonInode(long ino, FileType type, int slotCount) {
        this.ino = ino;
        this.type = type;
        this.slots = new long[slotCount];
    }

    /** @return the inode number */
    public long ino() {
        return ino;
    }

    /** @return regular file or directory */
    public FileType type() {
        return type;
    }

    /** @return the size on the device */
    public long size() {
        return size;
    }

    /**
     * @param index a slot, below {@link BlockMapModel#inodeSlots()}
     * @return its value (0 in a new inode)
     */
    public long slot(int index) {
        return slots[index];
    }

    /**
     * Sets a slot; the inode is written at the next commit.
     *
     * @param index a slot, below {@link BlockMapModel#inodeSlots()}
     * @param value the new value
     */
    public void setSlot(int index, long value) {
        slots[index] = value;
        dirty = true;
    }

    /** @return how many slots the inode has */
    public int slotCount() {
        return slots.length;
    }

    int links() {
        return links;
    }

    long mtimeMillis() {
        return mtimeMillis;
    }

    long cookie() {
        return cookie;
    }

    void bumpCookie() {
        cookie++;
    }

    boolean dirty() {
        return dirty;
    }

    void clean() {
        dirty = false;
    }

    void setSize(long newSize) {
        size = newSize;
        dirty = true;
    }

    void setLinks(int count) {
        links = count;
        dirty = true;
    }

    void touch(long millis) {
        mtimeMillis = millis;
        dirty = true;
    }

    void load(long loadedSize, int loadedLinks, long loadedMtime, long[] loadedSlots) {
        size = loadedSize;
        links = loadedLinks;
        mtimeMillis = loadedMtime;
        System.arraycopy(loadedSlots, 0, slots, 0, slots.length);
    }
}
