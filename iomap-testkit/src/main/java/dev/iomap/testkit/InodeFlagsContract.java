package dev.iomap.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import dev.iomap.api.AttributeChange;
import dev.iomap.api.Capability;
import dev.iomap.api.FallocateMode;
import dev.iomap.api.FileFlag;
import dev.iomap.api.FileType;
import dev.iomap.api.IomapFile;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.NewInodeAttributes;
import dev.iomap.api.NotSupportedException;
import dev.iomap.api.OpenFlag;
import dev.iomap.api.OperationNotPermittedException;
import dev.iomap.api.XattrMode;
import dev.iomap.devices.CutMode;
import dev.iomap.devices.PowerCutDevice;
import dev.iomap.devices.RamBlockDevice;
import java.io.IOException;
import java.time.Instant;
import java.util.EnumSet;
import java.util.Random;
import java.util.Set;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.Test;

/**
 * The inode flags of {@link Capability#INODE_FLAGS} ({@code chattr}): kept across a mount and a power cut
 * after fsync, inherited by new files and directories, and {@link FileFlag#IMMUTABLE},
 * {@link FileFlag#APPEND}, {@link FileFlag#NO_ATIME} and {@link FileFlag#SYNC} enforced as Linux's VFS
 * enforces them (xfstests generic/079's {@code t_immutable}, 507, 553). Every refusal is EPERM
 * ({@link OperationNotPermittedException}) and changes nothing: the bytes and names are checked after it.
 */
public abstract class InodeFlagsContract extends AdapterContract {
    private static final Set<FileFlag> KEPT = EnumSet.of(FileFlag.SYNC, FileFlag.IMMUTABLE, FileFlag.APPEND,
            FileFlag.NO_DUMP, FileFlag.NO_ATIME, FileFlag.DAX);
    private static final Set<OpenFlag> READ_ONLY = Set.of(OpenFlag.READ_ONLY);

    private static void refused(ThrowingCallable call) {
        assertThatThrownBy(call).isInstanceOf(OperationNotPermittedException.class);
    }

    @Test
    void withoutTheCapabilityTheFlagsAreNotSupported() throws IOException {
        assumeFalse(has(Capability.INODE_FLAGS), "INODE_FLAGS is declared");
        for (FileFlag flag : KEPT) {
            assertThatThrownBy(() -> fs.setFileFlags("/", Set.of(flag))).as(flag.name())
                    .isInstanceOf(NotSupportedException.class);
        }
    }

    @Test
    void everyFlagIsKeptAcrossAMountAndClearedAgain() throws IOException {
        assumeCapable(Capability.INODE_FLAGS, Capability.DIRECTORIES);
        create("/f").close();
        fs.mkdir("/d");
        fs.setFileFlags("/f", KEPT);
        fs.setFileFlags("/d", EnumSet.of(FileFlag.NO_DUMP, FileFlag.DAX));
        remountChecked();
        assertThat(fs.getFileFlags("/f")).containsExactlyInAnyOrderElementsOf(KEPT);
        assertThat(fs.getFileFlags("/d")).containsExactlyInAnyOrder(FileFlag.NO_DUMP, FileFlag.DAX);
        fs.setFileFlags("/f", Set.of());
        remountChecked();
        assertThat(fs.getFileFlags("/f")).isEmpty();
    }

    @Test
    void aFlagSetThenFsyncedThroughAReadOnlyOpenSurvivesAPowerCut() throws IOException {
        assumeCapable(Capability.INODE_FLAGS, Capability.DURABLE_FSYNC);
        for (Set<FileFlag> flags : java.util.List.of(EnumSet.of(FileFlag.IMMUTABLE, FileFlag.NO_ATIME),
                Set.<FileFlag>of())) {
            PowerCutDevice power = new PowerCutDevice(kit().newFormattedDevice());
            IomapFileSystem crashing = kit().mount(power);
            crashing.create("/f").close();
            crashing.sync();
            crashing.setFileFlags("/f", EnumSet.of(FileFlag.APPEND));
            crashing.sync();
            crashing.setFileFlags("/f", flags);
            try (IomapFile file = crashing.open("/f", READ_ONLY)) {
                file.fsync();
            }
            RamBlockDevice image = power.cut(CutMode.LOSE_UNFLUSHED, new Random(7));
            try {
                crashing.close();
            } catch (IOException expected) {
                // The power is off.
            }
            try (IomapFileSystem recovered = kit().mount(image)) {
                assertThat(recovered.getFileFlags("/f")).as("after fsync of " + flags).isEqualTo(flags);
            }
            assertThat(kit().fsck(image).problems()).isEmpty();
        }
    }

    @Test
    void anImmutableFileIsReadAndNothingElse() throws IOException {
        assumeCapable(Capability.INODE_FLAGS, Capability.DIRECTORIES);
        IomapFile before = create("/f");
        byte[] data = writePattern(before, 0, 3 * blockSize() + 5, 1);
        fs.mkdir("/d");
        fs.setFileFlags("/f", Set.of(FileFlag.IMMUTABLE));

        refused(() -> fs.open("/f"));
        refused(() -> fs.open("/f", Set.of(OpenFlag.APPEND)));
        refused(() -> write(before, 0, new byte[] {1}));
        refused(() -> before.truncate(0));
        refused(() -> fs.unlink("/f"));
        refused(() -> fs.rename("/f", "/g"));
        refused(() -> fs.rename("/f", "/d/f"));
        if (has(Capability.HARD_LINKS)) {
            refused(() -> fs.createLink("/h", "/f"));
        }
        if (has(Capability.POSIX_ATTRIBUTES)) {
            refused(() -> fs.setAttributes("/f", AttributeChange.none().withMode(0600)));
            refused(() -> fs.setAttributes("/f", AttributeChange.none().withUid(7)));
            refused(() -> fs.setAttributes("/f", AttributeChange.none().withTimesNow(Instant.now(), true, true)));
        }
        if (has(Capability.XATTRS)) {
            refused(() -> fs.setXattr("/f", "user.a", new byte[] {1}, XattrMode.ANY));
        }
        if (has(Capability.FALLOCATE)) {
            refused(() -> before.fallocate(FallocateMode.ALLOCATE, 0, blockSize(), false));
        }
        before.close();
        try (IomapFile reader = fs.open("/f", READ_ONLY)) {
            assertContent(reader, data);
            refused(() -> write(reader, 0, new byte[] {1}));
        }
        assertThat(fs.readdir("/")).extracting(e -> e.name()).contains("f", "d");

        fs.setFileFlags("/f", Set.of());
        try (IomapFile writer = fs.open("/f")) {
            write(writer, 0, new byte[] {9});
        }
        fs.unlink("/f");
        remountChecked();
    }

    @Test
    void anAppendOnlyFileOnlyGrows() throws IOException {
        assumeCapable(Capability.INODE_FLAGS);
        byte[] data;
        try (IomapFile file = create("/f")) {
            data = writePattern(file, 0, blockSize() + 3, 2);
        }
        fs.setFileFlags("/f", Set.of(FileFlag.APPEND));
        refused(() -> fs.open("/f"));
        refused(() -> fs.unlink("/f"));
        refused(() -> fs.rename("/f", "/g"));
        if (has(Capability.POSIX_ATTRIBUTES)) {
            refused(() -> fs.setAttributes("/f", AttributeChange.none().withMode(0600)));
            refused(() -> fs.setAttributes("/f", AttributeChange.none().withMtime(Instant.EPOCH)));
            Instant now = Instant.now();
            fs.setAttributes("/f", AttributeChange.none().withTimesNow(now, true, true));
            assertThat(fs.stat("/f").mtime()).isEqualTo(now);
        }
        byte[] tail = {7, 8, 9};
        try (IomapFile appender = fs.open("/f", Set.of(OpenFlag.APPEND))) {
            write(appender, 0, tail);
            refused(() -> appender.truncate(0));
            if (has(Capability.PUNCH_HOLE)) {
                refused(() -> appender.fallocate(FallocateMode.PUNCH_HOLE, 0, blockSize(), true));
            }
        }
        try (IomapFile reader = fs.open("/f", READ_ONLY)) {
            assertContent(reader, apply(data, data.length, tail));
        }
        fs.setFileFlags("/f", Set.of());
        fs.unlink("/f");
        remountChecked();
    }

    @Test
    void anImmutableDirectoryKeepsItsNamesAndAnAppendOnlyOneOnlyGainsNames() throws IOException {
        assumeCapable(Capability.INODE_FLAGS, Capability.DIRECTORIES, Capability.RENAME);
        fs.mkdir("/i");
        fs.mkdir("/a");
        create("/i/old").close();
        create("/a/old").close();
        create("/loose").close();
        fs.setFileFlags("/i", Set.of(FileFlag.IMMUTABLE));
        fs.setFileFlags("/a", Set.of(FileFlag.APPEND));

        refused(() -> fs.create("/i/new"));
        refused(() -> fs.mkdir("/i/sub"));
        refused(() -> fs.unlink("/i/old"));
        refused(() -> fs.rename("/loose", "/i/loose"));
        refused(() -> fs.rename("/i/old", "/moved"));
        try (IomapFile inside = fs.open("/i/old")) {
            write(inside, 0, new byte[] {5});
        }

        fs.create("/a/new").close();
        fs.rename("/loose", "/a/loose");
        refused(() -> fs.unlink("/a/old"));
        refused(() -> fs.rename("/a/old", "/moved"));
        refused(() -> fs.rename("/a/new", "/a/old"));
        assertThat(fs.readdir("/i")).extracting(e -> e.name()).containsExactly("old");
        assertThat(fs.readdir("/a")).extracting(e -> e.name()).containsExactlyInAnyOrder("old", "new", "loose");

        fs.setFileFlags("/i", Set.of());
        fs.setFileFlags("/a", Set.of());
        fs.unlink("/i/old");
        fs.unlink("/a/old");
        remountChecked();
    }

    @Test
    void newFilesAndDirectoriesInheritTheInheritedFlags() throws IOException {
        assumeCapable(Capability.INODE_FLAGS, Capability.DIRECTORIES);
        fs.mkdir("/d");
        fs.setFileFlags("/d", EnumSet.of(FileFlag.DAX, FileFlag.NO_ATIME, FileFlag.SYNC, FileFlag.NO_DUMP,
                FileFlag.APPEND));
        create("/d/f").close();
        fs.mkdir("/d/sub");
        Set<FileFlag> inherited = EnumSet.of(FileFlag.DAX, FileFlag.NO_ATIME, FileFlag.SYNC, FileFlag.NO_DUMP);
        assertThat(fs.getFileFlags("/d/f")).isEqualTo(inherited);
        assertThat(fs.getFileFlags("/d/sub")).isEqualTo(inherited);
        if (has(Capability.SYMLINKS)) {
            fs.createSymbolicLink("/d/link", "f", NewInodeAttributes.defaults(FileType.SYMLINK));
            fs.setFileFlags("/d", Set.of());
            fs.rename("/d/f", "/f");
            assertThat(fs.getFileFlags("/f")).as("a rename keeps them").isEqualTo(inherited);
        }
        remountChecked();
        assertThat(fs.getFileFlags("/d/sub")).isEqualTo(inherited);
    }

    @Test
    void theDaxFlagIsForRegularFilesAndDirectoriesOnly() throws IOException {
        assumeCapable(Capability.INODE_FLAGS, Capability.SPECIAL_FILES);
        fs.createSpecialFile("/fifo", FileType.FIFO, 0, NewInodeAttributes.defaults(FileType.FIFO));
        assertThatThrownBy(() -> fs.setFileFlags("/fifo", Set.of(FileFlag.DAX)))
                .isInstanceOf(IllegalArgumentException.class);
        fs.setFileFlags("/fifo", Set.of(FileFlag.NO_DUMP));
        assertThat(fs.getFileFlags("/fifo")).containsExactly(FileFlag.NO_DUMP);
    }

    @Test
    void aReadLeavesTheAccessTimeOfANoAtimeFile() throws IOException {
        assumeCapable(Capability.INODE_FLAGS, Capability.POSIX_ATTRIBUTES);
        create("/f").close();
        fs.setAttributes("/f", AttributeChange.none().withAtime(Instant.ofEpochSecond(1000)));
        fs.setFileFlags("/f", Set.of(FileFlag.NO_ATIME));
        fs.setAttributes("/f", AttributeChange.accessed(Instant.ofEpochSecond(2000)));
        assertThat(fs.stat("/f").atime()).isEqualTo(Instant.ofEpochSecond(1000));
        fs.setFileFlags("/f", Set.of());
        fs.setAttributes("/f", AttributeChange.accessed(Instant.ofEpochSecond(2000)));
        assertThat(fs.stat("/f").atime()).isEqualTo(Instant.ofEpochSecond(2000));
    }

    @Test
    void aWriteToASyncFileIsDurableWhenItReturns() throws IOException {
        assumeCapable(Capability.INODE_FLAGS, Capability.DURABLE_FSYNC);
        PowerCutDevice power = new PowerCutDevice(kit().newFormattedDevice());
        IomapFileSystem crashing = kit().mount(power);
        crashing.create("/f").close();
        crashing.setFileFlags("/f", Set.of(FileFlag.SYNC));
        crashing.sync();
        byte[] data;
        try (IomapFile file = crashing.open("/f")) {
            data = writePattern(file, 0, 2 * blockSize() + 7, 3);
        }
        RamBlockDevice image = power.cut(CutMode.LOSE_UNFLUSHED, new Random(3));
        try {
            crashing.close();
        } catch (IOException expected) {
            // The power is off.
        }
        try (IomapFileSystem recovered = kit().mount(image);
                IomapFile file = recovered.open("/f", READ_ONLY)) {
            assertThat(recovered.getFileFlags("/f")).contains(FileFlag.SYNC);
            assertContent(file, data);
        }
    }
}
