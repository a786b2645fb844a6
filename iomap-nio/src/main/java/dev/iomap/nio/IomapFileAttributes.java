package dev.iomap.nio;

import dev.iomap.api.FileStat;
import dev.iomap.api.FileType;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.GroupPrincipal;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.UserPrincipal;
import java.util.EnumSet;
import java.util.Objects;
import java.util.Set;

/**
 * {@link PosixFileAttributes} from a {@link FileStat}: times with nanoseconds (creation is the birth
 * time, btime; access is atime; modification is mtime), the file key is the inode number (a
 * {@link Long}), permissions are the nine rwx bits of the mode, owner and group are the uid and gid as
 * {@link IomapPrincipal}s named by the lookup service when asked. An adapter without
 * {@link dev.iomap.api.Capability#POSIX_ATTRIBUTES} reports its one time as all of them, the type's
 * default mode and uid and gid 0 (the provider offers this class only as
 * {@link java.nio.file.attribute.BasicFileAttributes} there).
 *
 * @param stat what the file system said
 * @param names names users and groups
 */
record IomapFileAttributes(FileStat stat, IomapUserPrincipalLookupService names) implements PosixFileAttributes {

    @Override
    public FileTime lastModifiedTime() {
        return FileTime.from(stat.mtime());
    }

    @Override
    public FileTime lastAccessTime() {
        return FileTime.from(stat.atime());
    }

    @Override
    public FileTime creationTime() {
        return FileTime.from(stat.btime());
    }

    /** @return the change time (ctime), for the "unix" view */
    FileTime changeTime() {
        return FileTime.from(stat.ctime());
    }

    @Override
    public boolean isRegularFile() {
        return stat.type() == FileType.REGULAR;
    }

    @Override
    public boolean isDirectory() {
        return stat.type() == FileType.DIRECTORY;
    }

    @Override
    public boolean isSymbolicLink() {
        return stat.type() == FileType.SYMLINK;
    }

    @Override
    public boolean isOther() {
        return stat.type().isSpecial();
    }

    @Override
    public long size() {
        return stat.size();
    }

    @Override
    public Object fileKey() {
        return stat.ino();
    }

    /** @throws UncheckedIOException if the passwd file cannot be read */
    @Override
    public UserPrincipal owner() {
        try {
            return names.user(stat.uid());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** @throws UncheckedIOException if the group file cannot be read */
    @Override
    public GroupPrincipal group() {
        try {
            return names.group(stat.gid());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** @return a new, modifiable set of the rwx bits of the mode */
    @Override
    public Set<PosixFilePermission> permissions() {
        return Permissions.of(stat.mode());
    }

    /** The nine rwx bits of a mode and {@link PosixFilePermission}s, both ways. */
    static final class Permissions {
        private Permissions() {
        }

        /**
         * @param mode permission bits (bits above {@code 0777} are ignored)
         * @return a new, modifiable set of the permissions among the nine rwx bits
         */
        static Set<PosixFilePermission> of(int mode) {
            Set<PosixFilePermission> permissions = EnumSet.noneOf(PosixFilePermission.class);
            for (PosixFilePermission permission : PosixFilePermission.values()) {
                if ((mode & bit(permission)) != 0) {
                    permissions.add(permission);
                }
            }
            return permissions;
        }

        /**
         * @param permissions a set of permissions
         * @return their bits, {@code 0777} at most
         * @throws NullPointerException if the set or an element is null
         * @throws ClassCastException if an element is not a {@link PosixFilePermission}
         */
        static int mode(Set<?> permissions) {
            int mode = 0;
            for (Object element : permissions) {
                PosixFilePermission permission = (PosixFilePermission) Objects.requireNonNull(element, "permission");
                mode |= bit(permission);
            }
            return mode;
        }

        /** The enum lists owner rwx, group rwx, others rwx: the mode's bits from {@code 0400} down. */
        private static int bit(PosixFilePermission permission) {
            return 0400 >> permission.ordinal();
        }
    }
}
