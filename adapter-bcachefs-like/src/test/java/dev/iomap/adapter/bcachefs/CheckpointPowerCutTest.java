package dev.iomap.adapter.bcachefs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.iomap.api.IomapFile;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.devices.CutMode;
import dev.iomap.devices.PowerCutDevice;
import dev.iomap.devices.RamBlockDevice;
import dev.iomap.testkit.TestData;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A power cut while the tree nodes are written back (the checkpoint of unmount) loses nothing the
 * journal committed: the image as it would survive a cut after every single write of the checkpoint
 * mounts, holds every fsynced file exactly, and passes fsck.
 */
class CheckpointPowerCutTest {
    private static final int FILES = 12;

    private static int length(int i) {
        return 3000 + 5111 * i;
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(value = CutMode.class, names = {"LOSE_UNFLUSHED", "TEAR_AND_REORDER"})
    void aPowerCutDuringTreeNodeWritebackLosesNothingTheJournalCommitted(CutMode mode) throws IOException {
        RamBlockDevice ram = new RamBlockDevice(1024, 8L << 20);
        Images.format(ram, Map.of("compression", "lz4"));
        PowerCutDevice device = new PowerCutDevice(ram);
        List<RamBlockDevice> images = new ArrayList<>();
        Random random = new Random(42);
        IomapFileSystem fs = Images.mount(device);
        try {
            fs.mkdir("/d");
            for (int i = 0; i < FILES; i++) {
                try (IomapFile f = fs.create("/d/f" + i)) {
                    f.write(0, TestData.buffer(i, 0, length(i)));
                    f.fsync();
                }
            }
            device.onWrite(writes -> images.add(device.image(mode, random)));
        } finally {
            fs.close();
        }
        assertThat(images).as("writes of the unmount's checkpoint").hasSizeGreaterThan(3);
        for (int cut = 0; cut < images.size(); cut++) {
            RamBlockDevice image = images.get(cut);
            try (IomapFileSystem again = Images.mount(image)) {
                for (int i = 0; i < FILES; i++) {
                    try (IomapFile f = again.open("/d/f" + i)) {
                        ByteBuffer back = ByteBuffer.allocate(length(i));
                        f.read(0, back);
                        assertThat(back.array()).as("file %d after a cut at write %d", i, cut + 1)
                                .isEqualTo(TestData.pattern(i, 0, length(i)));
                    }
                }
            }
            assertThat(Images.ADAPTER.fsck(image, true).problems()).as("fsck after a cut at write %d", cut + 1)
                    .isEmpty();
        }
    }
}
