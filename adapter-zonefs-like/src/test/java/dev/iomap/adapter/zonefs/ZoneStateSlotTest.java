package dev.iomap.adapter.zonefs;

import static dev.iomap.adapter.zonefs.ZonefsFixture.LAYOUT;
import static dev.iomap.adapter.zonefs.ZonefsFixture.SECTOR;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.iomap.api.CorruptFileSystemException;
import dev.iomap.api.IomapFile;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.IomapFileSystems;
import dev.iomap.device.DeviceRangeException;
import dev.iomap.devices.CutMode;
import dev.iomap.devices.PowerCutDevice;
import dev.iomap.devices.RamBlockDevice;
import dev.iomap.devices.ZoneLayout;
import dev.iomap.devices.ZonedDevice;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The two copies ("slots") of the zone state that {@link ZonedDevice} keeps in front of the zones
 * (layout in {@code ZoneStateTable}'s javadoc: a geometry block, then the two slots, each padded to
 * whole device blocks). A damaged slot never rolls an fsync'd sequential file back silently: the
 * file keeps everything fsync'd, or the mount is refused with one line; fsck reports the slot.
 */
class ZoneStateSlotTest {
    static final int BLOCK = 1024;
    /** /seq/0 is zone 3 of {@link ZonefsFixture#LAYOUT}. */
    static final int FIRST_SEQ_ZONE = 3;
    /** Slot bytes: a 24-byte header, 16 bytes per zone and a 4-byte checksum, padded to whole sectors. */
    static final int SLOT_BYTES = 512;

    private final Random random = new Random(ZonefsFixture.SEED);

    /** @return the sequence number in slot {@code slot} of a backing image */
    private static long sequence(RamBlockDevice image, int slot, int slotBytes) throws Exception {
        byte[] header = image.peek(SECTOR + (long) slot * slotBytes, 16);
        return ByteBuffer.wrap(header).order(ByteOrder.LITTLE_ENDIAN).getLong(8);
    }

    /** Flips one byte inside the zone entries of slot {@code slot}, as a bad sector or a stray write would. */
    private static void damage(RamBlockDevice image, int slot, int slotBytes) throws Exception {
        long at = SECTOR + (long) slot * slotBytes + 24 + 16L * FIRST_SEQ_ZONE;
        byte[] one = image.peek(at, 1);
        one[0] ^= 0x5a;
        image.poke(at, one, 0, 1);
    }

    private static int newestSlot(RamBlockDevice image, int slotBytes) throws Exception {
        return sequence(image, 1, slotBytes) > sequence(image, 0, slotBytes) ? 1 : 0;
    }

    /** @return the image a power cut leaves after an fsync'd append of {@code data} to /seq/0 */
    private static RamBlockDevice imageAfterFsyncedAppend(byte[] data) throws Exception {
        var power = new PowerCutDevice(new RamBlockDevice(SECTOR, LAYOUT.backingBytes(SECTOR)));
        ZonedDevice device = ZonedDevice.create(power, LAYOUT);
        ZonefsFixture.format(device, BLOCK);
        IomapFileSystem fs = ZonefsFixture.mount(device);
        try (IomapFile file = fs.open("/seq/0")) {
            ZonefsFixture.write(file, 0, data);
            file.fsync();
        }
        // The mount is abandoned, as a power cut leaves it.
        return power.image(CutMode.LOSE_UNFLUSHED, null);
    }

    @ParameterizedTest(name = "damaged slot: {0}")
    @ValueSource(strings = {"newest", "oldest"})
    void aDamagedSlotNeitherRollsBackAnFsyncedAppendNorGoesUnreported(String which) throws Exception {
        byte[] data = ZonefsFixture.randomBytes(random, 40 * BLOCK);
        RamBlockDevice image = imageAfterFsyncedAppend(data);
        int newest = newestSlot(image, SLOT_BYTES);
        damage(image, which.equals("newest") ? newest : 1 - newest, SLOT_BYTES);

        ZonedDevice device;
        try {
            device = ZonedDevice.open(image.copy());
        } catch (CorruptFileSystemException refused) {
            assertThat(refused.getMessage()).doesNotContain("\n");
            return;
        }
        assertThat(device.stateProblems()).singleElement().asString().contains("slot");
        List<String> warnings = new ArrayList<>();
        Logger logger = Logger.getLogger(ZonefsLikeAdapter.class.getName());
        Handler handler = new Handler() {
            @Override
            public void publish(LogRecord record) {
                if (record.getLevel() == Level.WARNING) {
                    warnings.add(record.getMessage());
                }
            }

            @Override
            public void flush() {
            }

            @Override
            public void close() {
            }
        };
        logger.addHandler(handler);
        try (device; IomapFileSystem fs = ZonefsFixture.mount(device); IomapFile file = fs.open("/seq/0")) {
            assertThat(file.size()).as("size of the fsync'd /seq/0").isEqualTo(data.length);
            assertThat(ZonefsFixture.readAll(file)).isEqualTo(data);
        } finally {
            logger.removeHandler(handler);
        }
        assertThat(warnings).as("mount warnings").singleElement().asString().contains("slot");
        assertThat(IomapFileSystems.fsck(ZonefsLikeAdapter.NAME, ZonedDevice.open(image.copy())).problems())
                .as("fsck of an image with a damaged zone-state slot")
                .anySatisfy(problem -> assertThat(problem).contains("slot"));
    }

    private static byte[] peek(PowerCutDevice device, long offset, int length) {
        try {
            return device.peek(offset, length);
        } catch (DeviceRangeException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Test
    void bothSlotsDamagedIsRefusedInOneLine() throws Exception {
        RamBlockDevice image = imageAfterFsyncedAppend(ZonefsFixture.randomBytes(random, 8 * BLOCK));
        damage(image, 0, SLOT_BYTES);
        damage(image, 1, SLOT_BYTES);

        assertThatThrownBy(() -> ZonedDevice.open(image.copy())).isInstanceOf(CorruptFileSystemException.class)
                .hasMessageContaining("slot").hasMessageNotContaining("\n");
    }

    /**
     * Power cuts in the middle of every write of a zone-state slot, the slot torn (its first sector
     * new, the rest old: a slot of this layout spans two sectors): every image mounts, and every
     * sequential file holds at least what an fsync had returned for before the cut.
     */
    @Test
    void aSlotTornByAPowerCutKeepsEverythingFsyncedBefore() throws Exception {
        // 48 zones: a slot is 24 + 48 * 16 + 4 = 796 bytes, two sectors.
        var layout = new ZoneLayout(16 << 10, 16 << 10, 48, 3, 0);
        int slotBytes = 2 * SECTOR;
        var power = new PowerCutDevice(new RamBlockDevice(SECTOR, layout.backingBytes(SECTOR)));
        ZonedDevice device = ZonedDevice.create(power, layout);
        ZonefsFixture.format(device, BLOCK);
        List<RamBlockDevice> torn = new ArrayList<>();
        List<Map<String, byte[]>> promisedAtCut = new ArrayList<>();
        Map<String, byte[]> promised = new HashMap<>();
        byte[][] seen = {power.peek(SECTOR, 2 * slotBytes)};
        power.onWrite(count -> {
            byte[] slots = peek(power, SECTOR, 2 * slotBytes);
            int changed = Arrays.mismatch(seen[0], slots);
            seen[0] = slots;
            if (changed < 0) {
                return;
            }
            // The write just done was a slot: keep only its first sector of the two.
            int slot = changed / slotBytes;
            RamBlockDevice image = power.image(CutMode.LOSE_UNFLUSHED, null);
            try {
                image.poke(SECTOR + (long) slot * slotBytes, slots, slot * slotBytes, SECTOR);
            } catch (DeviceRangeException e) {
                throw new UncheckedIOException(e);
            }
            torn.add(image);
            promisedAtCut.add(Map.copyOf(promised));
        });

        IomapFileSystem fs = ZonefsFixture.mount(device);
        Map<String, byte[]> written = new HashMap<>();
        for (int round = 0; round < 6; round++) {
            String path = "/seq/" + (round % 3);
            try (IomapFile file = fs.open(path)) {
                byte[] data = ZonefsFixture.randomBytes(random, BLOCK * (1 + random.nextInt(3)));
                ZonefsFixture.write(file, file.size(), data);
                byte[] before = written.getOrDefault(path, new byte[0]);
                byte[] now = Arrays.copyOf(before, before.length + data.length);
                System.arraycopy(data, 0, now, before.length, data.length);
                written.put(path, now);
                file.fsync();
                promised.put(path, now);
            }
        }

        assertThat(torn).hasSizeGreaterThanOrEqualTo(6);
        for (int i = 0; i < torn.size(); i++) {
            try (ZonedDevice after = ZonedDevice.open(torn.get(i));
                    IomapFileSystem remounted = ZonefsFixture.mount(after)) {
                for (var entry : promisedAtCut.get(i).entrySet()) {
                    try (IomapFile file = remounted.open(entry.getKey())) {
                        byte[] content = ZonefsFixture.readAll(file);
                        assertThat(content).as("cut %d: fsync'd %s", i, entry.getKey()).hasSizeGreaterThanOrEqualTo(
                                entry.getValue().length);
                        assertThat(Arrays.copyOf(content, entry.getValue().length)).isEqualTo(entry.getValue());
                    }
                }
            }
        }
    }
}
