package dev.iomap.testkit.fsx;

import dev.iomap.api.Capability;
import dev.iomap.testkit.Geometry;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.Set;

/**
 * Chooses random operations the way fsx does, with offsets biased toward the places bugs live:
 * block, page and folio edges, and EOF. Only operations the capabilities allow are chosen. Every
 * operation it returns is valid for the current size (clone ranges aligned and not overlapping,
 * mapped access inside the last page). Deterministic for a seed.
 */
final class OpGenerator {
    private final Random random;
    private final Set<Capability> capabilities;
    private final Geometry geometry;
    private final long maxFileSize;
    private final int maxOpLength;
    private final FsxFile file;
    private final List<Kind> weighted = new ArrayList<>();
    private long nextFill = 1;

    private enum Kind {
        READ(14), MAPREAD(5), SEEKDATA(3), SEEKHOLE(3), WRITE(20), MAPWRITE(8), TRUNCATE(8), FALLOCATE(5), PUNCH(5), ZERO(5), CLONE(4),
        COPY(4), FSYNC(3), FDATASYNC(2), SYNC(2), DROPCACHE(4), REMOUNT(1), DREAD(5), DWRITE(8);

        final int weight;

        Kind(int weight) {
            this.weight = weight;
        }
    }

    OpGenerator(long seed, Set<Capability> capabilities, Geometry geometry, long maxFileSize, int maxOpLength,
            FsxFile file) {
        this.random = new Random(seed);
        this.capabilities = capabilities;
        this.geometry = geometry;
        this.maxFileSize = file.maxSize() > 0 ? Math.min(maxFileSize, file.maxSize()) : maxFileSize;
        this.maxOpLength = maxOpLength;
        this.file = file;
        for (Kind kind : Kind.values()) {
            if (enabled(kind)) {
                for (int i = 0; i < kind.weight; i++) {
                    weighted.add(kind);
                }
            }
        }
    }

    private boolean enabled(Kind kind) {
        boolean inPlace = !file.appendOnly();
        boolean growable = !file.fixedSize();
        return switch (kind) {
            case MAPWRITE -> capabilities.contains(Capability.RANDOM_WRITE) && file.mappedWrites() && inPlace;
            case TRUNCATE -> capabilities.contains(Capability.TRUNCATE) && growable;
            case FALLOCATE -> capabilities.contains(Capability.FALLOCATE) && inPlace;
            case PUNCH -> capabilities.contains(Capability.PUNCH_HOLE) && inPlace;
            case ZERO -> capabilities.contains(Capability.ZERO_RANGE) && inPlace;
            case CLONE -> capabilities.contains(Capability.CLONE) && inPlace && growable;
            case COPY -> inPlace;
            case DREAD -> capabilities.contains(Capability.DIRECT_IO);
            case DWRITE -> capabilities.contains(Capability.DIRECT_IO) && capabilities.contains(Capability.RANDOM_WRITE)
                    && inPlace && growable;
            default -> true;
        };
    }

    /**
     * @param size the current size
     * @return the next operation
     */
    Op next(long size) {
        for (int attempt = 0; attempt < 20; attempt++) {
            Op op = tryNext(weighted.get(random.nextInt(weighted.size())), size);
            if (op != null) {
                return op;
            }
        }
        return new Op.Fsync();
    }

    private Op tryNext(Kind kind, long size) {
        boolean randomWrite = capabilities.contains(Capability.RANDOM_WRITE);
        return switch (kind) {
            case READ -> size == 0 ? null : new Op.Read(offset(size + geometry.blockSize(), size), length());
            case MAPREAD -> mapRead(size);
            case SEEKDATA -> new Op.SeekData(offset(size + geometry.blockSize(), size));
            case SEEKHOLE -> new Op.SeekHole(offset(size + geometry.blockSize(), size));
            case WRITE -> write(size, randomWrite);
            case MAPWRITE -> mapWrite(size);
            case TRUNCATE -> file.truncateSizes() != null
                    ? new Op.Truncate(file.truncateSizes().get(random.nextInt(file.truncateSizes().size())))
                    : new Op.Truncate(newSize(size));
            case FALLOCATE -> {
                long offset = offset(maxFileSize, size);
                yield new Op.Fallocate(offset, Math.min(length(), maxFileSize - offset),
                        file.fixedSize() || random.nextBoolean());
            }
            case PUNCH -> {
                if (size == 0) {
                    yield null;
                }
                long offset = offset(size, size);
                yield new Op.PunchHole(offset, Math.min(length(), maxFileSize - offset));
            }
            case ZERO -> {
                long offset = offset(maxFileSize, size);
                yield new Op.ZeroRange(offset, Math.min(length(), maxFileSize - offset),
                        file.fixedSize() || random.nextBoolean());
            }
            case CLONE -> clone(size);
            case COPY -> copy(size, randomWrite);
            case FSYNC -> new Op.Fsync();
            case FDATASYNC -> new Op.Fdatasync();
            case SYNC -> new Op.Sync();
            case DROPCACHE -> new Op.DropCache();
            case REMOUNT -> new Op.Remount();
            case DREAD -> size == 0 ? null : directRead(size);
            case DWRITE -> directWrite(size);
        };
    }

    private Op write(long size, boolean randomWrite) {
        if (file.appendOnly()) {
            long units = Math.max(1, length() / file.appendUnit());
            long room = (maxFileSize - size) / file.appendUnit() * file.appendUnit();
            long length = Math.min(units * file.appendUnit(), room);
            return length <= 0 ? null : new Op.Write(size, (int) length, nextFill++);
        }
        if (file.fixedSize()) {
            if (size == 0) {
                return null;
            }
            long offset = offset(size, size);
            return new Op.Write(offset, (int) Math.min(length(), size - offset), nextFill++);
        }
        long offset = randomWrite ? offset(maxFileSize, size) : size;
        int length = (int) Math.min(length(), maxFileSize - offset);
        if (length <= 0) {
            return null;
        }
        return new Op.Write(offset, length, nextFill++);
    }

    /** A block-aligned direct read somewhere up to a block past EOF. */
    private Op directRead(long size) {
        long block = geometry.blockSize();
        long offset = offset(size + block, size) / block * block;
        int length = (int) Math.max(block, length() / block * block);
        return new Op.DirectRead(offset, length);
    }

    /** A block-aligned direct write: an overwrite, an append or a write past EOF. */
    private Op directWrite(long size) {
        long block = geometry.blockSize();
        long offset = offset(maxFileSize, size) / block * block;
        long length = Math.min(Math.max(block, length() / block * block), (maxFileSize - offset) / block * block);
        return length <= 0 ? null : new Op.DirectWrite(offset, (int) length, nextFill++);
    }

    private Op mapRead(long size) {
        if (size == 0) {
            return null;
        }
        long mappable = roundUp(size, geometry.pageSize());
        long offset = offset(mappable, size);
        int length = (int) Math.min(length(), mappable - offset);
        return new Op.MapRead(offset, length);
    }

    private Op mapWrite(long size) {
        if (size == 0) {
            return null;
        }
        long offset = offset(size, size);
        int length = (int) Math.min(length(), size - offset);
        return length <= 0 ? null : new Op.MapWrite(offset, length, nextFill++);
    }

    private Op clone(long size) {
        long block = geometry.blockSize();
        if (size < block) {
            return null;
        }
        long source = offset(size, size) / block * block;
        long length;
        boolean toEof = random.nextInt(4) == 0;
        if (toEof) {
            length = size - source;
        } else {
            long blocks = Math.max(1, Math.min(length(), size - source) / block);
            length = blocks * block;
            if (source + length > size) {
                return null;
            }
        }
        long target = offset(maxFileSize, size) / block * block;
        boolean overlaps = source < target + length && target < source + length;
        boolean endsInside = (length % block != 0) && target + length < size;
        if (overlaps || endsInside || target + length > maxFileSize || length <= 0) {
            return null;
        }
        return new Op.Clone(source, target, length);
    }

    private Op copy(long size, boolean randomWrite) {
        if (size == 0) {
            return null;
        }
        long source = offset(size, size);
        int length = (int) Math.min(length(), size - source);
        long target = file.fixedSize() ? random.nextLong(size - length + 1)
                : randomWrite ? offset(maxFileSize, size) : size;
        if (target + length > maxFileSize) {
            return null;
        }
        return new Op.Copy(source, target, length);
    }

    private long newSize(long size) {
        long candidate = switch (random.nextInt(6)) {
            case 0 -> 0;
            case 1, 2 -> size == 0 ? 0 : random.nextLong(size + 1);
            case 3 -> nearEdge(maxFileSize);
            default -> random.nextLong(maxFileSize + 1);
        };
        return Math.clamp(candidate, 0, maxFileSize);
    }

    /** An offset below {@code limit}, biased toward edges and EOF. */
    private long offset(long limit, long size) {
        if (limit <= 1) {
            return 0;
        }
        long value = switch (random.nextInt(10)) {
            case 0, 1, 2, 3 -> random.nextLong(limit);
            case 4, 5 -> random.nextLong(limit) / geometry.blockSize() * geometry.blockSize();
            case 6, 7 -> nearEdge(limit);
            default -> size + random.nextInt(4 * geometry.blockSize() + 1) - 2L * geometry.blockSize();
        };
        return Math.clamp(value, 0, limit - 1);
    }

    /** A page or folio boundary, or a byte either side of one. */
    private long nearEdge(long limit) {
        long unit = random.nextBoolean() || geometry.maxFolioSize() >= limit
                ? geometry.pageSize() : geometry.maxFolioSize();
        long edge = random.nextLong(limit / unit + 1) * unit;
        return edge + random.nextInt(3) - 1;
    }

    /** A length: mostly small, sometimes up to the largest op, sometimes block multiples. */
    private int length() {
        int block = geometry.blockSize();
        return switch (random.nextInt(20)) {
            case 0 -> 1 + random.nextInt(maxOpLength);
            case 1, 2 -> block * (1 + random.nextInt(Math.max(1, maxOpLength / block / 4)));
            case 3, 4, 5, 6, 7 -> 1 + random.nextInt(Math.min(maxOpLength, 4 * geometry.pageSize()));
            default -> 1 + random.nextInt(Math.min(maxOpLength, 4 * block));
        };
    }

    private static long roundUp(long value, long unit) {
        return (value + unit - 1) / unit * unit;
    }
}
