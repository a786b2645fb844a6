package dev.iomap.adapter.xfs;

import static dev.iomap.testkit.TestData.pattern;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.iomap.api.DirEntry;
import dev.iomap.api.FileNames;
import dev.iomap.api.FileStat;
import dev.iomap.api.FileType;
import dev.iomap.api.NewInodeAttributes;
import dev.iomap.api.OperationNotPermittedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.NoSuchFileException;
import java.util.Arrays;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Symbolic links: targets in the slot and in chains of symlink blocks at every block size, exact bytes,
 * sizes, modes, persistence and freeing. Each fixture ends with a clean fsck.
 */
class SymlinkTest {
    private static final NewInodeAttributes OWNER = new NewInodeAttributes(0600, 1000, 100);

    /** A target of {@code length} bytes, including bytes that are not UTF-8 (0x80 … 0xff). */
    private static byte[] targetBytes(int length, int seed) {
        byte[] bytes = new byte[length];
        for (int i = 0; i < length; i++) {
            int b = (i * 31 + seed) % 255 + 1;
            bytes[i] = (byte) (b == '/' ? 0xff : b);
        }
        return bytes;
    }

    private static XfsFixture fixture(int blockSize) throws Exception {
        return XfsFixture.create(blockSize, Math.max(32L << 20, 512L * blockSize), Map.of());
    }

    @ParameterizedTest(name = "{0}-byte blocks")
    @ValueSource(ints = {512, 1024, 4096, 65536})
    void targetsOfEveryLengthClassReadBackExactlyAfterRemount(int blockSize) throws Exception {
        int chain = XfsLayout.chainCapacity(blockSize);
        int[] lengths = {1, XfsLayout.INLINE_TARGET_BYTES, XfsLayout.INLINE_TARGET_BYTES + 1, Math.min(chain, 4095),
                Math.min(chain + 1, 4095), 4095};
        try (XfsFixture fx = fixture(blockSize)) {
            fx.fs.create("/first").close();
            long freeBefore = fx.fs.statfs().freeBlocks();
            for (int i = 0; i < lengths.length; i++) {
                fx.fs.createSymbolicLink("/l" + i, FileNames.decode(targetBytes(lengths[i], i)), OWNER);
            }
            fx.remount();
            long blocks = 0;
            for (int i = 0; i < lengths.length; i++) {
                byte[] expected = targetBytes(lengths[i], i);
                assertThat(FileNames.encode(fx.fs.readSymbolicLink("/l" + i))).as("length %d", lengths[i])
                        .isEqualTo(expected);
                FileStat stat = fx.fs.lstat("/l" + i);
                assertThat(stat.type()).isEqualTo(FileType.SYMLINK);
                assertThat(stat.size()).isEqualTo(lengths[i]);
                assertThat(stat.mode()).isEqualTo(0777);
                assertThat(stat.uid()).isEqualTo(1000);
                assertThat(stat.gid()).isEqualTo(100);
                assertThat(stat.linkCount()).isEqualTo(1);
                long expectedBlocks = lengths[i] <= XfsLayout.INLINE_TARGET_BYTES ? 0
                        : Math.ceilDiv(lengths[i], chain);
                assertThat(stat.allocatedBytes()).isEqualTo(expectedBlocks * blockSize);
                blocks += expectedBlocks;
            }
            assertThat(blocks).isPositive();
            assertThat(fx.fs.statfs().freeBlocks()).isEqualTo(freeBefore - blocks);
            for (int i = 0; i < lengths.length; i++) {
                fx.fs.unlink("/l" + i);
            }
            fx.remount();
            assertThat(fx.fs.readdir("/")).extracting(DirEntry::name).containsExactly("first");
            assertThat(fx.fs.statfs().freeBlocks()).isEqualTo(freeBefore);
        }
    }

    @Test
    void nonUtf8TargetBytesAreKeptExactly() throws Exception {
        byte[] target = {(byte) 0xff, 'a', (byte) 0xc3, (byte) 0x28, '/', (byte) 0xe2, (byte) 0x82, '.', '.'};
        try (XfsFixture fx = XfsFixture.create()) {
            fx.fs.createSymbolicLink("/odd", FileNames.decode(target), OWNER);
            fx.remount();
            assertThat(FileNames.encode(fx.fs.readSymbolicLink("/odd"))).isEqualTo(target);
            assertThat(fx.fs.lstat("/odd").size()).isEqualTo(target.length);
        }
    }

    @Test
    void theCoreFollowsALinkToAFileAndAnAbsentTargetIsAnError() throws Exception {
        try (XfsFixture fx = XfsFixture.create()) {
            fx.fs.mkdir("/d");
            fx.write("/d/file", pattern(7, 0, 5000)).close();
            fx.fs.createSymbolicLink("/rel", "d/file", OWNER);
            fx.fs.createSymbolicLink("/dangling", "nowhere", OWNER);
            fx.remount();
            assertThat(fx.readFile("/rel")).isEqualTo(pattern(7, 0, 5000));
            assertThat(fx.fs.stat("/rel").type()).isEqualTo(FileType.REGULAR);
            assertThat(fx.fs.readdir("/")).extracting(DirEntry::name, DirEntry::type).containsExactly(
                    org.assertj.core.groups.Tuple.tuple("d", FileType.DIRECTORY),
                    org.assertj.core.groups.Tuple.tuple("dangling", FileType.SYMLINK),
                    org.assertj.core.groups.Tuple.tuple("rel", FileType.SYMLINK));
            assertThatThrownBy(() -> fx.fs.open("/dangling")).isInstanceOf(NoSuchFileException.class);
            assertThatThrownBy(() -> fx.fs.createSymbolicLink("/rel", "x", OWNER))
                    .isInstanceOf(FileAlreadyExistsException.class);
        }
    }

    @Test
    void aLinkIsRenamedHardLinkedAndReplacedLikeAFile() throws Exception {
        String target = FileNames.decode(targetBytes(3000, 5));
        try (XfsFixture fx = XfsFixture.create(1024, 32L << 20, Map.of())) {
            fx.fs.create("/first").close();
            long free = fx.fs.statfs().freeBlocks();
            fx.fs.createSymbolicLink("/a", target, OWNER);
            fx.fs.createLink("/b", "/a");
            assertThat(fx.fs.lstat("/b").linkCount()).isEqualTo(2);
            fx.fs.rename("/a", "/c");
            fx.write("/victim", pattern(1, 0, 10)).close();
            fx.fs.rename("/c", "/victim");
            fx.remount();
            assertThat(fx.fs.readSymbolicLink("/victim")).isEqualTo(target);
            assertThat(fx.fs.lstat("/victim").size()).isEqualTo(3000);
            assertThat(fx.fs.lstat("/victim").linkCount()).isEqualTo(2);
            assertThat(fx.fs.lstat("/victim").ino()).isEqualTo(fx.fs.lstat("/b").ino());
            assertThatThrownBy(() -> fx.fs.setXattr("/b", "user.x", new byte[1], dev.iomap.api.XattrMode.ANY))
                    .isInstanceOf(OperationNotPermittedException.class);
            fx.fs.unlink("/victim");
            assertThat(fx.fs.lstat("/b").linkCount()).isEqualTo(1);
            fx.fs.unlink("/b");
            fx.remount();
            assertThat(fx.fs.statfs().freeBlocks()).isEqualTo(free);
        }
    }

    @Test
    void theTargetChainIsWhatTheSlotPointsAt() throws Exception {
        try (XfsFixture fx = XfsFixture.create(1024, 32L << 20, Map.of())) {
            byte[] target = targetBytes(4095, 9);
            fx.fs.createSymbolicLink("/long", FileNames.decode(target), OWNER);
            long ino = fx.fs.lstat("/long").ino();
            fx.unmountAndCheck();
            InodeState inode = Images.load(fx.device).inodes.get(ino);
            assertThat(inode.targetBlocks).hasSize(Math.ceilDiv(4095, XfsLayout.chainCapacity(1024)));
            assertThat(inode.target).isEqualTo(target);
            assertThat(Arrays.equals(inode.target, target)).isTrue();
            fx.mount();
        }
    }
}
