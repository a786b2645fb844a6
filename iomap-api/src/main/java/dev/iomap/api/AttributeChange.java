package dev.iomap.api;

import java.time.Instant;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * A change of an inode's attributes: what {@code chmod}, {@code chown} and {@code utimensat} ask. Each
 * part is present or absent; absent parts stay as they are. Immutable; build with {@link #none()} and
 * the {@code with} methods. Whoever applies a non-empty change also sets the change time to the current
 * time, but for an {@link #accessed access}; the birth time never changes.
 *
 * @param mode new permission bits ({@code 07777} at most)
 * @param uid new owner
 * @param gid new group
 * @param atime new access time
 * @param mtime new modification time
 * @param access whether this is a read's access-time update (the kernel's {@code touch_atime}): only
 *     {@code atime} is present, and the change time stays as it is; false for every change a caller asks
 *     ({@code utimensat} sets the change time too)
 * @param touch whether every time this change sets is the current time, as {@code utimensat} with no
 *     times (or {@code UTIME_NOW} for both) asks: Linux's {@code ATTR_TOUCH}, which a file with
 *     {@link FileFlag#APPEND} allows and explicit times ({@code ATTR_TIMES_SET}) do not
 */
public record AttributeChange(OptionalInt mode, OptionalInt uid, OptionalInt gid, Optional<Instant> atime,
        Optional<Instant> mtime, boolean access, boolean touch) {

    private static final AttributeChange NONE = new AttributeChange(OptionalInt.empty(), OptionalInt.empty(),
            OptionalInt.empty(), Optional.empty(), Optional.empty(), false, false);

    /** @throws IllegalArgumentException if the mode has bits outside {@code 07777} */
    public AttributeChange {
        Objects.requireNonNull(mode, "mode");
        Objects.requireNonNull(uid, "uid");
        Objects.requireNonNull(gid, "gid");
        Objects.requireNonNull(atime, "atime");
        Objects.requireNonNull(mtime, "mtime");
        mode.ifPresent(NewInodeAttributes::checkMode);
        if (access && (mode.isPresent() || uid.isPresent() || gid.isPresent() || mtime.isPresent()
                || atime.isEmpty())) {
            throw new IllegalArgumentException("an access changes the access time alone");
        }
        if (touch && atime.isEmpty() && mtime.isEmpty()) {
            throw new IllegalArgumentException("a touch sets a time");
        }
    }

    /**
     * @param time the access time a read leaves
     * @return the access-time update of a read ({@link #access()}): the change time stays
     */
    public static AttributeChange accessed(Instant time) {
        return new AttributeChange(OptionalInt.empty(), OptionalInt.empty(), OptionalInt.empty(), Optional.of(time),
                Optional.empty(), true, false);
    }

    /** @return whether whoever applies this change sets the change time: every change but an {@link #access} */
    public boolean setsCtime() {
        return !access && !isEmpty();
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
        return new AttributeChange(OptionalInt.of(newMode), uid, gid, atime, mtime, false, touch);
    }

    /**
     * @param newUid owner
     * @return this change, also setting the owner
     */
    public AttributeChange withUid(int newUid) {
        return new AttributeChange(mode, OptionalInt.of(newUid), gid, atime, mtime, false, touch);
    }

    /**
     * @param newGid group
     * @return this change, also setting the group
     */
    public AttributeChange withGid(int newGid) {
        return new AttributeChange(mode, uid, OptionalInt.of(newGid), atime, mtime, false, touch);
    }

    /**
     * @param time access time
     * @return this change, also setting the access time
     */
    public AttributeChange withAtime(Instant time) {
        return new AttributeChange(mode, uid, gid, Optional.of(time), mtime, false, false);
    }

    /**
     * @param time modification time
     * @return this change, also setting the modification time
     */
    public AttributeChange withMtime(Instant time) {
        return new AttributeChange(mode, uid, gid, atime, Optional.of(time), false, false);
    }

    /**
     * @param now the current time
     * @param atimeToo whether the access time is set too
     * @param mtimeToo whether the modification time is set too
     * @return this change, also setting those times to {@code now} as a {@link #touch()}, which it stays
     *     unless a time was set explicitly before
     * @throws IllegalArgumentException if neither time is set
     */
    public AttributeChange withTimesNow(Instant now, boolean atimeToo, boolean mtimeToo) {
        boolean explicit = (atime.isPresent() || mtime.isPresent()) && !touch;
        return new AttributeChange(mode, uid, gid, atimeToo ? Optional.of(now) : atime,
                mtimeToo ? Optional.of(now) : mtime, false, !explicit);
    }

    /** @return whether nothing is changed */
    public boolean isEmpty() {
        return equals(NONE);
    }
}
