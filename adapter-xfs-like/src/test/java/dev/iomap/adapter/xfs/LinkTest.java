package dev.iomap.adapter.xfs;

import static dev.iomap.testkit.TestData.pattern;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.iomap.api.AttributeChange;
import dev.iomap.api.DirEntry;
import dev.iomap.api.FileStat;
import dev.iomap.api.IomapFile;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.IomapFileSystems;
import dev.iomap.api.NewInodeAttributes;
import dev.iomap.api.OperationNotPermittedException;
import dev.iomap.device.BlockDevice;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.NoSuchFileException;
import java.time.Instant;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Hard links: counts, times, unlink and rename of multiply-linked files, and freeing at the last name. */
class LinkTest {

    @Test
    void linksCountNamesAndTheInodeIsFreedWithTheLastOne() throws Exception {
        try (XfsFixture fx = XfsFixture.create()) {
            fx.fs.mkdir("/d");
            fx.fs.sync();
            long empty = fx.fs.statfs().freeBlocks();
            fx.write("/a", pattern(1, 0, 100_000)).close();
            long freeInodes = fx.fs.statfs().freeInodes();
            FileStat before = fx.fs.stat("/a");
            FileStat dirBefore = fx.fs.stat("/d");
            Thread.sleep(2);
            fx.fs.createLink("/d/b", "/a");
            fx.fs.createLink("/c", "/d/b");
            FileStat after = fx.fs.stat("/c");
            assertThat(after.ino()).isEqualTo(before.ino());
            assertThat(after.linkCount()).isEqualTo(3);
            assertThat(after.ctime()).isAfter(before.ctime());
            assertThat(after.mtime()).isEqualTo(before.mtime());
            FileStat dirAfter = fx.fs.stat("/d");
            assertThat(dirAfter.mtime()).isAfter(dirBefore.mtime());
            assertThat(dirAfter.ctime()).isEqualTo(dirAfter.mtime());
            assertThat(dirAfter.linkCount()).isEqualTo(2);
            assertThatThrownBy(() -> fx.fs.createLink("/c", "/a")).isInstanceOf(FileAlreadyExistsException.class);
            assertThatThrownBy(() -> fx.fs.createLink("/e", "/d")).isInstanceOf(OperationNotPermittedException.class);
            fx.remount();
            long free = fx.fs.statfs().freeBlocks();
            assertThat(free).as("the file's blocks and /d's first directory block")
                    .isEqualTo(empty - Math.ceilDiv(100_000, XfsFixture.BLOCK) - 1);
            assertThat(fx.fs.stat("/d/b").linkCount()).isEqualTo(3);
            assertThat(fx.readFile("/c")).isEqualTo(pattern(1, 0, 100_000));
            fx.fs.unlink("/a");
            fx.fs.unlink("/d/b");
            assertThat(fx.fs.stat("/c").linkCount()).isEqualTo(1);
            assertThat(fx.fs.statfs().freeBlocks()).as("only /d's emptied directory block is freed")
                    .isEqualTo(free + 1);
            fx.fs.unlink("/c");
            assertThat(fx.fs.statfs().freeInodes()).isEqualTo(freeInodes + 1);
            fx.remount();
            assertThat(fx.fs.statfs().freeBlocks()).as("/d is empty again").isEqualTo(empty);
            assertThatThrownBy(() -> fx.fs.stat("/c")).isInstanceOf(NoSuchFileException.class);
        }
    }

    @Test
    void anOpenFileKeepsItsDataAfterItsLastNameGoes() throws Exception {
        try (XfsFixture fx = XfsFixture.create()) {
            long empty = fx.fs.statfs().freeBlocks();
            fx.write("/a", pattern(2, 0, 9000)).close();
            fx.fs.createLink("/b", "/a");
            try (IomapFile open = fx.fs.open("/a")) {
                fx.fs.unlink("/a");
                fx.fs.unlink("/b");
                assertThat(fx.fs.statfs().freeBlocks()).isLessThan(empty);
                assertThat(XfsFixture.readAll(open)).isEqualTo(pattern(2, 0, 9000));
            }
            assertThat(fx.fs.statfs().freeBlocks()).isEqualTo(empty);
        }
    }

    @Test
    void renameOverAHardLinkedFileOnlyDropsOneName() throws Exception {
        try (XfsFixture fx = XfsFixture.create()) {
            fx.write("/target", pattern(3, 0, 5000)).close();
            fx.fs.createLink("/other", "/target");
            fx.write("/src", pattern(4, 0, 700)).close();
            fx.fs.rename("/src", "/target");
            assertThat(fx.fs.stat("/other").linkCount()).isEqualTo(1);
            assertThat(fx.readFile("/other")).isEqualTo(pattern(3, 0, 5000));
            assertThat(fx.readFile("/target")).isEqualTo(pattern(4, 0, 700));
            fx.remount();
            assertThat(fx.readFile("/other")).isEqualTo(pattern(3, 0, 5000));
            assertThat(fx.fs.stat("/other").linkCount()).isEqualTo(1);
        }
    }

    @Test
    void renameBetweenTwoNamesOfOneInodeChangesNothing() throws Exception {
        try (XfsFixture fx = XfsFixture.create()) {
            fx.write("/a", pattern(5, 0, 10)).close();
            fx.fs.createLink("/b", "/a");
            Instant ctime = fx.fs.stat("/a").ctime();
            fx.fs.rename("/a", "/b");
            assertThat(fx.fs.readdir("/")).extracting(DirEntry::name).containsExactly("a", "b");
            assertThat(fx.fs.stat("/b").linkCount()).isEqualTo(2);
            assertThat(fx.fs.stat("/b").ctime()).isEqualTo(ctime);
        }
    }

    @Test
    void fsckFindsAWrongLinkCount() throws Exception {
        try (XfsFixture fx = XfsFixture.create()) {
            fx.write("/a", pattern(6, 0, 10)).close();
            fx.fs.createLink("/b", "/a");
            long ino = fx.fs.stat("/a").ino();
            fx.unmountAndCheck();
            ImageLoader.Image image = Images.load(fx.device);
            image.inodes.get(ino).nlink = 3;
            Images.writeInodeTable(fx.device, image, ino);
            long tableBlock = Images.geometry(fx.device).inodeBlock(ino);
            assertThat(IomapFileSystems.fsck("xfs-like", fx.device).problems()).containsExactly("inode " + ino
                    + " (inode table block " + tableBlock + " (device offset " + tableBlock * XfsFixture.BLOCK
                    + ")): link count 3 but 2 names");
            assertThatThrownBy(fx::mount).isInstanceOf(dev.iomap.api.CorruptFileSystemException.class)
                    .hasMessageContaining("link count 3 but 2 names");
            image.inodes.get(ino).nlink = 2;
            Images.writeInodeTable(fx.device, image, ino);
            fx.mount();
        }
    }

    @Test
    void linksAndAttributesReachTheDeviceWithTheirTransactionOnly() throws Exception {
        try (XfsFixture fx = XfsFixture.create(1024, 32L << 20, Map.of())) {
            fx.write("/a", pattern(7, 0, 3000)).close();
            fx.fs.sync();
            fx.fs.createLink("/b", "/a");
            fx.fs.createSymbolicLink("/long", "x".repeat(3000), new NewInodeAttributes(0, 5, 6));
            fx.fs.setAttributes("/a", AttributeChange.none().withMode(0600).withMtime(Instant.ofEpochSecond(-5, 7)));
            BlockDevice before = fx.copyOfDevice();
            fx.fs.sync();
            BlockDevice after = fx.copyOfDevice();
            try (IomapFileSystem crashed = IomapFileSystems.mount("xfs-like", before, XfsFixture.mountOptions())) {
                assertThat(crashed.readdir("/")).extracting(DirEntry::name).containsExactly("a");
                assertThat(crashed.stat("/a").linkCount()).isEqualTo(1);
                assertThat(crashed.stat("/a").mode()).isEqualTo(0644);
            }
            XfsFixture.assertClean(before);
            try (IomapFileSystem crashed = IomapFileSystems.mount("xfs-like", after, XfsFixture.mountOptions())) {
                assertThat(crashed.readdir("/")).extracting(DirEntry::name).containsExactly("a", "b", "long");
                FileStat a = crashed.stat("/b");
                assertThat(a.linkCount()).isEqualTo(2);
                assertThat(a.mode()).isEqualTo(0600);
                assertThat(a.mtime()).isEqualTo(Instant.ofEpochSecond(-5, 7));
                assertThat(crashed.readSymbolicLink("/long")).isEqualTo("x".repeat(3000));
                assertThat(crashed.lstat("/long").uid()).isEqualTo(5);
            }
            XfsFixture.assertClean(after);
        }
    }
}
