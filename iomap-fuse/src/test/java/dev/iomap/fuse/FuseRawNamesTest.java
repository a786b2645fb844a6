package dev.iomap.fuse;

import static java.nio.charset.StandardCharsets.ISO_8859_1;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * File names on a real mount are the bytes a program passes, as on any Linux filesystem: names
 * that are not UTF-8 stay distinct ({@code caf\xe9.txt} and {@code caf\xe8.txt} are two files, not
 * one decoded with replacement), readdir gives back the same bytes, and the 255-byte limit counts bytes.
 *
 * <p>Names go in and come out through bash ({@code $'\xHH'} quoting, a glob, {@code printf '%s\0'}),
 * since Java's own file API would decode them. Expected names are written here as ISO-8859-1
 * strings: one char per byte, so {@code "caf\u00e9.txt"} is the five bytes {@code caf\xe9.txt}
 * plus the extension.
 */
class FuseRawNamesTest {
    /** {@code caf\xe9.txt}: Latin-1 é, not valid UTF-8. */
    private static final String CAF_E9 = "caf\u00e9.txt";
    /** {@code caf\xe8.txt}: Latin-1 è, not valid UTF-8. */
    private static final String CAF_E8 = "caf\u00e8.txt";
    /**
     * {@code caf\xef\xbf\xbd.txt}: a real U+FFFD in UTF-8, what a binding that decodes names
     * as UTF-8 with replacement (jfuse 0.7.3) turns both names above into.
     */
    private static final String CAF_FFFD = "caf\u00ef\u00bf\u00bd.txt";

    @TempDir
    Path dir;
    MountedImage mount;

    @AfterEach
    void unmount() throws Exception {
        if (mount != null) {
            mount.close();
        }
    }

    private void mount(String adapter) throws Exception {
        MountedImage.assumeFuse();
        Path image = dir.resolve("disk.img");
        MountedImage.format(adapter, image, 32L << 20);
        mount = MountedImage.mount(adapter, image, dir.resolve("mnt"));
    }

    /** @return bash's ANSI-C quoting of the bytes of {@code name} (one char per byte) */
    static String quote(String name) {
        var quoted = new StringBuilder("$'");
        for (byte b : name.getBytes(ISO_8859_1)) {
            quoted.append(String.format("\\x%02x", b & 0xff));
        }
        return quoted.append('\'').toString();
    }

    /** @return the names in {@code directory} (relative to the mount point), in byte order */
    private List<String> list(String directory) throws Exception {
        byte[] out = mount.shBytes("cd " + quote(directory) + " && LC_ALL=C; shopt -s nullglob dotglob;"
                + " for f in *; do printf '%s\\0' \"$f\"; done");
        List<String> names = new ArrayList<>();
        var name = new ByteArrayOutputStream();
        for (byte b : out) {
            if (b == 0) {
                names.add(name.toString(ISO_8859_1));
                name.reset();
            } else {
                name.write(b);
            }
        }
        return names;
    }

    private String cat(String name) throws Exception {
        return new String(mount.shBytes("cat " + quote(name)), ISO_8859_1);
    }

    @Test
    void namesThatAreNotUtf8StayDistinctThroughEveryOperation() throws Exception {
        mount(MountedImage.ADAPTER);
        mount.sh("printf A > " + quote(CAF_E9) + "; printf B > " + quote(CAF_E8) + "; printf C > " + quote(CAF_FFFD));
        assertThat(cat(CAF_E9)).isEqualTo("A");
        assertThat(cat(CAF_E8)).isEqualTo("B");
        assertThat(cat(CAF_FFFD)).isEqualTo("C");
        assertThat(list(".")).containsExactly(CAF_E8, CAF_E9, CAF_FFFD);

        String moved = "th\u00e9.txt";
        mount.sh("mv " + quote(CAF_E9) + " " + quote(moved));
        assertThat(list(".")).containsExactly(CAF_E8, CAF_FFFD, moved);
        assertThat(cat(moved)).isEqualTo("A");
        assertThat(mount.shell("cat " + quote(CAF_E9)).stderr()).contains("No such file or directory");

        mount.sh("rm " + quote(CAF_E8));
        assertThat(list(".")).containsExactly(CAF_FFFD, moved);
        assertThat(cat(CAF_FFFD)).isEqualTo("C");

        String subdir = "d\u00ff";
        String inner = "f\u00fe";
        mount.sh("mkdir " + quote(subdir) + " && printf D > " + quote(subdir + "/" + inner));
        assertThat(list(subdir)).containsExactly(inner);
        assertThat(cat(subdir + "/" + inner)).isEqualTo("D");
        assertThat(mount.sh("truncate -s 3 " + quote(moved) + " && touch " + quote(moved) + " && stat -c %s "
                + quote(moved))).isEqualTo("3\n");
        assertThat(mount.sh("stat -c %F " + quote(subdir))).isEqualTo("directory\n");

        mount.sh("rm " + quote(subdir + "/" + inner) + " && rmdir " + quote(subdir) + " && rm " + quote(moved)
                + " " + quote(CAF_FFFD));
        assertThat(list(".")).isEmpty();
        mount.unmount();
    }

    @Test
    void aNameIsAtMost255BytesWhateverTheyAre() throws Exception {
        mount(MountedImage.ADAPTER);
        String latin255 = "\u00e9".repeat(255);
        String utf8Of255 = "\u00c3\u00a9".repeat(127) + "x";
        mount.sh("printf L > " + quote(latin255) + " && printf U > " + quote(utf8Of255));
        assertThat(list(".")).as("byte order: 0xc3 < 0xe9").containsExactly(utf8Of255, latin255);
        assertThat(cat(latin255)).isEqualTo("L");
        assertThat(cat(utf8Of255)).isEqualTo("U");

        for (String tooLong : List.of(latin255 + "\u00e9", utf8Of255 + "y", "\u00c3\u00a9".repeat(128))) {
            assertThat(mount.shell("touch " + quote(tooLong)).stderr()).as("%d bytes", tooLong.length())
                    .contains("File name too long");
        }
        mount.sh("rm " + quote(latin255) + " " + quote(utf8Of255));
        mount.unmount();
    }

    /**
     * Names survive unmount and remount. On xfs-like this needs the adapter to store names as bytes
     * (branch {@code names}); snapfs keeps the {@code String} form, which is one-to-one.
     */
    @ParameterizedTest
    @ValueSource(strings = {"snapfs", "xfs-like"})
    void namesThatAreNotUtf8SurviveRemount(String adapter) throws Exception {
        mount(adapter);
        mount.sh("printf A > " + quote(CAF_E9) + "; printf B > " + quote(CAF_E8));
        mount.unmount();
        mount = MountedImage.mount(adapter, dir.resolve("disk.img"), dir.resolve("mnt"));
        assertThat(list(".")).containsExactly(CAF_E8, CAF_E9);
        assertThat(cat(CAF_E9)).isEqualTo("A");
        assertThat(cat(CAF_E8)).isEqualTo("B");
        mount.unmount();
    }
}
