package dev.iomap.api;

/**
 * What an offline check does beyond the metadata.
 *
 * @param scrub also read every data extent and verify its checksum, reporting each bad one (needs
 *     {@link Capability#DATA_CHECKSUMS}); reads the whole image, so it is slow
 */
public record FsckOptions(boolean scrub) {
    /** Metadata only: what {@code fsck} does without options. */
    public static final FsckOptions METADATA = new FsckOptions(false);

    /** Metadata, then every data extent read and verified. */
    public static final FsckOptions SCRUB = new FsckOptions(true);
}
