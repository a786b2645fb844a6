package dev.iomap.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Issue 36, item 7: every way {@code mkfs --force} can refuse, for every adapter, refuses before it touches
 * the image: over an image holding that adapter's filesystem, a refused mkfs exits 1 with one line and leaves
 * every byte and the size as they were (the filesystem still passes fsck). Each case names the check that
 * refuses it; the list is the table of mkfs refusal paths per adapter.
 */
class MkfsRefusalsTest {
    /** The image every case starts from, per adapter: a filesystem of that adapter, 16 MiB. */
    private static final String PLAIN_IMAGE = "--size=16m";
    private static final String ZONED_IMAGE = "--size=16m -o zone-size=1m,conventional=1";
    private static final String LONG_LABEL = "--label=" + "x".repeat(33);

    @TempDir
    Path dir;

    static Stream<Arguments> refusals() {
        List<Arguments> cases = new ArrayList<>();
        for (String adapter : List.of("xfs-like", "gfs2-like", "bcachefs-like", "zonefs-like")) {
            String zones = adapter.equals("zonefs-like") ? " -o zone-size=1m" : "";
            cases.add(Arguments.of(adapter, "--size=abc" + zones, "bad --size"));
            cases.add(Arguments.of(adapter, "--size=100" + zones, "size below one block"));
            cases.add(Arguments.of(adapter, "--size=16m --block-size=3000" + zones, "block size not a power of two"));
            cases.add(Arguments.of(adapter, "--size=16m " + LONG_LABEL + zones, "label over 32 bytes"));
            cases.add(Arguments.of(adapter, "--size=16m -o nosuchoption=1" + zones, "unknown property"));
        }
        for (String plain : List.of("xfs-like", "gfs2-like", "bcachefs-like")) {
            cases.add(Arguments.of(plain, "--size=16m -o zone-size=1m", "zone settings for a plain adapter"));
        }
        cases.add(Arguments.of("xfs-like", "--size=64k", "too few blocks"));
        cases.add(Arguments.of("xfs-like", "--size=2p", "more blocks than it addresses"));
        cases.add(Arguments.of("xfs-like", "--size=16m -o agcount=0", "agcount out of range"));
        cases.add(Arguments.of("xfs-like", "--size=16m -o agcount=abc", "agcount not a number"));
        cases.add(Arguments.of("xfs-like", "--size=16m -o journalblocks=1", "journalblocks out of range"));
        cases.add(Arguments.of("xfs-like", "--size=16m -o inodes=1", "inodes out of range"));
        cases.add(Arguments.of("xfs-like", "--size=16m -o agcount=1000",
                "allocation groups too small"));
        cases.add(Arguments.of("gfs2-like", "--size=512k", "fewer than 256 blocks"));
        cases.add(Arguments.of("gfs2-like", "--size=16m -o journals=0", "journals out of range"));
        cases.add(Arguments.of("gfs2-like", "--size=16m -o journals=65", "journals out of range"));
        cases.add(Arguments.of("gfs2-like", "--size=16m -o journalblocks=8", "journalblocks out of range"));
        cases.add(Arguments.of("gfs2-like", "--size=16m -o rgblocks=8", "rgblocks out of range"));
        cases.add(Arguments.of("gfs2-like", "--size=16m -o rgblocks=abc", "rgblocks not a number"));
        cases.add(Arguments.of("gfs2-like", "--size=16m -o journals=64,journalblocks=1024",
                "journals do not fit"));
        cases.add(Arguments.of("bcachefs-like", "--size=100k", "device too small for the journal"));
        cases.add(Arguments.of("bcachefs-like", "--size=16m -o journalblocks=10", "journal below 64 blocks"));
        cases.add(Arguments.of("bcachefs-like", "--size=16m -o journalblocks=100000",
                "journal larger than the device"));
        cases.add(Arguments.of("bcachefs-like", "--size=16m --block-size=512", "blocks below 1 KiB"));
        cases.add(Arguments.of("bcachefs-like", "--size=16m -o checksum=md5", "unknown checksum"));
        cases.add(Arguments.of("bcachefs-like", "--size=16m -o compression=gzip", "unknown compression"));
        cases.add(Arguments.of("bcachefs-like", "--size=16m -o nocow=true,compression=lz4", "nocow with compression"));
        cases.add(Arguments.of("bcachefs-like", "--size=16m -o extentmax=5000", "extentmax not whole blocks"));
        cases.add(Arguments.of("zonefs-like", "--size=4k -o zone-size=4k", "one zone (the issue's 4k case)"));
        cases.add(Arguments.of("zonefs-like", "--size=64m -o zone-size=64m,conventional=1",
                "one zone, conventional (the issue's 64m case)"));
        cases.add(Arguments.of("zonefs-like", "--size=16m -o zone-size=16m", "one zone"));
        cases.add(Arguments.of("zonefs-like", "--size=16m -o zone-size=3000", "zone size not whole blocks"));
        cases.add(Arguments.of("zonefs-like", "--size=16m -o zone-size=1m,capacity=2m", "capacity over zone size"));
        cases.add(Arguments.of("zonefs-like", "--size=16m -o zone-size=1m,conventional=99",
                "more conventional zones than zones"));
        cases.add(Arguments.of("zonefs-like", "--size=16m -o conventional=1", "zone settings without zone-size"));
        cases.add(Arguments.of("zonefs-like", "--size=16m -o zone-size=abc", "bad zone-size"));
        cases.add(Arguments.of("zonefs-like", "--size=16m -o zone-size=1m,max-open=-1", "negative max-open"));
        cases.add(Arguments.of("zonefs-like", "--block-size=1024", "existing zones of another block size"));
        return cases.stream();
    }

    @ParameterizedTest(name = "{0} {1}: {2}")
    @MethodSource("refusals")
    void aRefusedMkfsLeavesTheAdaptersImageByteForByte(String adapter, String options, String what)
            throws IOException {
        Path image = dir.resolve(adapter + ".img");
        String made = adapter.equals("zonefs-like") ? ZONED_IMAGE : PLAIN_IMAGE;
        Cli format = run("mkfs --adapter=" + adapter + " " + made + " " + image);
        assertThat(format.status()).as(format.err()).isZero();
        long size = Files.size(image);
        String digest = digest(image);

        Cli mkfs = run("mkfs --force --adapter=" + adapter + " " + options + " " + image);

        assertThat(mkfs.status()).as("mkfs %s (%s): %s", options, what, mkfs.out()).isEqualTo(1);
        assertThat(mkfs.err()).as("mkfs %s (%s)", options, what).startsWith("iomap: ").hasLineCount(1)
                .doesNotContain("Exception");
        assertThat(Files.size(image)).as("image size after the refused mkfs %s", options).isEqualTo(size);
        assertThat(digest(image)).as("image bytes after the refused mkfs %s", options).isEqualTo(digest);
        Cli fsck = run("fsck --adapter=" + adapter + " " + image);
        assertThat(fsck.status()).as("fsck after the refused mkfs: %s%s", fsck.out(), fsck.err()).isZero();
    }

    private static Cli run(String command) {
        return Cli.run(command.split(" "));
    }

    private static String digest(Path file) throws IOException {
        try (InputStream in = Files.newInputStream(file)) {
            MessageDigest sha = MessageDigest.getInstance("SHA-256");
            byte[] buffer = new byte[1 << 16];
            for (int n = in.read(buffer); n >= 0; n = in.read(buffer)) {
                sha.update(buffer, 0, n);
            }
            return HexFormat.of().formatHex(sha.digest());
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is missing from the JDK", e);
        }
    }
}
