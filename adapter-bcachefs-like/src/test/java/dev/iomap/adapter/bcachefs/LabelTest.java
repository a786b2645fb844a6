package dev.iomap.adapter.bcachefs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.iomap.adapter.bcachefs.store.BtreeStore;
import dev.iomap.adapter.support.Crc32c;
import dev.iomap.api.FormatOptions;
import dev.iomap.api.InvalidRangeException;
import dev.iomap.api.IomapFile;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.MountOptions;
import dev.iomap.device.BlockDevice;
import dev.iomap.device.ForwardingBlockDevice;
import dev.iomap.device.IoPurpose;
import dev.iomap.device.ReadOnlyDeviceException;
import dev.iomap.devices.CutMode;
import dev.iomap.devices.PowerCutDevice;
import dev.iomap.devices.RamBlockDevice;
import dev.iomap.spi.MountedFileSystem;
import dev.iomap.testkit.TestData;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The label ({@code FS_IOC_GETFSLABEL}, {@code FS_IOC_SETFSLABEL}; bcachefs's 32-byte {@code label} in
 * {@code bch_sb}): mkfs writes it, a mount answers it, a set is on the device (written and flushed)
 * when it returns, so a remount and a power cut right after keep it; a label longer than 32 bytes of
 * UTF-8, or holding a NUL, is refused and nothing is written; empty clears it; an image written before
 * the label was kept (zeros in its field) reads as no label; a read-only device refuses a set; fsck
 * accepts every image.
 */
class LabelTest {
    private static final int BS = 4096;
    /** Where the label's bytes and its CRC32C lie in a superblock copy (the module README). */
    private static final int LABEL_AT = 128;
    private static final int LABEL_CRC_AT = 112;

    private static RamBlockDevice formatted(String label) throws IOException {
        RamBlockDevice device = new RamBlockDevice(BS, 16L << 20);
        Images.ADAPTER.format(device, new FormatOptions(BS, label, Map.of()));
        return device;
    }

    /** @return the label the newest superblock copy records, read by the store without mounting */
    private static String onDevice(BlockDevice device) throws IOException {
        try (BtreeStore store = BtreeStore.open(device, true)) {
            return store.label();
        }
    }

    /** @return the 32 bytes of the label field of superblock copy {@code copy} */
    private static byte[] labelField(RamBlockDevice device, int copy) throws IOException {
        return device.peek((long) copy * BS + LABEL_AT, 32);
    }

    private static byte[] padded(String label) {
        return Arrays.copyOf(label.getBytes(StandardCharsets.UTF_8), 32);
    }

    private static void assertClean(RamBlockDevice device) throws IOException {
        assertThat(Images.ADAPTER.fsck(device, true).problems()).as("fsck").isEmpty();
    }

    @Test
    void theLabelMkfsGaveIsAnsweredAndKeptInBothCopiesAfterUnmount() throws IOException {
        RamBlockDevice device = formatted("scratch");
        assertThat(onDevice(device)).isEqualTo("scratch");
        assertClean(device);
        try (IomapFileSystem fs = Images.mount(device)) {
            assertThat(fs.label()).isEqualTo("scratch");
        }
        assertThat(labelField(device, 0)).as("copy 0").isEqualTo(padded("scratch"));
        assertThat(labelField(device, 1)).as("copy 1").isEqualTo(padded("scratch"));
        assertThat(Images.ADAPTER.probeFormat(device)).isPresent();
        assertClean(device);
    }

    @Test
    void aSetLabelIsOnTheDeviceWhenItReturnsAndAfterRemount() throws IOException {
        RamBlockDevice device = formatted("scratch");
        try (IomapFileSystem fs = Images.mount(device)) {
            try (IomapFile f = fs.create("/f")) {
                f.write(0, TestData.buffer(1, 0, 10000));
            }
            long flushes = device.stats().flushes();
            fs.setLabel("backup-2026");
            assertThat(fs.label()).isEqualTo("backup-2026");
            assertThat(device.stats().flushes()).as("flushed when setLabel returns").isGreaterThan(flushes);
            assertThat(onDevice(device)).as("the newest superblock on the device").isEqualTo("backup-2026");
            String multiByte = "é".repeat(16);
            fs.setLabel(multiByte);
            assertThat(fs.label()).as("32 bytes of UTF-8").isEqualTo(multiByte);
            fs.setLabel("backup-2026");
        }
        assertThat(labelField(device, 0)).as("copy 0 after unmount").isEqualTo(padded("backup-2026"));
        assertThat(labelField(device, 1)).as("copy 1 after unmount").isEqualTo(padded("backup-2026"));
        assertClean(device);
        try (IomapFileSystem fs = Images.mount(device)) {
            assertThat(fs.label()).isEqualTo("backup-2026");
            try (IomapFile f = fs.open("/f")) {
                ByteBuffer back = ByteBuffer.allocate(10000);
                f.read(0, back);
                assertThat(back.array()).isEqualTo(TestData.pattern(1, 0, 10000));
            }
        }
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(value = CutMode.class, names = {"LOSE_UNFLUSHED", "TEAR_AND_REORDER"})
    void aSetLabelSurvivesAPowerCutRightAfterIt(CutMode mode) throws IOException {
        Random random = new Random(492);
        PowerCutDevice device = new PowerCutDevice(formatted("before"));
        RamBlockDevice crashed;
        try (IomapFileSystem fs = Images.mount(device)) {
            try (IomapFile f = fs.create("/f")) {
                f.write(0, TestData.buffer(2, 0, 5000));
                f.fsync();
            }
            try (IomapFileSystem unset = Images.mount(device.image(CutMode.LOSE_UNFLUSHED, null))) {
                assertThat(unset.label()).as("a power cut before the set").isEqualTo("before");
            }
            fs.setLabel("after");
            crashed = device.image(mode, random); // what a power cut now leaves
        }
        try (IomapFileSystem fs = Images.mount(crashed)) {
            assertThat(fs.label()).as("after a power cut right after setLabel").isEqualTo("after");
            try (IomapFile f = fs.open("/f")) {
                ByteBuffer back = ByteBuffer.allocate(5000);
                f.read(0, back);
                assertThat(back.array()).isEqualTo(TestData.pattern(2, 0, 5000));
            }
        }
        assertClean(crashed);
    }

    @Test
    void aLabelTooLongOrWithANulIsRefusedAndNothingIsWritten() throws IOException {
        RamBlockDevice device = formatted("kept");
        try (IomapFileSystem fs = Images.mount(device)) {
            fs.sync();
            long writes = device.stats().writes();
            assertThatThrownBy(() -> fs.setLabel("x".repeat(33))).isInstanceOf(InvalidRangeException.class)
                    .hasMessageContaining("32 bytes");
            assertThatThrownBy(() -> fs.setLabel("é".repeat(17))).as("34 bytes of UTF-8")
                    .isInstanceOf(InvalidRangeException.class).hasMessageContaining("32 bytes");
            assertThatThrownBy(() -> fs.setLabel("a\0b")).isInstanceOf(InvalidRangeException.class)
                    .hasMessageContaining("NUL");
            assertThatThrownBy(() -> fs.setLabel("\ud800")).isInstanceOf(InvalidRangeException.class)
                    .hasMessageContaining("surrogate");
            assertThat(device.stats().writes()).as("nothing written").isEqualTo(writes);
            assertThat(fs.label()).isEqualTo("kept");
        }
        // The adapter's own refusals, below the core's checks.
        MountedFileSystem mount = Images.ADAPTER.mount(device, MountOptions.defaults());
        try {
            long writes = device.stats().writes();
            assertThatThrownBy(() -> mount.superOps().setLabel("y".repeat(33)))
                    .isInstanceOf(InvalidRangeException.class).hasMessageContaining("32 bytes");
            assertThatThrownBy(() -> mount.superOps().setLabel("a\0b")).isInstanceOf(InvalidRangeException.class)
                    .hasMessageContaining("NUL");
            assertThat(device.stats().writes()).as("nothing written").isEqualTo(writes);
            assertThat(mount.superOps().label()).isEqualTo("kept");
        } finally {
            mount.superOps().unmount();
        }
        assertThat(onDevice(device)).isEqualTo("kept");
        assertClean(device);
    }

    @Test
    void mkfsRefusesALabelItCannotKeep() throws IOException {
        try (RamBlockDevice device = new RamBlockDevice(BS, 16L << 20)) {
            FormatOptions nul = new FormatOptions(BS, "a\0b", Map.of());
            assertThatThrownBy(() -> Images.ADAPTER.checkFormat(BS, device.capacity(), nul))
                    .isInstanceOf(InvalidRangeException.class).hasMessageContaining("NUL");
            assertThatThrownBy(() -> Images.ADAPTER.format(device, nul)).isInstanceOf(InvalidRangeException.class);
            assertThat(device.stats().writes()).as("nothing written").isZero();
            assertThatThrownBy(() -> new FormatOptions(BS, "x".repeat(33), Map.of()))
                    .isInstanceOf(IllegalArgumentException.class);
        }
    }

    @Test
    void anEmptyLabelClearsIt() throws IOException {
        RamBlockDevice device = formatted("scratch");
        try (IomapFileSystem fs = Images.mount(device)) {
            fs.setLabel("");
            assertThat(fs.label()).isEmpty();
        }
        for (int copy = 0; copy < 2; copy++) {
            assertThat(labelField(device, copy)).as("copy %d's label field", copy).isEqualTo(new byte[32]);
            assertThat(labelCrc(device, copy)).as("copy %d's label checksum", copy).isZero();
        }
        try (IomapFileSystem fs = Images.mount(device)) {
            assertThat(fs.label()).isEmpty();
        }
        assertClean(device);
    }

    @Test
    void anImageWrittenBeforeTheLabelWasKeptReadsAsNoLabel() throws IOException {
        RamBlockDevice device = formatted("scratch");
        try (IomapFileSystem fs = Images.mount(device)) {
            try (IomapFile f = fs.create("/f")) {
                f.write(0, TestData.buffer(3, 0, 3000));
            }
        }
        for (int copy = 0; copy < 2; copy++) {
            writeAsBefore(device, copy);
        }
        assertThat(onDevice(device)).isEmpty();
        assertClean(device);
        try (IomapFileSystem fs = Images.mount(device)) {
            assertThat(fs.label()).isEmpty();
            fs.setLabel("now");
        }
        try (IomapFileSystem fs = Images.mount(device)) {
            assertThat(fs.label()).isEqualTo("now");
        }
        assertClean(device);
    }

    /** Copy 1 is zeroed by mkfs and copy 0 the only one written yet: damage to its label leaves none valid. */
    @Test
    void aDamagedLabelMakesItsCopyInvalid() throws IOException {
        RamBlockDevice device = formatted("scratch");
        for (int copy = 0; copy < 2; copy++) {
            byte[] field = labelField(device, copy);
            field[0] ^= 1;
            device.poke((long) copy * BS + LABEL_AT, field, 0, field.length);
        }
        assertThat(Images.ADAPTER.fsck(device).problems()).anySatisfy(p -> assertThat(p)
                .contains("superblock copy 0").contains("the label's checksum does not match its bytes"));
        assertThatThrownBy(() -> Images.mount(device)).hasMessageContaining("label's checksum");
    }

    @Test
    void aReadOnlyDeviceRefusesASetAndWritesNothing() throws IOException {
        RamBlockDevice ram = formatted("kept");
        ReadOnly device = new ReadOnly(ram);
        try (IomapFileSystem fs = Images.mount(device)) {
            fs.sync();
            device.readOnly = true;
            long writes = ram.stats().writes();
            assertThatThrownBy(() -> fs.setLabel("other")).isInstanceOf(ReadOnlyDeviceException.class);
            assertThat(ram.stats().writes()).as("nothing written").isEqualTo(writes);
            assertThat(fs.label()).isEqualTo("kept");
            device.readOnly = false;
        }
        assertThat(onDevice(ram)).isEqualTo("kept");
        assertClean(ram);
    }

    private static int labelCrc(RamBlockDevice device, int copy) throws IOException {
        return ByteBuffer.wrap(device.peek((long) copy * BS, 128)).order(ByteOrder.LITTLE_ENDIAN).getInt(LABEL_CRC_AT);
    }

    /**
     * Rewrites superblock copy {@code copy} as the adapter wrote it before it kept a label: zeros in the
     * label checksum and the label, the main CRC32C of bytes 0..127 recomputed.
     */
    private static void writeAsBefore(RamBlockDevice device, int copy) throws IOException {
        long at = (long) copy * BS;
        ByteBuffer sb = ByteBuffer.wrap(device.peek(at, 128)).order(ByteOrder.LITTLE_ENDIAN);
        if (sb.getLong(0) != BtreeStoreAccess.SUPERBLOCK_MAGIC) {
            return;
        }
        sb.putInt(LABEL_CRC_AT, 0).putInt(8, 0);
        sb.putInt(8, Crc32c.of(sb.array(), 0, 128));
        device.poke(at, sb.array(), 0, 128);
        device.poke(at + LABEL_AT, new byte[32], 0, 32);
    }

    /** A device made read-only while mounted: writes and discards refused while {@link #readOnly} is set. */
    private static final class ReadOnly extends ForwardingBlockDevice {
        volatile boolean readOnly;

        ReadOnly(BlockDevice below) {
            super(below);
        }

        @Override
        public boolean readOnly() {
            return readOnly;
        }

        @Override
        public CompletableFuture<Void> write(long offset, List<ByteBuffer> srcs, IoPurpose purpose) {
            return readOnly ? CompletableFuture.failedFuture(new ReadOnlyDeviceException("read-only"))
                    : super.write(offset, srcs, purpose);
        }

        @Override
        public void discard(long offset, long length) throws IOException {
            if (readOnly) {
                throw new ReadOnlyDeviceException("read-only");
            }
            super.discard(offset, length);
        }

        @Override
        public void close() {
        }
    }
}
