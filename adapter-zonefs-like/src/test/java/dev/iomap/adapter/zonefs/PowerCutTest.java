package dev.iomap.adapter.zonefs;

import static dev.iomap.adapter.zonefs.ZonefsFixture.LAYOUT;
import static dev.iomap.adapter.zonefs.ZonefsFixture.SECTOR;
import static org.assertj.core.api.Assertions.assertThat;

import dev.iomap.api.IomapFile;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.IomapFileSystems;
import dev.iomap.devices.ZonedDevice;
import dev.iomap.devices.CutMode;
import dev.iomap.devices.RamBlockDevice;
import dev.iomap.devices.PowerCutDevice;
import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Power cuts after every device write of a workload of appends, fsyncs, a zone reset and
 * conventional overwrites (the images come from a {@link PowerCutDevice}, with unflushed
 * writes lost, or kept, torn and reordered at random). After each, remounted: every sequential file's
 * size is its zone's durable write pointer, every byte below it is the data appended there, and what
 * an fsync had returned for is there.
 */
class PowerCutTest {
    static final int BLOCK = 1024;
    /** /seq/0 and /seq/1 are zones 3 and 4; /cnv/0 is zone 1. */
    static final int FIRST_SEQ_ZONE = 3;

    private record Snapshot(long writes, RamBlockDevice image) {
    }

    /** What a file held at one moment, and whether an fsync had made it durable. */
    private record Durable(long afterWrites, String path, byte[] content) {
    }

    /** A truncate to 0 (zone reset) of {@code path}: begun after write {@code from}, returned after {@code to}. */
    private record Reset(long from, long to, String path) {
    }

    @ParameterizedTest
    @EnumSource(value = CutMode.class, names = {"LOSE_UNFLUSHED", "TEAR_AND_REORDER"})
    void everySequentialFileIsItsDurableWritePointerAfterACut(CutMode mode) throws Exception {
        Random random = new Random(ZonefsFixture.SEED + mode.ordinal());
        var power = new PowerCutDevice(new RamBlockDevice(SECTOR, LAYOUT.backingBytes(SECTOR)));
        ZonedDevice device = ZonedDevice.create(power, LAYOUT);
        ZonefsFixture.format(device, BLOCK);
        List<Snapshot> snapshots = new ArrayList<>();
        power.onWrite(count -> snapshots.add(new Snapshot(count, power.image(mode, random))));
        List<Durable> durable = new ArrayList<>();
        List<Reset> resets = new ArrayList<>();
        // Every content a sequential file had, one generation per reset.
        List<List<byte[]>> generations = List.of(new ArrayList<>(), new ArrayList<>());
        List<byte[]> conventionalStates = new ArrayList<>();

        IomapFileSystem fs = ZonefsFixture.mount(device);
        var seq0 = new ByteArrayOutputStream();
        var seq1 = new ByteArrayOutputStream();
        try (IomapFile a = fs.open("/seq/0"); IomapFile b = fs.open("/seq/1"); IomapFile c = fs.open("/cnv/0")) {
            for (int round = 0; round < 6; round++) {
                append(a, seq0, random);
                append(b, seq1, random);
                if (round % 2 == 0) {
                    a.fsync();
                    durable.add(new Durable(power.completedWrites(), "/seq/0", seq0.toByteArray()));
                } else {
                    b.fsync();
                    durable.add(new Durable(power.completedWrites(), "/seq/1", seq1.toByteArray()));
                }
                if (round == 3) {
                    generations.get(1).add(seq1.toByteArray());
                    long from = power.completedWrites();
                    b.truncate(0);
                    resets.add(new Reset(from, power.completedWrites(), "/seq/1"));
                    seq1.reset();
                    durable.add(new Durable(power.completedWrites(), "/seq/1", new byte[0]));
                }
                byte[] overwrite = ZonefsFixture.randomBytes(random, 3000);
                ZonefsFixture.write(c, 500L * round, overwrite);
                conventionalStates.add(ZonefsFixture.read(c, 0, 8192));
                c.fsync();
                durable.add(new Durable(power.completedWrites(), "/cnv/0", ZonefsFixture.read(c, 0, 8192)));
            }
            generations.get(0).add(seq0.toByteArray());
            generations.get(1).add(seq1.toByteArray());
        }
        // The mount is abandoned, as a power cut leaves it.

        assertThat(snapshots).hasSizeGreaterThan(15);
        for (Snapshot snapshot : snapshots) {
            checkImage(snapshot, durable, resets, generations);
            if (mode == CutMode.LOSE_UNFLUSHED) {
                checkConventional(snapshot, durable, conventionalStates);
            }
        }
    }

    private static void append(IomapFile file, ByteArrayOutputStream model, Random random) throws Exception {
        byte[] data = ZonefsFixture.randomBytes(random, BLOCK * (1 + random.nextInt(4)));
        ZonefsFixture.write(file, file.size(), data);
        model.writeBytes(data);
    }

    private static void checkImage(Snapshot snapshot, List<Durable> durable, List<Reset> resets,
            List<List<byte[]>> generations) throws Exception {
        String at = "image after write " + snapshot.writes();
        try (ZonedDevice device = ZonedDevice.open(snapshot.image().copy());
                IomapFileSystem fs = ZonefsFixture.mount(device)) {
            for (int i = 0; i < 2; i++) {
                try (IomapFile file = fs.open("/seq/" + i)) {
                    long writePointer = device.zone(FIRST_SEQ_ZONE + i).writtenBytes();
                    assertThat(file.size()).as(at).isEqualTo(writePointer);
                    byte[] content = ZonefsFixture.readAll(file);
                    assertThat(generations.get(i)).as(at + ": /seq/%d holds a prefix of what was appended", i)
                            .anyMatch(written -> written.length >= content.length
                                    && Arrays.equals(Arrays.copyOf(written, content.length), content));
                }
            }
            for (String path : List.of("/seq/0", "/seq/1")) {
                Durable promise = latestDurable(durable, path, snapshot);
                if (promise != null) {
                    try (IomapFile file = fs.open(path)) {
                        byte[] content = ZonefsFixture.readAll(file);
                        // A reset under way at the cut may have landed: the file is then empty.
                        boolean resetLanded = content.length == 0 && resets.stream().anyMatch(reset ->
                                reset.path().equals(path) && reset.from() < snapshot.writes()
                                        && snapshot.writes() <= reset.to());
                        if (!resetLanded) {
                            // Not AssertJ's startsWith, which fails on any non-empty file for an empty prefix.
                            assertThat(content.length).as(at + ": size of fsynced " + path)
                                    .isGreaterThanOrEqualTo(promise.content().length);
                            assertThat(Arrays.copyOf(content, promise.content().length)).as(at + ": fsynced " + path)
                                    .isEqualTo(promise.content());
                        }
                    }
                }
            }
        }
        assertThat(IomapFileSystems.fsck(ZonefsLikeAdapter.NAME, ZonedDevice.open(snapshot.image().copy())).problems())
                .as(at).isEmpty();
    }

    /**
     * The latest fsync of {@code path} made durable in the image: one whose flush came before the
     * write the image was taken at (a flush follows the fsync's last write, so an image taken at that
     * write does not have it yet).
     */
    private static Durable latestDurable(List<Durable> durable, String path, Snapshot snapshot) {
        return durable.stream().filter(d -> d.path().equals(path) && d.afterWrites() < snapshot.writes())
                .reduce((first, second) -> second).orElse(null);
    }

    /**
     * With unflushed writes lost, the conventional file holds what its latest durable fsync saw, or a
     * later state that another file's flush made durable.
     */
    private static void checkConventional(Snapshot snapshot, List<Durable> durable, List<byte[]> states)
            throws Exception {
        Durable promise = latestDurable(durable, "/cnv/0", snapshot);
        if (promise == null) {
            return;
        }
        int from = 0;
        while (!Arrays.equals(states.get(from), promise.content())) {
            from++;
        }
        List<byte[]> allowed = states.subList(from, states.size());
        try (ZonedDevice device = ZonedDevice.open(snapshot.image().copy());
                IomapFileSystem fs = ZonefsFixture.mount(device);
                IomapFile file = fs.open("/cnv/0")) {
            byte[] content = ZonefsFixture.read(file, 0, 8192);
            assertThat(allowed).as("image after write " + snapshot.writes() + ": /cnv/0")
                    .anyMatch(state -> Arrays.equals(state, content));
        }
    }}
