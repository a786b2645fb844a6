package dev.iomap.spi.lock;

import java.util.Objects;

/**
 * The name of one glock: what it protects and which one. Names compare in the lock order: by type
 * in {@link LockType}'s declaration order, then by number.
 *
 * @param type what the lock protects
 * @param number which one: the inode number, the resource group index, 0 for the rename lock
 */
public record LockName(LockType type, long number) implements Comparable<LockName> {

    /**
     * @throws NullPointerException if {@code type} is null
     * @throws IllegalArgumentException if {@code number} is negative
     */
    public LockName {
        Objects.requireNonNull(type, "type");
        if (number < 0) {
            throw new IllegalArgumentException("lock number " + number + " of " + type + " is negative");
        }
    }

    /**
     * @param ino the inode number, at least 0
     * @return the name of that inode's glock
     */
    public static LockName inode(long ino) {
        return new LockName(LockType.INODE, ino);
    }

    /**
     * @param ino the inode number, at least 0
     * @return the name of that inode's iopen glock ({@link LockType#IOPEN})
     */
    public static LockName iopen(long ino) {
        return new LockName(LockType.IOPEN, ino);
    }

    /**
     * @param index the resource group index, at least 0
     * @return the name of that resource group's glock
     */
    public static LockName rgrp(long index) {
        return new LockName(LockType.RGRP, index);
    }

    /** @return the name of the filesystem's rename lock */
    public static LockName rename() {
        return new LockName(LockType.RENAME, 0);
    }

    /**
     * Orders names in the lock order: a thread takes a name only while every name it holds is
     * smaller.
     *
     * @param other another name
     * @return negative, 0 or positive as this name comes before, is, or comes after {@code other}
     */
    @Override
    public int compareTo(LockName other) {
        int byType = type.compareTo(other.type);
        return byType != 0 ? byType : Long.compare(number, other.number);
    }

    @Override
    public String toString() {
        return type + ":" + number;
    }
}
