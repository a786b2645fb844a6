package dev.iomap.core.example;

import dev.iomap.api.IoStats;
import dev.iomap.api.PageCacheOptions;
import dev.iomap.core.Bootstrap;
import dev.iomap.core.IomapCache;
import dev.iomap.core.IomapEngine;
import dev.iomap.core.OpenFile;
import dev.iomap.devices.RamBlockDevice;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

/**
 * The engine end to end with no filesystem: a 64 MiB RAM device opened as one file, 64 KiB
 * pages, single-page folios. The first 16 MiB are read (so every folio is uptodate), then 256
 * distinct 4 KiB blocks of that region are overwritten, each followed by {@code fdatasync}; a
 * second, cold cache over the same device reads every block back. Run once with per-block dirty tracking and once without
 * (the pre-patch behaviour that writes whole folios): the write amplification is 1 and 16.
 */
public final class QuickStart {
    /** Device block size and size of each write. */
    public static final int BLOCK_SIZE = 4096;
    /** Blocks written per run. */
    public static final int BLOCKS = 256;
    private static final int PAGE_SIZE = 65536;
    private static final long DEVICE_BYTES = 64L << 20;
    private static final int REGION_BYTES = 16 << 20;
    private static final long SEED = 20240601L;

    private QuickStart() {
    }

    /**
     * What one run did.
     *
     * @param stats the counters of the cache that wrote
     * @param verifiedBlocks blocks read back through the cold cache with the bytes written
     * @param mismatches device offsets of blocks read back with other bytes
     */
    public record Result(IoStats stats, int verifiedBlocks, List<Long> mismatches) {
        /** Copies the mismatches. */
        public Result {
            mismatches = List.copyOf(mismatches);
        }

        /** @return bytes the application wrote */
        public long appBytes() {
            return stats.appBytesWritten();
        }

        /** @return bytes the device wrote */
        public long deviceBytes() {
            return stats.device().bytesWritten();
        }
    }

    /**
     * Runs both settings and prints them side by side.
     *
     * @param args ignored
     * @throws IOException if the engine or the device fails
     */
    public static void main(String[] args) throws IOException {
        Result on = run(true);
        Result off = run(false);
        row("", "perBlockDirty=true", "perBlockDirty=false");
        row("application bytes written", on.appBytes(), off.appBytes());
        row("device bytes written", on.deviceBytes(), off.deviceBytes());
        row("write amplification", "%.2f".formatted(on.stats().writeAmplification()),
                "%.2f".formatted(off.stats().writeAmplification()));
        row("folios by order", orders(on.stats()), orders(off.stats()));
        row("folio states allocated", on.stats().folioStatesAllocated(),
                off.stats().folioStatesAllocated());
        row("ioends", on.stats().ioends(), off.stats().ioends());
        row("mapBlocks calls", on.stats().mapBlocksCalls(), off.stats().mapBlocksCalls());
        boolean onVerified = report("perBlockDirty=true", on);
        boolean offVerified = report("perBlockDirty=false", off);
        if (!onVerified || !offVerified) {
            System.err.println("QuickStart FAILED: blocks read back differ from what was written");
            System.exit(1);
        }
    }

    /**
     * Pre-reads the region, writes {@link #BLOCKS} blocks with an fdatasync after each, and
     * verifies them through a second, cold cache over the same device.
     *
     * @param perBlockDirty whether writeback writes only the dirty blocks of a folio
     * @return the counters and the verification
     * @throws IOException if the engine or the device fails
     */
    public static Result run(boolean perBlockDirty) throws IOException {
        PageCacheOptions options = PageCacheOptions.builder()
                .pageSize(PAGE_SIZE).maxFolioOrder(0).perBlockDirty(perBlockDirty).build();
        IomapEngine engine = Bootstrap.start(options);
        List<Long> offsets = offsets();
        try (var device = new RamBlockDevice(BLOCK_SIZE, DEVICE_BYTES);
                IomapCache cache = engine.newCache(device);
                IomapCache cold = engine.newCache(device)) {
            OpenFile file = cache.openBlockDevice();
            readFully(file, 0, ByteBuffer.allocate(REGION_BYTES));
            for (long offset : offsets) {
                file.write(offset, pattern(offset));
                file.fdatasync();
            }
            IoStats stats = cache.stats();
            OpenFile reader = cold.openBlockDevice();
            List<Long> mismatches = new ArrayList<>();
            for (long offset : offsets) {
                ByteBuffer read = ByteBuffer.allocate(BLOCK_SIZE);
                readFully(reader, offset, read);
                if (!read.flip().equals(pattern(offset))) {
                    mismatches.add(offset);
                }
            }
            return new Result(stats, offsets.size() - mismatches.size(), mismatches);
        }
    }

    /** Distinct block-aligned offsets spread over the region, from a fixed seed. */
    private static List<Long> offsets() {
        Random random = new Random(SEED);
        Set<Long> offsets = new LinkedHashSet<>();
        while (offsets.size() < BLOCKS) {
            offsets.add((long) random.nextInt(REGION_BYTES / BLOCK_SIZE) * BLOCK_SIZE);
        }
        return List.copyOf(offsets);
    }

    /** One block whose byte at device offset {@code o} is {@code (o * 31 + 7) & 0xff}. */
    private static ByteBuffer pattern(long offset) {
        ByteBuffer block = ByteBuffer.allocate(BLOCK_SIZE);
        for (int i = 0; i < BLOCK_SIZE; i++) {
            block.put(i, (byte) ((offset + i) * 31 + 7));
        }
        return block;
    }

    private static void readFully(OpenFile file, long pos, ByteBuffer dst) throws IOException {
        long next = pos;
        while (dst.hasRemaining()) {
            int n = file.read(next, dst);
            if (n < 0) {
                throw new IOException("unexpected EOF at " + next);
            }
            next += n;
        }
    }

    private static String orders(IoStats stats) {
        long[] counts = stats.foliosByOrder();
        return IntStream.range(0, counts.length).filter(order -> counts[order] != 0)
                .mapToObj(order -> order + ":" + counts[order]).collect(Collectors.joining(" "));
    }

    private static void row(String name, Object on, Object off) {
        System.out.printf("%-26s %20s %20s%n", name, on, off);
    }

    private static boolean report(String name, Result result) {
        if (result.mismatches().isEmpty()) {
            System.out.printf("%s: verified %d blocks: OK%n", name, result.verifiedBlocks());
            return true;
        }
        System.err.printf("%s: MISMATCH in %d of %d blocks, first at device offset %d%n", name,
                result.mismatches().size(), BLOCKS, result.mismatches().getFirst());
        return false;
    }
}
