package dev.iomap.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.iomap.cli.MountOptionList.Item;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code iomap mount -o LIST} as {@code mount -t fuse.iomap} and fstab lines hand it over (issue 38): the
 * list splits at commas but for escaped or quoted ones; mount(8)'s own options are recognized; FUSE's are
 * escaped for libfuse; an {@code -o} spelling of the command's own option that is given wrongly is refused
 * before anything is opened.
 */
class MountOptionListTest {

    @TempDir
    Path dir;

    @Test
    void aListSplitsAtCommasIntoKeysAndValues() throws UsageException {
        assertThat(MountOptionList.parse("defaults,adapter=gfs2-like,,node_id=a,ro")).containsExactly(
                new Item("defaults", null), new Item("adapter", "gfs2-like"), new Item("node_id", "a"),
                new Item("ro", null));
    }

    @Test
    void aCommaInAValueIsEscapedOrQuoted() throws UsageException {
        Item expected = new Item("cluster", "zk=h1:2181,h2:2181");
        assertThat(MountOptionList.parse("cluster=zk=h1:2181\\,h2:2181,ro"))
                .containsExactly(expected, new Item("ro", null));
        assertThat(MountOptionList.parse("cluster=\"zk=h1:2181,h2:2181\",ro"))
                .containsExactly(expected, new Item("ro", null));
        assertThat(MountOptionList.forLibfuse(new Item("fsname", "a,b\\c"))).isEqualTo("fsname=a\\,b\\\\c");
    }

    @Test
    void anUnclosedQuoteOrATrailingBackslashIsRefused() {
        assertThatThrownBy(() -> MountOptionList.parse("cluster=\"zk=h1:2181"))
                .isInstanceOf(UsageException.class).hasMessageContaining("double quote is not closed");
        assertThatThrownBy(() -> MountOptionList.parse("ro\\"))
                .isInstanceOf(UsageException.class).hasMessageContaining("backslash at the end");
    }

    @Test
    void mountsOwnOptionsAreRecognized() throws UsageException {
        for (String option : new String[] {"defaults", "noauto", "nofail", "_netdev", "x-systemd.automount",
                "comment=backup", "user"}) {
            assertThat(MountOptionList.parse(option).getFirst().mountOnly()).as(option).isTrue();
        }
        assertThat(MountOptionList.parse("data=journal").getFirst().mountOnly()).isFalse();
        assertThat(MountOptionList.FUSE).contains("allow_other", "ro", "noatime", "relatime", "strictatime");
    }

    /**
     * A mount of an image another device holds waits for it (a mount just unmounted, still closing), says
     * so once it has waited half the timeout (at most 5 s), and gives up after --busy-timeout with the holder's refusal first; -o busy_timeout=0 refuses at
     * once.
     */
    @Test
    void aHeldImageIsWaitedForUpToTheBusyTimeoutThenRefused() throws Exception {
        Path image = dir.resolve("held.img");
        assertThat(Cli.run("mkfs", "--size=16m", image.toString()).status()).isZero();
        Path mountPoint = Files.createDirectory(dir.resolve("mnt"));
        try (var holder = dev.iomap.devices.FileBlockDevice.open(image, 512, false)) {
            assertThat(holder.readOnly()).isFalse();
            Cli waited = Cli.run("mount", "-f", "-o", "busy_timeout=2", image.toString(), mountPoint.toString());
            Cli atOnce = Cli.run("mount", "-f", "-o", "busy_timeout=0", image.toString(), mountPoint.toString());

            assertThat(waited.status()).isNotZero();
            assertThat(waited.err()).startsWith("iomap: " + image + " is busy; waiting up to 2 s for its previous"
                    + " holder to finish\niomap: " + image + " is in use: ")
                    .contains("(waited 2 s for it to be let go of: is it mounted elsewhere, findmnt -S " + image);
            assertThat(atOnce.status()).isNotZero();
            assertThat(atOnce.err()).startsWith("iomap: " + image + " is in use: ").doesNotContain("waiting");
        }
    }

    @Test
    void anOwnOptionGivenWronglyIsRefusedBeforeTheImageIsOpened() throws Exception {
        Path mountPoint = Files.createDirectory(dir.resolve("mnt"));
        Path missing = dir.resolve("missing.img");

        Cli flagWithValue = Cli.run("mount", "-f", "-o", "blkdev=yes", missing.toString(), mountPoint.toString());
        Cli valueMissing = Cli.run("mount", "-f", "-o", "busy_timeout", missing.toString(), mountPoint.toString());
        Cli notANumber = Cli.run("mount", "-f", "-o", "busy-timeout=soon", missing.toString(), mountPoint.toString());

        assertThat(flagWithValue.err()).contains("-o blkdev=yes: --blkdev takes no value");
        assertThat(valueMissing.err()).contains("-o busy_timeout: --busy-timeout needs a value (busy_timeout=...)");
        assertThat(notANumber.err()).contains("-o busy-timeout=soon: --busy-timeout takes a whole number");
        assertThat(flagWithValue.status()).isNotZero();
        assertThat(valueMissing.status()).isNotZero();
        assertThat(notANumber.status()).isNotZero();
    }
}
