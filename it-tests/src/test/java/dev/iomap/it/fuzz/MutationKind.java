package dev.iomap.it.fuzz;

/** The ways the fuzzer damages an image. */
enum MutationKind {
    /** One bit flipped at a random byte of the image. */
    BIT_FLIP,
    /** One bit flipped inside a metadata structure (half the time inside one of its documented fields). */
    METADATA_BIT_FLIP,
    /** A documented field of a structure set to an interesting value, its checksum recomputed. */
    FORGED_FIELD,
    /** A metadata or data block zeroed. */
    ZEROED_BLOCK,
    /** A block copied over another of the same kind (two inode blocks, two data blocks...). */
    COPIED_SAME_TYPE,
    /** A block copied over one of another kind (data over metadata, one structure over another...). */
    COPIED_OTHER_TYPE
}
