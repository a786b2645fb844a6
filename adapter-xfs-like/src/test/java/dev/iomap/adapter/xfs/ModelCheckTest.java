package dev.iomap.adapter.xfs;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.iomap.device.BlockDevice;
import dev.iomap.api.FallocateMode;
import dev.iomap.api.InvalidRangeException;
import dev.iomap.api.IomapFile;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.IomapFileSystems;
import dev.iomap.api.NoSpaceException;
import dev.iomap.devices.CutMode;
import dev.iomap.devices.PowerCutDevice;
import dev.iomap.devices.RamBlockDevice;
import dev.iomap.testkit.TestData;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * An fsx-style check: seeded random writes, truncates, fallocates, clones, unshares, fsyncs, cache drops
 * and remounts over a few files, each compared byte for byte with an in-memory model, on a device with a
 * volatile cache. Power cuts are simulated after a sync, at arbitrary points and inside flushes (keeping a
 * random part of what was not flushed); each crash image must mount, keep every fsynced file, show no
 * never-written block ({@link CrashOracle}) and pass fsck. Two small configurations run out of space,
 * which must change nothing. {@code -Diomap.test.seed=N} and {@code -Diomap.test.ops=N} vary the run;
 * {@code -Diomap.test.paranoid=true} compares every file after every operation. On failure the tail of
 * the op log is printed, so a run replays from its seed.
 */
class ModelCheckTest {
    private static final int FILES = 4;
    private static final int MAX_SIZE = 600_000;
    private static final int OPS = Integer.getInteger("iomap.test.ops", 400);

    private final List<String> log = new ArrayList<>();
    private final byte[][] model = new byte[FILES][0];
    private final IomapFile[] files = new IomapFile[FILES];
    private XfsFixture fx;
    private Random random;
    private int blockSize;
    private CrashOracle oracle;
    /** The zero-range fallocate in progress, whose edges may change even if it fails; else null. */
    private int[] zeroRange;
    private boolean modified;
    private boolean fsynced;
    private boolean syncedAll;
    /** Flushes until the arranged power cut inside one (it happens in the one this reaches 0); -1: none. */
    private int flushesUntilCut = -1;
    /** The image the arranged power cut left, until {@link #takeCutInsideFlush()}. */
    private RamBlockDevice cutInsideFlush;

    @ParameterizedTest(name = "seed {0}, journal {1} blocks of {2} bytes on {3}-byte sectors, {4} MiB")
    @CsvSource({"1, 512, 4096, 4096, 32", "2, 64, 4096, 4096, 32", "3, 100, 1024, 1024, 32",
        "4, 512, 4096, 512, 32", "5, 64, 4096, 4096, 2", "6, 64, 1024, 512, 2"})
    void randomOperationsMatchTheModel(long seed, int journalBlocks, int blockSize, int sectorSize, int mebibytes)
            throws Exception {
        random = new Random(Long.getLong("iomap.test.seed", 0L) * 1_000_003 + seed);
        this.blockSize = blockSize;
        oracle = new CrashOracle(FILES, blockSize);
        Map<String, String> properties = Map.of("journalblocks", "" + journalBlocks);
        try (XfsFixture fixture = XfsFixture.createWithPowerCut(sectorSize, blockSize, (long) mebibytes << 20,
                properties)) {
            fx = fixture;
            PowerCutDevice power = (PowerCutDevice) fx.device;
            power.onFlush(flushes -> {
                if (flushesUntilCut > 0 && --flushesUntilCut == 0) {
                    cutInsideFlush = power.image(CutMode.LOSE_SOME_WRITES, random);
                }
            });
            for (int i = 0; i < FILES; i++) {
                files[i] = fx.fs.create("/f" + i);
            }
            fx.fs.sync();
            try {
                for (int op = 0; op < OPS; op++) {
                    operation(op);
                }
                for (int i = 0; i < FILES; i++) {
                    assertSame(XfsFixture.readAll(files[i]), model[i], "file " + i + " at the end");
                }
                System.out.printf("model check seed %d: %d ops, %d refused for space%n", seed, OPS,
                        log.stream().filter(line -> line.startsWith("  -> no space")).count());
            } catch (AssertionError | Exception e) {
                System.err.println("seed " + seed + " journal " + journalBlocks + " op log:");
                for (int i = Math.max(0, log.size() - 40); i < log.size(); i++) {
                    System.err.println("  " + i + ": " + log.get(i));
                }
                throw e;
            } finally {
                for (IomapFile file : files) {
                    file.close();
                }
            }
        }
    }

    /** One random operation, then the crash checks and remounts that may follow it. */
    private void operation(int op) throws Exception {
        int f = random.nextInt(FILES);
        if (random.nextInt(40) == 0) {
            // A power cut inside one of the next few flushes, before it makes anything durable.
            flushesUntilCut = 1 + random.nextInt(4);
        }
        try {
            step(f);
            if (modified) {
                oracle.changed(f, model[f]);
            }
        } catch (NoSpaceException e) {
            afterNoSpace(f, e);
        }
        RamBlockDevice cut = takeCutInsideFlush();
        if (cut != null) {
            // A power cut inside this operation may or may not keep what it did to its file.
            log.add("crash inside a flush");
            oracle.check(cut, Set.of(f));
        }
        if (fsynced) {
            oracle.durable(f, model[f]);
        }
        if (syncedAll) {
            allDurable();
        }
        if (Boolean.getBoolean("iomap.test.paranoid")) {
            compareAll("after op " + op);
        }
        if (random.nextInt(60) == 0) {
            crashAfterSync();
        }
        if (random.nextInt(40) == 0) {
            log.add("crash");
            oracle.check(((PowerCutDevice) fx.device).image(CutMode.LOSE_SOME_WRITES, random), Set.of());
        }
        if (random.nextInt(80) == 0) {
            remount();
        }
    }

    /** @return the image of the arranged power cut if it happened, else null; either way, disarms it */
    private RamBlockDevice takeCutInsideFlush() {
        RamBlockDevice image = cutInsideFlush;
        cutInsideFlush = null;
        flushesUntilCut = -1;
        return image;
    }

    /**
     * An operation refused for space did nothing, except that a clone may have grown its target first
     * and a zero range zeroed its partial edge blocks through the cache first (as Linux does).
     */
    private void afterNoSpace(int f, NoSpaceException e) throws Exception {
        log.add("  -> no space: " + e.getMessage());
        model[f] = Arrays.copyOf(model[f], (int) files[f].size());
        if (zeroRange != null) {
            int from = Math.min(zeroRange[0], model[f].length);
            int to = Math.min(zeroRange[1], model[f].length);
            byte[] actual = XfsFixture.read(files[f], from, to - from);
            System.arraycopy(actual, 0, model[f], from, actual.length);
        }
        assertSame(XfsFixture.readAll(files[f]), model[f], "file " + f + " after no space");
        oracle.changed(f, model[f]);
    }

    private void step(int f) throws Exception {
        zeroRange = null;
        modified = false;
        fsynced = false;
        syncedAll = false;
        int kind = random.nextInt(100);
        if (kind < 35) {
            write(f);
        } else if (kind < 43) {
            int newSize = random.nextInt(MAX_SIZE);
            log.add("truncate f" + f + " " + newSize);
            modified = true;
            files[f].truncate(newSize);
            model[f] = Arrays.copyOf(model[f], newSize);
        } else if (kind < 55) {
            fallocate(f);
        } else if (kind < 65) {
            cloneInto(f, random.nextInt(FILES));
        } else if (kind < 70) {
            int pos = random.nextInt(MAX_SIZE);
            int len = 1 + random.nextInt(200_000);
            log.add("unshare f" + f + " " + pos + "+" + len);
            files[f].unshare(pos, len);
        } else if (kind < 80) {
            log.add("fsync f" + f);
            if (random.nextBoolean()) {
                files[f].fsync();
            } else {
                files[f].fdatasync();
            }
            fsynced = true;
        } else if (kind < 85) {
            log.add("drop caches");
            fx.fs.sync();
            syncedAll = true;
            fx.fs.dropCleanCache();
        } else {
            read(f);
        }
    }

    private void write(int f) throws Exception {
        int pos = random.nextInt(MAX_SIZE - 1);
        int len = 1 + random.nextInt(Math.min(MAX_SIZE - pos, random.nextBoolean() ? 5000 : 100_000));
        byte[] data = TestData.pattern(random.nextInt(), 0, len);
        log.add("write f" + f + " " + pos + "+" + len);
        modified = true;
        XfsFixture.writeAt(files[f], pos, data);
        model[f] = Arrays.copyOf(model[f], Math.max(model[f].length, pos + len));
        System.arraycopy(data, 0, model[f], pos, len);
    }

    private void fallocate(int f) throws Exception {
        int size = model[f].length;
        FallocateMode mode = FallocateMode.values()[random.nextInt(3)];
        int pos = random.nextInt(MAX_SIZE - 1);
        int len = 1 + random.nextInt(Math.min(MAX_SIZE - pos, 80_000));
        boolean keepSize = mode == FallocateMode.PUNCH_HOLE || random.nextBoolean();
        log.add("fallocate f" + f + " " + mode + " " + pos + "+" + len + (keepSize ? " keep" : ""));
        zeroRange = mode == FallocateMode.ZERO_RANGE ? new int[] {pos, pos + len} : null;
        modified = true;
        files[f].fallocate(mode, pos, len, keepSize);
        if (mode != FallocateMode.ALLOCATE) {
            Arrays.fill(model[f], Math.min(pos, size), Math.min(pos + len, size), (byte) 0);
        }
        if (!keepSize && pos + len > size) {
            model[f] = Arrays.copyOf(model[f], pos + len);
        }
    }

    /** Clones whole blocks of file {@code s} (perhaps ending at its EOF) into file {@code f}. */
    private void cloneInto(int f, int s) throws Exception {
        int srcSize = model[s].length;
        if (srcSize < blockSize) {
            return;
        }
        int srcBlock = random.nextInt(srcSize / blockSize);
        int blocks = 1 + random.nextInt(Math.min(srcSize / blockSize - srcBlock, 40));
        int length = blocks * blockSize;
        if (srcBlock + blocks == srcSize / blockSize && random.nextBoolean()) {
            length = srcSize - srcBlock * blockSize;
        }
        int src = srcBlock * blockSize;
        int dst = random.nextInt(MAX_SIZE / blockSize - blocks) * blockSize;
        if (s == f && Math.abs(dst - src) < blocks * blockSize + blockSize) {
            return;
        }
        log.add("clone f" + s + " " + src + "+" + length + " -> f" + f + " " + dst);
        if (length % blockSize != 0 && dst + length < model[f].length) {
            // The source's partial EOF block may not land inside the target (fstests generic/518).
            int cloneLength = length;
            assertThatThrownBy(() -> files[f].cloneRange(files[s], src, dst, cloneLength))
                    .isInstanceOf(InvalidRangeException.class);
            return;
        }
        modified = true;
        files[f].cloneRange(files[s], src, dst, length);
        byte[] copy = Arrays.copyOfRange(model[s], src, src + length);
        model[f] = Arrays.copyOf(model[f], Math.max(model[f].length, dst + length));
        System.arraycopy(copy, 0, model[f], dst, length);
    }

    private void read(int f) throws Exception {
        int size = model[f].length;
        int pos = size == 0 ? 0 : random.nextInt(size);
        int len = Math.min(size - pos, 1 + random.nextInt(100_000));
        log.add("read f" + f + " " + pos + "+" + len);
        assertSame(XfsFixture.read(files[f], pos, len), Arrays.copyOfRange(model[f], pos, pos + len),
                "read f" + f + " " + pos + "+" + len);
    }

    private void compareAll(String when) throws Exception {
        for (int i = 0; i < FILES; i++) {
            try {
                assertSame(XfsFixture.readAll(files[i]), model[i], "file " + i + " " + when);
            } catch (AssertionError e) {
                for (IomapFile file : files) {
                    System.err.println(Debug.describe(fx.fs, file.ino()));
                }
                throw e;
            }
        }
    }

    /** Syncs, copies the device as a power cut would leave it, and checks the copy holds the model. */
    private void crashAfterSync() throws Exception {
        log.add("sync+crash");
        fx.fs.sync();
        allDurable();
        BlockDevice copy = fx.copyOfDevice();
        try (IomapFileSystem crashed = IomapFileSystems.mount("xfs-like", copy, XfsFixture.mountOptions())) {
            for (int i = 0; i < FILES; i++) {
                try (IomapFile file = crashed.open("/f" + i)) {
                    assertSame(XfsFixture.readAll(file), model[i], "crashed copy of f" + i);
                }
            }
        }
        XfsFixture.assertClean(copy);
        copy.close();
    }

    private void remount() throws Exception {
        for (IomapFile file : files) {
            file.close();
        }
        log.add("remount");
        fx.remount();
        allDurable();
        for (int i = 0; i < FILES; i++) {
            files[i] = fx.fs.open("/f" + i);
        }
    }

    private void allDurable() {
        for (int i = 0; i < FILES; i++) {
            oracle.durable(i, model[i]);
        }
    }

    /** Compares without printing megabytes: the first differing offset and the sizes. */
    static void assertSame(byte[] actual, byte[] expected, String what) {
        if (Arrays.equals(actual, expected)) {
            return;
        }
        int first = Arrays.mismatch(actual, expected);
        throw new AssertionError(what + ": " + actual.length + " bytes, expected " + expected.length
                + "; first difference at " + first + ": got "
                + (first < actual.length ? actual[first] : "EOF") + ", expected "
                + (first < expected.length ? expected[first] : "EOF"));
    }
}
