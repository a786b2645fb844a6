package dev.iomap.adapter.gfs2;

import static org.assertj.core.api.Assertions.assertThat;

import dev.iomap.api.FileFlag;
import dev.iomap.api.IomapFile;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.IomapFileSystems;
import dev.iomap.testkit.AdapterFixture;
import dev.iomap.testkit.Geometry;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Journaled data across power cuts at every device write of its transactions. */
class JdataCrashTest {
    private static final int BLOCK = 1024;
    private static final int LENGTH = 6 * BLOCK + 100;

    private static AdapterFixture jdataMount() {
        return AdapterFixture.of(new Gfs2LikeAdapter(), new Geometry(BLOCK, 4096, 0))
                .withDeviceBlockSizeOfFilesystem()
                .withDeviceBytes(8L << 20)
                .withMounter((adapter, device, options) -> IomapFileSystems.mount(adapter.name(), device,
                        options.withAdapterOptions(Map.of("data", "journal"))));
    }

    private static byte[] pattern(int seed, int length) {
        byte[] bytes = new byte[length];
        for (int i = 0; i < length; i++) {
            bytes[i] = (byte) (seed * 37 + i * 7 + (i >> 9));
        }
        return bytes;
    }

    private static byte[] readAll(IomapFileSystem fs, String path) throws IOException {
        try (IomapFile file = fs.open(path)) {
            ByteBuffer buffer = ByteBuffer.allocate((int) file.size());
            while (buffer.hasRemaining() && file.read(buffer.position(), buffer) > 0) {
                // keep reading
            }
            return buffer.array();
        }
    }

    private static void write(IomapFileSystem fs, String path, byte[] data) throws IOException {
        try (IomapFile file = fs.open(path)) {
            file.write(0, ByteBuffer.wrap(data));
        }
    }

    @Test
    void jdataContentsSurviveAPowerCutAtEveryDeviceWriteOfATransaction() throws IOException {
        byte[] old = pattern(1, LENGTH);
        byte[] fresh = pattern(2, LENGTH);
        int images = Cuts.everyWrite(jdataMount(),
                fs -> {
                    fs.create("/f").close();
                    assertThat(fs.getFileFlags("/f")).isEmpty();
                    write(fs, "/f", old);
                },
                fs -> write(fs, "/f", fresh),
                fs -> {
                    try (IomapFile file = fs.open("/f")) {
                        file.fsync();
                    }
                },
                fs -> {
                    byte[] now = readAll(fs, "/f");
                    return Arrays.equals(now, old) ? "old" : Arrays.equals(now, fresh) ? "new"
                            : "neither (" + now.length + " bytes)";
                });
        assertThat(images).isGreaterThan(4);
    }

    @Test
    void aTruncateOfJournaledBlocksFollowedByAPowerCutNeverResurrectsTheOldData() throws IOException {
        byte[] old = pattern(3, LENGTH);
        byte[] other = pattern(4, LENGTH);
        // One resource group: /g's blocks are the ones the truncate freed.
        AdapterFixture fixture = AdapterFixture.of(new Gfs2LikeAdapter(), new Geometry(BLOCK, 4096, 0))
                .withDeviceBlockSizeOfFilesystem().withDeviceBytes(8L << 20)
                .withFormatProperties(Map.of("rgblocks", "16384"));
        int images = Cuts.everyWrite(fixture,
                fs -> {
                    fs.create("/f").close();
                    fs.setFileFlags("/f", Set.of(FileFlag.JOURNAL_DATA));
                    write(fs, "/f", old);
                },
                fs -> {
                    try (IomapFile file = fs.open("/f")) {
                        file.truncate(0);
                    }
                    fs.sync();
                    fs.create("/g").close();
                    write(fs, "/g", other);
                    try (IomapFile file = fs.open("/f")) {
                        file.truncate(LENGTH);
                    }
                },
                IomapFileSystem::sync,
                fs -> {
                    byte[] f = readAll(fs, "/f");
                    if (Arrays.equals(f, old)) {
                        return "old";
                    }
                    if (containsAnyBlockOf(f, old)) {
                        return "/f shows blocks of its old data after the truncate";
                    }
                    boolean hasG = fs.readdir("/").stream().anyMatch(e -> e.name().equals("g"));
                    if (hasG && containsAnyBlockOf(readAll(fs, "/g"), old)) {
                        return "/g shows blocks of the truncated file's old data";
                    }
                    return "new";
                });
        assertThat(images).isGreaterThan(4);
    }

    private static boolean containsAnyBlockOf(byte[] data, byte[] old) {
        for (int b = 0; b + BLOCK <= data.length; b += BLOCK) {
            for (int o = 0; o + BLOCK <= old.length; o += BLOCK) {
                if (Arrays.equals(data, b, b + BLOCK, old, o, o + BLOCK)) {
                    return true;
                }
            }
        }
        return false;
    }
}
