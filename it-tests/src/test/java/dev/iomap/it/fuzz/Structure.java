package dev.iomap.it.fuzz;

import java.util.List;

/**
 * One metadata structure of an image: what it is, which bytes it covers, how it is checksummed and
 * which fields of it the fuzzer may forge.
 *
 * @param type the structure's kind (a metadata block's magic, "superblock", "zone state slot"...);
 *     blocks copied "over one of their type" share it
 * @param offset its first byte in the image
 * @param length its bytes (one block, or a few for a multi-block slot)
 * @param framing how to recompute its checksum after a forged field
 * @param fields the fields a forgery may change, offsets from {@code offset}
 */
record Structure(String type, long offset, int length, Framing framing, List<Field> fields) {

    Structure {
        fields = List.copyOf(fields);
    }

    /** @return "TYPE at image offset N" */
    String describe() {
        return type + " at image offset " + offset;
    }
}
