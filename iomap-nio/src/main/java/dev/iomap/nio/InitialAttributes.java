package dev.iomap.nio;

import java.nio.file.attribute.FileAttribute;
import java.util.Objects;
import java.util.OptionalInt;
import java.util.Set;

/**
 * The {@link FileAttribute}s given to {@code createFile}, {@code createDirectory},
 * {@code newByteChannel} and {@code createSymbolicLink}: only the permissions
 * ({@code "posix:permissions"} or {@code "unix:permissions"}, a {@code Set<PosixFilePermission>}, as
 * {@link java.nio.file.attribute.PosixFilePermissions#asFileAttribute} makes), the last one given
 * winning. The permissions are kept exactly: no umask is applied (the image is not the host's file
 * system, and the provider is not the kernel).
 */
final class InitialAttributes {
    private InitialAttributes() {
    }

    /**
     * @param attributes what was given
     * @param posix whether the file system keeps modes ({@link dev.iomap.api.Capability#POSIX_ATTRIBUTES})
     * @return the mode asked for, or empty if none
     * @throws UnsupportedOperationException for an attribute other than the permissions, or for the
     *     permissions where modes are not kept (they cannot be set when the file is created)
     * @throws NullPointerException if an attribute or its value is null
     * @throws ClassCastException if the permissions are not a set of {@code PosixFilePermission}
     */
    static OptionalInt mode(FileAttribute<?>[] attributes, boolean posix) {
        OptionalInt mode = OptionalInt.empty();
        for (FileAttribute<?> attribute : attributes) {
            Objects.requireNonNull(attribute, "attribute");
            String name = attribute.name();
            if (!name.equals("posix:permissions") && !name.equals("unix:permissions")) {
                throw new UnsupportedOperationException("'" + name + "' cannot be set when a file is created on an"
                        + " iomap file system (only posix:permissions can)");
            }
            if (!posix) {
                throw new UnsupportedOperationException("'" + name + "': this iomap file system keeps no"
                        + " permissions (its adapter does not declare POSIX_ATTRIBUTES)");
            }
            Set<?> permissions = (Set<?>) Objects.requireNonNull(attribute.value(), name);
            mode = OptionalInt.of(IomapFileAttributes.Permissions.mode(permissions));
        }
        return mode;
    }
}
