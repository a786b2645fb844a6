package dev.iomap.adapter.gfs2;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.iomap.api.FileType;
import dev.iomap.api.FileSystemShutdownException;
import dev.iomap.api.MountOptions;
import dev.iomap.api.IomapFile;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.devices.CutMode;
import dev.iomap.devices.PowerCutDevice;
import dev.iomap.api.DirEntry;
import dev.iomap.devices.Fault;
import dev.iomap.devices.FaultInjectingDevice;
import dev.iomap.testkit.AdapterFixture;
import java.io.IOException;
import java.util.Arrays;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * A truncate that takes many transactions (a 16-block journal), cut by power at every device write:
 * each image is fsck-clean and shows the file at its old size, its final size, or a consistent size in
 * between whose bytes are the old bytes; a commit whose flush fails changes nothing and is retried;
 * and one whose journal write fails shuts the mount down.
 */
class BigTransactionCrashTest {
    private static final int BLOCK = BigTransactionTest.BLOCK;
    private static final int OLD = 40 * BLOCK + 300;
    private static final int NEW = 2 * BLOCK + 7;

    @Test
    void aPowerCutInsideAMultiTransactionTruncateLeavesAConsistentIntermediateSize() throws IOException {
        byte[] model = BigTransactionTest.pattern(5, OLD);
        AtomicInteger intermediate = new AtomicInteger();
        AdapterFixture fixture = BigTransactionTest.smallJournal("ordered", "16");
        int images = Cuts.everyWrite(fixture,
                fs -> {
                    fs.create("/f").close();
                    BigTransactionTest.write(fs, "/f", 0, model);
                },
                fs -> {
                    try (IomapFile file = fs.open("/f")) {
                        file.truncate(NEW);
                    }
                },
                IomapFileSystem::sync,
                fs -> {
                    byte[] f = BigTransactionTest.readAll(fs, "/f");
                    if (f.length < NEW || f.length > OLD || !intact(f, model)) {
                        return "size " + f.length + " with bytes that are not the old ones, first at "
                                + Arrays.mismatch(f, Arrays.copyOf(model, f.length));
                    }
                    if (f.length == NEW) {
                        return "new";
                    }
                    if (f.length != OLD) {
                        intermediate.incrementAndGet();
                    }
                    return "old";
                });
        assertThat(images).isGreaterThan(10);
        assertThat(intermediate.get()).as("images cut between two steps of the truncate").isPositive();
    }

    /**
     * @return whether {@code f} holds the old bytes below the final size, and above it zeroes (the
     *     rest of the final size's last folio, which the core's truncate zeroes in the cache and may
     *     write back before the size changes) followed by the old bytes
     */
    private static boolean intact(byte[] f, byte[] model) {
        if (!Arrays.equals(f, 0, NEW, model, 0, NEW)) {
            return false;
        }
        int k = NEW;
        while (k < f.length && f[k] == 0) {
            k++;
        }
        return Arrays.equals(f, k, f.length, model, k, f.length);
    }

    @Test
    void aCommitWhoseFlushFailsChangesNothingAndTheNextCommitSucceeds() throws IOException {
        AdapterFixture fixture = BigTransactionTest.smallJournal("ordered", "64");
        FaultInjectingDevice faulty = new FaultInjectingDevice(fixture.newFormattedDevice());
        Gfs2LikeMount mount = (Gfs2LikeMount) new Gfs2LikeAdapter().mount(faulty, MountOptions.defaults());
        mount.create(mount.rootIno(), "f", FileType.REGULAR);
        faulty.inject(Fault.flushes().times(1));

        assertThatThrownBy(mount::sync).isInstanceOf(IOException.class)
                .isNotInstanceOf(FileSystemShutdownException.class);
        mount.create(mount.rootIno(), "g", FileType.REGULAR);
        mount.sync();
        mount.unmount();

        Gfs2LikeMount again = (Gfs2LikeMount) new Gfs2LikeAdapter().mount(faulty.inner(), MountOptions.defaults());
        assertThat(again.readdir(again.rootIno())).extracting(DirEntry::name).contains("f", "g");
        again.unmount();
        assertThat(new Gfs2LikeAdapter().fsck(faulty.inner()).problems()).isEmpty();
    }

    @Test
    void aCommitWhoseJournalWriteFailsShutsTheMountDownNamingTheCause() throws IOException {
        AdapterFixture fixture = BigTransactionTest.smallJournal("ordered", "64");
        FaultInjectingDevice faulty = new FaultInjectingDevice(fixture.newFormattedDevice());
        Gfs2LikeMount mount = (Gfs2LikeMount) new Gfs2LikeAdapter().mount(faulty, MountOptions.defaults());
        mount.create(mount.rootIno(), "f", FileType.REGULAR);
        faulty.inject(Fault.metadataWrites().times(1));

        assertThatThrownBy(mount::sync).isInstanceOf(FileSystemShutdownException.class)
                .hasMessageContaining("a journal commit failed and the mount shut down")
                .hasCauseInstanceOf(IOException.class);
        assertThatThrownBy(() -> mount.create(mount.rootIno(), "g", FileType.REGULAR))
                .isInstanceOf(FileSystemShutdownException.class)
                .hasMessageContaining("a journal commit failed and the mount shut down");
        assertThatThrownBy(mount::unmount).isInstanceOf(FileSystemShutdownException.class);
    }
}
