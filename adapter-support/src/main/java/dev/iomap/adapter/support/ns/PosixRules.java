package dev.iomap.adapter.support.ns;

import dev.iomap.api.FileType;
import dev.iomap.api.NewInodeAttributes;

/**
 * The owner, group and mode of a new inode as Linux's {@code inode_init_owner} gives them (without
 * {@code CAP_FSETID} checks, which the caller's credentials have already passed): in a directory with
 * the set-group-ID bit a new inode gets the directory's group instead of the one asked for, and a new
 * directory keeps the bit. Stateless.
 */
public final class PosixRules {
    /** The set-group-ID bit of a mode ({@code S_ISGID}). */
    public static final int SET_GROUP_ID = 02000;

    private PosixRules() {
    }

    /**
     * @param type the new inode's type
     * @param mode the permission bits asked for (a symbolic link's are 0777)
     * @param parentMode the mode of the directory the inode is created in
     * @return the mode to give it: {@code mode}, with {@link #SET_GROUP_ID} added for a directory created
     *     in a directory that has it
     */
    public static int newMode(FileType type, int mode, int parentMode) {
        boolean inherit = (parentMode & SET_GROUP_ID) != 0;
        return inherit && type == FileType.DIRECTORY ? mode | SET_GROUP_ID : mode;
    }

    /**
     * @param attributes what the creator asked for
     * @param parentMode the mode of the directory the inode is created in
     * @param parentGid that directory's group
     * @return the group to give the new inode: the parent's if the parent has {@link #SET_GROUP_ID},
     *     else the one asked for
     */
    public static int newGid(NewInodeAttributes attributes, int parentMode, int parentGid) {
        return (parentMode & SET_GROUP_ID) != 0 ? parentGid : attributes.gid();
    }
}
