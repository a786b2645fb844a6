package dev.iomap.devices;

import dev.iomap.device.IoPurpose;

/**
 * One rule of a {@link FaultInjectingDevice}: which requests fail, and how often.
 *
 * <p>Build with the static factories and refine with the {@code with...} methods:
 * <pre>{@code
 * device.inject(Fault.writes(0, Long.MAX_VALUE).purpose(IoPurpose.DATA).times(1));
 * device.inject(Fault.reads(dataStart, 4096));
 * device.inject(Fault.flushes());
 * }</pre>
 *
 * @param kind which operation
 * @param offset first device byte of the failing range (ignored for flushes)
 * @param length bytes of the failing range; a request fails if it overlaps the range
 * @param purpose for writes, only this purpose fails; null for any
 * @param times how many matching requests fail before the rule goes quiet; -1 for every one
 * @param tornWrite for writes: the part of the request before the failing range is written before the
 *     error is reported (a write that dies half way)
 */
public record Fault(Kind kind, long offset, long length, IoPurpose purpose, int times, boolean tornWrite) {

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

    /** Validates. */
    public Fault {
        java.util.Objects.requireNonNull(kind, "kind");
        if (offset < 0 || length <= 0) {
            throw new IllegalArgumentException("fault range [" + offset + ", +" + length + ") is empty or negative");
        }
        if (times < -1 || times == 0) {
            throw new IllegalArgumentException("times must be positive or -1 (always), got " + times);
        }
    }

    /**
     * @param offset first device byte
     * @param length bytes
     * @return every read overlapping the range fails
     */
    public static Fault reads(long offset, long length) {
        return new Fault(Kind.READ, offset, length, null, -1, false);
    }

    /**
     * @param offset first device byte
     * @param length bytes
     * @return every write overlapping the range fails
     */
    public static Fault writes(long offset, long length) {
        return new Fault(Kind.WRITE, offset, length, null, -1, false);
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
        return new Fault(Kind.FLUSH, 0, Long.MAX_VALUE, null, -1, false);
    }

    /**
     * @param which only writes of this purpose
     * @return a copy
     */
    public Fault purpose(IoPurpose which) {
        return new Fault(kind, offset, length, which, times, tornWrite);
    }

    /**
     * @param count how many matching requests fail
     * @return a copy
     */
    public Fault times(int count) {
        return new Fault(kind, offset, length, purpose, count, tornWrite);
    }

    /** @return a copy whose failing writes first write what lies before the failing range */
    public Fault torn() {
        return new Fault(kind, offset, length, purpose, times, true);
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
