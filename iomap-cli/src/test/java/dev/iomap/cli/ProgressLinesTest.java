package dev.iomap.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The progress line of the long image commands (issue 41 item 5): mkfs {@code --preallocate}, fsck and fsck
 * {@code --scrub} rewrite one line on a terminal and erase it at the end, and print nothing of it
 * elsewhere. The terminal is the launcher's answer ({@code iomap.stderr.terminal}); the line is asked to
 * show at once ({@code iomap.progress.after=0}) so that a short command shows it too.
 */
class ProgressLinesTest {
    @TempDir
    Path dir;

    @AfterEach
    void forgetTheTerminal() {
        System.clearProperty(Terminal.PROPERTY);
        System.clearProperty("iomap.progress.after");
    }

    private static void onATerminal(boolean terminal) {
        System.setProperty(Terminal.PROPERTY, Boolean.toString(terminal));
        System.setProperty("iomap.progress.after", "0");
    }

    @Test
    void mkfsPreallocateFsckAndScrubShowTheirLineOnATerminalAndEraseIt() {
        onATerminal(true);
        Path image = dir.resolve("b.img");

        Cli mkfs = Cli.run("mkfs", "--adapter=bcachefs-like", "--size=16m", "--preallocate", image.toString());
        Cli fsck = Cli.run("fsck", image.toString());
        Cli scrub = Cli.run("fsck", "--scrub", image.toString());

        assertThat(mkfs.status()).as(mkfs.err()).isZero();
        assertThat(mkfs.err()).startsWith("\rpreallocating " + image + ": ").contains(" of 16.0MiB (")
                .endsWith("\r");
        assertThat(fsck.status()).as(fsck.err()).isZero();
        assertThat(fsck.err()).startsWith("\rchecking " + image + " (bytes read): ").endsWith("\r");
        assertThat(scrub.status()).as(scrub.err()).isZero();
        assertThat(scrub.err()).startsWith("\rscrubbing " + image + " (bytes read): ").endsWith("\r");
        assertThat(erased(mkfs.err())).isBlank();
        assertThat(erased(scrub.err())).isBlank();
    }

    @Test
    void elsewhereTheCommandsPrintNoLine() {
        onATerminal(false);
        Path image = dir.resolve("x.img");

        Cli mkfs = Cli.run("mkfs", "--size=16m", "--preallocate", image.toString());
        Cli fsck = Cli.run("fsck", image.toString());

        assertThat(mkfs.status()).isZero();
        assertThat(mkfs.err()).isEmpty();
        assertThat(fsck.status()).isZero();
        assertThat(fsck.err()).isEmpty();
    }

    /** @return what stays on the line after the last carriage return: the erasing blanks */
    private static String erased(String err) {
        String[] parts = err.split("\r", -1);
        return parts.length < 2 ? err : parts[parts.length - 2];
    }
}
