package dev.iomap.adapter.gfs2;

import dev.iomap.adapter.support.MetadataBlock;
import dev.iomap.api.FormatOptions;
import dev.iomap.api.IomapFile;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.MountOptions;
import dev.iomap.api.XattrMode;
import dev.iomap.core.vfs.CoreRuntime;
import dev.iomap.devices.RamBlockDevice;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.function.UnaryOperator;

/**
 * A small cleanly unmounted gfs2-like image (1 KiB blocks) to damage in tests: {@code /big} (120 data
 * blocks, so its tree has height 2 and one indirect block), {@code /d/name-1} (a stuffed directory
 * with one entry), {@code /x} (3000 bytes of data and a 2000-byte extended attribute, kept in a
 * chain). Records the inode and block numbers a test damages.
 */
final class DamagedImage {
    static final int BLOCK = 1024;
    /** Offset of a dinode payload's mtime seconds (u64). */
    static final int MTIME_AT = 76;
    /** Offset of a stuffed directory's first entry's name in the dinode payload (type, inode, length first). */
    static final int FIRST_NAME_AT = Dinode.HEADER_BYTES + 1 + 8 + 2;

    final RamBlockDevice device = new RamBlockDevice(BLOCK, 8L << 20);
    final Gfs2LikeAdapter adapter = new Gfs2LikeAdapter();
    final byte[] bigData = pattern(120 * BLOCK);
    final byte[] xData = pattern(3000);
    final long bigIno;
    final long indirect;
    final long dirIno;
    final long xIno;
    final long xattrBlock;

    DamagedImage() throws IOException {
        adapter.format(device, FormatOptions.blockSize(BLOCK));
        try (IomapFileSystem fs = CoreRuntime.mount(adapter, device, MountOptions.defaults())) {
            try (IomapFile big = fs.create("/big")) {
                big.write(0, ByteBuffer.wrap(bigData));
            }
            fs.mkdir("/d");
            fs.create("/d/name-1").close();
            try (IomapFile x = fs.create("/x")) {
                x.write(0, ByteBuffer.wrap(xData));
            }
            fs.setXattr("/x", "user.big", pattern(2000), XattrMode.CREATE);
        }
        Gfs2LikeMount mount = (Gfs2LikeMount) adapter.mount(device, MountOptions.defaults());
        try {
            bigIno = mount.lookup(mount.rootIno(), "big");
            dirIno = mount.lookup(mount.rootIno(), "d");
            xIno = mount.lookup(mount.rootIno(), "x");
            mount.tx.meta.lock();
            try {
                Dinode big = mount.volume.dinode(bigIno);
                if (big.height != 2) {
                    throw new IllegalStateException("/big has height " + big.height + ", the tests need 2");
                }
                indirect = big.pointers[0];
                xattrBlock = mount.volume.dinode(xIno).xattrHead;
            } finally {
                mount.tx.meta.unlock();
            }
        } finally {
            mount.unmount();
        }
    }

    static byte[] pattern(int length) {
        byte[] bytes = new byte[length];
        for (int i = 0; i < length; i++) {
            bytes[i] = (byte) (i * 31 + 7);
        }
        return bytes;
    }

    /** @return a mount of the image (the caller unmounts it) */
    Gfs2LikeMount mount() throws IOException {
        return (Gfs2LikeMount) adapter.mount(device, MountOptions.defaults());
    }

    /** @return the verified metadata block at {@code block} */
    MetadataBlock read(long block, int type) throws IOException {
        return MetadataBlock.decode(ByteBuffer.wrap(device.peek(block * BLOCK, BLOCK)), block, type);
    }

    /**
     * Rewrites a metadata block with an edited payload and a correct checksum (a forged field).
     *
     * @param block the block
     * @param type its type
     * @param edit takes a writable little-endian copy of the payload, returns the new payload
     * @return the forged block as it was written
     */
    MetadataBlock forge(long block, int type, UnaryOperator<ByteBuffer> edit) throws IOException {
        MetadataBlock old = read(block, type);
        ByteBuffer copy = ByteBuffer.allocate(old.payload().remaining()).order(ByteOrder.LITTLE_ENDIAN);
        copy.put(old.payload().duplicate()).clear();
        MetadataBlock forged = new MetadataBlock(type, block, old.sequence(), edit.apply(copy));
        byte[] image = new byte[BLOCK];
        forged.encode(BLOCK).get(image);
        device.poke(block * BLOCK, image, 0, BLOCK);
        return forged;
    }

    /** Flips one bit of a block on the device (its checksum then fails). */
    void flip(long block, int offset) throws IOException {
        byte[] one = device.peek(block * BLOCK + offset, 1);
        one[0] ^= 0x10;
        device.poke(block * BLOCK + offset, one, 0, 1);
    }

    /** @return the {@code length} first bytes of a payload, as a forged shorter payload */
    static ByteBuffer truncated(ByteBuffer payload, int length) {
        return payload.limit(length);
    }
}
