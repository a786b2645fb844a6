package dev.iomap.nio;

import dev.iomap.api.AttributeChange;
import java.io.IOException;
import java.nio.file.ProviderMismatchException;
import java.nio.file.attribute.FileOwnerAttributeView;
import java.nio.file.attribute.GroupPrincipal;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.UserPrincipal;
import java.util.Objects;
import java.util.Set;

/**
 * The "posix" view of a path, offered where the adapter declares
 * {@link dev.iomap.api.Capability#POSIX_ATTRIBUTES}: mode, owner and group are read and changed as
 * {@code stat}, {@code chmod} and {@code chown} do, following a symbolic link as the last name or
 * not as {@link IomapFileAttributeView} says. {@link #setPermissions} sets the mode to exactly the
 * nine bits given, clearing set-user-ID, set-group-ID and sticky, as the JDK's {@code chmod} does; the
 * mode of a symbolic link itself cannot be changed (a {@link dev.iomap.api.NotSupportedException},
 * EOPNOTSUPP). Owners and groups are {@link IomapPrincipal}s, by numeric id; no permission is checked
 * (the image is not the host's file system).
 */
final class IomapPosixFileAttributeView extends IomapFileAttributeView implements PosixFileAttributeView {

    /**
     * @param path the path
     * @param follow whether a symbolic link as the last name is followed
     */
    IomapPosixFileAttributeView(IomapPath path, boolean follow) {
        super(path, follow);
    }

    @Override
    public String name() {
        return "posix";
    }

    @Override
    public PosixFileAttributes readAttributes() throws IOException {
        return path.getFileSystem().readAttributes(path, follow);
    }

    /**
     * @throws NullPointerException if the set or an element is null
     * @throws ClassCastException if an element is not a {@link PosixFilePermission}
     */
    @Override
    public void setPermissions(Set<PosixFilePermission> perms) throws IOException {
        int mode = IomapFileAttributes.Permissions.mode(Objects.requireNonNull(perms, "perms"));
        path.getFileSystem().setAttributes(path, follow, AttributeChange.none().withMode(mode));
    }

    @Override
    public UserPrincipal getOwner() throws IOException {
        return readAttributes().owner();
    }

    /**
     * @throws ProviderMismatchException if the owner was not made by this provider's lookup service
     * @throws IOException if the owner is a group, as the JDK refuses it
     */
    @Override
    public void setOwner(UserPrincipal owner) throws IOException {
        Objects.requireNonNull(owner, "owner");
        if (owner instanceof GroupPrincipal) {
            throw new IOException("'owner' parameter can't be a group");
        }
        if (!(owner instanceof IomapPrincipal user)) {
            throw new ProviderMismatchException("not a principal of the iomap provider: " + owner.getClass().getName());
        }
        path.getFileSystem().setAttributes(path, follow, AttributeChange.none().withUid(user.id()));
    }

    /** @throws ProviderMismatchException if the group was not made by this provider's lookup service */
    @Override
    public void setGroup(GroupPrincipal group) throws IOException {
        Objects.requireNonNull(group, "group");
        if (!(group instanceof IomapPrincipal.Group ours)) {
            throw new ProviderMismatchException("not a group of the iomap provider: " + group.getClass().getName());
        }
        path.getFileSystem().setAttributes(path, follow, AttributeChange.none().withGid(ours.id()));
    }

    /**
     * The "owner" view: the owner part of a {@link IomapPosixFileAttributeView}.
     *
     * @param posix the view it reads and changes through
     */
    record Owner(IomapPosixFileAttributeView posix) implements FileOwnerAttributeView {
        @Override
        public String name() {
            return "owner";
        }

        @Override
        public UserPrincipal getOwner() throws IOException {
            return posix.getOwner();
        }

        @Override
        public void setOwner(UserPrincipal owner) throws IOException {
            posix.setOwner(owner);
        }
    }
}
