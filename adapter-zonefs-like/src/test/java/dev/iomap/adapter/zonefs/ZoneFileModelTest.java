package dev.iomap.adapter.zonefs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.iomap.api.InvalidRangeException;
import dev.iomap.api.IomapFile;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.NotSupportedException;
import dev.iomap.api.PageCacheOptions;
import dev.iomap.devices.RamBlockDevice;
import dev.iomap.devices.ZoneLayout;
import dev.iomap.devices.ZonedDevice;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * An fsx-style model checker for zone files, with the operations each zone type supports: random
 * operations on one file, each checked against a byte-array model (size after every operation, the
 * bytes of every read, the whole file every 25 operations and after every remount). Conventional
 * files: writes anywhere, mapped writes and reads, fsync, cache drops, remounts, truncate to their
 * size. Sequential files: appends of whole blocks at the size, reads and mapped reads, fsync, cache
 * drops, remounts, truncate to 0 and to the capacity; and the writes they refuse (overwrite, hole,
 * unaligned append, mapped write, other truncates), which must leave the model unchanged.
 *
 * <p>Runs on the kit's eight standard geometries (1 KiB and 4 KiB blocks, 4 KiB and 64 KiB pages,
 * single-page and 2 MiB folios). {@code -Dfsx.ops=N} and {@code -Diomap.test.seed=N} make it longer
 * or different; a failure names the seed and the last operations.
 */
class ZoneFileModelTest {
    static final int SECTOR = 512;
    static final long ZONE = 256 << 10;
    static final long SEQ_CAPACITY = 192 << 10;
    static final ZoneLayout LAYOUT = new ZoneLayout(ZONE, SEQ_CAPACITY, 5, 3, 2);
    static final int OPS = Integer.getInteger("fsx.ops", 300);
    static final int FULL_CHECK_EVERY = 25;

    static Stream<Arguments> geometries() {
        List<Arguments> all = new ArrayList<>();
        for (String path : List.of("/cnv/0", "/seq/0")) {
            for (int block : new int[] {1024, 4096}) {
                for (int page : new int[] {4096, 65536}) {
                    for (boolean large : new boolean[] {false, true}) {
                        int order = large ? 21 - Integer.numberOfTrailingZeros(page) : 0;
                        all.add(Arguments.of(path, block, page, order));
                    }
                }
            }
        }
        return all.stream();
    }

    @ParameterizedTest(name = "{0} block {1} page {2} order {3}")
    @MethodSource("geometries")
    void randomOperationsMatchTheModel(String path, int blockSize, int pageSize, int maxFolioOrder) throws Exception {
        long seed = ZonefsFixture.SEED * 1_000_003 + (path + blockSize + pageSize + maxFolioOrder).hashCode();
        PageCacheOptions options = PageCacheOptions.builder().pageSize(pageSize).maxFolioOrder(maxFolioOrder)
                .poisonNewFolios(true).build();
        try (ZonedDevice device = ZonedDevice.create(new RamBlockDevice(SECTOR, LAYOUT.backingBytes(SECTOR)), LAYOUT)) {
            ZonefsFixture.format(device, blockSize);
            var session = new Session(device, options, path, blockSize, new Random(seed));
            try {
                for (int i = 0; i < OPS; i++) {
                    session.step(i);
                }
                session.remount();
            } catch (AssertionError | IOException | RuntimeException e) {
                throw new AssertionError("seed " + seed + ", " + path + ", last ops " + session.lastOps(), e);
            } finally {
                session.fs.close();
            }
        }
    }

    /** One file under test, its model and the ops run so far. */
    private static final class Session {
        final ZonedDevice device;
        final PageCacheOptions options;
        final String path;
        final boolean sequential;
        final long capacity;
        final int blockSize;
        final Random random;
        final List<String> log = new ArrayList<>();
        byte[] model;
        long size;
        IomapFileSystem fs;
        IomapFile file;

        Session(ZonedDevice device, PageCacheOptions options, String path, int blockSize, Random random)
                throws IOException {
            this.device = device;
            this.options = options;
            this.path = path;
            this.sequential = path.startsWith("/seq");
            this.capacity = sequential ? SEQ_CAPACITY : ZONE;
            this.blockSize = blockSize;
            this.random = random;
            this.model = new byte[(int) capacity];
            this.size = sequential ? 0 : capacity;
            mount();
        }

        void mount() throws IOException {
            fs = ZonefsFixture.mount(device, options, false);
            file = fs.open(path);
        }

        void remount() throws IOException {
            log("remount");
            file.close();
            fs.close();
            if (sequential) {
                assertThat(device.zone(zoneIndex()).writtenBytes()).as("write pointer after unmount").isEqualTo(size);
            }
            mount();
            checkAll();
        }

        int zoneIndex() {
            return LAYOUT.conventionalZones() + Integer.parseInt(path.substring(path.lastIndexOf('/') + 1));
        }

        void step(int i) throws IOException {
            int pick = random.nextInt(100);
            if (pick < 40) {
                write();
            } else if (pick < 55) {
                read();
            } else if (pick < 62) {
                mapWrite();
            } else if (pick < 68) {
                mapRead();
            } else if (pick < 76) {
                refusedWrite();
            } else if (pick < 82) {
                log("fsync");
                file.fsync();
            } else if (pick < 86) {
                log("dropcache");
                fs.dropCleanCache();
            } else if (pick < 90) {
                remount();
            } else {
                truncate();
            }
            assertThat(file.size()).as("size").isEqualTo(size);
            if (i % FULL_CHECK_EVERY == 0) {
                checkAll();
            }
        }

        void write() throws IOException {
            long pos;
            int length;
            if (sequential) {
                pos = size;
                int blocks = 1 + random.nextInt(12);
                length = blocks * blockSize;
                if (pos + length > capacity) {
                    log("append " + pos + " " + length + " (past capacity)");
                    assertThatThrownBy(() -> file.write(pos, ByteBuffer.allocate(length)))
                            .isInstanceOf(InvalidRangeException.class);
                    return;
                }
            } else {
                pos = random.nextLong(capacity);
                length = 1 + random.nextInt((int) Math.min(20_000, capacity - pos));
            }
            byte[] data = ZonefsFixture.randomBytes(random, length);
            log("write " + pos + " " + length);
            ZonefsFixture.write(file, pos, data);
            System.arraycopy(data, 0, model, (int) pos, length);
            size = Math.max(size, pos + length);
        }

        void read() throws IOException {
            long pos = random.nextLong(capacity);
            int length = 1 + random.nextInt(20_000);
            log("read " + pos + " " + length);
            ByteBuffer dst = ByteBuffer.allocate(length);
            int n = file.read(pos, dst);
            if (pos >= size) {
                assertThat(n).isEqualTo(-1);
                return;
            }
            int expected = (int) Math.min(length, size - pos);
            assertThat(n).isEqualTo(expected);
            assertThat(Arrays.copyOf(dst.array(), n))
                    .isEqualTo(Arrays.copyOfRange(model, (int) pos, (int) pos + n));
        }

        void mapWrite() throws IOException {
            if (size == 0) {
                return;
            }
            long pos = random.nextLong(size);
            int length = 1 + random.nextInt((int) Math.min(8000, size - pos));
            byte[] data = ZonefsFixture.randomBytes(random, length);
            log("mapwrite " + pos + " " + length);
            if (sequential) {
                assertThatThrownBy(() -> file.map().store(pos, ByteBuffer.wrap(data)))
                        .isInstanceOf(SequentialFileException.class);
                return;
            }
            file.map().store(pos, ByteBuffer.wrap(data));
            System.arraycopy(data, 0, model, (int) pos, length);
        }

        void mapRead() throws IOException {
            if (size == 0) {
                return;
            }
            long pos = random.nextLong(size);
            int length = 1 + random.nextInt((int) Math.min(8000, size - pos));
            log("mapread " + pos + " " + length);
            ByteBuffer dst = ByteBuffer.allocate(length);
            file.map().load(pos, dst);
            assertThat(dst.array()).isEqualTo(Arrays.copyOfRange(model, (int) pos, (int) pos + length));
        }

        /** A write the file must refuse without changing anything. */
        void refusedWrite() {
            if (!sequential) {
                long pos = capacity - random.nextInt(blockSize);
                log("write past capacity " + pos);
                assertThatThrownBy(() -> file.write(pos, ByteBuffer.allocate(blockSize + 1)))
                        .isInstanceOf(InvalidRangeException.class);
                return;
            }
            int kind = random.nextInt(3);
            if (kind == 0 && size > 0) {
                long pos = random.nextLong(size);
                log("overwrite " + pos + " (refused)");
                assertThatThrownBy(() -> file.write(pos, ByteBuffer.allocate(blockSize)))
                        .isInstanceOf(SequentialFileException.class);
            } else if (kind == 1) {
                long pos = size + 1 + random.nextInt(3 * blockSize);
                log("hole at " + pos + " (refused)");
                assertThatThrownBy(() -> file.write(pos, ByteBuffer.allocate(blockSize)))
                        .isInstanceOf(SequentialFileException.class);
            } else {
                int length = 1 + random.nextInt(blockSize - 1);
                log("unaligned append " + length + " (refused)");
                assertThatThrownBy(() -> file.write(size, ByteBuffer.allocate(length)))
                        .isInstanceOfAny(InvalidRangeException.class);
            }
        }

        void truncate() throws IOException {
            if (!sequential) {
                log("truncate " + capacity);
                file.truncate(capacity);
                long other = random.nextLong(capacity);
                log("truncate " + other + " (refused)");
                assertThatThrownBy(() -> file.truncate(other)).isInstanceOf(NotSupportedException.class);
                return;
            }
            int kind = random.nextInt(4);
            if (kind == 0) {
                log("truncate 0");
                file.truncate(0);
                Arrays.fill(model, (byte) 0);
                size = 0;
            } else if (kind == 1) {
                log("truncate " + capacity);
                file.truncate(capacity);
                Arrays.fill(model, (int) size, (int) capacity, (byte) 0);
                size = capacity;
            } else {
                long other = 1 + random.nextLong(capacity - 1);
                log("truncate " + other + " (refused)");
                assertThatThrownBy(() -> file.truncate(other)).isInstanceOf(SequentialFileException.class);
            }
        }

        void checkAll() throws IOException {
            assertThat(file.size()).as("size").isEqualTo(size);
            assertThat(ZonefsFixture.readAll(file)).as("whole file").isEqualTo(Arrays.copyOf(model, (int) size));
        }

        void log(String op) {
            log.add(op);
        }

        List<String> lastOps() {
            return log.subList(Math.max(0, log.size() - 12), log.size());
        }
    }
}
