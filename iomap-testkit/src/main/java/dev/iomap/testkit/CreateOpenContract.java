package dev.iomap.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.iomap.api.Capability;
import dev.iomap.api.DirEntry;
import dev.iomap.api.FileStat;
import dev.iomap.api.FileType;
import dev.iomap.api.FsStat;
import dev.iomap.api.IomapFile;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.file.ClosedFileSystemException;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.InvalidPathException;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Create, open and the namespace: names, directories, rename, unlink, stat and statfs. */
public abstract class CreateOpenContract extends AdapterContract {

    @Test
    void aNewFileIsEmptyAndReadsEof() throws IOException {
        IomapFile file = create("/a");
        assertThat(file.size()).isZero();
        assertThat(file.read(0, ByteBuffer.allocate(16))).as("read of an empty file").isEqualTo(-1);
        FileStat stat = fs.stat("/a");
        assertThat(stat.type()).isEqualTo(FileType.REGULAR);
        assertThat(stat.size()).isZero();
        assertThat(stat.linkCount()).isEqualTo(1);
        assertThat(stat.ino()).isEqualTo(file.ino());
    }

    @Test
    void openFindsWhatCreateMade() throws IOException {
        byte[] data = writePattern(create("/a"), 0, 100, 1);
        assertContent(open("/a"), data);
    }

    /**
     * {@link IomapFile#reopen}, as {@code /proc/self/fd/N} and {@code open_by_handle_at} open a file: the
     * same inode, named or unlinked, with its own flags and its own close; the inode goes with the last.
     */
    @Test
    void reopenOpensTheSameInodeAlsoAfterItsNameIsGone() throws IOException {
        IomapFile first = create("/a");
        byte[] model = writePattern(first, 0, 3 * blockSize() + 1, 4);
        fs.unlink("/a");
        IomapFile again = first.reopen(Set.of());
        assertThat(again.ino()).isEqualTo(first.ino());
        assertContent(again, model);
        byte[] tail = {1, 2, 3};
        write(again, model.length, tail);
        first.close();
        assertContent(again, apply(model, model.length, tail));
        try (IomapFile reader = again.reopen(Set.of(dev.iomap.api.OpenFlag.READ_ONLY))) {
            assertContent(reader, apply(model, model.length, tail));
            assertThatThrownBy(() -> write(reader, 0, tail))
                    .isInstanceOf(dev.iomap.api.OperationNotPermittedException.class);
        }
        again.close();
        assertThatThrownBy(() -> again.reopen(Set.of())).isInstanceOf(ClosedChannelException.class);
        assertThat(fs.readdir("/")).extracting(DirEntry::name).doesNotContain("a");
        remountChecked();
    }

    @Test
    void createOfAnExistingNameFails() throws IOException {
        create("/a");
        assertThatThrownBy(() -> fs.create("/a")).isInstanceOf(FileAlreadyExistsException.class);
    }

    @Test
    void openOfAMissingNameFails() {
        assertThatThrownBy(() -> fs.open("/missing")).isInstanceOf(NoSuchFileException.class);
        assertThatThrownBy(() -> fs.stat("/missing")).isInstanceOf(NoSuchFileException.class);
    }

    @Test
    void createInAMissingDirectoryFails() {
        assertThatThrownBy(() -> fs.create("/missing/a")).isInstanceOf(NoSuchFileException.class);
    }

    @Test
    void badNamesAreRefused() {
        for (String path : List.of("relative", "/a/../b", "/./a", "//a", "/" + "n".repeat(256))) {
            assertThatThrownBy(() -> fs.create(path)).as(path).isInstanceOf(InvalidPathException.class);
        }
    }

    @Test
    void aNameOf255BytesWorks() throws IOException {
        String name = "/" + "n".repeat(255);
        create(name);
        remount();
        assertThat(fs.stat(name).type()).isEqualTo(FileType.REGULAR);
    }

    @Test
    void readdirListsEntriesSortedByName() throws IOException {
        List<Long> inos = new ArrayList<>();
        for (String name : List.of("c", "a", "b")) {
            inos.add(create("/" + name).ino());
        }
        List<DirEntry> entries = fs.readdir("/");
        assertThat(entries).extracting(DirEntry::name).containsExactly("a", "b", "c");
        assertThat(entries).extracting(DirEntry::type).containsOnly(FileType.REGULAR);
        assertThat(entries).extracting(DirEntry::ino).containsExactlyInAnyOrder(inos.toArray(Long[]::new));
    }

    @Test
    void inodeNumbersAreUnique() throws IOException {
        Set<Long> inos = new HashSet<>();
        for (int i = 0; i < 50; i++) {
            assertThat(inos.add(create("/f" + i).ino())).as("inode of /f%d is new", i).isTrue();
        }
    }

    @Test
    void manyFilesInOneDirectorySurviveRemount() throws IOException {
        int count = 300;
        for (int i = 0; i < count; i++) {
            writePattern(create(String.format("/file-with-a-longish-name-%04d", i)), 0, 10, i);
        }
        remountChecked();
        List<DirEntry> entries = fs.readdir("/");
        assertThat(entries).hasSize(count);
        assertThat(entries.getFirst().name()).isEqualTo("file-with-a-longish-name-0000");
        assertContent(open("/file-with-a-longish-name-0123"), TestData.pattern(123, 0, 10));
    }

    @Test
    void unlinkRemovesTheName() throws IOException {
        create("/a").close();
        fs.unlink("/a");
        assertThatThrownBy(() -> fs.open("/a")).isInstanceOf(NoSuchFileException.class);
        assertThat(fs.readdir("/")).isEmpty();
        assertThatThrownBy(() -> fs.unlink("/a")).isInstanceOf(NoSuchFileException.class);
        create("/a");
        assertThat(fs.readdir("/")).extracting(DirEntry::name).containsExactly("a");
    }

    @Test
    void anUnlinkedOpenFileStaysUsableAndItsSpaceComesBackAtClose() throws IOException {
        IomapFile file = create("/a");
        int length = 64 * blockSize();
        byte[] data = writePattern(file, 0, length, 7);
        file.fsync();
        long freeWhileHeld = fs.statfs().freeBlocks();
        fs.unlink("/a");
        assertContent(file, data);
        byte[] more = writePattern(file, length, blockSize(), 8);
        assertContent(file, apply(/* model= */ data, length, /* data= */ more));
        file.close();
        fs.sync();
        assertThat(fs.statfs().freeBlocks()).as("free blocks after the last close of an unlinked file")
                .isGreaterThan(freeWhileHeld);
        remountChecked();
        assertThat(fs.readdir("/")).isEmpty();
    }

    @Test
    void unlinkedFilesFreeTheirSpace() throws IOException {
        fs.sync();
        long freeAtStart = fs.statfs().freeBlocks();
        for (int round = 0; round < 3; round++) {
            IomapFile file = create("/big");
            writePattern(file, 0, 256 * blockSize(), round);
            file.fsync();
            file.close();
            fs.unlink("/big");
            fs.sync();
        }
        long lost = freeAtStart - fs.statfs().freeBlocks();
        assertThat(lost).as("blocks not given back after three write-unlink rounds of 256 blocks")
                .isLessThan(64);
    }

    @Test
    void statfsIsConsistent() throws IOException {
        FsStat stat = fs.statfs();
        assertThat(stat.blockSize()).isEqualTo(blockSize());
        assertThat(stat.totalBlocks()).isPositive();
        assertThat(stat.freeBlocks()).isBetween(0L, stat.totalBlocks());
        assertThat(stat.totalBlocks() * stat.blockSize()).isLessThanOrEqualTo(device.capacity());
        IomapFile file = create("/a");
        writePattern(file, 0, 32 * blockSize(), 1);
        file.fsync();
        assertThat(fs.statfs().freeBlocks()).as("free blocks after writing 32 blocks")
                .isLessThanOrEqualTo(stat.freeBlocks() - 32);
    }

    @Test
    void statReportsSizeAndAllocation() throws IOException {
        IomapFile file = create("/a");
        writePattern(file, 0, 3 * blockSize() + 5, 1);
        file.fsync();
        FileStat stat = file.stat();
        assertThat(stat.size()).isEqualTo(3L * blockSize() + 5);
        assertThat(stat.allocatedBytes()).isGreaterThanOrEqualTo(3L * blockSize());
        assertThat(fs.stat("/a")).isEqualTo(stat);
    }

    @Test
    void aClosedFileRefusesIo() throws IOException {
        IomapFile file = create("/a");
        file.close();
        file.close();
        assertThatThrownBy(() -> file.read(0, ByteBuffer.allocate(1))).isInstanceOf(ClosedChannelException.class);
        assertThatThrownBy(() -> file.write(0, ByteBuffer.allocate(1))).isInstanceOf(ClosedChannelException.class);
        assertThatThrownBy(file::fsync).isInstanceOf(ClosedChannelException.class);
    }

    @Test
    void anUnmountedFilesystemRefusesEverything() throws IOException {
        create("/a").close();
        fs.close();
        fs.close();
        assertThatThrownBy(() -> fs.open("/a")).isInstanceOf(ClosedFileSystemException.class);
        assertThatThrownBy(() -> fs.create("/b")).isInstanceOf(ClosedFileSystemException.class);
        assertThatThrownBy(() -> fs.readdir("/")).isInstanceOf(ClosedFileSystemException.class);
        remount();
        assertThat(fs.readdir("/")).extracting(DirEntry::name).containsExactly("a");
    }

    @Test
    void directoriesHoldFilesAndOtherDirectories() throws IOException {
        assumeCapable(Capability.DIRECTORIES);
        fs.mkdir("/d");
        fs.mkdir("/d/e");
        byte[] data = writePattern(create("/d/e/f"), 0, 1000, 3);
        assertThat(fs.stat("/d").type()).isEqualTo(FileType.DIRECTORY);
        assertThat(fs.readdir("/")).extracting(DirEntry::name, DirEntry::type)
                .containsExactly(org.assertj.core.groups.Tuple.tuple("d", FileType.DIRECTORY));
        remountChecked();
        assertContent(open("/d/e/f"), data);
        assertThat(fs.readdir("/d")).extracting(DirEntry::name).containsExactly("e");
    }

    @Test
    void directoryErrorsAreTyped() throws IOException {
        assumeCapable(Capability.DIRECTORIES);
        fs.mkdir("/d");
        create("/d/f");
        create("/file");
        assertThatThrownBy(() -> fs.mkdir("/d")).isInstanceOf(FileAlreadyExistsException.class);
        assertThatThrownBy(() -> fs.rmdir("/d")).isInstanceOf(DirectoryNotEmptyException.class);
        assertThatThrownBy(() -> fs.open("/d")).isInstanceOf(IOException.class);
        assertThatThrownBy(() -> fs.unlink("/d")).isInstanceOf(IOException.class);
        assertThatThrownBy(() -> fs.readdir("/file")).isInstanceOf(NotDirectoryException.class);
        assertThatThrownBy(() -> fs.create("/file/x")).isInstanceOf(NotDirectoryException.class);
        assertThatThrownBy(() -> fs.rmdir("/missing")).isInstanceOf(NoSuchFileException.class);
        fs.unlink("/d/f");
        fs.rmdir("/d");
        assertThat(fs.readdir("/")).extracting(DirEntry::name).containsExactly("file");
    }

    @Test
    void renameMovesANameAndKeepsTheData() throws IOException {
        assumeCapable(Capability.DIRECTORIES);
        byte[] data = writePattern(create("/a"), 0, 5000, 1);
        fs.mkdir("/d");
        fs.rename("/a", "/d/b");
        assertThatThrownBy(() -> fs.open("/a")).isInstanceOf(NoSuchFileException.class);
        assertContent(open("/d/b"), data);
        remountChecked();
        assertContent(open("/d/b"), data);
        assertThat(fs.readdir("/")).extracting(DirEntry::name).containsExactly("d");
    }

    @Test
    void renameWithinOneDirectoryMovesANameAndKeepsTheData() throws IOException {
        assumeCapable(Capability.RENAME);
        byte[] data = writePattern(create("/a"), 0, 5000, 1);
        long ino = fs.stat("/a").ino();
        fs.rename("/a", "/b");
        assertThatThrownBy(() -> fs.open("/a")).isInstanceOf(NoSuchFileException.class);
        assertContent(open("/b"), data);
        remountChecked();
        assertContent(open("/b"), data);
        assertThat(fs.stat("/b").ino()).isEqualTo(ino);
        assertThat(fs.readdir("/")).extracting(DirEntry::name).containsExactly("b");
    }

    @Test
    void renameReplacesAnExistingFileAndFreesIt() throws IOException {
        assumeCapable(Capability.RENAME);
        byte[] data = writePattern(create("/a"), 0, 100, 1);
        IomapFile victim = create("/b");
        writePattern(victim, 0, 128 * blockSize(), 2);
        victim.fsync();
        victim.close();
        fs.sync();
        long freeBefore = fs.statfs().freeBlocks();
        fs.rename("/a", "/b");
        fs.sync();
        assertThat(fs.statfs().freeBlocks()).as("free blocks after the replaced file went").isGreaterThan(freeBefore);
        assertThat(fs.readdir("/")).extracting(DirEntry::name).containsExactly("b");
        remountChecked();
        assertContent(open("/b"), data);
    }

    @Test
    void renameOfAMissingNameIsNoSuchFile() throws IOException {
        assumeCapable(Capability.RENAME);
        assertThatThrownBy(() -> fs.rename("/missing", "/b")).isInstanceOf(NoSuchFileException.class);
        assertThatThrownBy(() -> fs.stat("/b")).isInstanceOf(NoSuchFileException.class);
    }

    @Test
    void renameErrorsAreTyped() throws IOException {
        assumeCapable(Capability.DIRECTORIES);
        fs.mkdir("/full");
        create("/full/x");
        fs.mkdir("/empty");
        assertThatThrownBy(() -> fs.rename("/missing", "/b")).isInstanceOf(NoSuchFileException.class);
        assertThatThrownBy(() -> fs.rename("/empty", "/full")).isInstanceOf(DirectoryNotEmptyException.class);
    }
}
