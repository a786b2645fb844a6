package dev.iomap.adapter.support.skeleton;

import dev.iomap.api.Capability;
import java.util.EnumSet;
import java.util.Objects;
import java.util.Set;

/**
 * What an adapter built on {@link SkeletonAdapter} chooses besides its model.
 *
 * @param name the adapter's name (lower case with dashes)
 * @param description one line saying what it models
 * @param magic the superblock magic, 8 ASCII characters
 * @param tree true for a tree of directories, false for one flat root directory
 * @param bytesPerInode device bytes per inode of the inode table (at least 64 inodes)
 */
public record SkeletonConfig(String name, String description, String magic, boolean tree, int bytesPerInode) {

    /** @throws IllegalArgumentException for a magic that is not 8 characters or a ratio below 1 KiB */
    public SkeletonConfig {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(description, "description");
        if (magic.length() != 8 || bytesPerInode < 1024) {
            throw new IllegalArgumentException("magic '" + magic + "' (8 characters) or bytes per inode "
                    + bytesPerInode + " (at least 1024)");
        }
    }

    /**
     * A configuration with one inode per 16 KiB of device.
     *
     * @param name the adapter's name
     * @param description one line
     * @param magic 8 ASCII characters
     * @param tree directories or a flat namespace
     * @return the configuration
     */
    public static SkeletonConfig of(String name, String description, String magic, boolean tree) {
        return new SkeletonConfig(name, description, magic, tree, 16 << 10);
    }

    /**
     * What the skeleton can do: truncate, random writes, durable fsync, rename, and directories in a tree
     * namespace. No fallocate, clone, links, POSIX attributes or extended attributes.
     *
     * @return the capabilities
     */
    public Set<Capability> capabilities() {
        EnumSet<Capability> caps = EnumSet.of(Capability.TRUNCATE, Capability.RANDOM_WRITE,
                Capability.DURABLE_FSYNC, Capability.RENAME);
        if (tree) {
            caps.add(Capability.DIRECTORIES);
        }
        return caps;
    }
}
