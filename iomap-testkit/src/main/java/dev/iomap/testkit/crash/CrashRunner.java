package dev.iomap.testkit.crash;

import dev.iomap.api.DirEntry;
import dev.iomap.api.FsckReport;
import dev.iomap.api.IomapFile;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.testkit.AdapterFixture;
import dev.iomap.testkit.TestData;
import dev.iomap.devices.RamBlockDevice;
import dev.iomap.devices.PowerCutDevice;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeSet;

/**
 * Power-cut testing: runs a random workload on a {@link PowerCutDevice}, takes the image a power cut
 * would leave at random device writes (the last cut turns the power off for real), and for each
 * image mounts it (journal replay), checks that every byte, size and name made durable by fsync,
 * fdatasync or sync is there and that nothing else is garbage, writes a new file to prove the
 * recovered free-space map is right, unmounts and runs fsck.
 *
 * <p>The crash points are device-write counts: a first run of the workload counts its writes, a
 * second run takes images at the chosen counts. Everything follows from {@link CrashConfig#seed()};
 * a failure names the seed and the write count to reproduce it with
 * {@link CrashConfig#withCrashAt}.
 */
public final class CrashRunner {

    private CrashRunner() {
    }

    /**
     * What a run did.
     *
     * @param label adapter and geometry
     * @param seed the seed of the first workload
     * @param workloads workloads run (one more whenever a workload had fewer device writes than crash
     *     points were still wanted)
     * @param deviceWrites device writes of all workloads
     * @param crashPoints power cuts verified
     */
    public record Result(String label, long seed, int workloads, long deviceWrites, int crashPoints) {
    }

    /** An image taken during a workload, waiting to be checked. */
    private record Image(long writeCount, RamBlockDevice device) {
    }

    /**
     * Runs workloads until {@link CrashConfig#crashPoints()} power cuts are verified: each workload
     * (seeded from the config's seed and its number) takes at most one cut per device write. With
     * {@link CrashConfig#crashAt()} set, runs exactly one workload, cut exactly there.
     *
     * @param fixture the adapter under test (it should declare {@code DURABLE_FSYNC})
     * @param config seed, crash points, workload length, cut mode
     * @return what ran
     * @throws CrashFailure if an image lost durable data, held garbage, failed to mount or was not clean
     * @throws IOException if a workload failed before any power cut
     */
    public static Result run(AdapterFixture fixture, CrashConfig config) throws IOException {
        if (!config.crashAt().isEmpty()) {
            long[] done = runWorkload(fixture, config, config.crashAt().size());
            return new Result(fixture.label(), config.seed(), 1, done[0], (int) done[1]);
        }
        int verified = 0;
        long writes = 0;
        int workloads = 0;
        while (verified < config.crashPoints() && workloads < config.crashPoints()) {
            CrashConfig each = workloads == 0 ? config : config.withSeed(config.seed() * 0x5DEECE66DL + workloads);
            long[] done = runWorkload(fixture, each, config.crashPoints() - verified);
            writes += done[0];
            verified += (int) done[1];
            workloads++;
        }
        return new Result(fixture.label(), config.seed(), workloads, writes, verified);
    }

    /** @return {device writes of the workload, power cuts verified} */
    private static long[] runWorkload(AdapterFixture fixture, CrashConfig config, int wanted) throws IOException {
        RamBlockDevice formatted = fixture.newFormattedDevice();
        long totalWrites = countWrites(fixture, config, formatted);
        List<Long> points = config.crashAt().isEmpty() ? choosePoints(config, totalWrites, wanted) : config.crashAt();
        long realCut = points.getLast();
        List<Image> pending = new ArrayList<>();
        PowerCutDevice device = new PowerCutDevice(formatted);
        device.onWrite(count -> {
            if (count == realCut) {
                pending.add(new Image(count, device.cut(config.mode(), tearing(config, count))));
            } else if (points.contains(count)) {
                pending.add(new Image(count, device.image(config.mode(), tearing(config, count))));
            }
        });
        CrashWorkload workload = new CrashWorkload(config.seed(), fixture.capabilities(), fixture.geometry());
        IomapFileSystem fs = fixture.mount(device);
        List<Long> verified = new ArrayList<>();
        try {
            for (int i = 0; i < config.ops() && !device.isPowerOff(); i++) {
                try {
                    workload.step(fs);
                } catch (IOException | RuntimeException e) {
                    if (!device.isPowerOff()) {
                        throw e;
                    }
                }
                verifyPending(fixture, config, workload, workload.snapshotDuringLastStep(), pending, verified);
            }
            if (!device.isPowerOff()) {
                // The unmount is part of the workload: cuts during its final sync are tried too.
                List<TrackedFile> beforeUnmount = workload.snapshot();
                workload.log().add("unmount");
                workload.closeAll();
                try {
                    fs.close();
                } catch (IOException | RuntimeException e) {
                    if (!device.isPowerOff()) {
                        throw e;
                    }
                }
                verifyPending(fixture, config, workload, beforeUnmount, pending, verified);
            }
            if (!device.isPowerOff()) {
                workload.unmounted();
                long count = device.completedWrites();
                pending.add(new Image(count, device.cut(config.mode(), tearing(config, count))));
                verifyPending(fixture, config, workload, workload.snapshot(), pending, verified);
            }
        } finally {
            workload.closeAll();
            try {
                fs.close();
            } catch (IOException | RuntimeException expected) {
                // The power is off: the final sync fails.
            }
        }
        return new long[] {totalWrites, verified.size()};
    }

    /** The torn writes of one image depend on the seed and the crash point only, so it reproduces alone. */
    private static Random tearing(CrashConfig config, long writeCount) {
        return new Random(config.seed() ^ (writeCount * 0x9E3779B97F4A7C15L));
    }

    private static long countWrites(AdapterFixture fixture, CrashConfig config, RamBlockDevice formatted)
            throws IOException {
        PowerCutDevice device = new PowerCutDevice(formatted);
        CrashWorkload workload = new CrashWorkload(config.seed(), fixture.capabilities(), fixture.geometry());
        try (IomapFileSystem fs = fixture.mount(device)) {
            for (int i = 0; i < config.ops(); i++) {
                workload.step(fs);
            }
            workload.closeAll();
        }
        return device.completedWrites();
    }

    private static List<Long> choosePoints(CrashConfig config, long totalWrites, int atMost) {
        Random random = new Random(config.seed());
        TreeSet<Long> points = new TreeSet<>();
        int wanted = (int) Math.min(atMost, Math.max(1, totalWrites));
        while (points.size() < wanted) {
            points.add(1 + random.nextLong(Math.max(1, totalWrites)));
        }
        return List.copyOf(points);
    }

    private static void verifyPending(AdapterFixture fixture, CrashConfig config, CrashWorkload workload,
            List<TrackedFile> expectation, List<Image> pending, List<Long> verified) {
        if (pending.isEmpty()) {
            return;
        }
        for (Image image : List.copyOf(pending)) {
            String problem;
            Throwable cause = null;
            try {
                problem = verify(fixture, image.device(), expectation);
            } catch (IOException | RuntimeException e) {
                problem = "the crashed image failed: " + e;
                cause = e;
            }
            if (problem != null) {
                throw new CrashFailure(report(fixture, config, workload, image.writeCount(), problem), cause);
            }
            verified.add(image.writeCount());
        }
        pending.clear();
    }

    /** @return null if the image is acceptable, else the problem */
    static String verify(AdapterFixture fixture, RamBlockDevice image, List<TrackedFile> files)
            throws IOException {
        Map<String, byte[]> contents = new HashMap<>();
        try (IomapFileSystem fs = fixture.mount(image)) {
            Map<String, DirEntry> names = new HashMap<>();
            for (DirEntry entry : fs.readdir("/")) {
                names.put(entry.name(), entry);
            }
            for (String name : names.keySet()) {
                if (files.stream().noneMatch(file -> file.candidateNames().contains(name))) {
                    return "unexpected name /" + name + " (never created, or unlinked before a sync)";
                }
            }
            for (TrackedFile file : files) {
                List<String> present = file.candidateNames().stream().filter(names::containsKey).toList();
                if (present.size() > 1) {
                    return "file " + file.id + " is under several names after the crash: " + present;
                }
                if (present.isEmpty()) {
                    if (file.mustExist()) {
                        return "/" + file.durableName + " was made durable by fsync or sync but is missing";
                    }
                    continue;
                }
                byte[] actual = readAll(fs, "/" + present.getFirst());
                String problem = file.check(actual);
                if (problem != null) {
                    return "/" + present.getFirst() + ": " + problem;
                }
                contents.put(present.getFirst(), actual);
            }
            String afterWrite = writeAndRecheck(fs, contents);
            if (afterWrite != null) {
                return afterWrite;
            }
        }
        FsckReport report = fixture.fsck(image);
        if (!report.isClean()) {
            return "fsck after recovery and unmount (" + report.checked() + "): " + report.problems();
        }
        return null;
    }

    /** A new file after recovery must not land on blocks that recovered files still use. */
    private static String writeAndRecheck(IomapFileSystem fs, Map<String, byte[]> contents) throws IOException {
        try (IomapFile probe = fs.create("/after-crash")) {
            probe.write(0, ByteBuffer.wrap(TestData.pattern(-1, 0, 256 << 10)));
            probe.fsync();
        }
        fs.sync();
        fs.dropCleanCache();
        for (Map.Entry<String, byte[]> entry : contents.entrySet()) {
            if (!Arrays.equals(readAll(fs, "/" + entry.getKey()), entry.getValue())) {
                return "/" + entry.getKey() + " changed after writing a new file on the recovered filesystem:"
                        + " recovery left blocks in use marked free";
            }
        }
        return null;
    }

    private static byte[] readAll(IomapFileSystem fs, String path) throws IOException {
        try (IomapFile file = fs.open(path)) {
            long size = file.size();
            if (size > Integer.MAX_VALUE) {
                throw new IOException(path + " is " + size + " bytes after the crash");
            }
            ByteBuffer dst = ByteBuffer.allocate((int) size);
            while (dst.hasRemaining() && file.read(dst.position(), dst) > 0) {
                // keep reading
            }
            return Arrays.copyOf(dst.array(), dst.position());
        }
    }

    private static String report(AdapterFixture fixture, CrashConfig config, CrashWorkload workload, long writeCount,
            String problem) {
        List<String> log = workload.log();
        StringBuilder out = new StringBuilder();
        out.append("crash test on ").append(fixture.label()).append(": ").append(problem).append('\n');
        out.append("  power cut at device write #").append(writeCount).append(" (mode ").append(config.mode())
                .append(", seed ").append(config.seed()).append(")\n");
        out.append("  reproduce: CrashRunner.run(fixture, CrashConfig.of(fixture, CutMode.").append(config.mode())
                .append(").withSeed(").append(config.seed()).append("L).withCrashAt(List.of(").append(writeCount)
                .append("L)))\n");
        out.append("  workload until the cut (").append(log.size()).append(" ops, the last one in progress):\n");
        for (int i = Math.max(0, log.size() - 40); i < log.size(); i++) {
            out.append("    #").append(i).append(' ').append(log.get(i)).append('\n');
        }
        return out.toString();
    }
}
