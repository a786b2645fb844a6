package dev.iomap.adapter.xfs;

import static dev.iomap.testkit.TestData.pattern;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.iomap.adapter.support.ns.XattrSet;
import dev.iomap.api.FileStat;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.IomapFileSystems;
import dev.iomap.api.NewInodeAttributes;
import dev.iomap.api.NoSpaceException;
import dev.iomap.api.NoSuchAttributeException;
import dev.iomap.api.XattrMode;
import dev.iomap.api.Xattrs;
import dev.iomap.device.BlockDevice;
import java.nio.file.FileAlreadyExistsException;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Extended attributes: modes, errors, order, the largest values at every block size, persistence, crashes, fsck. */
class XattrTest {

    @Test
    void createReplaceRemoveAndAbsentAttributes() throws Exception {
        try (XfsFixture fx = XfsFixture.create()) {
            fx.write("/f", pattern(1, 0, 10)).close();
            FileStat before = fx.fs.stat("/f");
            Thread.sleep(2);
            fx.fs.setXattr("/f", "user.b", new byte[] {1, 2}, XattrMode.CREATE);
            assertThat(fx.fs.stat("/f").ctime()).isAfter(before.ctime());
            assertThat(fx.fs.stat("/f").mtime()).isEqualTo(before.mtime());
            assertThatThrownBy(() -> fx.fs.setXattr("/f", "user.b", new byte[] {3}, XattrMode.CREATE))
                    .isInstanceOf(FileAlreadyExistsException.class);
            assertThatThrownBy(() -> fx.fs.setXattr("/f", "user.a", new byte[] {3}, XattrMode.REPLACE))
                    .isInstanceOf(NoSuchAttributeException.class);
            fx.fs.setXattr("/f", "user.b", new byte[] {9}, XattrMode.REPLACE);
            fx.fs.setXattr("/f", "user.a", new byte[0], XattrMode.ANY);
            fx.fs.setXattr("/f", "trusted.z", new byte[] {5}, XattrMode.ANY);
            fx.fs.setXattr("/f", "security.selinux", new byte[] {6, 7}, XattrMode.ANY);
            fx.fs.setXattr("/f", "user.\u00e9", new byte[] {8}, XattrMode.ANY);
            assertThat(fx.fs.listXattrs("/f")).containsExactly("security.selinux", "trusted.z", "user.a", "user.b",
                    "user.\u00e9");
            fx.remount();
            assertThat(fx.fs.getXattr("/f", "user.b")).containsExactly(9);
            assertThat(fx.fs.getXattr("/f", "user.a")).isEmpty();
            fx.fs.removeXattr("/f", "user.b");
            assertThatThrownBy(() -> fx.fs.removeXattr("/f", "user.b")).isInstanceOf(NoSuchAttributeException.class);
            assertThatThrownBy(() -> fx.fs.getXattr("/f", "user.b")).isInstanceOf(NoSuchAttributeException.class);
            assertThatThrownBy(() -> fx.fs.getXattr("/f", "user.never")).isInstanceOf(NoSuchAttributeException.class);
            fx.remount();
            assertThat(fx.fs.listXattrs("/f")).containsExactly("security.selinux", "trusted.z", "user.a", "user.\u00e9");
            assertThat(fx.fs.getXattr("/f", "security.selinux")).containsExactly(6, 7);
        }
    }

    @ParameterizedTest(name = "{0}-byte blocks")
    @ValueSource(ints = {512, 1024, 4096, 65536})
    void twoLargestValuesFitAThirdIsRefusedAndTheBlocksComeBack(int blockSize) throws Exception {
        byte[] first = pattern(2, 0, Xattrs.MAX_VALUE_BYTES);
        byte[] second = pattern(3, 0, Xattrs.MAX_VALUE_BYTES);
        try (XfsFixture fx = XfsFixture.create(blockSize, Math.max(32L << 20, 512L * blockSize), Map.of())) {
            fx.fs.mkdir("/d", new NewInodeAttributes(0755, 0, 0));
            long free = fx.fs.statfs().freeBlocks();
            fx.fs.setXattr("/d", "user.first", first, XattrMode.CREATE);
            fx.fs.setXattr("/d", "trusted.second", second, XattrMode.CREATE);
            assertThatThrownBy(() -> fx.fs.setXattr("/d", "user.third", new byte[Xattrs.MAX_VALUE_BYTES],
                    XattrMode.CREATE)).isInstanceOf(NoSpaceException.class);
            long encoded = 4 + 2L * (5 + Xattrs.MAX_VALUE_BYTES) + "user.first".length() + "trusted.second".length();
            long blocks = Math.ceilDiv(encoded, XfsLayout.chainCapacity(blockSize));
            assertThat(fx.fs.statfs().freeBlocks()).isEqualTo(free - blocks);
            fx.remount();
            assertThat(fx.fs.getXattr("/d", "user.first")).isEqualTo(first);
            assertThat(fx.fs.getXattr("/d", "trusted.second")).isEqualTo(second);
            assertThat(fx.fs.listXattrs("/d")).containsExactly("trusted.second", "user.first");
            assertThat(fx.fs.stat("/d").allocatedBytes()).isEqualTo(blocks * blockSize);
            fx.fs.removeXattr("/d", "user.first");
            fx.fs.removeXattr("/d", "trusted.second");
            fx.remount();
            assertThat(fx.fs.listXattrs("/d")).isEmpty();
            assertThat(fx.fs.statfs().freeBlocks()).isEqualTo(free);
        }
    }

    @Test
    void attributesGoWithTheInodeWhenItIsEvicted() throws Exception {
        try (XfsFixture fx = XfsFixture.create()) {
            fx.fs.create("/first").close();
            long free = fx.fs.statfs().freeBlocks();
            fx.fs.create("/f").close();
            fx.fs.setXattr("/f", "user.big", pattern(4, 0, 20_000), XattrMode.ANY);
            fx.fs.createSymbolicLink("/l", "f", new NewInodeAttributes(0, 0, 0));
            fx.fs.setXattr("/l", "trusted.big", pattern(5, 0, 20_000), XattrMode.ANY);
            assertThat(fx.fs.statfs().freeBlocks()).isEqualTo(free - 10);
            fx.fs.unlink("/f");
            fx.fs.unlink("/l");
            assertThat(fx.fs.statfs().freeBlocks()).isEqualTo(free);
        }
    }

    @Test
    void aPowerCutLeavesTheOldOrTheNewSetWhole() throws Exception {
        try (XfsFixture fx = XfsFixture.create()) {
            fx.fs.create("/f").close();
            fx.fs.setXattr("/f", "user.v", pattern(6, 0, 30_000), XattrMode.ANY);
            fx.fs.sync();
            fx.fs.setXattr("/f", "user.v", pattern(7, 0, 50_000), XattrMode.ANY);
            fx.fs.setXattr("/f", "user.w", new byte[] {1}, XattrMode.ANY);
            BlockDevice unsynced = fx.copyOfDevice();
            fx.fs.sync();
            BlockDevice synced = fx.copyOfDevice();
            try (IomapFileSystem old = IomapFileSystems.mount("xfs-like", unsynced, XfsFixture.mountOptions())) {
                assertThat(old.listXattrs("/f")).containsExactly("user.v");
                assertThat(old.getXattr("/f", "user.v")).isEqualTo(pattern(6, 0, 30_000));
            }
            XfsFixture.assertClean(unsynced);
            try (IomapFileSystem now = IomapFileSystems.mount("xfs-like", synced, XfsFixture.mountOptions())) {
                assertThat(now.listXattrs("/f")).containsExactly("user.v", "user.w");
                assertThat(now.getXattr("/f", "user.v")).isEqualTo(pattern(7, 0, 50_000));
            }
            XfsFixture.assertClean(synced);
        }
    }

    @Test
    void fsckFindsALeakedAttributeBlock() throws Exception {
        try (XfsFixture fx = XfsFixture.create()) {
            fx.fs.create("/f").close();
            fx.fs.setXattr("/f", "user.v", new byte[100], XattrMode.ANY);
            long ino = fx.fs.stat("/f").ino();
            fx.unmountAndCheck();
            ImageLoader.Image image = Images.load(fx.device);
            InodeState inode = image.inodes.get(ino);
            long block = inode.xattrBlocks.getFirst();
            XattrSet kept = inode.xattrs;
            inode.xattrBlocks.clear();
            inode.xattrs = new XattrSet();
            Images.writeInodeTable(fx.device, image, ino);
            assertThat(IomapFileSystems.fsck("xfs-like", fx.device).problems()).containsExactly("blocks [" + block
                    + ", +1) (device offset " + block * XfsFixture.BLOCK + ") are neither free nor used: leaked");
            inode.xattrBlocks.add(block);
            inode.xattrs = kept;
            Images.writeInodeTable(fx.device, image, ino);
            fx.mount();
            assertThat(fx.fs.getXattr("/f", "user.v")).hasSize(100);
        }
    }
}
