package dev.iomap.api;

import java.time.Instant;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * A change of an inode's attributes: what {@code chmod}, {@code chown} and {@code utimensat} ask. Each
 * part is present or absent; absent parts stay as they are. Immutable; build with {@link #none()} and
 * the {@code with} methods. Whoever applies a non-empty change also sets the change time to the current
 * time; the birth time never changes.
 *
 * @param mode new permission bits ({@code 07777} at most)
 * @param uid new owner
 * @param gid new group
 * @param atime new access time
 * @param mtime new modification time
 */
public record AttributeChange(OptionalInt mode, OptionalInt uid, OptionalInt gid, Optional<Instant> atime,
        Optional<Instant> mtime) {

    private static final AttributeChange NONE = new AttributeChange(OptionalInt.empty(), OptionalInt.empty(),
            OptionalInt.empty(), Optional.empty(), Optional.empty());

    /** @throws IllegalArgumentException if the mode has bits outside {@code 07777} */
    public AttributeChange {
        Objects.requireNonNull(mode, "mode");
        Objects.requireNonNull(uid, "uid");
        Objects.requireNonNull(gid, "gid");
        Objects.requireNonNull(atime, "atime");
        Objects.requireNonNull(mtime, "mtime");
        mode.ifPresent(NewInodeAttributes::checkMode);
    }

    /** @return the change that changes nothing */
    public static AttributeChange none() {
        return NONE;
    }

    /**
     * @param newMode permission bits
     * @return this change, also setting the mode
     * @throws IllegalArgumentException if {@code newMode} has bits outside {@code 07777}
     */
    public AttributeChange withMode(int newMode) {
        return new AttributeChange(OptionalInt.of(newMode), uid, gid, atime, mtime);
    }

    /**
     * @param newUid owner
     * @return this change, also setting the owner
     */
    public AttributeChange withUid(int newUid) {
        return new AttributeChange(mode, OptionalInt.of(newUid), gid, atime, mtime);
    }

    /**
     * @param newGid group
     * @return this change, also setting the group
     */
    public AttributeChange withGid(int newGid) {
        return new AttributeChange(mode, uid, OptionalInt.of(newGid), atime, mtime);
    }

    /**
     * @param time access time
     * @return this change, also setting the access time
     */
    public AttributeChange withAtime(Instant time) {
        return new AttributeChange(mode, uid, gid, Optional.of(time), mtime);
    }

    /**
     * @param time modification time
     * @return this change, also setting the modification time
     */
    public AttributeChange withMtime(Instant time) {
        return new AttributeChange(mode, uid, gid, atime, Optional.of(time));
    }

    /** @return whether nothing is changed */
    public boolean isEmpty() {
        return equals(NONE);
    }
}
