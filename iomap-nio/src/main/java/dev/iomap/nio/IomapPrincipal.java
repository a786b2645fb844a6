package dev.iomap.nio;

import java.nio.file.attribute.GroupPrincipal;
import java.nio.file.attribute.UserPrincipal;

/**
 * A user or a group of an iomap file system, by numeric id: files keep ids, not names. The name is
 * what {@code /etc/passwd} or {@code /etc/group} of this machine said when the principal was made,
 * or the id in decimal (unsigned) if they did not know it, as the JDK's Unix principals do. Two
 * principals are equal when both are users or both are groups and their ids are equal, whatever
 * their names. Immutable.
 */
sealed class IomapPrincipal implements UserPrincipal permits IomapPrincipal.Group {
    private final int id;
    private final String name;

    /**
     * @param id the uid (or gid, for a {@link Group})
     * @param name the name to show
     */
    IomapPrincipal(int id, String name) {
        this.id = id;
        this.name = name;
    }

    /** @return the uid, or the gid of a {@link Group} */
    int id() {
        return id;
    }

    @Override
    public String getName() {
        return name;
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof IomapPrincipal that && that.getClass() == getClass() && that.id == id;
    }

    @Override
    public int hashCode() {
        return Integer.hashCode(id) * 31 + getClass().hashCode();
    }

    @Override
    public String toString() {
        return name;
    }

    /** A group, by gid. */
    static final class Group extends IomapPrincipal implements GroupPrincipal {
        /**
         * @param gid the group id
         * @param name the name to show
         */
        Group(int gid, String name) {
            super(gid, name);
        }
    }
}
