package dev.iomap.nio.testadapter;

import dev.iomap.api.CorruptFilesystemException;
import dev.iomap.api.FileType;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.BitSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/** The whole namespace and block map of an {@link ImageTestAdapter} image; not thread-safe. */
final class ImageMetadata {
    static final long ROOT = 1;

    final Map<Long, Node> nodes = new TreeMap<>();
    long nextIno = ROOT + 1;

    ImageMetadata() {
        nodes.put(ROOT, new Node(ROOT, FileType.DIRECTORY, System.currentTimeMillis()));
    }

    /** One inode: a directory's entries or a file's size and block map (file block to device block). */
    static final class Node {
        final long ino;
        final FileType type;
        final TreeMap<String, Long> entries = new TreeMap<>();
        final TreeMap<Long, Long> blocks = new TreeMap<>();
        long size;
        int links = 1;
        long modifiedMillis;

        Node(long ino, FileType type, long modifiedMillis) {
            this.ino = ino;
            this.type = type;
            this.modifiedMillis = modifiedMillis;
        }
    }

    byte[] encode() {
        var bytes = new ByteArrayOutputStream();
        try (var out = new DataOutputStream(bytes)) {
            out.writeLong(nextIno);
            out.writeInt(nodes.size());
            for (Node node : nodes.values()) {
                out.writeLong(node.ino);
                out.writeByte(node.type.ordinal());
                out.writeLong(node.size);
                out.writeInt(node.links);
                out.writeLong(node.modifiedMillis);
                out.writeInt(node.entries.size());
                for (Map.Entry<String, Long> entry : node.entries.entrySet()) {
                    out.writeUTF(entry.getKey());
                    out.writeLong(entry.getValue());
                }
                out.writeInt(node.blocks.size());
                for (Map.Entry<Long, Long> block : node.blocks.entrySet()) {
                    out.writeLong(block.getKey());
                    out.writeLong(block.getValue());
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return bytes.toByteArray();
    }

    static ImageMetadata decode(byte[] bytes) throws CorruptFilesystemException {
        var metadata = new ImageMetadata();
        metadata.nodes.clear();
        try (var in = new DataInputStream(new ByteArrayInputStream(bytes))) {
            metadata.nextIno = in.readLong();
            int count = in.readInt();
            for (int i = 0; i < count; i++) {
                var node = new Node(in.readLong(), FileType.values()[in.readByte()], 0);
                node.size = in.readLong();
                node.links = in.readInt();
                node.modifiedMillis = in.readLong();
                int entries = in.readInt();
                for (int e = 0; e < entries; e++) {
                    node.entries.put(in.readUTF(), in.readLong());
                }
                int blocks = in.readInt();
                for (int b = 0; b < blocks; b++) {
                    node.blocks.put(in.readLong(), in.readLong());
                }
                metadata.nodes.put(node.ino, node);
            }
        } catch (IOException | RuntimeException e) {
            throw new CorruptFilesystemException(ImageTestAdapter.NAME + ": unreadable metadata: " + e);
        }
        if (!metadata.nodes.containsKey(ROOT)) {
            throw new CorruptFilesystemException(ImageTestAdapter.NAME + ": no root directory");
        }
        return metadata;
    }

    BitSet usedBlocks(ImageTestAdapter.Geometry geometry) {
        return ImageTestAdapter.bits(ImageTestAdapter.references(this));
    }

    /** Adds every broken invariant to {@code problems}. */
    void check(ImageTestAdapter.Geometry geometry, List<String> problems) {
        ImageTestAdapter.references(this).forEach((block, count) -> {
            if (block < geometry.metaBlocks() || block >= geometry.totalBlocks()) {
                problems.add("device block " + block + " is outside the data area");
            }
            if (count > 1) {
                problems.add("device block " + block + " is mapped " + count + " times");
            }
        });
        Map<Long, Integer> names = new HashMap<>();
        for (Node node : nodes.values()) {
            for (long target : node.entries.values()) {
                names.merge(target, 1, Integer::sum);
                if (!nodes.containsKey(target)) {
                    problems.add("directory " + node.ino + " names missing inode " + target);
                }
            }
            if (node.type == FileType.REGULAR && !node.entries.isEmpty()) {
                problems.add("regular file " + node.ino + " has directory entries");
            }
            if (node.size < 0) {
                problems.add("inode " + node.ino + " has negative size " + node.size);
            }
        }
        for (Node node : nodes.values()) {
            int named = names.getOrDefault(node.ino, 0);
            if (node.ino == ROOT) {
                continue;
            }
            if (named == 0) {
                problems.add("inode " + node.ino + " is not named by any directory (orphan)");
            } else if (node.type == FileType.DIRECTORY && named > 1) {
                problems.add("directory " + node.ino + " is named " + named + " times");
            } else if (node.type == FileType.REGULAR && named != node.links) {
                problems.add("inode " + node.ino + " has link count " + node.links + " but " + named + " names");
            }
        }
    }
}
