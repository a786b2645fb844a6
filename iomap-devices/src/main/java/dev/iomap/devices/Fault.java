package dev.iomap.devices;

import dev.iomap.device.IoPurpose;

/**
 * One rule of a {@link FaultInjectingDevice}: which requests fail, and how often.
 *
 * <p>Build with the static factories and refine with {@link #purpose}, {@link #after}, {@link #times}
 * and {@link #torn}:
 * <pre>{@code
 * device.inject(Fault.writes(0, Long.MAX_VALUE).purpose(IoPurpose.DATA).times(1));
 * device.inject(Fault.reads(dataStart, 4096));
 * device.inject(Fault.flushes());
 * device.inject(Fault.writes(0, Long.MAX_VALUE).after(2));   // the third write and every later one
 * }</pre>
 *
 * <p>Immutable and thread-safe.
 *
 * @param kind which operation
 * @param offset first device byte of the failing range (ignored for flushes)
 * @param length bytes of the failing range; a request fails if it overlaps the range
 * @param purpose for writes, only this purpose fails; null for any
 * @param after how many matching requests succeed before the rule fails any (0: the first fails)
 * @param times how many matching requests fail before the rule goes quiet; -1 for every one
 * @param tornWrite for writes: the part of the request before the failing range is written before the
 *     error is reported (a write that dies half way)
 */
public record Fault(Kind kind, long offset, long length, IoPurpose purpose, int after, int times,
        boolean tornWrite) {

    /** The operations a fault can hit. */
    public enum Kind {
        /** {@link dev.iomap.device.BlockDevice#read}. */
        READ,
        /** {@link dev.iomap.device.BlockDevice#write}. */
        WRITE,
        /** {@link dev.iomap.device.BlockDevice#flush}. */
        FLUSH,
        /** {@link dev.iomap.device.BlockDevice#discard}. */
        DISCARD
    }

    /**
     * Validates.
     *
     * @throws NullPointerException if {@code kind} is null
     * @throws IllegalArgumentException if the range is empty or negative, {@code after} is negative
     *     or {@code times} is neither positive nor -1
     */
    public Fault {
        java.util.Objects.requireNonNull(kind, "kind");
        if (offset < 0 || length <= 0) {
            throw new IllegalArgumentException("fault range [" + offset + ", +" + length + ") is empty or negative");
        }
        if (after < 0) {
            throw new IllegalArgumentException("after must be at least 0, got " + after);
        }
        if (times < -1 || times == 0) {
            throw new IllegalArgumentException("times must be positive or -1 (always), got " + times);
        }
    }

    /**
     * @param offset first device byte, at least 0
     * @param length bytes, positive
     * @return every read overlapping the range fails
     * @throws IllegalArgumentException if the range is empty or negative
     */
    public static Fault reads(long offset, long length) {
        return new Fault(Kind.READ, offset, length, null, 0, -1, false);
    }

    /**
     * @param offset first device byte, at least 0
     * @param length bytes, positive ({@code Long.MAX_VALUE}: to the end of any device)
     * @return every write overlapping the range fails
     * @throws IllegalArgumentException if the range is empty or negative
     */
    public static Fault writes(long offset, long length) {
        return new Fault(Kind.WRITE, offset, length, null, 0, -1, false);
    }

    /** @return every data write fails, wherever it goes */
    public static Fault dataWrites() {
        return writes(0, Long.MAX_VALUE).purpose(IoPurpose.DATA);
    }

    /** @return every metadata write fails, wherever it goes */
    public static Fault metadataWrites() {
        return writes(0, Long.MAX_VALUE).purpose(IoPurpose.METADATA);
    }

    /** @return every flush fails */
    public static Fault flushes() {
        return new Fault(Kind.FLUSH, 0, Long.MAX_VALUE, null, 0, -1, false);
    }

    /**
     * @param which only writes of this purpose; null for any
     * @return a copy
     */
    public Fault purpose(IoPurpose which) {
        return new Fault(kind, offset, length, which, after, times, tornWrite);
    }

    /**
     * @param count how many matching requests fail, positive, or -1 for every one
     * @return a copy
     * @throws IllegalArgumentException if {@code count} is neither positive nor -1
     */
    public Fault times(int count) {
        return new Fault(kind, offset, length, purpose, after, count, tornWrite);
    }

    /**
     * @param count how many matching requests succeed before the rule fails any
     * @return a copy
     * @throws IllegalArgumentException if {@code count} is negative
     */
    public Fault after(int count) {
        return new Fault(kind, offset, length, purpose, count, times, tornWrite);
    }

    /** @return a copy whose failing writes first write what lies before the failing range */
    public Fault torn() {
        return new Fault(kind, offset, length, purpose, after, times, true);
    }

    boolean matches(Kind requestKind, long requestOffset, long requestLength, IoPurpose requestPurpose) {
        if (requestKind != kind) {
            return false;
        }
        if (kind == Kind.FLUSH) {
            return true;
        }
        if (purpose != null && requestPurpose != purpose) {
            return false;
        }
        long end = offset + length < 0 ? Long.MAX_VALUE : offset + length;
        return requestOffset < end && requestOffset + Math.max(requestLength, 1) > offset;
    }
}
