package dev.iomap.testkit.crash;

import dev.iomap.api.FsckReport;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.devices.CutMode;
import dev.iomap.devices.PowerCutDevice;
import dev.iomap.devices.RamBlockDevice;
import dev.iomap.testkit.AdapterFixture;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * Power cuts around one metadata change (a link, a rename, an attribute, an extended attribute): the
 * change is made on a filesystem whose earlier state was synced, then made durable (or not), and the
 * power is cut at device writes spread over the change and its durability call (every write if there
 * are few), and once after the durability call returned. Every image must mount and show exactly the
 * old or the new state, the new one when cut after a durability call, and pass fsck.
 *
 * <p>The device writes are counted in a first run; each cut is a fresh run of the same steps from a
 * copy of one formatted image, cut when the device completes the chosen write (later I/O fails, and
 * the steps' errors are ignored once the power is off).
 */
public final class MetadataCuts {
    /** Cuts per mode spread over the change's device writes, besides the one after it. */
    private static final int POINTS = 6;

    /** A step on the mounted filesystem. */
    @FunctionalInterface
    public interface Step {
        /**
         * @param fs the filesystem on the power-cut device
         * @throws IOException from the filesystem
         */
        void run(IomapFileSystem fs) throws IOException;
    }

    /** What a recovered filesystem shows. */
    @FunctionalInterface
    public interface Probe {
        /**
         * @param fs the recovered filesystem
         * @return {@code "old"} or {@code "new"} if it shows exactly one of the two states, else a
         *     description of what it shows
         * @throws IOException from the filesystem
         */
        String state(IomapFileSystem fs) throws IOException;
    }

    private MetadataCuts() {
    }

    /**
     * Runs the cuts.
     *
     * @param fixture the adapter under test (declaring DURABLE_FSYNC)
     * @param what the change, for messages
     * @param setup builds the old state; it is synced before the change
     * @param change the change
     * @param durable makes the change durable ({@code fsync} or {@code sync}), or null for none
     * @param probe tells the states apart
     * @return the images checked
     * @throws IOException if a step fails before any cut, or a recovered image fails to mount
     * @throws AssertionError naming the change, the cut and what the image shows, if it is neither
     *     state, not the new one after {@code durable}, or not clean
     */
    public static int check(AdapterFixture fixture, String what, Step setup, Step change, Step durable, Probe probe)
            throws IOException {
        List<Image> images = observe(fixture, what, setup, change, durable, probe, POINTS);
        for (Image image : images) {
            List<String> allowed = image.afterDurable() ? List.of("new") : List.of("old", "new");
            if (!allowed.contains(image.state())) {
                throw new AssertionError(fixture.label() + ": " + image.where() + ": the recovered filesystem shows "
                        + image.state() + ", expected " + String.join(" or ", allowed));
            }
        }
        return images.size();
    }

    /**
     * What one recovered image showed.
     *
     * @param where the change, the cut and the mode, for messages
     * @param state what the probe said
     * @param afterDurable whether the cut came after the durability call returned
     */
    public record Image(String where, String state, boolean afterDurable) {
    }

    /**
     * Runs the cuts of {@link #check} and returns what each image showed, without judging the states:
     * for a test that some cut shows a state (a torn write that the adapter does not promise to avoid).
     * Every image must still mount and pass fsck.
     *
     * @param fixture the adapter under test (declaring DURABLE_FSYNC)
     * @param what the change, for messages
     * @param setup builds the old state; it is synced before the change
     * @param change the change
     * @param durable makes the change durable, or null for none
     * @param probe tells the states apart
     * @param points cuts per mode spread over the change's device writes; {@link Integer#MAX_VALUE}
     *     cuts at every one of them
     * @return every image's state: per mode, the cuts in write order, then the one after the change
     * @throws IOException if a step fails before any cut, or a recovered image fails to mount
     * @throws AssertionError naming the cut if an image is not clean
     */
    public static List<Image> observe(AdapterFixture fixture, String what, Step setup, Step change, Step durable,
            Probe probe, int points) throws IOException {
        RamBlockDevice formatted = fixture.newFormattedDevice();
        long[] span = countWrites(fixture, formatted.copy(), setup, change, durable);
        List<Image> images = new ArrayList<>();
        for (CutMode mode : CutMode.values()) {
            for (long point : points(span[0], span[1], points)) {
                Random random = new Random(point * 31 + mode.ordinal());
                PowerCutDevice power = new PowerCutDevice(formatted.copy());
                RamBlockDevice[] image = new RamBlockDevice[1];
                IomapFileSystem fs = fixture.mount(power);
                try {
                    setup.run(fs);
                    fs.sync();
                    power.onWrite(count -> {
                        if (count == point && image[0] == null) {
                            image[0] = power.cut(mode, random);
                        }
                    });
                    runUntilPowerOff(power, fs, change, durable);
                    if (image[0] == null) {
                        // This run wrote less than the counting run: cut where it ended.
                        image[0] = power.cut(mode, random);
                    }
                } finally {
                    closeAfterCut(fs);
                }
                String where = what + ", cut at device write #" + point + " (" + mode + ")";
                images.add(new Image(where, verify(fixture, where, image[0], probe), false));
            }
            PowerCutDevice power = new PowerCutDevice(formatted.copy());
            IomapFileSystem fs = fixture.mount(power);
            RamBlockDevice image;
            try {
                setup.run(fs);
                fs.sync();
                change.run(fs);
                if (durable != null) {
                    durable.run(fs);
                }
                image = power.cut(mode, new Random(mode.ordinal()));
            } finally {
                closeAfterCut(fs);
            }
            String where = what + ", cut after it" + (durable != null ? " was made durable" : "") + " (" + mode + ")";
            images.add(new Image(where, verify(fixture, where, image, probe), durable != null));
        }
        return images;
    }

    /** @return {device writes before the change, after the durability call} */
    private static long[] countWrites(AdapterFixture fixture, RamBlockDevice device, Step setup, Step change,
            Step durable) throws IOException {
        PowerCutDevice power = new PowerCutDevice(device);
        try (IomapFileSystem fs = fixture.mount(power)) {
            setup.run(fs);
            fs.sync();
            long before = power.completedWrites();
            change.run(fs);
            if (durable != null) {
                durable.run(fs);
            }
            return new long[] {before, power.completedWrites()};
        }
    }

    /** @return up to {@code count} device-write counts in {@code (before, after]}, evenly spread */
    private static List<Long> points(long before, long after, int count) {
        List<Long> points = new ArrayList<>();
        long writes = after - before;
        if (writes <= count) {
            for (long p = before + 1; p <= after; p++) {
                points.add(p);
            }
            return points;
        }
        for (int i = 1; i <= count; i++) {
            points.add(before + Math.max(1, writes * i / count));
        }
        return points;
    }

    private static void runUntilPowerOff(PowerCutDevice power, IomapFileSystem fs, Step change, Step durable)
            throws IOException {
        try {
            change.run(fs);
            if (durable != null) {
                durable.run(fs);
            }
        } catch (IOException | RuntimeException e) {
            if (!power.isPowerOff()) {
                throw e;
            }
        }
    }

    private static void closeAfterCut(IomapFileSystem fs) {
        try {
            fs.close();
        } catch (IOException | RuntimeException expected) {
            // The power is off: the final sync fails.
        }
    }

    /** @return what the recovered image shows; fails if it is not clean after the remount */
    private static String verify(AdapterFixture fixture, String where, RamBlockDevice image, Probe probe)
            throws IOException {
        String state;
        try (IomapFileSystem recovered = fixture.mount(image)) {
            state = probe.state(recovered);
        }
        FsckReport report = fixture.fsck(image);
        if (!report.isClean()) {
            throw new AssertionError(fixture.label() + ": " + where + ": fsck (" + report.checked() + "): "
                    + report.problems());
        }
        return state;
    }
}
