package dev.iomap.api;

/**
 * A filesystem model plugged into iomap4j (xfs-like, gfs2-like, zonefs-like, bcachefs-like, or a
 * third party's). Each adapter is contributed by an {@link AdapterPlugin} into a Guice
 * {@code MapBinder<String, FilesystemAdapter>} keyed by {@link #name()}.
 *
 * <p>Implementations are immutable and thread-safe; one instance serves every mount.
 */
public interface FilesystemAdapter {

    /** @return the adapter's unique name, lower case with dashes (e.g. {@code xfs-like}) */
    String name();

    /** @return one line saying what the adapter models */
    String description();
}
