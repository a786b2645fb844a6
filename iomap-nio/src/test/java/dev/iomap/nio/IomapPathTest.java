package dev.iomap.nio;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.iomap.testkit.snapfs.SnapAdapter;
import java.io.IOException;
import java.nio.file.FileSystem;
import java.nio.file.FileSystems;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Paths behave like the default provider's Unix paths. */
class IomapPathTest {
    @TempDir
    Path dir;
    FileSystem fs;

    @BeforeEach
    void mount() throws IOException {
        fs = FileSystems.newFileSystem(IomapFilesContract.uri(SnapAdapter.NAME, dir.resolve("p.img")),
                Map.of("create", "true", "size", "4m"));
    }

    @AfterEach
    void unmount() throws IOException {
        fs.close();
    }

    private Path p(String s) {
        return fs.getPath(s);
    }

    @Test
    void namesRootParentAndCleaning() {
        Path path = p("//a//b/c/");
        assertThat(path).hasToString("/a/b/c");
        assertThat(path.isAbsolute()).isTrue();
        assertThat(path.getNameCount()).isEqualTo(3);
        assertThat(path.getName(1)).hasToString("b");
        assertThat(path.getFileName()).hasToString("c");
        assertThat(path.getParent()).hasToString("/a/b");
        assertThat(path.getRoot()).hasToString("/");
        assertThat(path.subpath(1, 3)).hasToString("b/c");
        assertThat(p("/").getNameCount()).isZero();
        assertThat(p("/").getFileName()).isNull();
        assertThat(p("/").getParent()).isNull();
        assertThat(p("/a").getParent()).hasToString("/");
        assertThat(p("a").getParent()).isNull();
        assertThat(p("a").getRoot()).isNull();
        assertThat(p("").getNameCount()).isEqualTo(1);
        assertThat(fs.getPath("a", "b", "", "c")).hasToString("a/b/c");
        assertThatThrownBy(() -> p("a\0b")).isInstanceOf(InvalidPathException.class);
    }

    @Test
    void resolveRelativizeNormalize() {
        assertThat(p("/a/b").resolve("c/d")).hasToString("/a/b/c/d");
        assertThat(p("/a/b").resolve("/x")).hasToString("/x");
        assertThat(p("/a/b").resolve("")).hasToString("/a/b");
        assertThat(p("/a/b").resolveSibling("z")).hasToString("/a/z");
        assertThat(p("/a/b").relativize(p("/a/c/d"))).hasToString("../c/d");
        assertThat(p("/a/b").relativize(p("/a/b"))).hasToString("");
        assertThat(p("a").relativize(p("a/b/c"))).hasToString("b/c");
        assertThat(p("/").relativize(p("/x/y"))).hasToString("x/y");
        assertThatThrownBy(() -> p("/a").relativize(p("b"))).isInstanceOf(IllegalArgumentException.class);
        assertThat(p("/a/./b/../c").normalize()).hasToString("/a/c");
        assertThat(p("/../a").normalize()).hasToString("/a");
        assertThat(p("../a/..").normalize()).hasToString("..");
        assertThat(p("a/b").toAbsolutePath()).hasToString("/a/b");
        Path base = p("/a/b");
        assertThat(base.resolve(base.relativize(p("/a/x/y"))).normalize()).isEqualTo(p("/a/x/y"));
    }

    @Test
    void startsEndsCompareAndMatch() {
        assertThat(p("/a/b/c").startsWith("/a/b")).isTrue();
        assertThat(p("/a/b/c").startsWith("/a/bc")).isFalse();
        assertThat(p("/a/b/c").startsWith("a")).isFalse();
        assertThat(p("/a/b/c").endsWith("b/c")).isTrue();
        assertThat(p("/a/b/c").endsWith("/b/c")).isFalse();
        assertThat(p("/a/b/c").endsWith("/a/b/c")).isTrue();
        assertThat(p("/a").compareTo(p("/b"))).isNegative();
        // by bytes: U+FF61 is EF BD A1, U+1F600 is F0 9F 98 80, an escaped 0x80 is 80 (UTF-16 says otherwise)
        assertThat(p("/\uFF61").compareTo(p("/\uD83D\uDE00"))).isNegative();
        assertThat(p("/\uDC80").compareTo(p("/\u00e9"))).isNegative();
        assertThat(p("/caf\uDCE9")).isNotEqualTo(p("/caf\uDCE8")).isNotEqualTo(p("/caf\u00e9"));
        assertThat(p("/a/b")).isEqualTo(p("/a//b/")).hasSameHashCodeAs(p("/a//b/"));
        assertThat(fs.getPathMatcher("glob:/**/*.{txt,md}").matches(p("/x/y/readme.md"))).isTrue();
        assertThat(fs.getPathMatcher("glob:*.txt").matches(p("a/b.txt"))).isFalse();
        assertThat(fs.getPathMatcher("glob:file?[0-9]").matches(p("fileA7"))).isTrue();
        assertThat(fs.getPathMatcher("regex:.*\\.txt").matches(p("a/b.txt"))).isTrue();
        assertThat(p("/a/b").toUri().toString()).startsWith("iomap:" + SnapAdapter.NAME + ":")
                .endsWith("!/a/b");
        assertThat(Path.of(p("/a b/c").toUri())).isEqualTo(p("/a b/c"));
    }
}
