package dev.iomap.it.fuzz;

import dev.iomap.device.DeviceRangeException;
import dev.iomap.devices.RamBlockDevice;

/**
 * One damage done to an image: bytes written at an offset, computed from the pristine image, so that
 * applying it is exact and a mutant is rebuilt from the seed alone.
 */
final class Mutation {
    private final MutationKind kind;
    private final long offset;
    private final byte[] bytes;
    private final String description;
    private final long forgedOwner;

    Mutation(MutationKind kind, long offset, byte[] bytes, String description) {
        this(kind, offset, bytes, description, -1);
    }

    /**
     * @param forgedOwner the inode number of the one regular file whose own metadata field was
     *     forged (see {@link Field#owner}), -1 if none
     */
    Mutation(MutationKind kind, long offset, byte[] bytes, String description, long forgedOwner) {
        this.kind = kind;
        this.offset = offset;
        this.bytes = bytes.clone();
        this.description = description;
        this.forgedOwner = forgedOwner;
    }

    /** @return the inode number of the file whose own field was forged, -1 if none */
    long forgedOwner() {
        return forgedOwner;
    }

    MutationKind kind() {
        return kind;
    }

    /** @return the first image byte changed */
    long offset() {
        return offset;
    }

    /** @return what was done, where, and what the bytes held (one line) */
    String description() {
        return description;
    }

    /** @return the first image block written */
    long firstBlock(int blockSize) {
        return offset / blockSize;
    }

    /** @return the last image block written */
    long lastBlock(int blockSize) {
        return (offset + bytes.length - 1) / blockSize;
    }

    /** Writes the damage into {@code image}. */
    void apply(RamBlockDevice image) throws DeviceRangeException {
        image.poke(offset, bytes, 0, bytes.length);
    }
}
