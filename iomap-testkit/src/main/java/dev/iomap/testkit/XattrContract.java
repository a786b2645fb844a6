package dev.iomap.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import dev.iomap.api.Capability;
import dev.iomap.api.FileNames;
import dev.iomap.api.FileType;
import dev.iomap.api.IomapFile;
import dev.iomap.api.NewInodeAttributes;
import dev.iomap.api.NoSuchAttributeException;
import dev.iomap.api.NotSupportedException;
import dev.iomap.api.OperationNotPermittedException;
import dev.iomap.api.XattrLimitException;
import dev.iomap.api.XattrMode;
import dev.iomap.api.Xattrs;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.NoSuchFileException;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Extended attributes, held to Linux's behaviour through the {@link dev.iomap.api.IomapFileSystem}
 * API: set, get, list (in {@link FileNames#BYTE_ORDER}) and remove; {@code XATTR_CREATE} and
 * {@code XATTR_REPLACE}; ENODATA as {@link NoSuchAttributeException}; the limits of 255-byte names and
 * 65536-byte values ({@link XattrLimitException}); only the {@code user.}, {@code trusted.} and
 * {@code security.} namespaces; no {@code user.} attributes on symbolic links (EPERM); values kept byte
 * for byte; attributes belonging to the inode (shared by its hard links, gone with it). Every state is
 * checked again after an unmount, fsck and mount.
 *
 * <p>Needs {@link Capability#XATTRS}; tests skip naming it (or the other capability they need) when it is
 * not declared, and {@link #withoutTheCapabilityXattrsAreNotSupported} proves the calls fail then.
 */
public abstract class XattrContract extends AdapterContract {

    private static byte[] bytes(String value) {
        return value.getBytes(StandardCharsets.UTF_8);
    }

    /** Creates a file with a few bytes and closes it (so that unlinking it evicts its inode). */
    private void file(String path) throws IOException {
        try (IomapFile file = fs.create(path)) {
            write(file, 0, bytes("data of " + path));
        }
    }

    private void set(String path, String name, byte[] value) throws IOException {
        fs.setXattr(path, name, value, XattrMode.ANY);
    }

    @Test
    void withoutTheCapabilityXattrsAreNotSupported() {
        assumeFalse(has(Capability.XATTRS), "XATTRS is declared");
        assertThatThrownBy(() -> fs.listXattrs("/")).isInstanceOf(NotSupportedException.class);
        assertThatThrownBy(() -> fs.setXattr("/", "user.a", new byte[1], XattrMode.ANY))
                .isInstanceOf(NotSupportedException.class);
        assertThatThrownBy(() -> fs.getXattr("/", "user.a")).isInstanceOf(NotSupportedException.class);
        assertThatThrownBy(() -> fs.removeXattr("/", "user.a")).isInstanceOf(NotSupportedException.class);
    }

    @Test
    void setGetListAndRemoveInByteOrderAcrossRemounts() throws IOException {
        assumeCapable(Capability.XATTRS);
        file("/f");
        String notUtf8 = FileNames.decode(new byte[] {'u', 's', 'e', 'r', '.', (byte) 0xfe, 'x'});
        // Sorted by bytes: 'a' (61) < 'b' < U+FF61 (EF BD A1) < U+1F600 (F0 9F 98 80) < FE.
        List<String> sorted = List.of("security.capability", "trusted.t", "user.a", "user.b", "user.\uFF61",
                "user.\uD83D\uDE00", notUtf8);
        for (String name : List.of(notUtf8, "user.\uD83D\uDE00", "user.b", "trusted.t", "user.\uFF61", "user.a",
                "security.capability")) {
            set("/f", name, bytes("value of " + name));
        }
        assertThat(fs.listXattrs("/f")).containsExactlyElementsOf(sorted);
        remountChecked();
        assertThat(fs.listXattrs("/f")).containsExactlyElementsOf(sorted);
        for (String name : sorted) {
            assertThat(fs.getXattr("/f", name)).as(name).isEqualTo(bytes("value of " + name));
        }
        fs.removeXattr("/f", "user.b");
        fs.removeXattr("/f", notUtf8);
        assertThatThrownBy(() -> fs.getXattr("/f", "user.b")).isInstanceOf(NoSuchAttributeException.class);
        remountChecked();
        assertThat(fs.listXattrs("/f")).containsExactly("security.capability", "trusted.t", "user.a", "user.\uFF61",
                "user.\uD83D\uDE00");
        assertThatThrownBy(() -> fs.getXattr("/f", notUtf8)).isInstanceOf(NoSuchAttributeException.class);
        assertThat(fs.getXattr("/f", "user.a")).isEqualTo(bytes("value of user.a"));
    }

    @Test
    void createAndReplaceModesAreExclusive() throws IOException {
        assumeCapable(Capability.XATTRS);
        file("/f");
        fs.setXattr("/f", "user.c", bytes("one"), XattrMode.CREATE);
        assertThatThrownBy(() -> fs.setXattr("/f", "user.c", bytes("two"), XattrMode.CREATE))
                .isInstanceOf(FileAlreadyExistsException.class);
        assertThat(fs.getXattr("/f", "user.c")).isEqualTo(bytes("one"));
        assertThatThrownBy(() -> fs.setXattr("/f", "user.r", bytes("x"), XattrMode.REPLACE))
                .isInstanceOf(NoSuchAttributeException.class);
        assertThat(fs.listXattrs("/f")).containsExactly("user.c");
        fs.setXattr("/f", "user.c", bytes("three, longer"), XattrMode.REPLACE);
        fs.setXattr("/f", "user.c", bytes("4"), XattrMode.ANY);
        fs.setXattr("/f", "user.any", bytes("new"), XattrMode.ANY);
        remountChecked();
        assertThat(fs.getXattr("/f", "user.c")).isEqualTo(bytes("4"));
        assertThat(fs.getXattr("/f", "user.any")).isEqualTo(bytes("new"));
        assertThat(fs.listXattrs("/f")).containsExactly("user.any", "user.c");
    }

    @Test
    void getAndRemoveOfAMissingAttributeAreNoData() throws IOException {
        assumeCapable(Capability.XATTRS);
        file("/f");
        assertThatThrownBy(() -> fs.getXattr("/f", "user.none")).isInstanceOf(NoSuchAttributeException.class);
        assertThatThrownBy(() -> fs.removeXattr("/f", "user.none")).isInstanceOf(NoSuchAttributeException.class);
        set("/f", "user.x", bytes("x"));
        fs.removeXattr("/f", "user.x");
        assertThatThrownBy(() -> fs.removeXattr("/f", "user.x")).isInstanceOf(NoSuchAttributeException.class);
        assertThat(fs.listXattrs("/f")).isEmpty();
        assertThatThrownBy(() -> fs.listXattrs("/missing")).isInstanceOf(NoSuchFileException.class);
        assertThatThrownBy(() -> set("/missing", "user.x", new byte[1])).isInstanceOf(NoSuchFileException.class);
    }

    @Test
    void namesOf255BytesAreKeptAndLongerOrEmptyOnesAreOutOfRange() throws IOException {
        assumeCapable(Capability.XATTRS);
        file("/f");
        String ascii = "user." + "n".repeat(Xattrs.MAX_NAME_BYTES - 5);
        String accented = "user." + "\u00e9".repeat((Xattrs.MAX_NAME_BYTES - 5) / 2);
        assertThat(FileNames.encode(accented)).hasSize(Xattrs.MAX_NAME_BYTES);
        set("/f", ascii, bytes("a"));
        set("/f", accented, bytes("b"));
        for (String tooLong : List.of(ascii + "n", accented + "e")) {
            assertThatThrownBy(() -> set("/f", tooLong, bytes("x"))).isInstanceOfSatisfying(XattrLimitException.class,
                    e -> assertThat(e.kind()).isEqualTo(XattrLimitException.Kind.NAME));
            assertThatThrownBy(() -> fs.getXattr("/f", tooLong)).isInstanceOf(XattrLimitException.class);
        }
        assertThatThrownBy(() -> set("/f", "", bytes("x"))).isInstanceOfSatisfying(XattrLimitException.class,
                e -> assertThat(e.kind()).isEqualTo(XattrLimitException.Kind.NAME));
        assertThatThrownBy(() -> set("/f", "user.", bytes("x"))).isInstanceOf(IllegalArgumentException.class);
        remountChecked();
        assertThat(fs.listXattrs("/f")).containsExactly(ascii, accented);
        assertThat(fs.getXattr("/f", ascii)).isEqualTo(bytes("a"));
        assertThat(fs.getXattr("/f", accented)).isEqualTo(bytes("b"));
    }

    @Test
    void valuesUpTo65536BytesAreKeptExactlyAndLongerOnesAreTooBig() throws IOException {
        assumeCapable(Capability.XATTRS);
        file("/f");
        byte[] largest = TestData.pattern(11, 0, Xattrs.MAX_VALUE_BYTES);
        byte[] everyByte = new byte[512];
        for (int i = 0; i < everyByte.length; i++) {
            everyByte[i] = (byte) (i * 7 + 3);
        }
        everyByte[0] = 0;
        everyByte[everyByte.length - 1] = 0;
        set("/f", "user.largest", largest);
        set("/f", "user.binary", everyByte);
        set("/f", "user.empty", new byte[0]);
        byte[] tooBig = new byte[Xattrs.MAX_VALUE_BYTES + 1];
        assertThatThrownBy(() -> set("/f", "user.big", tooBig)).isInstanceOfSatisfying(XattrLimitException.class,
                e -> assertThat(e.kind()).isEqualTo(XattrLimitException.Kind.VALUE));
        assertThatThrownBy(() -> set("/f", "user.largest", tooBig)).isInstanceOf(XattrLimitException.class);
        remountChecked();
        assertThat(fs.getXattr("/f", "user.largest")).isEqualTo(largest);
        assertThat(fs.getXattr("/f", "user.binary")).isEqualTo(everyByte);
        assertThat(fs.getXattr("/f", "user.empty")).isEmpty();
        assertThat(fs.listXattrs("/f")).containsExactly("user.binary", "user.empty", "user.largest");
        // A value is a copy both ways: changing the caller's array changes nothing stored.
        byte[] mine = bytes("mine");
        set("/f", "user.copy", mine);
        mine[0] = 'X';
        byte[] got = fs.getXattr("/f", "user.copy");
        got[1] = 'X';
        assertThat(fs.getXattr("/f", "user.copy")).isEqualTo(bytes("mine"));
    }

    @Test
    void onlyTheUserTrustedAndSecurityNamespacesAndThePosixAclsAreSupported() throws IOException {
        assumeCapable(Capability.XATTRS);
        file("/f");
        for (String name : List.of("system.posix_acl_other", "system.nfs4_acl", "foo.bar", "User.upper", "userx")) {
            assertThatThrownBy(() -> set("/f", name, bytes("x"))).as(name).isInstanceOf(NotSupportedException.class);
            assertThatThrownBy(() -> fs.getXattr("/f", name)).as(name).isInstanceOf(NotSupportedException.class);
        }
        set("/f", "trusted.overlay.opaque", bytes("y"));
        set("/f", "security.selinux", bytes("system_u:object_r:etc_t:s0\0"));
        byte[] acl = {2, 0, 0, 0, 1, 0, 6, 0, -1, -1, -1, -1};   // opaque to the file system
        set("/f", "system.posix_acl_access", acl);
        remountChecked();
        assertThat(fs.listXattrs("/f")).containsExactly("security.selinux", "system.posix_acl_access",
                "trusted.overlay.opaque");
        assertThat(fs.getXattr("/f", "system.posix_acl_access")).isEqualTo(acl);
        assertThat(fs.getXattr("/f", "security.selinux")).isEqualTo(bytes("system_u:object_r:etc_t:s0\0"));
    }

    @Test
    void aSymlinkRefusesUserAttributesButKeepsTrustedOnesOfItsOwn() throws IOException {
        assumeCapable(Capability.XATTRS, Capability.SYMLINKS);
        file("/f");
        fs.createSymbolicLink("/l", "f", NewInodeAttributes.defaults(FileType.SYMLINK));
        assertThatThrownBy(() -> set("/l", "user.x", bytes("x"))).isInstanceOf(OperationNotPermittedException.class);
        assertThatThrownBy(() -> fs.removeXattr("/l", "user.x")).isInstanceOf(OperationNotPermittedException.class);
        assertThatThrownBy(() -> fs.getXattr("/l", "user.x")).isInstanceOf(NoSuchAttributeException.class);
        set("/l", "trusted.link", bytes("on the link"));
        remountChecked();
        assertThat(fs.listXattrs("/l")).containsExactly("trusted.link");
        assertThat(fs.listXattrs("/f")).isEmpty();
        assertThat(fs.getXattr("/l", "trusted.link")).isEqualTo(bytes("on the link"));
    }

    @Test
    void directoriesHoldAttributesToo() throws IOException {
        assumeCapable(Capability.XATTRS, Capability.DIRECTORIES);
        fs.mkdir("/d");
        set("/d", "user.dir", bytes("d"));
        set("/", "trusted.root", bytes("r"));
        remountChecked();
        assertThat(fs.getXattr("/d", "user.dir")).isEqualTo(bytes("d"));
        assertThat(fs.getXattr("/", "trusted.root")).isEqualTo(bytes("r"));
        fs.removeXattr("/d", "user.dir");
        fs.rmdir("/d");
        fs.mkdir("/d");
        assertThat(fs.listXattrs("/d")).isEmpty();
    }

    @Test
    void hardLinksShareTheAttributesOfTheirInode() throws IOException {
        assumeCapable(Capability.XATTRS, Capability.HARD_LINKS);
        file("/a");
        fs.createLink("/b", "/a");
        set("/a", "user.shared", bytes("one inode"));
        remountChecked();
        assertThat(fs.getXattr("/b", "user.shared")).isEqualTo(bytes("one inode"));
        fs.removeXattr("/b", "user.shared");
        assertThat(fs.listXattrs("/a")).isEmpty();
    }

    @Test
    void manyAttributesOnOneFileAreAllKept() throws IOException {
        assumeCapable(Capability.XATTRS);
        file("/f");
        List<String> names = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            String name = String.format("user.attribute-%03d", i);
            names.add(name);
            set("/f", name, TestData.pattern(i, 0, 100 + i));
        }
        remountChecked();
        assertThat(fs.listXattrs("/f")).containsExactlyElementsOf(names);
        for (int i = 0; i < 100; i++) {
            assertThat(fs.getXattr("/f", names.get(i))).isEqualTo(TestData.pattern(i, 0, 100 + i));
        }
    }

    @Test
    void attributesGoWithTheirInodeAndNoNewInodeInheritsThem() throws IOException {
        assumeCapable(Capability.XATTRS);
        for (int round = 0; round < 3; round++) {
            for (int i = 0; i < 8; i++) {
                file("/f" + i);
                set("/f" + i, "user.old", bytes("stale " + round));
                set("/f" + i, "trusted.old", bytes("stale"));
            }
            for (int i = 0; i < 8; i++) {
                fs.unlink("/f" + i);
            }
            if (round == 1) {
                remountChecked();
            }
            for (int i = 0; i < 8; i++) {
                file("/g" + round + "-" + i);
                assertThat(fs.listXattrs("/g" + round + "-" + i))
                        .as("attributes of a new inode %d", fs.stat("/g" + round + "-" + i).ino()).isEmpty();
            }
        }
        remountChecked();
        for (int round = 0; round < 3; round++) {
            for (int i = 0; i < 8; i++) {
                assertThat(fs.listXattrs("/g" + round + "-" + i)).isEmpty();
            }
        }
    }
}
