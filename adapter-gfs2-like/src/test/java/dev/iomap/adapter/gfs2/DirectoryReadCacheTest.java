package dev.iomap.adapter.gfs2;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.iomap.api.DirEntry;
import dev.iomap.api.FormatOptions;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.IomapFileSystems;
import dev.iomap.api.MountOptions;
import dev.iomap.devices.RamBlockDevice;
import java.io.IOException;
import java.nio.file.NoSuchFileException;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Lookups and listings of a gfs2-like directory read its entries decoded once per content (a directory of
 * thousands of names was decoded whole for every lookup): every change of the directory (create, unlink,
 * rename in and out, a chained directory growing past its dinode) is seen by the very next lookup and
 * listing, and after a remount.
 */
class DirectoryReadCacheTest {
    private static final int NAMES = 600;

    @Test
    void everyChangeOfADirectoryIsSeenByTheNextLookupAndListing() throws IOException {
        RamBlockDevice ram = new RamBlockDevice(4096, 64L << 20);
        IomapFileSystems.format("gfs2-like", ram, FormatOptions.blockSize(4096));
        try (IomapFileSystem fs = IomapFileSystems.mount("gfs2-like", ram, MountOptions.defaults())) {
            fs.mkdir("/d");
            fs.mkdir("/e");
            for (int i = 0; i < NAMES; i++) {
                fs.create("/d/f" + i).close();
                assertThat(fs.stat("/d/f" + i).linkCount()).isEqualTo(1);   // a lookup right after each create
            }
            assertThat(names(fs, "/d")).hasSize(NAMES);

            fs.unlink("/d/f7");
            assertThatThrownBy(() -> fs.stat("/d/f7")).isInstanceOf(NoSuchFileException.class);
            fs.rename("/d/f8", "/e/moved");
            assertThatThrownBy(() -> fs.stat("/d/f8")).isInstanceOf(NoSuchFileException.class);
            assertThat(names(fs, "/e")).containsExactly("moved");
            fs.rename("/e/moved", "/d/back");
            assertThat(names(fs, "/e")).isEmpty();
            fs.create("/d/new").close();

            assertThat(names(fs, "/d")).hasSize(NAMES).contains("back", "new").doesNotContain("f7", "f8");
        }
        try (IomapFileSystem fs = IomapFileSystems.mount("gfs2-like", ram, MountOptions.defaults())) {
            assertThat(names(fs, "/d")).hasSize(NAMES).contains("back", "new").doesNotContain("f7", "f8");
            assertThat(fs.stat("/d/back").linkCount()).isEqualTo(1);
        }
    }

    private static List<String> names(IomapFileSystem fs, String dir) throws IOException {
        return fs.readdir(dir).stream().map(DirEntry::name).toList();
    }
}
