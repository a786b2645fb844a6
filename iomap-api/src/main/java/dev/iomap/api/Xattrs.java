package dev.iomap.api;

import java.util.List;

/**
 * The rules Linux applies to extended attribute names and values, checked once by the core before an
 * adapter sees them. Names are byte strings in {@link FileNames}' form; only the {@code user.},
 * {@code trusted.} and {@code security.} namespaces are stored (the {@code system.} namespace holds
 * ACLs, which no adapter keeps).
 */
public final class Xattrs {
    /** Longest name in bytes, prefix included ({@code XATTR_NAME_MAX}). */
    public static final int MAX_NAME_BYTES = 255;
    /** Longest value in bytes ({@code XATTR_SIZE_MAX}). */
    public static final int MAX_VALUE_BYTES = 65536;
    /** Longest list of names, each with its NUL ({@code XATTR_LIST_MAX}). */
    public static final int MAX_LIST_BYTES = 65536;
    /** The namespaces stored. */
    public static final List<String> NAMESPACES = List.of("user.", "trusted.", "security.");
    /** The access ACL of a file or directory (Linux's {@code XATTR_NAME_POSIX_ACL_ACCESS}). */
    public static final String POSIX_ACL_ACCESS = "system.posix_acl_access";
    /** The default ACL of a directory (Linux's {@code XATTR_NAME_POSIX_ACL_DEFAULT}). */
    public static final String POSIX_ACL_DEFAULT = "system.posix_acl_default";
    /** The only names of the {@code system.} namespace that are stored. */
    public static final List<String> POSIX_ACL_NAMES = List.of(POSIX_ACL_ACCESS, POSIX_ACL_DEFAULT);

    private Xattrs() {
    }

    /**
     * Checks a name.
     *
     * @param name the attribute's full name, prefix included
     * @return its bytes
     * @throws XattrLimitException ({@link XattrLimitException.Kind#NAME}, ERANGE) if empty or longer
     *     than {@value #MAX_NAME_BYTES} bytes
     * @throws UnrepresentableNameException if it stands for no byte string (EILSEQ)
     * @throws NotSupportedException (EOPNOTSUPP) if its namespace is not one of {@link #NAMESPACES} and
     *     it is not one of {@link #POSIX_ACL_NAMES}
     * @throws IllegalArgumentException (EINVAL) if it is only a prefix, or holds a NUL
     */
    public static byte[] checkName(String name) throws XattrLimitException, NotSupportedException {
        if (name.isEmpty()) {
            throw new XattrLimitException(XattrLimitException.Kind.NAME, "empty extended attribute name");
        }
        byte[] bytes = FileNames.encode(name);
        if (bytes.length > MAX_NAME_BYTES) {
            throw new XattrLimitException(XattrLimitException.Kind.NAME, "extended attribute name longer than "
                    + MAX_NAME_BYTES + " bytes (" + bytes.length + ")");
        }
        if (name.indexOf('\0') >= 0) {
            throw new IllegalArgumentException("NUL in extended attribute name");
        }
        if (POSIX_ACL_NAMES.contains(name)) {
            return bytes;
        }
        String namespace = namespaceOf(name);
        if (namespace == null) {
            throw new NotSupportedException("extended attribute '" + name + "': only the "
                    + String.join(", ", NAMESPACES) + " namespaces and the POSIX ACLs (" + String.join(", ", POSIX_ACL_NAMES) + ") are supported");
        }
        if (name.length() == namespace.length()) {
            throw new IllegalArgumentException("extended attribute name '" + name + "' is only a namespace");
        }
        return bytes;
    }

    /**
     * @param name an attribute name
     * @return whether it is in the {@code user.} namespace (refused on symbolic links with EPERM)
     */
    public static boolean isUser(String name) {
        return name.startsWith("user.");
    }

    /**
     * @param name an attribute's name
     * @param value its value
     * @throws XattrLimitException ({@link XattrLimitException.Kind#VALUE}, E2BIG) if longer than
     *     {@value #MAX_VALUE_BYTES} bytes
     */
    public static void checkValue(String name, byte[] value) throws XattrLimitException {
        if (value.length > MAX_VALUE_BYTES) {
            throw new XattrLimitException(XattrLimitException.Kind.VALUE, "value of extended attribute '" + name
                    + "' is " + value.length + " bytes, more than " + MAX_VALUE_BYTES);
        }
    }

    private static String namespaceOf(String name) {
        for (String namespace : NAMESPACES) {
            if (name.startsWith(namespace)) {
                return namespace;
            }
        }
        return null;
    }
}
