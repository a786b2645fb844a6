package dev.iomap.adapter.gfs2;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.iomap.adapter.support.MetadataBlock;
import dev.iomap.api.CorruptFileSystemException;
import dev.iomap.api.FileType;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * Every decoder refuses forged bytes (checksums recomputed, so only the decoder can tell) with a
 * {@link CorruptFileSystemException} naming the structure, never an untyped exception; fsck reports
 * the same problem and mount refuses the image.
 */
class DecoderRefusalTest {
    private static final int PAYLOAD = MetadataBlock.maxPayload(DamagedImage.BLOCK);

    private static void assertMountRefused(DamagedImage image, String first) {
        assertThatThrownBy(image::mount).isInstanceOf(CorruptFileSystemException.class)
                .hasMessageStartingWith("gfs2-like image is damaged: " + first)
                .hasMessageEndingWith("; run fsck");
    }

    @Test
    void anIndirectBlockWithAnEmptyPayloadIsRefused() throws IOException {
        DamagedImage image = new DamagedImage();
        MetadataBlock forged = image.forge(image.indirect, Gfs2Layout.INDIRECT_TYPE, p -> DamagedImage.truncated(p, 0));
        Gfs2Layout layout = Gfs2Layout.read(image.device);

        String problem = "indirect block " + image.indirect + ": payload of 0 bytes, expected " + PAYLOAD;
        assertThatThrownBy(() -> Indirect.decode(forged, layout)).isExactlyInstanceOf(CorruptFileSystemException.class)
                .hasMessage(problem);
        assertThat(image.adapter.fsck(image.device).problems()).first()
                .isEqualTo("inode " + image.bigIno + " tree: " + problem);
        assertMountRefused(image, "inode " + image.bigIno + " tree: " + problem + "; ");
    }

    @Test
    void aDinodeTimeOutsideInstantsRangeIsRefused() throws IOException {
        DamagedImage image = new DamagedImage();
        MetadataBlock forged = image.forge(image.xIno, Gfs2Layout.DINODE_TYPE,
                p -> p.putLong(DamagedImage.MTIME_AT, Long.MAX_VALUE).putInt(DamagedImage.MTIME_AT + 8, 5));
        Gfs2Layout layout = Gfs2Layout.read(image.device);

        String problem = "dinode " + image.xIno + ": mtime of 9223372036854775807 seconds and 5 nanoseconds is not a time";
        assertThatThrownBy(() -> Dinode.decode(forged, layout)).isExactlyInstanceOf(CorruptFileSystemException.class)
                .hasMessage(problem);
        assertThat(image.adapter.fsck(image.device).problems()).first().isEqualTo("inode " + image.xIno + ": " + problem);
        assertMountRefused(image, "inode " + image.xIno + ": " + problem + "; ");
    }

    @Test
    void aDinodeWithAShortPayloadIsRefused() throws IOException {
        DamagedImage image = new DamagedImage();
        MetadataBlock forged = image.forge(image.xIno, Gfs2Layout.DINODE_TYPE, p -> DamagedImage.truncated(p, 500));
        Gfs2Layout layout = Gfs2Layout.read(image.device);

        String problem = "dinode " + image.xIno + ": payload of 500 bytes, expected " + PAYLOAD;
        assertThatThrownBy(() -> Dinode.decode(forged, layout)).isExactlyInstanceOf(CorruptFileSystemException.class)
                .hasMessage(problem);
        assertThat(image.adapter.fsck(image.device).problems()).first().isEqualTo("inode " + image.xIno + ": " + problem);
        assertMountRefused(image, "inode " + image.xIno + ": " + problem + "; ");
    }

    @Test
    void aSuperblockWithAnEmptyPayloadIsRefused() throws IOException {
        DamagedImage image = new DamagedImage();
        Gfs2Layout.CODEC.write(image.device, 0, ByteBuffer.allocate(0));

        String problem = "gfs2-like superblock: payload of 0 bytes, shorter than its 44 bytes of fields";
        assertThatThrownBy(() -> Gfs2Layout.read(image.device)).isExactlyInstanceOf(CorruptFileSystemException.class)
                .hasMessage(problem);
        assertThat(image.adapter.fsck(image.device).problems()).containsExactly(problem);
        assertThatThrownBy(image::mount).isExactlyInstanceOf(CorruptFileSystemException.class).hasMessage(problem);
    }

    @Test
    void indirectPointersOutsideTheDataAreaAreRefused() throws IOException {
        DamagedImage image = new DamagedImage();
        Gfs2Layout layout = Gfs2Layout.read(image.device);
        long header = layout.rgStart(0);
        for (long bad : new long[] {-1, 1, header, header + 1, layout.totalBlocks()}) {
            MetadataBlock forged = image.forge(image.indirect, Gfs2Layout.INDIRECT_TYPE, p -> p.putLong(16, bad));
            String problem = "indirect block " + image.indirect + " pointer 0 points at block " + bad
                    + ", outside the resource groups' data blocks";
            assertThatThrownBy(() -> Indirect.decode(forged, layout)).as("pointer %d", bad)
                    .isExactlyInstanceOf(CorruptFileSystemException.class).hasMessage(problem);
            assertMountRefused(image, "inode " + image.bigIno + " tree: " + problem + "; ");
        }
    }

    @Test
    void aDirectoryEntryNameWithANulIsRefused() throws IOException {
        DamagedImage image = new DamagedImage();
        image.forge(image.dirIno, Gfs2Layout.DINODE_TYPE, p -> p.put(DamagedImage.FIRST_NAME_AT + 4, (byte) 0));

        String problem = "directory " + image.dirIno + ": bad entry 'name\\x001' -> inode "
                + nameOneIno(image) + " (a name is 1 to 255 bytes, not '.' or '..', without '/' or NUL)";
        assertThat(image.adapter.fsck(image.device).problems()).first().isEqualTo(problem);
        assertMountRefused(image, problem + "; ");
    }

    private static long nameOneIno(DamagedImage image) throws IOException {
        MetadataBlock dir = image.read(image.dirIno, Gfs2Layout.DINODE_TYPE);
        return dir.payload().getLong(Dinode.HEADER_BYTES + 1);
    }

    @Test
    void directoryEntriesWithBadNamesOrInodesAreRefused() {
        for (String name : List.of("", ".", "..", "a/b", "a\0b")) {
            Map<String, Entries.Entry> one = new TreeMap<>();
            one.put(name, new Entries.Entry(99, FileType.REGULAR));
            byte[] bytes = Entries.encodeDirectory(one);
            assertThatThrownBy(() -> Entries.decodeDirectory(bytes, 7)).as("name '%s'", name)
                    .isExactlyInstanceOf(CorruptFileSystemException.class)
                    .hasMessage("directory 7: bad entry '" + name.replace("\0", "\\x00") + "' -> inode 99 (a name is 1"
                            + " to 255 bytes, not '.' or '..', without '/' or NUL)");
        }
        byte[] zeroIno = Entries.encodeDirectory(Map.of("f", new Entries.Entry(0, FileType.REGULAR)));
        assertThatThrownBy(() -> Entries.decodeDirectory(zeroIno, 7)).isExactlyInstanceOf(CorruptFileSystemException.class)
                .hasMessage("directory 7: bad entry 'f' -> inode 0 (a name is 1 to 255 bytes, not '.' or '..', without"
                        + " '/' or NUL)");
        byte[] once = Entries.encodeDirectory(Map.of("f", new Entries.Entry(5, FileType.REGULAR)));
        byte[] twice = new byte[once.length * 2];
        System.arraycopy(once, 0, twice, 0, once.length);
        System.arraycopy(once, 0, twice, once.length, once.length);
        assertThatThrownBy(() -> Entries.decodeDirectory(twice, 7)).isExactlyInstanceOf(CorruptFileSystemException.class)
                .hasMessage("directory 7: name 'f' twice");
    }

    @Test
    void fsckReportsADinodeWithABadChecksumOnceAndItsBlocksAsLeaks() throws IOException {
        DamagedImage image = new DamagedImage();
        image.flip(image.xIno, 40);

        List<String> problems = image.adapter.fsck(image.device).problems();
        assertThat(problems.getFirst()).startsWith("inode " + image.xIno + ": metadata block " + image.xIno + " ")
                .contains("bad checksum");
        // the rest: its 3 data blocks (3000 bytes) and 3 attribute chain blocks (2000 bytes, 976 a block),
        // which nothing readable owns; the dinode block itself is not reported a second time
        assertThat(problems.subList(1, problems.size())).hasSize(6)
                .allMatch(p -> p.endsWith(" is marked used but nothing owns it (a leak)"));
    }
}
