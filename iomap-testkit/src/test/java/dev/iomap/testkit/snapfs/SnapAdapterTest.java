package dev.iomap.testkit.snapfs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.iomap.api.Capability;
import dev.iomap.api.CorruptFileSystemException;
import dev.iomap.api.FileType;
import dev.iomap.api.FormatOptions;
import dev.iomap.api.MountOptions;
import dev.iomap.device.IoPurpose;
import dev.iomap.devices.RamBlockDevice;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.EnumSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** What snapfs promises without an engine: its declaration, format and fsck (the kit covers the rest). */
class SnapAdapterTest {

    @Test
    void declaresWhatItIsGivenAndRefusesWhatItCannotHonour() {
        assertThat(new SnapAdapter().capabilities()).isEqualTo(SnapAdapter.SUPPORTED);
        assertThat(new SnapAdapter(Set.of(Capability.TRUNCATE)).capabilities()).containsExactly(Capability.TRUNCATE);
        assertThat(new SnapAdapter(Set.of()).capabilities()).isEmpty();
        assertThat(SnapAdapter.without(Capability.DURABLE_FSYNC, Capability.DIRECTORIES).capabilities())
                .hasSize(SnapAdapter.SUPPORTED.size() - 2).doesNotContain(Capability.DURABLE_FSYNC);
        assertThatThrownBy(() -> new SnapAdapter(EnumSet.of(Capability.TRUNCATE, Capability.CLONE)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("CLONE");
    }

    @Test
    void aFreshImageIsCleanAndAGarbageSuperblockIsReportedNotThrown() throws IOException {
        SnapAdapter adapter = new SnapAdapter();
        RamBlockDevice device = new RamBlockDevice(512, 8L << 20);
        adapter.format(device, FormatOptions.blockSize(4096));
        assertThat(adapter.fsck(device).problems()).isEmpty();

        device.write(0, ByteBuffer.wrap("garbage!".repeat(64).getBytes(StandardCharsets.US_ASCII)), IoPurpose.METADATA).join();

        assertThat(adapter.fsck(device).problems()).singleElement().asString()
                .contains("no superblock magic at device offset 0");
    }

    /**
     * Forged commits, each with a valid checksum, that ImageFuzzTest found snapfs mounting and then
     * serving or damaging (another file's data under a name, a block map expanded without end, metadata
     * slots moved over data): mount refuses each with one line, and fsck reports it.
     */
    @Test
    void aNameForgedToPointAtAnotherFilesInodeIsRefused() throws IOException {
        RamBlockDevice device = formatted();
        SnapState state = twoFiles();
        state.inodes.get(SnapState.ROOT).entries.put("b", 2L);
        assertRefused(device, state, "inode 2 has link count 1 but 2 names");
    }

    @Test
    void aBlockRunForgedToBeHugeIsRefusedBeforeItIsExpanded() throws IOException {
        RamBlockDevice device = formatted();
        SnapState state = twoFiles();
        byte[] payload = state.serialize();
        // The last inode's last run ends with length (int) and state (byte), before the attributes.
        ByteBuffer.wrap(payload).putInt(state.inodesLength() - 5, Integer.MAX_VALUE);
        layout(device).writeSlot(device, 2, payload);
        assertThatThrownBy(() -> new SnapAdapter().mount(device, MountOptions.defaults()))
                .isInstanceOf(CorruptFileSystemException.class).hasMessageContaining("outside the data area")
                .hasMessageNotContaining("\n");
        assertThat(new SnapAdapter().fsck(device).problems()).singleElement().asString()
                .contains("outside the data area");
    }

    @Test
    void aDirectoryCycleCutOffFromTheRootIsRefused() throws IOException {
        RamBlockDevice device = formatted();
        SnapState state = twoFiles();
        SnapState.Inode x = new SnapState.Inode(4, FileType.DIRECTORY);
        SnapState.Inode y = new SnapState.Inode(5, FileType.DIRECTORY);
        x.entries.put("y", 5L);
        y.entries.put("x", 4L);
        state.inodes.put(4L, x);
        state.inodes.put(5L, y);
        state.nextIno = 6;
        assertRefused(device, state, "inode 4 is linked but not reachable from the root");
    }

    @Test
    void aNextInodeNumberBelowAUsedOneIsRefused() throws IOException {
        RamBlockDevice device = formatted();
        SnapState state = twoFiles();
        state.nextIno = 3;
        assertRefused(device, state, "inode 3 is not below the next inode number 3");
    }

    @Test
    void slotsForgedToMoveOverTheDataAreRefused() throws IOException {
        RamBlockDevice device = formatted();
        SnapLayout layout = layout(device);
        new SnapLayout(layout.blockSize(), layout.totalBlocks(), 2 * layout.slotBlocks()).writeSuperblock(device);
        assertThatThrownBy(() -> new SnapAdapter().mount(device, MountOptions.defaults()))
                .isInstanceOf(CorruptFileSystemException.class).hasMessageContaining("format makes 128-block ones");
        assertThat(new SnapAdapter().fsck(device).problems()).singleElement().asString().contains("format makes");
    }

    @Test
    void slotsThatDoNotHoldConsecutiveCommitsAreRefused() throws IOException {
        RamBlockDevice device = formatted();
        layout(device).writeSlot(device, 4, twoFiles().serialize());
        assertThatThrownBy(() -> new SnapAdapter().mount(device, MountOptions.defaults()))
                .isInstanceOf(CorruptFileSystemException.class)
                .hasMessage("snapfs: the metadata slots hold commits 4 and 1, which are not consecutive");
    }

    @Test
    void aCommitSequenceNearOverflowIsRefused() throws IOException {
        RamBlockDevice device = formatted();
        SnapLayout layout = layout(device);
        layout.writeSlot(device, SnapLayout.MAX_SEQUENCE, twoFiles().serialize());
        layout.writeSlot(device, SnapLayout.MAX_SEQUENCE + 1, twoFiles().serialize());
        assertRefused(device, null, "commit sequence " + (SnapLayout.MAX_SEQUENCE + 1) + " is past");
    }

    private static RamBlockDevice formatted() throws IOException {
        RamBlockDevice device = new RamBlockDevice(512, 8L << 20);
        new SnapAdapter().format(device, FormatOptions.blockSize(4096));
        return device;
    }

    private static SnapLayout layout(RamBlockDevice device) throws IOException {
        return SnapLayout.readSuperblock(device);
    }

    /** Root with /a (inode 2, one written block) and /b (inode 3, one written block). */
    private static SnapState twoFiles() throws IOException {
        SnapState state = SnapState.empty();
        long firstData = SnapLayout.forCapacity(8L << 20, 4096).firstDataBlock();
        for (long ino = 2; ino <= 3; ino++) {
            SnapState.Inode file = new SnapState.Inode(ino, FileType.REGULAR);
            file.size = 4096;
            file.blocks.put(0L, SnapState.pack(firstData + ino, SnapState.WRITTEN));
            state.inodes.put(ino, file);
            state.inodes.get(SnapState.ROOT).entries.put(ino == 2 ? "a" : "b", ino);
        }
        state.nextIno = 4;
        return state;
    }

    /** Commits {@code state} (if not null) as commit 2, then expects mount and fsck to name {@code problem}. */
    private static void assertRefused(RamBlockDevice device, SnapState state, String problem) throws IOException {
        if (state != null) {
            layout(device).writeSlot(device, 2, state.serialize());
        }
        assertThatThrownBy(() -> new SnapAdapter().mount(device, MountOptions.defaults()))
                .isInstanceOf(CorruptFileSystemException.class).hasMessageContaining(problem)
                .hasMessageNotContaining("\n");
        assertThat(new SnapAdapter().fsck(device).problems()).anySatisfy(p -> assertThat(p).contains(problem));
    }
}
