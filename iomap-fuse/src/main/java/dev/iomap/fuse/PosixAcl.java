package dev.iomap.fuse;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;

/**
 * A POSIX ACL in the form Linux exchanges it as the value of {@code system.posix_acl_access} and
 * {@code system.posix_acl_default} ({@code posix_acl_xattr}: a little-endian header holding version 2,
 * then one 8-byte entry per grant, {@code u16 tag, u16 perm, u32 id}), and the kernel's algorithms on
 * it (fs/posix_acl.c): {@link #parse} with {@code posix_acl_valid}'s checks, {@link #equivalentMode}
 * ({@code posix_acl_equiv_mode}), {@link #chmod} ({@code __posix_acl_chmod}) and {@link #create}
 * ({@code __posix_acl_create_masq}). Immutable; every operation returns a new ACL.
 *
 * @param entries the entries in the order they came (valid: {@link #parse} checked it)
 */
record PosixAcl(List<Entry> entries) {
    /** {@code POSIX_ACL_XATTR_VERSION}. */
    static final int VERSION = 2;
    /** Bytes of the header and of each entry. */
    static final int HEADER_BYTES = 4;
    static final int ENTRY_BYTES = 8;
    /** The tags ({@code ACL_USER_OBJ} ...), in the order a valid ACL lists them. */
    static final int USER_OBJ = 0x01;
    static final int USER = 0x02;
    static final int GROUP_OBJ = 0x04;
    static final int GROUP = 0x08;
    static final int MASK = 0x10;
    static final int OTHER = 0x20;
    /** The id written for the entries that name no user or group ({@code ACL_UNDEFINED_ID}). */
    static final int UNDEFINED_ID = -1;
    /** Read, write and execute: the only permission bits. */
    private static final int RWX = 07;
    private static final int PERMISSIONS = 0777;

    /**
     * One grant.
     *
     * @param tag which class it grants to ({@link #USER_OBJ} ...)
     * @param perm read (4), write (2), execute (1)
     * @param id the user or group for {@link #USER} and {@link #GROUP}; {@link #UNDEFINED_ID} otherwise
     */
    record Entry(int tag, int perm, int id) {
        Entry withPerm(int newPerm) {
            return new Entry(tag, newPerm, id);
        }
    }

    PosixAcl {
        entries = List.copyOf(entries);
    }

    /**
     * Decodes and validates an ACL value, as the kernel's {@code posix_acl_from_xattr} and
     * {@code posix_acl_valid}: the header's version, a whole number of entries, no permission bit but
     * read, write and execute, exactly one each of user-owner, group-owner and other, named users after
     * the owner and named groups after the owning group, and a mask where there are named entries.
     *
     * @param value the attribute's value
     * @return the ACL; no entries for a header alone (the kernel's way of saying "remove it")
     * @throws ErrnoException EINVAL for a malformed value, EOPNOTSUPP for another version (as the kernel)
     */
    static PosixAcl parse(byte[] value) throws ErrnoException {
        if (value.length < HEADER_BYTES || (value.length - HEADER_BYTES) % ENTRY_BYTES != 0) {
            throw new ErrnoException(LinuxErrno.EINVAL, "a POSIX ACL of " + value.length
                    + " bytes: expected a 4-byte header and 8-byte entries");
        }
        ByteBuffer in = ByteBuffer.wrap(value).order(ByteOrder.LITTLE_ENDIAN);
        int version = in.getInt();
        if (version != VERSION) {
            throw new ErrnoException(LinuxErrno.EOPNOTSUPP, "a POSIX ACL of version " + version + ": only version "
                    + VERSION + " is known");
        }
        List<Entry> entries = new ArrayList<>();
        while (in.hasRemaining()) {
            int tag = Short.toUnsignedInt(in.getShort());
            int perm = Short.toUnsignedInt(in.getShort());
            int id = in.getInt();
            boolean named = tag == USER || tag == GROUP;
            entries.add(new Entry(tag, perm, named ? id : UNDEFINED_ID));
        }
        PosixAcl acl = new PosixAcl(entries);
        if (!entries.isEmpty()) {
            acl.validate();
        }
        return acl;
    }

    /** {@code posix_acl_valid}: the entry order and classes described at {@link #parse}. */
    private void validate() throws ErrnoException {
        int state = USER_OBJ;
        boolean needsMask = false;
        for (Entry entry : entries) {
            if ((entry.perm() & ~RWX) != 0) {
                throw invalid("permission bits " + Integer.toOctalString(entry.perm()));
            }
            state = switch (entry.tag()) {
                case USER_OBJ -> expect(state, USER_OBJ, USER, entry);
                case USER -> {
                    needsMask = true;
                    yield expect(state, USER, USER, entry);
                }
                case GROUP_OBJ -> expect(state, USER, GROUP, entry);
                case GROUP -> {
                    needsMask = true;
                    yield expect(state, GROUP, GROUP, entry);
                }
                case MASK -> expect(state, GROUP, OTHER, entry);
                case OTHER -> {
                    if (state != OTHER && (state != GROUP || needsMask)) {
                        throw invalid(needsMask ? "named entries without a mask" : "an entry out of order");
                    }
                    yield 0;
                }
                default -> throw invalid("tag " + entry.tag());
            };
        }
        if (state != 0) {
            throw invalid("no other entry at the end");
        }
    }

    private static int expect(int state, int wanted, int next, Entry entry) throws ErrnoException {
        if (state != wanted) {
            throw invalid("tag " + entry.tag() + " out of order or repeated");
        }
        return next;
    }

    private static ErrnoException invalid(String what) {
        return new ErrnoException(LinuxErrno.EINVAL, "invalid POSIX ACL: " + what);
    }

    /** @return whether the ACL has no entries (the value was a header alone) */
    boolean isEmpty() {
        return entries.isEmpty();
    }

    /** @return the value's bytes ({@code posix_acl_to_xattr}) */
    byte[] encode() {
        ByteBuffer out = ByteBuffer.allocate(HEADER_BYTES + ENTRY_BYTES * entries.size()).order(ByteOrder.LITTLE_ENDIAN);
        out.putInt(VERSION);
        for (Entry entry : entries) {
            out.putShort((short) entry.tag()).putShort((short) entry.perm()).putInt(entry.id());
        }
        return out.array();
    }

    /**
     * The ACL of a mode alone: user-owner, group-owner and other.
     *
     * @param mode a file mode
     * @return its three entries
     */
    static PosixAcl ofMode(int mode) {
        return new PosixAcl(List.of(new Entry(USER_OBJ, (mode >> 6) & RWX, UNDEFINED_ID),
                new Entry(GROUP_OBJ, (mode >> 3) & RWX, UNDEFINED_ID), new Entry(OTHER, mode & RWX, UNDEFINED_ID)));
    }

    /**
     * What an access ACL makes of a file's mode ({@code posix_acl_equiv_mode}): the owner's bits from
     * user-owner, the group bits from the mask where there is one (else from group-owner), the other bits
     * from other; the bits above the permissions are kept.
     *
     * @param mode the file's mode
     * @return the mode with the ACL's permission bits
     */
    int equivalentMode(int mode) {
        int bits = 0;
        for (Entry entry : entries) {
            switch (entry.tag()) {
                case USER_OBJ -> bits |= entry.perm() << 6;
                case GROUP_OBJ -> bits |= entry.perm() << 3;
                case MASK -> bits = (bits & ~(RWX << 3)) | (entry.perm() << 3);
                case OTHER -> bits |= entry.perm();
                default -> {
                    // named entries leave the mode alone
                }
            }
        }
        return (mode & ~PERMISSIONS) | bits;
    }

    /**
     * @return whether the mode says everything the ACL says (no named entries and no mask), so that an
     *     access ACL is kept as the mode alone
     */
    boolean isEquivalentToMode() {
        return entries.stream().allMatch(e -> e.tag() == USER_OBJ || e.tag() == GROUP_OBJ || e.tag() == OTHER);
    }

    /**
     * The access ACL after chmod ({@code __posix_acl_chmod}): user-owner, the mask (group-owner where
     * there is no mask) and other take the mode's three classes; named entries stay.
     *
     * @param mode the new mode
     * @return the ACL that matches it
     */
    PosixAcl chmod(int mode) {
        boolean hasMask = entries.stream().anyMatch(e -> e.tag() == MASK);
        List<Entry> changed = new ArrayList<>(entries.size());
        for (Entry entry : entries) {
            changed.add(switch (entry.tag()) {
                case USER_OBJ -> entry.withPerm((mode >> 6) & RWX);
                case MASK -> entry.withPerm((mode >> 3) & RWX);
                case GROUP_OBJ -> hasMask ? entry : entry.withPerm((mode >> 3) & RWX);
                case OTHER -> entry.withPerm(mode & RWX);
                default -> entry;
            });
        }
        return new PosixAcl(changed);
    }

    /**
     * What a new file or directory inherits from its directory's default ACL ({@code posix_acl_create}).
     *
     * @param accessAcl the new node's access ACL, or null where the mode alone says it all
     * @param mode the new node's mode: the mode asked for, limited by the ACL (no umask)
     */
    record Inherited(PosixAcl accessAcl, int mode) {
    }

    /**
     * Applies the mode a creation asks for to this default ACL ({@code __posix_acl_create_masq}): the
     * user-owner, other and mask (group-owner where there is no mask) entries keep only what the mode
     * grants, and the mode keeps only what they grant.
     *
     * @param mode the mode the creating call asked for (no umask applied)
     * @return the new node's access ACL and mode
     */
    Inherited create(int mode) {
        boolean hasMask = entries.stream().anyMatch(e -> e.tag() == MASK);
        int bits = mode & PERMISSIONS;
        List<Entry> masked = new ArrayList<>(entries.size());
        for (Entry entry : entries) {
            Entry kept = switch (entry.tag()) {
                case USER_OBJ -> entry.withPerm(entry.perm() & (bits >> 6));
                case OTHER -> entry.withPerm(entry.perm() & bits);
                case MASK -> entry.withPerm(entry.perm() & (bits >> 3));
                case GROUP_OBJ -> hasMask ? entry : entry.withPerm(entry.perm() & (bits >> 3));
                default -> entry;
            };
            masked.add(kept);
        }
        int limited = 0;
        for (Entry entry : masked) {
            switch (entry.tag()) {
                case USER_OBJ -> limited |= (bits & (RWX << 6)) & (entry.perm() << 6);
                case OTHER -> limited |= (bits & RWX) & entry.perm();
                case MASK -> limited |= (bits & (RWX << 3)) & (entry.perm() << 3);
                case GROUP_OBJ -> limited |= hasMask ? 0 : (bits & (RWX << 3)) & (entry.perm() << 3);
                default -> {
                    // named entries do not limit the mode
                }
            }
        }
        PosixAcl access = new PosixAcl(masked);
        return new Inherited(access.isEquivalentToMode() ? null : access, (mode & ~PERMISSIONS) | limited);
    }
}
