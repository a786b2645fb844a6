package dev.iomap.adapter.zonefs;

import dev.iomap.adapter.support.BlockReader;
import dev.iomap.adapter.support.BlockWriter;
import dev.iomap.adapter.support.Crc32c;
import dev.iomap.adapter.support.SuperblockCodec;
import dev.iomap.device.BlockDevice;
import dev.iomap.api.CorruptFileSystemException;
import dev.iomap.device.Zone;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;

/**
 * The only metadata of a zonefs-like image: one block at the start of zone 0 (a zone that is not
 * exposed as a file), written by mkfs and never again. Everything else (which files exist, their
 * sizes) is rebuilt from the zone report at mount.
 *
 * <p>Payload inside the {@link SuperblockCodec} frame (magic {@code IOMAPZFS}, version 1),
 * little-endian: block size (int), zone count (int), zone size (long), conventional files (int),
 * sequential files (int), zone layout digest (int: CRC32C over every zone's type and capacity, so a
 * mount on a device whose zones changed is refused), mkfs time in milliseconds (long), label
 * (string).
 *
 * @param blockSize the filesystem block size
 * @param zoneCount zones of the device
 * @param zoneSize bytes per zone
 * @param conventionalFiles files under {@code /cnv}
 * @param sequentialFiles files under {@code /seq}
 * @param layoutDigest {@link #digest} of the zone report at mkfs
 * @param formattedMillis when mkfs ran
 * @param label the label given to mkfs
 */
record ZonefsSuperblock(int blockSize, int zoneCount, long zoneSize, int conventionalFiles, int sequentialFiles,
        int layoutDigest, long formattedMillis, String label) {

    static final SuperblockCodec CODEC = new SuperblockCodec(ZonefsLikeAdapter.NAME, "IOMAPZFS", 1);
    private static final String WHAT = "zonefs-like superblock payload";

    /**
     * @param zones a zone report
     * @return a digest of every zone's type and capacity, in order
     */
    static int digest(List<Zone> zones) {
        ByteBuffer bytes = ByteBuffer.allocate(zones.size() * 12).order(ByteOrder.LITTLE_ENDIAN);
        for (Zone zone : zones) {
            bytes.putInt(zone.type().ordinal()).putLong(zone.capacity());
        }
        return Crc32c.of(bytes.array());
    }

    void write(BlockDevice device) throws IOException {
        ByteBuffer payload = ByteBuffer.allocate(SuperblockCodec.maxPayload(device.blockSize()));
        BlockWriter writer = new BlockWriter(payload, WHAT);
        writer.putInt(blockSize).putInt(zoneCount).putLong(zoneSize).putInt(conventionalFiles)
                .putInt(sequentialFiles).putInt(layoutDigest).putLong(formattedMillis).putString(label);
        CODEC.write(device, 0, payload);
    }

    static ZonefsSuperblock read(BlockDevice device) throws IOException {
        SuperblockCodec.Decoded decoded = CODEC.read(device, 0);
        BlockReader reader = new BlockReader(decoded.payload(), WHAT + " at device offset 0");
        ZonefsSuperblock superblock = new ZonefsSuperblock(reader.getInt(), reader.getInt(), reader.getLong(), reader.getInt(),
                reader.getInt(), reader.getInt(), reader.getLong(), reader.getString());
        if (Integer.bitCount(superblock.blockSize) != 1 || superblock.blockSize < device.blockSize()
                || superblock.zoneCount < 2 || superblock.zoneSize <= 0) {
            throw new CorruptFileSystemException(WHAT + " at device offset 0 is damaged: " + superblock);
        }
        return superblock;
    }
}
