package dev.iomap.it.fuzz;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * One integer field of an on-device structure, as its adapter's README documents it: where it is
 * inside the structure, how wide, and in which byte order.
 *
 * @param name what the field is, for messages (e.g. "slot 3 size")
 * @param offset byte offset from the start of the structure
 * @param width 1, 2, 4 or 8 bytes
 * @param order the byte order the adapter writes it in
 * @param owner the inode number of the one regular file this field describes (a field of its inode
 *     slot or extent list, a zone's write pointer), -1 if it is not one file's
 */
record Field(String name, int offset, int width, ByteOrder order, long owner) {

    Field {
        if (width != 1 && width != 2 && width != 4 && width != 8) {
            throw new IllegalArgumentException("field " + name + " is " + width + " bytes wide");
        }
    }

    static Field le(String name, int offset, int width) {
        return new Field(name, offset, width, ByteOrder.LITTLE_ENDIAN, -1);
    }

    static Field be(String name, int offset, int width) {
        return new Field(name, offset, width, ByteOrder.BIG_ENDIAN, -1);
    }

    /** @return this field as one of inode {@code ino}'s */
    Field ownedBy(long ino) {
        return new Field(name, offset, width, order, ino);
    }

    /** @return whether the field lies inside a structure of {@code length} bytes */
    boolean fits(int length) {
        return offset >= 0 && offset + width <= length;
    }

    /** @return the field's value in {@code bytes} (the structure), zero-extended */
    long get(byte[] bytes) {
        ByteBuffer buffer = ByteBuffer.wrap(bytes).order(order);
        return switch (width) {
            case 1 -> bytes[offset] & 0xffL;
            case 2 -> buffer.getShort(offset) & 0xffffL;
            case 4 -> buffer.getInt(offset) & 0xffffffffL;
            default -> buffer.getLong(offset);
        };
    }

    /** Stores the low {@link #width} bytes of {@code value}. */
    void set(byte[] bytes, long value) {
        ByteBuffer buffer = ByteBuffer.wrap(bytes).order(order);
        switch (width) {
            case 1 -> bytes[offset] = (byte) value;
            case 2 -> buffer.putShort(offset, (short) value);
            case 4 -> buffer.putInt(offset, (int) value);
            default -> buffer.putLong(offset, value);
        }
    }

    /** @return {@code value} cut to the field's width, as {@link #get} would read it back */
    long truncate(long value) {
        return width == 8 ? value : value & ((1L << (8 * width)) - 1);
    }

    /** @return "name (u32 @ +offset)" */
    String describe() {
        return name + " (u" + (8 * width) + " @ +" + offset + ")";
    }
}
