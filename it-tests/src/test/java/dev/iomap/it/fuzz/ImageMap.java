package dev.iomap.it.fuzz;

import dev.iomap.devices.RamBlockDevice;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * What each block of a pristine image holds: a metadata structure (from the adapter's documented
 * format), data of one or more files (from the format's own mapping where the target gives it, else
 * found by content: the images' files hold {@code TestData} patterns, unique per file and offset and
 * never zero, so a block whose bytes equal a file block, zero-padded past EOF, is that block; a
 * reflinked block matches every file that shares it), or nothing known (free space, unwritten
 * extents, stale journal space).
 */
final class ImageMap {

    /**
     * A file block stored in an image block.
     *
     * @param path the file
     * @param fileBlock the block's index in the file
     */
    record Owner(String path, long fileBlock) {
    }

    private final int blockSize;
    private final long blocks;
    private final List<Structure> structures;
    private final TreeMap<Long, Structure> structureOfBlock = new TreeMap<>();
    private final TreeMap<Long, List<Owner>> owners = new TreeMap<>();

    private ImageMap(int blockSize, long blocks, List<Structure> structures) {
        this.blockSize = blockSize;
        this.blocks = blocks;
        this.structures = List.copyOf(structures);
        for (Structure structure : structures) {
            long first = structure.offset() / blockSize;
            long last = (structure.offset() + structure.length() - 1) / blockSize;
            for (long block = first; block <= last; block++) {
                structureOfBlock.put(block, structure);
            }
        }
    }

    /**
     * Maps an image.
     *
     * @param image the pristine image
     * @param target its format: block size, structures, blocks placed by the layout
     * @param tree its files, to recognise their blocks by content
     * @return the map
     * @throws IOException if the image cannot be read
     */
    static ImageMap of(RamBlockDevice image, FuzzTarget target, FileTree tree) throws IOException {
        int blockSize = target.blockSize();
        ImageMap map = new ImageMap(blockSize, image.capacity() / blockSize, target.structures(image));
        Map<Long, List<Candidate>> candidates = candidates(tree, blockSize);
        Map<Long, List<Owner>> mapped = target.extentOwners(image, tree);
        for (long block = 0; block < map.blocks; block++) {
            if (map.structureOfBlock.containsKey(block)) {
                continue;
            }
            List<Owner> placed = mapped.containsKey(block) ? mapped.get(block) : target.layoutOwners(block);
            if (!placed.isEmpty()) {
                map.owners.put(block, placed);
                continue;
            }
            byte[] bytes = image.peek(block * blockSize, blockSize);
            List<Candidate> possible = candidates.get(key(bytes));
            if (possible == null) {
                continue;
            }
            List<Owner> found = new ArrayList<>();
            for (Candidate candidate : possible) {
                if (Arrays.equals(candidate.bytes, bytes)) {
                    found.add(candidate.owner);
                }
            }
            if (!found.isEmpty()) {
                map.owners.put(block, List.copyOf(found));
            }
        }
        return map;
    }

    /** A file block, zero-padded to a whole block, that an image block may hold. */
    private static final class Candidate {
        final Owner owner;
        final byte[] bytes;

        Candidate(Owner owner, byte[] bytes) {
            this.owner = owner;
            this.bytes = bytes;
        }
    }

    private static Map<Long, List<Candidate>> candidates(FileTree tree, int blockSize) {
        Map<Long, List<Candidate>> candidates = new HashMap<>();
        for (Map.Entry<String, FileTree.Node> entry : tree.nodes().entrySet()) {
            byte[] content = entry.getValue().content();
            if (content == null) {
                continue;
            }
            for (long index = 0; index * blockSize < content.length; index++) {
                int from = (int) (index * blockSize);
                byte[] padded = Arrays.copyOfRange(content, from, from + blockSize);
                if (isZero(padded)) {
                    continue;
                }
                candidates.computeIfAbsent(key(padded), k -> new ArrayList<>())
                        .add(new Candidate(new Owner(entry.getKey(), index), padded));
            }
        }
        return candidates;
    }

    private static long key(byte[] block) {
        return ByteBuffer.wrap(block).order(ByteOrder.LITTLE_ENDIAN).getLong(0);
    }

    static boolean isZero(byte[] bytes) {
        for (byte b : bytes) {
            if (b != 0) {
                return false;
            }
        }
        return true;
    }

    int blockSize() {
        return blockSize;
    }

    /** @return blocks in the image */
    long blocks() {
        return blocks;
    }

    List<Structure> structures() {
        return structures;
    }

    /** @return the structure covering {@code block}, or null */
    Structure structureAt(long block) {
        return structureOfBlock.get(block);
    }

    /** @return the files whose data {@code block} holds, empty if none */
    List<Owner> ownersOf(long block) {
        return owners.getOrDefault(block, List.of());
    }

    /** @return every block holding file data, in order */
    List<Long> dataBlocks() {
        return List.copyOf(owners.keySet());
    }

    /** @return every block of a metadata structure, in order */
    List<Long> metadataBlocks() {
        return List.copyOf(structureOfBlock.keySet());
    }

    /** @return what {@code block} holds, for messages */
    String describe(long block) {
        Structure structure = structureAt(block);
        if (structure != null) {
            return structure.describe();
        }
        List<Owner> found = ownersOf(block);
        if (!found.isEmpty()) {
            StringBuilder out = new StringBuilder("data of");
            for (Owner owner : found) {
                out.append(' ').append(owner.path()).append(" block ").append(owner.fileBlock());
            }
            return out.toString();
        }
        return "no known structure or file data";
    }

    /** @return "what" for a summary: structures by type, data and other blocks */
    String summary() {
        Map<String, Integer> types = new TreeMap<>();
        for (Structure structure : structures) {
            types.merge(structure.type(), 1, Integer::sum);
        }
        return blocks + " blocks of " + blockSize + " bytes: structures " + types + ", " + owners.size()
                + " data blocks";
    }
}
