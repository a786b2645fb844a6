package dev.iomap.nio;

import dev.iomap.api.AttributeChange;
import dev.iomap.api.Capability;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.GroupPrincipal;
import java.nio.file.attribute.UserPrincipal;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;

/**
 * {@code Files.readAttributes(path, "view:names")} and {@code Files.setAttribute(path, "view:name", value)}
 * with the JDK's Linux view and attribute names:
 *
 * <ul>
 *   <li>"basic": lastModifiedTime, lastAccessTime, creationTime, size, isRegularFile, isDirectory,
 *       isSymbolicLink, isOther, fileKey (the three times settable; creationTime is ignored);
 *   <li>"owner": owner (settable);
 *   <li>"posix": the basic ones and permissions, owner, group (all three settable);
 *   <li>"unix": the posix ones and mode ({@code st_mode}: type and permission bits), ino, dev (0: an
 *       image has no device number), rdev (0: there are no device files), nlink, uid, gid, ctime; mode
 *       (permission bits, {@code 07777} at most), uid and gid settable;
 *   <li>"user": each extended attribute of the {@code user.} namespace as a {@code byte[]} ("*" for
 *       all); set from a {@code byte[]} or a {@link ByteBuffer}.
 * </ul>
 *
 * "owner", "posix" and "unix" need {@link Capability#POSIX_ATTRIBUTES}, "user" needs
 * {@link Capability#XATTRS}: without, the view is an {@link UnsupportedOperationException}. A name the
 * view does not have is an {@link IllegalArgumentException}; a value of the wrong type a
 * {@link ClassCastException}.
 */
final class AttributeMaps {
    private static final List<String> BASIC = List.of("lastModifiedTime", "lastAccessTime", "creationTime", "size",
            "isRegularFile", "isDirectory", "isSymbolicLink", "isOther", "fileKey");
    private static final List<String> OWNER = List.of("owner");
    private static final List<String> POSIX = concat(BASIC, List.of("permissions", "owner", "group"));
    private static final List<String> UNIX = concat(POSIX, List.of("mode", "ino", "dev", "rdev", "nlink", "uid",
            "gid", "ctime"));
    private static final Map<String, Function<IomapFileAttributes, Object>> VALUES = values();

    private AttributeMaps() {
    }

    private static List<String> concat(List<String> first, List<String> second) {
        return java.util.stream.Stream.concat(first.stream(), second.stream()).toList();
    }

    private static Map<String, Function<IomapFileAttributes, Object>> values() {
        Map<String, Function<IomapFileAttributes, Object>> values = new LinkedHashMap<>();
        values.put("lastModifiedTime", IomapFileAttributes::lastModifiedTime);
        values.put("lastAccessTime", IomapFileAttributes::lastAccessTime);
        values.put("creationTime", IomapFileAttributes::creationTime);
        values.put("size", IomapFileAttributes::size);
        values.put("isRegularFile", IomapFileAttributes::isRegularFile);
        values.put("isDirectory", IomapFileAttributes::isDirectory);
        values.put("isSymbolicLink", IomapFileAttributes::isSymbolicLink);
        values.put("isOther", IomapFileAttributes::isOther);
        values.put("fileKey", IomapFileAttributes::fileKey);
        values.put("permissions", IomapFileAttributes::permissions);
        values.put("owner", IomapFileAttributes::owner);
        values.put("group", IomapFileAttributes::group);
        values.put("mode", attributes -> attributes.stat().posixMode());
        values.put("ino", attributes -> attributes.stat().ino());
        values.put("dev", attributes -> 0L);
        values.put("rdev", attributes -> 0L);
        values.put("nlink", attributes -> attributes.stat().linkCount());
        values.put("uid", attributes -> attributes.stat().uid());
        values.put("gid", attributes -> attributes.stat().gid());
        values.put("ctime", IomapFileAttributes::changeTime);
        return Map.copyOf(values);
    }

    /** A {@code "view:names"} string, split. */
    private record Request(String view, String names) {
        static Request parse(String attributes) {
            int colon = attributes.indexOf(':');
            return colon < 0 ? new Request("basic", attributes)
                    : new Request(attributes.substring(0, colon), attributes.substring(colon + 1));
        }
    }

    /**
     * @param path the file
     * @param attributes {@code [view:]name[,name...]} or {@code [view:]*}
     * @param follow whether a symbolic link as the last name is followed
     * @return the values by name, in the order asked ("*": in the order of the list above)
     */
    static Map<String, Object> read(IomapPath path, String attributes, boolean follow) throws IOException {
        Request request = Request.parse(attributes);
        IomapNioFileSystem fs = path.getFileSystem();
        String[] asked = request.names().split(",");
        if (request.view().equals("user")) {
            return readUser(new IomapUserDefinedFileAttributeView(path, follow), fs, asked);
        }
        List<String> names = names(fs, request.view());
        IomapFileAttributes read = fs.readAttributes(path, follow);
        Map<String, Object> result = new LinkedHashMap<>();
        for (String name : asked) {
            if (name.equals("*")) {
                names.forEach(each -> result.put(each, VALUES.get(each).apply(read)));
            } else if (names.contains(name)) {
                result.put(name, VALUES.get(name).apply(read));
            } else {
                throw new IllegalArgumentException("'" + name + "' is not an attribute of the " + request.view() + " view");
            }
        }
        return result;
    }

    private static Map<String, Object> readUser(IomapUserDefinedFileAttributeView view, IomapNioFileSystem fs,
            String[] asked) throws IOException {
        fs.requireForView(Capability.XATTRS, "the \"user\" attribute view");
        Map<String, Object> result = new LinkedHashMap<>();
        for (String name : asked) {
            for (String each : name.equals("*") ? view.list() : List.of(name)) {
                ByteBuffer value = ByteBuffer.allocate(view.size(each));
                view.read(each, value);
                result.put(each, value.array());
            }
        }
        return result;
    }

    private static List<String> names(IomapNioFileSystem fs, String view) {
        List<String> names = switch (view) {
            case "basic" -> BASIC;
            case "owner" -> OWNER;
            case "posix" -> POSIX;
            case "unix" -> UNIX;
            default -> throw new UnsupportedOperationException("iomap file systems have no attribute view '" + view
                    + "'");
        };
        if (names != BASIC) {
            fs.requireForView(Capability.POSIX_ATTRIBUTES, "the \"" + view + "\" attribute view");
        }
        return names;
    }

    /**
     * @param path the file
     * @param attribute {@code [view:]name}
     * @param value the new value
     * @param follow whether a symbolic link as the last name is followed
     */
    static void set(IomapPath path, String attribute, Object value, boolean follow) throws IOException {
        Request request = Request.parse(attribute);
        String name = request.names();
        IomapNioFileSystem fs = path.getFileSystem();
        if (request.view().equals("user")) {
            fs.requireForView(Capability.XATTRS, "the \"user\" attribute view");
            ByteBuffer buffer = value instanceof byte[] bytes ? ByteBuffer.wrap(bytes) : (ByteBuffer) value;
            new IomapUserDefinedFileAttributeView(path, follow).write(name, buffer);
            return;
        }
        List<String> names = names(fs, request.view());
        if (!names.contains(name)) {
            throw new IllegalArgumentException("'" + name + "' is not an attribute of the " + request.view() + " view");
        }
        var view = new IomapPosixFileAttributeView(path, follow);
        switch (name) {
            case "lastModifiedTime" -> view.setTimes((FileTime) value, null, null);
            case "lastAccessTime" -> view.setTimes(null, (FileTime) value, null);
            case "creationTime" -> view.setTimes(null, null, (FileTime) value);
            case "permissions" -> view.setPermissions(permissions((Set<?>) value));
            case "owner" -> view.setOwner((UserPrincipal) value);
            case "group" -> view.setGroup((GroupPrincipal) value);
            case "mode" -> fs.setAttributes(path, follow, AttributeChange.none().withMode((Integer) value));
            case "uid" -> fs.setAttributes(path, follow, AttributeChange.none().withUid((Integer) value));
            case "gid" -> fs.setAttributes(path, follow, AttributeChange.none().withGid((Integer) value));
            default -> throw new IllegalArgumentException("'" + name + "' of the " + request.view()
                    + " view cannot be set");
        }
    }

    @SuppressWarnings("unchecked")
    private static Set<java.nio.file.attribute.PosixFilePermission> permissions(Set<?> value) {
        IomapFileAttributes.Permissions.mode(value);
        return (Set<java.nio.file.attribute.PosixFilePermission>) value;
    }
}
