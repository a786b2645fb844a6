package dev.iomap.adapter.bcachefs.store;

/** Limits of the {@link KeyStore} every implementation and caller respects. */
public final class StoreLimits {
    /** Longest value a key may have: a 1 KiB node still holds two such keys. Longer data (symlink targets, xattr values, long names) is split over several keys by the caller. */
    public static final int MAX_VALUE_BYTES = 300;

    private StoreLimits() {
    }
}
