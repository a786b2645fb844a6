package dev.iomap.testkit.snapfs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.iomap.api.CorruptFileSystemException;
import dev.iomap.api.FileType;
import dev.iomap.api.FormatOptions;
import dev.iomap.api.MountOptions;
import dev.iomap.devices.RamBlockDevice;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/**
 * snapfs' attributes section: what it keeps round trips exactly, a commit written before it existed
 * reads with the defaults, and damage that decodes is refused by mount and named by fsck.
 */
class SnapAttributesFormatTest {
    private static final SnapLayout LAYOUT = SnapLayout.forCapacity(8L << 20, 4096);
    private static final Instant T = Instant.ofEpochSecond(-2_000_000_000L, 999_999_999);

    /** Root with a file (inode 2, attributes and xattrs set) and a symbolic link to it (inode 3). */
    private static SnapState fileAndLink() {
        SnapState state = SnapState.empty();
        SnapState.Inode file = new SnapState.Inode(2, FileType.REGULAR);
        file.mode = 04755;
        file.uid = -2;
        file.gid = 70000;
        file.atime = T;
        file.mtime = Instant.parse("2262-04-11T23:47:16.854775807Z");
        file.ctime = Instant.ofEpochSecond(5, 1);
        file.btime = Instant.EPOCH;
        file.xattrs.put("user.b", new byte[] {0, 1, 2});
        file.xattrs.put("trusted.a", new byte[0]);
        file.links = 2;
        SnapState.Inode link = new SnapState.Inode(3, FileType.SYMLINK);
        link.target = "a/../\u00e9".getBytes(StandardCharsets.UTF_8);
        link.size = link.target.length;
        state.inodes.put(2L, file);
        state.inodes.put(3L, link);
        state.inodes.get(SnapState.ROOT).entries.put("f", 2L);
        state.inodes.get(SnapState.ROOT).entries.put("g", 2L);
        state.inodes.get(SnapState.ROOT).entries.put("l", 3L);
        state.nextIno = 4;
        return state;
    }

    @Test
    void everyAttributeRoundTripsExactly() throws Exception {
        SnapState read = SnapState.deserialize(fileAndLink().serialize(), LAYOUT);
        SnapState.Inode file = read.inodes.get(2L);
        assertThat(Arrays.asList(file.mode, file.uid, file.gid, file.links)).containsExactly(04755, -2, 70000, 2);
        assertThat(Arrays.asList(file.atime, file.mtime, file.ctime, file.btime)).containsExactly(T,
                Instant.parse("2262-04-11T23:47:16.854775807Z"), Instant.ofEpochSecond(5, 1), Instant.EPOCH);
        assertThat(file.xattrs.keySet()).containsExactly("trusted.a", "user.b");
        assertThat(file.xattrs.get("user.b")).containsExactly(0, 1, 2);
        assertThat(file.target).isNull();
        SnapState.Inode link = read.inodes.get(3L);
        assertThat(new String(link.target, StandardCharsets.UTF_8)).isEqualTo("a/../\u00e9");
        assertThat(link.mode).isEqualTo(0777);
        assertThat(read.serialize()).isEqualTo(fileAndLink().serialize());
    }

    @Test
    void aCommitWithoutTheSectionReadsWithTheDefaults() throws Exception {
        SnapState state = fileAndLink();
        state.inodes.remove(3L);
        state.inodes.get(SnapState.ROOT).entries.remove("l");
        state.inodes.get(2L).mtime = Instant.ofEpochMilli(1_600_000_000_123L);
        byte[] payload = state.serialize();
        SnapState read = SnapState.deserialize(Arrays.copyOf(payload, state.inodesLength()), LAYOUT);
        SnapState.Inode file = read.inodes.get(2L);
        assertThat(Arrays.asList(file.mode, file.uid, file.gid)).containsExactly(0644, 0, 0);
        assertThat(Arrays.asList(file.atime, file.mtime, file.ctime, file.btime))
                .containsOnly(Instant.ofEpochMilli(1_600_000_000_123L));
        assertThat(file.xattrs).isEmpty();
        assertThat(read.inodes.get(SnapState.ROOT).mode).isEqualTo(0755);
    }

    @Test
    void aDamagedSectionDoesNotDecode() {
        SnapState state = fileAndLink();
        byte[] payload = state.serialize();
        int section = state.inodesLength();
        byte[] badMagic = payload.clone();
        badMagic[section] ^= 1;
        assertRefusedToDecode(badMagic, "no attributes section");
        assertRefusedToDecode(Arrays.copyOf(payload, payload.length + 1), "bytes after the attributes");
        assertRefusedToDecode(Arrays.copyOf(payload, payload.length - 1), "does not decode");
        byte[] badMode = payload.clone();
        // The root's record: magic (4), ino (8), then the mode.
        ByteBuffer.wrap(badMode).putInt(section + 12, 010000);
        assertRefusedToDecode(badMode, "inode 1 has mode 010000");
        byte[] badNanos = payload.clone();
        ByteBuffer.wrap(badNanos).putInt(section + 12 + 12 + 8, 1_000_000_000);
        assertRefusedToDecode(badNanos, "inode 1 has a time with 1000000000 ns");
    }

    private static void assertRefusedToDecode(byte[] payload, String problem) {
        assertThatThrownBy(() -> SnapState.deserialize(payload, LAYOUT)).isInstanceOf(CorruptFileSystemException.class)
                .hasMessageContaining(problem);
    }

    @Test
    void aSymlinkWhoseSizeIsNotItsTargetsOrAFileWithATargetIsRefused() throws IOException {
        SnapState wrongSize = fileAndLink();
        wrongSize.inodes.get(3L).size = 99;
        assertRefused(wrongSize, "symbolic link 3 has size 99 but a target of 7 bytes");
        SnapState fileWithTarget = fileAndLink();
        fileWithTarget.inodes.get(2L).target = new byte[] {'x'};
        assertRefused(fileWithTarget, "inode 2 is a REGULAR with a symbolic link target");
        SnapState linkMode = fileAndLink();
        linkMode.inodes.get(3L).mode = 0700;
        assertRefused(linkMode, "symbolic link 3 has mode 0700");
        SnapState userOnLink = fileAndLink();
        userOnLink.inodes.get(3L).xattrs.put("user.x", new byte[1]);
        assertRefused(userOnLink, "symbolic link 3 has a user. extended attribute");
        SnapState badName = fileAndLink();
        badName.inodes.get(2L).xattrs.put("system.posix_acl_other", new byte[1]);
        assertRefused(badName, "inode 2 has an invalid extended attribute name");
    }

    private static void assertRefused(SnapState state, String problem) throws IOException {
        RamBlockDevice device = new RamBlockDevice(512, 8L << 20);
        new SnapAdapter().format(device, FormatOptions.blockSize(4096));
        SnapLayout.readSuperblock(device).writeSlot(device, 2, state.serialize());
        assertThatThrownBy(() -> new SnapAdapter().mount(device, MountOptions.defaults()))
                .isInstanceOf(CorruptFileSystemException.class).hasMessageContaining(problem);
        assertThat(new SnapAdapter().fsck(device).problems()).anySatisfy(p -> assertThat(p).contains(problem));
    }
}
