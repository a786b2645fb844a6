package dev.iomap.testkit;

import dev.iomap.api.FormatOptions;
import dev.iomap.api.MountOptions;
import dev.iomap.api.PageCacheOptions;
import dev.iomap.spi.FileSystemAdapter;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * The shape of a test mount: filesystem block size, page size and largest folio order. A block may
 * be larger than a page: the page cache then gives every folio at least the order of one block (the
 * kernel's minimum folio order, 6.12) and raises the largest order to it.
 *
 * @param blockSize filesystem block size (512 to 64 KiB, power of two), independent of the page size
 * @param pageSize page size (4 KiB to 64 KiB, power of two)
 * @param maxFolioOrder largest folio order; 0 means single-page folios
 */
public record Geometry(int blockSize, int pageSize, int maxFolioOrder) {
    /** The largest folio the "large" geometries use: 2 MiB, as the kernel's PMD size on x86. */
    public static final long LARGE_FOLIO_BYTES = 2L << 20;

    /** The largest block size: 64 KiB, as the kernel's largest filesystem block. */
    public static final int MAX_BLOCK_SIZE = 65536;

    /**
     * The system property that adds {@link #moreLargeBlocks()} to the kit runs of
     * {@link #forKitRuns()}: {@code -Dkit.allGeometries=true}.
     */
    public static final String ALL_GEOMETRIES_PROPERTY = "kit.allGeometries";

    /**
     * The system property that narrows {@link #forKitRuns()} to the geometries it names, comma
     * separated ({@code -Dkit.geometry=b16k-p4k-o0}), to run one geometry of a long kit class; empty
     * or unset runs them all.
     */
    public static final String GEOMETRY_PROPERTY = "kit.geometry";

    /** Validates. */
    public Geometry {
        if (Integer.bitCount(blockSize) != 1 || blockSize < 512 || blockSize > MAX_BLOCK_SIZE) {
            throw new IllegalArgumentException("blockSize must be a power of two from 512 to " + MAX_BLOCK_SIZE
                    + ", got " + blockSize);
        }
        if (Integer.bitCount(pageSize) != 1 || pageSize < 4096 || pageSize > 65536) {
            throw new IllegalArgumentException("pageSize must be a power of two from 4096 to 65536, got " + pageSize);
        }
        if (maxFolioOrder < 0 || maxFolioOrder > PageCacheOptions.MAX_ORDER) {
            throw new IllegalArgumentException("maxFolioOrder out of range: " + maxFolioOrder);
        }
    }

    /**
     * @param blockSize block size
     * @param pageSize page size
     * @return the geometry whose largest folio is {@link #LARGE_FOLIO_BYTES}
     */
    public static Geometry largeFolios(int blockSize, int pageSize) {
        int order = Long.numberOfTrailingZeros(LARGE_FOLIO_BYTES) - Integer.numberOfTrailingZeros(pageSize);
        return new Geometry(blockSize, pageSize, order);
    }

    /**
     * The eight geometries every adapter runs on: block size 1 KiB and 4 KiB, page size 4 KiB and
     * 64 KiB, single-page and 2 MiB folios.
     *
     * @return the geometries
     */
    public static List<Geometry> standard() {
        List<Geometry> all = new ArrayList<>();
        for (int block : new int[] {1024, 4096}) {
            for (int page : new int[] {4096, 65536}) {
                all.add(new Geometry(block, page, 0));
                all.add(largeFolios(block, page));
            }
        }
        return List.copyOf(all);
    }

    /**
     * The block-larger-than-page geometry every kit run includes: 16 KiB blocks on 4 KiB pages with
     * single-block folios (minimum and largest order both 2), where every folio is exactly one block.
     *
     * @return {@code b16k-p4k-o0}
     */
    public static Geometry largeBlock() {
        return new Geometry(16384, 4096, 0);
    }

    /**
     * The other block-larger-than-page geometries, for long runs: 16 KiB and 64 KiB blocks on 4 KiB
     * pages with 2 MiB folios (minimum order 2 and 4), and 64 KiB blocks with single-block folios.
     *
     * @return {@code b16k-p4k-o9}, {@code b64k-p4k-o0}, {@code b64k-p4k-o9}
     */
    public static List<Geometry> moreLargeBlocks() {
        return List.of(largeFolios(16384, 4096), new Geometry(65536, 4096, 0), largeFolios(65536, 4096));
    }

    /**
     * The geometries a kit test class runs: the {@link #standard()} eight and {@link #largeBlock()},
     * plus {@link #moreLargeBlocks()} when the system property {@value #ALL_GEOMETRIES_PROPERTY} is
     * {@code true}; only those named by {@value #GEOMETRY_PROPERTY} when it is set.
     *
     * @return the geometries, standard ones first
     */
    public static List<Geometry> forKitRuns() {
        List<Geometry> all = new ArrayList<>(standard());
        all.add(largeBlock());
        if (Boolean.getBoolean(ALL_GEOMETRIES_PROPERTY)) {
            all.addAll(moreLargeBlocks());
        }
        String only = System.getProperty(GEOMETRY_PROPERTY, "").strip();
        if (!only.isEmpty()) {
            List<String> names = List.of(only.split("\\s*,\\s*"));
            all.removeIf(geometry -> !names.contains(geometry.name()));
        }
        return List.copyOf(all);
    }

    /** @return the page cache's minimum folio order: {@code log2(blockSize / pageSize)}, 0 if a block fits in a page */
    public int minFolioOrder() {
        return Math.max(0, Integer.numberOfTrailingZeros(blockSize) - Integer.numberOfTrailingZeros(pageSize));
    }

    /**
     * The standard geometries an adapter declares it supports, by what its
     * {@link FileSystemAdapter#checkFormat} accepts: a geometry is in when formatting a device of
     * {@link AdapterFixture#DEFAULT_DEVICE_BYTES} with its block size passes the check, on the kit's
     * 512-byte sectors or on sectors of the block size (an adapter that needs the latter uses
     * {@link AdapterFixture#withDeviceBlockSizeOfFilesystem()}). A kit test class parameterised over
     * this list runs every geometry the adapter can be formatted with and no other; an empty list
     * makes the parameterised class fail, as it should for an adapter that formats nothing the kit
     * knows.
     *
     * @param adapter the adapter, asked only through {@code checkFormat} (nothing is written)
     * @return the supported subset of {@link #standard()}, in its order
     */
    public static List<Geometry> supportedBy(FileSystemAdapter adapter) {
        List<Geometry> supported = new ArrayList<>();
        for (Geometry geometry : standard()) {
            if (formats(adapter, AdapterFixture.SECTOR_SIZE, geometry.blockSize())
                    || formats(adapter, geometry.blockSize(), geometry.blockSize())) {
                supported.add(geometry);
            }
        }
        return List.copyOf(supported);
    }

    private static boolean formats(FileSystemAdapter adapter, int deviceBlockSize, int blockSize) {
        try {
            adapter.checkFormat(deviceBlockSize, AdapterFixture.DEFAULT_DEVICE_BYTES, FormatOptions.blockSize(blockSize));
            return true;
        } catch (IOException | IllegalArgumentException e) {
            return false;
        }
    }

    /** @return bytes in the largest folio: the largest order raised to {@link #minFolioOrder} */
    public long maxFolioSize() {
        return (long) pageSize << Math.max(maxFolioOrder, minFolioOrder());
    }

    /**
     * Page-cache options of this geometry for tests: new folios poisoned (so a stale-data bug shows
     * as {@link PageCacheOptions#POISON_BYTE} rather than as plausible zeroes).
     *
     * @return the options
     */
    public PageCacheOptions pageCacheOptions() {
        return PageCacheOptions.builder()
                .pageSize(pageSize)
                .maxFolioOrder(maxFolioOrder)
                .poisonNewFolios(true)
                .build();
    }

    /**
     * @param backgroundWriteback whether the flusher runs
     * @return mount options of this geometry
     */
    public MountOptions mountOptions(boolean backgroundWriteback) {
        return new MountOptions(pageCacheOptions(), backgroundWriteback);
    }

    /** @return a short name, e.g. {@code b1k-p64k-o5} */
    public String name() {
        return "b" + kib(blockSize) + "-p" + kib(pageSize) + "-o" + maxFolioOrder;
    }

    private static String kib(int bytes) {
        return bytes % 1024 == 0 ? (bytes / 1024) + "k" : String.valueOf(bytes);
    }

    @Override
    public String toString() {
        return name();
    }
}
