package dev.iomap.adapter.zonefs;

import static dev.iomap.adapter.zonefs.ZonefsFixture.SEQ_CAPACITY;
import static dev.iomap.adapter.zonefs.ZonefsFixture.ZONE;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.DynamicTest.dynamicTest;

import dev.iomap.api.AttributeChange;
import dev.iomap.api.Capability;
import dev.iomap.api.FileType;
import dev.iomap.api.NewInodeAttributes;
import dev.iomap.api.XattrMode;
import dev.iomap.api.DirEntry;
import dev.iomap.api.FallocateMode;
import dev.iomap.api.IomapFile;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.NotSupportedException;
import dev.iomap.api.RenameFlag;
import dev.iomap.devices.ZonedDevice;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

/**
 * The capabilities declared in {@link ZonefsLikeAdapter}, checked the way the contract kit's
 * capability suite checks them, on a file of each zone type (the kit's own suite runs on zonefs-like
 * in {@code it-tests}' {@code ZonefsLikeKitTest}, through its existing-files fixture; this one runs
 * without the kit on the test class path): every capability declared absent
 * fails its operation with {@link NotSupportedException} naming it and changes nothing; each declared
 * one works where its zone type allows it, and is refused with a typed error where it does not.
 */
class CapabilitiesTest {
    static final List<String> FILES = List.of("/cnv/0", "/seq/0");
    private final Random random = new Random(ZonefsFixture.SEED);

    @FunctionalInterface
    private interface Probe {
        void run(IomapFileSystem fs, IomapFile file, IomapFile other) throws IOException;
    }

    private static final Map<Capability, Probe> ABSENT = Map.ofEntries(
            Map.entry(Capability.DIRECTORIES, (fs, file, other) -> fs.mkdir("/dir")),
            Map.entry(Capability.RENAME, (fs, file, other) -> fs.rename("/cnv/0", "/cnv/9")),
            Map.entry(Capability.FALLOCATE, (fs, file, other) -> file.fallocate(FallocateMode.ALLOCATE, 0, 4096, true)),
            Map.entry(Capability.PUNCH_HOLE,
                    (fs, file, other) -> file.fallocate(FallocateMode.PUNCH_HOLE, 0, 4096, true)),
            Map.entry(Capability.ZERO_RANGE,
                    (fs, file, other) -> file.fallocate(FallocateMode.ZERO_RANGE, 0, 4096, true)),
            Map.entry(Capability.COPY_ON_WRITE, (fs, file, other) -> file.unshare(0, 4096)),
            Map.entry(Capability.CLONE, (fs, file, other) -> other.cloneRange(file, 0, 0, 4096)),
            Map.entry(Capability.RENAME_EXCHANGE,
                    (fs, file, other) -> fs.rename("/cnv/0", "/cnv/1", EnumSet.of(RenameFlag.EXCHANGE))),
            Map.entry(Capability.SYMLINKS, (fs, file, other) -> fs.createSymbolicLink("/cnv/link", "0",
                    NewInodeAttributes.defaults(FileType.SYMLINK))),
            Map.entry(Capability.HARD_LINKS, (fs, file, other) -> fs.createLink("/cnv/link", "/cnv/0")),
            Map.entry(Capability.SPECIAL_FILES, (fs, file, other) -> fs.createSpecialFile("/cnv/fifo",
                    dev.iomap.api.FileType.FIFO, 0, dev.iomap.api.NewInodeAttributes.defaults(
                            dev.iomap.api.FileType.FIFO))),
            Map.entry(Capability.POSIX_ATTRIBUTES,
                    (fs, file, other) -> fs.setAttributes("/cnv/0", AttributeChange.none().withMode(0600))),
            Map.entry(Capability.XATTRS,
                    (fs, file, other) -> fs.setXattr("/cnv/0", "user.a", new byte[] {1}, XattrMode.ANY)),
            Map.entry(Capability.JOURNALED_DATA,
                    (fs, file, other) -> fs.setFileFlags("/cnv/0", EnumSet.of(dev.iomap.api.FileFlag.JOURNAL_DATA))),
            Map.entry(Capability.INODE_FLAGS,
                    (fs, file, other) -> fs.setFileFlags("/cnv/0", EnumSet.of(dev.iomap.api.FileFlag.IMMUTABLE))),
            // A sequential zone's append advances the write pointer block by block and a conventional zone is
            // overwritten in place, with no journal to switch a mapping: nothing can make a write all or nothing.
            Map.entry(Capability.ATOMIC_WRITES, (fs, file, other) -> file.writeAtomic(0, ByteBuffer.allocate(4096))));

    /**
     * Absent capabilities that name a property of an operation, not one: no probe of their own here
     * (DATA_CHECKSUMS is a property of reads and of fsck; the kit's CapabilityContract checks that its
     * scrub is refused; DENSE_FILES, a format whose files have no holes, is a property of the layout).
     */
    private static final Set<Capability> PROPERTIES = EnumSet.of(Capability.UNWRITTEN_EXTENTS,
            Capability.DATA_CHECKSUMS, Capability.DENSE_FILES);

    @Test
    void theMountReportsWhatTheAdapterDeclares() throws Exception {
        try (ZonedDevice device = ZonefsFixture.newFormattedDevice(4096);
                IomapFileSystem fs = ZonefsFixture.mount(device)) {
            assertThat(fs.capabilities()).isEqualTo(Capability.withImplied(new ZonefsLikeAdapter().capabilities()));
            EnumSet<Capability> absent = EnumSet.complementOf(EnumSet.copyOf(fs.capabilities()));
            absent.removeAll(PROPERTIES);
            assertThat(absent).isEqualTo(ABSENT.keySet());
        }
    }

    @TestFactory
    Stream<DynamicTest> everyCapabilityDeclaredAbsentIsRefusedOnBothZoneTypes() {
        List<DynamicTest> tests = new ArrayList<>();
        for (String path : FILES) {
            for (var probe : ABSENT.entrySet()) {
                Capability capability = probe.getKey();
                tests.add(dynamicTest(capability + " on " + path, () -> {
                    try (ZonedDevice device = ZonefsFixture.newFormattedDevice(4096);
                            IomapFileSystem fs = ZonefsFixture.mount(device);
                            IomapFile file = fs.open(path);
                            IomapFile other = fs.open(path.replace("/0", "/1"))) {
                        byte[] before = fillFourBlocks(file);
                        long size = file.size();

                        assertThatThrownBy(() -> probe.getValue().run(fs, file, other))
                                .isInstanceOf(NotSupportedException.class)
                                .hasMessageContaining(capability.name());

                        assertThat(file.size()).isEqualTo(size);
                        assertThat(ZonefsFixture.read(file, 0, before.length)).isEqualTo(before);
                        assertThat(fs.readdir("/")).extracting(DirEntry::name).containsExactly("cnv", "seq");
                    }
                }));
            }
        }
        return tests.stream();
    }

    /** RANDOM_WRITE and TRUNCATE are the conventional files'; a sequential file refuses what it cannot do. */
    @Test
    void theDeclaredCapabilitiesWorkWhereTheZoneTypeAllowsThem() throws Exception {
        try (ZonedDevice device = ZonefsFixture.newFormattedDevice(4096);
                IomapFileSystem fs = ZonefsFixture.mount(device);
                IomapFile conventional = fs.open("/cnv/0");
                IomapFile sequential = fs.open("/seq/0")) {
            fillFourBlocks(conventional);
            fillFourBlocks(sequential);

            conventional.write(10, ByteBuffer.allocate(10));
            assertThatThrownBy(() -> sequential.write(10, ByteBuffer.allocate(10)))
                    .isInstanceOf(SequentialFileException.class);

            conventional.truncate(ZONE);
            assertThatThrownBy(() -> conventional.truncate(4096)).isInstanceOf(NotSupportedException.class);
            sequential.truncate(SEQ_CAPACITY);
            assertThat(sequential.size()).isEqualTo(SEQ_CAPACITY);
            sequential.truncate(0);
            assertThat(sequential.size()).isZero();
            assertThatThrownBy(() -> sequential.truncate(4096)).isInstanceOf(SequentialFileException.class);
        }
    }

    private byte[] fillFourBlocks(IomapFile file) throws IOException {
        byte[] data = ZonefsFixture.randomBytes(random, 4 * 4096);
        ZonefsFixture.write(file, 0, data);
        return data;
    }
}
