package dev.iomap.testkit.fsx;

import java.util.List;
import java.util.Objects;

/**
 * The file a model-checker run drives and the rules it obeys beyond the adapter's capabilities, for
 * adapters whose files differ by kind (a zonefs sequential zone file only appends whole blocks and
 * truncates to 0 or its capacity; a conventional zone file has a fixed size).
 *
 * @param path the file's path
 * @param create whether the run creates it (else it opens an existing file and starts the model from
 *     its contents)
 * @param appendUnit if positive, writes only append, in whole multiples of this many bytes
 * @param fixedSize writes, copies and mapped stores stay inside the size, which never changes
 * @param mappedWrites whether stores through the mapping are allowed
 * @param truncateSizes the only sizes truncate may set, or null for any
 * @param maxSize the largest size the file may reach (a zone's capacity), or 0 for no limit
 */
public record FsxFile(String path, boolean create, int appendUnit, boolean fixedSize, boolean mappedWrites,
        List<Long> truncateSizes, long maxSize) {

    /** Validates and copies. */
    public FsxFile {
        Objects.requireNonNull(path, "path");
        truncateSizes = truncateSizes == null ? null : List.copyOf(truncateSizes);
    }

    /**
     * @param path where
     * @return a file the run creates, with no rules beyond the capabilities (the default: {@code /fsx})
     */
    public static FsxFile created(String path) {
        return new FsxFile(path, true, 0, false, true, null, 0);
    }

    /**
     * @param path an existing file
     * @return that file, opened, with no rules beyond the capabilities
     */
    public static FsxFile existing(String path) {
        return new FsxFile(path, false, 0, false, true, null, 0);
    }

    /**
     * @param unit bytes per append
     * @return a copy that only appends, in multiples of {@code unit}
     */
    public FsxFile appendingOnly(int unit) {
        return new FsxFile(path, create, unit, fixedSize, mappedWrites, truncateSizes, maxSize);
    }

    /** @return a copy whose size never changes */
    public FsxFile keepingItsSize() {
        return new FsxFile(path, create, appendUnit, true, mappedWrites, truncateSizes, maxSize);
    }

    /** @return a copy without mapped stores */
    public FsxFile withoutMappedWrites() {
        return new FsxFile(path, create, appendUnit, fixedSize, false, truncateSizes, maxSize);
    }

    /**
     * @param sizes the only sizes truncate may set
     * @return a copy truncating only to those
     */
    public FsxFile truncatingOnlyTo(Long... sizes) {
        return new FsxFile(path, create, appendUnit, fixedSize, mappedWrites, List.of(sizes), maxSize);
    }

    /**
     * @param bytes the largest size
     * @return a copy that never grows past it
     */
    public FsxFile growingTo(long bytes) {
        return new FsxFile(path, create, appendUnit, fixedSize, mappedWrites, truncateSizes, bytes);
    }

    /** @return whether writes only append */
    public boolean appendOnly() {
        return appendUnit > 0;
    }
}
