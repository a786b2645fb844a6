package dev.iomap.it.fuzz;

import dev.iomap.devices.RamBlockDevice;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * Makes one mutation of a pristine image from a seeded {@link Random}: the same map, image and
 * random sequence always give the same mutation.
 */
final class Mutator {
    private final ImageMap map;
    private final RamBlockDevice image;
    private final Random random;

    Mutator(ImageMap map, RamBlockDevice image, Random random) {
        this.map = map;
        this.image = image;
        this.random = random;
    }

    Mutation make(MutationKind kind) throws IOException {
        return switch (kind) {
            case BIT_FLIP -> flip(kind, random.nextLong(image.capacity()));
            case METADATA_BIT_FLIP -> metadataFlip();
            case FORGED_FIELD -> forge();
            case ZEROED_BLOCK -> zero();
            case COPIED_SAME_TYPE -> copySameType();
            case COPIED_OTHER_TYPE -> copyOtherType();
        };
    }

    private Mutation flip(MutationKind kind, long offset) throws IOException {
        int bit = random.nextInt(8);
        byte old = image.peek(offset, 1)[0];
        byte[] bytes = {(byte) (old ^ (1 << bit))};
        long block = offset / map.blockSize();
        return new Mutation(kind, offset, bytes, "bit " + bit + " of image offset " + offset + " (block " + block
                + ", " + map.describe(block) + ", +" + (offset - block * map.blockSize()) + ")");
    }

    private Mutation metadataFlip() throws IOException {
        Structure structure = pickByType(map.structures());
        List<Field> fields = fieldsOf(structure);
        if (!fields.isEmpty() && random.nextBoolean()) {
            Field field = pick(fields);
            return flip(MutationKind.METADATA_BIT_FLIP, structure.offset() + field.offset() + random.nextInt(field.width()));
        }
        return flip(MutationKind.METADATA_BIT_FLIP, structure.offset() + random.nextInt(structure.length()));
    }

    private Mutation forge() throws IOException {
        List<Structure> forgeable = map.structures().stream().filter(s -> !fieldsOf(s).isEmpty()).toList();
        Structure structure = pickByType(forgeable);
        Field field = pick(fieldsOf(structure));
        byte[] bytes = image.peek(structure.offset(), structure.length());
        long old = field.get(bytes);
        long value = interestingValue(field, old);
        field.set(bytes, value);
        structure.framing().seal(bytes);
        return new Mutation(MutationKind.FORGED_FIELD, structure.offset(), bytes, structure.describe() + " (block "
                + structure.offset() / map.blockSize() + "): " + field.describe() + " " + old + " -> "
                + field.get(bytes) + ", checksum recomputed", field.owner());
    }

    private List<Field> fieldsOf(Structure structure) {
        return structure.fields().stream().filter(f -> f.fits(structure.length())).toList();
    }

    /** A value a forger would try: edges, counts, other blocks' numbers, the device's end. */
    private long interestingValue(Field field, long old) {
        long blocks = map.blocks();
        long capacity = blocks * map.blockSize();
        List<Long> used = map.metadataBlocks();
        List<Long> data = map.dataBlocks();
        long otherBlock = !data.isEmpty() && random.nextBoolean() ? pick(data) : pick(used);
        long[] values = {0, 1, -1, 2, old + 1, old - 1, old * 2, blocks - 1, blocks, blocks + 1,
            otherBlock, otherBlock * map.blockSize(), capacity - map.blockSize(), capacity, map.blockSize(),
            old + map.blockSize(), Integer.MAX_VALUE, Long.MAX_VALUE, 1L << 31, 1L << 32};
        for (int attempt = 0; attempt < 32; attempt++) {
            long value = field.truncate(values[random.nextInt(values.length)]);
            if (value != field.truncate(old)) {
                return value;
            }
        }
        return field.truncate(~old);
    }

    private Mutation zero() throws IOException {
        long block = random.nextBoolean() || map.dataBlocks().isEmpty() ? metadataBlock() : pick(map.dataBlocks());
        return new Mutation(MutationKind.ZEROED_BLOCK, block * map.blockSize(), new byte[map.blockSize()],
                "zeroed block " + block + " (" + map.describe(block) + ")");
    }

    /** @return the first block of a random structure (multi-block structures count once) */
    private long metadataBlock() {
        return pickByType(map.structures()).offset() / map.blockSize();
    }

    private Mutation copySameType() throws IOException {
        Map<String, List<Long>> byType = blocksByType();
        List<List<Long>> pairs = byType.values().stream().filter(blocks -> blocks.size() >= 2).toList();
        List<Long> blocks = pick(pairs);
        long source = pick(blocks);
        long target = source;
        while (target == source) {
            target = pick(blocks);
        }
        return copy(MutationKind.COPIED_SAME_TYPE, source, target);
    }

    private Mutation copyOtherType() throws IOException {
        Map<String, List<Long>> byType = blocksByType();
        List<String> types = new ArrayList<>(byType.keySet());
        String sourceType = pick(types);
        String targetType = sourceType;
        while (targetType.equals(sourceType)) {
            targetType = pick(types);
        }
        return copy(MutationKind.COPIED_OTHER_TYPE, pick(byType.get(sourceType)), pick(byType.get(targetType)));
    }

    private Mutation copy(MutationKind kind, long source, long target) throws IOException {
        byte[] bytes = image.peek(source * map.blockSize(), map.blockSize());
        return new Mutation(kind, target * map.blockSize(), bytes, "block " + source + " (" + map.describe(source)
                + ") copied over block " + target + " (" + map.describe(target) + ")");
    }

    /** @return one-block structures' blocks by type, and "data" blocks */
    private Map<String, List<Long>> blocksByType() {
        Map<String, List<Long>> byType = new LinkedHashMap<>();
        for (Structure structure : map.structures()) {
            byType.computeIfAbsent(structure.type(), k -> new ArrayList<>()).add(structure.offset() / map.blockSize());
        }
        if (!map.dataBlocks().isEmpty()) {
            byType.put("data", map.dataBlocks());
        }
        return byType;
    }

    /** @return a structure of a random type, so that a type with many blocks does not crowd out the rest */
    private Structure pickByType(List<Structure> structures) {
        Map<String, List<Structure>> byType = new LinkedHashMap<>();
        for (Structure structure : structures) {
            byType.computeIfAbsent(structure.type(), k -> new ArrayList<>()).add(structure);
        }
        return pick(pick(new ArrayList<>(byType.values())));
    }

    private <T> T pick(List<T> list) {
        return list.get(random.nextInt(list.size()));
    }
}
