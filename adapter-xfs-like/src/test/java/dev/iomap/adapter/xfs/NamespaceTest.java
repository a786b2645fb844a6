package dev.iomap.adapter.xfs;

import static dev.iomap.testkit.TestData.pattern;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.iomap.api.DirEntry;
import dev.iomap.api.FileType;
import dev.iomap.api.IomapFile;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class NamespaceTest {

    @Test
    void directoriesNestListAndRemove() throws Exception {
        try (XfsFixture fx = XfsFixture.create()) {
            fx.fs.mkdir("/a");
            fx.fs.mkdir("/a/b");
            fx.write("/a/b/f", pattern(1, 0, 10)).close();
            fx.write("/a/z", pattern(2, 0, 10)).close();
            assertThat(fx.fs.readdir("/a")).containsExactly(new DirEntry("b", 3, FileType.DIRECTORY),
                    new DirEntry("z", 5, FileType.REGULAR));
            assertThat(fx.fs.stat("/a").linkCount()).isEqualTo(3);
            assertThatThrownBy(() -> fx.fs.rmdir("/a/b")).isInstanceOf(DirectoryNotEmptyException.class);
            assertThatThrownBy(() -> fx.fs.rmdir("/a/z")).isInstanceOf(NotDirectoryException.class);
            assertThatThrownBy(() -> fx.fs.unlink("/a/b")).isInstanceOf(FileSystemException.class);
            assertThatThrownBy(() -> fx.fs.mkdir("/a/z")).isInstanceOf(FileAlreadyExistsException.class);
            assertThatThrownBy(() -> fx.fs.open("/a/nope")).isInstanceOf(NoSuchFileException.class);
            assertThatThrownBy(() -> fx.fs.create("/a/z/x")).isInstanceOf(NotDirectoryException.class);
            fx.fs.unlink("/a/b/f");
            fx.fs.rmdir("/a/b");
            assertThat(fx.fs.stat("/a").linkCount()).isEqualTo(2);
            fx.remount();
            assertThat(fx.fs.readdir("/a")).extracting(DirEntry::name).containsExactly("z");
        }
    }

    @Test
    void renameMovesReplacesAndRefusesLoops() throws Exception {
        try (XfsFixture fx = XfsFixture.create()) {
            fx.fs.mkdir("/d1");
            fx.fs.mkdir("/d1/sub");
            fx.fs.mkdir("/d2");
            fx.write("/d1/f", pattern(1, 0, 100)).close();
            fx.write("/d2/g", pattern(2, 0, 200)).close();
            long free = fx.fs.statfs().freeBlocks();
            fx.fs.rename("/d1/f", "/d2/g");
            assertThat(fx.readFile("/d2/g")).isEqualTo(pattern(1, 0, 100));
            assertThat(fx.fs.statfs().freeBlocks()).isEqualTo(free + 1);
            fx.fs.rename("/d1/sub", "/d2/sub");
            assertThat(fx.fs.stat("/d1").linkCount()).isEqualTo(2);
            assertThat(fx.fs.stat("/d2").linkCount()).isEqualTo(3);
            assertThatThrownBy(() -> fx.fs.rename("/d2", "/d2/sub/inside"))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("into its own subtree");
            fx.fs.mkdir("/empty");
            fx.fs.rename("/d2/sub", "/empty");
            assertThat(fx.fs.readdir("/")).extracting(DirEntry::name).containsExactly("d1", "d2", "empty");
            fx.remount();
            assertThat(fx.fs.readdir("/d2")).extracting(DirEntry::name).containsExactly("g");
            assertThat(fx.readFile("/d2/g")).isEqualTo(pattern(1, 0, 100));
        }
    }

    @Test
    void bigDirectoriesSpanManyBlocksAndShrink() throws Exception {
        try (XfsFixture fx = XfsFixture.create()) {
            fx.fs.mkdir("/big");
            List<String> names = new ArrayList<>();
            for (int i = 0; i < 600; i++) {
                String name = "file-with-a-rather-long-name-number-" + i;
                names.add(name);
                fx.fs.create("/big/" + name).close();
            }
            assertThat(fx.fs.stat("/big").size()).isGreaterThan(4 * 4096L);
            fx.remount();
            assertThat(fx.fs.readdir("/big")).extracting(DirEntry::name)
                    .containsExactlyElementsOf(names.stream().sorted().toList());
            for (String name : names) {
                fx.fs.unlink("/big/" + name);
            }
            assertThat(fx.fs.stat("/big").size()).isZero();
            fx.fs.rmdir("/big");
        }
    }

    @Test
    void anUnlinkedFileStaysUsableUntilClosed() throws Exception {
        try (XfsFixture fx = XfsFixture.create()) {
            long free = fx.fs.statfs().freeBlocks();
            IomapFile file = fx.write("/f", pattern(3, 0, 50_000));
            file.fsync();
            fx.fs.unlink("/f");
            assertThat(XfsFixture.readAll(file)).isEqualTo(pattern(3, 0, 50_000));
            XfsFixture.writeAt(file, 50_000, pattern(4, 0, 1000));
            file.fsync();
            file.close();
            assertThat(fx.fs.statfs().freeBlocks()).isEqualTo(free);
            assertThat(fx.fs.statfs().freeInodes()).isEqualTo(fx.fs.statfs().totalInodes() - 1);
        }
    }

    @Test
    void anOpenUnlinkedFileAtUnmountIsFreed() throws Exception {
        try (XfsFixture fx = XfsFixture.create()) {
            IomapFile file = fx.write("/f", pattern(3, 0, 50_000));
            file.fsync();
            fx.fs.unlink("/f");
            fx.remount();
            assertThat(fx.fs.statfs().freeInodes()).isEqualTo(fx.fs.statfs().totalInodes() - 1);
        }
    }
}
