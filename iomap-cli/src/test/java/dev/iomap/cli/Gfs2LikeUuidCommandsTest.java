package dev.iomap.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 35 item 12: gfs2-like's mkfs writes a filesystem UUID into the superblock (the cluster's
 * ZooKeeper namespace is keyed by it), and {@code iomap stat} shows it: a new one for every mkfs, also
 * of images formatted alike, and the same at every stat of one image.
 */
class Gfs2LikeUuidCommandsTest {
    private static final Pattern UUID_LINE = Pattern.compile(
            "\nuuid         : ([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\n");

    @TempDir
    Path dir;

    @Test
    void statShowsTheUuidMkfsWroteANewOneForEveryImage() {
        Path first = mkfs("first.img");
        Path second = mkfs("second.img");

        String uuid = uuidOf(first);

        assertThat(uuidOf(first)).as("stat again").isEqualTo(uuid);
        assertThat(uuidOf(second)).as("another image formatted alike").isNotEqualTo(uuid);
    }

    private Path mkfs(String name) {
        Path image = dir.resolve(name);
        Cli mkfs = Cli.run("mkfs", "--adapter=gfs2-like", "-o", "journals=2", "--size=32m", "--label=alike",
                image.toString());
        assertThat(mkfs.status()).as(mkfs.err()).isZero();
        return image;
    }

    private static String uuidOf(Path image) {
        Cli stat = Cli.run("stat", image.toString());
        assertThat(stat.status()).as(stat.err()).isZero();
        Matcher line = UUID_LINE.matcher(stat.out());
        assertThat(line.find()).as("a uuid line in:\n" + stat.out()).isTrue();
        assertThat(stat.out()).startsWith("image        : " + image + " (33554432 bytes)\nuuid         : ");
        return line.group(1);
    }
}
