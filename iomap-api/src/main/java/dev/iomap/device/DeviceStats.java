package dev.iomap.device;

/**
 * A snapshot of what a {@link BlockDevice} has done since it was opened.
 *
 * @param bytesRead bytes read
 * @param reads read operations
 * @param dataBytesWritten bytes written with {@link IoPurpose#DATA}
 * @param metadataBytesWritten bytes written with {@link IoPurpose#METADATA}
 * @param writes write operations (one per {@link BlockDevice#write} call)
 * @param flushes {@link BlockDevice#flush} calls
 * @param discardedBytes bytes discarded
 */
public record DeviceStats(
        long bytesRead,
        long reads,
        long dataBytesWritten,
        long metadataBytesWritten,
        long writes,
        long flushes,
        long discardedBytes) {

    /** Nothing done yet. */
    public static final DeviceStats ZERO = new DeviceStats(0, 0, 0, 0, 0, 0, 0);

    /** @return data plus metadata bytes written */
    public long bytesWritten() {
        return dataBytesWritten + metadataBytesWritten;
    }

    /**
     * What happened between an earlier snapshot and this one.
     *
     * @param earlier a snapshot of the same device taken before this one
     * @return the differences
     */
    public DeviceStats minus(DeviceStats earlier) {
        return new DeviceStats(
                bytesRead - earlier.bytesRead,
                reads - earlier.reads,
                dataBytesWritten - earlier.dataBytesWritten,
                metadataBytesWritten - earlier.metadataBytesWritten,
                writes - earlier.writes,
                flushes - earlier.flushes,
                discardedBytes - earlier.discardedBytes);
    }
}
