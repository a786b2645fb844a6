package dev.iomap.nio;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.GroupPrincipal;
import java.nio.file.attribute.UserPrincipal;
import java.nio.file.attribute.UserPrincipalLookupService;
import java.nio.file.attribute.UserPrincipalNotFoundException;
import java.util.List;
import java.util.Optional;

/**
 * Names of users and groups by this machine's {@code /etc/passwd} and {@code /etc/group} (name in the
 * first field, numeric id in the third), read on every lookup, so a change to them is seen at once.
 * An image's files keep numeric ids; the names are only for people. A name these files do not know,
 * but which is a decimal number, is that id (as {@code chown 1234 file} does). Other name services
 * (LDAP, NSS modules) are not asked. Thread-safe.
 */
final class IomapUserPrincipalLookupService extends UserPrincipalLookupService {
    /** The machine's own files. */
    static final IomapUserPrincipalLookupService SYSTEM = new IomapUserPrincipalLookupService(Path.of("/etc/passwd"),
            Path.of("/etc/group"));

    private final Path passwd;
    private final Path group;

    /**
     * @param passwd a file in {@code /etc/passwd}'s format
     * @param group a file in {@code /etc/group}'s format
     */
    IomapUserPrincipalLookupService(Path passwd, Path group) {
        this.passwd = passwd;
        this.group = group;
    }

    /**
     * @param uid a user id
     * @return the user, named by the passwd file (or by the id if it does not know it)
     * @throws IOException if the passwd file exists but cannot be read
     */
    IomapPrincipal user(int uid) throws IOException {
        return new IomapPrincipal(uid, nameOf(passwd, uid).orElse(Integer.toUnsignedString(uid)));
    }

    /**
     * @param gid a group id
     * @return the group, named by the group file (or by the id if it does not know it)
     * @throws IOException if the group file exists but cannot be read
     */
    IomapPrincipal.Group group(int gid) throws IOException {
        return new IomapPrincipal.Group(gid, nameOf(group, gid).orElse(Integer.toUnsignedString(gid)));
    }

    /** @throws UserPrincipalNotFoundException if the name is neither a known user nor a number */
    @Override
    public UserPrincipal lookupPrincipalByName(String name) throws IOException {
        Optional<Integer> known = idOf(passwd, name);
        if (known.isPresent()) {
            return new IomapPrincipal(known.get(), name);
        }
        return user(numeric(name));
    }

    /** @throws UserPrincipalNotFoundException if the name is neither a known group nor a number */
    @Override
    public GroupPrincipal lookupPrincipalByGroupName(String name) throws IOException {
        Optional<Integer> known = idOf(group, name);
        if (known.isPresent()) {
            return new IomapPrincipal.Group(known.get(), name);
        }
        return group(numeric(name));
    }

    private static int numeric(String name) throws UserPrincipalNotFoundException {
        if (name.isEmpty() || !name.chars().allMatch(c -> c >= '0' && c <= '9')) {
            throw new UserPrincipalNotFoundException(name);
        }
        try {
            return Integer.parseUnsignedInt(name);
        } catch (NumberFormatException tooLarge) {
            throw new UserPrincipalNotFoundException(name);
        }
    }

    private static Optional<String> nameOf(Path file, int id) throws IOException {
        String wanted = Integer.toUnsignedString(id);
        for (String[] fields : entries(file)) {
            if (fields[2].equals(wanted)) {
                return Optional.of(fields[0]);
            }
        }
        return Optional.empty();
    }

    private static Optional<Integer> idOf(Path file, String name) throws IOException {
        for (String[] fields : entries(file)) {
            if (fields[0].equals(name)) {
                try {
                    return Optional.of(Integer.parseUnsignedInt(fields[2]));
                } catch (NumberFormatException malformed) {
                    return Optional.empty();
                }
            }
        }
        return Optional.empty();
    }

    /** @return the lines of {@code file} with at least three fields; none if it does not exist */
    private static List<String[]> entries(Path file) throws IOException {
        List<String> lines;
        try {
            lines = Files.readAllLines(file, StandardCharsets.UTF_8);
        } catch (NoSuchFileException absent) {
            return List.of();
        }
        return lines.stream().filter(line -> !line.startsWith("#")).map(line -> line.split(":", -1))
                .filter(fields -> fields.length >= 3).toList();
    }
}
