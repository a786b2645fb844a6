package dev.iomap.api;

/**
 * What a file's atomic writes may be ({@link IomapFile#writeAtomic}): the {@code statx} fields
 * {@code stx_atomic_write_unit_min}, {@code stx_atomic_write_unit_max} and
 * {@code stx_atomic_write_segments_max} ({@code STATX_WRITE_ATOMIC}, Linux 6.11).
 *
 * <p>Either {@link #NONE} (all zero: the file takes no atomic writes) or both units powers of two with
 * {@code unitMin <= unitMax} and {@code segmentsMax == 1} (one buffer per write, as Linux's
 * {@code generic_atomic_write_valid} requires of the user buffer).
 *
 * @param unitMin the smallest length of an atomic write, bytes (0: none)
 * @param unitMax the largest length of an atomic write, bytes (0: none)
 * @param segmentsMax buffers one atomic write may gather from (0: none, else 1)
 */
public record AtomicWriteLimits(int unitMin, int unitMax, int segmentsMax) {
    /** No atomic writes: what a file of an adapter without {@link Capability#ATOMIC_WRITES} reports. */
    public static final AtomicWriteLimits NONE = new AtomicWriteLimits(0, 0, 0);

    /** The rule of {@link #check} that an atomic write broke, in the order they are checked. */
    public enum Rule {
        /** The length is below {@link #unitMin()}. */
        LENGTH_BELOW_UNIT_MIN,
        /** The length is above {@link #unitMax()}. */
        LENGTH_ABOVE_UNIT_MAX,
        /** The length is not a power of two. */
        LENGTH_NOT_POWER_OF_TWO,
        /** The offset is not a multiple of the length. */
        OFFSET_NOT_ALIGNED_TO_LENGTH
    }

    /**
     * @throws IllegalArgumentException unless all three are zero, or both units are powers of two,
     *     {@code unitMin <= unitMax}, and {@code segmentsMax} is 1
     */
    public AtomicWriteLimits {
        boolean none = unitMin == 0 && unitMax == 0 && segmentsMax == 0;
        if (!none && (!isPowerOfTwo(unitMin) || !isPowerOfTwo(unitMax) || unitMin > unitMax || segmentsMax != 1)) {
            throw new IllegalArgumentException("atomic write limits: unit min " + unitMin + " and max " + unitMax
                    + " must be powers of two, min <= max, and segments max 1 (got " + segmentsMax
                    + "); or all three 0 for none");
        }
    }

    /**
     * @param unitMin smallest length, a power of two
     * @param unitMax largest length, a power of two, at least {@code unitMin}
     * @return the limits of one-buffer atomic writes between the two
     * @throws IllegalArgumentException if they are not such
     */
    public static AtomicWriteLimits of(int unitMin, int unitMax) {
        return new AtomicWriteLimits(unitMin, unitMax, 1);
    }

    /** @return whether the file takes atomic writes at all */
    public boolean supported() {
        return unitMax > 0;
    }

    /**
     * The rules of an atomic write as Linux has them, in XFS's order ({@code xfs_file_write_iter}'s unit
     * checks, then {@code generic_atomic_write_valid}): the length between {@link #unitMin} and
     * {@link #unitMax} and a power of two, the offset a multiple of the length.
     *
     * @param what the write, for the message
     * @param pos file offset, at least 0
     * @param length bytes
     * @throws AtomicWriteException (EINVAL) naming the first rule broken, in the order of {@link Rule}
     */
    public void check(String what, long pos, long length) throws AtomicWriteException {
        if (length < unitMin || length == 0) {
            throw new AtomicWriteException(Rule.LENGTH_BELOW_UNIT_MIN, what + ": length " + length
                    + " is below the atomic write unit min " + unitMin);
        }
        if (length > unitMax) {
            throw new AtomicWriteException(Rule.LENGTH_ABOVE_UNIT_MAX, what + ": length " + length
                    + " is above the atomic write unit max " + unitMax);
        }
        if (!isPowerOfTwo(length)) {
            throw new AtomicWriteException(Rule.LENGTH_NOT_POWER_OF_TWO, what + ": length " + length
                    + " is not a power of two");
        }
        if (pos % length != 0) {
            throw new AtomicWriteException(Rule.OFFSET_NOT_ALIGNED_TO_LENGTH, what + ": offset " + pos
                    + " is not a multiple of the length " + length);
        }
    }

    private static boolean isPowerOfTwo(long value) {
        return value > 0 && (value & (value - 1)) == 0;
    }
}
