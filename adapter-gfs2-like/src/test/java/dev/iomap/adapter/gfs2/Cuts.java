package dev.iomap.adapter.gfs2;

import static org.assertj.core.api.Assertions.assertThat;

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
 * Power cuts at every device write of a change: the change is run once to count its writes, then once
 * per write and cut mode with the power cut right after that write; each image must mount, show the
 * old or the new state (the new one once the change was made durable), and be clean for fsck.
 */
final class Cuts {
    /** A step on the mounted filesystem. */
    @FunctionalInterface
    interface Step {
        void run(IomapFileSystem fs) throws IOException;
    }

    /** Tells the recovered states apart: "old", "new" or a description. */
    @FunctionalInterface
    interface Probe {
        String state(IomapFileSystem fs) throws IOException;
    }

    private Cuts() {
    }

    /**
     * @return how many cut images were checked
     */
    static int everyWrite(AdapterFixture fixture, Step setup, Step change, Step durable, Probe probe)
            throws IOException {
        RamBlockDevice formatted = fixture.newFormattedDevice();
        long before;
        long after;
        PowerCutDevice counting = new PowerCutDevice(formatted.copy());
        try (IomapFileSystem fs = fixture.mount(counting)) {
            setup.run(fs);
            fs.sync();
            before = counting.completedWrites();
            change.run(fs);
            durable.run(fs);
            after = counting.completedWrites();
        }
        assertThat(after).as("device writes of the change").isGreaterThan(before);
        int checked = 0;
        List<String> failures = new ArrayList<>();
        for (CutMode mode : List.of(CutMode.LOSE_UNFLUSHED, CutMode.TEAR_AND_REORDER)) {
            for (long point = before + 1; point <= after + 1; point++) {
                long cutAt = point;
                Random random = new Random(point * 31 + mode.ordinal());
                PowerCutDevice power = new PowerCutDevice(formatted.copy());
                RamBlockDevice[] image = new RamBlockDevice[1];
                IomapFileSystem fs = fixture.mount(power);
                try {
                    setup.run(fs);
                    fs.sync();
                    power.onWrite(count -> {
                        if (count == cutAt && image[0] == null) {
                            image[0] = power.cut(mode, random);
                        }
                    });
                    try {
                        change.run(fs);
                        durable.run(fs);
                    } catch (IOException | RuntimeException e) {
                        if (!power.isPowerOff()) {
                            throw e;
                        }
                    }
                    if (image[0] == null) {
                        image[0] = power.cut(mode, random);
                    }
                } finally {
                    try {
                        fs.close();
                    } catch (IOException | RuntimeException expected) {
                        // The power is off.
                    }
                }
                boolean mustBeNew = point > after;
                String state;
                try (IomapFileSystem recovered = fixture.mount(image[0])) {
                    state = probe.state(recovered);
                }
                if (!(state.equals("new") || (!mustBeNew && state.equals("old")))) {
                    failures.add("cut at write #" + point + " (" + mode + "): " + state);
                }
                FsckReport report = fixture.fsck(image[0]);
                if (!report.isClean()) {
                    failures.add("cut at write #" + point + " (" + mode + "): fsck " + report.problems());
                }
                checked++;
            }
        }
        assertThat(failures).as("cuts that showed neither state, or were not clean").isEmpty();
        return checked;
    }
}
