package dev.iomap.adapter.xfs;

import static dev.iomap.testkit.TestData.pattern;
import static org.assertj.core.api.Assertions.assertThat;

import dev.iomap.api.AttributeChange;
import dev.iomap.api.FileStat;
import dev.iomap.api.IomapFile;
import dev.iomap.api.NewInodeAttributes;
import java.time.Instant;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Mode, owner and the four nanosecond times: creation, setattr, writes, truncate, namespace changes, remount. */
class AttributeTest {
    private static final Instant BEFORE_1970 = Instant.ofEpochSecond(-315_619_200L, 123_456_789);
    private static final Instant LATER = Instant.ofEpochSecond(1_700_000_000L, 987_654_321);

    @Test
    void newInodesTakeTheirAttributesAndTheTimeOfCreation() throws Exception {
        try (XfsFixture fx = XfsFixture.create()) {
            Instant start = Instant.now();
            fx.fs.create("/f", new NewInodeAttributes(04640, 1234, 5678)).close();
            fx.fs.mkdir("/d", new NewInodeAttributes(01700, 42, 43));
            for (String path : new String[] {"/f", "/d"}) {
                FileStat stat = fx.fs.stat(path);
                assertThat(stat.btime()).isAfterOrEqualTo(start).isEqualTo(stat.atime()).isEqualTo(stat.ctime());
            }
            FileStat file = fx.fs.stat("/f");
            FileStat dir = fx.fs.stat("/d");
            fx.remount();
            assertThat(fx.fs.stat("/f")).isEqualTo(file);
            assertThat(fx.fs.stat("/d")).isEqualTo(dir);
            assertThat(file.mode()).isEqualTo(04640);
            assertThat(file.uid()).isEqualTo(1234);
            assertThat(file.gid()).isEqualTo(5678);
            assertThat(dir.mode()).isEqualTo(01700);
            assertThat(dir.uid()).isEqualTo(42);
            assertThat(dir.linkCount()).isEqualTo(2);
            FileStat root = fx.fs.stat("/");
            assertThat(root.mtime()).isEqualTo(root.ctime()).isEqualTo(dir.btime());
            assertThat(root.linkCount()).isEqualTo(3);
        }
    }

    @Test
    void aSetGroupIdDirectoryGivesNewInodesItsGroupAndNewDirectoriesTheBit() throws Exception {
        try (XfsFixture fx = XfsFixture.create()) {
            fx.fs.mkdir("/shared", new NewInodeAttributes(02775, 10, 500));
            fx.fs.create("/shared/f", new NewInodeAttributes(0644, 11, 11)).close();
            fx.fs.mkdir("/shared/d", new NewInodeAttributes(0755, 11, 11));
            fx.fs.createSymbolicLink("/shared/l", "f", new NewInodeAttributes(0777, 11, 11));
            fx.fs.mkdir("/plain", new NewInodeAttributes(0755, 10, 500));
            fx.fs.create("/plain/f", new NewInodeAttributes(02644, 11, 11)).close();
            fx.remount();
            assertThat(fx.fs.stat("/shared/f")).extracting(FileStat::mode, FileStat::uid, FileStat::gid)
                    .containsExactly(0644, 11, 500);
            assertThat(fx.fs.stat("/shared/d")).extracting(FileStat::mode, FileStat::uid, FileStat::gid)
                    .containsExactly(02755, 11, 500);
            assertThat(fx.fs.lstat("/shared/l")).extracting(FileStat::mode, FileStat::gid).containsExactly(0777, 500);
            assertThat(fx.fs.stat("/plain/f")).extracting(FileStat::mode, FileStat::uid, FileStat::gid)
                    .containsExactly(02644, 11, 11);
        }
    }

    @Test
    void setattrRoundTripsWithNanosecondsAndTimesBefore1970() throws Exception {
        try (XfsFixture fx = XfsFixture.create()) {
            fx.write("/f", pattern(1, 0, 100)).close();
            FileStat before = fx.fs.stat("/f");
            Thread.sleep(2);
            FileStat after = fx.fs.setAttributes("/f", AttributeChange.none().withMode(02755).withUid(7).withGid(8)
                    .withAtime(BEFORE_1970).withMtime(LATER));
            assertThat(after.mode()).isEqualTo(02755);
            assertThat(after.uid()).isEqualTo(7);
            assertThat(after.gid()).isEqualTo(8);
            assertThat(after.atime()).isEqualTo(BEFORE_1970);
            assertThat(after.mtime()).isEqualTo(LATER);
            assertThat(after.ctime()).isAfter(before.ctime());
            assertThat(after.btime()).isEqualTo(before.btime());
            fx.remount();
            assertThat(fx.fs.stat("/f")).isEqualTo(after);
            FileStat onlyUid = fx.fs.setAttributes("/f", AttributeChange.none().withUid(9));
            assertThat(onlyUid.mode()).isEqualTo(02755);
            assertThat(onlyUid.mtime()).isEqualTo(LATER);
            assertThat(onlyUid.ctime()).isAfter(after.ctime());
        }
    }

    @Test
    void utimensAfterABufferedWriteIsNotOverwrittenByWriteback() throws Exception {
        try (XfsFixture fx = XfsFixture.create()) {
            try (IomapFile file = fx.fs.create("/f")) {
                XfsFixture.writeAt(file, 0, pattern(2, 0, 1 << 20));
                fx.fs.setAttributes("/f", AttributeChange.none().withMtime(BEFORE_1970).withAtime(BEFORE_1970));
                fx.fs.sync();
                assertThat(fx.fs.stat("/f").mtime()).isEqualTo(BEFORE_1970);
            }
            fx.remount();
            FileStat stat = fx.fs.stat("/f");
            assertThat(stat.mtime()).isEqualTo(BEFORE_1970);
            assertThat(stat.atime()).isEqualTo(BEFORE_1970);
            assertThat(stat.size()).isEqualTo(1 << 20);
            assertThat(fx.readFile("/f")).isEqualTo(pattern(2, 0, 1 << 20));
        }
    }

    @Test
    void writesAndTruncatesSetMtimeAndCtime() throws Exception {
        try (XfsFixture fx = XfsFixture.create()) {
            FileStat created;
            FileStat written;
            try (IomapFile file = fx.fs.create("/f")) {
                created = fx.fs.stat("/f");
                Thread.sleep(2);
                XfsFixture.writeAt(file, 0, pattern(3, 0, 5000));
                written = fx.fs.stat("/f");
                assertThat(written.mtime()).isAfter(created.mtime()).isEqualTo(written.ctime());
                assertThat(written.btime()).isEqualTo(created.btime());
                file.fsync();
            }
            fx.remount();
            assertThat(fx.fs.stat("/f").mtime()).isEqualTo(written.mtime());
            fx.fs.setAttributes("/f", AttributeChange.none().withMtime(LATER));
            try (IomapFile file = fx.fs.open("/f")) {
                Instant start = Instant.now();
                file.truncate(100);
                FileStat truncated = fx.fs.stat("/f");
                assertThat(truncated.mtime()).isAfterOrEqualTo(start).isEqualTo(truncated.ctime());
                assertThat(truncated.size()).isEqualTo(100);
            }
        }
    }

    @Test
    void namespaceChangesSetTheDirectoriesTimesToTheNanosecond() throws Exception {
        try (XfsFixture fx = XfsFixture.create()) {
            fx.fs.mkdir("/a");
            fx.fs.mkdir("/b");
            fx.write("/a/f", pattern(4, 0, 10)).close();
            fx.fs.setAttributes("/a", AttributeChange.none().withMtime(LATER));
            fx.fs.setAttributes("/b", AttributeChange.none().withMtime(LATER));
            FileStat file = fx.fs.stat("/a/f");
            fx.fs.rename("/a/f", "/b/g");
            FileStat a = fx.fs.stat("/a");
            FileStat b = fx.fs.stat("/b");
            FileStat moved = fx.fs.stat("/b/g");
            assertThat(a.mtime()).isAfter(LATER).isEqualTo(a.ctime()).isEqualTo(b.mtime()).isEqualTo(b.ctime())
                    .isEqualTo(moved.ctime());
            assertThat(moved.mtime()).isEqualTo(file.mtime());
            fx.remount();
            assertThat(fx.fs.stat("/a")).isEqualTo(a);
            assertThat(fx.fs.stat("/b/g")).isEqualTo(moved);
        }
    }

    @Test
    void timesOfMoreFilesThanOneTransactionTakesAreCommittedInPieces() throws Exception {
        int files = 1200;
        try (XfsFixture fx = XfsFixture.create(XfsFixture.DEVICE_BYTES, Map.of("journalblocks", "64",
                "inodes", "2048"))) {
            fx.fs.mkdir("/m");
            for (int i = 0; i < files; i++) {
                fx.write("/m/" + i, pattern(i, 0, 10)).close();
            }
            fx.remount();
            Instant[] mtimes = new Instant[files];
            for (int i = 0; i < files; i++) {
                try (IomapFile file = fx.fs.open("/m/" + i)) {
                    XfsFixture.writeAt(file, 0, new byte[] {(byte) i});
                }
                mtimes[i] = fx.fs.stat("/m/" + i).mtime();
            }
            fx.fs.sync();
            fx.remount();
            for (int i = 0; i < files; i++) {
                assertThat(fx.fs.stat("/m/" + i).mtime()).as("file %d", i).isEqualTo(mtimes[i]);
            }
        }
    }
}
