package dev.iomap.fuse;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import dev.iomap.api.AttributeChange;
import dev.iomap.api.FileStat;
import dev.iomap.api.FormatOptions;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.IomapFileSystems;
import dev.iomap.api.MountOptions;
import dev.iomap.devices.RamBlockDevice;
import dev.iomap.testkit.snapfs.SnapAdapter;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Access times as Linux keeps them, through the bridge's read and readdir (issue 38, xfstests
 * generic/003): the mount's options parse as {@code mount(8)} reads them ({@link AtimePolicy#of}); under
 * {@code relatime} (the default) a read updates the access time only when it is not after the
 * modification or change time, or is a day old; {@code strictatime} on every read; {@code noatime} never;
 * {@code nodiratime} not on directory listings. An update leaves the change time as it was.
 */
class FuseAtimeTest {
    private static final long ROOT = Nodes.ROOT;
    private static final InodeOperations.Caller USER = new InodeOperations.Caller(4321, 765);
    private static final Instant LONG_AGO = Instant.parse("2020-01-01T00:00:00Z");

    private RamBlockDevice device;
    private IomapFileSystem fs;
    private FuseBridge bridge;

    @BeforeEach
    void format() throws IOException {
        device = new RamBlockDevice(512, 4L << 20);
        IomapFileSystems.format(SnapAdapter.NAME, device, FormatOptions.blockSize(4096));
        fs = IomapFileSystems.mount(SnapAdapter.NAME, device, MountOptions.defaults());
    }

    @AfterEach
    void unmount() throws IOException {
        if (bridge != null) {
            bridge.releaseAll();
        }
        fs.close();
        device.close();
    }

    @Test
    void theOptionsParseAsMountReadsThemTheLastOneWinning() {
        assertThat(AtimePolicy.of(List.of())).isEqualTo(AtimePolicy.DEFAULT);
        assertThat(AtimePolicy.DEFAULT.mode()).isEqualTo(AtimePolicy.Mode.RELATIVE);
        assertThat(AtimePolicy.of(List.of("allow_other,strictatime"))).isEqualTo(strict());
        assertThat(AtimePolicy.of(List.of("noatime", "relatime"))).isEqualTo(AtimePolicy.DEFAULT);
        assertThat(AtimePolicy.of(List.of("strictatime,noatime")).mode()).isEqualTo(AtimePolicy.Mode.NONE);
        assertThat(AtimePolicy.of(List.of("norelatime")).mode()).isEqualTo(AtimePolicy.Mode.STRICT);
        assertThat(AtimePolicy.of(List.of("nodiratime"))).isEqualTo(new AtimePolicy(AtimePolicy.Mode.RELATIVE, true));
        assertThat(AtimePolicy.of(List.of("nodiratime,diratime"))).isEqualTo(AtimePolicy.DEFAULT);
    }

    @Test
    void relatimeUpdatesOnceAfterAModificationAndLeavesTheChangeTime() throws Exception {
        bridge = new FuseBridge(fs, USER, FuseBridgeTest.DEFAULT, AtimePolicy.DEFAULT);
        long fh = fileWithOldAccessTime();
        FileStat before = fs.stat("/f");

        read(fh);
        FileStat first = fs.stat("/f");
        assertThat(first.atime()).as("the access time of the first read").isAfter(before.ctime());
        assertThat(List.of(first.mtime(), first.ctime())).containsExactly(before.mtime(), before.ctime());

        pause();
        read(fh);
        assertThat(fs.stat("/f").atime()).as("after the access time, nothing changed: not updated")
                .isEqualTo(first.atime());
    }

    @Test
    void relatimeUpdatesAnAccessTimeADayOld() throws Exception {
        bridge = new FuseBridge(fs, USER, FuseBridgeTest.DEFAULT, AtimePolicy.DEFAULT);
        long fh = create("f");
        fs.setAttributes("/f", AttributeChange.none().withMtime(LONG_AGO));
        Instant dayOld = Instant.now().minus(Duration.ofDays(1)).minusSeconds(60);
        fs.setAttributes("/f", AttributeChange.accessed(dayOld));   // after mtime, but not after ctime
        assertThat(fs.stat("/f").atime()).isEqualTo(dayOld);

        read(fh);
        assertThat(fs.stat("/f").atime()).isAfter(dayOld.plus(Duration.ofDays(1)));
    }

    @Test
    void strictatimeUpdatesOnEveryReadAndNoatimeNever() throws Exception {
        bridge = new FuseBridge(fs, USER, FuseBridgeTest.DEFAULT, strict());
        long fh = fileWithOldAccessTime();
        read(fh);
        Instant first = fs.stat("/f").atime();
        pause();
        read(fh);
        assertThat(fs.stat("/f").atime()).isAfter(first);
        bridge.releaseAll();

        bridge = new FuseBridge(fs, USER, FuseBridgeTest.DEFAULT, AtimePolicy.of(List.of("noatime")));
        fs.setAttributes("/f", AttributeChange.none().withAtime(LONG_AGO));
        read(bridge.open(bridge.lookup(ROOT, "f").nodeid(), 0, USER).fh());
        assertThat(fs.stat("/f").atime()).isEqualTo(LONG_AGO);
    }

    @Test
    void aDirectoryListingUpdatesTheDirectoryUnlessNodiratime() throws Exception {
        bridge = new FuseBridge(fs, USER, FuseBridgeTest.DEFAULT, AtimePolicy.of(List.of("nodiratime")));
        fs.mkdir("/d");
        fs.setAttributes("/d", AttributeChange.none().withAtime(LONG_AGO));
        list("/d");
        assertThat(fs.stat("/d").atime()).as("nodiratime").isEqualTo(LONG_AGO);

        bridge.releaseAll();
        bridge = new FuseBridge(fs, USER, FuseBridgeTest.DEFAULT, AtimePolicy.DEFAULT);
        FileStat before = fs.stat("/d");
        list("/d");
        FileStat after = fs.stat("/d");
        assertThat(after.atime()).isAfter(before.ctime());
        assertThat(after.ctime()).isEqualTo(before.ctime());
    }

    private static AtimePolicy strict() {
        return new AtimePolicy(AtimePolicy.Mode.STRICT, false);
    }

    /** /f with content, its access time long ago (before its modification time); open for reading. */
    private long fileWithOldAccessTime() throws IOException {
        long fh = create("f");
        fs.setAttributes("/f", AttributeChange.none().withAtime(LONG_AGO));
        return fh;
    }

    private long create(String name) throws IOException {
        long fh = bridge.create(ROOT, name, 0644, 2, USER).opened().fh();
        bridge.write(fh, 0, ByteBuffer.wrap("hello".getBytes(UTF_8)), false);
        return fh;
    }

    private void read(long fh) throws IOException {
        assertThat(bridge.read(fh, 0, ByteBuffer.allocate(5))).isEqualTo(5);
    }

    private void list(String path) throws IOException {
        long dh = bridge.opendir(bridge.lookup(ROOT, path.substring(1)).nodeid());
        bridge.listing(dh, 0);
        bridge.releasedir(dh);
    }

    /** Lets the clock move on, so that an update is later than what was there. */
    private static void pause() throws InterruptedException {
        Thread.sleep(5);
    }
}
